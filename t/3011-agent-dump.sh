#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc_dump(PATH) and palloc_dump(NULL) write the current profile on
# request (atomically); the exit profile still follows, and reflects what
# happened after the dump.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

plan 7

expect_fail 3 alloc-exact dump now.pb.gz >/dev/null &&
	ok "without the agent: palloc_dump is absent" ||
	not_ok "without the agent: palloc_dump is absent"
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT='p.%n.pb.gz' \
	alloc-exact dump now.pb.gz >out.txt
check "with the agent: both dumps succeed" test $? -eq 0
raw_values now.pb.gz now.txt && ok "palloc_dump(PATH) wrote a valid profile" ||
	not_ok "palloc_dump(PATH) wrote a valid profile"
check "it holds the live blocks at the time of the dump" grep -q '^10 10010 6 6006 |' now.txt
check "palloc_dump(NULL) used the pattern: p.1.pb.gz" test -s p.1.pb.gz
check "the exit profile is the next name: p.2.pb.gz" test -s p.2.pb.gz
raw_values p.2.pb.gz exit.txt
check "the exit profile saw the frees after the dump" grep -q '^10 10010 0 0 |' exit.txt
done_testing
