#!/bin/sh
# SPDX-License-Identifier: MIT
# redis-server (Debian's, jemalloc inside) under palloc-run with
# redis-benchmark running: palloc-dump and palloc-mallinfo answer during the
# load; the allocator is jemalloc and its allocated bytes are within 10% of
# the agent's exact live bytes.
. "$top_srcdir/t/lib.sh"
need_agent
need jq redis-server redis-cli redis-benchmark palloc-run python3
jqe() { jq -e "$@" >/dev/null; }

port=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
palloc-run -q --exact -o "$T/redis.%p.pb.gz" -- redis-server --port "$port" \
	--bind 127.0.0.1 --save '' --appendonly no >redis.out 2>&1 &
run=$!
bench=
trap 'kill $bench 2>/dev/null; redis-cli -p $port shutdown nosave \
	>/dev/null 2>&1; wait $run 2>/dev/null; cleanup_tmp' EXIT
i=0
until redis-cli -p "$port" ping >/dev/null 2>&1 || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
pid=$(redis-cli -p "$port" info server | tr -d '\r' |
	sed -n 's/^process_id://p')
diag "redis-server pid $pid on port $port"

plan 9
check "redis-server runs under palloc-run" test -n "$pid"
redis-benchmark -p "$port" -q -t set,get -n 400000 -r 100000 -d 256 -c 20 \
	>bench.out 2>&1 &
bench=$!
sleep 1
palloc-dump $pid -o during.pb.gz 2>dump.err
check "palloc-dump answers during the load" test $? -eq 0 -a -s during.pb.gz
palloc-mallinfo --json $pid >je.json 2>mallinfo.err
check "palloc-mallinfo answers during the load" test $? -eq 0
palloc-dump --stats --json $pid >stats.json
wait $bench
bench=
check "the benchmark completed" grep -q 'GET' bench.out
check "allocator is jemalloc" jqe '.allocator == "jemalloc"' je.json
# The comparison wants both figures at one moment: after the load.
palloc-mallinfo --json $pid >je2.json && palloc-dump --stats --json $pid \
	>stats2.json
a=$(jq .comparable.allocated_bytes je2.json)
e=$(jq .inuse_bytes stats2.json)
diag "jemalloc stats.allocated $a, agent exact inuse_bytes $e"
check "exact counters" jqe '.exact == true and .inuse_source == "exact"' \
	stats2.json
check "allocated within 10% of the agent's inuse" \
	test $((a * 10)) -ge $((e * 9)) -a $((a * 10)) -le $((e * 11))
if command -v go >/dev/null; then
	pprof -top during.pb.gz >top.txt 2>pprof.err
	check "go tool pprof reads the profile taken under load" test $? -eq 0
	check "redis functions in it" grep -q 'zmalloc\|sdsnewlen\|createObject\|dictAdd' top.txt
else
	skip "go not installed"
	skip "go not installed"
fi
done_testing
