#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-explain with jemalloc and mimalloc (Debian's libjemalloc2 and
# libmimalloc2.0) preloaded after the agent: fragmentation (about 100 MB
# held free of 200 MB), threads, large blocks and a 64 MiB mmap, each part
# within 5 % of the truth and the unexplained rest within 5 % of Rss.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-explain.sh"
need_agent
need jq explain-workload
trap 'stop_workload; cleanup_tmp' EXIT

libdir=$(dirname "$(ldconfig -p 2>/dev/null |
	sed -n 's/.*libc\.so\.6 (libc6,x86-64) => //p' | head -1)")
[ -n "$libdir" ] && [ "$libdir" != . ] || libdir=/usr/lib/x86_64-linux-gnu

plan 36
for a in jemalloc mimalloc; do
	lib=$libdir/lib$a.so.2
	if [ ! -e "$lib" ]; then
		for i in $(seq 18); do skip "lib$a not installed"; done
		continue
	fi
	explain_scenario "$a-frag" "$lib" frag
	check "$a-frag: the allocator is $a" \
		jqe --arg a $a '.allocator == $a' "$a-frag.json"
	explain_scenario "$a-arenas" "$lib" arenas
	explain_scenario "$a-bigblocks" "$lib" bigblocks
	explain_scenario "$a-mmap" "$lib" mmap
done
done_testing
