#!/bin/sh
# SPDX-License-Identifier: MIT
# One grammar for the data commands: -j/--json everywhere, one
# -t/--top[=<n>], one wording for the shared usage errors, a write error
# on standard output is exit 2 with one line, whatever the command, and
# every table for people through libsmartcols with util-linux's options
# (-o/--output COLUMNS, or --columns where -o is a file; -n/--noheadings,
# -r/--raw; widths that fit the terminal).
. "$top_srcdir/t/lib.sh"
need jq pprof-gen diff-mkprof
[ -c /dev/full ] || skip_all "no /dev/full"
plan 64

F=$top_srcdir/t/fixtures
pprof-gen known prof.pb.gz >/dev/null 2>&1 || {
	echo "Bail out! pprof-gen"
	exit 1
}
diff-mkprof base.pb.gz <<'P' || exit 99
period space/bytes 524288
mapping /opt/app/bin/app 0x555555554000 0x555555600000 0x0 aaaa
sample 10 10240 10 10240 ; 0x555555555100=leak@app.c:12 0x555555555900=main@app.c:40
sample 7 7000 7 7000 ; 0x555555555300=steady@app.c:30 0x555555555920=main@app.c:42
P
diff-mkprof new.pb.gz <<'P' || exit 99
period space/bytes 524288
mapping /opt/app/bin/app 0x555555554000 0x555555600000 0x0 aaaa
sample 20 2107392 20 2107392 ; 0x555555555100=leak@app.c:12 0x555555555900=main@app.c:40
sample 7 7000 7 7000 ; 0x555555555300=steady@app.c:30 0x555555555920=main@app.c:42
P

# One invocation per command that writes data, as "NAME ARGS...": the
# sysroot fixtures, the profiles above, and palloc-mallinfo's list (its
# header line is written even when no agent runs).
smaps="palloc-smaps --sysroot $F/sysroot-cgroup2 100"
cgroup="palloc-cgroup --sysroot $F/sysroot-cgroup2 -p 100"
explain="palloc-explain --sysroot $F/sysroot-explain /sys/fs/cgroup/app"
mallinfo="palloc-mallinfo --timeout 1"
dump="palloc-dump prof.pb.gz"
diff="palloc-diff base.pb.gz new.pb.gz"

# full DESC CMD...: CMD >/dev/full exits 2 with the one line
# "NAME: write error on standard output: No space left on device".
full() {
	_desc=$1
	shift
	"$@" >/dev/full 2>full.err
	_rc=$?
	if [ "$_rc" -eq 2 ] && [ "$(cat full.err)" = \
		"$1: write error on standard output: No space left on device" ]; then
		ok "$_desc"
	else
		not_ok "$_desc (exit $_rc)"
		sed 's/^/# /' full.err
	fi
}

# 1-24: -j is --json, and /dev/full is exit 2 in text and JSON.
for c in smaps cgroup explain mallinfo dump diff; do
	eval "set -- \$$c"
	"$@" -j >j.out 2>j.err
	rc=$?
	"$@" --json >json.out 2>/dev/null
	check "palloc-$c -j: JSON, exit 0" \
		test $rc -eq 0 -a ! -s j.err
	# The list of agents changes as other tests run: its format only.
	f='del(.time_ns)'
	[ $c = mallinfo ] && f='{format, format_version}'
	check "palloc-$c -j is --json" \
		test "$(jq -c "$f" j.out)" = "$(jq -c "$f" json.out)" -a -s j.out
	full "palloc-$c >/dev/full: exit 2, one line" "$@"
	full "palloc-$c -j >/dev/full: exit 2, one line" "$@" -j
done

# 25-36: the --top forms agree. (-n was --top's older spelling in
# palloc-smaps and palloc-explain: it is -n/--noheadings now, as in
# util-linux, and no longer checked here.)
top_forms() {
	_c=$1 _cmd=$2
	shift 2
	"$_cmd" --top=1 "$@" >top.want 2>top.err || { cat top.err; return 1; }
	for _f in "--top 1" "-t 1" "-t1"; do
		# shellcheck disable=SC2086
		"$_cmd" $_f "$@" >top.got 2>top.err && cmp -s top.want top.got ||
			{ echo "# $_f differs"; return 1; }
	done
}
check "palloc-smaps --maps: --top=1, --top 1, -t 1, -t1 agree" \
	top_forms smaps palloc-smaps --sysroot "$F/sysroot-nosmapsrollup" \
	--maps 500
