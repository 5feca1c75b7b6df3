#!/bin/sh
# SPDX-License-Identifier: MIT
# Debian's PostgreSQL 15 under
# palloc-run on loopback, a private cluster in the test's directory,
# loaded with pgbench, stopped by the postmaster's pid (fast shutdown).
# Every process (postmaster, checkpointer, background writer, WAL writer,
# launchers, one backend per connection) rewrites its process title
# ("postgres: checkpointer"); before, the files were named after the
# titles (" [local] idle.10222.pb.gz"). Now: one profile per process,
# named by the executable, each valid for go tool pprof, all counted in
# the summary, no process left behind.
. "$top_srcdir/t/lib.sh"
pgbin=/usr/lib/postgresql/15/bin
for p in postgres initdb pg_isready pgbench; do
	[ -x "$pgbin/$p" ] || skip_all "PostgreSQL 15 not installed ($pgbin/$p)"
done
need python3
. "$top_srcdir/t/lib-run.sh"

# PostgreSQL refuses to run as root: root runs it all as postgres. The
# build tree may be where postgres cannot read (a clone under /root), so
# palloc-run and the agent are copied into the test's directory.
if [ "$(id -u)" = 0 ]; then
	id postgres >/dev/null 2>&1 || skip_all "root, and no user postgres"
	as_user() {
		setpriv --reuid=postgres --regid=postgres --init-groups \
			env HOME="$T" "$@"
	}
	for_other_users palloc-run ||
		{ echo "Bail out! cannot copy palloc-run and the agent"; exit 1; }
	chmod -R a+rX "$T"
	chown postgres: "$T"
else
	as_user() { "$@"; }
fi
plan 9

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_user mkdir -m 700 sock prof
as_user "$pgbin/initdb" -D "$T/data" -A trust -U postgres --no-sync \
	-E UTF8 >initdb.log 2>&1 || { cat initdb.log; echo "Bail out! initdb"; exit 1; }

as_user palloc-run -o "$T/prof/palloc.%e.%p.pb.gz" "$pgbin/postgres" \
	-D "$T/data" -p "$port" -k "$T/sock" -c listen_addresses=127.0.0.1 \
	-c fsync=off -c shared_buffers=16MB -c max_connections=20 \
	>run.out 2>run.err &
run=$!
trap 'kill $run 2>/dev/null; [ -n "${pm:-}" ] && kill -INT "$pm" 2>/dev/null;
	wait; cleanup_tmp' EXIT
retry 300 0.1 "$pgbin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres
check "PostgreSQL answers under palloc-run" [ $? -eq 0 ]
pm=$(head -1 data/postmaster.pid)
as_user "$pgbin/pgbench" -h 127.0.0.1 -p "$port" -U postgres -i -s 1 -q \
	postgres >init.out 2>&1
as_user "$pgbin/pgbench" -h 127.0.0.1 -p "$port" -U postgres -c 4 -j 2 \
	-T 4 postgres >bench.out 2>&1
check "pgbench ran" grep -q 'number of transactions actually processed' \
	bench.out
diag "$(grep -E '^tps' bench.out)"
ps -o pid= --ppid "$pm" | tr -d ' ' >children
diag "postmaster $pm, $(wc -l <children) children before the stop"
kill -INT "$pm"
wait $run
check "stopped by the postmaster's pid: palloc-run exits 0" [ $? -eq 0 ]
grep -v '^palloc-run: wrote ' run.err | sed 's/^/# /'

(cd prof && ls -A) >names
total=$(wc -l <names)
check "every file is palloc.postgres.PID.pb.gz ($total)" \
	[ "$total" -gt 5 -a "$(grep -Ec '^palloc\.postgres\.[0-9]+\.pb\.gz$' names)" -eq "$total" ]
missing=
for p in $pm $(cat children); do
	grep -qx "palloc.postgres.$p.pb.gz" names || missing="$missing $p"
done
check "a profile for the postmaster and each child seen running" \
	[ -z "$missing" ]
[ -z "$missing" ] || diag "missing:$missing"
all_valid prof
lines=$(grep -Ec '^palloc-run: wrote prof/palloc\.postgres\.[0-9]+\.pb\.gz: ' run.err)
more=$(sed -n 's/^palloc-run: and \([0-9]*\) more profiles .*/\1/p' run.err)
check "the summary counts every profile ($lines lines + ${more:-0} more)" \
	[ $((lines + ${more:-0})) -eq "$total" ]
check "no process went without a profile" \
	sh -c '! grep -q "no profile from" run.err'
check "no process left behind" \
	sh -c "! ps -o pid= -p $pm$(sed 's/^/,/' children | tr -d '\n') >/dev/null"
done_testing
