#!/bin/sh
# SPDX-License-Identifier: MIT
# A real Prometheus server (Debian's prometheus) scrapes /metrics of a
# process running the agent, served over TCP, and the test reads
# palloc_inuse_bytes back through Prometheus's HTTP query API.
. "$top_srcdir/t/lib.sh"
need_agent
need prometheus curl jq leaker python3
jqe() { jq -e "$@" >/dev/null; }

freeport() {
	python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Single-threaded: served from its sampled allocations (palloc(7),
# Threads), so sample often enough to answer every scrape promptly.
LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=65536 leaker --seconds 120 \
	--rate 1048576 2>leaker.err &
pid=$!
server=
prom=
trap 'kill $prom $server $pid 2>/dev/null; wait $prom $pid 2>/dev/null;
	cleanup_tmp' EXIT
retry 100 0.1 palloc-dump --stats $pid >/dev/null 2>&1
# palloc-run --http serves the same routes (libcore/tools/serve_routes.c);
# the test uses palloc-dump --serve so that it does not depend on
# palloc-run's wiring.
port=$(freeport)
palloc-dump --serve "127.0.0.1:$port" $pid 2>serve.err &
server=$!
pport=$(freeport)
cat >prometheus.yml <<EOC
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: palloc
    static_configs:
      - targets: ['127.0.0.1:$port']
EOC
prometheus --config.file=prometheus.yml --storage.tsdb.path="$T/data" \
	--web.listen-address="127.0.0.1:$pport" >prometheus.log 2>&1 &
prom=$!

plan 7
q="http://127.0.0.1:$pport/api/v1/query?query=palloc_inuse_bytes"
i=0
until curl -sf "$q" -o result.json &&
	jqe '.data.result | length > 0' result.json || [ $i -ge 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
check "Prometheus started and scraped" jqe '.status == "success"' result.json
check "palloc_inuse_bytes is there, labelled with the pid" \
	jqe --arg p $pid '.data.result[0].metric.pid == $p
	and .data.result[0].metric.program == "leaker"
	and .data.result[0].metric.job == "palloc"' result.json
v=$(jq -r '.data.result[0].value[1]' result.json)
diag "palloc_inuse_bytes through Prometheus: $v"
check "a positive byte count" test "${v:-0}" -gt 0
curl -sf "http://127.0.0.1:$pport/api/v1/targets" -o targets.json
check "the target is up" jqe '.data.activeTargets[0].health == "up"' \
	targets.json
curl -sf "http://127.0.0.1:$port/metrics" -o metrics.txt
if command -v promtool >/dev/null; then
	check "promtool check metrics passes" \
		sh -c 'promtool check metrics <metrics.txt >promtool.out 2>&1'
else
	skip "promtool not installed"
fi
# The shipped scrape configuration and rules are valid for this Prometheus.
if command -v promtool >/dev/null; then
	cp "$top_srcdir/contrib/prometheus/prometheus.yml" \
		"$top_srcdir/contrib/prometheus/palloc-rules.yml" .
	check "contrib/prometheus/prometheus.yml passes promtool check config" \
		sh -c 'promtool check config prometheus.yml >config.out 2>&1'
	check "contrib/prometheus/palloc-rules.yml passes promtool check rules" \
		sh -c 'promtool check rules palloc-rules.yml >rules.out 2>&1'
else
	skip "promtool not installed"
	skip "promtool not installed"
fi
done_testing
