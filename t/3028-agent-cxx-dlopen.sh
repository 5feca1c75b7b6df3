#!/bin/sh
# SPDX-License-Identifier: MIT
# A C program that dlopens C++ code (RTLD_LOCAL: libstdc++ and libgcc_s
# come with it, outside the global scope) whose operator new fails: the
# C++ code catches std::bad_alloc exactly as without the agent. The agent
# found no operator new at its start (a C program has none); a failure
# then takes the runtime loaded since (hooks_cxx.c), and the exception
# goes through the agent's forwarding frame with that runtime's unwinder.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
need_cxx
[ -x /usr/bin/gcc ] || skip_all "gcc is not installed"

plan 8

cat >plugin.cc <<'CEOF'
#include <cstdint>
#include <cstdlib>
#include <new>

// n bytes by new[]: 1 when std::bad_alloc was caught, 0 when not thrown,
// 100 for any other exception.
static int new_throws(size_t n)
{
	char *volatile p;

	try {
		p = new char[n];
	} catch (const std::bad_alloc &) {
		return 1;
	} catch (...) {
		return 100;
	}
	delete[] p;
	return 0;
}

// 42 when new[] of a quarter of the address space threw bad_alloc, plus
// 43 when its nothrow form gave NULL: 85; a small new[] must not throw.
extern "C" int plugin_run(void)
{
	volatile size_t huge = SIZE_MAX / 4;
	int rc = 42 * new_throws(huge) + 1000 * new_throws(4096);

	rc += new (std::nothrow) char[huge] ? 0 : 43;
	// Kept to the end: in use at exit, sampled at rate 1.
	void *volatile q = malloc(54321);
	return q ? rc : 2000;
}
CEOF
cat >host.c <<'CEOF'
#include <dlfcn.h>
#include <stdio.h>

/* The exit status of plugin_run() in the library argv[1] (3: none). */
int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	int (*run)(void) = h ? (int (*)(void))dlsym(h, "plugin_run") : NULL;

	if (run)
		return run();
	fprintf(stderr, "host: %s\n", h ? "no plugin_run" : dlerror());
	return 3;
}
CEOF
g++ -O1 -fPIC -shared -o plugin.so plugin.cc &&
	gcc -O1 -o host host.c -ldl ||
	{ echo "Bail out! g++ or gcc failed"; exit 1; }

./host ./plugin.so
check "without the agent: bad_alloc caught, nothrow NULL (85)" [ $? -eq 85 ]
check "the host does not link libstdc++" sh -c '! ldd ./host | grep -q stdc++'

# run NAME [VAR=VALUE...]: the host under the agent, in a directory of
# its own, at rate 1.
run() {
	name=$1
	shift
	mkdir $name && (cd $name && env LD_PRELOAD=$PALLOC_AGENT "$@" \
		PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=p.%p.pb.gz ../host \
		../plugin.so 2>err)
	rc=$?
	check "$name: bad_alloc caught, nothrow NULL, as without the agent" \
		[ $rc -eq 85 ]
	[ $rc -eq 85 ] || diag "$name: status $rc: $(head -3 $name/err)"
	check "$name: nothing on stderr" [ ! -s $name/err ]
	f=$(one_profile "$name/p.*.pb.gz")
	raw_values "$f" $name.v 2>/dev/null
	check "$name: malloc(54321) after the catch profiled" \
		grep -q '^1 54321 1 54321 |' $name.v
}
run dwarf
run fp PALLOC_UNWIND=fp
