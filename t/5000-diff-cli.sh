#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-diff's contract on synthetic profiles: the table, JSON, the growth
# gate and its exit codes, matching across load addresses, errors.
. "$top_srcdir/t/lib.sh"
need jq palloc-diff diff-mkprof
plan 31

# BASE and NEW: one program, loaded at other addresses, built twice (other
# build ids); leak() grew by 2 MiB, shrink() went down by 4096, steady()
# stayed. Frames of libc are unsymbolized and match by file offset.
diff-mkprof base.pb.gz <<'P' || exit 99
period space/bytes 524288
mapping /opt/app/bin/app 0x555555554000 0x555555600000 0x0 aaaa
mapping /usr/lib/x86_64-linux-gnu/libc.so.6 0x7f0000000000 0x7f0000200000 0x28000 cccc
sample 10 10240 10 10240 ; 0x555555555100=leak@app.c:12 0x555555555900=main@app.c:40 0x7f0000001234
sample 5 20480 5 20480 ; 0x555555555200=shrink@app.c:20 0x555555555910=main@app.c:41 0x7f0000001234
sample 7 7000 7 7000 ; 0x555555555300=steady@app.c:30 0x555555555920=main@app.c:42 0x7f0000001234
P
diff-mkprof new.pb.gz <<'P' || exit 99
period space/bytes 524288
mapping /opt/app/bin/app 0x563412340000 0x5634123f0000 0x0 bbbb
mapping /usr/lib/x86_64-linux-gnu/libc.so.6 0x7fab00000000 0x7fab00200000 0x28000 cccc
sample 20 2107392 20 2107392 ; 0x563412341180=leak@app.c:12 0x563412341990=main@app.c:40 0x7fab00001234
sample 4 16384 4 16384 ; 0x563412341280=shrink@app.c:20 0x5634123419a0=main@app.c:41 0x7fab00001234
sample 7 7000 7 7000 ; 0x563412341380=steady@app.c:30 0x5634123419b0=main@app.c:42 0x7fab00001234
P

# 1-3: help, version, usage errors
palloc-diff --help >help.out 2>help.err && [ ! -s help.err ] &&
	grep -q -- --fail-on-growth help.out && ok "--help" || not_ok "--help"
palloc-diff -V >v.out && grep -q '^palloc-diff from palloc ' v.out &&
	ok "--version" || not_ok "--version"
expect_fail 2 palloc-diff --bogus base.pb.gz new.pb.gz >u.out 2>u.err &&
	[ ! -s u.out ] && [ "$(wc -l <u.err)" -eq 2 ] &&
	expect_fail 2 palloc-diff base.pb.gz 2>u2.err &&
	grep -q "^palloc-diff: missing profile operand" u2.err &&
	ok "usage errors exit 2, nothing on stdout" ||
	not_ok "usage errors exit 2, nothing on stdout"

# 4: the table, exact (libsmartcols' columns, as wide as their widest
# cell, and "name" over the names)
palloc-diff --top base.pb.gz new.pb.gz >top.out 2>top.err
cat >top.want <<'W'
Type: inuse_space
Showing nodes accounting for 2MB, 5548.93% of 36.84kB total
flat    flat%     sum%  cum     cum% name
 2MB 5559.79% 5559.79%  2MB 5559.79% leak
-4kB   10.86% 5548.93% -4kB   10.86% shrink
   0       0% 5548.93%  2MB 5548.93% libc.so.6+0x29234
   0       0% 5548.93%  2MB 5548.93% main
W
diff -u top.want top.out && [ ! -s top.err ] &&
	ok "--top: leak first, libc matched by offset across ASLR" ||
	not_ok "--top: leak first, libc matched by offset across ASLR"

# 5-9: JSON
palloc-diff --json base.pb.gz new.pb.gz >d.json 2>d.err &&
	ok "--json exits 0" || not_ok "--json exits 0"
check "JSON starts with format and format_version" \
	jqe '(keys_unsorted[0:2] == ["format", "format_version"]) and
		.format == "palloc-diff" and .format_version == 1' d.json
check "JSON totals" jqe '.base_bytes == 37720 and .new_bytes == 2130776 and
	.growth_bytes == 2093056 and .sample_type == "inuse_space"' d.json
check "JSON stacks: all three matched across builds, two changed" \
	jqe '.base_stack_count == 3 and .new_stack_count == 3 and
		.matched_stack_count == 3 and .changed_stack_count == 2' d.json
