#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent's "dropped samples" comment read back (pprof/pprof_comments.c):
# palloc-dump on a file or a live process and palloc-diff warn, in one line on stderr, as
# palloc-run's summary line says it ("N samples dropped, about B (stack
# table full or out of memory)"); nothing when none were dropped, when the
# comment does not read so, or with palloc-diff -q. Agents before the
# bytes were counted wrote no ", about B bytes": the warning has no
# "about". t/3060 checks the same text against palloc-run's line.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need palloc-dump palloc-diff diff-mkprof
plan 9

cap='(stack table full at 65536 stacks, or out of memory)'
mk() { # mk OUT [COMMENT]: a one-sample profile, with COMMENT
	{
		[ -z "${2:-}" ] || echo "comment $2"
		echo 'sample 1 100 1 100 ; 0x1000=leak@app.c:12 0x1100=main@app.c:40'
	} | diff-mkprof "$1" || exit 99
}
mk none.pb.gz
mk zero.pb.gz "sampled allocations: 40; dropped samples: 0, about 0 bytes allocated $cap"
mk drop.pb.gz "sampled allocations: 70000; dropped samples: 3, about 5000 bytes allocated $cap"
mk old.pb.gz "sampled allocations: 70000; dropped samples: 1 $cap"
mk junk.pb.gz "sampled allocations: 70000; dropped samples: x3, about 5000 bytes allocated"

want='3 samples dropped, about 4.9 KiB (stack table full or out of memory)'

palloc-dump -t drop.pb.gz >out 2>err
check "palloc-dump FILE: exit 0, the top table" [ $? -eq 0 -a -s out ]
check "palloc-dump FILE: one warning line with the dropped samples" \
	one_line err "palloc-dump: warning: drop.pb.gz: $want"

palloc-dump -t old.pb.gz >out 2>err
check "palloc-dump: an older agent's comment (no bytes): no 'about'" \
	one_line err "palloc-dump: warning: old.pb.gz: 1 sample dropped (stack table full or out of memory)"

for f in none zero junk; do
	palloc-dump -t $f.pb.gz >out 2>>quiet.err || echo "exit $?" >>quiet.err
done
check "palloc-dump: no warning without a comment, for 0 dropped, or a comment that does not read so" \
	[ ! -s quiet.err ]

palloc-diff none.pb.gz drop.pb.gz >out 2>err
rc=$?
check "palloc-diff BASE NEW: exit 0 or 1, the top table" [ $rc -le 1 -a -s out ]
check "palloc-diff: one warning line naming the profile that dropped" \
	one_line err "palloc-diff: warning: drop.pb.gz: $want"

palloc-diff drop.pb.gz old.pb.gz >out 2>err
check "palloc-diff: a line for each profile, base first" \
	[ "$(cat err)" = "palloc-diff: warning: drop.pb.gz: $want
palloc-diff: warning: old.pb.gz: 1 sample dropped (stack table full or out of memory)" ]

palloc-diff -q drop.pb.gz old.pb.gz >out 2>err
check "palloc-diff -q: no warning" [ ! -s err ]

palloc-diff zero.pb.gz none.pb.gz >out 2>err
check "palloc-diff: none dropped, no warning" [ ! -s err ]

done_testing
