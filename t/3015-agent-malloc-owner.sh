#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent warns that allocations will not be seen exactly when an object
# before it really defines malloc: a non-PIE program that takes malloc's
# address (a canonical PLT entry: an undefined .dynsym symbol with a value,
# what dlsym(RTLD_DEFAULT) returns) gets no warning and its allocations
# counted; a program with its own malloc, or libc preloaded before the
# agent, gets a warning naming the culprit.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
need cc readelf

plan 12

cat >nopie.c <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
/* Code of a non-PIE program taking malloc's address gives malloc a
 * canonical PLT entry. */
void *(*volatile alloc_fn)(size_t);
int main(void)
{
	char *p;

	alloc_fn = malloc;
	p = alloc_fn(12345);

	printf("%d\n", p != NULL);
	return 0;
}
CEOF
cat >own.c <<'CEOF'
#include <stdio.h>
#include "own-malloc.h"
int main(void)
{
	printf("%d\n", malloc(777) != NULL);
	return 0;
}
CEOF
cc -O0 -fno-pie -no-pie -o nopie nopie.c && cc -O0 -o pie nopie.c &&
	cc -O0 -I"$top_srcdir/t/helper" -o own own.c || { echo "Bail out! cc failed"; exit 1; }

# The premise: nopie's malloc is an undefined symbol with a value.
readelf -W --dyn-syms nopie >nopie.syms
check "nopie: malloc is a canonical PLT entry (UND, non-zero value)" \
	awk '$8 ~ /^malloc(@|$)/ && $7 == "UND" && $2 !~ /^0+$/ { f = 1 }
		END { exit !f }' nopie.syms
readelf -W --dyn-syms own >own.syms
check "own: the program exports its own malloc" \
	awk '$8 == "malloc" && $7 != "UND" { f = 1 } END { exit !f }' own.syms

# run NAME PRELOAD PROG: PROG under PRELOAD at rate 1, NAME.out/.err/.pb.gz
run() {
	LD_PRELOAD=$2 PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=$1.pb.gz \
		"$3" >"$1.out" 2>"$1.err"
}
warn_pre='palloc: another library defining malloc is preloaded before the agent'

for p in nopie pie; do
	run $p "$PALLOC_AGENT" ./$p
	check "$p: runs" grep -qx 1 $p.out
	if [ -s $p.err ]; then
		not_ok "$p: nothing on stderr"
		sed 's/^/# /' $p.err
	else
		ok "$p: nothing on stderr"
	fi
	raw_values $p.pb.gz $p.v
	check "$p: its malloc(12345) is seen (1 12345 1 12345)" \
		grep -q '^1 12345 1 12345 |' $p.v
done

run own "$PALLOC_AGENT" ./own
check "own: runs" grep -qx 1 own.out
cat >own.want <<'WEOF'
palloc: the program 'own' defines malloc itself (an allocator linked in statically): its allocations will not be seen
WEOF
check "own: one warning, naming the program" diff -u own.want own.err

libc=$(ldd ./pie | awk '$1 ~ /^libc\.so/ { print $3 }')
run libc "$libc:$PALLOC_AGENT" ./pie
check "libc first: the warning names '$libc'" grep -qxF \
	"$warn_pre ('$libc'): allocations will not be seen; put libpalloc.so first in LD_PRELOAD" \
	libc.err
run libc2 "$PALLOC_AGENT:$libc" ./pie
check "agent first, then libc: no warning" [ ! -s libc2.err ]
done_testing
