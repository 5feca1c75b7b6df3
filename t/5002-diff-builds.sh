#!/bin/sh
# SPDX-License-Identifier: MIT
# Two builds of one program (-O0 and -O2: other code, other addresses, other
# build ids) with one real change: palloc-diff matches by function and shows
# only that change. Needs the agent and palloc-run's symbolization.
. "$top_srcdir/t/lib.sh"
need_agent
need jq palloc-diff palloc-run cc

cat >prog.c <<'C'
#include <stdlib.h>

static void *volatile keep[4096];
static int n_keep;

__attribute__((noinline)) void make_table(int n)
{
	for (int i = 0; i < n; i++)
		keep[n_keep++] = malloc(1000);
}

__attribute__((noinline)) void make_cache(int n)
{
	for (int i = 0; i < n; i++)
		keep[n_keep++] = malloc(4000);
}

__attribute__((noinline)) void grow(int n)
{
	for (int i = 0; i < n; i++)
		keep[n_keep++] = malloc(50000);
}

__attribute__((noinline)) void scratch(int n)
{
	/* volatile: gcc -O2 would elide a free(malloc()) pair */
	for (int i = 0; i < n; i++) {
		void *volatile p = malloc(300);

		free(p);
	}
}

int main(void)
{
	make_table(100);
	make_cache(50);
	scratch(1000);
	grow(10 + EXTRA);
	return 0;
}
C
cc -g -O0 -fno-omit-frame-pointer -DEXTRA=0 -o prog-O0 prog.c &&
	cc -g -O2 -DEXTRA=5 -o prog-O2 prog.c || skip_all "cannot compile"
plan 9

palloc-run -q -r 1 -o base.pb.gz ./prog-O0 2>run0.err &&
	palloc-run -q -r 1 -o new.pb.gz ./prog-O2 2>run2.err &&
	[ -s base.pb.gz ] && [ -s new.pb.gz ] &&
	ok "profiles of the -O0 and -O2 builds" ||
	{ not_ok "profiles of the -O0 and -O2 builds"; cat run0.err run2.err; }

palloc-diff --json --top=0 base.pb.gz new.pb.gz >d.json 2>d.err &&
	ok "palloc-diff runs" || { not_ok "palloc-diff runs"; cat d.err; }
check "only grow() changed, by 5 x 50000 bytes" jqe '
	[.functions[] | select(.flat_bytes != 0) | [.function, .flat_bytes]]
	== [["grow", 250000]]' d.json
check "the unchanged sites matched across builds" jqe '
	.growth_bytes == 250000 and .matched_stack_count >= 3' d.json
check "main's cumulative change is grow's" jqe '
	.functions[] | select(.function == "main") | .cum_bytes == 250000' d.json
palloc-diff --json --top=0 --sample-index=alloc_objects base.pb.gz \
	new.pb.gz >o.json 2>/dev/null &&
	jqe '[.functions[] | select(.flat_count != 0) |
		[.function, .flat_count]] == [["grow", 5]]' o.json &&
	ok "alloc_objects: grow +5, scratch and the rest unchanged" ||
	not_ok "alloc_objects: grow +5, scratch and the rest unchanged"
expect_fail 1 palloc-diff --fail-on-growth 200000 base.pb.gz new.pb.gz \
	2>g.err && grep -q "^palloc-diff:   +250000 bytes: grow < main" g.err &&
	ok "the gate names grow" || { not_ok "the gate names grow"; cat g.err; }
# 8-9: the project's own example, examples/truth (seven allocation sites,
# a million allocations), built at -O0 and -O2: no change at all.
if cc -g -O0 -include "$top_builddir/config.h" -I"$top_srcdir/libcore/base" \
	-I"$top_srcdir/examples" -o truth-O0 "$top_srcdir/examples/truth.c" &&
	cc -g -O2 -include "$top_builddir/config.h" -I"$top_srcdir/libcore/base" \
		-I"$top_srcdir/examples" -o truth-O2 \
		"$top_srcdir/examples/truth.c" &&
	palloc-run -q -r 1 -o t0.pb.gz ./truth-O0 >/dev/null 2>t0.err &&
	palloc-run -q -r 1 -o t2.pb.gz ./truth-O2 >/dev/null 2>t2.err; then
	ok "examples/truth at -O0 and -O2"
else
	not_ok "examples/truth at -O0 and -O2"
	diag "$(cat t0.err t2.err 2>/dev/null)"
fi
bad=
for s in alloc_objects alloc_space inuse_objects inuse_space; do
	palloc-diff --json -s $s t0.pb.gz t2.pb.gz >"t.$s.json" 2>/dev/null &&
		jqe '.function_count == 0 and .changed_stack_count == 0 and
			.base_stack_count >= 7 and
			.matched_stack_count == .base_stack_count and
			.matched_stack_count == .new_stack_count' "t.$s.json" ||
		bad="$bad $s"
done
[ -z "$bad" ] && ok "truth -O0 vs -O2: every stack matched, nothing changed" ||
	not_ok "truth -O0 vs -O2: changes in$bad"
done_testing
