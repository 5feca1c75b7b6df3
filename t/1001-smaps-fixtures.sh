#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-smaps on --sysroot fixtures: exact values (t/fixtures/*/README).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-kernel.sh"

need jq
plan 11
F=$top_srcdir/t/fixtures

# 1. Every field of the rollup, kB x 1024, and the unknown one under raw.
palloc-smaps --sysroot "$F/sysroot-cgroup2" --json 100 >app.json
jq -c '.processes[0] | del(.status)' app.json >got
cat >want <<'EOT'
{"pid":100,"command":"app","cmdline":"/usr/bin/app --serve","source":"smaps_rollup","rss_bytes":5120000,"pss_bytes":3584000,"pss_dirty_bytes":2867200,"pss_anon_bytes":3072000,"pss_file_bytes":409600,"pss_shmem_bytes":102400,"shared_clean_bytes":1843200,"shared_dirty_bytes":102400,"private_clean_bytes":307200,"private_dirty_bytes":2867200,"referenced_bytes":5017600,"anonymous_bytes":3072000,"ksm_bytes":0,"lazy_free_bytes":0,"anon_huge_pages_bytes":2097152,"shmem_pmd_mapped_bytes":0,"file_pmd_mapped_bytes":0,"shared_hugetlb_bytes":0,"private_hugetlb_bytes":0,"swap_bytes":65536,"swap_pss_bytes":65536,"locked_bytes":0,"uss_bytes":3174400,"raw":{"FutureField":8192}}
EOT
check "rollup fields in bytes, in order; unknown field kept under raw" \
	diff -u want got

# 2. /proc/PID/status.
jq -c '.processes[0].status' app.json >got
cat >want <<'EOT'
{"vm_peak_bytes":12288000,"vm_size_bytes":11264000,"vm_hwm_bytes":6144000,"vm_rss_bytes":5120000,"rss_anon_bytes":3072000,"rss_file_bytes":1945600,"rss_shmem_bytes":102400,"vm_swap_bytes":65536}
EOT
check "status fields in bytes" diff -u want got

# 3. The listing: largest PSS first, and the table for people (through
# libsmartcols: columns as wide as their widest cell).
palloc-smaps --sysroot "$F/sysroot-cgroup2" --json >all.json
check "listing sorted by PSS: 100 then 200" jqe \
	'[.processes[].pid] == [100, 200] and .denied_count == 0' all.json
palloc-smaps --sysroot "$F/sysroot-cgroup2" >table
cat >want <<'EOT'
PID       USS       PSS     RSS     SWAP COMMAND
100   3.0 MiB   3.4 MiB 4.9 MiB 64.0 KiB /usr/bin/app --serve
200 500.0 KiB 800.0 KiB 2.0 MiB      0 B /bin/sh
EOT
check "table" diff -u want table

palloc-smaps --sysroot "$F/sysroot-cgroup2" 100 >pidtable
cat >want <<'EOT'
PID     USS     PSS     RSS     SWAP COMMAND
100 3.0 MiB 3.4 MiB 4.9 MiB 64.0 KiB /usr/bin/app --serve

PID 100 (app) from smaps_rollup:
Rss             4.9 MiB Pss             3.4 MiB Pss_Dirty        2.7 MiB
Pss_Anon        2.9 MiB Pss_File      400.0 KiB Pss_Shmem      100.0 KiB
Shared_Clean    1.8 MiB Shared_Dirty  100.0 KiB Private_Clean  300.0 KiB
Private_Dirty   2.7 MiB Referenced      4.8 MiB Anonymous        2.9 MiB
KSM                 0 B LazyFree            0 B AnonHugePages    2.0 MiB
ShmemPmdMapped      0 B FilePmdMapped       0 B Shared_Hugetlb       0 B
Private_Hugetlb     0 B Swap           64.0 KiB SwapPss         64.0 KiB
Locked              0 B
VmHWM (peak)    5.9 MiB
EOT
check "table with a PID: every rollup field and the peak" diff -u want pidtable

# 4. A kernel without smaps_rollup: smaps summed (README's sums).
palloc-smaps --sysroot "$F/sysroot-nosmapsrollup" --json --maps 500 >old.json
jq -c '.processes[0] | [.source, .rss_bytes, .pss_bytes, .swap_bytes,
	.uss_bytes, .shared_clean_bytes, .shared_dirty_bytes,
	.anonymous_bytes, .pss_anon_bytes]' old.json >got
echo '["smaps",1740800,1671168,524288,1605632,69632,65536,1605632,null]' >want
check "no smaps_rollup: smaps summed per field" diff -u want got

# 5. --maps groups: kinds, the thread-stack guard rule, files by path.
jq -c '.processes[0].groups[] | [.kind, .path, .mapping_count,
	.size_bytes, .rss_bytes, .pss_bytes, .swap_bytes]' old.json >got
cat >want <<'EOT'
["heap",null,1,2097152,1048576,1048576,524288]
["anon",null,2,1052672,524288,524288,0]
["file","/usr/bin/server",2,69632,69632,36864,0]
["shmem","/dev/zero (deleted)",1,65536,65536,32768,0]
["stack",null,2,8523776,28672,28672,0]
["special","[vdso]",1,8192,4096,0,0]
EOT
check "--maps groups" diff -u want got
palloc-smaps --sysroot "$F/sysroot-nosmapsrollup" --json --maps --top 2 \
	500 >top.json
jq -c '.processes[0].top_mappings[] | [.start, .end, .perms,
	.offset_bytes, .kind, .path, .pss_bytes]' top.json >got
cat >want <<'EOT'
["0x1c00000","0x1e00000","rw-p",0,"heap","[heap]",1048576]
["0x7f1000000000","0x7f1000100000","rw-p",0,"anon",null,524288]
EOT
check "--maps --top 2: largest mappings by PSS" diff -u want got

# 6. Prometheus: exact lines, and promtool's approval.
palloc-smaps --sysroot "$F/sysroot-cgroup2" --prom >out.prom
grep -E '^palloc_smaps_(pss|uss|swap)_bytes' out.prom >got
cat >want <<'EOT'
palloc_smaps_pss_bytes{pid="100",command="app"} 3584000
palloc_smaps_pss_bytes{pid="200",command="sh"} 819200
palloc_smaps_swap_bytes{pid="100",command="app"} 65536
palloc_smaps_swap_bytes{pid="200",command="sh"} 0
palloc_smaps_uss_bytes{pid="100",command="app"} 3174400
palloc_smaps_uss_bytes{pid="200",command="sh"} 512000
EOT
check "--prom values" diff -u want got
palloc-smaps --sysroot "$F/sysroot-nosmapsrollup" --prom --maps >maps.prom
promtool_ok "--prom (and --maps) pass promtool check metrics" out.prom \
	maps.prom

# 7. --output-file writes the same bytes as stdout.
palloc-smaps --sysroot "$F/sysroot-cgroup2" --prom --output-file file.prom
check "--output-file FILE: same output as stdout" cmp out.prom file.prom
done_testing
