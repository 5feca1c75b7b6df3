#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-dump --serve for a program started with LD_PRELOAD alone, idle
# between signals: /debug/pprof/heap exact, /debug/pprof/allocs?seconds=2
# holds only what was allocated in those 2 seconds, /debug/palloc/stats
# from the record.
. "$top_srcdir/t/lib.sh"
need_agent
need curl jq idle-alloc
if asan palloc-dump; then skip_all "a sanitized build cannot load the agent"; fi

XDG_RUNTIME_DIR=$T/run
export XDG_RUNTIME_DIR
mkdir -m 700 "$XDG_RUNTIME_DIR"
pid= server= fetch=
trap 'kill $fetch $server 2>/dev/null; kill -9 $pid 2>/dev/null;
	wait 2>/dev/null; cleanup_tmp' EXIT

PALLOC_SAMPLE_RATE=1 LD_PRELOAD=$PALLOC_AGENT idle-alloc signal >helper.out \
	2>helper.err &
pid=$!
retry 100 0.05 grep -q ready helper.out
palloc-dump --serve 127.0.0.1:0 $pid 2>serve.err &
server=$!
retry 100 0.05 grep -q serving serve.err
url=$(sed -n 's|.*serving \(http://[^ ]*\)/$|\1|p' serve.err)
diag "server: $url"

# fn_bytes FILE FN TYPE: FN's flat TYPE bytes in the profile FILE (0: absent).
fn_bytes() {
	palloc-dump "$1" --sample-index "$3" --json |
		jq --arg f "$2" '[.top.functions[] | select(.function == $f)
			| .flat_bytes] | add // 0'
}

plan 9
check "the server prints its URL" test -n "$url"
curl -sf -o heap.pb.gz "$url/debug/pprof/heap"
check "/debug/pprof/heap answers" test $? -eq 0 -a -s heap.pb.gz
check "heap: keep_blocks' 1000000 bytes in use, exactly" \
	test "$(fn_bytes heap.pb.gz keep_blocks inuse_space)" = 1000000
curl -sf -o stats.json "$url/debug/palloc/stats"
check "/debug/palloc/stats from the record" jqe --argjson p $pid '
	.format == "palloc-stats" and .pid == $p and
	.sampled_inuse_bytes == 1000000 and .state == "live"' stats.json

# One round before the window: its blocks are not in the delta.
kill -USR1 $pid
retry 100 0.05 grep -q "more 1" helper.out
curl -sf -o allocs.pb.gz "$url/debug/pprof/allocs?seconds=2" &
fetch=$!
# Rounds while the window is open, each waited for, a tenth of a second
# apart: the delta holds some of them, whole.
rounds=1
while kill -0 $fetch 2>/dev/null && [ $rounds -lt 60 ]; do
	kill -USR1 $pid
	rounds=$((rounds + 1))
	retry 100 0.01 grep -q "more $rounds" helper.out
	sleep 0.1
done
wait $fetch
check "/debug/pprof/allocs?seconds=2 answers" test $? -eq 0 -a -s allocs.pb.gz
got=$(fn_bytes allocs.pb.gz more_blocks alloc_space)
diag "$((rounds - 1)) rounds of 250000 bytes sent during the window;" \
	"the delta has $got bytes of more_blocks"
check "allocs delta: whole rounds of more_blocks, at least one" \
	test "$got" -ge 250000 -a $((got % 250000)) -eq 0 -a \
	"$got" -le $(((rounds - 1) * 250000))
check "allocs delta: not keep_blocks (before the window)" \
	test "$(fn_bytes allocs.pb.gz keep_blocks alloc_space)" = 0
check "allocs delta: alloc_space is the default sample type" jqe '
	.default_sample_type == "alloc_space"' \
	"$(palloc-dump allocs.pb.gz --json >allocs.json; echo allocs.json)"
check "allocs delta: spans 2 seconds" jqe '
	.duration_ns >= 2000000000 and .duration_ns < 10000000000' allocs.json
done_testing