check "palloc-smaps --top 1 lists one mapping" \
	test "$(palloc-smaps --sysroot "$F/sysroot-nosmapsrollup" -j --maps \
		--top 1 500 | jq '.processes[0].top_mappings | length')" = 1
check "palloc-explain: --top forms agree" \
	top_forms explain palloc-explain --sysroot "$F/sysroot-explain" \
	/sys/fs/cgroup/app
check "palloc-dump FILE: --top forms agree" \
	top_forms dump palloc-dump prof.pb.gz
check "palloc-dump: '--top 1 FILE' reads 1 as the count" \
	sh -c 'palloc-dump --top 1 prof.pb.gz | cmp -s top.want -'
check "palloc-diff: --top forms agree" \
	top_forms diff palloc-diff base.pb.gz new.pb.gz
check "palloc-diff: 'BASE NEW --top 1' and 'BASE --top 1 NEW' read 1 as the count" \
	sh -c 'palloc-diff base.pb.gz new.pb.gz --top 1 | cmp -s top.want - &&
		palloc-diff base.pb.gz --top 1 new.pb.gz | cmp -s top.want - &&
		! grep -q steady top.want'

for c in smaps explain dump diff; do
	eval "set -- \$$c"
	expect_fail 2 "$@" --top=x >/dev/null 2>top.err
	check "palloc-$c --top=x: exit 2, \"invalid --top 'x'\"" \
		test $? -eq 0 -a "$(head -1 top.err)" = \
		"palloc-$c: invalid --top 'x'"
done
check "palloc-explain --top above 1000 is refused" \
	expect_fail 2 $explain --top 1001 2>/dev/null
check "palloc-smaps --top without --maps is refused" \
	expect_fail 2 $smaps --top 3 2>/dev/null

# 37-46: the shared usage errors, worded once.
# usage_err NAME WANT ARGS...: exit 2, first stderr line "NAME: WANT".
usage_err() {
	_name=$1 _want=$2
	shift 2
	"$_name" "$@" >u.out 2>u.err
	_rc=$?
	[ $_rc -eq 2 ] && [ ! -s u.out ] &&
		[ "$(head -1 u.err)" = "$_name: $_want" ] ||
		{ echo "# exit $_rc: $(head -1 u.err)"; return 1; }
}
for c in smaps cgroup explain mallinfo dump; do
	check "palloc-$c -p x: \"invalid PID 'x'\"" \
		usage_err palloc-$c "invalid PID 'x'" -p x
done
for c in cgroup explain mallinfo dump; do
	check "palloc-$c -p 1 2: \"--pid and an operand exclude each other\"" \
		usage_err palloc-$c "--pid and an operand exclude each other" \
		-p 1 2
done
check "palloc-mallinfo 1 2: \"too many operands\"" \
	usage_err palloc-mallinfo "too many operands" 1 2

# 47-49: palloc-mallinfo takes the shared data options; 1 is the growth
# palloc-diff was asked about, and nothing else.
check "palloc-mallinfo --count needs --watch" \
	usage_err palloc-mallinfo "--count needs --watch" -c 2 1
palloc-diff --fail-on-growth 1 --top base.pb.gz new.pb.gz >/dev/null 2>&1
check "palloc-diff: growth over the gate is exit 1" test $? -eq 1
full "palloc-diff: growth over the gate and a write error: exit 2" \
	palloc-diff --fail-on-growth 1 --top base.pb.gz new.pb.gz

# 50: one size format for people, powers of 1024 with IEC units.
check "palloc-cgroup, -smaps and -explain print sizes as '100.0 MiB'" sh -c "
	palloc-cgroup --sysroot '$F/sysroot-cgroup2' -p 100 |
		grep -qx 'usage: *100.0 MiB' &&
	palloc-smaps --sysroot '$F/sysroot-cgroup2' 200 |
		grep -Eq '^ *200 +500.0 KiB +800.0 KiB +2.0 MiB +0 B /bin/sh\$' &&
	palloc-explain --sysroot '$F/sysroot-explain' /sys/fs/cgroup/app |
		grep -q 'usage 94.0 MiB, working set 78.0 MiB'"

