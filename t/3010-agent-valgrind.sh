#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent under valgrind's memcheck: no invalid access, no uninitialised
# use, and the profile still exact. Two things make it work: memcheck must
# not replace the agent's own malloc (--soname-synonyms=somalloc=
# nouserintercepts keeps its replacements in libc, behind the agent), and
# libunwind's address validation (a write(2) of a possibly unmapped page to
# a pipe) is a known false positive, suppressed below.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
need valgrind

plan 4

cat >vg.supp <<'SUPP'
{
   libunwind-validate-mem
   Memcheck:Param
   write(buf)
   fun:syscall
   obj:*/libunwind.so*
}
SUPP
prog=$(command -v alloc-exact)
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=vg.%e.pb.gz \
	timeout_run 300 valgrind -q --suppressions=vg.supp \
	--soname-synonyms=somalloc=nouserintercepts --error-exitcode=9 \
	"$prog" basic >truth.txt 2>vg.err
rc=$?
check "memcheck finds no error (exit $rc)" test $rc -eq 0
test $rc -eq 0 || sed 's/^/# /' vg.err | head -40
raw_values vg.alloc-exact.pb.gz v.txt && ok "profile valid" || not_ok "profile valid"
check "malloc site exact under valgrind" grep -q '^10 10010 6 6006 |' v.txt
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=vt.pb.gz \
	timeout_run 300 valgrind -q --suppressions=vg.supp \
	--soname-synonyms=somalloc=nouserintercepts --error-exitcode=9 \
	"$prog" threads 4 >/dev/null 2>vt.err
rc=$?
check "4 threads under memcheck: no error (exit $rc)" test $rc -eq 0
test $rc -eq 0 || sed 's/^/# /' vt.err | head -40
done_testing
