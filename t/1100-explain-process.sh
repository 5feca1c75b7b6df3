#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-explain on processes with known memory (t/helper/explain-workload,
# glibc): each part within 5 % of the truth, the parts add up to Rss and
# the unexplained rest is at most 5 % of it; sampled heap with its 95 %
# interval; no agent; table, --prom, errors.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-explain.sh"
need_agent
need jq explain-workload
trap 'stop_workload; cleanup_tmp' EXIT

plan 46
# fragmentation: about 100 MB in use, 100 MB held free (4 tests)
explain_scenario frag "" frag
check "frag: heap in use exact, glibc" jqe '.agent and .allocator == "glibc"
	and .heap_inuse_source == "exact_usable"
	and (.parts[0] | .layer == "profile" and .name == "heap_inuse")' frag.json
# 8 threads with their own arenas (3 + 1)
explain_scenario arenas "" arenas
check "arenas: 9 arenas, 8 heaps found by their shape" \
	jqe '(.allocator_detail.arenas | length) >= 9
	and .allocator_detail.arena_heap_count >= 9' arenas.json
# large mmap'd blocks (3 + 1)
explain_scenario bigblocks "" bigblocks
check "bigblocks: glibc's mmapped bytes" \
	jqe '.allocator_detail.mmapped_bytes >= 134217728' bigblocks.json
# anonymous mmap outside malloc, thread stacks, a mapped file (3 x 3)
explain_scenario mmap "" mmap
explain_scenario stacks "" stacks
explain_scenario file "" file --file "$T/mapped.dat"
# all of them in one process, the truths added up (3 + 5)
explain_scenario all "" frag arenas bigblocks mmap stacks file \
	--file "$T/mapped2.dat"
check "stacks: 16 threads with their stacks named" \
	jqe '[.thread_stacks[] | select(.tid != null and .rss_bytes >= 1048576)]
	| length == 16' stacks.json

# Sampled (no exact counters): the estimate's 95 % interval holds the
# truth. PALLOC_SEED makes the run reproducible.
EXACT=0 PALLOC_SAMPLE_RATE=65536 PALLOC_SEED=7 start_workload "" frag
palloc-explain --json $pid >sampled.json
want=$(sed -n 's/^truth heap_inuse //p' truth.txt)
diag "sampled: $(jq -c '.parts[0] | [.bytes, .ci95_low_bytes, .ci95_high_bytes]' sampled.json), truth $want"
check "sampled: heap in use with a 95% interval holding the truth" \
	jqe --argjson w "$want" '.heap_inuse_source == "sampled"
	and .parts[0].ci95_low_bytes <= $w and $w <= .parts[0].ci95_high_bytes' \
	sampled.json
check "sampled: the top site is frag" \
	jqe '.top_sites[0].function == "frag"' sampled.json
palloc-explain $pid >table.txt
check "table: a line per part and the unexplained rest" \
	sh -c 'grep -Eq "^profile +heap_inuse +[0-9.]+ (B|KiB|MiB|GiB) +[0-9.]+%" table.txt &&
	grep -Eq "^ +unexplained " table.txt'
palloc-explain --prom $pid >explain.prom
check "--prom: the parts" grep -q \
	"^palloc_explain_part_bytes{pid=\"$pid\",program=\"explain-workloa\",layer=\"profile\",part=\"heap_inuse\"} [0-9]" \
	explain.prom
if command -v promtool >/dev/null; then
	check "--prom passes promtool check metrics" \
		sh -c 'promtool check metrics <explain.prom >promtool.out 2>&1'
else
	skip "promtool (Debian prometheus) not installed"
fi
palloc-explain --no-agent --json $pid >noagent.json
check "--no-agent: the heap is null, the kernel layers add up" \
	jqe '.agent == false and .parts[0].bytes == null
	and ([.parts[] | select(.layer == "allocator") | .bytes] | all(. == null))
	and (.parts[] | select(.name == "anonymous_unattributed") | .bytes) > 0
	and ([.parts[].bytes // 0] | add) + .unexplained_bytes == .rss_bytes' \
	noagent.json
palloc-explain --output-file out.json --json $pid
check "--output-file FILE" jqe '.format == "palloc-explain" and .format_version == 1
	and (keys_unsorted[0:2] == ["format", "format_version"])' out.json
stop_workload

# A process without the agent: the kernel layers, a note why.
explain-workload --seconds 300 mmap >truth.txt &
pid=$!
retry 100 0.1 grep -q ready truth.txt
palloc-explain --json $pid >plain.json
check "no agent: heap unknown (null), a note says why" \
	jqe '.agent == false and .parts[0].bytes == null
	and (.notes | map(test("no agent")) | any)' plain.json
stop_workload
expect_fail 2 palloc-explain 999999999 >none.out 2>none.err
check "no such process: exit 2, nothing on stdout" test $? -eq 0 -a ! -s none.out
done_testing
