#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent changes nothing a program prints: Debian's python3, sqlite3
# and git (versions, an error, a non-zero status), with LD_PRELOAD alone
# and under palloc-run -q, at the default rate and at rate 1: standard
# output, standard error (no stray agent message) and exit status byte
# for byte those of the run without it, and a profile written each time.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need_agent
need palloc-run

n=0
# case NAME PROGRAM ARGS...: one command to compare (if PROGRAM exists).
case_() {
	[ -x "$2" ] || { skip "$1: $2 is not installed"; return; }
	n=$((n + 1))
	printf '%s\n' "$1" >name.$n
	shift
	printf '%s\n' "$@" >argv.$n
}
case_ python3-version /usr/bin/python3 -c 'import sys; print(sys.version)'
case_ python3-error /usr/bin/python3 -c \
	'import sys; print("out"); sys.stderr.write("err\n"); sys.exit(3)'
case_ sqlite3-version /usr/bin/sqlite3 --version
case_ sqlite3-error /usr/bin/sqlite3 :memory: 'select 1;' 'select nope;'
case_ git-version /usr/bin/git --version
case_ git-error /usr/bin/git -C "$T" rev-parse HEAD

# run_case I MODE RATE: case I without the agent (MODE none), with
# LD_PRELOAD alone (preload) or under palloc-run -q (run).
run_case() {
	_i=$1 _mode=$2 _rate=${3:-}
	set --
	while read -r _a; do set -- "$@" "$_a"; done <argv.$_i
	# the arguments are one line each (none has a newline)
	case $_mode in
	none) "$@" ;;
	preload)
		if [ "$_rate" = default ]; then
			LD_PRELOAD=$PALLOC_AGENT PALLOC_OUTPUT=$T/prof/p.%p.pb.gz "$@"
		else
			LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=$_rate \
				PALLOC_OUTPUT=$T/prof/p.%p.pb.gz "$@"
		fi ;;
	run)
		if [ "$_rate" = default ]; then
			palloc-run -q -o "$T/prof/p.%p.pb.gz" "$@"
		else
			palloc-run -q -r "$_rate" -o "$T/prof/p.%p.pb.gz" "$@"
		fi ;;
	esac
}

i=1
while [ $i -le $n ]; do
	name=$(cat name.$i)
	run_case $i none >base.out 2>base.err
	base_rc=$?
	diag "$name: exit $base_rc, $(head -c 60 base.out | head -1)"
	for mode in preload run; do
		for rate in default 1; do
			rm -rf prof && mkdir prof
			run_case $i $mode $rate >out 2>err
			rc=$?
			if [ "$rc" -eq "$base_rc" ] && cmp -s base.out out &&
				cmp -s base.err err; then
				ok "$name, $mode, rate $rate: same output, error and status ($rc)"
			else
				not_ok "$name, $mode, rate $rate: same output, error and status ($rc, want $base_rc)"
				diff -u base.out out | sed 's/^/# /'
				diff -u base.err err | sed 's/^/# /'
			fi
			check "$name, $mode, rate $rate: one profile written" \
				[ "$(ls prof | wc -l)" -eq 1 ]
		done
	done
	i=$((i + 1))
done

echo "1..$_n"
done_testing
