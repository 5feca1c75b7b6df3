#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-dump and palloc-mallinfo on bad targets: no agent, dead pid,
# another user's agent; one line, exit 2, no output file. A stopped or
# idle process is no longer one: its record answers.
. "$top_srcdir/t/lib.sh"
need_agent
need leaker python3

LD_PRELOAD=$PALLOC_AGENT leaker --seconds 60 2>leaker.err &
pid=$!
sleep 60 &
plain=$!
trap 'kill -CONT $pid 2>/dev/null; kill $pid $plain 2>/dev/null;
	wait $pid 2>/dev/null; cleanup_tmp' EXIT
# mapped PID: the process maps its record (the agent has started).
mapped() { grep -q '\.rec$' /proc/$1/maps 2>/dev/null; }
retry 100 0.1 mapped $pid

plan 14

expect_fail 2 palloc-dump $plain -o none.pb.gz 2>err
check "no agent: exit 2" test $? -eq 0
check "no agent: one line" one_line err \
	"palloc-dump: cannot reach agent of process '$plain': no record mapped by process '$plain' (not running under palloc, or an agent without records)"
check "no agent: no file" test ! -e none.pb.gz

dead=4194305
expect_fail 2 palloc-dump $dead -o none.pb.gz 2>err
check "dead pid: exit 2" test $? -eq 0
check "dead pid: one line" one_line err \
	"palloc-dump: cannot reach agent of process '$dead': no such process"

# A stopped process: its record is read from outside, so it answers at
# once (palloc(7), the record), and the same for palloc-mallinfo.
kill -STOP $pid
# Wait until every thread is in the stopped state.
stopped() {
	for st in /proc/$pid/task/*/stat; do
		[ "$(sed 's/.*) //' "$st" | cut -d' ' -f1)" = T ] || return 1
	done
}
i=0
until stopped || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
timeout_run 10 palloc-dump --timeout 1 $pid -o stopped.pb.gz 2>err
check "stopped process: exit 0, from its record" test $? -eq 0 -a ! -s err
check "stopped process: the profile written" test -s stopped.pb.gz
timeout_run 10 palloc-mallinfo --timeout 0.5 $pid >out 2>err
check "palloc-mallinfo of a stopped process: exit 0" test $? -eq 0 -a -s out
kill -CONT $pid

# Another user: its /proc/PID/maps is not ours to read.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	expect_fail 2 nobody palloc-dump $pid -o /tmp/palloc-none.$$ 2>err
	check "other user: exit 2" test $? -eq 0
	check "other user: one line" one_line err \
		"palloc-dump: cannot reach agent of process '$pid': permission denied (the process belongs to another user)"
else
	skip "other user: not root or no setpriv"
	skip "other user: not root or no setpriv"
fi

# An idle single-threaded program answers too: nothing runs in it.
LD_PRELOAD=$PALLOC_AGENT sleep 30 &
idle=$!
retry 100 0.1 mapped $idle
timeout_run 10 palloc-dump --stats --timeout 1 $idle >out 2>err
check "idle single-threaded process: exit 0" test $? -eq 0 -a -s out
check "idle single-threaded process: no message" test ! -s err
kill $idle
wait $idle 2>/dev/null

# Usage errors.
expect_fail 2 palloc-dump --seconds 0 $pid >out 2>err
check "--seconds 0 is a usage error" test $? -eq 0 -a ! -s out
expect_fail 2 palloc-dump $pid extra >out 2>err
check "two operands is a usage error" test $? -eq 0 -a ! -s out
done_testing
