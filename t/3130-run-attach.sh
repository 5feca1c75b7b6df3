#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run -p PID: a program started plainly, idle in read(2)
# until told to allocate, attached at rate 1: its allocations after the
# attach are exact, the profile says blocks before are unknown; after the
# detach its threads and descriptors are as before, the interrupted read
# returns the byte written later (never EINTR), a second attach reuses
# the loaded agent, and the program exits 0. Then a threaded program
# attached and detached again and again, and palloc-run killed by SIGKILL
# at random moments of the attach: the program never stopped, never
# traced, running to its normal end.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need_attach palloc-run palloc-dump attach-target

plan 30

# start_target [ARG]: attach-target reading from the fifo "in" (fd 3 here),
# its stdout in out.txt; $tp its pid.
start_target() {
	rm -f in out.txt
	mkfifo in || exit 99
	attach-target "$@" <in >out.txt 2>err.txt &
	tp=$!
	exec 3>in
	retry 100 0.1 grep -q '^ready$' out.txt || exit 99
}

# say CMD WANT: send CMD, wait for the line WANT in out.txt.
say() {
	printf '%s\n' "$1" >&3
	retry 300 0.1 grep -qx "$2" out.txt
}

# attach ERR ARGS...: palloc-run -p $tp ARGS in the background, stderr in
# ERR, $rp its pid; waits until it says it attached.
attach() {
	_err=$1
	shift
	# the last cycle's line must not count: the shell truncates the file
	# only in the child, which may not have run yet
	rm -f "$_err"
	palloc-run -p "$tp" "$@" 2>"$_err" &
	rp=$!
	retry 300 0.1 grep -q "^palloc-run: attached to process $tp;" "$_err"
}

# detach: SIGINT to palloc-run, its status in $rc.
# (a palloc-run that would not end is killed after 60 s: the test fails,
# it does not hang)
ended() { ! [ -e "/proc/$1/stat" ] || [ "$(cut -d' ' -f3 "/proc/$1/stat")" = Z ]; }
detach() {
	kill -INT "$rp"
	retry 600 0.1 ended "$rp" || kill -KILL "$rp"
	wait "$rp"
	rc=$?
}

fds() { ls "/proc/$1/fd" | sort | tr '\n' ' '; }
threads() { awk '/^Threads:/ { print $2 }' "/proc/$1/status"; }
tracer() { awk '/^TracerPid:/ { print $2 }' "/proc/$1/status"; }
agents() { grep -c 'libpalloc\.so' "/proc/$1/maps"; }

# ---- attached at rate 1: exact after the attach ----
start_target
fds0=$(fds "$tp")
thr0=$(threads "$tp")
check "attached (rate 1)" attach run.err -r 1 -o 'a.%p.pb.gz'
check "the agent is loaded once" test "$(agents "$tp")" -ge 1
check "alloc 7 x 1000 answered" say "alloc 7 1000" "allocated 7"
check "alloc 3 x 40 answered" say "alloc 3 40" "allocated 3"
check "palloc-dump reads the attached process's record" \
	sh -c "palloc-dump -t $tp >dump.txt 2>dump.err && grep -q alloc_site dump.txt"
check "free answered" say "free" "freed"
check "alloc 5 x 100 answered" say "alloc 5 100" "allocated 5"
detach
check "detached: status 0" test "$rc" -eq 0
sed 's/^/# /' run.err
check "the summary: 15 objects allocated, 5 x 100 in use, at alloc_site" \
	grep -Eq "^palloc-run: wrote a\.$tp\.pb\.gz: alloc 7\.4 KiB in 15 objects, inuse 500 B in 5 objects, top alloc: alloc_site$" run.err
check "the profile says blocks before the attach are unknown" \
	sh -c "gzip -dc a.$tp.pb.gz | grep -aq 'blocks allocated before the attach are unknown'"
