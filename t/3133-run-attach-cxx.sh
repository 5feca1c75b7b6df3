#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run -p PID on a threaded C++ program started plainly:
# idle in read(2) until told, then 4 threads each allocate
# a known amount with new and new[] and delete half of it. Attached at
# rate 1, the profile is exact (400 objects, 62.5 KiB; 200 in use) and
# names the threads' site; after the detach the program runs the same
# work again, keeps its thread count and exits 0.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-attach.sh"
need_cxx

plan 12

cat >threads.cc <<'CEOF'
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <pthread.h>
#include <unistd.h>

enum { NTHREADS = 4, PER = 100 };
static void *kept[NTHREADS][PER];

/* thread t: blocks of 64 * (t + 1) bytes, new[] (even t) or new (odd) */
__attribute__((noinline)) static void *thread_site(long t)
{
	size_t n = 64 * (size_t)(t + 1);

	return (t & 1) ? ::operator new(n) : static_cast<void *>(new char[n]);
}

static void *work(void *arg)
{
	long t = (long)arg;

	for (int i = 0; i < PER; i++)
		kept[t][i] = thread_site(t);
	for (int i = 0; i < PER / 2; i++) {
		if (t & 1)
			::operator delete(kept[t][i]);
		else
			delete[] static_cast<char *>(kept[t][i]);
	}
	return nullptr;
}

int main()
{
	char buf[64];

	printf("ready\n");
	fflush(stdout);
	for (int round = 1;; round++) {
		ssize_t n = read(0, buf, sizeof(buf) - 1);
		pthread_t th[NTHREADS];

		if (n < 0) {
			printf("read failed: %s\n", strerror(errno));
			return 3;
		}
		if (n == 0 || strncmp(buf, "quit", 4) == 0)
			break;
		for (long t = 0; t < NTHREADS; t++)
			pthread_create(&th[t], nullptr, work, (void *)t);
		for (int t = 0; t < NTHREADS; t++)
			pthread_join(th[t], nullptr);
		printf("done %d\n", round);
		fflush(stdout);
	}
	printf("bye\n");
	return 0;
}
CEOF
/usr/bin/g++ -O1 -g -o threads threads.cc -lpthread ||
	{ echo "Bail out! g++ failed"; exit 1; }

start_target ./threads
thr0=$(threads "$tp")
fds0=$(ls "/proc/$tp/fd" | sort | tr '\n' ' ')

check "attached at rate 1" attach_start "$tp" run.err -r 1 -o cxx.pb.gz
echo go >&3
check "the threads' work done while attached" \
	retry 300 0.1 grep -qx 'done 1' out.txt
check "palloc-dump reads the attached process's record" \
	sh -c "palloc-dump -t $tp >live.txt 2>live.err && grep -q thread_site live.txt"
attach_stop
check "detached: status 0" test "$rc" -eq 0
sed 's/^/# /' run.err
check "exact at rate 1: 400 objects, 62.5 KiB; 200 in use, 31.2 KiB" \
	grep -Eq "^palloc-run: wrote cxx\.pb\.gz: alloc 62\.5 KiB in 400 objects, inuse 31\.[0-9]+ KiB in 200 objects, top [a-z]+: thread_site$" run.err
palloc-dump -t 0 cxx.pb.gz >top.txt 2>top.err
check "the profile names the threads' allocation site" \
	grep -q 'thread_site' top.txt
check "not traced after the detach" test "$(tracer "$tp")" = 0
check "the same threads after the detach" test "$(threads "$tp")" = "$thr0"
check "the same descriptors after the detach" \
	test "$(ls "/proc/$tp/fd" | sort | tr '\n' ' ')" = "$fds0"
echo go >&3
check "runs on after the detach: the work again" \
	retry 300 0.1 grep -qx 'done 2' out.txt
quit_target

done_testing
