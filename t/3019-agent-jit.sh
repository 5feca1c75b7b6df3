#!/bin/sh
# SPDX-License-Identifier: MIT
# Code generated at run time (anonymous executable
# memory) has a mapping, and its frames are named from the perf map the
# runtime wrote (/tmp/perf-PID.map, as node --perf-basic-prof does), read
# only when it is a regular file owned by root or the process's user.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
PATH=$top_builddir/cmd:$top_builddir/t/helper:$PATH

map=
trap 'rm -f "$map"; cleanup_tmp' EXIT

# leaf PROFILE: the leaf function and inuse objects of each stack,
# "N FUNCTION", from pprof -traces.
leaf() {
	pprof -sample_index=inuse_objects -traces "$1" 2>/dev/null | awk '
		$1 == "thread:" { next }
		NF >= 2 && $1 ~ /^[0-9]+$/ { print $1, $2 }'
}

jit-alloc 0 >probe.out 2>&1
[ $? -eq 77 ] && skip_all "the trampoline is written for x86_64 only"
rm -f "/tmp/perf-$(sed -n 's/^pid \([0-9]*\) .*/\1/p' probe.out).map"

plan 9

palloc-run -q -r 1 --no-symbolize -o raw.pb.gz jit-alloc 5 >out 2>err
check "jit-alloc runs" [ $? -eq 0 ]
pid=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' out)
map=/tmp/perf-$pid.map
code=$(sed -n 's/.* code 0x\([0-9a-f]*\)$/\1/p' out)
pprof-check --dump raw.pb.gz >raw.dump 2>&1
n=$(grep -c '^0x[0-9a-f]* -' raw.dump)
check "every location has a mapping ($n without)" [ "$n" = 0 ]
check "the trampoline's frame is in an [anon:jit] mapping" \
	grep -q "^0x${code%???}[0-9a-f]* \[anon:jit\]\$" raw.dump

palloc-dump --symbolize -o sym.pb.gz raw.pb.gz 2>sym.err
leaf sym.pb.gz >sym.leaf
check "5 blocks from jit_alloc_trampoline, the perf map's later entry" \
	grep -qx '5 jit_alloc_trampoline' sym.leaf
pprof-check --dump sym.pb.gz >sym.dump 2>&1
check "the [anon:jit] mapping has functions" \
	grep -q '^mapping [0-9]* \[anon:jit\] build_id= functions=1' sym.dump

# What palloc-run does by itself after the program exited.
palloc-run -q -r 1 -o run.pb.gz jit-alloc 5 >run.out 2>run.err
run_map=/tmp/perf-$(sed -n 's/^pid \([0-9]*\) .*/\1/p' run.out).map
leaf run.pb.gz >run.leaf
rm -f "$run_map"
check "palloc-run names it too" grep -qx '5 jit_alloc_trampoline' run.leaf

# Refused: a map owned by another user (not root), and a symlink.
cp "$map" map.copy
chown nobody "$map" 2>/dev/null || skip_all "cannot chown to nobody"
palloc-dump --symbolize -o other.pb.gz raw.pb.gz 2>other.err
leaf other.pb.gz >other.leaf
if [ "$(id -u)" -eq 0 ]; then
	check "a map owned by nobody is not read by root" \
		eval "! grep -q jit_ other.leaf"
	check "... and palloc-dump says why" \
		grep -q "not reading '$map': owned by another user" other.err
else
	skip "not root: the map is the caller's own"
	skip "not root"
fi
rm -f "$map"
ln -s "$T/map.copy" "$map"
palloc-dump --symbolize -o link.pb.gz raw.pb.gz 2>link.err
leaf link.pb.gz >link.leaf
check "a symlink is not followed" eval "! grep -q jit_ link.leaf"
if [ $_failed -ne 0 ]; then
	sed 's/^/# /' raw.dump sym.err sym.leaf other.err link.err
fi
done_testing
