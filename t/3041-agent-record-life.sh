#!/bin/sh
# SPDX-License-Identifier: MIT
# The record's lifetime (agent_record.h): with LD_PRELOAD alone the agent
# removes its record once the exit profile is written (nothing left behind
# by a normal exit, nor by the images a process exec'd from); under
# palloc-run (PALLOC_RUN_TOKEN) it leaves it; a SIGKILLed process's record
# stays; at start the agent removes the dead records of its directory
# beyond the newest 32, never a live one. Without a writable directory the
# record is kept in private memory and the profile is still made from it.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent

plan 18
here=$PWD
token=00112233445566778899aabbccddeeff

# count DIR: the number of records in DIR.
count() {
	ls "$1" | grep -c '\.rec$'
}

# --- a normal exit, LD_PRELOAD alone: the profile, and no record ---
mkdir alone
PALLOC_RECORD_DIR=$here/alone LD_PRELOAD=$PALLOC_AGENT \
	PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=$here/alone.pb.gz alloc-exact basic \
	>truth.txt 2>alone.err
check "alone: runs, no warning" test $? -eq 0 -a ! -s alone.err
check "alone: the exit profile is written" test -s alone.pb.gz
check "alone: no record left behind" test "$(count alone)" = 0
raw_values alone.pb.gz alone.vals
check "alone: the profile made from the record has alloc-exact's sites" \
	sh -c "grep '^site' truth.txt | head -3 | while read -r _ _ a b c d; do
		grep -q \"^\$a \$b \$c \$d |\" alone.vals || exit 1; done"

# --- exec: the image exec'd from (no exit, no profile) leaves none ---
mkdir ex
PALLOC_RECORD_DIR=$here/ex LD_PRELOAD=$PALLOC_AGENT \
	PALLOC_OUTPUT=$here/ex.%p.pb.gz sh -c 'exec alloc-exact none' 2>ex.err
check "exec: the new image removes the old image's record, then its own" \
	test "$(count ex)" = 0

# --- the same with a token: left, EXITED ---
mkdir run
PALLOC_RECORD_DIR=$here/run PALLOC_RUN_TOKEN=$token LD_PRELOAD=$PALLOC_AGENT \
	PALLOC_OUTPUT=$here/run.pb.gz alloc-exact none 2>run.err
set -- run/*.rec
check "token: the record is left" test $# -eq 1 -a -f "$1"
record-read "$1" >run.txt 2>&1
check "token: state exited" grep -qx 'state 1' run.txt

# --- the exit profile cannot be written: the record stays ---
mkdir failed
PALLOC_RECORD_DIR=$here/failed LD_PRELOAD=$PALLOC_AGENT \
	PALLOC_OUTPUT=$here/missing/x.pb.gz alloc-exact none 2>failed.err
check "failed profile: the record stays for palloc-dump" \
	test "$(count failed)" = 1

# --- SIGKILL: the record stays, state running ---
mkdir killed
PALLOC_RECORD_DIR=$here/killed LD_PRELOAD=$PALLOC_AGENT \
	PALLOC_OUTPUT=$here/killed.pb.gz alloc-exact sleep 3000 2>killed.err &
pid=$!
retry 100 0.05 sh -c "ls killed | grep -q '^$pid\\..*\\.rec\$'"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
set -- killed/"$pid".*.rec
check "SIGKILL: the record stays" test $# -eq 1 -a -f "$1"
kf=$1
record-read "$kf" >killed.txt 2>&1
check "SIGKILL: state running (it never exited)" grep -qx 'state 0' killed.txt
check "SIGKILL: no profile" test ! -e killed.pb.gz

# --- 40 dead records and a live one: the next start keeps 32 dead ---
mkdir prune
# dead by their pid (above any pid_max: kill(2) says ESRCH)
i=1
while [ $i -le 20 ]; do
	cp "$kf" "prune/$((2000000000 + i)).$i.rec"
	i=$((i + 1))
done
# dead by their state (EXITED), whatever their pid: our own shell's
while [ $i -le 40 ]; do
	cp run/*.rec "prune/$$.$i.rec"
	i=$((i + 1))
done
# live: a sleeping process's, oldest of all (its directory made first:
# the agent makes its record at start)
mkdir live
PALLOC_RECORD_DIR=$here/live LD_PRELOAD=$PALLOC_AGENT \
	PALLOC_OUTPUT=/dev/null alloc-exact sleep 3000 2>live.err &
lpid=$!
retry 100 0.05 sh -c "ls live | grep -q '\\.rec\$'"
cp live/*.rec "prune/$lpid.0.rec"
# a file that is not a record's name stays too
: >prune/notes.txt
check "prune: 41 records before" test "$(count prune)" = 41
PALLOC_RECORD_DIR=$here/prune LD_PRELOAD=$PALLOC_AGENT \
	PALLOC_OUTPUT=$here/prune.pb.gz alloc-exact none 2>prune.err
check "prune: 32 dead and the live one after the next start" \
	test "$(count prune)" = 33
gone=0
i=1
while [ $i -le 8 ]; do
	ls prune | grep -q "\\.$i\\.rec\$" && gone=1
	i=$((i + 1))
done
check "prune: the oldest 8 dead ones went" test $gone = 0
check "prune: the newest dead ones stayed" \
	test -f prune/2000000009.9.rec -a -f "prune/$$.40.rec"
check "prune: the live record stayed" test -f "prune/$lpid.0.rec"
check "prune: other files stay" test -f prune/notes.txt
kill "$lpid"
wait "$lpid" 2>/dev/null

# --- no writable directory: private memory, profile made all the same ---
PALLOC_RECORD_DIR=$here/nowhere LD_PRELOAD=$PALLOC_AGENT \
	PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=$here/priv.pb.gz alloc-exact basic \
	>ptruth.txt 2>priv.err
raw_values priv.pb.gz priv.vals
check "no directory: warned once, profile written from private memory" \
	sh -c "test \"\$(grep -c 'no record file (kept in memory)' priv.err)\" = 1 &&
		grep '^site' ptruth.txt | head -3 | while read -r _ _ a b c d; do
		grep -q \"^\$a \$b \$c \$d |\" priv.vals || exit 1; done"

done_testing
