#!/bin/sh
# SPDX-License-Identifier: MIT
# The page's growth between two moments is palloc-diff's: web/src/growth.js
# (node's test runner, web/test/growth.test.js) on the profiles inlined in
# a report, against palloc-diff --json on the same pairs: growth, its
# sampling noise, within noise or not, the growth beyond noise, the top
# function. Sampled (default rate: stddev labels) and exact (rate 1).
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-report.sh"
need_agent
need palloc-run palloc-report palloc-diff palloc-dump leaker node
plan 4

report_leaker_timeline s 8000000 4 &&
	report_leaker_timeline x 2000000 3 -r 1 &&
	[ -s s/p.3.pb.gz ] && [ -s x/p.2.pb.gz ] &&
	ok "timelines and interval profiles, sampled and exact" ||
	{ not_ok "timelines and interval profiles, sampled and exact"; diag "$(cat s/run.err x/run.err)"; }

palloc-report -q -o s.html s/tl.ndjson && palloc-report -q -o x.html x/tl.ndjson &&
	ok "the reports" || not_ok "the reports"

: >cases
for pair in s:p.1:p.3 s:p.2:p.3 s:p.1:p.peak s:p.3:p.1 s:p.2:p.2 x:p.1:p.2; do
	IFS=: read -r d a b <<EOP
$pair
EOP
	palloc-diff --json "$d/$a.pb.gz" "$d/$b.pb.gz" >"$d-$a-$b.json" 2>/dev/null
	echo "$d.html $a.pb.gz $b.pb.gz $d-$a-$b.json" >>cases
done
jq -e 'select(.growth_stddev_bytes > 0)' s-p.1-p.3.json >/dev/null &&
	jq -e 'select(.growth_stddev_bytes == 0)' x-p.1-p.2.json >/dev/null &&
	ok "palloc-diff: sampling noise in the sampled pair, none in the exact one" ||
	not_ok "palloc-diff: sampling noise in the sampled pair, none in the exact one"

PALLOC_GROWTH_CASES=$T/cases node --test \
	"$top_srcdir/web/test/growth.test.js" >node.out 2>&1 &&
	grep -q '^# pass 10$' node.out &&
	ok "growth.js agrees with palloc-diff on 6 pairs (and its 4 unit cases)" ||
	{ not_ok "growth.js agrees with palloc-diff on 6 pairs (and its 4 unit cases)"; diag "$(cat node.out)"; }
done_testing
