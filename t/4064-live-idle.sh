#!/bin/sh
# SPDX-License-Identifier: MIT
# An idle single-threaded program (blocked in pause(), read(2) or
# nanosleep(2), or stopped) answers at once and exactly: the commands read
# its record, no code runs in it. Its threads and descriptors stay its
# own: the agent starts no thread and keeps no descriptor. The allocator's
# figures are taken where it starts to sleep (an idle point). The listing
# shows live, exited and killed processes; a record file reads like a
# profile.
. "$top_srcdir/t/lib.sh"
need_agent
need jq idle-alloc
if asan palloc-dump; then skip_all "a sanitized build cannot load the agent"; fi

# A private record directory: the listing shows only ours.
XDG_RUNTIME_DIR=$T/run
export XDG_RUNTIME_DIR
mkdir -m 700 "$XDG_RUNTIME_DIR"
pids=
trap 'kill -CONT $pids 2>/dev/null; kill -9 $pids 2>/dev/null;
	wait 2>/dev/null; cleanup_tmp' EXIT

# start NAME ARGS...: idle-alloc ARGS under the agent at rate 1, its pid in
# $NAME once it said "ready".
start() {
	_name=$1
	shift
	PALLOC_SAMPLE_RATE=1 LD_PRELOAD=$PALLOC_AGENT idle-alloc "$@" \
		>"$_name.out" 2>"$_name.err" &
	eval "$_name=$!"
	pids="$pids $!"
	retry 100 0.05 grep -q ready "$_name.out"
}

# exact FILE: palloc-dump --json FILE shows keep_blocks' 10 blocks of
# 100000 bytes in use, exactly.
exact() {
	jqe '[.top.functions[] | select(.function == "keep_blocks")][0]
		| .flat_bytes == 1000000' "$1" && return 0
	echo "# $(jq -c '.top.functions[:3]' "$1")"
	return 1
}

# timed N CMD...: run CMD N times; the median wall time in ms into $ms;
# fails when a run fails.
timed() {
	_tn=$1
	shift
	: >times
	for _i in $(seq "$_tn"); do
		_t0=$(date +%s%N)
		"$@" >timed.out 2>timed.err || return 1
		_t1=$(date +%s%N)
		echo $(((_t1 - _t0) / 1000000)) >>times
	done
	ms=$(sort -n times | sed -n "$(((_tn + 1) / 2))p")
}

# dumped PID NAME FILE WHAT: palloc-dump PID --json, timed, answers
# (the check "NAME: palloc-dump --json answers") and its last answer, in
# FILE, shows keep_blocks' bytes exactly (the check "NAME: WHAT").
dumped() {
	timed 10 palloc-dump "$1" --json
	check "$2: palloc-dump --json answers" test $? -eq 0
	cp timed.out "$3"
	check "$2: $4" exact "$3"
}

# state PID: the process's state letter (S sleeping, T stopped).
state() { sed 's/.*) //' /proc/$1/stat | cut -d' ' -f1; }

plan 27

start paused pause
dumped $paused paused paused.json "keep_blocks' 1000000 bytes in use, exactly"
diag "paused: palloc-dump PID --json median of 10 runs: $ms ms"
check "paused: answers within 2 s (median $ms ms)" test "$ms" -lt 2000
timed 10 palloc-dump $paused --json --no-symbolize &&
	diag "paused: the same with --no-symbolize: $ms ms"
palloc-dump --stats --json $paused >stats.json
check "paused: --stats: exact counters from the record" jqe '
	.format == "palloc-stats" and .sampled_inuse_bytes == 1000000 and
	.sample_rate == 1 and .state == "live" and .live_thread_count == 1
	and (.record | endswith(".rec")) and .record_age_seconds >= 0' \
	stats.json
check "paused: Threads: stays 1" \
	grep -q '^Threads:[[:space:]]*1$' /proc/$paused/status

# Descriptors: the same as without palloc (the agent keeps none).
idle-alloc pause >plain.out 2>&1 &
plain=$!
pids="$pids $plain"
retry 100 0.05 grep -q ready plain.out
fds() { ls /proc/$1/fd | wc -l; }
diag "descriptors: $(fds $plain) without palloc, $(fds $paused) with"
check "paused: the same descriptors as without palloc" \
	test "$(fds $paused)" = "$(fds $plain)"

kill -STOP $paused
retry 100 0.05 test "$(state $paused)" = T
dumped $paused stopped stopped.json "keep_blocks' bytes exactly"
diag "stopped: palloc-dump PID --json median of 10 runs: $ms ms"
check "stopped: answers within 2 s (median $ms ms)" test "$ms" -lt 2000
palloc-mallinfo --json $paused >mallinfo-stopped.json
check "stopped: palloc-mallinfo answers" \
	jqe '.allocator == "glibc"' mallinfo-stopped.json
kill -CONT $paused

start reading read
retry 100 0.05 test "$(state $reading)" = S
dumped $reading "blocked in read(2)" read.json "keep_blocks' bytes exactly"
diag "read(2): palloc-dump PID --json median of 10 runs: $ms ms"

