#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that closes every descriptor and opens its own listener, which
# takes the number of the agent's control socket: the agent must stop
# serving and never take the program's connections.
. "$top_srcdir/t/lib.sh"
need_agent
need curl live-closefds

LD_PRELOAD=$PALLOC_AGENT live-closefds >prog.out 2>prog.err &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; cd /; rm -rf "$T"' EXIT
i=0
until grep -q listening prog.out 2>/dev/null || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
port=$(sed -n 's/^listening fd [0-9]* port //p' prog.out)
diag "$(head -1 prog.out)"

plan 5
# A request on the old unix socket wakes the agent's thread out of the
# accept it was blocked in; the thread must then stop, not accept again on
# the descriptor number, which is now the program's TCP listener.
dir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/palloc}
[ -n "$dir" ] && [ -d "$XDG_RUNTIME_DIR" ] || dir=/tmp/palloc-$(id -u)
curl -s -m 2 --unix-socket "$dir/$pid.sock" -o sock.out \
	http://palloc/debug/palloc/stats
check "the agent's socket no longer answers" test $? -ne 0 -a ! -s sock.out
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
