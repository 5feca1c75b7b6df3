#!/bin/sh
# SPDX-License-Identifier: MIT
# Output to a path that is no regular file. A FIFO at the name is never
# opened (someone may have planted it: it would hang the command, or hand
# its data to whoever reads it; t/0008 plants every kind): the command
# ends at once with exit 2. The user's own streams are written in place:
# "/dev/fd/N" (bash's >(...)) and /dev/null (nothing), which the atomic
# temporary-name-then-rename would replace with a regular file.
. "$top_srcdir/t/lib.sh"
need mkfifo pprof-gen gzip
plan 8

pprof-gen known base.pb.gz >/dev/null 2>&1 || { echo "Bail out! pprof-gen"; exit 1; }

mkfifo diff.fifo dump.fifo
timeout_run 30 palloc-diff -o diff.fifo base.pb.gz base.pb.gz 2>err
check "palloc-diff -o FIFO: exit 2 at once" test $? -eq 2
check "palloc-diff -o FIFO: still a FIFO, the reason said" \
	sh -c 'test -p diff.fifo && grep -qx "palloc-diff: cannot write .diff.fifo.: it is a FIFO" err'
timeout_run 30 palloc-dump -o dump.fifo base.pb.gz 2>err
check "palloc-dump FILE -o FIFO: exit 2 at once, still a FIFO" \
	test $? -eq 2 -a -p dump.fifo
# A pipe the user hands down: written in place.
check "palloc-dump -o /dev/fd/3 into a pipe: a gzipped profile went through" \
	sh -c 'palloc-dump -o /dev/fd/3 base.pb.gz 3>&1 >/dev/null | gzip -t'
check "palloc-diff -o /dev/fd/3 succeeds" \
	sh -c 'palloc-diff -o /dev/fd/3 base.pb.gz base.pb.gz 3>fd.out && gzip -t <fd.out'
check "palloc-dump -o /dev/null: exit 0, still a device" \
	sh -c 'palloc-dump -o /dev/null base.pb.gz && test -c /dev/null'

# The agent never writes into a FIFO (a FIFO planted at
# the output name hung the program and handed its profile to whoever read
# it): the program ends as usual, says why, and the FIFO stays unopened.
if [ -n "${PALLOC_AGENT:-}" ] && [ -f "$PALLOC_AGENT" ]; then
	mkfifo agent.fifo
	check "agent PALLOC_OUTPUT=FIFO: no hang, exit 0" \
		timeout_run 20 env LD_PRELOAD="$PALLOC_AGENT" \
		PALLOC_OUTPUT="$T/agent.fifo" true 2>agent.err
	check "agent: FIFO left alone, the reason said" \
		sh -c 'test -p agent.fifo && grep -q "it is a FIFO" agent.err'
else
	skip "agent not built"
	skip "agent not built"
fi
done_testing
