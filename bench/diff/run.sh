#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/diff/run.sh: time and peak memory of palloc-diff on two big profiles.
#
#   make t/helper/diff-mkprof cmd/palloc-diff   # in the build directory
#   sh SRCDIR/bench/diff/run.sh [SAMPLES] [BUILDDIR]
#
# Writes two random profiles of SAMPLES stacks (default 1420000: about
# 100 MB of profile.proto before gzip) with t/helper/diff-mkprof --big, the
# second with growth in every 10th stack, then runs palloc-diff under
# /usr/bin/time -v for --json, -o and --fail-on-growth, printing the
# elapsed time, the peak RSS and the RSS as a multiple of the input size.
set -eu
samples=${1:-1420000}
build=${2:-.}
dir=$(mktemp -d "${TMPDIR:-/tmp}/palloc-bench-diff.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkprof=$build/t/helper/diff-mkprof
diff=$build/cmd/palloc-diff

raw_base=$("$mkprof" --big "$samples" 1 0 "$dir/base.pb.gz")
raw_new=$("$mkprof" --big "$samples" 1 1 "$dir/new.pb.gz")
echo "samples: $samples per profile"
echo "base: $raw_base bytes uncompressed, $(wc -c <"$dir/base.pb.gz") gzipped"
echo "new:  $raw_new bytes uncompressed, $(wc -c <"$dir/new.pb.gz") gzipped"

measure() { # measure LABEL EXPECTED_STATUS ARGS...
	label=$1 want=$2
	shift 2
	set +e
	/usr/bin/time -v "$diff" "$@" "$dir/base.pb.gz" "$dir/new.pb.gz" \
		>"$dir/out" 2>"$dir/time"
	rc=$?
	set -e
	if [ "$rc" -ne "$want" ]; then
		echo "$label: exit $rc, want $want" >&2
		cat "$dir/time" >&2
		exit 1
	fi
	secs=$(sed -n 's/^.*Elapsed (wall clock) time .*: //p' "$dir/time")
	kb=$(sed -n 's/^.*Maximum resident set size (kbytes): //p' "$dir/time")
	awk -v l="$label" -v t="$secs" -v kb="$kb" -v b="$raw_base" -v n="$raw_new" \
		'BEGIN { printf "%-28s %8s s  %7.1f MiB peak RSS  %.2f x one input, %.2f x both\n",
			l, t, kb / 1024, kb * 1024 / b, kb * 1024 / (b + n) }'
}
measure "--json" 0 --json
measure "-o diff.pb.gz" 0 -o "$dir/diff.pb.gz"
measure "--fail-on-growth 1MiB" 1 --fail-on-growth 1MiB
"$diff" --json "$dir/base.pb.gz" "$dir/new.pb.gz" >"$dir/j"
sed -n 's/^  "\(growth_bytes\|matched_stack_count\|changed_stack_count\)": \([0-9-]*\),*$/\1: \2/p' \
	"$dir/j"
