# SPDX-License-Identifier: MIT
# t/lib-examples.sh: shared set-up of the tests that run examples/ under
# the agent (t/305x), sourced after t/lib.sh. Skips the script unless the
# agent interposes malloc and go tool pprof, nm and awk are there.

need_agent
need_pprof
need nm awk
nm -D --defined-only "$PALLOC_AGENT" | grep -qw malloc ||
	skip_all "the agent does not interpose malloc yet"

# example NAME: set $exe to the absolute path of examples/NAME (the path
# the agent records in the profile's mapping), and write its symbol table
# to $T/nm.txt for t/helper/truth.awk; skip the script if it is not built.
example() {
	exe=$(readlink -f "$top_builddir/examples/$1")
	[ -x "$exe" ] || skip_all "examples/$1 not built"
	nm -S --defined-only "$exe" >"$T/nm.txt"
}

# truth_awk MODE [awk -v assignments...] RAW: t/helper/truth.awk on RAW
# (pprof -raw output) for the example set by example().
truth_awk() {
	_mode=$1
	shift
	awk -f "$top_srcdir/t/helper/truth.awk" -v mode="$_mode" \
		-v exe="$exe" -v nmfile="$T/nm.txt" "$@"
}
