#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-dump --serve: the agents' endpoints and /metrics over TCP, read by
# curl, go tool pprof and promtool.
. "$top_srcdir/t/lib.sh"
need_agent
need curl jq leaker
jqe() { jq -e "$@" >/dev/null; }

LD_PRELOAD=$PALLOC_AGENT leaker --seconds 60 --rate 4194304 2>leaker.err &
pid=$!
# A slow allocator, single-threaded: served from its sampled allocations
# (palloc(7), Threads), so sample often enough to answer promptly.
LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=4096 leaker --seconds 60 \
	--rate 65536 2>leaker2.err &
pid2=$!
server=
trap 'kill $pid $pid2 $server 2>/dev/null; wait $pid $pid2 2>/dev/null;
	cleanup_tmp' EXIT
retry 100 0.1 palloc-dump --stats $pid >/dev/null 2>&1
retry 100 0.1 palloc-dump --stats $pid2 >/dev/null 2>&1
palloc-dump --serve 127.0.0.1:0 $pid $pid2 2>serve.err &
server=$!
i=0
until grep -q serving serve.err 2>/dev/null || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
url=$(sed -n 's|.*serving \(http://[^ ]*\)/$|\1|p' serve.err)
diag "server: $url"

plan 13
check "the server prints its URL" test -n "$url"
curl -sf -o metrics.txt "$url/metrics"
check "/metrics answers" test -s metrics.txt
check "palloc_inuse_bytes of both" \
	test "$(grep -c '^palloc_inuse_bytes{pid="\('$pid'\|'$pid2'\)",program="leaker"} [0-9]' metrics.txt)" = 2
check "smaps and allocator families" \
	grep -q '^palloc_smaps_rss_bytes{pid="'$pid'"' metrics.txt
check "allocator named" \
	grep -q '^palloc_allocator_info{pid="'$pid'",program="leaker",allocator="glibc"} 1$' metrics.txt
if command -v promtool >/dev/null; then
	promtool check metrics <metrics.txt >promtool.out 2>&1
	check "promtool check metrics passes" test $? -eq 0
else
	skip "promtool (Debian prometheus) not installed"
fi
code=$(curl -s -o none -w '%{http_code}' "$url/debug/pprof/heap")
check "two processes without ?pid= is 400 (got $code)" test "$code" = 400
code=$(curl -s -o none -w '%{http_code}' "$url/debug/pprof/heap?pid=1")
check "a pid outside the set is 404 (got $code)" test "$code" = 404
curl -sf -o stats.json "$url/debug/palloc/stats?pid=$pid2"
check "?pid= selects the process" jqe --argjson p $pid2 '.pid == $p' stats.json
curl -sf -o mallinfo.json "$url/debug/palloc/mallinfo?pid=$pid"
check "mallinfo through the server" jqe '.allocator == "glibc"' mallinfo.json
# Any row, not the top one: this early, libc's stdio buffer may still
# outweigh the leak. The leaker's first sample may take a while on a
# loaded machine: 10 s at most.
i=0
while curl -sf -o raw.pb.gz "$url/debug/pprof/heap?pid=$pid&symbolize=0" &&
	palloc-dump raw.pb.gz --top 50 >raw.txt &&
	! grep -Eq ' leaker\+0x[0-9a-f]+$' raw.txt && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
check "?symbolize=0 serves raw addresses" \
	sh -c "grep -Eq ' leaker\+0x[0-9a-f]+\$' raw.txt && ! grep -q leak_some raw.txt"
if command -v go >/dev/null; then
	# 4 MiB/s leaked: after 2 s the leak outweighs any churn sample.
	sleep 2
	pprof -top "$url/debug/pprof/heap?pid=$pid" >top.txt 2>pprof.err
	check "go tool pprof -top URL works" test $? -eq 0
	top=$(awk '/flat%/ { getline; print $6; exit }' top.txt)
	check "leak_some on top ($top)" test "$top" = leak_some
	[ "$top" = leak_some ] || sed 's/^/# /' top.txt
else
	skip "go not installed"
	skip "go not installed"
fi
done_testing