check "JSON rows" jqe '[.functions[] | [.function, .flat_bytes, .cum_bytes]]
	== [["leak", 2097152, 2097152], ["shrink", -4096, -4096],
	    ["libc.so.6+0x29234", 0, 2093056], ["main", 0, 2093056]]' d.json

# 10-11: --sample-index by name and by number, and a bad one
palloc-diff --json --sample-index=alloc_objects base.pb.gz new.pb.gz >o.json &&
	jqe '.unit == "count" and .growth_count == 9 and
		.functions[0].function == "leak" and
		.functions[0].flat_count == 10' o.json &&
	palloc-diff --json -s 0 base.pb.gz new.pb.gz >o0.json &&
	cmp -s o.json o0.json &&
	ok "--sample-index by name and number" ||
	not_ok "--sample-index by name and number"
expect_fail 2 palloc-diff -s nope base.pb.gz new.pb.gz >s.out 2>s.err &&
	[ ! -s s.out ] && grep -q "no sample type 'nope'" s.err &&
	ok "unknown sample type: exit 2" || not_ok "unknown sample type: exit 2"

# 12-17: the growth gate
palloc-diff --fail-on-growth 2MiB base.pb.gz new.pb.gz >g.out 2>g.err &&
	[ ! -s g.out ] && [ ! -s g.err ] &&
	ok "growth under 2MiB: exit 0, quiet" || not_ok "growth under 2MiB: exit 0"
expect_fail 1 palloc-diff --fail-on-growth 1MiB base.pb.gz new.pb.gz \
	>g1.out 2>g1.err && ok "growth over 1MiB: exit 1" ||
	not_ok "growth over 1MiB: exit 1"
cat >g1.want <<'W'
palloc-diff: inuse_space grew by 2093056 bytes (+5548.93% of BASE), over the limit of 1048576 bytes; top growing stacks:
palloc-diff:   +2097152 bytes: leak < main < libc.so.6+0x29234
W
diff -u g1.want g1.err && [ ! -s g1.out ] &&
	ok "the gate names the growing stack" || not_ok "the gate names the growing stack"
expect_fail 1 palloc-diff -f 10% base.pb.gz new.pb.gz 2>/dev/null &&
	palloc-diff -f 6000% base.pb.gz new.pb.gz &&
	ok "percentage gate" || not_ok "percentage gate"
expect_fail 1 palloc-diff -f 1 --sample-index=inuse_objects base.pb.gz \
	new.pb.gz 2>gi.err && grep -q "inuse_objects grew by 9 count" gi.err &&
	palloc-diff -f 9 -s inuse_objects base.pb.gz new.pb.gz &&
	ok "gate on another sample type" || not_ok "gate on another sample type"
expect_fail 2 palloc-diff -f lots base.pb.gz new.pb.gz 2>/dev/null &&
	expect_fail 2 palloc-diff -f -1% base.pb.gz new.pb.gz 2>/dev/null &&
	ok "bad gate values: exit 2" || not_ok "bad gate values: exit 2"

# 18-20: a profile diffed with itself
palloc-diff base.pb.gz base.pb.gz >self.out 2>self.err &&
	[ ! -s self.err ] && [ "$(wc -l <self.out)" -eq 3 ] &&
	ok "self diff: empty table, exit 0" || not_ok "self diff: empty table, exit 0"
palloc-diff --json -f 0 new.pb.gz new.pb.gz >self.json &&
	jqe '.functions == [] and .growth_bytes == 0 and
		.growth_limit_exceeded == false' self.json &&
	ok "self diff passes a zero gate" || not_ok "self diff passes a zero gate"
palloc-diff -o self.pb.gz base.pb.gz base.pb.gz && [ -s self.pb.gz ] &&
	palloc-diff --json self.pb.gz self.pb.gz >ss.json &&
	jqe '.new_stack_count == 0' ss.json &&
	ok "self diff -o: a profile without samples" ||
	not_ok "self diff -o: a profile without samples"

# 21-22: -o round trip: diffing BASE against NEW - BASE... the difference
# of the difference with nothing is itself.
palloc-diff -o d.pb.gz base.pb.gz new.pb.gz &&
	palloc-diff --json self.pb.gz d.pb.gz >dd.json &&
	jqe '.growth_bytes == 2093056 and .functions[0].flat_bytes == 2097152' \
		dd.json && ok "-o writes the difference" ||
	not_ok "-o writes the difference"
palloc-diff -o - base.pb.gz new.pb.gz >stdout.pb.gz &&
	cmp -s stdout.pb.gz d.pb.gz && ok "-o - writes to stdout" ||
	not_ok "-o - writes to stdout"

