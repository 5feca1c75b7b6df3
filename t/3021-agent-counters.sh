#!/bin/sh
# SPDX-License-Identifier: MIT
# The exact counters (DESIGN: alloc_count, free_count, alloc_bytes on every
# call) do not depend on sampling. malloc's fast path keeps alloc_bytes as
# bytes_base - left (libcore/agent/agent_int.h), so a slip in that
# bookkeeping would move alloc_bytes by a sampling interval (hundreds of
# KiB at the default rate) and make it differ between rates and seeds.
# examples/truth is deterministic and single-threaded: its counters must be
# identical at rate 0, rate 1, the default rate under three seeds, and in
# exact mode, and alloc_bytes must exceed the printed truth by no more than
# libc's own allocations (stdio buffers: less than 64 KiB). examples/threads
# (4 threads that exit, folded into the sums) must do the same.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-examples.sh"
plan 24

# counters NAME ENV...: run the example set by example() with ENV, write
# "alloc_count free_count alloc_bytes" of its profile to NAME.cnt and the
# sum of the truth's alloc_space to NAME.truth.
counters() {
	_cn=$1
	shift
	mkdir "$_cn" && (cd "$_cn" && env LD_PRELOAD="$PALLOC_AGENT" "$@" \
		"$exe" $args --truth truth.txt >out.txt 2>err.txt) ||
		{ sed 's/^/# /' "$_cn/err.txt"; return 1; }
	set -- "$_cn"/palloc.*.pb.gz
	[ $# -eq 1 ] && [ -f "$1" ] || return 1
	pprof -raw "$1" 2>/dev/null | sed -n \
		's/^Comment: counters: alloc_count \([0-9]*\), free_count \([0-9]*\), alloc_bytes \([0-9]*\)$/\1 \2 \3/p' \
		>"$_cn.cnt"
	awk '!/^#/ && $2 !~ /^thread=/ { s += $4 } END { print s }' \
		"$_cn/truth.txt" >"$_cn.truth"
	[ -s "$_cn.cnt" ]
}

for ex in truth threads; do
	example "$ex"
	args=
	[ "$ex" = threads ] && args="--threads 4"
	i=0
	for mode in "PALLOC_SAMPLE_RATE=0" "PALLOC_SAMPLE_RATE=1" \
		"PALLOC_SEED=1" "PALLOC_SEED=2" "PALLOC_SEED=3" "PALLOC_EXACT=1"; do
		i=$((i + 1))
		check "$ex under $mode: profile with counters" \
			counters "$ex$i" "$mode"
	done
	read -r ac fc ab <"${ex}1.cnt"
	truth=$(cat "${ex}1.truth")
	diag "$ex: alloc_count $ac, free_count $fc, alloc_bytes $ab, truth $truth bytes"
	for j in 2 3 4 5 6; do
		if cmp -s "${ex}1.cnt" "$ex$j.cnt"; then
			ok "$ex: run $j's counters equal rate 0's"
		else
			not_ok "$ex: run $j's counters $(cat "$ex$j.cnt"), rate 0's $ac $fc $ab"
		fi
	done
	extra=$((ab - truth))
	if [ "$extra" -ge 0 ] && [ "$extra" -lt 65536 ]; then
		ok "$ex: alloc_bytes is the truth + $extra bytes of libc's"
	else
		not_ok "$ex: alloc_bytes $ab, truth $truth (difference $extra)"
	fi
done
done_testing
