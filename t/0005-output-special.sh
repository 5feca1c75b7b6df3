#!/bin/sh
# SPDX-License-Identifier: MIT
# Output to a path that is no regular file (a FIFO here; /dev/null in real
# use) is written in place: the atomic temporary-name-then-rename would
# replace the node with a regular file (as root, /dev/null itself).
. "$top_srcdir/t/lib.sh"
need mkfifo pprof-gen
plan 6

pprof-gen known base.pb.gz >/dev/null 2>&1 || { echo "Bail out! pprof-gen"; exit 1; }

# to_fifo NAME CMD...: CMD writes to ./NAME.fifo, read by cat into NAME.out.
to_fifo() {
	_name=$1
	shift
	rm -f "$_name.fifo" && mkfifo "$_name.fifo" || return 1
	cat "$_name.fifo" >"$_name.out" &
	_cat=$!
	"$@"
	_rc=$?
	wait $_cat
	[ $_rc -eq 0 ]
}

check "palloc-diff -o FIFO succeeds" \
	to_fifo diff palloc-diff -o diff.fifo base.pb.gz base.pb.gz
check "palloc-diff -o FIFO: still a FIFO, data went through it" \
	test -p diff.fifo -a -s diff.out
check "palloc-dump FILE -o FIFO succeeds" \
	to_fifo dump palloc-dump -o dump.fifo base.pb.gz
check "palloc-dump -o FIFO: still a FIFO, a gzipped profile went through" \
	sh -c 'test -p dump.fifo && gzip -t <dump.out'

# The agent never writes into a FIFO (issue 11 item 7: a FIFO planted at
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
