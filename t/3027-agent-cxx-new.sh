#!/bin/sh
# SPDX-License-Identifier: MIT
# C++'s operator new when the allocation fails, under the agent: its
# operators call the real malloc themselves when the next ones are
# libstdc++'s (hooks_cxx.c, "direct") and fall back to libstdc++'s for
# the new_handler loop and std::bad_alloc; over jemalloc they forward.
# The program prints the same, at the default rate and at rate 1: a
# caught bad_alloc, a nothrow NULL, the handler called twice, sized and
# array deletes; the profile counts the program's blocks (no reentry).
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
need_cxx

plan 11

cat >fail.cc <<'CEOF'
#include <cstdio>
#include <cstdlib>
#include <new>

static int calls;
static void *reserve;

static void handler()
{
	calls++;
	if (reserve) {
		free(reserve);
		reserve = nullptr;
	} else {
		std::set_new_handler(nullptr);
	}
}

struct S {
	char c[40];
};

int main()
{
	volatile size_t huge = (size_t)1 << 62;

	try {
		char *p = new char[huge];
		std::printf("no bad_alloc %p\n", (void *)p);
	} catch (const std::bad_alloc &) {
		std::printf("bad_alloc\n");
	}
	char *q = new (std::nothrow) char[huge];
	std::printf("nothrow %s\n", q ? "non-null" : "null");
	std::set_new_handler(handler);
	reserve = std::malloc(100);
	try {
		char *p = new char[huge];
		std::printf("no bad_alloc %p\n", (void *)p);
	} catch (const std::bad_alloc &) {
		std::printf("bad_alloc after %d handler calls\n", calls);
	}
	std::set_new_handler(nullptr);
	long sum = 0;
	for (int i = 0; i < 1000; i++) {
		int *a = new int[i + 1];
		S *s = new S;
		a[i] = i;
		s->c[0] = (char)i;
		sum += a[i] + s->c[0];
		delete[] a;
		delete s;
	}
	std::printf("sum %ld\n", sum);
	return 0;
}
CEOF
# -O0: gcc elides a new/delete pair it can see through.
/usr/bin/g++ -O0 -o fail fail.cc || { echo "Bail out! g++ failed"; exit 1; }
./fail >base.out 2>base.err
check "without the agent: bad_alloc, nothrow null, 2 handler calls" \
	grep -qx 'bad_alloc after 2 handler calls' base.out

# run_fail NAME ENV...: the program under the agent with ENV; NAME.out,
# NAME.pb.gz, its comments in NAME.c.
run_fail() {
	name=$1
	shift
	env LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT="$name.pb.gz" "$@" \
		./fail >"$name.out" 2>"$name.err"
	rc=$?
	comments "$name.pb.gz" "$name.c"
	return $rc
}

for rate in default 1; do
	set --
	[ $rate = 1 ] && set -- PALLOC_SAMPLE_RATE=1
	run_fail "r$rate" "$@"
	check "rate $rate: exit 0, same output" cmp -s base.out "r$rate.out"
	check "rate $rate: nothing on stderr" test ! -s "r$rate.err"
	check "rate $rate: no reentries after warm-up" \
		grep -qx 'reentries after warm-up: 0' "r$rate.c"
done
# The 2000 blocks of the loop are in alloc_count and free_count (with
# libc's own and the failed calls), the same at both rates.
sed -n 's/^counters: //p' r1.c >r1.cnt
sed -n 's/^counters: //p' rdefault.c >rdefault.cnt
check "counters equal at the default rate and rate 1 ($(cat r1.cnt))" \
	cmp -s r1.cnt rdefault.cnt
set -- $(sed 's/[a-z_,]//g' r1.cnt)
check "rate 1: alloc_count $1 and free_count $2 count the loop's 2000" \
	test "${1:-0}" -ge 2000 -a "${2:-0}" -ge 2000

je=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
if [ -f "$je" ]; then
	env LD_PRELOAD="$PALLOC_AGENT:$je" PALLOC_OUTPUT=je.pb.gz ./fail \
		>je.out 2>je.err
	check "over jemalloc (forwarded): exit 0, same output" \
		cmp -s base.out je.out
	comments je.pb.gz je.c
	check "over jemalloc: no reentries after warm-up" \
		grep -qx 'reentries after warm-up: 0' je.c
else
	skip "libjemalloc2 is not installed"
	skip "libjemalloc2 is not installed"
fi
done_testing
