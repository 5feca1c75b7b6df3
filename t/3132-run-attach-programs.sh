#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run -p on real programs started without palloc:
# python3 in a loop, profiled at rate 1 and running on after the detach;
# redis-server under redis-benchmark, attached and detached 50 times while
# the benchmark runs: every request answered, PING answered, the same
# threads, a profile naming redis's allocation sites.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need_attach palloc-run palloc-dump

plan 11

threads() { awk '/^Threads:/ { print $2 }' "/proc/$1/status"; }

ended() { ! [ -e "/proc/$1/stat" ] || [ "$(cut -d' ' -f3 "/proc/$1/stat")" = Z ]; }
attached_or_gone() {
	grep -q "^palloc-run: attached to process $_p;" "$_e" ||
		! kill -0 "$_rp" 2>/dev/null
}

# attach_for PID SECONDS ERR ARGS...: palloc-run -p PID ARGS, attached for
# about SECONDS, then SIGTERM; its status in $rc.
attach_for() {
	_p=$1 _s=$2 _e=$3
	shift 3
	rm -f "$_e" # the last cycle's line must not count (see t/3130)
	palloc-run -p "$_p" "$@" 2>"$_e" &
	_rp=$!
	retry 300 0.1 attached_or_gone
	grep -q "^palloc-run: attached to process $_p;" "$_e" ||
		diag "not attached: $(cat "$_e")"
	sleep "$_s"
	kill -TERM "$_rp"
	# killed after 60 s: the test fails, it does not hang
	retry 600 0.1 ended "$_rp" || kill -KILL "$_rp"
	wait "$_rp"
	rc=$?
}

# ---- python3 in a loop ----
if [ -x /usr/bin/python3 ]; then
	/usr/bin/python3 -c '
import sys, time
l, i = [], 0
while True:
    l.append(str(i) * 50)
    i += 1
    if len(l) > 1000:
        l = []
        print(i, flush=True)
    time.sleep(0.0005)
' >py.out 2>py.err &
	pp=$!
	retry 100 0.1 test -s py.out
	attach_for "$pp" 2 run.py.err -r 1 -o py.pb.gz
	check "python3: detached, status 0" test "$rc" -eq 0
	sed 's/^/# /' run.py.err
	check "python3: its profile names python's allocation functions" \
		sh -c "palloc-dump -t 0 --sample-index alloc_space py.pb.gz 2>/dev/null | grep -Eq 'Py[A-Za-z_]+'"
	n=$(wc -l <py.out)
	check "python3: runs on after the detach" retry 100 0.1 \
		sh -c "test \$(wc -l <py.out) -gt $n"
	kill -TERM "$pp"
	wait "$pp"
	check "python3: ends by SIGTERM as usual, nothing on stderr" \
		sh -c "[ $? -eq 143 ] && ! test -s py.err"
else
	skip "no /usr/bin/python3"
	skip "no /usr/bin/python3"
	skip "no /usr/bin/python3"
	skip "no /usr/bin/python3"
fi

# ---- redis-server under redis-benchmark ----
if command -v redis-server >/dev/null 2>&1 &&
	command -v redis-benchmark >/dev/null 2>&1; then
	port=$((20000 + $$ % 20000))
	while redis-cli -h 127.0.0.1 -p $port ping >/dev/null 2>&1; do
		port=$((port + 1))
	done
	redis-server --port $port --bind 127.0.0.1 --save '' \
		--appendonly no --dir "$T" --logfile "$T/redis.log" \
		>/dev/null 2>redis.err &
	rp=$!
	retry 200 0.1 redis-cli -h 127.0.0.1 -p $port ping >/dev/null 2>&1
	thr0=$(threads "$rp")
	redis-benchmark -h 127.0.0.1 -p $port -n 2000000 -q -t set,get \
		>bench.out 2>&1 &
	bp=$!
	bad=0
	for i in $(seq 50); do
		attach_for "$rp" 0.1 run.redis.err -r 4096 -o 'redis.%n.pb.gz'
		if [ "$rc" -ne 0 ]; then
			bad=$((bad + 1))
			sed 's/^/# /' run.redis.err
		fi
		kill -0 "$bp" 2>/dev/null || diag "the benchmark ended at cycle $i"
		kill -0 "$rp" 2>/dev/null || {
			diag "redis-server ended at cycle $i"
			bad=$((bad + 1))
			break
		}
	done
	check "redis: 50 attach and detach cycles, all status 0" \
		test "$bad" -eq 0
	kill -0 "$bp" 2>/dev/null && kill -INT "$bp"
	wait "$bp"
	tr '\r' '\n' <bench.out | grep -v '^$' | tail -3 | sed 's/^/# /'
	check "redis: no error in the benchmark" \
		sh -c '! tr "\r" "\n" <bench.out | grep -qi error'
	check "redis: PING answered after" \
		sh -c "redis-cli -h 127.0.0.1 -p $port ping | grep -qx PONG"
	check "redis: the same threads" test "$(threads "$rp")" = "$thr0"
	check "redis: the profiles name redis's allocation sites" \
		sh -c "palloc-dump -t 0 --sample-index alloc_space redis.1.pb.gz 2>/dev/null | grep -Eq 'zmalloc|zcalloc|zrealloc|sdsnewlen|createObject'"
	kill -TERM "$rp"
	wait "$rp"
	check "redis: exits 0 on SIGTERM" test $? -eq 0
	check "redis: nothing on its stderr" test ! -s redis.err
else
	for i in 1 2 3 4 5 6 7; do skip "redis-server or redis-benchmark missing"; done
fi

done_testing
