#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/truth at the default sample rate, RUNS runs (default 6; the
# agent seeds its per-thread PRNG from pid, tid and time, so every run
# samples differently): the large sites' estimates fall within the Poisson
# error derived below, in every run and on average.
#
# Derivation. The agent samples by bytes: the sample points form a Poisson
# process of rate 1/R over the bytes each thread allocates (exponential
# gaps of mean R, redrawn after each sample, memoryless), so an allocation
# of s bytes is sampled with probability p = 1 - exp(-s/R), independently
# of every other allocation (disjoint byte ranges). A sampled allocation is
# weighted w = s/p bytes and 1/p objects, so for a site the estimate
# X = sum over its allocations of w * [sampled] has E[X] = sum s (unbiased)
# and Var[X] = sum w^2 p (1-p) = sum s^2 (1-p)/p (objects: sum (1-p)/p).
# inuse sums the same over the allocations still live at exit (which ones
# are freed does not depend on sampling). The '#size' lines of the truth
# give, per site and size, how many allocations were made and are live.
#
# Which comparisons are sound. X is a sum of independent, bounded terms;
# when the expected number of samples n = sum p is at least 20, X is close
# to normal and P(|X - E X| > 5 sigma) is below 1e-4 (exact simulation of
# these sites' distributions: at most 5e-5 in 20000 draws; normal: 6e-7).
# With fewer samples the distribution is skewed (one sampled 1 KiB block
# stands for R bytes): those sites are only reported, except when every
# allocation is at least 16 R bytes (p > 1 - 1.2e-7), where X is exact but
# for float rounding. A site freed entirely must show 0 in use exactly.
#
# Asserted, for each (site, type) selected so: in every run |X - T| <=
# 5 sigma + 16 (16: rounding of the weights), and over the RUNS runs the
# mean within 5 sigma / sqrt(RUNS) + 16. Ten such comparisons a run (and
# four exact zeros): a false alarm rate below 1e-2 for the whole script,
# while a bias of 5 sigma/sqrt(RUNS) (14% of churn_small's 120 MB at 6
# runs) fails it, and a missing weight (bytes counted as sampled, not
# estimated) is off by hundreds of sigma.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-examples.sh"
example truth
runs=${RUNS:-6}
plan $((runs + 3))

: >all.txt
ran=0
for r in $(seq 1 "$runs"); do
	mkdir "run$r" && cd "run$r" || exit 99
	LD_PRELOAD=$PALLOC_AGENT "$exe" --truth truth.txt >run.out 2>run.err
	rc=$?
	set -- palloc.truth.*.pb.gz
	if [ $rc -eq 0 ] && [ $# -eq 1 ] && [ -f "$1" ] &&
		pprof -raw "$1" >raw.txt 2>raw.err; then
		ok "run $r: exit 0, one profile read by go tool pprof"
		ran=$((ran + 1))
	else
		not_ok "run $r: exit $rc, profiles: $*"
		sed 's/^/# /' run.err raw.err 2>/dev/null | tail -5
	fi
	truth_awk leaf raw.txt >got.txt 2>/dev/null
	period=$(sed -n 's/^Period: //p' raw.txt)
	# "run period site type truth estimate", then the #size lines
	awk -v r="$r" -v period="$period" '
		FNR == NR { got[$1] = $2 " " $3 " " $4 " " $5; next }
		/^#size / { print "size", $3, $4, $5, $6; next }
		/^#/ { next }
		{
			split(got[$2], g, " ")
			print "est", r, period, $2, "alloc_objects", $3, g[1] + 0
			print "est", r, period, $2, "alloc_space", $4, g[2] + 0
			print "est", r, period, $2, "inuse_objects", $5, g[3] + 0
			print "est", r, period, $2, "inuse_space", $6, g[4] + 0
		}' got.txt truth.txt >>../all.txt
	cd .. || exit 99
done

period=$(awk '$1 == "est" { print $3; exit }' all.txt)
check "the profiles' period is the default rate, 524288 (got '$period')" \
	[ "$period" = 524288 ]

# sigma, expected samples and the verdict per (site, type) and run.
awk -v runs="$ran" -v R="${period:-524288}" '
	$1 == "size" && !(($2, $3) in seen_size) {
		seen_size[$2, $3] = 1
		p = 1 - exp(-$3 / R)
		for (t = 1; t <= 4; t++) {
			k = (t <= 2) ? $4 : $5
			w = (t % 2 == 0) ? $3 / p : 1 / p
			var[$2, t] += k * w * w * p * (1 - p)
			n[$2, t] += k * p
			if (k > 0 && $3 < 16 * R)
				small[$2, t] = 1
		}
		next
	}
	$1 == "est" {
		t = ($5 == "alloc_objects") ? 1 : ($5 == "alloc_space") ? 2 : \
			($5 == "inuse_objects") ? 3 : 4
		key = $4 SUBSEP t
		if (!(key in truth)) {
			order[++nk] = key
			name[key] = $4 " " $5
		}
		truth[key] = $6
		sum[key] += $7
		est[key, $2] = $7
		nrun[key]++
	}
	END {
		for (i = 1; i <= nk; i++) {
			key = order[i]
			T = truth[key]
			sd = sqrt(var[key])
			if (T == 0) {
				sel = "exact0"
			} else if (n[key] >= 20) {
				sel = "normal"
			} else if (!(key in small)) {
				sel = "large"
			} else {
				sel = "report"
			}
			line = sprintf("%s truth %d sigma %.0f samples %.1f [%s]:",
				       name[key], T, sd, n[key], sel)
			bad = 0
			for (r = 1; r <= nrun[key]; r++) {
				X = est[key, r]
				z = sd > 0 ? (X - T) / sd : 0
				line = line sprintf(" %+.1f", z)
				if (sel == "exact0" && X != 0)
					bad++
				if ((sel == "normal" || sel == "large") &&
				    (X - T > 5 * sd + 16 || T - X > 5 * sd + 16))
					bad++
			}
			m = sum[key] / nrun[key]
			if ((sel == "normal" || sel == "large") &&
			    (m - T > 5 * sd / sqrt(nrun[key]) + 16 ||
			     T - m > 5 * sd / sqrt(nrun[key]) + 16))
				bad++
			line = line sprintf(" mean %+.2f", sd > 0 ? (m - T) / sd : 0)
			print (bad ? "FAIL " : (sel == "report" ? "info " : "pass ")) line
		}
	}' all.txt >verdict.txt
diag "per site and type: truth, sigma, expected samples, [selection], z of each run, z of the mean:"
diag "$(cat verdict.txt)"
checked=$(grep -c '^pass' verdict.txt)
failed=$(grep -c '^FAIL' verdict.txt)
if [ "$ran" -eq "$runs" ] && [ "$failed" -eq 0 ] && [ "$checked" -ge 10 ]; then
	ok "$checked site estimates within 5 sigma in each of $ran runs and on average"
else
	not_ok "site estimates: $failed out of bounds, $checked within, $ran runs"
fi
check "churn_small, keep_medium, large_blocks are among those checked" \
	[ "$(grep -Ec '^pass (churn_small alloc_space|keep_medium inuse_space|large_blocks inuse_space) ' verdict.txt)" -eq 3 ]
done_testing
