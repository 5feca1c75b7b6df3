#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run --timeline of redis-server on loopback under
# redis-benchmark for 10 s, stopped by a SIGTERM that palloc-run forwards:
# a valid timeline with samples of redis's pid (its heap read from the
# record), its interval and exit profiles, its exit.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need_agent
need palloc-run redis-server redis-cli redis-benchmark
. "$top_srcdir/t/lib-timeline.sh"
plan 7

# A free high port on 127.0.0.1.
port=$((20000 + $$ % 20000))
while redis-cli -h 127.0.0.1 -p $port ping >/dev/null 2>&1; do
	port=$((port + 1))
done

# At exit (a failure midway): palloc-run and redis-server (the pid of
# the timeline's first exec event) killed by pid.
pid=
cleanup() {
	if [ -n "$pid" ]; then
		_r=$(jq -r 'select(.event == "exec") | .pid' r.ndjson 2>/dev/null |
			head -n 1)
		[ -n "$_r" ] && kill -KILL "$_r" 2>/dev/null
		kill -KILL "$pid" 2>/dev/null
	fi
	cd / && rm -rf "$T" "$PALLOC_RECORD_DIR"
}
trap cleanup EXIT
palloc-run -q -i 1 -o 'r.%p.%n.pb.gz' --timeline r.ndjson redis-server \
	--port $port --bind 127.0.0.1 --save '' --appendonly no --dir "$T" \
	--logfile "$T/redis.log" >/dev/null 2>r.err </dev/null &
pid=$!
retry 300 0.1 redis-cli -h 127.0.0.1 -p $port ping >/dev/null 2>&1
timeout_run 10 redis-benchmark -h 127.0.0.1 -p $port -q -l -r 100000 \
	-t set,get,lpush,lpop >bench.out 2>&1 </dev/null
kill -TERM $pid
timeout_run 120 sh -c "while kill -0 $pid 2>/dev/null; do sleep 0.2; done"
wait $pid
rc=$?
pid=
check "palloc-run passes redis's status after SIGTERM: 0" [ $rc -eq 0 ]
check "every line valid JSON with every key" tl_valid r.ndjson
rpid=$(tl_events r.ndjson exec | jq -r .pid | head -n 1)
tl_samples r.ndjson "${rpid:-0}" >s
diag "redis pid ${rpid:-none}: $(wc -l <s) samples; last: $(tail -n 1 s)"
check "samples of redis's pid (>= 20)" [ "$(wc -l <s)" -ge 20 ]
# heap_alloc_bytes sums the whole record: null in the samples taken while
# palloc-run spares the CPU (palloc(7)), on a loaded machine.
check "its heap read from the record: inuse in every sample, alloc in most" \
	jqe -s 'all(.[]; .heap_inuse_bytes != null) and
	([.[] | select(.heap_alloc_bytes != null)] | length) * 2 >= length' s
check "heap_alloc_bytes grows under the benchmark" jqe -s \
	'[.[].heap_alloc_bytes | select(. != null)] | .[-1] > .[0]' s
check "interval and exit profile events" jqe -s \
	"[.[] | select(.event == \"profile\" and .pid == ${rpid:-0}) |
	.kind] | (map(select(. == \"interval\")) | length >= 2) and
	(map(select(. == \"exit\")) | length == 1)" r.ndjson
check "its exit event: status 0" jqe -s \
	"[.[] | select(.event == \"exit\" and .pid == ${rpid:-0})] |
	length == 1 and .[0].status == 0" r.ndjson
