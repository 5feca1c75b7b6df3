#!/bin/sh
# SPDX-License-Identifier: MIT
# Two palloc profiles of the leaking example DIFF_LEAK_SECONDS apart
# (default 2; the "a minute apart" is DIFF_LEAK_SECONDS=60): the
# leaking function tops --top, --fail-on-growth 1MiB exits 1 naming it, a
# profile diffed with itself is empty and exits 0. The profiles come from
# the agent's interval dumps under palloc-run (symbolized by it), and from
# palloc-dump on the live process (its agent's control socket).
. "$top_srcdir/t/lib.sh"
need_agent
need jq palloc-diff palloc-run leaker
wait_s=${DIFF_LEAK_SECONDS:-2}
# About 3 MiB between two profiles whatever the wait: more than the gate.
rate=$((3145728 / wait_s))
plan 12

# check_pair LABEL T0 T1: the five checks on one pair of profiles.
check_pair() {
	_l=$1 _a=$2 _b=$3
	palloc-diff --top=5 "$_a" "$_b" >top.out 2>top.err &&
		sed -n 4p top.out | grep -q ' leak_some$' &&
		ok "$_l: leak_some tops --top" ||
		{ not_ok "$_l: leak_some tops --top"; diag "$(cat top.out top.err)"; }
	palloc-diff --json "$_a" "$_b" >d.json 2>/dev/null &&
		jqe '.functions[0].function == "leak_some" and
			.functions[0].flat_bytes >= 1048576 and
			.growth_bytes >= 1048576' d.json &&
		ok "$_l: leak_some grew by more than 1 MiB" ||
		not_ok "$_l: leak_some grew by more than 1 MiB"
	diag "$_l: growth $(jq -r .growth_bytes d.json) bytes in $wait_s s"
	expect_fail 1 palloc-diff --fail-on-growth 1MiB "$_a" "$_b" \
		>g.out 2>g.err && [ ! -s g.out ] &&
		grep -q "^palloc-diff: inuse_space grew by .* over the limit of 1048576 bytes" g.err &&
		grep -q "^palloc-diff:   +[0-9]* bytes: leak_some < " g.err &&
		ok "$_l: --fail-on-growth 1MiB exits 1 naming leak_some" ||
		{ not_ok "$_l: --fail-on-growth 1MiB exits 1 naming leak_some"; diag "$(cat g.err)"; }
	palloc-diff --fail-on-growth 1GiB "$_a" "$_b" 2>/dev/null &&
		ok "$_l: --fail-on-growth 1GiB exits 0" ||
		not_ok "$_l: --fail-on-growth 1GiB exits 0"
	palloc-diff --json --fail-on-growth 0 "$_b" "$_b" >self.json 2>self.err &&
		jqe '.functions == [] and .changed_stack_count == 0 and
			.growth_bytes == 0' self.json && [ ! -s self.err ] &&
		ok "$_l: a profile diffed with itself is empty, exit 0" ||
		not_ok "$_l: a profile diffed with itself is empty, exit 0"
}

# 1-6: interval dumps 1 and 2, wait_s apart, symbolized by palloc-run.
palloc-run -q -r 1 -i "$wait_s" -o "$T/p.%n.pb.gz" -- \
	leaker --rate $rate --chunk 4096 --seconds $((wait_s * 2 + 1)) \
	>run.out 2>run.err && [ -s p.1.pb.gz ] && [ -s p.2.pb.gz ] &&
	ok "palloc-run -i $wait_s: interval profiles" ||
	{ not_ok "palloc-run -i $wait_s: interval profiles"; diag "$(cat run.err)"; }
check_pair interval p.1.pb.gz p.2.pb.gz

# 7-12: the same from the live process, when its agent answers.
LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=$T/exit.%p.pb.gz \
	leaker --rate $rate --chunk 4096 --seconds $((wait_s + 60)) \
	>leaker.out 2>&1 &
pid=$!
# The agent writes its exit profile into $T: wait before removing it.
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; cleanup_tmp' EXIT
# fetch FILE: the socket appears shortly after start; fetch.err says why not.
fetch_once() { palloc-dump -o "$1" $pid 2>fetch.err; }
fetch() { retry 50 0.2 fetch_once "$1"; }
if ! command -v palloc-dump >/dev/null 2>&1; then
	for i in 1 2 3 4 5 6; do skip "palloc-dump not built"; done
elif ! fetch t0.pb.gz; then
	not_ok "palloc-dump: first profile: $(cat fetch.err)"
	for i in 2 3 4 5 6; do not_ok "live: no first profile"; done
else
	sleep "$wait_s"
	fetch t1.pb.gz && ok "palloc-dump: two profiles $wait_s s apart" ||
		not_ok "palloc-dump: two profiles $wait_s s apart: $(cat fetch.err)"
	check_pair live t0.pb.gz t1.pb.gz
fi
kill $pid 2>/dev/null
wait $pid 2>/dev/null
done_testing
