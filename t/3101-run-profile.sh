#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run with the real agent: which files it reports, the summary line,
# -q, the output pattern, --no-symbolize, signals and statuses with a profile.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need run-workload
. "$top_srcdir/t/lib-run.sh"
line_re() { run_line_re "$1" "inuse: $2"; }

# run_ready ARGS...: palloc-run ARGS in the background ($pid), its output
# in out and err; back when the workload says "ready" (or after 10 s).
run_ready() {
	palloc-run "$@" >out 2>err &
	pid=$!
	retry 100 0.1 grep -q ready out 2>/dev/null
}
# stop_rc: SIGTERM to palloc-run, which forwards it; its status in $rc.
stop_rc() {
	kill -TERM $pid
	wait $pid
	rc=$?
}

# 100 live blocks of 10000 bytes in keep_blocks, as many freed in
# churn_blocks; every allocation recorded.
palloc-run -r 1 -o w.pb.gz run-workload 100 10000 5 >out 2>err
rc=$?
check "the program's status with a profile written: 5" [ $rc -eq 5 ]
check "profile written where -o says" test -s w.pb.gz
check "exactly one stderr line" [ "$(wc -l <err)" -eq 1 ]
if grep -Eq "$(line_re w.pb.gz keep_blocks)" err; then
	ok "summary line: path, totals, top inuse function"
else
	not_ok "summary line: path, totals, top inuse function"
	sed 's/^/# /' err
fi

# Little still in use (100 kept and main's table, 2000 freed: 4.8 %): the
# line names the top alloc site, where the time went, not the small live one.
palloc-run -r 1 -o c.pb.gz run-workload 100 10000 churn:19 >c.out 2>c.err
if grep -Eq "^palloc-run: wrote c.pb.gz: alloc .* in 2101 objects, inuse .* in 101 objects, top alloc: churn_blocks\$" c.err; then
	ok "little in use: the summary names the top alloc function"
else
	not_ok "little in use: the summary names the top alloc function"
	sed 's/^/# /' c.err
fi

# The line's totals are the profile's, as go tool pprof reads them.
for t in alloc_objects inuse_objects; do
	pprof -symbolize=none -top -sample_index=$t w.pb.gz >top.$t 2>top.err
done
n_alloc=$(sed -n 's/.*alloc .* in \([0-9]*\) objects, inuse.*/\1/p' err)
n_inuse=$(sed -n 's/.*inuse .* in \([0-9]*\) objects, top.*/\1/p' err)
diag "alloc $n_alloc objects, inuse $n_inuse objects"
check "alloc objects: pprof's alloc_objects total" \
	grep -q "of $n_alloc total" top.alloc_objects
check "inuse objects: pprof's inuse_objects total" \
	grep -q "of $n_inuse total" top.inuse_objects
pprof -symbolize=none -top -sample_index=inuse_space w.pb.gz >top.inuse 2>top.err
if grep -Eq '^ *976\.56kB .* keep_blocks$' top.inuse; then
	ok "pprof: keep_blocks holds 976.56kB in use, by name, without binaries"
else
	not_ok "pprof: keep_blocks holds 976.56kB in use"
	sed 's/^/# /' top.inuse top.err | head -20
fi

# -q: nothing from palloc-run on stderr, the profile is still written.
palloc-run -q -o q.pb.gz run-workload 10 1000 >out 2>err
rc=$?
check "-q: exit 0, empty stderr, profile written" \
	test $rc -eq 0 -a ! -s err -a -s q.pb.gz

# The default pattern, relative paths, and a file there before the run
# is neither reported nor touched.
mkdir d && cd d || exit 99
echo old >palloc.old.1.pb.gz
palloc-run -r 1 run-workload 10 1000 >out 2>err
cd "$T" || exit 99
set -- d/palloc.run-workload.*.pb.gz
check "default pattern palloc.%e.%p.pb.gz in the working directory" \
	test $# -eq 1 -a -s "$1"
check "the earlier file is not reported" \
	grep -Eq "$(line_re "palloc.run-workload.[0-9]+.pb.gz" keep_blocks)" d/err
check "the earlier file is left as it was" test "$(cat d/palloc.old.1.pb.gz)" = old

