#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/recursion, built -O2 -fomit-frame-pointer (no frame pointers,
# like Debian's binaries), 60 frames of descend() above leaf_alloc():
# with PALLOC_UNWIND=auto (the default) and dwarf, at least 99% of the
# sampled allocations' stacks reach main, through all 60 descend frames;
# what fp gives on this binary is recorded as diagnostics (documented in
# libcore/agent/unwind.h and bench/unwind/README.md: it cannot follow frames
# without frame pointers).
#
# "Sampled stacks" are weighted by sampled allocations: at rate 1 each of
# the 1000 allocations is one walk (pprof merges identical stacks, so a
# profile with one failed walk has two stacks, weighted 999 and 1); at the
# default rate each sample of the 64 KiB blocks stands for the same
# weight, so the alloc_objects share is the share of walks.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-examples.sh"
example recursion
plan 9


# profile_of DIR UNWIND RATE ARGS...: run recursion in DIR, leave DIR/raw.txt
profile_of() {
	_dir=$1 _unwind=$2 _rate=$3
	shift 3
	mkdir "$_dir" && (
		cd "$_dir" &&
			LD_PRELOAD=$PALLOC_AGENT PALLOC_UNWIND=$_unwind \
				PALLOC_SAMPLE_RATE=$_rate "$exe" "$@" \
				>run.out 2>run.err &&
			set -- palloc.recursion.*.pb.gz && [ $# -eq 1 ] &&
			pprof -raw "$1" >raw.txt 2>raw.err &&
			truth_awk stacks -v target=main -v count=descend \
				raw.txt >stacks.txt
	)
}

# summary DIR: "walks W reaching_main M full F" over the samples whose leaf
# is leaf_alloc: W their alloc_objects, M of those whose stack has main,
# F of those that have main and exactly 60 descend frames.
summary() {
	[ -f "$1/stacks.txt" ] || : >"$1/stacks.txt"
	awk '$5 == "leaf_alloc" {
		w += $1
		if ($3) m += $1
		if ($3 && $4 == 60) f += $1
	} END { printf "walks %d reaching_main %d full %d\n", w, m, f }' \
		"$1/stacks.txt"
}

# at_least_99 DIR LABEL: the test of one run
at_least_99() {
	set -- "$1" "$2" $(summary "$1")
	if [ "$4" -gt 0 ] && [ $(($6 * 100)) -ge $(($4 * 99)) ] &&
		[ $(($8 * 100)) -ge $(($4 * 99)) ]; then
		ok "$2: stacks of $6 of $4 sampled allocations reach main, $8 through all 60 descend frames"
	else
		not_ok "$2: stacks of $6 of $4 sampled allocations reach main, $8 through all 60 descend frames (want >= 99%)"
		head -5 "$1/stacks.txt" "$1/run.err" | sed 's/^/# /'
	fi
}

for u in auto dwarf; do
	if profile_of "$u-1" $u 1; then
		ok "$u, rate 1: profile read by go tool pprof"
	else
		not_ok "$u, rate 1: profile read by go tool pprof"
		tail -5 "$u-1/run.err" "$u-1/raw.err" 2>/dev/null | sed 's/^/# /'
	fi
	at_least_99 "$u-1" "$u, rate 1"
done

if profile_of auto-dflt auto 524288 --count 2000 --size 65536; then
	ok "auto, default rate, 2000 blocks of 64 KiB: profile read"
else
	not_ok "auto, default rate, 2000 blocks of 64 KiB: profile read"
fi
at_least_99 auto-dflt "auto, default rate"

# The unwinder the agent says it used: pprof -raw shows the comments.
check "the profile records its unwinder (auto)" \
	grep -q 'unwinder: auto' auto-1/raw.txt

# The same through palloc-run, whose profile carries the names from
# palloc's own symbolizer (nm is not used: exe is cleared).
if command -v palloc-run >/dev/null 2>&1; then
	mkdir run && (
		cd run &&
			palloc-run -q --unwind auto -r 1 -o rec.pb.gz -- "$exe" \
				>run.out 2>run.err &&
			pprof -raw rec.pb.gz >raw.txt 2>raw.err &&
			truth_awk stacks -v exe= -v target=main -v count=descend \
				raw.txt >stacks.txt
	)
	at_least_99 run "palloc-run --unwind auto -r 1 (symbolized by palloc)"
else
	skip "palloc-run not built"
fi

# fp: recorded, not asserted beyond a valid profile: on this binary a frame-
# pointer walk cannot follow a frame without a frame pointer. The agent is
# built with frame pointers, so the walk gets through its hook frames to
# leaf_alloc (the caller of malloc), then reads leaf_alloc's rbp, which is
# not a frame pointer: the walk stops (0 here, from _start), or jumps to
# the nearest caller that keeps one, skipping all 60 descend frames.
if profile_of fp-1 fp 1; then
	ok "fp, rate 1: profile read by go tool pprof"
else
	not_ok "fp, rate 1: profile read by go tool pprof"
fi
set -- $(summary fp-1)
diag "fp on -O2 -fomit-frame-pointer: $4 of $2 sampled stacks at leaf_alloc reach main ($6 through all 60 descend frames)"
diag "fp stacks (alloc_objects frames reaches_main descend_frames leaf):"
diag "$(sort -rn fp-1/stacks.txt | head -5)"
diag "auto stacks (alloc_objects frames reaches_main descend_frames leaf):"
diag "$(sort -rn auto-1/stacks.txt | head -5)"
done_testing
