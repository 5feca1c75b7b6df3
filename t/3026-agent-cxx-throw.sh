#!/bin/sh
# SPDX-License-Identifier: MIT
# A std::bad_alloc that the real operator new throws through the agent's
# forwarding frame runs that frame's cleanup: the thread's guard is
# released, and what it allocates after the catch is profiled. The agent
# carries its own _Unwind_Resume and personality routine, which forward to
# the unwinder's (it does not link libgcc_s, for the start-up cost).
# (A C program that dlopens C++ code: t/3028.)
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
need_cxx

plan 4

cat >thrower.cc <<'CEOF'
#include <cstdint>
#include <cstdlib>
#include <new>

// new[] of a quarter of the address space: the real operator new finds no
// memory and throws std::bad_alloc through the agent's operator new[].
extern "C" int throw_and_alloc(void)
{
	volatile size_t huge = SIZE_MAX / 4;
	int caught = 0;

	try {
		char *volatile p = new char[huge];
		delete[] p;
	} catch (const std::bad_alloc &) {
		caught = 1;
	}
	// Kept to the end: in use at exit, sampled at rate 1.
	void *volatile q = malloc(54321);
	return caught && q ? 0 : 1;
}
CEOF
cat >main.cc <<'CEOF'
extern "C" int throw_and_alloc(void);
int main() { return throw_and_alloc(); }
CEOF
g++ -O1 -o cxxprog main.cc thrower.cc ||
	{ echo "Bail out! g++ failed"; exit 1; }

# run NAME PROGRAM: the program at rate 1 in a directory of its own.
run() {
	mkdir $1 && (cd $1 && LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 \
		PALLOC_OUTPUT=p.%p.pb.gz ../$2 2>err)
	check "$1: caught std::bad_alloc, exit 0" [ $? -eq 0 ]
	f=$(one_profile "$1/p.*.pb.gz")
	check "$1: one profile" [ -n "$f" ]
	raw_values "$f" $1.v 2>/dev/null
	check "$1: malloc(54321) after the catch profiled" \
		grep -q '^1 54321 1 54321 |' $1.v
}
run cxx cxxprog
check "no agent message on stderr" [ ! -s cxx/err ]
done_testing
