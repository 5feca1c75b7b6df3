#!/bin/sh
# SPDX-License-Identifier: MIT
# At PALLOC_SAMPLE_RATE=1 the agent's profile holds the exact truth of a
# helper's allocations (every malloc-family function and C++ operator),
# read back through Go's pprof.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

plan 49

for prog in alloc-exact alloc-exact-cxx; do
	mkdir "$prog" && cd "$prog" || exit 99
	if LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 "$prog" basic \
		>truth.txt 2>err.txt; then
		ok "$prog runs under the agent"
	else
		not_ok "$prog runs under the agent"
	fi
	f=$(one_profile "palloc.$prog.*.pb.gz")
	check "$prog wrote one profile" test -n "$f"
	if raw_values "$f" values.txt; then
		ok "pprof reads $prog's profile"
	else
		not_ok "pprof reads $prog's profile"
		cat values.txt.err
	fi
	check_sites truth.txt values.txt
	comments "$f" comments.txt
	check "$prog: no reentries after warm-up" \
		grep -qx 'reentries after warm-up: 0' comments.txt
	cd .. || exit 99
done

cd alloc-exact || exit 99
f=$(one_profile "palloc.alloc-exact.*.pb.gz")
grep -q '^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]$' \
	values.txt.raw && ok "sample types in Go's order, default inuse_space" ||
	not_ok "sample types in Go's order, default inuse_space"
check "period type space/bytes" grep -qx 'PeriodType: space bytes' values.txt.raw
check "period 1" grep -qx 'Period: 1' values.txt.raw
id=$(readelf -n "$(command -v alloc-exact)" | sed -n 's/.*Build ID: //p')
grep -q "^1: .*/alloc-exact $id" values.txt.raw &&
	ok "first mapping is the program, with its build id" ||
	not_ok "first mapping is the program, with its build id ($id)"
check "thread label present" grep -q 'thread:\[alloc-exact\]' values.txt
check "the comments name the rate" grep -qx 'sample rate: 1 (every allocation)' comments.txt
check "the comments name the command line" grep -q "^command line: .*alloc-exact basic" comments.txt
check "errors: none on stderr" test ! -s err.txt
cd .. || exit 99

# A program that allocates nothing after start still gets a valid profile,
# and it says so.
mkdir none && cd none || exit 99
LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=none.pb.gz \
	alloc-exact none
check "idle program: profile written" test -s none.pb.gz
comments none.pb.gz c.txt
check "idle program: 'no allocation observed'" grep -q 'no allocation observed' c.txt
cd .. || exit 99

# Rate 0: counters only, no stacks; the profile is still valid.
LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=0 PALLOC_OUTPUT=r0.pb.gz \
	alloc-exact basic >/dev/null
raw_values r0.pb.gz r0.txt && ok "rate 0: valid profile" || not_ok "rate 0: valid profile"
check "rate 0: no samples" test ! -s r0.txt
comments r0.pb.gz r0c.txt
check "rate 0: counters still counted" grep -q 'counters: alloc_count [1-9]' r0c.txt
done_testing
