#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-mallinfo names the allocator right and fills the comparable keys
# where that allocator can say: glibc (python3), and jemalloc, mimalloc and
# tcmalloc preloaded after the agent.
. "$top_srcdir/t/lib.sh"
need_agent
need jq python3

libdir=$(dirname "$(ldconfig -p 2>/dev/null |
	sed -n 's/.*libc\.so\.6 (libc6,x86-64) => //p' | head -1)")
[ -n "$libdir" ] && [ "$libdir" != . ] || libdir=/usr/lib/x86_64-linux-gnu

# A python3 that allocates about 100 MB of 1000-byte objects, then
# sleeps (clock_nanosleep: the agent takes the allocator's figures there,
# palloc(7) "Threads", idle points).
workload='import time
x = [bytes(1000) for i in range(100000)]
open("ready", "w").close()
time.sleep(30)'

# start ALLOCATOR_LIB: run the workload with the agent (and the library).
start() {
	rm -f ready
	PALLOC_EXACT=1 LD_PRELOAD="$PALLOC_AGENT${1:+ $1}" \
		python3 -c "$workload" &
	pid=$!
	i=0
	until [ -e ready ] || [ $i -ge 200 ]; do sleep 0.1; i=$((i + 1)); done
}
stop() { kill $pid 2>/dev/null; wait $pid 2>/dev/null; }

# mallinfo_of NAME LIB: start the workload with LIB, palloc-mallinfo --json
# of it into NAME.json, and a test: the allocator is named NAME.
mallinfo_of() {
	start "$2"
	palloc-mallinfo --json $pid >"$1.json"
	check "$1: named" jqe ".allocator == \"$1\"" "$1.json"
}
trap 'stop; cleanup_tmp' EXIT

plan 18

start ""
palloc-mallinfo --json $pid >glibc.json
check "glibc: named" jqe '.allocator == "glibc"
	and (.allocator_object | test("libc\\.so"))' glibc.json
check "glibc: comparable keys in order, null where glibc cannot say" \
	jqe '(.comparable | keys_unsorted) == ["allocated_bytes",
	"active_bytes", "resident_bytes", "mapped_bytes", "retained_bytes",
	"free_bytes", "metadata_bytes", "arena_count"]
	and .comparable.active_bytes == null
	and .comparable.resident_bytes == null
	and .comparable.metadata_bytes == null
	and .comparable.allocated_bytes > 100000000
	and .comparable.mapped_bytes >= .comparable.allocated_bytes
	and .comparable.arena_count >= 1' glibc.json
check "glibc: allocated is mallinfo2 uordblks + hblkhd" \
	jqe '.comparable.allocated_bytes ==
	.specific.mallinfo2.uordblks_bytes + .specific.mallinfo2.hblkhd_bytes
	and .comparable.free_bytes == .specific.mallinfo2.fordblks_bytes' \
	glibc.json
check "glibc: one malloc_info arena per arena_count" \
	jqe '(.specific.arenas | length) == .comparable.arena_count
	and .specific.total.system_current_bytes > 0' glibc.json
palloc-mallinfo $pid >glibc.txt
check "glibc: table" grep -Eq '^allocator +glibc$' glibc.txt
palloc-mallinfo >list.txt
check "the list has the process with its allocator" \
	grep -Eq "^ *$pid +python3 +live +glibc +[0-9]+$" list.txt
palloc-mallinfo --prom $pid >glibc.prom
check "--prom: the allocator's families" \
	grep -q "^palloc_allocator_allocated_bytes{pid=\"$pid\",program=\"python3\"} [0-9]" glibc.prom
if command -v promtool >/dev/null; then
	check "--prom passes promtool check metrics" \
		sh -c 'promtool check metrics <glibc.prom >promtool.out 2>&1'
else
	skip "promtool (Debian prometheus) not installed"
fi
palloc-mallinfo --watch 0.2 $pid >watch.ndjson &
w=$!
sleep 1
kill $w
wait $w 2>/dev/null
check "--watch: JSON lines" \
	test "$(jq -c 'select(.allocator == "glibc") | .pid' watch.ndjson |
		sort -u)" = "$pid"
stop

if [ -e "$libdir/libjemalloc.so.2" ]; then
	mallinfo_of jemalloc "$libdir/libjemalloc.so.2"
	palloc-dump --stats --json $pid >je-stats.json
	check "jemalloc: every comparable key is filled" \
		jqe '[.comparable[] | select(. == null)] | length == 0' \
		jemalloc.json
	check "jemalloc: allocated <= active <= mapped" \
		jqe '.comparable.allocated_bytes <= .comparable.active_bytes
		and .comparable.active_bytes <= .comparable.mapped_bytes' \
		jemalloc.json
	a=$(jq .comparable.allocated_bytes jemalloc.json)
	e=$(jq .inuse_bytes je-stats.json)
	diag "jemalloc stats.allocated $a, agent exact inuse $e"
	check "jemalloc: allocated within 10% of the exact inuse" \
		test $((a * 10)) -ge $((e * 9)) -a $((a * 10)) -le $((e * 11))
	# The record keeps jemalloc's comparable figures only: no arena list.
	check "jemalloc: narenas from the record, arenas not kept" \
		jqe '.specific.narenas == .comparable.arena_count and
		(.specific.arenas | length) == 0' jemalloc.json
	stop
else
	for i in 1 2 3 4 5; do skip "libjemalloc2 not installed"; done
fi

if [ -e "$libdir/libmimalloc.so.2" ]; then
	mallinfo_of mimalloc "$libdir/libmimalloc.so.2"
	check "mimalloc: mapped filled, allocated null (it cannot say)" \
		jqe '.comparable.mapped_bytes > 100000000
		and .comparable.allocated_bytes == null
		and .specific.current_commit_bytes == .comparable.mapped_bytes' \
		mimalloc.json
	stop
else
	skip "libmimalloc2 not installed"
	skip "libmimalloc2 not installed"
fi

tc=
for f in "$libdir/libtcmalloc_minimal.so.4" "$libdir/libtcmalloc.so.4"; do
	[ -e "$f" ] && tc=$f && break
done
if [ -n "$tc" ]; then
	mallinfo_of tcmalloc "$tc"
	check "tcmalloc: allocated filled, active null" \
		jqe '.comparable.allocated_bytes > 100000000
		and .comparable.active_bytes == null' tcmalloc.json
	stop
else
	skip "libtcmalloc not installed"
	skip "libtcmalloc not installed"
fi
done_testing
