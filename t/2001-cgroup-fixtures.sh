#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-cgroup on --sysroot fixtures: v2, v1, hybrid; exact values.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-kernel.sh"

need jq
plan 13
F=$top_srcdir/t/fixtures

# summary FIXTURE ARGS...: the top-level values, one compact line.
summary() {
	_f=$1
	shift
	palloc-cgroup --sysroot "$F/$_f" --json "$@" >"$_f.json" &&
		jq -c '[.cgroup_version, .cgroup_path,
		(.directory | sub(".*/fixtures/"; "")), .usage_bytes,
		.limit_bytes, .limit_unlimited, .high_bytes, .high_unlimited,
		.peak_bytes, .swap_usage_bytes, .failcnt_count,
		.inactive_file_bytes, .working_set_bytes, .headroom_bytes]' \
		"$_f.json"
}

# 1. cgroup v2: every file, and the working set worked example of the
# README: 104857600 - 20971520 = 83886080; headroom 268435456 - 104857600.
summary sysroot-cgroup2 >got
cat >want <<'EOT'
[2,"/user.slice/app.service","sysroot-cgroup2/sys/fs/cgroup/user.slice/app.service",104857600,268435456,false,null,true,134217728,1048576,null,20971520,83886080,163577856]
EOT
check "v2: usage, limits, peak, swap, working set, headroom" diff -u want got
jq -c '[.low_bytes, .min_bytes, .swap_limit_bytes, .swap_limit_unlimited,
	.high_headroom_bytes, .stat.anon_bytes, .stat.inactive_file_bytes,
	.stat.pgfault_count, .stat.workingset_refault_file_count,
	.stat.pgscan_kswapd_count]' sysroot-cgroup2.json >got
echo '[0,0,null,true,null,62914560,20971520,123456,17,60]' >want
check "v2: low, min, swap.max, memory.stat sizes and counts" diff -u want got
jq -c '.raw, .events, .pressure' sysroot-cgroup2.json >got
cat >want <<'EOT'
{"future_counter":42}
{"low_count":0,"high_count":7,"max_count":2,"oom_count":1,"oom_kill_count":1,"oom_group_kill_count":0,"sock_throttled_count":3}
{"some":{"avg10_ratio":0.015,"avg60_ratio":0.0075,"avg300_ratio":0.0025,"total_ns":2500000000},"full":{"avg10_ratio":0.005,"avg60_ratio":0.0025,"avg300_ratio":0,"total_ns":1000000000}}
EOT
check "v2: unknown stat key under raw, events (new one kept), PSI" \
	diff -u want got
check "v2: JSON keys in the documented order" sh -c "jq -c 'keys_unsorted' \
	sysroot-cgroup2.json | grep -qx '\\[\"format\",\"format_version\",\"time_ns\",\"pid\",\"cgroup_version\",\"cgroup_path\",\"directory\",\"usage_bytes\",\"limit_bytes\",\"limit_unlimited\",\"high_bytes\",\"high_unlimited\",\"low_bytes\",\"min_bytes\",\"peak_bytes\",\"swap_usage_bytes\",\"swap_limit_bytes\",\"swap_limit_unlimited\",\"failcnt_count\",\"inactive_file_bytes\",\"working_set_bytes\",\"headroom_bytes\",\"high_headroom_bytes\",\"stat\",\"raw\",\"events\",\"pressure\"\\]'"

# 2. Working set floored at 0: usage 1000, inactive_file 4096 (PID 200).
summary sysroot-cgroup2 200 >got
cat >want <<'EOT'
[2,"/floor.slice","sysroot-cgroup2/sys/fs/cgroup/floor.slice",1000,null,true,null,null,null,null,null,4096,0,null]
EOT
check "v2: working set floored at 0" diff -u want got

# 3. A v2 root group, given as a directory: memory.stat, no memory.current.
summary sysroot-cgroup2 /sys/fs/cgroup >got
cat >want <<'EOT'
[2,null,"sysroot-cgroup2/sys/fs/cgroup",null,null,null,null,null,null,null,null,null,null,null]
EOT
check "v2 root directory: usage unknown (null), not 0" diff -u want got

# 4. cgroup v1: README's example 52428800 - 10485760 = 41943040.
summary sysroot-v1 >got
cat >want <<'EOT'
[1,"/docker/abc","sysroot-v1/sys/fs/cgroup/memory/docker/abc",52428800,134217728,false,null,null,67108864,1048576,5,10485760,41943040,81788928]
EOT
check "v1: usage, limit, peak, memsw swap, failcnt, working set" \
	diff -u want got
jq -c '[.stat.total_inactive_file_bytes, .stat.total_pgfault_count,
	.stat.hierarchical_memory_limit_bytes, .stat.swapcached_bytes,
	.events.oom_kill_count, .events.oom_count, .pressure, .raw]' \
	sysroot-v1.json >got
echo '[10485760,45000,134217728,null,2,null,null,{}]' >want
check "v1: memory.stat total_ keys, oom_kill, no PSI" diff -u want got
summary sysroot-v1 300 >pid300
summary sysroot-v1 >self
check "v1: PID 300 in the same cgroup as the reader" cmp pid300 self

# 5. Hybrid: the empty v2 group is passed over for the v1 memory
# controller; "no limit" (PAGE_COUNTER_MAX pages) is unlimited.
summary sysroot-hybrid >got
cat >want <<'EOT'
[1,"/process_api/job42","sysroot-hybrid/sys/fs/cgroup/memory/process_api/job42",3207168,null,true,null,null,8491008,0,0,77824,3129344,null]
EOT
check "hybrid: v1 memory beside empty v2; unlimited limit" diff -u want got

# 6. Prometheus: values, names, promtool.
palloc-cgroup --sysroot "$F/sysroot-cgroup2" --prom >v2.prom
grep -E '^palloc_cgroup_memory_((usage|limit|working_set)_bytes|events_total.*"oom_kill"|pressure_stall)' \
	v2.prom >got
cat >want <<'EOT'
palloc_cgroup_memory_usage_bytes{cgroup="/user.slice/app.service"} 104857600
palloc_cgroup_memory_limit_bytes{cgroup="/user.slice/app.service"} 268435456
palloc_cgroup_memory_working_set_bytes{cgroup="/user.slice/app.service"} 83886080
palloc_cgroup_memory_events_total{cgroup="/user.slice/app.service",event="oom_kill"} 1
palloc_cgroup_memory_pressure_stall_seconds_total{cgroup="/user.slice/app.service",kind="some"} 2.5
palloc_cgroup_memory_pressure_stall_seconds_total{cgroup="/user.slice/app.service",kind="full"} 1
EOT
check "--prom values" diff -u want got
palloc-cgroup --sysroot "$F/sysroot-v1" --prom >v1.prom
palloc-cgroup --sysroot "$F/sysroot-hybrid" --prom >hy.prom
promtool_ok "--prom passes promtool check metrics (v2, v1, hybrid)" \
	v2.prom v1.prom hy.prom
check "--prom: every name palloc_, _bytes or _total or _ratio" sh -c \
	"grep -v '^#' v2.prom v1.prom | sed 's/^[^:]*://; s/[{ ].*//' | sort -u |
	grep -vE '^palloc_[a-z0-9_]+_(bytes|total|ratio)\$' | grep -q . && exit 1
	exit 0"
done_testing
