#!/bin/sh
# SPDX-License-Identifier: MIT
# Invariants a reader may rely on (DESIGN, palloc(7)).
# inuse <= alloc in every sample: live blocks kept their weight as a float
# and the alloc sums the double, so sizes whose float weight rounds up
# (99126 bytes at rate 65536: 1/p = 1.2826251388 -> 1.2826252) showed
# inuse_space above alloc_space on a stack whose blocks all live. And the
# stats' peak_inuse_bytes is never below their inuse_bytes (the sampled
# peak beside the allocator's inuse).
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
need curl jq

plan 6

LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=65536 PALLOC_SEED=7 \
	PALLOC_PEAK=1 PALLOC_OUTPUT=w.pb.gz run-workload 500 99126 \
	>/dev/null 2>&1
check "run-workload at rate 65536" test $? -eq 0
raw_values w.pb.gz v.txt
n=$(grep -c . v.txt)
check "the profile has samples ($n)" test "$n" -gt 0
bad=$(awk '$3 > $1 || $4 > $2 || $5 > $1 || $6 > $2' v.txt | wc -l)
check "inuse and peak <= alloc in every sample ($bad of $n break it)" \
	test "$bad" -eq 0
# keep_blocks holds all its blocks: there inuse == alloc exactly.
big=$(awk '$2 > 30000000' v.txt | head -1)
a=$(echo "$big" | cut -d' ' -f2)
i=$(echo "$big" | cut -d' ' -f4)
check "the site that keeps every block: inuse $i = alloc $a" \
	test -n "$a" -a "$a" = "$i"

# The stats at a rate that samples nothing: the sampled peak (0) beside
# the allocator's inuse (what run-workload keeps).
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=0 PALLOC_OUTPUT=/dev/null \
	run-workload 100 10000 serve >wait.txt 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; cleanup_tmp' EXIT
stats_when_ready $pid wait.txt stats.json
check "stats: inuse_bytes from the allocator covers the kept blocks" \
	jqe '.inuse_source == "allocator" and .inuse_bytes >= 1000000' \
	stats.json
check "stats: peak_inuse_bytes >= inuse_bytes" \
	jqe '.peak_inuse_bytes >= .inuse_bytes' stats.json ||
	diag "$(cat stats.json)"
done_testing
