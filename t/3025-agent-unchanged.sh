#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent changes nothing a single-threaded program can see: no thread
# of its own (Threads: 1, unshare -U works,
# malloc in a signal handler keeps glibc's single-thread path), a fork in
# a signal handler that interrupted the agent does not deadlock, and
# PALLOC_INTERVAL is bounded below.
. "$top_srcdir/t/lib.sh"
need_agent
need palloc-run sig-alloc

plan 16

# Threads: the agent's control, interval and peak threads wait for the
# program's own first thread.
LD_PRELOAD="$PALLOC_AGENT" PALLOC_INTERVAL=1 PALLOC_PEAK=1 \
	sig-alloc threads >thr.out 2>thr.err
check "a single-threaded program stays single-threaded ($(cat thr.out))" \
	grep -qx 'Threads:.1' thr.out

# A daemon that drops privileges: glibc's setxid broadcast reaches every
# thread, and an agent thread (whose capabilities setpriv did not keep)
# made it abort (exit 134). Here as nobody, also with palloc-run -o
# /dev/null, which once refused a non-root user ('/dev' not writable).
# The build tree may be where nobody cannot read (a clone under /root):
# palloc-run and the agent are copied into the test's directory.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	for_other_users palloc-run && chmod a+rx "$T"
	LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT=/dev/null setpriv \
		--reuid=65534 --regid=65534 --clear-groups true 2>sp.err
	check "setpriv to nobody under LD_PRELOAD exits 0 as without" \
		test $? -eq 0
	(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups \
		env PALLOC_AGENT="$PALLOC_AGENT" "$T/bin/palloc-run" \
		-q -o /dev/null true) 2>sp2.err
	check "palloc-run -o /dev/null as nobody exits 0" test $? -eq 0
else
	skip "setpriv: not root"
	skip "setpriv: not root"
fi
if unshare -U true 2>/dev/null; then
	LD_PRELOAD="$PALLOC_AGENT" unshare -U true 2>us.err
	check "unshare -U under LD_PRELOAD exits 0 as without" test $? -eq 0
	palloc-run -q unshare -U true 2>us2.err
	check "palloc-run unshare -U exits 0 as without" test $? -eq 0
else
	skip "unshare -U fails here without palloc too"
	skip "unshare -U fails here without palloc too"
fi

# malloc in a SIGALRM handler, 3000 times, sizes from the arena rather
# than the thread cache: it works without the agent (glibc's single-thread
# path takes no lock); with an agent thread it deadlocks on main_arena.
timeout_run 60 sig-alloc malloc 3000 >base.out 2>&1
check "without the agent: 3000 handlers that malloc" test $? -eq 0
timeout_run 60 env LD_PRELOAD="$PALLOC_AGENT" \
	sig-alloc malloc 3000 >sig.out 2>sig.err
rc=$?
check "under the agent: 3000 handlers that malloc finish (rc $rc)" \
	test $rc -eq 0
check "... and all were handled" grep -q '^handled [0-9]' sig.out

# fork in a SIGALRM handler while the main loop mallocs and frees at rate 1:
# the handler often interrupts a sample or a sampled free, holding the
# stack-table lock.
timeout_run 120 env LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 \
	sig-alloc fork 300 >fork.out 2>fork.err
rc=$?
check "300 forks from handlers interrupting malloc/free: no deadlock (rc $rc)" \
	test $rc -eq 0
check "... the parent's profile is valid and written" \
	test -n "$(ls palloc.sig-alloc.*.pb.gz 2>/dev/null)"
rm -f palloc.*.pb.gz

# PALLOC_INTERVAL below 0.1 s: one warning, 0.1 s used. The files written
# are bounded by the run's own measured length (no timing assumption).
mkdir iv && cd iv || exit 99
t0=$(date +%s%N)
LD_PRELOAD="$PALLOC_AGENT" PALLOC_INTERVAL=0.000001 PALLOC_SAMPLE_RATE=1 \
	PALLOC_OUTPUT='iv.%n.pb.gz' sig-alloc live 1 >/dev/null 2>iv.err
rc=$?
t1=$(date +%s%N)
n=$(ls | grep -c '^iv\..*\.pb\.gz$')
max=$(((t1 - t0) / 100000000 + 2))
check "PALLOC_INTERVAL=0.000001: exit 0" test $rc -eq 0
check "one warning naming the minimum" test "$(grep -c \
	'^palloc: PALLOC_INTERVAL=0.000001: below the minimum of 0.1 seconds; using 0.1$' \
	iv.err)" -eq 1
check "periodic files, at most one per 0.1 s of the run: $n, bound $max" \
	test "$n" -ge 2 -a "$n" -le "$max"
cd .. || exit 99

palloc-run -q -i 0.000001 true 2>pr.err
rc=$?
check "palloc-run -i 0.000001: exit 125 (rc $rc)" test $rc -eq 125
check "palloc-run -i 0.000001 is a usage error" grep -q \
	"^palloc-run: invalid interval '0.000001': below the minimum of 0.1 seconds$" \
	pr.err
palloc-run -q -i 0 true 2>pr0.err
check "palloc-run -i 0 (no periodic profiles) is accepted" test $? -eq 0
done_testing
