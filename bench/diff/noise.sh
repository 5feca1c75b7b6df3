#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/diff/noise.sh: how often palloc-diff's growth gate trips on sampling
# noise alone, and how often it catches a real leak.
#
#   make t/helper/diff-noise cmd/palloc-diff   # in the build directory
#   sh SRCDIR/bench/diff/noise.sh [PAIRS] [BUILDDIR] [HOLD_MIB] [LEAK_MIB] [LIMIT]
#
# Defaults: 100 pairs, 300 MiB held, a 16 MiB leak, a 1MiB gate. Each pair
# is two runs of t/helper/diff-noise HOLD_MIB (blocks of 64 KiB to 1 MiB,
# the same ones every run) under the agent at the default rate (512 KiB)
# with other PALLOC_SEEDs, plus a third run with LEAK_MIB more allocated in
# leak_more(), a function the others do not have. The agent runs by
# LD_PRELOAD (no palloc-run, no symbols: the raw profiles are diffed). For
# every pair it runs palloc-diff --fail-on-growth LIMIT with the raw gate and
# with the default (significant growth, z = 3) on BASE/NEW (noise only) and
# on BASE/LEAK, and prints the counts and the spread of the figures.
set -eu
pairs=${1:-100}
build=${2:-.}
hold=${3:-300}
leak=${4:-16}
limit=${5:-1MiB}
agent=${PALLOC_AGENT:-$build/libcore/.libs/libpalloc.so}
work=$build/t/helper/diff-noise
diff=$build/cmd/palloc-diff
dir=$(mktemp -d "${TMPDIR:-/tmp}/palloc-bench-noise.XXXXXX")
trap 'rm -rf "$dir"' EXIT
[ -f "$agent" ] || { echo "no agent at $agent" >&2; exit 2; }

# run SEED OUT [LEAK]: one run of the workload under the agent.
run() {
	LD_PRELOAD=$agent PALLOC_SEED=$1 PALLOC_OUTPUT=$2 \
		"$work" "$hold" ${3:-} || { echo "run failed" >&2; exit 2; }
}

# gate BASE NEW [--raw-gate]: 1 when the gate trips, 0 when it passes.
gate() {
	set +e
	"$diff" -q --fail-on-growth "$limit" ${3:-} "$1" "$2" 2>/dev/null
	_rc=$?
	set -e
	[ "$_rc" -le 1 ] || { echo "palloc-diff: exit $_rc" >&2; exit 2; }
	echo "$_rc"
}

raw_noise=0 sig_noise=0 raw_leak=0 sig_leak=0
: >"$dir/figures"
start=$(date +%s)
i=0
while [ "$i" -lt "$pairs" ]; do
	b=$dir/b.pb.gz n=$dir/n.pb.gz l=$dir/l.pb.gz
	run $((3 * i + 1)) "$b"
	run $((3 * i + 2)) "$n"
	run $((3 * i + 3)) "$l" "$leak"
	raw_noise=$((raw_noise + $(gate "$b" "$n" --raw-gate)))
	sig_noise=$((sig_noise + $(gate "$b" "$n")))
	raw_leak=$((raw_leak + $(gate "$b" "$l" --raw-gate)))
	sig_leak=$((sig_leak + $(gate "$b" "$l")))
	# growth, sigma, significant growth: noise pair, then leak pair
	for x in "$n" "$l"; do
		"$diff" -q --json "$b" "$x" >"$dir/d.json"
		sed -n 's/^  "\(growth_bytes\|growth_stddev_bytes\|significant_growth_bytes\)": \(-*[0-9]*\),*$/\2/p' \
			"$dir/d.json" | tr '\n' ' '
		echo
	done >>"$dir/figures"
	i=$((i + 1))
done
end=$(date +%s)

echo "pairs: $pairs, $hold MiB held in 64 KiB..1 MiB blocks, rate 512 KiB," \
	"leak $leak MiB, gate $limit"
echo "runs of the workload under the agent: $((3 * pairs)) in $((end - start)) s" \
	"(with the diffs)"
echo "noise only (BASE vs NEW):  raw gate fails $raw_noise/$pairs," \
	"significant gate fails $sig_noise/$pairs"
echo "leak (BASE vs NEW+leak):   raw gate fails $raw_leak/$pairs," \
	"significant gate fails $sig_leak/$pairs"
awk -v mib=1048576 '
	NR % 2 == 1 { n++; g = $1; s = $2; q = $3
		ag += (g < 0 ? -g : g); as += s
		if (q > maxq) maxq = q
		if (g > s * 3 || g < -s * 3) out++ }
	NR % 2 == 0 { g = $1; s = $2; q = $3
		if (minl == "" || q < minl) minl = q
		if (maxl == "" || q > maxl) maxl = q }
	END {
		printf "noise pairs: mean |growth| %.2f MiB, mean sigma of the " \
			"growth %.2f MiB, |growth| > 3 sigma in %d, largest " \
			"significant growth %.2f MiB\n", ag / n / mib,
			as / n / mib, out, maxq / mib
		printf "leak pairs: significant growth %.2f to %.2f MiB\n",
			minl / mib, maxl / mib
	}' "$dir/figures"
