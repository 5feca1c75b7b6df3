#!/bin/sh
# SPDX-License-Identifier: MIT
# PALLOC_PEAK=1 adds peak_inuse_objects/count and peak_inuse_space/bytes:
# every stack's inuse at the high-water mark of the inuse estimate, which
# at rate 1 is the exact peak (t/3023 checks it against a known truth).
# PALLOC_EXACT=1 reports exact live and peak bytes in the comments.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

plan 7

LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_PEAK=1 \
	PALLOC_OUTPUT=peak.pb.gz alloc-exact peak >truth.txt
check "runs with PALLOC_PEAK=1" test $? -eq 0
raw_values peak.pb.gz v.txt
check "six sample types" grep -q '^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\] peak_inuse_objects/count peak_inuse_space/bytes$' v.txt.raw
line=$(grep '^100 1000700 0 0 ' v.txt)
po=$(echo "$line" | cut -d' ' -f5)
ps=$(echo "$line" | cut -d' ' -f6)
# 100 blocks of 10007 bytes were live at the peak.
check "peak of the 100-block site: $po objects, $ps bytes" \
	test "$po" = 100 -a "$ps" = 1000700
check "the later site was not live at the peak" \
	grep -q '^10 100090 10 100090 0 0 |' v.txt

LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_EXACT=1 \
	PALLOC_OUTPUT=exact.pb.gz alloc-exact peak >/dev/null
comments exact.pb.gz c.txt
line=$(sed -n 's/^exact: inuse_bytes \([0-9-]*\), peak_inuse_bytes \([0-9-]*\) .*/\1 \2/p' c.txt)
inuse=${line% *}
peak=${line#* }
check "exact mode reports live and peak bytes ($line)" test -n "$line"
# usable sizes: at least the requested bytes, at most 16 bytes more each
check "exact peak covers the 100 blocks" test "${peak:-0}" -ge 1000700
check "exact inuse at exit covers the 10 live blocks, not the freed 100" \
	test "${inuse:-0}" -ge 100090 -a "${inuse:-0}" -lt 1000700
done_testing
