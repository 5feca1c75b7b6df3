# SPDX-License-Identifier: MIT
# t/lib-kernel.sh: helpers the smaps and cgroup tests (t/1*, t/2*) share.
# Source after t/lib.sh.

# fails NAME PATTERN CMD...: three tests: CMD exits 2, prints nothing on
# stdout and exactly one stderr line matching PATTERN (an ERE).
fails() {
	_name=$1 _pat=$2
	shift 2
	"$@" >out 2>err
	_rc=$?
	check "$_name: exit 2" [ "$_rc" -eq 2 ]
	check "$_name: nothing on stdout" [ ! -s out ]
	if [ "$(wc -l <err)" -eq 1 ] && grep -Eq "$_pat" err; then
		ok "$_name: one line: $(cat err)"
	else
		not_ok "$_name: stderr is not one line matching '$_pat'"
		sed 's/^/# /' err
	fi
}

# usage_fails CMD ARGS...: a usage error: exit 2, nothing on stdout, the
# reason and "Try 'CMD --help' for more information." on stderr.
usage_fails() {
	"$@" >out 2>err
	_rc=$?
	[ "$_rc" -eq 2 ] && [ ! -s out ] && [ "$(wc -l <err)" -eq 2 ] &&
		grep -q "^Try '$1 --help' for more information.\$" err
}

# fails_exited NAME PATTERN CMD...: fails NAME PATTERN "CMD PID", PID a
# process that has exited and is not reaped yet (as one that exits while
# it is read); %s in PATTERN stands for PID. Three skips when no such
# process could be made.
fails_exited() {
	_fmt=$2
	sh -c 'sleep 0.2 & exec sleep 10' &
	_parent=$!
	sleep 1
	_zombie=$(cat /proc/$_parent/task/$_parent/children 2>/dev/null |
		tr -d ' ')
	if [ -n "$_zombie" ] && grep -q '^State:.*Z' /proc/$_zombie/status; then
		_name=$1
		shift 2
		fails "$_name" "$(printf "$_fmt" "$_zombie")" "$@" "$_zombie"
	else
		skip "no zombie to read"; skip "no zombie"; skip "no zombie"
	fi
	kill $_parent 2>/dev/null
}

# wait_ready FILE: wait (up to 5 s) for a helper to print "ready" in FILE.
wait_ready() { retry 25 0.2 grep -q ready "$1" 2>/dev/null; }

# watch_exits CMD: "CMD --watch 0.2 PID" on a process living 1 s must end
# by itself with 0 and print at least two NDJSON samples of that PID in
# watch.ndjson. Two tests. $2: where the pid is in a sample (jq path).
watch_exits() {
	sh -c 'sleep 1' &
	_short=$!
	timeout_run 30 "$1" --watch 0.2 $_short >watch.ndjson
	_rc=$?
	check "$1 --watch PID: exit 0 when the process exits" [ "$_rc" -eq 0 ]
	check "$1 --watch PID: NDJSON samples of that pid" jqe -s \
		--argjson p $_short "length >= 2 and all(.[]; $2 == \$p)" \
		watch.ndjson
}

# promtool_ok DESC FILE...: one test, `promtool check metrics` accepts every
# FILE (Prometheus text format and naming lint); skipped without promtool
# (Debian package prometheus).
promtool_ok() {
	_desc=$1
	shift
	if ! command -v promtool >/dev/null 2>&1; then
		skip "promtool (Debian prometheus) not installed"
		return
	fi
	for _f in "$@"; do
		if ! promtool check metrics <"$_f" >promtool.out 2>&1; then
			not_ok "$_desc: $_f"
			sed 's/^/# /' promtool.out
			return
		fi
	done
	ok "$_desc"
}

# Find our memory cgroup the way cgroups(7) says.
# mount_of FSTYPE OPTION: "root mountpoint" of that cgroup mount.
mount_of() {
	awk -v t="$1" -v o="$2" '{
		for (i = 7; i <= NF && $i != "-"; i++) ;
		if ($(i + 1) != t) next
		if (o != "" && ("," $(i + 3) ",") !~ ("," o ",")) next
		print $4, $5; exit
	}' /proc/self/mountinfo
}
dir_of() {  # CGROUP_PATH "ROOT MOUNTPOINT" -> directory
	set -- "$1" $2
	[ -n "${3:-}" ] || return 1
	case $2 in
	/) echo "$3$1" ;;
	*) echo "$3${1#"$2"}" ;;
	esac | sed 's|/$||'
}

# find_memcg: our memory cgroup the way cgroups(7) says, independently of
# palloc: sets version (1 or 2, empty when none), dir and cgpath.
find_memcg() {
	version= dir= cgpath=
	v2=$(awk -F: '$1 == "0" && $2 == "" { print $3 }' /proc/self/cgroup)
	if [ -n "$v2" ] && d=$(dir_of "$v2" "$(mount_of cgroup2 '')") &&
		{ [ -e "$d/memory.current" ] || [ -e "$d/memory.stat" ]; }; then
		version=2 dir=$d cgpath=$v2
	else
		v1=$(awk -F: '("," $2 ",") ~ /,memory,/ { print $3 }' /proc/self/cgroup)
		if [ -n "$v1" ] && d=$(dir_of "$v1" "$(mount_of cgroup memory)") &&
			[ -e "$d/memory.usage_in_bytes" ]; then
			version=1 dir=$d cgpath=$v1
		fi
	fi
}

# memcg_64m NAME: a child memory cgroup NAME of ours limited to 64 MiB,
# without swap, removed at exit; sets child (its directory), or returns 1
# when none can be made (root and a memory controller needed).
memcg_64m() {
	find_memcg
	if [ "$version" = 2 ]; then
		limit_file=memory.max
	else
		limit_file=memory.limit_in_bytes
	fi
	child=$dir/$1
	trap 'rmdir "$child" 2>/dev/null; cleanup_tmp' EXIT
	if [ -z "$version" ] || ! mkdir "$child" 2>/dev/null ||
		! echo 67108864 >"$child/$limit_file" 2>/dev/null; then
		return 1
	fi
	# v1 without swap accounting may swap instead of killing: no swap.
	for _f in memory.swappiness=0 memory.memsw.limit_in_bytes=67108864 \
		memory.swap.max=0; do
		[ -e "$child/${_f%=*}" ] &&
			(echo "${_f#*=}" >"$child/${_f%=*}") 2>/dev/null
	done
	diag "cgroup v$version: $child"
}
