#!/bin/sh
# SPDX-License-Identifier: MIT
# Gaps closed after the agent's first version: a thread that only frees
# is counted (it registers on its first free, at rate 1 and at the
# default rate); PALLOC_PEAK=1 writes a peak
# file (the output name with ".peak" before ".pb.gz", or %n = "peak") at
# new high-water marks, at most once a second, from an agent thread;
# PALLOC_SEED is validated; exact mode counts a sampled block's realloc
# once.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

plan 13

# A thread that allocates nothing frees 1000 blocks main allocated.
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=free.pb.gz \
	alloc-exact freeonly 1000 >out.txt 2>err.txt
check "freeonly runs" grep -q '^freed by the thread: 1000$' out.txt
comments free.pb.gz c.txt
fc=$(sed -n 's/^counters: .*free_count \([0-9]*\),.*/\1/p' c.txt)
# 1000 by the thread, 1 (the pointer array) by main, plus libc's own.
check "free_count $fc includes the free-only thread's 1000 frees" \
	test "${fc:-0}" -ge 1001
# The same at the default rate, where only the thread's first free
# leaves the fast path (its count's carry) to register it.
LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT=free-d.pb.gz \
	alloc-exact freeonly 1000 >out-d.txt 2>err-d.txt
comments free-d.pb.gz c-d.txt
fc=$(sed -n 's/^counters: .*free_count \([0-9]*\),.*/\1/p' c-d.txt)
check "default rate: free_count $fc includes the free-only thread's frees" \
	test "${fc:-0}" -ge 1001

# PALLOC_PEAK=1: 300 x 1 MiB live at the peak, then all freed.
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_PEAK=1 \
	alloc-exact grow >truth.txt 2>err.txt
check "grow runs with PALLOC_PEAK=1, quiet" \
	test $? -eq 0 -a ! -s err.txt
set -- palloc.alloc-exact.*.peak.pb.gz
check "one peak file beside the exit profile ($*)" \
	test $# -eq 1 -a -f "$1" -a -f "${1%.peak.pb.gz}.pb.gz"
raw_values "$1" pv.txt
check "its default sample type is peak_inuse_space" \
	grep -q 'peak_inuse_space/bytes\[dflt\]$' pv.txt.raw
# The sampler snapshots at each rise above 17/16 of the last snapshot, so
# the peak file holds at least 16/17 of the 300 blocks: 283.
# Match the 1 MiB site by its sizes: the peak file's alloc columns are those
# of the moment it was written, which may come before the last allocation.
po=$(awk '$1 > 0 && $2 == $1 * 1048576 { print $5 }' pv.txt | head -1)
check "peak file: grow_site had $po blocks live at the peak, in [283, 300]" \
	test -n "$po" -a "${po:-0}" -ge 283 -a "${po:-0}" -le 300
raw_values "${1%.peak.pb.gz}.pb.gz" ev.txt
check "exit profile: nothing of grow_site in use, peak kept" \
	grep -Eq '^300 314572800 0 0 (28[3-9]|29[0-9]|300) ' ev.txt

# %n in the pattern: the peak file takes "peak" for it.
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_PEAK=1 \
	PALLOC_OUTPUT='prof.%n.pb.gz' alloc-exact peak >/dev/null 2>err.txt
check "%n pattern: prof.peak.pb.gz and prof.1.pb.gz ($(echo prof.*))" \
	test -f prof.peak.pb.gz -a -f prof.1.pb.gz

# No PALLOC_PEAK: no peak file.
LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT='nopeak.pb.gz' alloc-exact peak \
	>/dev/null 2>&1
check "without PALLOC_PEAK no peak file" \
	test -f nopeak.pb.gz -a ! -e nopeak.peak.pb.gz

# PALLOC_EXACT=1: whether blocks are sampled (rate 1: all of them, with
# reallocs) or not (rate 0) must not change the exact live bytes; a
# sampled block's realloc once subtracted its old size twice.
for r in 0 1; do
	LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=$r PALLOC_EXACT=1 \
		PALLOC_OUTPUT=exact$r.pb.gz alloc-exact basic >/dev/null 2>&1
	comments exact$r.pb.gz ec$r.txt
done
# Equal up to the aligned blocks: their usable sizes depend on where the
# heap puts them (glibc splits off remainders below 32 bytes with the
# block), and the agent's own allocations at rate 1 move the heap. Five
# aligned blocks stay live: 160 bytes at most, against the 2008 that the
# realloc bug took.
exact_pair() {
	sed -n 's/^exact: inuse_bytes \([0-9]*\), peak_inuse_bytes \([0-9]*\) (usable sizes)$/\1 \2/p' "$1"
}
# close A B: A and B are numbers within 160 of each other.
close() {
	test -n "$1" -a -n "$2" && test $(($1 - $2)) -le 160 -a $(($2 - $1)) -le 160
}
set -- $(exact_pair ec0.txt) $(exact_pair ec1.txt)
check "exact inuse at rate 0 and 1 within 160 bytes ($1, $3)" close "$1" "$3"
check "exact peak at rate 0 and 1 within 160 bytes ($2, $4)" close "$2" "$4"

LD_PRELOAD="$PALLOC_AGENT" PALLOC_SEED=x1 PALLOC_OUTPUT=seed.pb.gz \
	alloc-exact none >/dev/null 2>err.txt
check "PALLOC_SEED=x1 warns once and runs" \
	test "$(grep -c '^palloc: PALLOC_SEED=x1: .*using 0' err.txt)" = 1
done_testing
