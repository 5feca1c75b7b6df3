#!/bin/sh
# SPDX-License-Identifier: MIT
# A hostile profile cannot break out of palloc-report's page: symbol names
# and paths that try to end the data's <script> element, open a comment
# or inject markup are \u escapes in the file, and in the browser they are
# text (the page's title is not changed by an injected script, the names
# show as written).
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-report.sh"
need palloc-report diff-mkprof jq
plan 5

evil='</script><script>document.title="pwned"</script>'
diff-mkprof evil.pb.gz <<P || exit 99
comment pid: 7
sample 1 4096 1 4096 ; 0x1000=${evil}@x.c:1 0x1100=<!--<script>@x.c:2 0x1200=main&amp;<b>@x.c:3
P
printf '{"type":"sample","time_ns":1000000000,"pid":7,"heap_inuse_bytes":4096,"rss_bytes":100000}\n{"type":"event","time_ns":1000000001,"pid":7,"event":"profile","path":"evil.pb.gz","kind":"exit","note":"</script><b>x</b>"}\n' >tl.ndjson

palloc-report -o page.html tl.ndjson 2>err && ok "the report is written" ||
	{ not_ok "the report is written"; diag "$(cat err)"; }
n=$(grep -c -i '</script' page.html)
# the page's own: the data, the libraries, the page's script
[ "$n" -eq 3 ] && ! grep -q 'pwned"</script' page.html &&
	! grep -q '<!--<script>' page.html && ! grep -q '<b>' page.html &&
	ok "no '</script', '<!--' or markup of the profile in the file" ||
	not_ok "no '</script', '<!--' or markup of the profile in the file ($n </script)"
data_of page.html | jq -e --arg e "$evil" \
	'[.frames[][0]] | index($e) != null and index("<!--<script>") != null' \
	>/dev/null &&
	ok "the names are in the data as they were (\\u escapes)" ||
	not_ok "the names are in the data as they were (\\u escapes)"

if ! command -v chromium >/dev/null 2>&1 || [ ! -x "$PY" ]; then
	skip "chromium not installed"
	skip "chromium not installed"
	done_testing
fi
need_chromium
render page.html page &&
	grep -q 'data-rendered="yes"' page.dom &&
	grep -q '<title>palloc-report</title>' page.dom &&
	! grep -q '<b>' page.dom &&
	ok "in the browser: the page renders, no injected script ran" ||
	not_ok "in the browser: the page renders, no injected script ran"
grep -q '&lt;/script&gt;&lt;script&gt;document.title="pwned"&lt;/script&gt;' page.dom &&
	ok "the hostile name shows as text" || not_ok "the hostile name shows as text"
done_testing
