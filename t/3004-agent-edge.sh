#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent changes nothing a program can see: errno, realloc(p, 0),
# calloc and reallocarray overflow, alignment of every aligned allocator.
# Each case runs without the agent, then with it at rate 1 and at the
# default rate: the output must be identical and all checks pass.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

plan 14

for mode in errno realloc0 overflow align; do
	alloc-misc $mode >plain.$mode 2>&1
	check "$mode: passes without the agent" test $? -eq 0
	LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=$mode.pb.gz \
		alloc-misc $mode >r1.$mode 2>&1 &&
		cmp -s plain.$mode r1.$mode && ok "$mode: same at rate 1" ||
		{ not_ok "$mode: same at rate 1"; diff -u plain.$mode r1.$mode | sed 's/^/# /'; }
	LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT=d.$mode.pb.gz \
		alloc-misc $mode >d.$mode 2>&1 &&
		cmp -s plain.$mode d.$mode && ok "$mode: same at the default rate" ||
		not_ok "$mode: same at the default rate"
done
raw_values realloc0.pb.gz v.txt
check "realloc(p, 0) counts as a free: 1 9001 0 0" grep -q '^1 9001 0 0 |' v.txt
LD_PRELOAD="$PALLOC_AGENT" PALLOC_EXACT=1 PALLOC_OUTPUT=x.pb.gz \
	alloc-misc errno >x.errno 2>&1 && cmp -s plain.errno x.errno &&
	ok "errno: same in exact mode" || not_ok "errno: same in exact mode"
done_testing
