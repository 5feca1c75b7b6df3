# SPDX-License-Identifier: MIT
# t/lib-report.sh: what palloc-report's tests share (after t/lib.sh).
#
#   report_leaker_timeline DIR RATE SECONDS [RUN OPTIONS...]
#       the leaking example under palloc-run (-i 1 --peak, profiles in DIR)
#       with a timeline DIR/tl.ndjson written around it by
#       t/helper/make-timeline.py (palloc-run --timeline's format)
#   need_chromium
#       skip the script unless Debian's chromium is installed
#   render HTML PREFIX
#       headless Chromium, the network blocked (every host resolves to
#       nothing, a proxy nobody listens on): PREFIX.dom (the DOM after the
#       scripts ran, without the scripts' text, so that a grep finds
#       what was rendered, not the code), PREFIX.png (a 1400x2200 screenshot), PREFIX.net (a
#       net log: every URL the browser asked for)
#   page_urls PREFIX
#       the URLs of PREFIX.net but those of Chromium's own services
#   no_urls PREFIX NAME
#       the check NAME that page_urls PREFIX is empty (the URLs in diag)
#   data_of HTML
#       the page's JSON document (the <script id="palloc-data"> element)

PY=/usr/bin/python3
MAKE_TL="$PY $top_srcdir/t/helper/make-timeline.py"

report_leaker_timeline() {
	_d=$1 _rate=$2 _sec=$3
	shift 3
	mkdir -p "$_d" &&
		$MAKE_TL run "$_d/tl.ndjson" "$_d" --truth truth.txt -- \
			palloc-run -q -i 1 --peak -o 'p.%n.pb.gz' "$@" -- \
			leaker --rate "$_rate" --chunk 4096 --seconds "$_sec" \
			--truth truth.txt >"$_d/run.out" 2>"$_d/run.err"
}

need_chromium() {
	CHROMIUM=
	for _c in chromium chromium-browser; do
		command -v "$_c" >/dev/null 2>&1 && CHROMIUM=$_c && break
	done
	[ -n "$CHROMIUM" ] ||
		skip_all "chromium not installed (bash .ci/deps test installs it)"
	[ -x "$PY" ] || skip_all "$PY not installed"
}

# The flags of every run: no sandbox (root in CI), no GPU, a profile of
# the test's own, no background services, and no network at all.
_chromium() {
	timeout -k 10 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--user-data-dir="$T/chromium" --no-first-run \
		--disable-extensions --disable-background-networking \
		--disable-component-update --disable-sync \
		--host-resolver-rules='MAP * ~NOTFOUND' \
		--proxy-server='http://127.0.0.1:9' \
		--virtual-time-budget=10000 "$@" 2>>"$T/chromium.err"
}

render() {
	_html=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
	rm -f "$2.dom" "$2.png" "$2.net"
	_chromium --log-net-log="$2.net" --dump-dom "file://$_html" \
		>"$2.dom" &&
		_chromium --window-size=1400,2200 --hide-scrollbars \
			--screenshot="$2.png" "file://$_html" >/dev/null &&
		[ -s "$2.dom" ] && [ -s "$2.png" ] &&
		$PY - "$2.dom" <<'PYEOF'
import re, sys
p = sys.argv[1]
s = open(p, encoding='utf-8', errors='replace').read()
s = re.sub(r'(<script[^>]*>).*?(</script>)', r'\1\2', s, flags=re.S)
open(p, 'w', encoding='utf-8').write(s)
PYEOF
}

page_urls() {
	grep -o '"url":"[^"]*"' "$1.net" | sed 's/^"url":"//; s/"$//' |
		grep -v -E '^https?://([a-z0-9.-]*\.)?(google\.com|googleapis\.com|gstatic\.com|gvt1\.com)/' |
		grep -v -E '^(file|data|about|chrome|blob):' | sort -u
}

no_urls() {
	_urls=$(page_urls "$1")
	if [ -z "$_urls" ]; then
		ok "$2"
	else
		not_ok "$2"
		diag "$_urls"
	fi
}

data_of() {
	$PY - "$1" <<'PYEOF'
import re, sys
s = open(sys.argv[1], encoding='utf-8').read()
m = re.search(r'<script type="application/json" id="palloc-data">(.*?)</script>', s, re.S)
sys.stdout.write(m.group(1) if m else '')
PYEOF
}
