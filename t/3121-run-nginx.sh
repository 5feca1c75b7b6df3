#!/bin/sh
# SPDX-License-Identifier: MIT
# Debian's nginx, a master and two
# workers run as nobody, under palloc-run on loopback, loaded with wrk,
# stopped by the master's pid. Before, the workers (nobody) could not
# create their profiles in a root-owned directory and palloc-run printed
# only the master's line; the files were named after the process titles
# ("nginx: master process nginx -c ...."). Now: one profile per process,
# named by the executable, each valid for go tool pprof, all in the
# summary, no process left behind.
. "$top_srcdir/t/lib.sh"
need nginx wrk python3 curl
. "$top_srcdir/t/lib-run.sh"
[ "$(id -u)" = 0 ] ||
	skip_all "workers run as nobody only when the master is root"
plan 10

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -m 755 prof tmp || exit 1
chmod 755 "$T"
nginx_conf "$port" 2 >nginx.conf

palloc-run -o "$T/prof/palloc.%e.%p.pb.gz" \
	nginx -p "$T" -c "$T/nginx.conf" -e "$T/error.log" \
	>run.out 2>run.err &
run=$!
trap 'kill $run 2>/dev/null; [ -s "$T/nginx.pid" ] &&
	kill -TERM "$(cat "$T/nginx.pid")" 2>/dev/null; wait; cleanup_tmp' EXIT
retry 200 0.1 curl -sf -o hello.txt "http://127.0.0.1:$port/"
check "nginx answers under palloc-run" grep -q 'hello from nginx' hello.txt
retry 50 0.1 test -s nginx.pid
master=$(cat nginx.pid)
ps -o pid= --ppid "$master" | tr -d ' ' | sort >workers
diag "master $master, workers $(tr '\n' ' ' <workers)"
check "two workers, run as nobody" \
	[ "$(wc -l <workers)" -eq 2 -a \
	"$(ps -o user= --ppid "$master" | sort -u)" = nobody ]
wrk -t 2 -c 8 -d 3s "http://127.0.0.1:$port/" >wrk.out 2>&1
check "wrk: requests answered" grep -q 'Requests/sec' wrk.out
diag "$(grep -E 'Requests/sec|requests in' wrk.out | tr -s ' ')"
kill -QUIT "$master"
wait $run
check "stopped by the master's pid: palloc-run exits 0" [ $? -eq 0 ]
sed 's/^/# /' run.err

# One profile per process (master and workers), named by the executable.
(cd prof && ls -A) >names
{
	echo "$master"
	cat workers
} | sort >want
sed -n 's/^palloc\.nginx\.\([0-9]*\)\.pb\.gz$/\1/p' names | sort >got
check "one profile per process, palloc.nginx.PID.pb.gz" diff -u want got
check "no other file in the profile directory" \
	[ "$(wc -l <names)" -eq "$(wc -l <want)" ]
all_valid prof
check "the profiles are root's (palloc-run's), mode 0600" \
	[ "$(stat -c %U:%a prof/* | sort -u)" = root:600 ]
n=$(grep -Ec "^palloc-run: wrote prof/palloc\\.nginx\\.[0-9]+\\.pb\\.gz: " run.err)
check "the summary names every profile ($n), no process without one" \
	[ "$n" -eq "$(wc -l <want)" ] && ! grep -q 'no profile from' run.err
check "no process left behind" \
	sh -c "! ps -o pid= -p $master,$(paste -sd, workers) >/dev/null"
done_testing