# %p in the pattern and a forked child: one profile per process.
palloc-run -r 1 -o 'f.%p.pb.gz' run-workload 10 1000 fork >out 2>err
rc=$?
set -- f.*.pb.gz
check "fork: status 0, two profiles" test $rc -eq 0 -a $# -eq 2
check "fork: two summary lines" [ "$(grep -Ec "$(line_re 'f\.[0-9]+\.pb\.gz' keep_blocks)" err)" -eq 2 ]

# --no-follow: neither forked nor exec'd children are profiled.
palloc-run -r 1 --no-follow -o 'nf.%p.pb.gz' run-workload 10 1000 fork \
	>out 2>err
set -- nf.*.pb.gz
check "--no-follow, fork: one profile, the parent's" test $# -eq 1
palloc-run -q --no-follow -o 'nfe.%p.pb.gz' sh -c 'env' >env.out 2>err
check "--no-follow, exec: the agent is not in the children's LD_PRELOAD" \
	test "$(grep -c "libpalloc" env.out)" -eq 0

# --no-symbolize: addresses only, the summary names module+offset.
palloc-run -r 1 --no-symbolize -o raw.pb.gz run-workload 10 1000 >out 2>err
pprof -symbolize=none -top -sample_index=inuse_space raw.pb.gz >top.raw 2>top.err
check "--no-symbolize: pprof shows no function names" \
	test -s top.raw -a "$(grep -c keep_blocks top.raw)" -eq 0
check "--no-symbolize: the line names module+offset" \
	grep -Eq "$(line_re raw.pb.gz 'run-workload\+0x[0-9a-f]+')" err

# A signal forwarded to a program that handles it: it exits normally and
# its profile is written.
run_ready -r 1 -o sig.pb.gz run-workload 10 1000 wait
stop_rc
check "SIGTERM forwarded, handled: status 0, profile written" \
	test $rc -eq 0 -a -s sig.pb.gz
check "SIGTERM forwarded: one summary line" \
	grep -Eq "$(line_re sig.pb.gz keep_blocks)" err

# -i with %n: one profile per interval of a program with threads (a
# single-threaded one writes them only as it allocates), each reported;
# --peak adds the two peak sample types. %s is no conversion: it stays as
# it is.
run_ready -r 1 -i 0.5 --peak -o 'iv.%s.%n.pb.gz' run-workload 10 1000 serve
sleep 1.8
stop_rc
n=$(ls iv.%s.*.pb.gz 2>/dev/null | wc -l)
check "-i 0.5: several profiles over 2 s, status 0 ($n, exit $rc)" \
	test $rc -eq 0 -a "$n" -ge 3
check "-i 0.5: one summary line per profile" \
	[ "$(grep -Ec "$(line_re 'iv\.%s\.([0-9]+|peak)\.pb\.gz' keep_blocks)" err)" -eq "$n" ]
pprof -symbolize=none -raw "$(ls iv.%s.*.pb.gz | tail -1)" >peak.raw 2>&1
check "--peak: peak_inuse_objects and peak_inuse_space sample types" \
	grep -q 'peak_inuse_objects/count peak_inuse_space/bytes' peak.raw

# A program that execs a static one writes no profile: one warning line,
# the status stays the program's.
if cc -static -o static-prog -x c - 2>cc.err <<EOF
int main(void) { return 3; }
EOF
then
	palloc-run -o st.pb.gz sh -c 'exec ./static-prog' >out 2>err
	rc=$?
	check "exec of a static program: its status (3)" [ $rc -eq 3 ]
	check "exec of a static program: one line, no profile" diff -u - err <<EOF
palloc-run: warning: 'sh' wrote no profile 'st.pb.gz': did it exec a static or setuid program, or clear LD_PRELOAD?
EOF
else
	skip "cc -static does not work (libc6-dev's libc.a?)"
	skip "cc -static does not work"
fi

# Twelve processes: the ten with the most allocated get a line each, one
# line totals the other two (n = 1, 2: 2n+1 objects of which n+1 live).
# Lines in path order, which is not n's when the pids wrap: sorted here.
# The shell execs the last one (whether a shell that ends with _exit
# writes a profile is not the question here).
twelve='for n in 1 2 3 4 5 6 7 8 9 10 11; do
	run-workload $n 100000 || exit 1; done; exec run-workload 12 100000'
mkdir many
palloc-run -r 1 -o "many/p.%p.pb.gz" sh -c "$twelve" >out 2>err
check "12 processes: 12 profiles" [ "$(ls many | wc -l)" -eq 12 ]
sed 's|^palloc-run: wrote many/p\.[0-9]*\.pb\.gz:|palloc-run: wrote many/p.PID.pb.gz:|' \
	err | sort >err.sorted
