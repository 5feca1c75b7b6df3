#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/run build: what palloc costs a build of about 55 short processes,
# in paired, interleaved runs.
#
#   bench/run/build.sh [BUILDDIR] [REPS] [BEFORE_BUILDDIR]
#
# make -s -j2 of a generated C project of 16 files (make, gcc, cc1 and as
# per file, the link), REPS times (default 9) each of: the build alone,
# with the agent alone (LD_PRELOAD, profiles written by each process),
# under palloc-run --no-symbolize, and under palloc-run (its symbol cache
# written by a warm-up run first); with BEFORE_BUILDDIR, the same three
# again from that build (its agent and palloc-run), for a before/after
# comparison in the same run. Every repetition runs the variants back to
# back after a make clean, in reverse order on every other repetition,
# and the table gives the median of the per-repetition ratios to the build
# alone (min-max): wall time and CPU time (user + sys of every process,
# palloc-run's included), and with BEFORE_BUILDDIR each CPU time over its
# before's. The project, the profiles and the symbol cache are made under
# $TMPDIR, the agents' control sockets under $XDG_RUNTIME_DIR (else /tmp):
# on a machine whose /tmp is ext4 every file or socket created there costs
# a scan of the inode bitmap, so run it with both on a tmpfs too
# (TMPDIR=/dev/shm XDG_RUNTIME_DIR=/dev/shm/xdg). Needs gcc and make.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src}" && pwd)
reps=${2:-9}
before=${3:+$(cd "$3" && pwd)}
for b in "$build" ${before:+"$before"}; do
	[ -x "$b/cmd/palloc-run" ] && [ -f "$b/libcore/.libs/libpalloc.so" ] ||
		{ echo "build.sh: no palloc-run or agent in $b" >&2; exit 2; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/palloc-build.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/proj" "$tmp/prof" "$tmp/cache" || exit 2
cd "$tmp/proj" || exit 2
for i in $(seq 16); do
	printf '#include <stdio.h>\nint f%d(int x) { return x * %d + printf("%%d", x); }\n' \
		"$i" "$i" >"f$i.c"
done
printf 'int main(void) { return 0; }\n' >main.c
objs="main.o $(for i in $(seq 16); do printf 'f%d.o ' "$i"; done)"
printf 'prog: %s\n\tgcc -o $@ $^\n%%.o: %%.c\n\tgcc -O2 -c $<\nclean:\n\trm -f prog *.o\n' \
	"$objs" >Makefile

# prefix VARIANT: PRE, the words that run the build as VARIANT (a _b
# suffix: from BEFORE_BUILDDIR).
prefix() {
	local b=$build
	case $1 in *_b) b=$before ;; esac
	case $1 in
	base) PRE=() ;;
	agent*) PRE=(env "LD_PRELOAD=$b/libcore/.libs/libpalloc.so"
		"PALLOC_OUTPUT=$tmp/prof/a.%p.pb.gz") ;;
	raw*) PRE=(env "XDG_CACHE_HOME=$tmp/cache" "$b/cmd/palloc-run" -q
		-o "$tmp/prof/p.%p.pb.gz" --no-symbolize) ;;
	run*) PRE=(env "XDG_CACHE_HOME=$tmp/cache" "$b/cmd/palloc-run" -q
		-o "$tmp/prof/p.%p.pb.gz") ;;
	esac
}

# once VARIANT REP: build once, append "VARIANT REP WALL CPU" to results.
once() {
	local TIMEFORMAT='%R %U %S' PRE
	prefix "$1"
	make -s clean >/dev/null 2>&1
	rm -f "$tmp"/prof/*
	{ time "${PRE[@]}" make -s -j2 >/dev/null 2>&1; } 2>"$tmp/t" ||
		{ echo "build.sh: $1 failed" >&2; exit 1; }
	[ "$1" = base ] || profiles=$(find "$tmp/prof" -type f | wc -l)
	awk -v v="$1" -v r="$2" '{ printf "%s %s %.3f %.3f\n", v, r, $1,
		$2 + $3 }' "$tmp/t" >>"$tmp/results"
}

profiles=0
vars="base agent raw run${before:+ agent_b raw_b run_b}"
: >"$tmp/results"
for v in $vars; do
	once "$v" 0 # warm-up: page cache, symbol cache
done
: >"$tmp/results"
for r in $(seq 1 "$reps"); do
	if [ $((r % 2)) -eq 0 ]; then
		order=$vars
	else
		order=$(echo "$vars" | tr ' ' '\n' | tac | tr '\n' ' ')
	fi
	for v in $order; do
		once "$v" "$r"
	done
done


echo "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"$(date -u '+%F %H:%M') UTC; $profiles profiles per build"
echo
echo "| variant | wall ms | CPU ms | wall / alone | CPU / alone |"
echo "| --- | --- | --- | --- | --- |"
awk -v vars="$vars" '
function med(a, n,   i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
# stat(v, f, ratio): median (min-max) of field f of v, or of its ratio to
# base in the same repetition
function stat(v, f, ratio,   r, n, x, lo, hi, a) {
	n = 0; lo = 1e9; hi = -1e9
	for (r = 1; r <= maxr; r++) {
		if (!((v, r) in w))
			continue
		x = f == 3 ? w[v, r] : c[v, r]
		if (ratio)
			x /= f == 3 ? w["base", r] : c["base", r]
		else
			x *= 1000
		a[++n] = x
		if (x < lo) lo = x
		if (x > hi) hi = x
	}
	return sprintf(ratio ? "%.3f (%.3f-%.3f)" : "%.0f (%.0f-%.0f)",
		       med(a, n), lo, hi)
}
{ w[$1, $2] = $3; c[$1, $2] = $4; if ($2 > maxr) maxr = $2 }
END {
	nv = split(vars, v, " ")
	for (i = 1; i <= nv; i++)
		printf "| %s | %s | %s | %s | %s |\n", v[i], stat(v[i], 3, 0),
			stat(v[i], 4, 0), stat(v[i], 3, 1), stat(v[i], 4, 1)
	if (!(("agent_b", 1) in c))
		exit
	# after / before, CPU time, same repetition
	printf "\nCPU time, this build / BEFORE_BUILDDIR, median (min-max) of the same repetitions:"
	printf " agent %s, raw %s, run %s\n", ab("agent"), ab("raw"), ab("run")
}
function ab(v,   r, n, x, lo, hi, a) {
	n = 0; lo = 1e9; hi = -1e9
	for (r = 1; r <= maxr; r++) {
		x = c[v, r] / c[v "_b", r]
		a[++n] = x
		if (x < lo) lo = x
		if (x > hi) hi = x
	}
	return sprintf("%.3f (%.3f-%.3f)", med(a, n), lo, hi)
}' "$tmp/results"
