#!/bin/sh
# SPDX-License-Identifier: MIT
# What the agent costs every short process at start. Its
# static tables (the free path's 264 KiB filter above all) start zero and
# stay untouched but for the slots it marks, so a process that samples
# nothing does not fault them in (a memset of the table did: 84 page
# faults of /bin/true's 435, some 0.1 ms); and the marks of the blocks
# dlsym allocated before the real allocator was known survive the
# agent's start.
. "$top_srcdir/t/lib.sh"
need_agent
grep -q '\[always\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null &&
	skip_all "transparent huge pages always on: the .bss may be one huge page"

plan 3

# bss_kb PID: resident kB of the agent's .bss (the anonymous mapping that
# follows libpalloc.so's file mappings)
bss_kb() {
	awk -v lib="$PALLOC_AGENT" '
		/^[0-9a-f]+-[0-9a-f]+ / {
			cur = 0
			if ($6 == lib) { seen = 1; next }
			if (seen && NF == 5) { cur = 1; seen = 0 }
			else seen = 0
		}
		cur && /^Rss:/ { print $2; exit }
	' "/proc/$1/smaps"
}

LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT=/dev/null sleep 60 &
pid=$!
# asleep in main: the agent's start is over
retry 100 0.1 sh -c "grep -q '^[0-9]* (sleep) S' /proc/$pid/stat &&
	grep -q libpalloc /proc/$pid/maps"
check "sleep started under the agent" test $? -eq 0
kb=$(bss_kb $pid)
check "the agent's .bss is found in smaps (${kb:-?} kB resident)" \
	test -n "$kb"
# (the record's state in .bss brought it to 204 kB; the table is 264)
check "... and its 264 KiB table is not faulted in (${kb:-?} kB < 240 kB)" \
	test "${kb:-999}" -lt 240
kill $pid
wait $pid 2>/dev/null
done_testing
