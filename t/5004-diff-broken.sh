#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-diff on broken profiles: exit 2, one clear line naming the file and
# why, nothing on stdout, no -o file left behind; either operand.
. "$top_srcdir/t/lib.sh"
need palloc-diff diff-mkprof pprof-gen gzip head

mkdir corpus && pprof-gen broken corpus || skip_all "pprof-gen broken failed"
diff-mkprof good.pb.gz <<'P' || exit 99
sample 1 100 1 100 ; 0x1000=leak@app.c:12 0x1100=main@app.c:40
P
# More of our own: shapes a user's disk produces.
: >corpus/empty-file.pb.gz
printf 'empty' >corpus/empty-file.pb.gz.expect
head -c 20 good.pb.gz >corpus/truncated-real.pb.gz
head -c 4096 /dev/urandom >corpus/random-bytes.pb.gz
printf 'this is no protobuf, just text in gzip\n' | gzip >corpus/gzip-of-text.pb.gz
mkdir corpus/a-directory.pb.gz

n=$(ls corpus | grep -vc '\.expect$')
plan $((n * 2 + 1))
check "the corpus has the issue's cases and more ($n files)" [ "$n" -ge 10 ]

one() { # one LABEL BASE NEW BROKEN
	_label=$1 _base=$2 _new=$3 _f=$4
	rm -f out.pb.gz
	palloc-diff -o out.pb.gz --json "$_base" "$_new" >out 2>err
	_rc=$?
	_why=
	[ "$_rc" -eq 2 ] || _why="exit $_rc"
	[ -s out ] && _why="$_why, stdout not empty"
	[ -e out.pb.gz ] && _why="$_why, -o file written"
	ls | grep -q '^out\.pb\.gz\.' && _why="$_why, temporary file left"
	[ "$(wc -l <err)" -eq 1 ] || _why="$_why, $(wc -l <err) stderr lines"
	grep -q "^palloc-diff: cannot read '$_f': ." err || _why="$_why, message"
	if [ -f "$_f.expect" ] && ! grep -qiF "$(cat "$_f.expect")" err; then
		_why="$_why, no '$(cat "$_f.expect")' in message"
	fi
	if [ -z "$_why" ]; then
		ok "$_label: $(cat err)"
	else
		not_ok "$_label: $_why: $(cat err)"
	fi
}

for f in $(ls corpus | grep -v '\.expect$'); do
	one "BASE $f" "corpus/$f" good.pb.gz "corpus/$f"
	one "NEW $f" good.pb.gz "corpus/$f" "corpus/$f"
done
done_testing
