#!/bin/sh
# SPDX-License-Identifier: MIT
# The decoder on hostile files: each broken profile gives exit 2 and one
# clear line naming what is wrong, never a crash.
. "$top_srcdir/t/lib.sh"

mkdir corpus && pprof-gen broken corpus || {
	echo "1..1"
	not_ok "pprof-gen broken writes the corpus"
	exit 1
}
n=$(ls corpus | grep -vc '\.expect$')
plan $((n * 2 + 1))
check "the corpus has at least 15 files ($n)" test "$n" -ge 15

for f in corpus/*; do
	case $f in *.expect) continue ;; esac
	name=${f#corpus/}
	expect_fail 2 pprof-check "$f" >out 2>err
	rc=$?
	if [ "$rc" -eq 0 ] && [ ! -s out ] && [ "$(wc -l <err)" -eq 1 ]; then
		ok "$name: exit 2, one line, nothing on stdout"
	else
		not_ok "$name: exit 2, one line, nothing on stdout"
		sed 's/^/# /' err
	fi
	diag "$(cat err)"
	want=$(cat "$f.expect")
	if grep -qF -- "pprof-check: cannot decode profile '$f': " err &&
		grep -qF -- "$want" err; then
		ok "$name: the message says what is wrong"
	else
		not_ok "$name: the message says what is wrong"
		diag "want: $want"
	fi
done
done_testing
