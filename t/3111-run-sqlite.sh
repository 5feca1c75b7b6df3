#!/bin/sh
# SPDX-License-Identifier: MIT
# sqlite3 building an indexed table of 300,000 rows under palloc-run, at the
# default rate and at rate 1: same output and status as without, sqlite's
# functions named by go tool pprof, >= 90% of locations symbolized.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need sqlite3
. "$top_srcdir/t/lib-run.sh"

cat >build.sql <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c
	WHERE x < 300000)
INSERT INTO t SELECT x, 'row-' || x, (x * 7919) % 100003 FROM c;
CREATE INDEX t_v ON t(v);
CREATE INDEX t_name ON t(name);
SELECT count(*), sum(v), max(name) FROM t;
SELECT id FROM t WHERE v = 4242;
SQL
sqlite3 :memory: <build.sql >base.out 2>base.err
base_rc=$?
diag "without palloc: exit $base_rc, $(tr '\n' ' ' <base.out)"

# The program's own files, whose debug info the 90% check needs.
shell=$(readlink -f "$(command -v sqlite3)")
lib=$(readlink -f "$(ldd "$shell" | awk '/libsqlite3/ { print $3 }')")

for rate in default 1; do
	set --
	[ "$rate" = default ] || set -- -r "$rate"
	palloc-run "$@" -o "sq.$rate.pb.gz" sqlite3 :memory: <build.sql \
		>out 2>err
	rc=$?
	check "rate $rate: same exit status ($rc)" [ "$rc" -eq "$base_rc" ]
	check "rate $rate: same output" cmp -s out base.out
	check_same_stderr "rate $rate" base.err err
	check_real "sqlite3, rate $rate" "sq.$rate.pb.gz" err \
		' sqlite3[A-Za-z_]*$' "$shell" "$lib"
done

echo "1..$_n"
done_testing
