#!/bin/sh
# SPDX-License-Identifier: MIT
# Time `palloc-smaps` (every process, largest PSS first) on this machine,
# with EXTRA idle processes added to reach a few hundred.
# Usage: bench/kernel/smaps-all.sh [EXTRA [RUNS]]   (palloc-smaps in PATH)
set -eu
extra=${1:-300}
runs=${2:-20}
pids=
trap 'kill $pids 2>/dev/null' EXIT
i=0
while [ $i -lt "$extra" ]; do
	sleep 600 &
	pids="$pids $!"
	i=$((i + 1))
done
sleep 1
procs=$(ls /proc | grep -c '^[0-9]')
listed=$(palloc-smaps --json | jq '.processes | length')
ms() { echo "$(( ($2 - $1) / 1000000 ))"; }
times=
i=0
while [ $i -lt "$runs" ]; do
	a=$(date +%s%N)
	palloc-smaps >/dev/null
	b=$(date +%s%N)
	times="$times $(ms "$a" "$b")"
	i=$((i + 1))
done
a=$(date +%s%N)
cat /proc/[0-9]*/smaps_rollup >/dev/null 2>&1 || :
b=$(date +%s%N)
echo "$times" | tr ' ' '\n' | grep . | sort -n | awk -v p="$procs" \
	-v l="$listed" -v c="$(ms "$a" "$b")" '
	{ t[NR] = $1 }
	END {
		printf "processes in /proc: %d, listed (readable, with memory): %d\n", p, l
		printf "palloc-smaps over %d runs: min %d ms, median %d ms, max %d ms\n",
			NR, t[1], t[int((NR + 1) / 2)], t[NR]
		printf "cat /proc/*/smaps_rollup once (the kernel'\''s share): %d ms\n", c
	}'
