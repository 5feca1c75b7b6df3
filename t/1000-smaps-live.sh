#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-smaps on this machine, checked against the kernel's own files.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-kernel.sh"

need jq
[ -r /proc/self/smaps_rollup ] || skip_all "no /proc/self/smaps_rollup"
plan 15

# kernel "Name: N kB" lines -> "snake_name_bytes N*1024" (the key rule of
# palloc-smaps(1): the kernel's name in snake_case, plus _bytes).
snake='function snake(s,   i, c, p, o) {
	o = ""; p = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c ~ /[A-Z]/ && p ~ /[a-z]/) o = o "_"
		o = o tolower(c); p = c
	}
	return o
}'
rollup_lines() {
	awk "$snake"'
		$3 == "kB" { sub(":", "", $1); print snake($1) "_bytes", $2 * 1024 }
	' "$1" | sort
}
# palloc-smaps JSON -> the same lines (known keys, and raw ones renamed).
json_lines() {
	jq -r '.processes[0] | (to_entries[] |
		select(.key | endswith("_bytes")) | select(.key != "uss_bytes") |
		"\(.key) \(.value)"), (.raw | to_entries[] | "RAW \(.key) \(.value)")' \
		"$1" | awk "$snake"'
		$1 == "RAW" { print snake($2) "_bytes", $3; next } { print }' | sort
}

# compare PID NAME [SKIP_RE]: palloc-smaps --json PID against the kernel's
# file, when two reads of the file around the run agree (a few tries).
# Fields matching SKIP_RE go to NAME.skipped instead, for a looser check.
compare() {
	_pid=$1 _name=$2 _skip=${3:-^$}
	for _try in 1 2 3 4 5 6 7 8 9 10; do
		cat /proc/$_pid/smaps_rollup >$_name.before &&
			palloc-smaps --json $_pid >$_name.json &&
			cat /proc/$_pid/smaps_rollup >$_name.after || return 1
		rollup_lines $_name.before >$_name.want
		rollup_lines $_name.after >$_name.want2
		cmp -s $_name.want $_name.want2 && break
	done
	diag "$_name: $_try tries"
	json_lines $_name.json >$_name.got
	grep -E "$_skip" $_name.want >$_name.skipped.want
	grep -E "$_skip" $_name.got >$_name.skipped.got
	grep -vE "$_skip" $_name.want >$_name.exact.want
	grep -vE "$_skip" $_name.got >$_name.exact.got
	diff -u $_name.exact.want $_name.exact.got
}

# 1. A static process (shares no file pages with cat or palloc-smaps, so
# reading it does not change it): every field equal.
kernel-idle 4 >idle.out &
idle=$!
sleep 30 &
sleeper=$!
# lib.sh's trap, plus the two background processes.
trap 'kill $idle $sleeper ${py:-} 2>/dev/null; cleanup_tmp' EXIT
wait_ready idle.out
check "static process: --json equals smaps_rollup field by field" \
	compare $idle idle
check "static process: all $(wc -l <idle.want) fields compared, 4 MiB seen" \
	jqe '.processes[0].anonymous_bytes >= 4194304' idle.json

# 2. The shell itself. Its libc pages are shared with the reader while it
# runs, and the reader's libc use differs between cat and palloc-smaps, so
# Pss and Pss_File may move by the reader's share: every other field
# exactly, those two within 10%.
check "--json \$\$ equals /proc/\$\$/smaps_rollup field by field (kB x 1024)" \
	compare $$ self '^pss_(file_)?bytes '
check "--json \$\$: Pss and Pss_File within 10% (the reader's share)" \
	sh -c 'paste self.skipped.want self.skipped.got | awk "
		\$1 != \$3 { exit 1 }
		{ d = \$2 - \$4; if (d < 0) d = -d; if (d > \$2 / 10) exit 1 }
		END { if (NR != 2) exit 1 }"'
# 2. pid, command and format keys.
check "format keys, pid and comm" jqe --argjson pid $$ \
	--arg comm "$(cat /proc/$$/comm)" '.format == "palloc-smaps" and
	.format_version == 1 and (keys_unsorted[0:2] == ["format",
	"format_version"]) and .processes[0].pid == $pid and
	.processes[0].command == $comm and
	.processes[0].source == "smaps_rollup" and .denied_count == null' \
	self.json

# 3. every readable process, largest PSS first, our own among them.
palloc-smaps --json >all.json
rc=$?
check "no PID: exit 0" [ "$rc" -eq 0 ]
check "no PID: sorted by PSS, largest first" jqe '[.processes[].pss_bytes]
	| . == (sort | reverse)' all.json
check "no PID: the shell and a sleep are listed" jqe --argjson a $$ \
	--argjson b $sleeper '[.processes[].pid] | index([$a]) and
	index([$b])' all.json
n=$(jq '.processes | length' all.json)
diag "processes listed: $n, denied: $(jq .denied_count all.json)"

# 4. --maps: the groups add up to the rollup's Rss (an idle sleep).
palloc-smaps --json --maps --top 0 $sleeper >maps.json
check "--maps: group Rss sums to the rollup Rss" jqe '.processes[0] |
	([.groups[].rss_bytes] | add) == .rss_bytes' maps.json
check "--maps: every mapping listed with --top 0, kinds known" jqe \
	'.processes[0] | ([.groups[].mapping_count] | add) ==
	(.top_mappings | length) and all(.groups[]; .kind | IN("heap",
	"stack", "anon", "shmem", "file", "special"))' maps.json

# --maps on a process with four threads (python3, glibc's pthreads): the
# main stack and four thread stacks, not the malloc arenas beside them.
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import threading, time
for _ in range(4):
	threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
print("ready", flush=True)
time.sleep(30)' >py.out &
	py=$!
	wait_ready py.out
	palloc-smaps --json --maps $py >py.json
	diag "python3 stacks: $(jq -c '[.processes[0].groups[] |
		select(.kind == "stack") | .mapping_count]' py.json)"
	check "--maps: 1 + 4 thread stacks recognised" jqe '[.processes[0].groups[]
		| select(.kind == "stack")] | .[0].mapping_count == 5' py.json
	kill $py
else
	skip "python3 not installed"
fi

# 5. --watch stops with 0 when the process exits, after its last sample.
watch_exits palloc-smaps '.processes[0].pid'
palloc-smaps --watch 0.1 --count 3 $$ >count.ndjson
check "--watch --count 3: three lines" [ "$(wc -l <count.ndjson)" -eq 3 ]

# 6. Prometheus text accepted by promtool.
palloc-smaps --prom >all.prom
promtool_ok "--prom passes promtool check metrics" all.prom
done_testing
