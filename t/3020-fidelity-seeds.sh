#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/sizes at the default rate (524288) under 100
# fixed seeds (PALLOC_SEED=1..100, so `make check` is deterministic):
# every site holding at least 100 x the rate is within +-20 % of its true
# live bytes in at least 95 % of the runs, the total inuse within +-5 % in
# at least 95 %, and the 95 % intervals palloc-dump --json gives (from the
# per-sample inuse_space_stddev labels the agent writes) cover the truth
# in at least 93 % of the checks. Also: a seed reproduces its profile, and
# the labels leave the four sample types as they were.
#
# Where each bound comes from. The bounds (20 %, 5 %, 95 %, 93 %) are the
# issue's; the test derives from the sampling variance whether they must
# hold, and prints it. An allocation of s bytes is sampled with
# probability p = 1 - exp(-s/R), weighted w = s/p, independently of every
# other one, so a site's estimate has variance
#     sigma^2 = sum over its live blocks of s^2 (1 - p) / p
# (the '#size' lines of the truth give s and the live count). By the
# normal approximation (sums of >= 20 expected samples, see t/3051),
# P(|X - T| <= 0.2 T) = erf(0.2 T / (sigma sqrt 2)); the test prints it
# per site: for the held sites of examples/sizes it is above 99.5 %, so
# 95 of 100 runs is a bound with room (a 20 % bias or a lost weight makes
# nearly every run fail). Same for the total (+-5 %: above 99.9 %). The
# intervals are X +- 1.96 sigma_hat, sigma_hat^2 the sum of w (w - s) over
# the sampled blocks (an unbiased estimate of sigma^2): nominal 95 %
# coverage; the check pools the (site, run) pairs whose expected number
# of samples is at least 20 (fewer: sigma_hat is itself too noisy, e.g.
# size_8, 2 expected samples, whose interval is often [0, 0]) plus the
# total of each run, and 93 % is 2 binomial standard deviations (at
# n = 500 checks, sd = sqrt(0.05 * 0.95 / n) = 1 %) below the nominal 95 %.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-examples.sh"
need jq
example sizes
command -v palloc-dump >/dev/null || skip_all "palloc-dump not built"
runs=${RUNS:-100}
plan 8

# One run per seed: the truth, the profile's inuse_space per function with
# palloc-dump's 95 % intervals: "est seed site truth X sd low high".
: >all.txt
ran=0
for seed in $(seq 1 "$runs"); do
	rm -f palloc.sizes.*.pb.gz truth.txt
	PALLOC_SEED=$seed LD_PRELOAD=$PALLOC_AGENT "$exe" --truth truth.txt \
		>run.out 2>run.err || continue
	set -- palloc.sizes.*.pb.gz
	[ $# -eq 1 ] && [ -f "$1" ] || continue
	[ "$seed" = 1 ] && cp "$1" seed1.pb.gz
	palloc-dump --symbolize "$1" --json >dump.json 2>dump.err || continue
	jq -r '.top | "total \(.net_bytes) \(.net_stddev_bytes)",
		(.functions[] | "fn \(.function) \(.flat_bytes)" +
		 " \(.flat_stddev_bytes) \(.flat_ci95_low_bytes)" +
		 " \(.flat_ci95_high_bytes)")' dump.json >got.txt || continue
	awk -v seed="$seed" '
		FNR == NR { got[$2] = $3 " " $4 " " $5 " " $6
			if ($1 == "total") tot = $2 " " $3; next }
		/^#size / { if (seed == 1) print "size", $3, $4, $6; next }
		/^#/ { next }
		{ T += $6; print "est", seed, $2, $6, (got[$2] ? got[$2] : "0 null null null") }
		END { split(tot, t, " ")
			print "est", seed, "TOTAL", T, t[1], t[2],
			      (t[1] - 1.959963984540054 * t[2]),
			      (t[1] + 1.959963984540054 * t[2]) }
	' got.txt truth.txt >>all.txt
	ran=$((ran + 1))
done
check "$ran of $runs seeded runs gave a profile palloc-dump read" \
	[ "$ran" -eq "$runs" ]

# Reproducible: seed 1 again gives the same samples and labels.
rm -f palloc.sizes.*.pb.gz
PALLOC_SEED=1 LD_PRELOAD=$PALLOC_AGENT "$exe" >/dev/null 2>&1
set -- palloc.sizes.*.pb.gz
pprof -raw seed1.pb.gz 2>/dev/null | sed -n '/^Samples:/,/^Locations/p' >a.raw
pprof -raw "$1" 2>/dev/null | sed -n '/^Samples:/,/^Locations/p' >b.raw
check "PALLOC_SEED=1 twice: identical samples and labels" \
	eval '[ -s a.raw ] && cmp -s a.raw b.raw'

# The labels, read by go tool pprof: the four sample types unchanged, and
# the sum of inuse_space_stddev^2 over the samples is palloc-dump's
# net_stddev_bytes^2 (variances add).
check "sample types are still the four, in Go's order" \
	grep -q '^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]$' a.raw
raw_sd=$(awk '{ while (match($0, /inuse_space_stddev:\[[0-9]+ bytes\]/)) {
		v = substr($0, RSTART + 20, RLENGTH - 27); s += v * v
		$0 = substr($0, RSTART + RLENGTH) } }
	END { printf "%.0f", sqrt(s) }' a.raw)
