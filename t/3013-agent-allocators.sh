#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent wraps whatever allocator comes next (dlsym RTLD_NEXT): glibc,
# jemalloc, tcmalloc (which has its own operator new) or mimalloc, each
# preloaded after the agent. Exact values at rate 1 on each, and the edge
# cases behave as under that allocator alone.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof

libdir=$(dirname "$(ldd "$(command -v alloc-exact)" | awk '/libc\.so/ { print $3 }')")
libs=
for l in libjemalloc.so.2 libtcmalloc_minimal.so.4 libmimalloc.so.2; do
	[ -f "$libdir/$l" ] && libs="$libs $libdir/$l"
done
[ -n "$libs" ] || skip_all "no jemalloc, tcmalloc or mimalloc installed"

n=$(echo $libs | wc -w)
plan $((n * 19))

for lib in $libs; do
	name=$(basename "$lib")
	mkdir "$name" && cd "$name" || exit 99
	LD_PRELOAD="$PALLOC_AGENT:$lib" PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=p.pb.gz \
		alloc-exact-cxx basic >truth.txt
	check "$name: runs" test $? -eq 0
	raw_values p.pb.gz v.txt && ok "$name: profile valid" || not_ok "$name: profile valid"
	check_sites truth.txt v.txt
	for mode in errno overflow realloc0; do
		LD_PRELOAD="$lib" alloc-misc $mode >alone.$mode 2>&1
		LD_PRELOAD="$PALLOC_AGENT:$lib" PALLOC_SAMPLE_RATE=1 \
			PALLOC_OUTPUT=m.pb.gz alloc-misc $mode >with.$mode 2>&1
		# mimalloc changes errno on its first malloc, which the agent's
		# init makes earlier: compare the checks that do not depend
		# on first-use side effects.
		grep -v 'malloc keeps errno' alone.$mode >a && grep -v 'malloc keeps errno' with.$mode >b
		check "$name: $mode as without the agent" cmp -s a b
	done
	cd .. || exit 99
done
done_testing
