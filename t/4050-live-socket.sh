#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent's control socket: modes, the endpoints over curl, bad requests,
# a silent client, removal at exit.
. "$top_srcdir/t/lib.sh"
need_agent
need curl jq leaker python3
jqe() { jq -e "$@" >/dev/null; }

LD_PRELOAD=$PALLOC_AGENT leaker --seconds 30 --rate 4194304 2>leaker.err &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; cd /; rm -rf "$T"' EXIT
# The socket appears once the agent has initialised.
dir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/palloc}
[ -n "$dir" ] && [ -d "$XDG_RUNTIME_DIR" ] || dir=/tmp/palloc-$(id -u)
sock=$dir/$pid.sock
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done

plan 16
check "socket $sock exists" test -S "$sock"
check "directory is 0700" test "$(stat -c %a "$dir")" = 700
check "socket is 0600" test "$(stat -c %a "$sock")" = 600

# The leaker samples about once per 4 MiB: wait (5 s at most) for a stack.
i=0
while curl -sf --unix-socket "$sock" -o stats.json \
	http://palloc/debug/palloc/stats && ! jqe '.stack_count > 0' stats.json &&
	[ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
check "stats: format, pid and program" jqe --argjson p $pid \
	'.format == "palloc-stats" and .format_version == 1 and .pid == $p
	 and .program == "leaker"' stats.json
check "stats: counters move" jqe \
	'.alloc_count > 0 and .alloc_bytes > 0 and .free_count >= 0
	 and .sample_rate == 524288 and (.inuse_bytes | type) == "number"' \
	stats.json
check "stats: stacks held, nothing dropped" jqe \
	'.stack_count > 0 and .sampled_count >= .stack_count
	 and .dropped_count == 0 and .dropped_bytes == 0' stats.json

curl -sf --unix-socket "$sock" -o heap.pb.gz http://palloc/debug/pprof/heap
check "heap is gzipped" test "$(od -An -tx1 -N2 heap.pb.gz | tr -d ' ')" = 1f8b
if command -v go >/dev/null; then
	pprof -raw heap.pb.gz >heap.raw 2>heap.err
	check "go tool pprof reads the socket's profile" \
		grep -q '^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes' heap.raw
else
	skip "go not installed"
fi
curl -sf --unix-socket "$sock" -o mallinfo.json \
	http://palloc/debug/palloc/mallinfo
check "mallinfo names the allocator" jqe \
	'.format == "palloc-mallinfo" and .allocator == "glibc"
	 and (.comparable | has("allocated_bytes"))' mallinfo.json

# Malformed, unknown and wrong-method requests: 400/404/405, and it serves on.
code=$(curl -s --unix-socket "$sock" -o /dev/null -w '%{http_code}' \
	'http://palloc/debug/pprof/heap?seconds=abc')
check "bad seconds is 400 (got $code)" test "$code" = 400
code=$(curl -s --unix-socket "$sock" -o /dev/null -w '%{http_code}' \
	http://palloc/nope)
check "unknown path is 404 (got $code)" test "$code" = 404
code=$(curl -s --unix-socket "$sock" -o /dev/null -w '%{http_code}' \
	-X POST http://palloc/debug/palloc/stats)
check "POST is 405 (got $code)" test "$code" = 405
code=$(curl -s --unix-socket "$sock" -o /dev/null -w '%{http_code}' \
	--request-target 'nope' http://palloc/)
check "a target without '/' is 400 (got $code)" test "$code" = 400

# A client that connects and says nothing must not wedge the server.
python3 -c "
import socket, time
s = socket.socket(socket.AF_UNIX); s.connect('$sock'); time.sleep(6)" &
silent=$!
sleep 0.5
timeout_run 10 curl -sf --unix-socket "$sock" -o stats2.json \
	http://palloc/debug/palloc/stats
check "serves after a silent client" jqe '.alloc_count > 0' stats2.json
kill $silent 2>/dev/null

kill -TERM $pid
wait $pid
rc=$?
check "program exits by its own signal handling (rc $rc)" test $rc -eq 0 -o $rc -eq 143
check "socket removed at exit" test ! -e "$sock"
done_testing
