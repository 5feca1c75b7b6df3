#!/bin/sh
# SPDX-License-Identifier: MIT
# Eight named threads allocate at once: each gets its own samples with its
# thread label and exact values, and the exit of threads loses nothing.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

plan 11

timeout_run 60 env LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 \
	alloc-exact threads 8 >truth.txt 2>err.txt
check "8 threads run under the agent" test $? -eq 0
f=$(one_profile "palloc.alloc-exact.*.pb.gz")
raw_values "$f" v.txt && ok "pprof reads the profile" || not_ok "pprof reads the profile"
for i in 0 1 2 3 4 5 6 7; do
	check "thread palloc-w$i: 100 600100 50 300050" \
		grep -qx "100 600100 50 300050 | thread:\[palloc-w$i\]" v.txt
done
check "stderr is empty" test ! -s err.txt
done_testing
