#!/bin/sh
# SPDX-License-Identifier: MIT
# A fork child's record says only what the child knows of. The child
# copies its parent's record file after the fork while the parent's
# threads go on appending to it: at the first fork of forkthreads the
# churning thread often takes the allocator's first snapshot meanwhile.
# Before the child put back its own view (record.c fork_own_view), its
# header could name the parent's later TEXT entry, at the child's own end:
# the child's stacks then went where the text was, and its snapshot wrote
# malloc_info's XML over them (t/3031: child_alloc's 3000 blocks missing,
# a stack of 0xffffffffffffffff and XML). Also header.n_stacks and size
# from the parent's later appends. 200 runs of one fork each: before the
# fix some 15% of the children were wrong.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need forkthreads record-read

runs=200
plan 4
# As palloc-run would: the token keeps each record once its process ends.
PALLOC_RUN_TOKEN=00112233445566778899aabbccddeeff
export PALLOC_RUN_TOKEN

crashed=0
bad=0
n=0
mkdir rec || exit 99
i=0
while [ $i -lt $runs ]; do
	i=$((i + 1))
	timeout_run 60 env PALLOC_RECORD_DIR="$PWD/rec" \
		LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 \
		PALLOC_OUTPUT=/dev/null forkthreads 1 >out.txt 2>err.txt ||
		crashed=$((crashed + 1))
	for c in $(sed -n 's/^child //p' out.txt); do
		n=$((n + 1))
		set -- rec/"$c".*.rec
		# record-read refuses a malformed entry, an allocator text
		# or a weight table that is not in an entry of its type.
		if ! record-read "$1" >r.txt 2>r.err; then
			bad=$((bad + 1))
			diag "run $i child $c: $(cat r.err)"
		elif [ "$(sed -n 's/^n_stacks //p' r.txt)" != \
			"$(sed -n 's/^stack_entries //p' r.txt)" ] ||
			[ "$(sed -n 's/^text_entries //p' r.txt)" -gt 1 ] ||
			! grep -q '^3000 2100000 3000 2100000 |' r.txt; then
			bad=$((bad + 1))
			diag "run $i child $c: wrong record:"
			diag "$(grep -E '^(n_stacks|stack_entries|text_entries) |^[0-9]' r.txt)"
		fi
	done
	rm -f rec/*
done
check "the forker exits 0 in every run" test $crashed -eq 0
check "one child in each run" test $n -eq $runs
check "every child's record well formed, its 3000 blocks on one stack" \
	test $bad -eq 0
check "no warning from the agent" test ! -s err.txt
diag "wrong children: $bad of $n"
done_testing