sort >many.want <<EOF
palloc-run: wrote many/p.PID.pb.gz: alloc 586.0 KiB in 7 objects, inuse 293.0 KiB in 4 objects, top inuse: keep_blocks
palloc-run: wrote many/p.PID.pb.gz: alloc 781.3 KiB in 9 objects, inuse 390.7 KiB in 5 objects, top inuse: keep_blocks
palloc-run: wrote many/p.PID.pb.gz: alloc 976.6 KiB in 11 objects, inuse 488.3 KiB in 6 objects, top inuse: keep_blocks
palloc-run: wrote many/p.PID.pb.gz: alloc 1.1 MiB in 13 objects, inuse 586.0 KiB in 7 objects, top inuse: keep_blocks
palloc-run: wrote many/p.PID.pb.gz: alloc 1.3 MiB in 15 objects, inuse 683.6 KiB in 8 objects, top inuse: keep_blocks
palloc-run: wrote many/p.PID.pb.gz: alloc 1.5 MiB in 17 objects, inuse 781.3 KiB in 9 objects, top inuse: keep_blocks
palloc-run: wrote many/p.PID.pb.gz: alloc 1.7 MiB in 19 objects, inuse 879.0 KiB in 10 objects, top inuse: keep_blocks
palloc-run: wrote many/p.PID.pb.gz: alloc 1.9 MiB in 21 objects, inuse 976.6 KiB in 11 objects, top inuse: keep_blocks
palloc-run: wrote many/p.PID.pb.gz: alloc 2.1 MiB in 23 objects, inuse 1.0 MiB in 12 objects, top inuse: keep_blocks
palloc-run: wrote many/p.PID.pb.gz: alloc 2.3 MiB in 25 objects, inuse 1.1 MiB in 13 objects, top inuse: keep_blocks
palloc-run: and 2 more profiles with less allocated: alloc 586.0 KiB in 8 objects, inuse 293.0 KiB in 5 objects
EOF
check "12 profiles: the 10 largest summarized, one line for the other 2" \
	diff -u many.want err.sorted
grep '^palloc-run: wrote' err | sed 's/: alloc.*//' >many.order
check "12 profiles: the 10 lines in path order" sort -c many.order
rm -r many && mkdir many
palloc-run -q -r 1 -o "many/p.%p.pb.gz" sh -c "$twelve" >out 2>err
check "12 profiles, -q: nothing on stderr" [ ! -s err ]

# Whose malloc: palloc-run warns about a program with its own malloc that
# it does not export (the agent cannot tell from inside); a non-PIE program
# that takes malloc's address gets no warning (its calls reach the agent).
if command -v cc >/dev/null 2>&1; then
	cat >hid.c <<'CEOF'
#include <stddef.h>
#include <stdio.h>
static char heap[1 << 20] __attribute__((aligned(16)));
static size_t used;
__attribute__((visibility("hidden"))) void *malloc(size_t n)
{
	void *p = heap + used;

	used += (n + 15) & ~(size_t)15;
	return p;
}
int main(void)
{
	printf("%d\n", malloc(777) != NULL);
	return 0;
}
CEOF
	cat >np.c <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
void *(*volatile alloc_fn)(size_t);
int main(void)
{
	alloc_fn = malloc;
	printf("%d\n", alloc_fn(1000) != NULL);
	return 0;
}
CEOF
	cc -O0 -o hid hid.c && cc -O0 -fno-pie -no-pie -o np np.c ||
		echo "Bail out! cc failed"
	palloc-run -o hid.pb.gz ./hid >out 2>err
	check "own malloc, hidden: status 0" [ $? -eq 0 ]
	head -1 err >err.1
	check "own malloc, hidden: palloc-run warns first" diff -u - err.1 <<EOF
palloc-run: warning: './hid' has its own malloc, not exported: its own allocations will not be seen
EOF
	palloc-run -o np.pb.gz ./np >out 2>err
	check "non-PIE program: status 0" [ $? -eq 0 ]
	check "non-PIE program: only the summary line" \
		[ "$(wc -l <err)" -eq 1 -a "$(grep -Ec "$(run_line_re np.pb.gz)" err)" -eq 1 ]
else
	skip "no cc"
	skip "no cc"
	skip "no cc"
	skip "no cc"
fi

echo "1..$_n"
done_testing
