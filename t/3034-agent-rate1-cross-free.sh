#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 15 target 1: at PALLOC_SAMPLE_RATE=1 the live blocks are split into
# shards by address, each under its own lock, and the weights change in a
# separate short section (libcore/agent/stacktab.h, "Threads"). Four
# threads that share their stacks free each other's blocks while they
# allocate and free their own (t/helper/cross-free.c); every site's six
# values (PALLOC_PEAK=1) must be exact, the peak included, in each of 5
# runs.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

runs=5
plan $((runs + 4))

exe=$(command -v cross-free)
nm -S --defined-only "$exe" >nm.txt
bad=0
for r in $(seq 1 $runs); do
	rm -f p.*.pb.gz
	LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_PEAK=1 \
		PALLOC_OUTPUT=p.%p.pb.gz cross-free >truth.txt 2>err.txt
	rc=$?
	p=$(one_profile 'p.[0-9]*[0-9].pb.gz')
	if [ $rc -ne 0 ] || [ -z "$p" ] || [ -s err.txt ]; then
		not_ok "run $r: exit $rc, profile '$p', stderr: $(head -c 300 err.txt)"
		bad=$((bad + 1))
		continue
	fi
	pprof -raw "$p" >raw.txt 2>raw.err
	awk -f "$top_srcdir/t/helper/truth.awk" -v mode=leaf -v values=6 \
		-v exe="$exe" -v nmfile=nm.txt raw.txt >leaf.txt
	miss=
	while read -r _site name want; do
		name=${name%:}
		got=$(awk -v s="$name" '$1 == s { $1 = ""; sub(/^ /, ""); print }' \
			leaf.txt)
		[ "$got" = "$want" ] || miss="$miss $name: want $want, got '$got';"
	done <truth.txt
	if [ -z "$miss" ]; then
		ok "run $r: every site exact (4 sites, 6 values)"
	else
		not_ok "run $r:$miss"
		bad=$((bad + 1))
	fi
done
check "the truth names 4 sites" [ "$(grep -c '^site ' truth.txt)" -eq 4 ]
check "xf_alloc's 80000 blocks, freed by other threads: inuse 0" \
	grep -q '^site xf_alloc: 80000 [0-9]* 0 0 0 0$' truth.txt
comments "$p" c.txt
diag "$(grep -i 'sampled' c.txt | head -2)"
check "every sample kept" grep -q 'dropped samples: 0,' c.txt
check "no run with a wrong site ($bad of $runs)" [ "$bad" -eq 0 ]
done_testing
