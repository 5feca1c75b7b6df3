#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent keeps its record (wire/record.h) as it runs: a 0600 file
# "PID.START.rec" in PALLOC_RECORD_DIR that t/helper/record-read maps
# read-only from outside. At rate 1 its stacks hold the exact truth of
# alloc-exact (the threads' records summed in, the exited ones folded),
# the header names the process, its exit and its allocator, the first
# module is the program; the target has no extra descriptor; a fork child
# writes its own record, never its parent's. Read after exit, as
# palloc-run would: with PALLOC_RUN_TOKEN set the agent leaves its record
# (t/3041 checks that LD_PRELOAD alone does not).
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent

plan 69
here=$PWD
PALLOC_RUN_TOKEN=00112233445566778899aabbccddeeff
export PALLOC_RUN_TOKEN

# field FILE KEY: the value of "KEY value" in record-read's output.
field() {
	sed -n "s/^$2 //p" "$1"
}

# --- one process, rate 1 ---
mkdir rec basic && cd basic || exit 99
PALLOC_RECORD_DIR=$here/rec LD_PRELOAD=$PALLOC_AGENT \
	PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=basic.pb.gz alloc-exact basic \
	>truth.txt 2>err.txt
check "alloc-exact basic runs" test $? -eq 0
check "no warning on stderr" test ! -s err.txt
set -- ../rec/*.rec
check "one record in PALLOC_RECORD_DIR" test $# -eq 1 -a -f "$1"
f=$1
name=${f##*/}
pid=${name%%.*}
check "named PID.START.rec" grep -qE '^[1-9][0-9]*\.[1-9][0-9]*\.rec$' <<EOF
$name
EOF
check "the record is 0600" test "$(stat -c %a "$f")" = 600
if record-read "$f" >r.txt 2>r.err; then
	ok "record-read accepts it"
else
	not_ok "record-read accepts it"
	sed 's/^/# /' r.err
fi
check "magic" grep -qx 'magic ok' r.txt
check "pid is the file's" test "$(field r.txt pid)" = "$pid"
check "no parent_pid" test "$(field r.txt parent_pid)" = 0
check "uid is ours" test "$(field r.txt uid)" = "$(id -u)"
check "state exited" test "$(field r.txt state)" = 1
check "exit status 0" test "$(field r.txt exit_status)" = 0
check "end time set" test "$(field r.txt end_set)" = 1
check "rate 1" test "$(field r.txt rate)" = 1
check "weights per thread (flags 4)" test "$(field r.txt flags)" = 4
check "exe is %e" test "$(field r.txt exe)" = alloc-exact
check "command line" grep -q '^cmdline .*alloc-exact basic$' r.txt
ticks=$(field r.txt start_ticks)
check "start_ticks set" test "${ticks:-0}" -gt 0
n=$(field r.txt n_stacks)
check "n_stacks is the STACK entries' count" \
	test "$n" = "$(field r.txt stack_entries)"
check "at least one stack per site" test "${n:-0}" -ge 14
check "seq even at exit" test $(($(field r.txt seq) % 2)) = 0
check "first module is the program" \
	sh -c "grep '^module ' r.txt | head -1 | grep -q '/alloc-exact load_gen 0 unload_gen 0$'"
check "the agent is a module" grep -q '^module .*/libpalloc.so' r.txt
check "one live thread at exit (main)" test "$(field r.txt threads_live)" = 1
check "its weight table is in the record" test "$(field r.txt recs_entries)" -ge 1
check "allocator snapshot taken" test "$(field r.txt allocator_time_set)" = 1
check "allocator is glibc, mallinfo2 read" \
	test "$(field r.txt allocator_kind)$(field r.txt allocator_uordblks_set)" = 11
check "malloc_info text entry" test "$(field r.txt text_entries)" = 1
check "alloc_count counted" test "$(field r.txt alloc_count)" -ge 40
check_sites truth.txt r.txt
cd .. || exit 99

