#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-report on what palloc-run --timeline really writes,
# rendered by headless Chromium with the network blocked: the OOM leaker
# killed in a 64 MiB memory cgroup of our own (its page shows the cgroup's
# limit, the threshold and oom_kill events, and names main),
# redis-server under redis-benchmark for 10 s (its page names redis's
# allocation sites) and a program that keeps 1 MiB more every 100 ms for
# 4 s at rate 1 (its page names grow_step). No page asks for any URL.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-kernel.sh"
. "$top_srcdir/t/lib-report.sh"
need_agent
need palloc-run palloc-report oom-leaker timeline-grow jq
need_chromium
plan 13

# rendered PREFIX: the page's script ran to its end.
rendered() { grep -q 'data-rendered="yes"' "$1.dom"; }

# 1 MiB more every 100 ms for 4 s, at rate 1, its interval profiles
# each second: the growth between two of them is grow_step's.
mkdir grow
timeout_run 120 palloc-run -q -r 1 -i 1 -o 'grow/g.%n.pb.gz' \
	--timeline grow/tl.ndjson timeline-grow >grow.out 2>grow.err
check "the growing program under palloc-run --timeline: exit 0" test $? -eq 0
palloc-report grow/tl.ndjson 2>grow-rep.err && render grow/tl.html grow &&
	rendered grow && grep -q '>grow_step<' grow.dom &&
	grep -q '<canvas' grow.dom &&
	grep -q 'class="growth-summary">grew by ' grow.dom &&
	ok "its report rendered: grow_step named, the chart and the growth drawn" ||
	{ not_ok "its report rendered: grow_step named, the chart and the growth drawn"; diag "$(cat grow-rep.err grow.err)"; }
no_urls grow "that page asked for no URL"

# OOM leaker: 256 KiB every 10 ms until the kernel kills it.
if memcg_64m palloc-rep-oom-$$; then
	mkdir oom
	timeout_run 120 sh -c 'echo $$ >"$1/cgroup.procs" && shift &&
		exec "$@"' sh "$child" palloc-run -q -r 1 \
		-o 'oom/o.%p.%n.pb.gz' --timeline-period 20 \
		--timeline oom/tl.ndjson oom-leaker 256k 60 >oom.out 2>oom.err
	rc=$?
	check "the OOM leaker under palloc-run --timeline: killed (137, got $rc)" \
		[ $rc -eq 137 ]
	palloc-report oom/tl.ndjson 2>oom-rep.err && render oom/tl.html oom &&
		rendered oom &&
		ok "its report, from the timeline alone, rendered" ||
		{ not_ok "its report, from the timeline alone, rendered"; diag "$(cat oom-rep.err oom.err)"; }
	grep -q 'class="event-oom_kill"' oom.dom &&
		[ "$(grep -o 'class="event-threshold"' oom.dom | wc -l)" -ge 3 ] &&
		ok "the page lists the oom_kill event and three thresholds" ||
		not_ok "the page lists the oom_kill event and three thresholds"
	grep -q 'u-label">cgroup limit<' oom.dom && grep -q '<canvas' oom.dom &&
		grep -q '>main<' oom.dom &&
		ok "the chart draws the cgroup's limit; the flame graph names main" ||
		not_ok "the chart draws the cgroup's limit; the flame graph names main"
	no_urls oom "the OOM page asked for no URL"
else
	for _i in 1 2 3 4 5; do
		skip "no writable memory cgroup here (root and a memory controller needed)"
	done
fi

# redis-server on loopback under redis-benchmark, stopped by pid.
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
	port=$((20000 + $$ % 20000))
	while redis-cli -h 127.0.0.1 -p $port ping >/dev/null 2>&1; do
		port=$((port + 1))
	done
	mkdir red
	run=
	trap '[ -n "$run" ] && kill -KILL $run 2>/dev/null;
		redis-cli -h 127.0.0.1 -p $port shutdown nosave >/dev/null 2>&1;
		[ -n "${child:-}" ] && rmdir "$child" 2>/dev/null; cleanup_tmp' EXIT
	palloc-run -q -i 2 -o 'red/r.%p.%n.pb.gz' --timeline red/tl.ndjson \
		redis-server --port $port --bind 127.0.0.1 --save '' \
		--appendonly no --dir "$T" --logfile "$T/redis.log" \
		>/dev/null 2>red.err </dev/null &
	run=$!
	retry 300 0.1 redis-cli -h 127.0.0.1 -p $port ping >/dev/null 2>&1
	timeout_run 10 redis-benchmark -h 127.0.0.1 -p $port -q -l \
		-r 100000 -t set,get,lpush >bench.out 2>&1 </dev/null
	kill -TERM $run
	timeout_run 120 sh -c "while kill -0 $run 2>/dev/null; do sleep 0.2; done"
	wait $run
	rc=$?
	run=
	check "redis under palloc-run --timeline: 0 after SIGTERM (got $rc)" \
		[ $rc -eq 0 ]
	n=$(grep -c '"type":"sample"' red/tl.ndjson)
	check "a timeline of the 10 s ($n samples)" [ "$n" -ge 20 ]
	palloc-report -o red/page.html red/tl.ndjson 2>red-rep.err &&
		render red/page.html red && rendered red &&
		ok "its report rendered" ||
		{ not_ok "its report rendered"; diag "$(cat red-rep.err)"; }
	grep -Eq '>(zmalloc|zcalloc|zrealloc|ztrymalloc_usable|sdsnewlen|createObject)[^<]*<' red.dom &&
		grep -q '<canvas' red.dom &&
		ok "the page names redis's allocation sites" ||
		{ not_ok "the page names redis's allocation sites"; diag "$(grep -o '<title>[^<]*' red.dom)"; }
	no_urls red "the redis page asked for no URL"
else
	for _i in 1 2 3 4 5; do skip "redis-server not installed"; done
fi
done_testing
