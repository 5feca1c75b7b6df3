#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that ends with _exit or _Exit (dash does; so do daemons and
# forked children) still writes its profile; a vfork child's _exit writes
# none and the parent's profile is whole; a forked child's _exit writes
# the child's own.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
need cc nm
nm -D --defined-only "$PALLOC_AGENT" | grep -qw _exit ||
	skip_all "the agent does not export _exit (libcore/agent/libpalloc.map)"

plan 12

cat >ex.c <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char *volatile p = malloc(12345);
	pid_t pid;
	int st;

	if (!p)
		return 99;
	if (strcmp(argv[1], "_exit") == 0)
		_exit(3);
	if (strcmp(argv[1], "_Exit") == 0)
		_Exit(4);
	pid = strcmp(argv[1], "vfork") == 0 ? vfork() : fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
		return 98;
	if (strcmp(argv[1], "fork") == 0)
		_exit(5);
	return 6;
}
CEOF
cc -O0 -o ex ex.c || { echo "Bail out! cc failed"; exit 1; }

# run MODE WANT: ex MODE at rate 1 in a directory of its own: exit WANT
run() {
	mkdir $1 && (cd $1 && LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 \
		PALLOC_OUTPUT=p.%p.pb.gz ../ex $1 2>err)
	check "$1: exit status $2" [ $? -eq $2 ]
}
run _exit 3
run _Exit 4
for m in _exit _Exit; do
	f=$(one_profile "$m/p.*.pb.gz")
	check "$m: one profile" [ -n "$f" ]
	raw_values "$f" $m.v 2>/dev/null
	check "$m: malloc(12345) still in use at _exit" \
		grep -q '^1 12345 1 12345 |' $m.v
done
run vfork 6
check "vfork: one profile, the parent's" [ "$(ls vfork/*.pb.gz | wc -l)" -eq 1 ]
run fork 5
check "fork: two profiles, parent's and child's" \
	[ "$(ls fork/*.pb.gz | wc -l)" -eq 2 ]
if command -v dash >/dev/null 2>&1; then
	mkdir dash && (cd dash && LD_PRELOAD=$PALLOC_AGENT \
		PALLOC_OUTPUT=p.%e.%p.pb.gz dash -c 'x=$(echo hi); echo $x' \
		>out 2>err)
	check "dash: two profiles, the shell's and its \$(...) child's" \
		[ "$(ls dash/p.dash.*.pb.gz | wc -l)" -eq 2 ]
else
	skip "dash is not installed"
fi
check "no agent message on any stderr" [ -z "$(cat */err)" ]
done_testing