# read(2) is no idle point (a signal handler may call it): the figures
# are those of the last snapshot, or none yet, never made up.
palloc-mallinfo --json $reading >mallinfo-read.json
check "palloc-mallinfo, read(2): the last figures with their age, or none" \
	jqe '.format == "palloc-mallinfo" and .allocator == "glibc" and
	((.comparable.allocated_bytes > 0 and .time_ns > 0 and
	.age_seconds >= 0) or (.time_ns == null and .age_seconds == null and
	.comparable.allocated_bytes == null))' mallinfo-read.json

# nanosleep(2) is: the figures were taken as it started to sleep.
start sleeping sleep
retry 100 0.05 test "$(state $sleeping)" = S
check "sleeping: Threads: stays 1" \
	grep -q '^Threads:[[:space:]]*1$' /proc/$sleeping/status
palloc-mallinfo --json $sleeping >mallinfo.json
palloc-dump --stats --json $sleeping >sleep-stats.json
check "palloc-mallinfo of a sleeping process: the allocator's figures" jqe '
	.format == "palloc-mallinfo" and .allocator == "glibc" and
	.comparable.allocated_bytes >= 1000000 and
	.comparable.mapped_bytes >= .comparable.allocated_bytes and
	(.specific.arenas | length) >= 1 and .specific.mallinfo2.arena_bytes > 0
	and .time_ns > 0 and .age_seconds >= 0' mallinfo.json
check "... taken after its last allocation" sh -c "test \
	\"\$(jq .time_ns mallinfo.json)\" -ge \
	\"\$(jq .update_time_ns sleep-stats.json)\""
palloc-explain --json $sleeping >explain.json 2>explain.err
check "palloc-explain of an idle process: the heap layer, exactly" jqe '
	[.parts[] | select(.name == "heap_inuse")][0].bytes == 1000000' \
	explain.json
check "palloc-explain: the allocator layer, from current figures" jqe '
	([.parts[] | select(.layer == "allocator" and .bytes != null)]
	| length >= 2) and ([.parts[] | select(.name ==
	"allocator_overhead")][0].bytes >= 0)' explain.json

# Under memcheck: no error, no leak (a site row of zero flat bytes leaked
# its JSON object in palloc-explain).
if command -v valgrind >/dev/null; then
	vg() {
		valgrind -q --error-exitcode=9 --leak-check=full \
			--errors-for-leak-kinds=definite "$@" >vg.out 2>vg.err &&
			return 0
		head -20 vg.err | sed 's/^/# /'
		return 1
	}
	check "memcheck: palloc-dump PID --json" vg palloc-dump $reading --json
	check "memcheck: palloc-explain PID" vg palloc-explain $reading
else
	skip "valgrind not installed"
	skip "valgrind not installed"
fi

# The listing: live, exited and killed.
start killed pause
# kept at exit as under palloc-run (a token), else removed (palloc(7))
PALLOC_RUN_TOKEN=0123456789abcdef0123456789abcdef PALLOC_SAMPLE_RATE=1 \
	LD_PRELOAD=$PALLOC_AGENT sh -c 'exit 3'
kill -9 $killed
wait $killed 2>/dev/null
palloc-dump --json >list.json
check "the list: the idle process live" jqe --argjson p $paused '
	[.processes[] | select(.pid == $p)][0]
	| .state == "live" and .program == "idle-alloc"
	and .sampled_inuse_bytes == 1000000' list.json
check "the list: the killed process" jqe --argjson p $killed '
	[.processes[] | select(.pid == $p)][0]
	| .state == "killed" and .exit_status == null and .end_time_ns > 0' \
	list.json
check "the list: the program that exited 3" jqe '
	[.processes[] | select(.program == "sh")][0]
	| .state == "exited" and .exit_status == 3' list.json
palloc-dump >list.txt
# columns PID PROGRAM STATE, however wide libsmartcols makes them
check "the table says so" awk -v p=$killed '$1 == p && $2 == "idle-alloc" &&
	$3 == "killed" { f = 1 } END { exit !f }' list.txt
palloc-mallinfo --json >mlist.json
check "palloc-mallinfo's list too" jqe --argjson p $killed '
	[.processes[] | select(.pid == $p)][0] | .state == "killed"
	and (.allocator == "glibc" or .allocator == "unknown")' mlist.json

# A dead record reads like a profile.
rec=$(jq -r --argjson p $killed \
	'[.processes[] | select(.pid == $p)][0].record' list.json)
palloc-dump "$rec" --symbolize --json >rec.json 2>rec.err
check "palloc-dump FILE.rec: the killed process's heap, exactly" exact rec.json
palloc-dump "$rec" -o rec.pb.gz && palloc-dump rec.pb.gz --symbolize --json \
	>pb.json
check "palloc-dump FILE.rec -o: a pprof file of the same heap" exact pb.json
done_testing
