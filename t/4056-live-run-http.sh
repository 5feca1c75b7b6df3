#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run --http: go tool pprof -top http://127.0.0.1:PORT/debug/pprof/heap
# and /metrics for the program palloc-run started, on loopback.
. "$top_srcdir/t/lib.sh"
need_agent
need_pprof
need curl leaker palloc-run python3

port=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
palloc-run -q --http "127.0.0.1:$port" -o "$T/exit.%p.pb.gz" -- \
	leaker --seconds 30 --rate 4194304 >run.out 2>run.err &
run=$!
trap 'kill $run 2>/dev/null; wait $run 2>/dev/null; cleanup_tmp' EXIT
i=0
until curl -sf -o /dev/null "http://127.0.0.1:$port/" || [ $i -ge 100 ]; do
	kill -0 $run 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
grep -q 'not available' run.err && skip_all "palloc-run --http not wired yet"

plan 4
sleep 2
pprof -top "http://127.0.0.1:$port/debug/pprof/heap" >top.txt 2>pprof.err
check "go tool pprof -top URL against palloc-run --http" test $? -eq 0
top=$(awk '/flat%/ { getline; print $6; exit }' top.txt)
check "leak_some on top ($top)" test "$top" = leak_some
curl -sf -o metrics.txt "http://127.0.0.1:$port/metrics"
check "/metrics has the program's palloc_inuse_bytes" \
	grep -q '^palloc_inuse_bytes{pid="[0-9]*",program="leaker"} [0-9]' \
	metrics.txt
code=$(curl -s -o /dev/null -w '%{http_code}' \
	"http://127.0.0.1:$port/debug/pprof/heap?seconds=x")
check "a bad request is 400 (got $code)" test "$code" = 400
done_testing
