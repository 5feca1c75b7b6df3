#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-explain on real programs with the agent: redis-server (jemalloc)
# under redis-benchmark, and python3 (glibc plus its own obmalloc arenas,
# which are direct mmaps to the allocator): the parts add up to Rss and
# the unexplained rest is at most 5 % of it; the figures are reported.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-explain.sh"
need_agent
need jq python3

# report TAG FILE: the parts and the unexplained rest as a diag line.
report() {
	diag "$1: $(jq -r '"Rss \(.rss_bytes), allocator \(.allocator), " +
		([.parts[] | select(.bytes != null and .bytes != 0) |
		"\(.name) \(.bytes)"] | join(", ")) +
		", unexplained \(.unexplained_bytes) (\(.unexplained_ratio * 10000 | round / 100)%)"' "$2")"
}
small() {
	jqe '([.parts[].bytes // 0] | add) + .unexplained_bytes == .rss_bytes
	and (.unexplained_ratio | fabs) <= 0.05' "$1"
}
port=
trap 'stop_workload; [ -n "$port" ] && redis-cli -p $port shutdown nosave \
	>/dev/null 2>&1; cleanup_tmp' EXIT

plan 4
rm -f ready
# A second thread, as servers have: the agent answers from a thread of its
# own only in a program with threads (palloc(7), Threads).
LD_PRELOAD=$PALLOC_AGENT python3 -c 'import threading, time
x = [bytes(1000) for i in range(100000)]
d = {i: str(i) * 10 for i in range(200000)}
threading.Thread(target=time.sleep, args=(300,), daemon=True).start()
open("ready", "w").close()
time.sleep(300)' &
pid=$!
retry 300 0.1 test -e ready
palloc-explain --json $pid >python.json
report python3 python.json
check "python3: has the agent, the parts add up" \
	jqe '.agent and .allocator == "glibc"' python.json
check "python3: |unexplained| <= 5% of Rss" small python.json
stop_workload

if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null &&
	command -v redis-cli >/dev/null; then
	port=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	LD_PRELOAD=$PALLOC_AGENT redis-server --port "$port" \
		--bind 127.0.0.1 --save '' --appendonly no >redis.out 2>&1 &
	pid=$!
	retry 100 0.1 redis-cli -p "$port" ping >/dev/null 2>&1
	redis-benchmark -p "$port" -q -t set,get -n 200000 -r 100000 -d 256 \
		-c 20 >bench.out 2>&1 &
	bench=$!
	sleep 1
	palloc-explain --json $pid >redis-load.json
	wait $bench
	palloc-explain --json $pid >redis.json
	report "redis-server under load" redis-load.json
	report "redis-server after" redis.json
	check "redis-server under redis-benchmark: jemalloc, parts add up" \
		jqe '.agent and .allocator == "jemalloc"' redis-load.json
	check "redis-server: |unexplained| <= 5% of Rss, under load and after" \
		sh -c 'jq -e "(.unexplained_ratio | fabs) <= 0.05" redis-load.json >/dev/null &&
		jq -e "(.unexplained_ratio | fabs) <= 0.05" redis.json >/dev/null'
	redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
	port=
	wait $pid 2>/dev/null
	pid=
else
	skip "redis-server, redis-cli or redis-benchmark not installed"
	skip "redis-server, redis-cli or redis-benchmark not installed"
fi
done_testing
