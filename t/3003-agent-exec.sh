#!/bin/sh
# SPDX-License-Identifier: MIT
# exec: by default an exec'd program loads the agent anew and writes its own
# profile; with PALLOC_FOLLOW_CHILDREN=0 the agent takes itself out of
# LD_PRELOAD (keeping other entries) and drops the PALLOC_* variables.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

plan 9

other=$(ldd "$(command -v alloc-misc)" | awk '/libc\.so/ { print $3 }')

LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_FOLLOW_CHILDREN=0 \
	PALLOC_PEAK=0 alloc-misc exec env >env.txt
check "exec with FOLLOW_CHILDREN=0 runs" test $? -eq 0
check "LD_PRELOAD is gone" test -z "$(grep '^LD_PRELOAD=' env.txt)"
check "PALLOC_* are gone" test -z "$(grep '^PALLOC_' env.txt)"

LD_PRELOAD="$other:$PALLOC_AGENT" PALLOC_FOLLOW_CHILDREN=0 \
	alloc-misc exec env >env2.txt
check "other LD_PRELOAD entries stay" grep -qx "LD_PRELOAD=$other" env2.txt

mkdir follow && cd follow || exit 99
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 \
	alloc-misc exec alloc-exact basic >truth.txt
f=$(one_profile "palloc.alloc-exact.*.pb.gz")
check "default: the exec'd program writes its own profile" test -n "$f"
raw_values "$f" v.txt
check "and its values are exact" grep -q '^10 10010 6 6006 |' v.txt
check "the exec'd image's profile only (alloc-misc never exited)" \
	test -z "$(ls palloc.alloc-misc.* 2>/dev/null)"
cd .. || exit 99

mkdir nofollow && cd nofollow || exit 99
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_FOLLOW_CHILDREN=0 \
	alloc-misc exec alloc-exact basic >truth.txt
check "FOLLOW_CHILDREN=0: exec'd program runs" test -s truth.txt
check "FOLLOW_CHILDREN=0: no profile at all" test -z "$(ls palloc.* 2>/dev/null)"
cd .. || exit 99
done_testing
