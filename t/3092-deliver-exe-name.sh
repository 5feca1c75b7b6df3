#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that writes over its argv to set a process
# title (nginx, PostgreSQL, redis, sshd) got garbage file names: %e and
# the agent's "program" read argv[0] through program_invocation_short_name,
# which points into the overwritten memory. Processes are named by the
# executable they exec'd, captured at start; the title goes in a comment.
. "$top_srcdir/t/lib.sh"
need_agent
need_pprof
need deliver-child palloc-run palloc-dump curl jq
plan 9

# The title is "nginx: worker process / is here" (argv padded to hold it).
pad=........................................
palloc-run -o 'p.%e.%p.pb.gz' deliver-child title - $pad >run.out 2>run.err
check "title rewriter under palloc-run: exit 0" [ $? -eq 0 ]
ls -A | grep '^p\.' >names
check "two profiles, both named after the executable" \
	[ "$(grep -Ec '^p\.deliver-child\.[0-9]+\.pb\.gz$' names)" -eq 2 ]
check "no other file" [ "$(wc -l <names)" -eq 2 ]
sed 's/^/# /' names
check "the summary lines name them" \
	[ "$(grep -Ec '^palloc-run: wrote p\.deliver-child\.[0-9]+\.pb\.gz: ' run.err)" -eq 2 ]
sed 's/^/# /' run.err
f=$(grep -E '^p\.deliver-child\.[0-9]+\.pb\.gz$' names | head -1)
pprof -raw "$f" >comments.raw 2>comments.err
sed -n "s/^Comment: //p" comments.raw >comments
grep '^process title' comments | sed 's/^/# /'
check "the title is in a comment" \
	grep -q '^process title: nginx: worker process / is here' comments

# LD_PRELOAD alone, the default name.
mkdir alone && cd alone || exit 1
env LD_PRELOAD="$PALLOC_AGENT" deliver-child title - $pad 2>../alone.err
cd .. || exit 1
check "LD_PRELOAD alone: palloc.deliver-child.PID.pb.gz twice, nothing else" \
	[ "$(ls -A alone | grep -Ec '^palloc\.deliver-child\.[0-9]+\.pb\.gz$')" -eq 2 -a "$(ls -A alone | wc -l)" -eq 2 ]

# Live: the agent's "program" and palloc-dump's listing.
env LD_PRELOAD="$PALLOC_AGENT" deliver-child title wait 2>live.err &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; cleanup_tmp' EXIT
retry 100 0.1 sh -c "palloc-dump --stats --json $pid >stats.json 2>/dev/null"
check "stats: program is the executable" \
	jqe '.program == "deliver-child"' stats.json
palloc-dump >list.out 2>list.err
check "palloc-dump's listing shows the executable's name" \
	grep -Eq "^ *$pid +deliver-child " list.out
grep -E "^ *$pid " list.out | sed 's/^/# /'
kill -TERM $pid
wait $pid
check "the title rewriter ends normally" [ $? -eq 0 ]
done_testing