dump_sd=$(awk '$1 == "est" && $2 == 1 && $3 == "TOTAL" { print $6 }' all.txt)
check "labels: sqrt(sum of inuse_space_stddev^2) $raw_sd = palloc-dump's $dump_sd (+-1)" \
	awk -v a="$raw_sd" -v b="$dump_sd" 'BEGIN { exit !(a - b <= 1 && b - a <= 1 && a > 0) }'

# The verdicts. sigma and expected samples per site from the #size lines
# (which come first).
{ grep '^size ' all.txt; grep '^est ' all.txt; } | awk -v R=524288 -v runs="$ran" '
	function erf_ok(k,    x, t, y) {	# P(|Z| <= k), Abramowitz-Stegun 7.1.26
		x = k / sqrt(2); t = 1 / (1 + 0.3275911 * x)
		y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t \
			- 0.284496736) * t + 0.254829592) * t * exp(-x * x)
		return y
	}
	$1 == "size" {
		p = 1 - exp(-$3 / R)
		var[$2] += $4 * $3 * $3 * (1 - p) / p; var["TOTAL"] += $4 * $3 * $3 * (1 - p) / p
		n[$2] += $4 * p; n["TOTAL"] += $4 * p
		next
	}
	$1 == "est" {
		site = $3; T = $4; X = $5
		if (!(site in truth)) order[++ns] = site
		truth[site] = T
		tol = (site == "TOTAL") ? 0.05 : 0.20
		held = (site == "TOTAL" || T >= 100 * R)
		if (held) { nheld[site]++; if (X - T <= tol * T && T - X <= tol * T) inb[site]++ }
		if (n[site] >= 20) {
			ncov[site]++; pooled_n++
			if ($7 != "null" && $7 <= T && T <= $8) { cov[site]++; pooled++ }
		}
		next
	}
	END {
		for (i = 1; i <= ns; i++) {
			s = order[i]; sd = sqrt(var[s]); T = truth[s]
			tol = (s == "TOTAL") ? 0.05 : 0.20
			line = sprintf("%s truth %d sigma %.0f (%.1f%%) samples %.0f:",
				s, T, sd, T ? 100 * sd / T : 0, n[s])
			if (s in nheld) {
				line = line sprintf(" within %d%% in %d/%d runs (expected %.2f%%)",
					100 * tol, inb[s], nheld[s], 100 * erf_ok(tol * T / sd))
				if (inb[s] < 0.95 * runs) { line = "FAIL " line; bad++ }
				held_sites++
			}
			if (s in ncov)
				line = line sprintf(", interval covers in %d/%d", cov[s], ncov[s])
			print line
		}
		printf "pooled coverage %d/%d = %.1f%%\n", pooled, pooled_n,
			pooled_n ? 100 * pooled / pooled_n : 0
		printf "verdict held=%d bad=%d pooled=%d pooled_n=%d\n",
			held_sites, bad + 0, pooled, pooled_n
	}' >verdict.txt
diag "$(cat verdict.txt)"
set -- $(sed -n 's/^verdict //p' verdict.txt | tr '=' ' ')
held=$2 bad=$4 pooled=$6 pooled_n=$8
check "sites held to +-20 % (>= 100 x rate): size_64k, size_512k, size_8m, and the total" \
	[ "$held" -eq 4 ]
check "each within its tolerance in >= 95 % of $ran runs ($bad failed)" \
	[ "$ran" -gt 0 -a "$bad" -eq 0 ]
check "95 % intervals cover the truth in >= 93 % ($pooled of $pooled_n)" \
	[ "$pooled_n" -ge "$((4 * ran))" -a "$((pooled * 100))" -ge "$((pooled_n * 93))" ]
# palloc-dump without error bars: a rate-1 profile has no stddev keys.
rm -f palloc.sizes.*.pb.gz
PALLOC_SAMPLE_RATE=1 LD_PRELOAD=$PALLOC_AGENT "$exe" >/dev/null 2>&1
set -- palloc.sizes.*.pb.gz
palloc-dump --symbolize "$1" --json 2>/dev/null >exact.json
r1=$(jq '.top.functions[0] | has("flat_bytes") and
	(has("flat_stddev_bytes") | not)' exact.json)
check "rate 1: exact values, no stddev keys ($r1)" [ "$r1" = true ]
done_testing
