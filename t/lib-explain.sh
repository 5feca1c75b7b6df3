# SPDX-License-Identifier: MIT
# t/lib-explain.sh: helpers for the palloc-explain tests (t/110N), after
# t/lib.sh. A workload (t/helper/explain-workload) runs with the agent,
# prints "truth PART BYTES" lines and "ready", and waits to be explained.

# start_workload LIB SCENARIO...: the workload with the agent (and LIB, an
# allocator preloaded after it, when not empty), exact counters on; sets
# $pid and writes its truth lines to truth.txt. Fails unless it got ready.
start_workload() {
	_lib=$1
	shift
	rm -f truth.txt
	PALLOC_EXACT=${EXACT-1} LD_PRELOAD="$PALLOC_AGENT${_lib:+ $_lib}" \
		explain-workload --seconds 300 "$@" >truth.txt 2>workload.err &
	pid=$!
	_i=0
	until grep -q '^ready$' truth.txt 2>/dev/null || [ $_i -ge 600 ]; do
		kill -0 $pid 2>/dev/null || break
		sleep 0.2
		_i=$((_i + 1))
	done
	grep -q '^ready$' truth.txt
}
stop_workload() {
	[ -n "${pid:-}" ] && kill $pid 2>/dev/null && wait $pid 2>/dev/null
	pid=
}

# part NAME FILE: the bytes of part NAME in palloc-explain's JSON FILE.
part() { jq -r --arg n "$1" '.parts[] | select(.name == $n) | .bytes' "$2"; }

# check_truth TAG FILE: one test per part with a truth in truth.txt, passing when
# the part is within 5 % of the truth (a remainder: and of the allocator's
# metadata); then one test that the parts and
# unexplained add up to Rss, and one that |unexplained| <= 5 % of Rss.
check_truth() {
	_rss=$(jq .rss_bytes "$2")
	# Scenarios run together add up their truths per part.
	awk '$1 == "truth" { s[$2] += $3 } END { for (k in s) print "truth", k, s[k] }' \
		truth.txt | sort >truth.sum
	while read -r _t _name _want; do
		[ "$_t" = truth ] || continue
		_got=$(part "$_name" "$2")
		diag "$1: $_name $_got, truth $_want ($(awk -v g="$_got" \
			-v w="$_want" 'BEGIN { printf "%+.2f%%", 100 * (g - w) / w }'))"
		# A part computed as what is left of the anonymous memory
		# (basis "remainder") also carries the error of the allocator's
		# metadata figure, reconciled but not measured (jemalloc counts
		# its metadata mapped, touched or not: 2.6 MiB at start).
		_slack=$(jq --arg n "$_name" '[.parts[] | select(.name == $n
			and .basis == "remainder")] as $r | if ($r | length) > 0
			then ([.parts[] | select(.name == "allocator_metadata")
			| .bytes // 0] | add // 0) else 0 end' "$2")
		check "$1: $_name within 5% of the truth" \
			awk -v g="$_got" -v w="$_want" -v k="$_slack" \
			'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && g != "null" && d <= 0.05 * w + k) }'
	done <truth.sum
	_un=$(jq .unexplained_bytes "$2")
	diag "$1: Rss $_rss, unexplained $_un ($(awk -v u="$_un" -v r="$_rss" \
		'BEGIN { printf "%+.2f%%", 100 * u / r }'))"
	check "$1: parts + unexplained = Rss" jqe \
		'([.parts[].bytes // 0] | add) + .unexplained_bytes == .rss_bytes' "$2"
	check "$1: |unexplained| <= 5% of Rss" awk -v u="$_un" -v r="$_rss" \
		'BEGIN { if (u < 0) u = -u; exit !(u <= 0.05 * r) }'
}

# explain_scenario TAG LIB SCENARIO...: start, palloc-explain --json into
# TAG.json, check_truth, stop. (2 + truth lines tests, or 1 on failure.)
explain_scenario() {
	_tag=$1 _l=$2
	shift 2
	if ! start_workload "$_l" "$@"; then
		not_ok "$_tag: workload ready"
		sed 's/^/# /' workload.err
		stop_workload
		return
	fi
	palloc-explain --json $pid >"$_tag.json" 2>"$_tag.err"
	check "$_tag: palloc-explain exits 0" test $? -eq 0
	check_truth "$_tag" "$_tag.json"
	stop_workload
}
