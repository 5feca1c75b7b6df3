#!/bin/sh
# SPDX-License-Identifier: MIT
# Debian's gcc compiling and linking a small C file (with a warning) under
# palloc-run, at the default rate and at rate 1: the driver starts cc1,
# as and collect2, which starts ld; one profile each, all read by go tool
# pprof; same status, output, warning and executable as without palloc;
# cc1's functions named (it exports its symbols for plugins).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
[ -x /usr/bin/gcc ] || skip_all "gcc is not installed"
. "$top_srcdir/t/lib-run.sh"
cc1=$(/usr/bin/gcc -print-prog-name=cc1)
[ -x "$cc1" ] || skip_all "gcc has no cc1"

cat >hello.c <<'CEOF'
#include <stdio.h>
#include <string.h>

struct node {
	struct node *next;
	char name[32];
};

static int count(const struct node *n)
{
	int unused_variable;
	int c = 0;

	for (; n; n = n->next)
		c++;
	return c;
}

int main(void)
{
	struct node a = {0}, b = {&a, "b"};

	strcpy(a.name, "a");
	printf("%d nodes\n", count(&b));
	return 0;
}
CEOF
mkdir base && (cd base && /usr/bin/gcc -Wall -O2 -o hello ../hello.c) \
	>base.out 2>base.err
base_rc=$?
diag "without palloc: exit $base_rc, $(wc -l <base.err) lines of warnings"
check "the compiler warns without palloc" grep -q 'unused variable' base.err

for rate in default 1; do
	set --
	[ "$rate" = default ] || set -- -r "$rate"
	mkdir run.$rate prof.$rate || exit 99
	(cd run.$rate && palloc-run "$@" -o "$T/prof.$rate/p.%e.%p.pb.gz" \
		/usr/bin/gcc -Wall -O2 -o hello ../hello.c) >out 2>err
	rc=$?
	check "rate $rate: same exit status ($rc)" [ "$rc" -eq "$base_rc" ]
	check "rate $rate: same output" cmp -s out base.out
	check_same_stderr "rate $rate" base.err err
	check "rate $rate: the same executable, byte for byte" \
		cmp base/hello run.$rate/hello
	check "rate $rate: it runs" [ "$(run.$rate/hello)" = "2 nodes" ]
	(cd prof.$rate && ls) | sed 's/\.[0-9]*\.pb\.gz$//' | sort >names
	check "rate $rate: one profile each for gcc, cc1, as, collect2, ld" \
		diff -u - names <<NEOF
p.as
p.cc1
p.collect2
p.gcc
p.ld
NEOF
	check_many "rate $rate" "$T/prof.$rate" err
	set -- prof.$rate/p.cc1.*.pb.gz
	check_real "cc1, rate $rate" "$T/$1" err \
		' (xmalloc|xcalloc|xrealloc|ggc_[a-z_]+|[a-z_]+::[A-Za-z_:]+|[a-z_]+)$' \
		"$cc1"
done

echo "1..$_n"
done_testing
