#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run -p PID on servers started without palloc,
# each profiled and running on after the detach:
# - an nginx worker running as nobody (its master root), root attaching,
#   loaded with wrk (or curl) while attached; stopped by the master's pid;
# - an idle PostgreSQL backend: a psql session left open, root attaches
#   to its backend, the session runs a query (a 10 MB string) while
#   attached, and another after the detach.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-attach.sh"
[ "$(id -u)" = 0 ] ||
	skip_all "the servers run as other users only when root starts them"
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv is not installed"

plan 16

# The agent is loaded by processes of other users (nobody, postgres):
# palloc-run and the agent copied where they can read them, and the
# records' directory open to them (sticky, as /tmp).
for_other_users palloc-run ||
	{ echo "Bail out! cannot copy palloc-run and the agent"; exit 1; }
chmod 755 "$T"
chmod 1777 "$PALLOC_RECORD_DIR"
free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ---- an nginx worker running as nobody ----
if command -v nginx >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then
	port=$(free_port)
	mkdir -m 755 tmp
	nginx_conf "$port" 1 >nginx.conf
	nginx -p "$T" -c "$T/nginx.conf" -e "$T/error.log" \
		>nginx.out 2>nginx.err &
	master=$!
	bg_add "$master"
	retry 300 0.1 curl -sf -o hello.txt "http://127.0.0.1:$port/"
	worker=$(ps -o pid= --ppid "$master" | tr -d ' ' | head -1)
	bg_add "$worker"
	diag "nginx master $master, worker ${worker:-none}"
	check "nginx: a worker running as nobody" \
		test -n "$worker" -a "$(ps -o user= -p "${worker:-0}")" = nobody
	check "nginx: root attaches to the worker (rate 1)" \
		attach_start "$worker" run.nginx.err -r 1 -o nginx.pb.gz
	if command -v wrk >/dev/null 2>&1; then
		wrk -t 1 -c 4 -d 2s "http://127.0.0.1:$port/" >load.out 2>&1
	else
		for i in $(seq 200); do
			curl -s "http://127.0.0.1:$port/"
		done >load.out 2>&1
	fi
	attach_stop TERM
	check "nginx: detached, status 0" test "$rc" -eq 0
	sed 's/^/# /' run.nginx.err
	check "nginx: the worker's requests profiled (objects allocated)" \
		grep -Eq '^palloc-run: wrote nginx\.pb\.gz: alloc [0-9.]+ [KMG]?i?B in [1-9][0-9]* objects' run.nginx.err
	rm -f hello.txt
	check "nginx: the worker answers after the detach" \
		retry 50 0.1 sh -c "curl -sf -o hello.txt http://127.0.0.1:$port/ && grep -q 'hello from nginx' hello.txt"
	check "nginx: the same worker, not traced" \
		test "$(ps -o pid= --ppid "$master" | tr -d ' ')" = "$worker" -a \
		"$(tracer "$worker")" = 0
	kill -QUIT "$master"
	retry 300 0.1 ended "$master"
	wait "$master"
	check "nginx: stopped by the master's pid, status 0" test $? -eq 0
else
	for i in 1 2 3 4 5 6 7; do skip "nginx or curl is not installed"; done
fi

# ---- an idle PostgreSQL backend ----
pgbin=/usr/lib/postgresql/15/bin
if [ -x "$pgbin/postgres" ] && [ -x "$pgbin/initdb" ] &&
	[ -x "$pgbin/pg_isready" ] && [ -x "$pgbin/psql" ] &&
	id postgres >/dev/null 2>&1; then
	as_pg() {
		setpriv --reuid=postgres --regid=postgres --init-groups \
			env HOME="$T" "$@"
	}
	port=$(free_port)
	mkdir -m 700 pg && chown postgres: pg
	as_pg "$pgbin/initdb" -D "$T/pg/data" -A trust -U postgres --no-sync \
		-E UTF8 >initdb.log 2>&1 ||
		{ cat initdb.log; echo "Bail out! initdb"; exit 1; }
	as_pg "$pgbin/postgres" -D "$T/pg/data" -p "$port" -k "$T/pg" \
		-c listen_addresses=127.0.0.1 -c fsync=off \
		-c shared_buffers=16MB -c max_connections=20 \
		>pg.out 2>pg.err &
	pm_sh=$!
	bg_add "$pm_sh"
	retry 300 0.1 "$pgbin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres
	# the postmaster (setpriv's child of the subshell $pm_sh)
	pm=$(head -1 pg/data/postmaster.pid)
	bg_add "$pm"
	# a psql session reading from a fifo: left open, its backend idle
	mkfifo sql
	as_pg "$pgbin/psql" -X -q -At -h 127.0.0.1 -p "$port" -U postgres \
		postgres <sql >psql.out 2>psql.err &
	ps_pid=$!
	bg_add "$ps_pid"
	exec 4>sql
	echo 'select pg_backend_pid();' >&4
	retry 300 0.1 grep -Eq '^[0-9]+$' psql.out
	be=$(head -1 psql.out)
	bg_add "$be"
	check "postgres: an idle backend ($be), running as postgres" \
		test -n "$be" -a "$(ps -o user= -p "${be:-0}")" = postgres
	check "postgres: root attaches to the backend (rate 1)" \
		attach_start "$be" run.pg.err -r 1 -o pg.pb.gz
	echo "select length(repeat('x', 10000000)) as attached;" >&4
	check "postgres: the session's query answered while attached" \
		retry 300 0.1 grep -qx 10000000 psql.out
	attach_stop
	check "postgres: detached, status 0" test "$rc" -eq 0
	sed 's/^/# /' run.pg.err
	# (Debian's postgres has no symbol table: the sites are addresses)
	big_alloc() {
		sed -n 's/^palloc-run: wrote pg\.pb\.gz: alloc \([0-9.]*\) MiB in .*/\1/p' \
			run.pg.err | awk '$1 >= 9.5 { ok = 1 } END { exit !ok }'
	}
	check "postgres: the query's 10 MB block is in the profile" big_alloc
	echo 'select 40 + 2;' >&4
	check "postgres: the backend answers after the detach" \
		retry 300 0.1 grep -qx 42 psql.out
	check "postgres: the same backend, not traced" \
		test "$(tracer "$be")" = 0 -a "$(cat psql.err)" = ""
	exec 4>&-
	retry 300 0.1 ended "$ps_pid"
	wait "$ps_pid"
	check "postgres: psql ends 0" test $? -eq 0
	kill -INT "$pm"
	retry 600 0.1 ended "$pm_sh" || kill -KILL "$pm"
	wait "$pm_sh"
	check "postgres: stopped by the postmaster's pid, status 0" test $? -eq 0
else
	for i in 1 2 3 4 5 6 7 8 9; do skip "PostgreSQL 15 or user postgres missing"; done
fi

done_testing
