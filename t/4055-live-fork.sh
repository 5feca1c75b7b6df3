#!/bin/sh
# SPDX-License-Identifier: MIT
# After fork, the child's agent keeps a record of its own (its own pid,
# its own heap), read from outside as the parent's is.
. "$top_srcdir/t/lib.sh"
need_agent
need jq live-fork
jqe() { jq -e "$@" >/dev/null; }

PALLOC_SAMPLE_RATE=1 LD_PRELOAD=$PALLOC_AGENT live-fork 4 pids 2>run.err &
run=$!
trap 'kill $run 2>/dev/null; wait $run 2>/dev/null; cleanup_tmp' EXIT
i=0
until [ -s pids ] || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
read parent child <pids
# record PID: the record file PID maps (the agent has started).
record() { sed -n 's|^.* \(/.*/'"$1"'\.[0-9]*\.rec\)$|\1|p' /proc/$1/maps 2>/dev/null; }
retry 100 0.1 test -n "$(record $child)"
crec=$(record $child)
prec=$(record $parent)

plan 8
check "the child maps a record of its own" \
	test -n "$crec" -a -n "$prec" -a "$crec" != "$prec"
palloc-dump --stats --json $child >child.json
check "the child's agent answers with its own pid" \
	jqe --argjson p $child '.pid == $p' child.json
palloc-dump $child --json >child-prof.json
check "the child's heap is child_keep's" \
	jqe '.top.functions[0].function == "child_keep"' child-prof.json
palloc-dump $parent --json >parent-prof.json
check "the parent's heap is parent_keep's" \
	jqe '.top.functions[0].function == "parent_keep"' parent-prof.json
check "8 MiB live in the child" \
	jqe '.totals.inuse_space_bytes == 8388608' child-prof.json
i=0
while kill -0 $child 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.2
check "the child's record is its own (the child's pid)" \
	jqe --argjson p $child '.pid == $p' child.json
check "the parent's record stays mapped" test "$(record $parent)" = "$prec"
palloc-dump --stats --json $parent >parent.json
check "the parent still answers" jqe --argjson p $parent '.pid == $p' \
	parent.json
done_testing
