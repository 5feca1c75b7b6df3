#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-cgroup on this machine, against the kernel's own cgroup files.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-kernel.sh"

need jq

find_memcg
[ -n "$version" ] || skip_all "no memory cgroup controller on this host"
diag "cgroup v$version $cgpath at $dir"
plan 13

if [ $version = 2 ]; then
	usage_file=memory.current limit_file=memory.max
else
	usage_file=memory.usage_in_bytes limit_file=memory.limit_in_bytes
fi

palloc-cgroup --json >cg.json
check "finds the cgroup: version, path, directory" jqe --argjson v $version \
	--arg p "$cgpath" --arg d "$dir" '.format == "palloc-cgroup" and
	.cgroup_version == $v and .cgroup_path == $p and .directory == $d' \
	cg.json

# Usage moves all the time (the test itself allocates), and palloc-cgroup
# is charged to the cgroup it reads while it reads it (an ASan build by tens
# of MiB): the value must lie between two reads of the file taken around
# the run, plus at most 64 MiB for the reader itself. The child cgroup
# below, which the reader is not in, is compared exactly.
usage_ok=no
if [ -e "$dir/$usage_file" ]; then
	for try in 1 2 3 4 5 6 7 8 9 10; do
		a=$(cat "$dir/$usage_file")
		palloc-cgroup --json >u.json
		b=$(cat "$dir/$usage_file")
		if jqe --argjson a "$a" --argjson b "$b" '.usage_bytes as $u |
			$u >= ([$a, $b] | min) and
			$u <= ([$a, $b] | max) + 67108864' u.json
		then
			usage_ok=yes
			break
		fi
	done
	diag "usage: $(jq .usage_bytes u.json) bytes (file: $a .. $b)"
	check "usage_bytes is the kernel's $usage_file" [ $usage_ok = yes ]
else
	check "no $usage_file (a v2 root group): usage_bytes null" \
		jqe '.usage_bytes == null' cg.json
fi

# The limit: exact, with v1's "no limit" value (PAGE_COUNTER_MAX pages)
# and v2's "max" as null plus limit_unlimited.
if [ -e "$dir/$limit_file" ]; then
	lim=$(cat "$dir/$limit_file")
	diag "limit file: $lim"
	if [ "$lim" = max ] || { [ $version = 1 ] && awk -v l="$lim" \
		'BEGIN { exit !(l + 0 >= 9223090561878065152) }'; }; then
		check "unlimited: limit_bytes null, limit_unlimited true" jqe \
			'.limit_bytes == null and .limit_unlimited == true' cg.json
	else
		check "limit_bytes is the kernel's $limit_file" jqe \
			--argjson l "$lim" '.limit_bytes == $l and
			.limit_unlimited == false' cg.json
	fi
else
	check "no $limit_file: limit_bytes null" jqe '.limit_bytes == null' \
		cg.json
fi

# Working set = max(0, usage - inactive_file), inactive_file from the same
# memory.stat read (v1: total_inactive_file).
check "working set = max(0, usage - inactive_file) of the same read" jqe \
	--argjson v $version '(if $v == 1 then .stat.total_inactive_file_bytes
	else .stat.inactive_file_bytes end) as $i | .inactive_file_bytes == $i
	and .working_set_bytes == ([.usage_bytes - $i, 0] | max)' cg.json

# Every key of memory.stat reaches the user: in .stat or in .raw.
awk '{ print $1 }' "$dir/memory.stat" | sort >keys.want
jq -r '(.stat | to_entries[] | select(.value != null) | .key |
	sub("_(bytes|count)$"; "")), (.raw | keys[])' cg.json | sort >keys.got
check "every memory.stat key is in .stat or .raw" diff -u keys.want keys.got

# A PID names the same cgroup.
palloc-cgroup --json $$ >pid.json
check "PID argument: the shell's cgroup" jqe --arg p "$cgpath" \
	--argjson pid $$ '.cgroup_path == $p and .pid == $pid' pid.json
palloc-cgroup --pid $$ >pid.txt
check "--pid: table output names it" grep -q "^cgroup: *$cgpath (v$version)" \
	pid.txt

# --watch on a process that exits: stops with 0 after its last sample.
watch_exits palloc-cgroup .pid

# A child cgroup of our own with a 64 MiB limit and an idle process holding
# 8 MiB in it: limit exact, usage exact (nothing else runs there). Needs a
# writable cgroup (root; v2 also needs the memory controller delegated).
child=$dir/palloc-test-$$
idle=
trap 'kill $idle 2>/dev/null; sleep 0.2; rmdir "$child" 2>/dev/null; cleanup_tmp' EXIT
# (v2 may refuse the move: no processes in a group with controllers.)
if mkdir "$child" 2>/dev/null &&
	echo 67108864 >"$child/$limit_file" 2>/dev/null &&
	{ sh -c 'echo $$ >"$1/cgroup.procs" && exec kernel-idle 8' sh "$child" \
		>idle.out 2>/dev/null &
	idle=$!
	wait_ready idle.out; }
then
	for try in 1 2 3 4 5; do
		a=$(cat "$child/$usage_file")
		palloc-cgroup --json $idle >child.json
		[ "$a" = "$(cat "$child/$usage_file")" ] && break
	done
	diag "child: $(jq -c '[.usage_bytes, .limit_bytes, .working_set_bytes,
		.headroom_bytes]' child.json)"
	check "child cgroup: path, limit 67108864, headroom" jqe \
		--arg p "$cgpath/palloc-test-$$" '.cgroup_path == $p and
		.limit_bytes == 67108864 and .limit_unlimited == false and
		.headroom_bytes == 67108864 - .usage_bytes' child.json
	check "child cgroup: usage is the kernel's, at least the 8 MiB held" \
		jqe --argjson a "$a" '.usage_bytes == $a and $a >= 8388608' \
		child.json
	check "child cgroup: working set = usage - inactive_file" jqe \
		'.working_set_bytes == ([.usage_bytes - .inactive_file_bytes, 0]
		| max)' child.json
	kill $idle
	wait $idle 2>/dev/null
	rmdir "$child" 2>/dev/null || { sleep 1; rmdir "$child"; }
else
	kill $idle 2>/dev/null
	rmdir "$child" 2>/dev/null
	skip "cannot make a child cgroup with a limit here"
	skip "no child cgroup"; skip "no child cgroup"
fi

palloc-cgroup --prom >cg.prom
promtool_ok "--prom passes promtool check metrics" cg.prom
done_testing
