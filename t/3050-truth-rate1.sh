#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/truth at PALLOC_SAMPLE_RATE=1 (every allocation sampled, weight
# exactly 1 object and its size): each named function's alloc_objects,
# alloc_space, inuse_objects and inuse_space, read back with go tool pprof
# -raw, equal the truth the program printed, exactly.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-examples.sh"
example truth
plan 12

LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 "$exe" --truth truth.txt \
	>run.out 2>run.err
rc=$?
if [ $rc -eq 0 ]; then ok "truth exits 0"; else
	not_ok "truth exits 0 (got $rc)"
	sed 's/^/# /' run.err
fi

set -- palloc.truth.*.pb.gz
if [ $# -eq 1 ] && [ -f "$1" ]; then ok "one profile: $1"; else
	not_ok "one profile (got: $*)"
fi
prof=$1

pprof -raw "$prof" >raw.txt 2>raw.err
if grep -q '^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes' raw.txt; then
	ok "go tool pprof reads it: the four sample types in Go's order"
else
	not_ok "go tool pprof reads it: the four sample types in Go's order"
	head -20 raw.txt raw.err | sed 's/^/# /'
fi
check "period 1 (every allocation)" grep -qx 'Period: 1' raw.txt

# Per leaf function, from the samples and locations pprof printed; nm
# names the locations pprof's own symbolizer left unnamed (see truth.awk).
truth_awk leaf raw.txt >got.txt

# Each truth line: pid site alloc_objects alloc_space inuse_objects inuse_space
grep -v '^#' truth.txt >want.txt
[ "$(wc -l <want.txt)" -eq 7 ] || diag "truth.txt has $(wc -l <want.txt) sites, expected 7"
while read -r _pid site ao as io is; do
	got=$(awk -v s="$site" '$1 == s { print $2, $3, $4, $5 }' got.txt)
	if [ "$got" = "$ao $as $io $is" ]; then
		ok "$site: $ao objects, $as bytes allocated; $io, $is in use"
	else
		not_ok "$site: want $ao $as $io $is, got '${got:-nothing}'"
	fi
done <want.txt
# The same through palloc-run --sample-rate 1, whose profile carries the
# names from palloc's own symbolizer (nm is not used: exe is cleared).
if command -v palloc-run >/dev/null 2>&1; then
	mkdir run && (
		cd run &&
			palloc-run -q --sample-rate 1 -o truth.pb.gz -- "$exe" \
				--truth truth.txt >run.out 2>run.err &&
			pprof -raw truth.pb.gz >raw.txt 2>raw.err &&
			truth_awk leaf -v exe= raw.txt >got.txt
	)
	grep -v '^#' run/truth.txt | cut -d' ' -f2- | sort >run/want.txt
	sort run/got.txt | join - run/want.txt | awk '{ print $1, $2, $3, $4, $5 }' >run/match.txt
	if [ -s run/want.txt ] && cmp -s run/want.txt run/match.txt; then
		ok "palloc-run --sample-rate 1 (symbolized by palloc): all 7 sites exact"
	else
		not_ok "palloc-run --sample-rate 1 (symbolized by palloc): all 7 sites exact"
		diff -u run/want.txt run/match.txt | sed 's/^/# /'
		sed 's/^/# /' run/run.err | tail -5
	fi
else
	skip "palloc-run not built"
fi

diag "all leaf functions in the profile (alloc_objects alloc_space inuse_objects inuse_space):"
diag "$(cat got.txt)"
done_testing
