#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/run short: palloc-run's own cost on short programs: start-up,
# waiting, reading and symbolizing the profiles, the summary.
#
#   bench/run/short.sh [BUILDDIR] [RUNS]
#
# Rows: Debian's /usr/bin/python3 -c pass, git status in a small repository
# (20 files), /bin/true, and make -j2 of a generated C project of 16 files
# (about 50 processes: make, gcc, cc1 and as per file, the link). Each is
# timed by hyperfine (RUNS runs, default 30, 10 for the build; medians)
# alone, under palloc-run with an empty symbol cache (--prepare removes it:
# the first run on a machine), with the cache written by an earlier run
# (the second run), with --no-cache and --no-symbolize, and with the agent
# alone (LD_PRELOAD; it writes its profiles). Maximum RSS (/usr/bin/time %M, the
# largest of palloc-run and the program's processes) is the median of 5
# runs of each. Needs hyperfine, jq, /usr/bin/time, gcc, make, git.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
find_run "${1:-$src}"
runs=${2:-30}
for t in hyperfine jq /usr/bin/time gcc make git; do
	command -v "$t" >/dev/null || { echo "short.sh: needs $t" >&2; exit 2; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/palloc-short.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
cache=$tmp/cache
prof=$tmp/prof
mkdir -p "$prof"

# a small git repository
mkdir repo && (
	cd repo && git init -q && for i in $(seq 20); do
		echo "file $i" >"f$i.txt"
	done && git add . && git -c user.name=b -c user.email=b@b commit -qm init
) || exit 2
# a C project of 16 files: about 50 processes for make -j2
mkdir proj || exit 2
for i in $(seq 16); do
	printf '#include <stdio.h>\nint f%d(int x) { return x * %d + printf("%%d", x); }\n' \
		"$i" "$i" >"proj/f$i.c"
done
printf 'int main(void) { return 0; }\n' >proj/main.c
objs="main.o $(for i in $(seq 16); do printf 'f%d.o ' "$i"; done)"
printf 'prog: %s\n\tgcc -o $@ $^\n%%.o: %%.c\n\tgcc -O2 -c $<\nclean:\n\trm -f prog *.o\n' \
	"$objs" >proj/Makefile

# rows: NAME|DIR|COMMAND|PREPARE (PREPARE run before each timed run)
rows=(
	"python3 -c pass|$tmp|/usr/bin/python3 -c pass|"
	"git status|$tmp/repo|/usr/bin/git status --short|"
	"/bin/true|$tmp|/bin/true|"
	"make -j2, 16 files (~50 processes)|$tmp/proj|make -s -j2|make -s clean"
)

# median_ms JSON: hyperfine's median in ms
median_ms() { jq -r '.results[0].median * 1000 | . * 10 | round / 10' "$1"; }

# time_it DIR PREPARE N CMD...: median ms of CMD
time_it() {
	local dir=$1 prep=$2 n=$3
	shift 3
	(cd "$dir" && hyperfine --style none -w 2 -r "$n" \
		${prep:+--prepare "$prep"} --export-json "$tmp/h.json" \
		"$*" >/dev/null 2>&1) || { echo "?"; return; }
	median_ms "$tmp/h.json"
}

# rss_mb DIR PREPARE CMD...: median max RSS (MB) of 5 runs
rss_mb() {
	local dir=$1 prep=$2 i
	shift 2
	for i in 1 2 3 4 5; do
		(cd "$dir" && { [ -z "$prep" ] || sh -c "$prep"; } &&
			/usr/bin/time -f '%M' -o "$tmp/rss" "$@" >/dev/null 2>&1)
		cat "$tmp/rss"
	done | sort -n | sed -n 3p | awk '{ printf "%.1f\n", $1 / 1024 }'
}

uname -r
echo "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %H:%M') UTC"
echo
echo "| program | alone ms | agent alone ms | palloc-run --no-symbolize ms | palloc-run 1st run ms | 2nd run ms | --no-cache ms | 2nd run - alone ms | alone MB | 1st run MB | 2nd run MB | 2nd run - alone MB |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for row in "${rows[@]}"; do
	IFS='|' read -r name dir cmd prep <<<"$row"
	n=$runs
	case $name in make*) n=$(((runs + 2) / 3)) ;; esac
	pr=(env XDG_CACHE_HOME="$cache" "$run" -q -o "$prof/p.%p.pb.gz")
	clean="rm -rf $prof/*${prep:+; $prep}"
	# shellcheck disable=SC2086
	alone=$(time_it "$dir" "$prep" "$n" $cmd)
	# shellcheck disable=SC2086
	agent=$(time_it "$dir" "$clean" "$n" env \
		LD_PRELOAD="$build/libcore/.libs/libpalloc.so" \
		PALLOC_OUTPUT="$prof/a.%p.pb.gz" $cmd)
	# shellcheck disable=SC2086
	raw=$(time_it "$dir" "$clean" "$n" "${pr[@]}" --no-symbolize $cmd)
	# shellcheck disable=SC2086
	first=$(time_it "$dir" "rm -rf $cache; $clean" "$n" "${pr[@]}" $cmd)
	# shellcheck disable=SC2086
	(cd "$dir" && sh -c "$clean" && "${pr[@]}" $cmd >/dev/null 2>&1)
	# shellcheck disable=SC2086
	second=$(time_it "$dir" "$clean" "$n" "${pr[@]}" $cmd)
	# shellcheck disable=SC2086
	nocache=$(time_it "$dir" "$clean" "$n" "${pr[@]}" --no-cache $cmd)
	# shellcheck disable=SC2086
	ra=$(rss_mb "$dir" "$prep" $cmd)
	# shellcheck disable=SC2086
	r1=$(rss_mb "$dir" "rm -rf $cache; $clean" "${pr[@]}" $cmd)
	# shellcheck disable=SC2086
	r2=$(rss_mb "$dir" "$clean" "${pr[@]}" $cmd)
	echo "| \`$cmd\` ($name) | $alone | $agent | $raw | $first | $second |" \
		"$nocache |" \
		"$(awk -v a="$alone" -v b="$second" 'BEGIN { printf "%+.1f", b - a }') |" \
		"$ra | $r1 | $r2 |" \
		"$(awk -v a="$ra" -v b="$r2" 'BEGIN { printf "%+.1f", b - a }') |"
done
echo
echo "symbol cache after the runs: $(du -sh "$cache/palloc" | cut -f1) in" \
	"$(find "$cache/palloc" -name '*.idx' | wc -l) files"
