#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-cgroup on bad input: one line on stderr, exit 2, nothing on stdout.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-kernel.sh"

plan 40
F=$top_srcdir/t/fixtures
G=$F/sysroot-garbage

fails "no such process" "^palloc-cgroup: no such process '2147483647'\$" \
	palloc-cgroup --json 2147483647
fails "a directory that is not a cgroup" \
	"^palloc-cgroup: not a memory cgroup '$T': no memory.current" \
	palloc-cgroup --json "$T"
fails "a path that does not exist" \
	"^palloc-cgroup: cannot open cgroup '$T/none': No such file or directory\$" \
	palloc-cgroup "$T/none"
fails "a cgroup without memory files" "not a memory cgroup '.*/not-memory'" \
	palloc-cgroup --sysroot "$G" /sys/fs/cgroup/not-memory
fails "garbage memory.current" \
	"cannot parse '.*/bad-current/memory.current': expected a number or 'max'\$" \
	palloc-cgroup --sysroot "$G" --json
fails "negative memory.max" "cannot parse '.*/bad-max/memory.max'" \
	palloc-cgroup --sysroot "$G" --prom /sys/fs/cgroup/bad-max
fails "truncated memory.stat" \
	"cannot parse '.*/trunc-stat/memory.stat': line 2 is not 'key value'\$" \
	palloc-cgroup --sysroot "$G" /sys/fs/cgroup/trunc-stat
fails "empty memory.stat" "cannot parse '.*/empty-stat/memory.stat': empty file\$" \
	palloc-cgroup --sysroot "$G" --json /sys/fs/cgroup/empty-stat
fails "garbage memory.pressure" \
	"cannot parse '.*/bad-pressure/memory.pressure': not PSI lines\$" \
	palloc-cgroup --sysroot "$G" --json /sys/fs/cgroup/bad-pressure

# A host whose cgroups have no memory controller (v2, none enabled).
mkdir -p none/proc/self none/sys/fs/cgroup
echo "0::/" >none/proc/self/cgroup
echo "25 22 0:23 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw" \
	>none/proc/self/mountinfo
fails "no memory controller" \
	"^palloc-cgroup: no memory cgroup for process 'self'" \
	palloc-cgroup --sysroot "$T/none"

# A process that has exited (a zombie: its /proc/PID/cgroup names the
# root cgroup, which must not be reported as its cgroup).
fails_exited "exited process" "^palloc-cgroup: process '%s' has exited\$" \
	palloc-cgroup --json

# --watch on a process that exits stops with 0; on a missing one, exit 2.
fails "--watch on no such process" "no such process" \
	palloc-cgroup --watch 1 2147483647

check "two arguments: usage error" usage_fails palloc-cgroup 1 2
check "--json --prom: usage error" usage_fails palloc-cgroup --json --prom
check "unknown option: usage error" usage_fails palloc-cgroup --frobnicate
palloc-cgroup --output-file never.json --json 2147483647 2>/dev/null
check "--output-file FILE: no file on error" [ -z "$(ls never.json* 2>/dev/null)" ]
done_testing
