#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that closes every descriptor and duplicates its own listener
# onto every number up to 63: the agent keeps no descriptor (it had a
# control socket), so nothing of the program's is taken, and the commands
# still read its record (mapped, not a descriptor).
. "$top_srcdir/t/lib.sh"
need_agent
need curl live-closefds

LD_PRELOAD=$PALLOC_AGENT live-closefds >prog.out 2>prog.err &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; cleanup_tmp' EXIT
i=0
until grep -q listening prog.out 2>/dev/null || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
port=$(sed -n 's/^listening fd [0-9]* port //p' prog.out)
diag "$(head -1 prog.out)"

plan 5
# Every socket it has is its listener (one inode): none of the agent's,
# made before the program closed them or since.
check "its only socket is its own listener" test "$(ls -l /proc/$pid/fd |
	sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p' | sort -u | wc -l)" = 1
# The commands read the record, which the program's fds do not touch.
palloc-dump --timeout 2 --stats $pid >stats.out 2>stats.err
check "palloc-dump --stats still answers, from the record" \
	test $? -eq 0 -a -s stats.out
curl -s -m 5 -o reply.txt "http://127.0.0.1:$port/debug/palloc/stats"
check "the program's listener answered" test "$(cat reply.txt)" = program
wait $pid
check "the program exits 0" test $? -eq 0
check "the program accepted the connection itself" \
	grep -q '^program accepted a connection (GET)$' prog.out
done_testing
