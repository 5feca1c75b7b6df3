#!/bin/sh
# SPDX-License-Identifier: MIT
# At PALLOC_SAMPLE_RATE=1 the live blocks are split into
# shards by address, each under its own lock (libcore/agent/stacktab.h,
# "Threads"). With PALLOC_PEAK=1 the weights change in one short section
# under a lock; without it each thread changes records of its own that a
# profile sums, and a free of another thread's block subtracts in the
# freeing thread's record (hooks.c, "Weights per thread"). Four threads
# that share their stacks free each other's blocks while they allocate
# and free their own, then main frees more of them (t/helper/cross-free.c);
# every site's values must be exact in each of 5 runs per mode: six with
# the peak, four without. A quarter of xf_alloc's blocks stay live, so a
# free counted twice shows (inuse is never written below 0).
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

runs=5
plan $((2 * runs + 5))

exe=$(command -v cross-free)
nm -S --defined-only "$exe" >nm.txt
bad=0
for mode in peak per-thread; do
	if [ $mode = peak ]; then
		peak=1 values=6
	else
		peak=0 values=4
	fi
	for r in $(seq 1 $runs); do
		rm -f p.*.pb.gz
		LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 \
			PALLOC_PEAK=$peak PALLOC_OUTPUT=p.%p.pb.gz \
			cross-free >truth.txt 2>err.txt
		rc=$?
		p=$(one_profile 'p.[0-9]*[0-9].pb.gz')
		if [ $rc -ne 0 ] || [ -z "$p" ] || [ -s err.txt ]; then
			not_ok "$mode, run $r: exit $rc, profile '$p'," \
				"stderr: $(head -c 300 err.txt)"
			bad=$((bad + 1))
			continue
		fi
		pprof -raw "$p" >raw.txt 2>raw.err
		awk -f "$top_srcdir/t/helper/truth.awk" -v mode=leaf \
			-v values=$values -v exe="$exe" -v nmfile=nm.txt \
			raw.txt >leaf.txt
		miss=
		while read -r _site name want; do
			name=${name%:}
			want=$(echo "$want" | cut -d' ' -f1-$values)
			got=$(awk -v s="$name" \
				'$1 == s { $1 = ""; sub(/^ /, ""); print }' \
				leaf.txt)
			[ "$got" = "$want" ] ||
				miss="$miss $name: want $want, got '$got';"
		done <truth.txt
		if [ -z "$miss" ]; then
			ok "$mode, run $r: every site exact (4 sites, $values values)"
		else
			not_ok "$mode, run $r:$miss"
			bad=$((bad + 1))
		fi
	done
	comments "$p" c.txt
	diag "$mode: $(grep -i 'sampled' c.txt | head -2)"
	check "$mode: every sample kept" grep -q 'dropped samples: 0,' c.txt
done
check "the truth names 4 sites" [ "$(grep -c '^site ' truth.txt)" -eq 4 ]
check "xf_alloc's 80000 blocks, 60000 freed by other threads: inuse 20000" \
	grep -q '^site xf_alloc: 80000 [0-9]* 20000 [0-9]* 20000 ' truth.txt
check "no run with a wrong site ($bad of $((2 * runs)))" [ "$bad" -eq 0 ]
done_testing
