#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run --timeline of the OOM leaker in a memory cgroup of
# our own limited to 64 MiB: the samples show the cgroup's usage reaching
# the limit, the threshold events (80, 90, 95 %: --dump-at's default) come
# in order, then the oom_kill event and the exit by SIGKILL.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-kernel.sh"
need_agent
need palloc-run oom-leaker
. "$top_srcdir/t/lib-timeline.sh"

memcg_64m palloc-tloom-$$ ||
	skip_all "no writable memory cgroup here (root and a memory controller needed)"
plan 9
LIMIT=67108864

# 256 KiB every 10 ms (about 25 MiB/s), sampled every 10 ms.
timeout_run 120 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' \
	sh "$child" palloc-run -q -r 1 -o 'o.%p.%n.pb.gz' \
	--timeline-period 10 --timeline o.ndjson oom-leaker 256k 60 \
	>o.out 2>o.err
rc=$?
check "killed by SIGKILL: 137" [ $rc -eq 137 ]
check "every line valid JSON with every key" tl_valid o.ndjson
pid=$(tl_events o.ndjson exec | jq -r .pid | head -n 1)
tl_samples o.ndjson "${pid:-0}" >s
max=$(jq -s '[.[].cgroup_usage_bytes | select(. != null)] | max' s)
diag "pid ${pid:-none}: $(wc -l <s) samples, usage up to ${max:-?} of $LIMIT"
check "samples give the limit: 64 MiB" jqe -s \
	"length > 0 and all(.[]; .cgroup_limit_bytes == $LIMIT)" s
check "the usage reaches the limit (>= 95 % seen)" \
	[ "${max:-0}" -ge $((LIMIT / 100 * 95)) ]
check "heap_inuse_bytes rises to >= 32 MiB" jqe -s \
	"[.[].heap_inuse_bytes | select(. != null)] | max >= 33554432" s
check "threshold events 80, 90, 95, in order, at their usage" jqe -s \
	"[.[] | select(.event == \"threshold\" and .pid == ${pid:-0})] |
	map(.percent) == [80, 90, 95] and all(.[]; .limit_bytes == $LIMIT and
	.usage_bytes * 100 >= .percent * $LIMIT)" o.ndjson
check "an oom_kill event for the leaker" jqe -s \
	"[.[] | select(.event == \"oom_kill\" and .pid == ${pid:-0})] |
	length == 1" o.ndjson
check "its exit event: SIGKILL, status 137, after the oom_kill" jqe -s \
	"[.[] | select(.pid == ${pid:-0} and (.event == \"exit\" or
	.event == \"oom_kill\")) | .event] == [\"oom_kill\", \"exit\"] and
	([.[] | select(.event == \"exit\" and .pid == ${pid:-0})][0] |
	.status == 137 and .signal == 9)" o.ndjson
check "the exit profile's event" jqe -s \
	"[.[] | select(.event == \"profile\" and .kind == \"exit\" and
	.pid == ${pid:-0})] | length == 1" o.ndjson
grep -v '"sample"' o.ndjson | sed 's/^/# /'
sed 's/^/# /' o.err