# 23-25: trouble: exit 2, one line, no output file
expect_fail 2 palloc-diff -o out.pb.gz base.pb.gz missing.pb.gz >m.out 2>m.err &&
	[ ! -s m.out ] && [ "$(wc -l <m.err)" -eq 1 ] &&
	grep -q "^palloc-diff: cannot read 'missing.pb.gz': " m.err &&
	[ ! -e out.pb.gz ] && [ -z "$(ls | grep 'out.pb.gz.')" ] &&
	ok "missing file: exit 2, one line, no -o file" ||
	not_ok "missing file: exit 2, one line, no -o file"
printf 'not a profile at all' >junk.pb.gz
expect_fail 2 palloc-diff -o out.pb.gz junk.pb.gz new.pb.gz >j.out 2>j.err &&
	[ ! -s j.out ] && [ "$(wc -l <j.err)" -eq 1 ] &&
	grep -q "^palloc-diff: cannot read 'junk.pb.gz': " j.err && [ ! -e out.pb.gz ] &&
	ok "junk file: exit 2, one line, no -o file" ||
	not_ok "junk file: exit 2, one line, no -o file"
diff-mkprof cpu.pb.gz <<'P' || exit 99
types samples/count cpu/nanoseconds
period cpu/nanoseconds 10000000
sample 1 10000000 ; 0x1000=f
P
expect_fail 2 palloc-diff -o out.pb.gz base.pb.gz cpu.pb.gz >c.out 2>c.err &&
	[ ! -s c.out ] && [ ! -e out.pb.gz ] &&
	grep -q "no common sample type: BASE has alloc_objects, alloc_space, inuse_objects, inuse_space; NEW has samples, cpu" c.err &&
	ok "no common sample type: exit 2, says which types" ||
	not_ok "no common sample type: exit 2, says which types"

# 26-27: a period or unit that differs is a warning, not an error
diff-mkprof rate1.pb.gz <<'P' || exit 99
period space/bytes 1
sample 1 100 1 100 ; 0x1000=leak@app.c:12
P
palloc-diff --json base.pb.gz rate1.pb.gz >r.json 2>r.err &&
	grep -q "^palloc-diff: warning: period differs: 524288 in BASE, 1 in NEW$" r.err &&
	ok "period differs: a warning" || not_ok "period differs: a warning"
palloc-diff -q --json base.pb.gz rate1.pb.gz >rq.json 2>rq.err &&
	[ ! -s rq.err ] && ok "-q silences warnings" || not_ok "-q silences warnings"

# 28-29: a subset of types, in NEW's order; unit mismatch warns
diff-mkprof two.pb.gz <<'P' || exit 99
types inuse_space/bytes alloc_space/kilobytes
sample 300 1 ; 0x1000=leak@app.c:12
P
palloc-diff --json -s 1 base.pb.gz two.pb.gz >t.json 2>t.err &&
	jqe '.sample_type == "alloc_space"' t.json &&
	grep -q "unit of 'alloc_space' differs: 'bytes' in BASE, 'kilobytes' in NEW" t.err &&
	ok "common types in NEW's order; unit mismatch warns" ||
	not_ok "common types in NEW's order; unit mismatch warns"
palloc-diff --json two.pb.gz base.pb.gz >t2.json 2>/dev/null &&
	jqe '.sample_type == "inuse_space" and .base_bytes == 300' t2.json &&
	ok "inuse_space is the default index" ||
	not_ok "inuse_space is the default index"

# 30: --top N limits the rows and says so
palloc-diff --top 1 base.pb.gz new.pb.gz >t1.out &&
	grep -q "^Showing top 1 nodes out of 4$" t1.out &&
	[ "$(grep -c ' leak$' t1.out)" -eq 1 ] && [ "$(wc -l <t1.out)" -eq 5 ] &&
	ok "--top 1" || not_ok "--top 1"
# 31: a symbolized and an unsymbolized profile cannot match: a warning
diff-mkprof raw.pb.gz <<'P' || exit 99
mapping /opt/app/bin/app 0x555555554000 0x555555600000 0x0 aaaa
sample 10 10240 10 10240 ; 0x555555555100 0x555555555900
P
palloc-diff --json raw.pb.gz new.pb.gz >w.json 2>w.err &&
	grep -q "^palloc-diff: warning: BASE is not symbolized and NEW is: stacks will not match" w.err &&
	ok "unsymbolized against symbolized: a warning" ||
	not_ok "unsymbolized against symbolized: a warning"
done_testing
