#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-report's page rendered by headless Chromium, the network blocked:
# the leaking example's timeline and profiles (palloc-run, symbolized) make
# a page whose DOM names its sites, draws the timeline (uPlot's canvas) and
# the flame graphs (svg rects), whose screenshot is not blank, and that
# loads nothing from anywhere. With PALLOC_REPORT_SCREENSHOT=FILE the
# README's screenshot is written there (a 1000x1250 window).
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-report.sh"
need_agent
need palloc-run palloc-report palloc-dump leaker node
need_chromium
plan 13

report_leaker_timeline run 8000000 4 &&
	[ "$(grep -c '"type":"sample"' run/tl.ndjson)" -ge 10 ] &&
	grep -q '"kind":"exit"' run/tl.ndjson &&
	ok "a timeline of the leaking example with its profiles" ||
	{ not_ok "a timeline of the leaking example with its profiles"; diag "$(cat run/run.err)"; }

palloc-report run/tl.ndjson >rep.out 2>rep.err && [ ! -s rep.out ] &&
	[ -s run/tl.html ] &&
	grep -qx "palloc-report: wrote 'run/tl.html'" rep.err &&
	ok "palloc-report writes run/tl.html and says so on stderr" ||
	{ not_ok "palloc-report writes run/tl.html and says so on stderr"; diag "$(cat rep.err)"; }
diag "page: $(wc -c <run/tl.html) bytes"

# Nothing remote in the file: no src=, href= or url() to another host.
if grep -q -i -E "(src|href)[[:space:]]*=[[:space:]]*[\"']?(https?:)?//|url\([\"']?(https?:)?//|<link|<script[^>]*src" run/tl.html; then
	not_ok "no remote resource named in the page"
	grep -o -i -E ".{20}(src|href)[[:space:]]*=[[:space:]]*[\"']?(https?:)?//.{40}" run/tl.html | head -3 | sed 's/^/# /'
else
	ok "no remote resource named in the page"
fi

render run/tl.html page &&
	grep -q 'data-rendered="yes"' page.dom &&
	ok "chromium renders the page, its script runs to the end" ||
	{ not_ok "chromium renders the page, its script runs to the end"; diag "$(tail -5 chromium.err)"; }

# The sites of the example are named in the flame graphs.
n=$(grep -o '>leak_some<' page.dom | wc -l)
[ "$n" -ge 3 ] && grep -q '>main<' page.dom &&
	ok "the DOM names leak_some ($n times) and main" ||
	not_ok "the DOM names leak_some ($n times) and main"

# uPlot drew the timeline: its canvas, and the layers in its legend.
grep -q '<canvas' page.dom && grep -q 'class="uplot' page.dom &&
	grep -q 'u-label">heap in use<' page.dom &&
	grep -q 'u-label">other anonymous<' page.dom &&
	ok "the timeline is drawn (uPlot canvas, layers in the legend)" ||
	not_ok "the timeline is drawn (uPlot canvas, layers in the legend)"

# d3-flame-graph drew three graphs (peak, end, growth) of >= 5 frames,
# each frame a rect of some width.
svgs=$(grep -o '<svg[^>]*d3-flame-graph' page.dom | wc -l)
rects=$(grep -o '<rect[^>]*width="[1-9]' page.dom | wc -l)
[ "$svgs" -ge 3 ] && [ "$rects" -ge 15 ] &&
	ok "flame graphs drawn: $svgs svg, $rects rects" ||
	not_ok "flame graphs drawn: $svgs svg, $rects rects"

grep -q 'class="growth-summary">grew by ' page.dom &&
	grep -q '<h3>Resident memory at the end' page.dom &&
	ok "the growth between two moments and the waterfall are shown" ||
	not_ok "the growth between two moments and the waterfall are shown"

colours=$($PY "$top_srcdir/t/helper/png-colors.py" page.png)
[ "${colours#* }" -ge 50 ] &&
	ok "the screenshot is not blank ($colours colours)" ||
	not_ok "the screenshot is not blank ($colours colours)"

no_urls page "the page asked for no URL (net log)"

# The net log check can fail: a page that loads an image shows its URL.
printf '<html><body><img src="http://palloc-test.invalid/x.png"></body></html>\n' >remote.html
render remote.html remote
page_urls remote | grep -q '^http://palloc-test.invalid/x.png$' &&
	ok "control: a page with a remote image shows its URL in the net log" ||
	not_ok "control: a page with a remote image shows its URL in the net log"

# Several processes: a shell and two leakers, one section each, the
# largest resident set first.
mkdir -p multi &&
	$MAKE_TL run multi/tl.ndjson multi -- palloc-run -q -i 1 \
		-o 'p.%p.%n.pb.gz' -- sh -c 'leaker --rate 1000000 --seconds 3 &
			leaker --rate 8000000 --chunk 4096 --seconds 3; wait' \
		>multi/run.out 2>multi/run.err &&
	palloc-report multi/tl.ndjson 2>/dev/null && render multi/tl.html multi &&
	ok "a timeline of three processes, rendered" ||
	{ not_ok "a timeline of three processes, rendered"; diag "$(cat multi/run.err)"; }
peaks=$(grep -o '<section class="process" data-pid="[0-9]*" data-peak-rss="[0-9]*"' multi.dom |
	sed 's/.*data-peak-rss="//; s/"$//')
[ "$(echo "$peaks" | wc -l)" -ge 3 ] &&
	[ "$(echo "$peaks" | sort -n -r)" = "$peaks" ] &&
	[ "$(grep -o '<canvas' multi.dom | wc -l)" -ge 3 ] &&
	[ "$(grep -o '>leak_some<' multi.dom | wc -l)" -ge 2 ] &&
	ok "one section each, a chart each, largest first:" $peaks ||
	not_ok "one section each, a chart each, largest first:" $peaks

if [ -n "${PALLOC_REPORT_SCREENSHOT:-}" ]; then
	_chromium --window-size=1000,1250 --hide-scrollbars \
		--screenshot="$PALLOC_REPORT_SCREENSHOT" \
		"file://$T/run/tl.html" >/dev/null
	diag "screenshot: $PALLOC_REPORT_SCREENSHOT"
fi
done_testing