check "no other line from palloc-run" test "$(wc -l <run.err)" -eq 2
check "the same descriptors after the detach" test "$(fds "$tp")" = "$fds0"
check "the same threads after the detach" test "$(threads "$tp")" = "$thr0"
check "not traced after the detach" test "$(tracer "$tp")" = 0

# ---- detached: the entries lead to the C library again ----
palloc-dump --stats "$tp" 2>&1 | grep -E '^(alloc|free)_count ' >s1.txt
say "alloc 4 64" "allocated 4" >/dev/null
say "free" "freed" >/dev/null
palloc-dump --stats "$tp" 2>&1 | grep -E '^(alloc|free)_count ' >s2.txt
check "detached: allocations no longer reach the agent" \
	sh -c 'test -s s1.txt && cmp -s s1.txt s2.txt'
sed 's/^/# /' s1.txt s2.txt

# ---- a read(2) interrupted by attach and detach returns its byte ----
check "blocked in its second read" say "byte" "expecting a byte"
check "attached again" attach run2.err -o 'b.%p.pb.gz'
check "the second attach reuses the loaded agent" \
	test "$(agents "$tp")" -eq "$(grep -c 'libpalloc\.so' "/proc/$tp/maps")"
detach
check "detached again: status 0" test "$rc" -eq 0
printf X >&3
check "the read returns the byte written after (not EINTR)" \
	retry 100 0.1 grep -qx 'byte X (1)' out.txt
check "no read failed" sh -c '! grep -q "read failed" out.txt'
say "quit" "bye" >/dev/null
exec 3>&-
wait "$tp"
check "the program exits 0" test $? -eq 0

# ---- threads allocating all along: 5 attach and detach cycles ----
start_target threads
thr0=$(threads "$tp")
fails=0
for i in 1 2 3 4 5; do
	attach run3.err -o /dev/null || fails=$((fails + 1))
	detach
	[ "$rc" -eq 0 ] || fails=$((fails + 1))
done
check "5 cycles on a threaded program: all attached and detached" \
	test "$fails" -eq 0
check "its threads are the same" test "$(threads "$tp")" = "$thr0"

# ---- palloc-run killed while attached: the agent unhooks itself ----
# (the threads allocate all along: the agent sees palloc-run gone at
# its next sampled allocation, and its counters stop)
count() { palloc-dump --stats "$tp" 2>/dev/null | awk '$1 == "alloc_count" { print $2 }'; }
still() {
	_a=$(count)
	sleep 0.3
	[ -n "$_a" ] && [ "$_a" = "$(count)" ]
}
attach run5.err -o /dev/null
a1=$(count)
sleep 0.3
check "attached: the threads' allocations are counted" \
	test "$(count)" -gt "${a1:-0}"
kill -KILL "$rp"
wait "$rp" 2>/dev/null
check "palloc-run killed while attached: the agent unhooks itself" \
	retry 50 0.2 still

# ---- palloc-run killed by SIGKILL at random moments of the attach ----
bad=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	palloc-run -p "$tp" -o /dev/null 2>/dev/null &
	rp=$!
	# 0 to 150 ms: before, during and after the injection
	sleep "0.$(awk -v s="$i$$" 'BEGIN { srand(s); printf "%03d", rand() * 150 }')"
	kill -KILL "$rp"
	wait "$rp" 2>/dev/null
	sleep 0.1
	st=$(awk '/^State:/ { print $2 }' "/proc/$tp/status")
	if [ "$st" = T ] || [ "$st" = t ] || [ "$(tracer "$tp")" != 0 ]; then
		diag "run $i: state $st, tracer $(tracer "$tp")"
		bad=$((bad + 1))
	fi
done
check "10 SIGKILLs: never left stopped or traced" test "$bad" -eq 0
check "still answering" say "alloc 1 10" "allocated 1"
check "a later attach and detach" attach run4.err -o /dev/null
detach
say "quit" "bye" >/dev/null
exec 3>&-
wait "$tp"
check "the threaded program exits 0" test $? -eq 0

done_testing
