#!/bin/sh
# SPDX-License-Identifier: MIT
# At the default rate (524288 bytes) the weighted estimates are unbiased
# and their error is known. Thread "big" allocates 400 blocks of 1 MiB
# (truth 419430400 bytes), thread "small" 1000000 blocks of 100 bytes
# (truth 100000000 bytes). With R the rate and s the size, a sample weighs
# w = s / (1 - exp(-s/R)) bytes and the variance of a site's estimate is
# N * w * (w - s) (sampler.c):
#   big:   w = 1.1565 * 2^20, sd = sqrt(400 * w * (w - s)) = 10.6 MB = 2.5 %
#   small: w ~ R, sd ~ sqrt(N * s * R) = 7.24 MB = 7.2 %
# The test allows 4.5 sd (11 % and 33 %), so it fails by chance about
# once in 150000 runs, while a bias of one weight in the formula (e.g.
# Go's size-averaging, or forgetting the weight) is far outside.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

plan 5

LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT=s.pb.gz alloc-exact sampled >out.txt
check "runs at the default rate" test $? -eq 0
raw_values s.pb.gz v.txt && ok "profile valid" || not_ok "profile valid"
sum() { awk -v t="thread:[$1]" 'index($0, t) { s += $2 } END { printf "%d", s }' v.txt; }
big=$(sum big)
small=$(sum small)
diag "big: $big of 419430400, small: $small of 100000000"
check "big within 11 %: $big" test "$big" -gt 373293056 -a "$big" -lt 465567744
check "small within 33 %: $small" test "$small" -gt 67000000 -a "$small" -lt 133000000
check "period 524288" grep -qx 'Period: 524288' v.txt.raw
done_testing
