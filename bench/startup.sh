#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/startup.sh: what the agent adds to a program that does nothing
# (/bin/true gains at most 250,000 instructions).
#
#   bench/startup.sh [PROGRAM [ARG...]]
#
# Callgrind counts the instructions of PROGRAM (default /bin/true) alone
# and under the agent, in the same run: LD_PRELOAD alone (the agent
# writes the exit profile itself) and as palloc-run starts it
# (PALLOC_RUN_TOKEN and PALLOC_RECORD_DIR set: the record stays for
# palloc-run; PALLOC_COLLECT is not, so the profile is written as a file).
# With PALLOC_BEFORE=OLD.so, that agent too. Only the program's own
# process is counted: valgrind runs env(1), which execs the program in
# the same pid, and the file callgrind leaves holds that image only.
# XDG_RUNTIME_DIR is an empty directory of the run's: the agent's record
# and socket directory then holds no other process's files (on a shared
# machine /tmp/palloc-UID may hold hundreds, each looked at).
# PALLOC_STARTUP_TOP=N prints the agent's N most expensive functions
# (inclusive) for the LD_PRELOAD run. The agent is $PALLOC_AGENT, else
# libcore/.libs/libpalloc.so in the current directory or the source tree.
# Needs valgrind.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)

# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"

find_agent
before=${PALLOC_BEFORE:-}
[ $# -gt 0 ] || set -- /bin/true
command -v valgrind >/dev/null || die "valgrind is not installed"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/palloc-bench-startup.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# ir NAME [VAR=VALUE...]: instructions of the program run with the
# variables set; the callgrind file is kept as $tmp/NAME.cg.
ir() {
	local name=$1 f
	shift
	rm -rf "$tmp/run" && mkdir -p "$tmp/run/rec" "$tmp/run/xdg" &&
		chmod 700 "$tmp/run/xdg" || die "mkdir failed"
	(cd "$tmp/run" && valgrind --tool=callgrind --trace-children=yes \
		--callgrind-out-file="$tmp/run/cg.%p" env \
		XDG_RUNTIME_DIR="$tmp/run/xdg" "$@" \
		PALLOC_OUTPUT="$tmp/run/p.%p.pb.gz" "${prog[@]}" \
		>/dev/null 2>"$tmp/run/err") ||
		die "$name: callgrind failed: $(tail -3 "$tmp/run/err")"
	for f in "$tmp"/run/cg.*; do
		if grep -q "^cmd: *${prog[0]}" "$f"; then
			cp "$f" "$tmp/$name.cg"
			awk '/^(summary|totals):/ { print $2; exit }' "$f"
			return
		fi
	done
	die "$name: no callgrind file of ${prog[0]}"
}

prog=("$@")
token=0123456789abcdef0123456789abcdef
base=$(ir base)
alone=$(ir alone LD_PRELOAD="$agent")
run=$(ir run LD_PRELOAD="$agent" PALLOC_RUN_TOKEN=$token \
	PALLOC_RECORD_DIR="$tmp/run/rec")
if [ -n "$before" ]; then
	old_alone=$(ir old_alone LD_PRELOAD="$before")
	old_run=$(ir old_run LD_PRELOAD="$before" PALLOC_RUN_TOKEN=$token \
		PALLOC_RECORD_DIR="$tmp/run/rec")
fi

row() {
	printf '| %s | %s | %s | %.2f |\n' "$1" "$2" $(($2 - base)) \
		"$(echo "$2 / $base" | bc -l)"
}

echo "Callgrind instructions of '${prog[*]}' ($(date -u +%FT%TZ))"
echo
echo "| run | instructions | added by the agent | ratio |"
echo "| --- | --- | --- | --- |"
printf '| no agent | %s | | 1.00 |\n' "$base"
if [ -n "$before" ]; then
	row "before: LD_PRELOAD alone" "$old_alone"
	row "before: with PALLOC_RUN_TOKEN" "$old_run"
fi
row "LD_PRELOAD alone" "$alone"
row "with PALLOC_RUN_TOKEN" "$run"
if [ -n "${PALLOC_STARTUP_TOP:-}" ]; then
	echo
	callgrind_annotate --inclusive=yes "$tmp/alone.cg" 2>/dev/null |
		grep 'libpalloc\.so\]' | head -n "$PALLOC_STARTUP_TOP"
fi
