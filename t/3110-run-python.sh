#!/bin/sh
# SPDX-License-Identifier: MIT
# Debian's python3 building a list of a million strings under palloc-run,
# at the default rate and at rate 1: same output and status as without,
# its functions named by go tool pprof, >= 90% of locations symbolized.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
py=/usr/bin/python3
[ -x "$py" ] || skip_all "Debian's python3 is not installed"
. "$top_srcdir/t/lib-run.sh"

prog='l = [str(i) for i in range(1000000)]; print(len(l), l[-1])'
"$py" -c "$prog" >base.out 2>base.err
base_rc=$?
diag "without palloc: exit $base_rc, $(cat base.out)"

for rate in default 1; do
	set --
	[ "$rate" = default ] || set -- -r "$rate"
	palloc-run "$@" -o "py.$rate.pb.gz" "$py" -c "$prog" >out 2>err
	rc=$?
	check "rate $rate: same exit status ($rc)" [ "$rc" -eq "$base_rc" ]
	check "rate $rate: same output" cmp -s out base.out
	check_same_stderr "rate $rate" base.err err
	check_real "python3, rate $rate" "py.$rate.pb.gz" err \
		' (_?Py[A-Za-z_]+|list_[a-z_]+|main)$' "$(readlink -f "$py")"
done

echo "1..$_n"
done_testing
