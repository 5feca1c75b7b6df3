#!/bin/sh
# SPDX-License-Identifier: MIT
# Environment: invalid values warn once each ("palloc: PALLOC_X=V: why")
# and the defaults are used; PALLOC_OUTPUT patterns; periodic dumps.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

plan 15

LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=abc PALLOC_MAX_DEPTH=0 \
	PALLOC_UNWIND=bogus PALLOC_PEAK=2 PALLOC_INTERVAL=-1 PALLOC_EXACT=yes \
	PALLOC_OUTPUT=bad.pb.gz alloc-exact basic >/dev/null 2>err.txt
check "runs with invalid values" test $? -eq 0
check "six warnings, nothing else" test "$(wc -l <err.txt)" -eq 6
for v in PALLOC_SAMPLE_RATE=abc PALLOC_MAX_DEPTH=0 PALLOC_UNWIND=bogus \
	PALLOC_PEAK=2 PALLOC_INTERVAL=-1 PALLOC_EXACT=yes; do
	check "warns once: $v" test "$(grep -c "^palloc: $v: " err.txt)" -eq 1
done
comments bad.pb.gz c.txt
check "default rate used" grep -qx 'sample rate: 524288 bytes (Poisson; values are unbiased estimates)' c.txt
check "default unwinder and depth used" grep -qx 'unwinder: auto, max depth 64' c.txt

LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_MAX_DEPTH=2 \
	PALLOC_OUTPUT=d2.pb.gz alloc-exact basic >/dev/null
pprof -raw d2.pb.gz >d2.raw 2>/dev/null
check "PALLOC_MAX_DEPTH=2: stacks of two frames" \
	grep -Eq '^ +10 +10010 +6 +6006: [0-9]+ [0-9]+ $' d2.raw

mkdir out && cd out || exit 99
LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT='sub-%e-%p-%n.pb.gz' \
	alloc-exact none
check "pattern %e %p %n" test -n "$(ls sub-alloc-exact-[0-9]*-1.pb.gz 2>/dev/null)"
cd .. || exit 99

mkdir iv && cd iv || exit 99
# tick, not sleep: a single-threaded program writes its periodic profiles
# from its own allocations (palloc(7), Threads).
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_INTERVAL=0.2 \
	PALLOC_OUTPUT='iv.%n.pb.gz' alloc-exact tick 1100 >/dev/null
n=$(ls iv.*.pb.gz | wc -l)
# No timing assertion (a loaded machine may delay the dumper): the run must
# give the periodic files numbered from 1 plus the exit file.
check "PALLOC_INTERVAL=0.2 over 1.1 s: periodic profiles and the exit one ($n)" \
	test "$n" -ge 2 -a -f iv.1.pb.gz -a -f iv.2.pb.gz
raw_values iv.1.pb.gz v.txt
check "the first periodic profile already has the data" grep -q '^10 10010 6 6006 |' v.txt
check "no temporary files left" test -z "$(ls | grep tmp)"
cd .. || exit 99
done_testing
