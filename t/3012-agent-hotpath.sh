#!/bin/sh
# SPDX-License-Identifier: MIT
# The hot paths make no system call: at the default rate, ten times more
# malloc+free pairs (100000 vs 1000000) must not mean more system calls,
# beyond the few samples' thread-name reads (at most one per 10 ms).
# Counted with strace, so this is not a timing assertion.
. "$top_srcdir/t/lib.sh"
need_agent
need strace

plan 3

prog=$(command -v alloc-exact)
for n in 100000 1000000; do
	LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT=h.$n.pb.gz \
		strace -f -qq -o st.$n "$prog" many $n ||
		echo "# strace run of $n pairs failed"
done
# One per system call: strace -f splits a call that another thread
# interrupts into "<unfinished ...>" and "<... resumed>" lines, and how
# often that happens depends on the scheduling, not on the agent.
a=$(grep -vc 'resumed>' st.100000)
b=$(grep -vc 'resumed>' st.1000000)
diag "system calls: $a for 100000 pairs, $b for 1000000 pairs"
check "both runs wrote a profile" test -s h.100000.pb.gz -a -s h.1000000.pb.gz
check "900000 more pairs cost at most 20 more system calls ($a -> $b)" \
	test "$b" -le $((a + 20))
check "no lock contention or sleep in the loop (no futex)" \
	test "$(grep -c futex st.1000000)" -le "$(grep -c futex st.100000)"
done_testing
