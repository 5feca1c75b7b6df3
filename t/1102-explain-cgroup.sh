#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-explain on cgroups: fixtures whose memory.stat adds up exactly
# (v2 and v1, t/fixtures/sysroot-explain/README), palloc-cgroup's fixtures
# (the sum is checked, the rest reported), the caller's cgroup live, and a
# workload in a memory cgroup of its own when we may make one.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-explain.sh"
need jq
F=$top_srcdir/t/fixtures
M=1048576
cg=
trap 'stop_workload; [ -n "$cg" ] && rmdir "$cg" 2>/dev/null; cleanup_tmp' EXIT

# adds_up FILE: the parts (nulls as 0) plus unexplained are the usage.
adds_up() {
	jqe '([.parts[].bytes // 0] | add) + .unexplained_bytes == .usage_bytes' "$1"
}

plan 13
palloc-explain --sysroot "$F/sysroot-explain" --json /sys/fs/cgroup/app >v2.json
check "v2 fixture: the parts add up exactly" jqe --argjson m $M '
	.kind == "cgroup" and .cgroup_version == 2 and .usage_bytes == 94 * $m
	and .unexplained_bytes == 0 and .working_set_bytes == 78 * $m
	and .headroom_bytes == 34 * $m and .high_headroom_bytes == 18 * $m' v2.json
jq -c '[.parts[] | [.name, .bytes]]' v2.json >got
cat >want <<EOT
[["anon",67108864],["page_cache_active",8388608],["page_cache_inactive",16777216],["shmem",1048576],["page_cache_other",0],["slab",3145728],["kernel_stack",262144],["pagetables",524288],["percpu",131072],["vmalloc",0],["kernel_other",131072],["sock",1048576]]
EOT
check "v2 fixture: the parts in order" diff -u want got
palloc-explain --sysroot "$F/sysroot-explain" --json \
	/sys/fs/cgroup/memory/job >v1.json
check "v1 fixture: the parts add up exactly" jqe --argjson m $M '
	.cgroup_version == 1 and .usage_bytes == 60 * $m
	and .unexplained_bytes == 0 and .working_set_bytes == 48 * $m
	and .headroom_bytes == 36 * $m and .high_bytes == null
	and ([.parts[] | select(.name == "kernel") | .bytes] == [2 * $m])' v1.json
palloc-explain --sysroot "$F/sysroot-cgroup2" --json -C -p 100 >c2.json
check "palloc-cgroup's v2 fixture: the sum and the rest" adds_up c2.json
diag "sysroot-cgroup2: unexplained $(jq .unexplained_bytes c2.json) of $(jq .usage_bytes c2.json)"
palloc-explain --sysroot "$F/sysroot-v1" --json -C -p 300 >c1.json
check "palloc-cgroup's v1 fixture: kernel memory unknown (null)" jqe '
	(.parts[] | select(.name == "kernel") | .bytes) == null' c1.json
check "palloc-cgroup's v1 fixture: the sum and the rest" adds_up c1.json
palloc-explain --sysroot "$F/sysroot-explain" /sys/fs/cgroup/app >v2.txt
check "table: usage, working set, headroom, parts" sh -c '
	grep -q "usage 94.0 MiB, working set 78.0 MiB, limit 128.0 MiB (headroom 34.0 MiB), high 112.0 MiB (headroom 18.0 MiB)" v2.txt &&
	grep -Eq "^kernel +anon +64.0 MiB +68.1%" v2.txt && grep -Eq "^ +unexplained +0 B " v2.txt'
palloc-explain --sysroot "$F/sysroot-explain" --prom /sys/fs/cgroup/app >v2.prom
check "--prom: labelled by cgroup (its directory)" grep -Eqx \
	'palloc_explain_part_bytes\{cgroup=".*/sys/fs/cgroup/app",layer="kernel",part="anon"\} 67108864' \
	v2.prom
expect_fail 2 palloc-explain --sysroot "$F/sysroot-explain" /nonexistent >/dev/null 2>err
check "no such cgroup: exit 2" test $? -eq 0

# Live: the caller's cgroup.
palloc-explain --json >self.json
check "live, the caller's cgroup: the parts add up" adds_up self.json
u=$(jq .unexplained_bytes self.json) t=$(jq .usage_bytes self.json)
diag "live cgroup $(jq -r '.cgroup_path' self.json) (v$(jq .cgroup_version self.json)): usage $t, unexplained $u"
check "live: |unexplained| <= 5% of usage" awk -v u="$u" -v t="$t" \
	'BEGIN { if (u < 0) u = -u; exit !(u <= 0.05 * t) }'

# Live: a workload alone in a new memory cgroup (v1 or v2), when allowed.
v1=/sys/fs/cgroup/memory
v2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
if [ -w "$v1" ] && [ -e "$v1/memory.usage_in_bytes" ]; then
	cg=$v1/palloc-explain-test.$$
elif [ -n "$v2" ] && [ -w "$v2" ] && grep -qw memory "$v2/cgroup.subtree_control" 2>/dev/null; then
	cg=$v2/palloc-explain-test.$$
fi
if [ -n "$cg" ] && mkdir "$cg" 2>/dev/null; then
	sh -c 'echo $$ >"$1/cgroup.procs" && exec explain-workload \
		--seconds 300 mmap file --file "$2"' sh "$cg" "$T/cg.dat" \
		>truth.txt 2>workload.err &
	pid=$!
	retry 300 0.2 grep -q ready truth.txt
	palloc-explain --json "$cg" >cg.json
	stop_workload
	u=$(jq .unexplained_bytes cg.json) t=$(jq .usage_bytes cg.json)
	diag "own cgroup: usage $t, anon $(jq '.parts[0].bytes' cg.json), page cache $(jq '[.parts[] | select(.name | startswith("page_cache")) | .bytes] | add' cg.json), unexplained $u"
	check "own cgroup: anon holds the 64 MiB mmap, page cache the 100 MiB file" \
		jqe --argjson m $M '.parts[0].bytes >= 64 * $m and
		([.parts[] | select(.name | startswith("page_cache")) | .bytes]
		| add) >= 100 * $m' cg.json
	check "own cgroup: |unexplained| <= 5% of usage" awk -v u="$u" -v t="$t" \
		'BEGIN { if (u < 0) u = -u; exit !(u <= 0.05 * t) }'
else
	cg=
	skip "cannot make a memory cgroup here"
	skip "cannot make a memory cgroup here"
fi
done_testing