# 51-: the tables, through libsmartcols with util-linux's options.
check "palloc-smaps -n -o pid,pss PID: two columns, no header" sh -c "
	$smaps -n -o pid,pss >t.out && [ \$(wc -l <t.out) -eq 1 ] &&
	grep -Eqx ' *100 +3.4 MiB' t.out &&
	$smaps -n -r -o pid,pss | grep -qxF '100 3.4\\x20MiB' &&
	$smaps -n -b -o PID,Pss | grep -Eqx ' *100 +3584000'"
check "palloc-smaps -o +COLS adds to the default columns" sh -c "
	$smaps -o +name,hwm | head -1 |
		grep -Eqx ' *PID +USS +PSS +RSS +SWAP +COMMAND +NAME +HWM'"
check "palloc-smaps --help lists the columns with a line each" sh -c "
	palloc-smaps --help >h.out &&
	grep -q '^Columns of the process list:' h.out &&
	grep -Eq '^ +PSS  proportional set size' h.out &&
	grep -Eq '^ +PATH  file' h.out"
# tables OPT COL CMD...: CMD's table with OPT COL (-o, or --columns
# where -o is a file) has one word a row and its header above the rows;
# -n leaves the header out, -r aligns nothing; an unknown column is one
# line, exit 2, nothing on stdout. A table without rows prints nothing.
tables() {
	_o=$1 _cols=$2
	shift 2
	"$@" -n $_o "$_cols" >n.out 2>n.err && [ ! -s n.err ] &&
		awk 'NF != 1 { exit 1 }' n.out ||
		{ echo "# -n $_o $_cols: $(head -2 n.out n.err)"; return 1; }
	"$@" $_o "$_cols" >c.out 2>c.err &&
		{ [ ! -s n.out ] ||
			tail -n "$(wc -l <n.out)" c.out | cmp -s - n.out &&
			grep -qix " *$_cols" c.out; } ||
		{ echo "# $_o $_cols: $(head -3 c.out c.err)"; return 1; }
	"$@" -r >r.out && ! head -1 r.out | grep -q '  ' ||
		{ echo "# -r: $(head -2 r.out)"; return 1; }
	"$@" $_o "$_cols,nosuch" >u.out 2>u.err
	_rc=$?
	[ $_rc -eq 2 ] && [ ! -s u.out ] && [ "$(wc -l <u.err)" -eq 1 ] &&
		grep -qx "${1##*/}: unknown column 'nosuch'" u.err ||
		{ echo "# unknown column: exit $_rc, $(cat u.err)"; return 1; }
}
check "palloc-smaps: -o, -n, -r, unknown column" tables -o pid $smaps
check "palloc-smaps --maps: -o, -n, -r, unknown column" \
	tables -o kind palloc-smaps --sysroot "$F/sysroot-nosmapsrollup" --maps 500
check "palloc-cgroup: -o, -n, -r, unknown column" tables -o path $cgroup
check "palloc-explain: -o, -n, -r, unknown column" tables -o part $explain
check "palloc-mallinfo: -o, -n, -r, unknown column" tables -o pid $mallinfo
check "palloc-dump (the list): --columns, -n, -r, unknown column" \
	tables --columns pid palloc-dump --timeout 1
check "palloc-dump --top: --columns, -n, -r, unknown column" \
	tables --columns flat $dump --top
check "palloc-diff --top: --columns, -n, -r, unknown column" \
	tables --columns name $diff --top
check "the table options are for the table: --json with -o is refused" \
	usage_err palloc-cgroup "--output, --noheadings, --raw and --bytes are for the table" \
	--sysroot "$F/sysroot-cgroup2" -p 100 --json -o usage
# On a terminal the table fits its width (libsmartcols truncates the
# columns that may be); into a file, nothing is cut.
if command -v script >/dev/null 2>&1; then
	parts="$explain -o layer,part,bytes,percent,basis,what"
	script -qc "stty cols 60; $parts" /dev/null | tr -d '\r' >tty.out
	$parts >file.out
	check "a table on a 60-column terminal fits in 60 columns" sh -c "
		[ \$(wc -l <tty.out) -eq \$(wc -l <file.out) ] &&
		[ \$(awk '{ print length }' tty.out | sort -n | tail -1) -le 60 ] &&
		[ \$(awk '{ print length }' file.out | sort -n | tail -1) -gt 60 ]"
else
	skip "script (bsdutils) not installed"
fi

done_testing
