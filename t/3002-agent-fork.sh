#!/bin/sh
# SPDX-License-Identifier: MIT
# fork: the child keeps working (malloc after fork, under a timeout), starts
# its own profile at the fork and writes its own file; the parent's file
# holds only the parent's allocations. Then many forks while four threads
# allocate: no deadlock, every child writes a valid profile.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

plan 14

timeout_run 30 env LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 \
	alloc-exact fork >out.txt 2>err.txt
check "fork then malloc in the child: no hang, exit 0" test $? -eq 0
parent=$(sed -n 's/^parent //p' out.txt)
child=$(sed -n 's/^child //p' out.txt)
check "parent wrote palloc.alloc-exact.$parent.pb.gz" test -s "palloc.alloc-exact.$parent.pb.gz"
check "child wrote palloc.alloc-exact.$child.pb.gz" test -s "palloc.alloc-exact.$child.pb.gz"
raw_values "palloc.alloc-exact.$parent.pb.gz" p.txt && ok "parent profile valid" || not_ok "parent profile valid"
raw_values "palloc.alloc-exact.$child.pb.gz" c.txt && ok "child profile valid" || not_ok "child profile valid"
check "parent: its 9 blocks" grep -q '^9 54099 9 54099 |' p.txt
check "parent: not the child's" test -z "$(grep '^11 66077' p.txt)"
check "child: its 11 blocks" grep -q '^11 66077 11 66077 |' c.txt
check "child: not the parent's (its profile starts at the fork)" \
	test -z "$(grep '^9 54099' c.txt)"
comments "palloc.alloc-exact.$child.pb.gz" cc.txt
check "child says it was forked" grep -q "^forked from pid $parent" cc.txt

mkdir nofollow && cd nofollow || exit 99
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_FOLLOW_CHILDREN=0 \
	alloc-exact fork >out.txt 2>err.txt
check "FOLLOW_CHILDREN=0: fork and malloc in the child still work" test $? -eq 0
parent=$(sed -n 's/^parent //p' out.txt)
check "FOLLOW_CHILDREN=0: only the parent's profile" \
	test "$(ls palloc.*.pb.gz)" = "palloc.alloc-exact.$parent.pb.gz"
cd .. || exit 99

mkdir stress && cd stress || exit 99
timeout_run 120 env LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 \
	alloc-exact forkstress 30 >out.txt 2>err.txt
check "30 forks beside 4 allocating threads: no hang, all children ok" test $? -eq 0
n=0
good=0
for f in palloc.alloc-exact.*.pb.gz; do
	n=$((n + 1))
	raw_values "$f" v.txt && good=$((good + 1))
done
check "31 valid profiles (parent and 30 children): $good of $n" test "$good" -eq 31 -a "$n" -eq 31
done_testing
