#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/calls.sh: instructions per call pair of each allocation call kind,
# counted by callgrind, for the C library alone, a bare forwarding
# interposer, palloc's agent at the default rate, and the peers.
#
#   bench/calls.sh [KINDS]
#
# KINDS (default "malloc calloc realloc new") are bench/calls.c's call
# kinds: malloc/free, calloc/free, realloc, operator new/delete pairs in
# bench/agent's churn loop. Each figure is (Ir(400,000 pairs) -
# Ir(200,000 pairs)) / 200,000: start-up and exit cancel. Rows:
#   glibc          the program alone
#   forward        bench/agent/forward.c preloaded (the floor of any
#                  interposer: it only forwards)
#   palloc         the agent ($PALLOC_AGENT, else the build's), default rate,
#                  PALLOC_SEED=1 (the same samples in every run)
#   before         $PALLOC_BEFORE (another libpalloc.so), if set
#   jemalloc       libjemalloc2 preloaded
#   jeprof         jemalloc with prof:true,lg_prof_sample:19 (its sampling
#                  at 512 KiB, the agent's default rate)
#   palloc_je      the agent over jemalloc (LD_PRELOAD=agent:jemalloc)
#   tcmalloc       libtcmalloc-minimal4, TCMALLOC_SAMPLE_PARAMETER=0
#   tcsample       the same sampling every 512 KiB
#   palloc_tc      the agent over tcmalloc
# A row whose library is not installed is left out; PALLOC_CALLS_VARIANTS
# picks rows. Needs cc, valgrind.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
kinds=${1:-malloc calloc realloc new}
libdir=/usr/lib/x86_64-linux-gnu
jemalloc=$libdir/libjemalloc.so.2
tcmalloc=$libdir/libtcmalloc_minimal.so.4
small=${PALLOC_CALLS_SMALL:-200000}
big=$((2 * small))

# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"

find_agent
before=${PALLOC_BEFORE:-}
command -v valgrind >/dev/null || die "valgrind is not installed"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/palloc-calls.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
cc -O2 -g -Wall -o "$tmp/calls" "$src/bench/calls.c" -lstdc++ &&
	cc -O2 -Wall -shared -fPIC -o "$tmp/forward.so" \
		"$src/bench/agent/forward.c" -ldl ||
	die "cannot build the benchmark programs"

variants="glibc forward palloc"
[ -n "$before" ] && variants="$variants before"
[ -f "$jemalloc" ] && variants="$variants jemalloc jeprof palloc_je"
[ -f "$tcmalloc" ] && variants="$variants tcmalloc tcsample palloc_tc"
# PALLOC_CALLS_VARIANTS: a subset of the rows, in that order (e.g.
# "glibc palloc"); the rows an "added" column refers to must be in it.
variants=${PALLOC_CALLS_VARIANTS:-$variants}

# prefix VARIANT: the command prefix (env ...) that runs as VARIANT.
prefix() {
	# PALLOC_SEED: the same samples in every run, so the counts repeat.
	local o=("PALLOC_OUTPUT=$tmp/out.%p.pb.gz" PALLOC_SEED=1)
	case $1 in
	glibc) pre=(env) ;;
	forward) pre=(env "LD_PRELOAD=$tmp/forward.so") ;;
	palloc) pre=(env "LD_PRELOAD=$agent" "${o[@]}") ;;
	before) pre=(env "LD_PRELOAD=$before" "${o[@]}") ;;
	jemalloc) pre=(env "LD_PRELOAD=$jemalloc") ;;
	jeprof)
		pre=(env "LD_PRELOAD=$jemalloc"
			"MALLOC_CONF=prof:true,lg_prof_sample:19") ;;
	palloc_je) pre=(env "LD_PRELOAD=$agent:$jemalloc" "${o[@]}") ;;
	tcmalloc) pre=(env "LD_PRELOAD=$tcmalloc" TCMALLOC_SAMPLE_PARAMETER=0) ;;
	tcsample)
		pre=(env "LD_PRELOAD=$tcmalloc"
			TCMALLOC_SAMPLE_PARAMETER=524288) ;;
	palloc_tc) pre=(env "LD_PRELOAD=$agent:$tcmalloc" "${o[@]}") ;;
	esac
}

# ir VARIANT KIND PAIRS: the instructions callgrind counts for the run
# (LD_PRELOAD set outside valgrind, as bench/agent/run.sh does).
ir() {
	local pre
	prefix "$1"
	"${pre[@]}" valgrind --tool=callgrind \
		--callgrind-out-file="$tmp/cg.out" "$tmp/calls" "$2" "$3" \
		>/dev/null 2>"$tmp/cg.err" ||
		die "callgrind $1 $2 $3 failed: $(tail -1 "$tmp/cg.err")"
	awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg.out"
	rm -f "$tmp"/out.*.pb.gz "$tmp/cg.out"
}

# per VARIANT KIND: instructions per pair, one decimal.
per() {
	local a b
	a=$(ir "$1" "$2" "$small") && b=$(ir "$1" "$2" "$big") || exit 2
	awk -v a="$a" -v b="$b" -v n="$small" \
		'BEGIN { printf "%.1f", (b - a) / n }'
}

echo "Instructions per pair (callgrind; (Ir($big) - Ir($small)) / $small)"
echo "agent: $agent${before:+; before: $before}"
echo
printf '| variant |'
for k in $kinds; do
	printf ' %s |' "$k"
done
echo
printf '| --- |'
for k in $kinds; do
	printf ' --- |'
done
echo
declare -A v
for var in $variants; do
	for k in $kinds; do
		v[$var.$k]=$(per "$var" "$k") || exit 2
	done
done
# added VAR BASE KIND: "x (+d)" with d = VAR - BASE.
added() {
	awk -v x="${v[$1.$3]}" -v b="${v[$2.$3]}" \
		'BEGIN { printf "%s (%+.1f)", x, x - b }'
}
for var in $variants; do
	case $var in
	glibc | jemalloc | tcmalloc) base= ;;
	forward | palloc | before) base=glibc ;;
	jeprof | palloc_je) base=jemalloc ;;
	tcsample | palloc_tc) base=tcmalloc ;;
	esac
	printf '| %s |' "$var"
	for k in $kinds; do
		if [ -n "$base" ]; then
			printf ' %s |' "$(added "$var" "$base" "$k")"
		else
			printf ' %s |' "${v[$var.$k]}"
		fi
	done
	echo
done