# --- the default place: the user's directory (rundir.h) ---
mkdir -m 700 xdg
(
	unset PALLOC_RECORD_DIR
	XDG_RUNTIME_DIR=$here/xdg LD_PRELOAD=$PALLOC_AGENT \
		PALLOC_OUTPUT=/dev/null alloc-exact none 2>xdg.err
)
set -- xdg/palloc/*.rec
check "without PALLOC_RECORD_DIR: in \$XDG_RUNTIME_DIR/palloc, 0600" \
	test $# -eq 1 -a "$(stat -c %a "$1" 2>/dev/null)" = 600
check "... a 0700 directory" test "$(stat -c %a xdg/palloc)" = 700

# --- threads: their records summed while live, folded at their exit ---
mkdir rec-th th && cd th || exit 99
PALLOC_RECORD_DIR=$here/rec-th LD_PRELOAD=$PALLOC_AGENT \
	PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=th.pb.gz alloc-exact threads 4 \
	>truth.txt 2>err.txt
set -- ../rec-th/*.rec
record-read "$1" >r.txt 2>r.err
check "threads: record read" test -s r.txt -a ! -s r.err
check "threads: exited threads' slots free" \
	test "$(field r.txt threads_free)" -ge 1
check_sites truth.txt r.txt
cd .. || exit 99

# --- exit status through exit() ---
mkdir rec-st && cd rec-st || exit 99
PALLOC_RECORD_DIR=$PWD LD_PRELOAD=$PALLOC_AGENT PALLOC_OUTPUT=/dev/null \
	sh -c 'exit 3' 2>/dev/null
set -- ./*.rec
record-read "$1" >../st.txt 2>&1
cd .. || exit 99
check "exit(3): status 3 in the record" test "$(field st.txt exit_status)" = 3

# --- no descriptor left in the target ---
# fds_of DIR: start alloc-exact sleeping with its record in DIR (or none,
# DIR missing), print its descriptor count once the agent is up.
fds_of() {
	PALLOC_RECORD_DIR=$1 LD_PRELOAD=$PALLOC_AGENT PALLOC_OUTPUT=/dev/null \
		alloc-exact sleep 3000 2>"$2.err" &
	_pid=$!
	# The agent starts before main; /proc/PID/cmdline is the helper's
	# once exec is done.
	retry 100 0.05 grep -q alloc-exact "/proc/$_pid/cmdline"
	sleep 0.2 # nothing to poll: main has started sleeping
	ls "/proc/$_pid/fd" | wc -l >"$2.fds"
	grep -c '\.rec$' "/proc/$_pid/maps" >"$2.maps"
	kill "$_pid"
	wait "$_pid" 2>/dev/null
}
mkdir rec-fd
fds_of "$PWD/rec-fd" with
fds_of "$PWD/rec-missing" without
check "without a record the agent warns once" \
	test "$(grep -c 'no record' without.err)" = 1
check "with a record: no warning" test ! -s with.err
check "the record is mapped (/proc/PID/maps names it)" \
	test "$(cat with.maps)" -ge 1
check "no extra descriptor for the record" \
	test "$(cat with.fds)" = "$(cat without.fds)"

# --- fork: the child's own record ---
mkdir rec-fork fork && cd fork || exit 99
PALLOC_RECORD_DIR=$here/rec-fork LD_PRELOAD=$PALLOC_AGENT \
	PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=f.%p.pb.gz alloc-exact fork \
	>truth.txt 2>err.txt
ppid=$(sed -n 's/^parent //p' truth.txt)
cpid=$(sed -n 's/^child //p' truth.txt)
set -- ../rec-fork/*.rec
check "fork: two records" test $# -eq 2
pf=$(ls ../rec-fork/"$ppid".*.rec 2>/dev/null)
cf=$(ls ../rec-fork/"$cpid".*.rec 2>/dev/null)
check "fork: the parent's and the child's" test -f "$pf" -a -f "$cf"
record-read "$pf" >p.txt 2>&1
record-read "$cf" >c.txt 2>&1
check "fork: child's pid" test "$(field c.txt pid)" = "$cpid"
check "fork: child's parent_pid" test "$(field c.txt parent_pid)" = "$ppid"
check "fork: child flagged FORKED" test $(($(field c.txt flags) & 8)) = 8
check "fork: parent not flagged" test $(($(field p.txt flags) & 8)) = 0
check "fork: child exited 0" \
	test "$(field c.txt state) $(field c.txt exit_status)" = "1 0"
grep '^site parent' truth.txt >parent.txt
grep '^site child' truth.txt >child.txt
check_sites parent.txt p.txt
check_sites child.txt c.txt
check "fork: the child's allocations are not in the parent's record" \
	sh -c "! grep -q '^11 66077 11 66077 |' p.txt"
check "fork: the parent's are zero in the child's record" \
	sh -c "! grep -q '^9 54099 9 54099 |' c.txt"
check "fork: the child's record is 0600" test "$(stat -c %a "$cf")" = 600
cd .. || exit 99

# --- modules: loaded later, unloaded by dlclose (the gens of t/3018) ---
libs=$top_builddir/t/helper/.libs
mkdir rec-pl pl && cd pl || exit 99
PALLOC_RECORD_DIR=$here/rec-pl LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 \
	PALLOC_OUTPUT=pl.pb.gz plugin-host "$libs/libpluga.so" \
	"$libs/libplugb.so" close >pl.out 2>pl.err
rc=$?
if [ $rc -eq 0 ]; then
	record-read ../rec-pl/*.rec >r.txt 2>&1
	check "dlopen'ed A: a MODULE entry, unloaded at gen 1" \
		grep -q '^module .*/libpluga.so load_gen 0 unload_gen 1$' r.txt
	check "B where A was: loaded at gen 1, unloaded at gen 2" \
		grep -q '^module .*/libplugb.so load_gen 1 unload_gen 2$' r.txt
else
	skip "plugin-host exited $rc (B not loaded where A was?)"
	skip "plugin-host exited $rc"
fi
cd .. || exit 99

# --- a child that does not profile leaves its parent's record alone ---
mkdir rec-nf nf && cd nf || exit 99
PALLOC_RECORD_DIR=$here/rec-nf LD_PRELOAD=$PALLOC_AGENT \
	PALLOC_SAMPLE_RATE=1 PALLOC_FOLLOW_CHILDREN=0 PALLOC_OUTPUT=nf.pb.gz \
	alloc-exact fork >truth.txt 2>err.txt
set -- ../rec-nf/*.rec
check "no-follow fork: one record, the parent's" test $# -eq 1 -a -f "$1"
record-read "$1" >p.txt 2>&1
check "no-follow fork: the child wrote nothing into it" \
	sh -c "grep -q '^9 54099 9 54099 |' p.txt && ! grep -q '^11 66077 11 66077 |' p.txt"
cd .. || exit 99

done_testing
