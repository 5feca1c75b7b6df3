#!/bin/sh
# SPDX-License-Identifier: MIT
# A library loaded with dlopen after start: its allocations are exact and
# the profile has a mapping for it with its build id.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

plan 4

lib=$top_builddir/t/helper/.libs/libdlalloc.so
[ -f "$lib" ] || skip_all "libdlalloc.so not built"
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=dl.pb.gz \
	alloc-exact dlopen "$lib" >truth.txt
check "dlopen helper runs" test $? -eq 0
raw_values dl.pb.gz v.txt && ok "profile valid" || not_ok "profile valid"
check "13 blocks from the library" grep -q '^13 104117 13 104117 |' v.txt
id=$(readelf -n "$lib" | sed -n 's/.*Build ID: //p')
check "mapping for libdlalloc.so with build id $id" \
	grep -q "libdlalloc.so $id" v.txt.raw
done_testing
