#!/bin/sh
# SPDX-License-Identifier: MIT
# No descriptor of the agent or its libraries may alias the program's.
# libunwind validated memory through a pipe it opened
# at init on the lowest free numbers (3 and 4) and kept using: a program
# that closes its descriptors and opens files that get 3 and 4 had its
# input eaten and memory bytes written into its output (the bash loop of
# the issue under palloc-run; a C daemon that closes 3..1023 then opens an
# input and a log). And the control thread, blocked in accept(2), held the
# lowest free number reserved: the program's dup2 onto it failed (EBUSY).
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need fdreuse palloc-run bash seq cmp

plan 14

seq 1 20000 >nums.txt
for r in 512k 64k 1; do
	rm -f copy.txt
	timeout_run 60 palloc-run -q -o /dev/null -r $r bash -c \
		'exec 3<nums.txt; exec 4>copy.txt
		while read -r l <&3; do echo "$l" >&4; done' >out.txt 2>err.txt
	check "palloc-run -r $r: the bash loop exits 0" test $? -eq 0
	check "palloc-run -r $r: its copy is the input" cmp -s nums.txt copy.txt
done

for u in auto dwarf; do
	for r in 1 4096; do
		rm -f log.txt
		timeout_run 60 env LD_PRELOAD="$PALLOC_AGENT" \
			PALLOC_UNWIND=$u PALLOC_SAMPLE_RATE=$r \
			PALLOC_OUTPUT=/dev/null fdreuse copy nums.txt log.txt \
			>out.txt 2>err.txt
		rc=$?
		[ $rc -eq 0 ] || diag "$(cat err.txt)"
		check "$u -r $r: closed 3..1023, copied, dup2 onto 5..63: exit 0" \
			test $rc -eq 0
		check "$u -r $r: its log is the input" cmp -s nums.txt log.txt
	done
done
done_testing
