#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run -p PID a second time, after a detach: the loaded
# agent is reused (one copy mapped), each attach's profile covers its own
# window only (the second leaves out the first's samples and says so,
# while the record, read by palloc-dump, continues), each palloc-run numbers
# its profiles from 1 (%n), the second attach's -r applies (rate 524288
# -> 4096, seen in the record), and a change to or from rate 1 is refused
# with one line saying why and 125, the process untouched.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-attach.sh"
need attach-target

plan 17

rate() { palloc-dump --stats "$tp" 2>/dev/null | awk '$1 == "sample_rate" { print $2 }'; }

# ---- rate 1, twice; then another rate refused ----
start_target attach-target
attach_start "$tp" a.err -r 1 -o 'a.%n.pb.gz'
say "alloc 7 1000" "allocated 7" >/dev/null
attach_stop
check "first attach (rate 1): 7 objects" \
	grep -q '^palloc-run: wrote a\.1\.pb\.gz: alloc 6\.8 KiB in 7 objects, ' a.err
check "second attach" attach_start "$tp" b.err -r 1 -o 'b.%n.pb.gz'
check "the loaded agent reused: one copy mapped" \
	test "$(grep 'libpalloc\.so' "/proc/$tp/maps" | awk '{ print $6 }' | sort -u | wc -l)" -eq 1
say "alloc 3 40" "allocated 3" >/dev/null
attach_stop
check "second detach: status 0" test "$rc" -eq 0
sed 's/^/# /' b.err
check "the second profile: its window only, 3 objects, %n from 1 again" \
	grep -q '^palloc-run: wrote b\.1\.pb\.gz: alloc 120 B in 3 objects, inuse 120 B in 3 objects, ' b.err
check "the second profile names its window" \
	sh -c "gzip -dc b.1.pb.gz | grep -aq 'this attach only: from unix time'"
check "the record continues: palloc-dump sees 10 allocations" \
	sh -c "palloc-dump --stats $tp 2>/dev/null |
		awk '\$1 == \"alloc_count\" && \$2 >= 10 { ok = 1 } END { exit !ok }'"

timeout_run 60 palloc-run -p "$tp" -r 4096 -o /dev/null 2>c.err
check "-r 4096 after rate 1: 125" test $? -eq 125
check "-r 4096 after rate 1: one line" one_line c.err \
	"palloc-run: cannot attach to process '$tp': the agent an earlier attach loaded samples at rate 1: -r 4096 cannot change it (at rate 1 it keeps every thread's exact counts in whole numbers, set up at its start)"
check "refused: not traced, its rate still 1, answering" \
	sh -c "[ \"\$(awk '/^TracerPid:/ { print \$2 }' /proc/$tp/status)\" = 0 ] &&
		[ \"\$(palloc-dump --stats $tp 2>/dev/null | awk '\$1 == \"sample_rate\" { print \$2 }')\" = 1 ]" &&
	say "alloc 1 10" "allocated 1"
echo quit >&3
exec 3>&-
retry 300 0.1 ended "$tp"
wait "$tp"
check "exit status 0" test $? -eq 0

# ---- the default rate, then -r 4096 ----
start_target attach-target
attach_start "$tp" d.err -o /dev/null
r1=$(rate)
attach_stop
check "first attach at the default rate (524288)" test "$r1" = 524288
check "second attach with -r 4096" attach_start "$tp" e.err -r 4096 -o /dev/null
r2=$(rate)
attach_stop
check "the second attach's rate applies: 4096" test "$r2" = 4096
timeout_run 60 palloc-run -p "$tp" -r 1 -o /dev/null 2>f.err
check "-r 1 after rate 4096: 125" test $? -eq 125
check "-r 1 after rate 4096: one line saying why" one_line f.err \
	"palloc-run: cannot attach to process '$tp': the agent an earlier attach loaded samples at rate 4096: -r 1 cannot change it (each thread's countdown to its next sample, drawn at rate 4096, cannot be reset from outside that thread: rate 1 would miss allocations)"
echo quit >&3
exec 3>&-
retry 300 0.1 ended "$tp"
wait "$tp"
check "the program exits 0 after both" test $? -eq 0

done_testing
