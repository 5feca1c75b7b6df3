# SPDX-License-Identifier: MIT
# bench/lib.sh: what the benchmark scripts share (sourced after they set
# $src, the source tree).
#
#   die MSG...        "SCRIPT: MSG" on stderr, exit 2
#   find_agent [DIR...]
#                     $agent: the absolute path of the agent to measure:
#                     $PALLOC_AGENT, else libcore/.libs/libpalloc.so in
#                     DIR..., the current directory or $src, the first
#                     found; dies when there is none
#   find_run DIR      $build (DIR, absolute) and $run, its palloc-run;
#                     dies when it is not built there

die() {
	echo "$(basename "$0"): $*" >&2
	exit 2
}

find_agent() {
	agent=${PALLOC_AGENT:-}
	if [ -z "$agent" ]; then
		for d in "$@" "$PWD" "$src"; do
			if [ -f "$d/libcore/.libs/libpalloc.so" ]; then
				agent=$d/libcore/.libs/libpalloc.so
				break
			fi
		done
	fi
	[ -f "$agent" ] || die "no libpalloc.so (build it, or set PALLOC_AGENT)"
	agent=$(cd "$(dirname "$agent")" && pwd)/$(basename "$agent")
}

# find_run DIR: $build, DIR made absolute, and $run, its palloc-run; dies
# when it is not built there.
find_run() {
	build=$(cd "$1" && pwd) || die "no directory '$1'"
	run=$build/cmd/palloc-run
	[ -x "$run" ] || die "no $run (build first)"
}
