#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent's descriptors must not count against the program: under RLIMIT_NOFILE 4..63 a program that opens files until
# EMFILE gets as many, and exits with the same status, as without the
# agent (it held libunwind's pipe and its control socket: 0 instead of 2
# at a limit of 5). The agent keeps no descriptor at any limit (its
# record is mapped, the file closed).
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need fdreuse

limits="4 5 6 8 16 63"
plan 13

# no descriptor inherited from the harness (dash closes up to 9)
closed='exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-'
for l in $limits; do
	sh -c "$closed; ulimit -n $l && exec fdreuse count" >want.$l 2>/dev/null
	want=$?
	sh -c "$closed; ulimit -n $l && exec env LD_PRELOAD='$PALLOC_AGENT' \
		PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=prof.$l.pb.gz fdreuse count" \
		>got.$l 2>err.$l
	got=$?
	check "limit $l: same exit status ($want) under the agent" \
		test $got -eq $want
	check "limit $l: same output ($(cat want.$l))" cmp -s want.$l got.$l
done
# At 64 (where it kept its control socket before): none either.
sh -c "$closed; ulimit -n 64 && exec env LD_PRELOAD='$PALLOC_AGENT' \
	PALLOC_OUTPUT=/dev/null sh -c 'ls /proc/\$\$/fd'" >fds.txt 2>&1
sh -c "$closed; ulimit -n 64 && exec sh -c 'ls /proc/\$\$/fd'" >fds0.txt 2>&1
check "limit 64: the same descriptors as without the agent" \
	cmp -s fds.txt fds0.txt
done_testing
