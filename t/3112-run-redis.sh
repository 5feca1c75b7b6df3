#!/bin/sh
# SPDX-License-Identifier: MIT
# redis-server on loopback under palloc-run and redis-benchmark, at the
# default rate and at rate 1, stopped by a SIGTERM that palloc-run forwards:
# same replies and exit status as without palloc, a valid profile with
# redis's functions named, >= 90% of locations symbolized.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need redis-server redis-cli redis-benchmark
. "$top_srcdir/t/lib-run.sh"

# A free high port on 127.0.0.1.
port=$((20000 + $$ % 20000))
while redis-cli -h 127.0.0.1 -p $port ping >/dev/null 2>&1; do
	port=$((port + 1))
done

# serve OUT ERR [palloc-run options]: start redis-server (under palloc-run
# when options are given, "-" for none), wait until it answers, exercise it,
# stop it with SIGTERM; the replies go to OUT, the exit status to OUT.rc.
serve() {
	_out=$1 _err=$2
	shift 2
	if [ "$1" = - ]; then
		redis-server --port $port --bind 127.0.0.1 --save '' \
			--appendonly no --dir "$T" --logfile "$T/$_out.log" \
			>/dev/null 2>"$_err" &
	else
		palloc-run "$@" redis-server --port $port --bind 127.0.0.1 \
			--save '' --appendonly no --dir "$T" \
			--logfile "$T/$_out.log" >/dev/null 2>"$_err" &
	fi
	_pid=$!
	_i=0
	until redis-cli -h 127.0.0.1 -p $port ping >/dev/null 2>&1; do
		sleep 0.1
		_i=$((_i + 1))
		[ $_i -lt 200 ] || break
	done
	{
		redis-cli -h 127.0.0.1 -p $port set greeting hello
		redis-cli -h 127.0.0.1 -p $port rpush l a b c
		redis-benchmark -h 127.0.0.1 -p $port -n 20000 -q \
			-t set,get,lpush,lpop,incr >"$_out.bench" 2>&1
		echo "benchmark exit $?"
		grep -c 'requests per second' "$_out.bench"
		redis-cli -h 127.0.0.1 -p $port get greeting
		redis-cli -h 127.0.0.1 -p $port lrange l 0 2
	} >"$_out" 2>&1
	kill -TERM $_pid
	wait $_pid
	echo $? >"$_out.rc"
}

serve base.out base.err -
diag "without palloc: exit $(cat base.out.rc); $(tr '\n' ' ' <base.out)"
diag "$(tr '\n' ' ' <base.out.bench | tr -s ' \r')"

for rate in default 1; do
	set -- -o "redis.$rate.pb.gz"
	[ "$rate" = default ] || set -- "$@" -r "$rate"
	serve "run.$rate.out" "run.$rate.err" "$@"
	check "rate $rate: same exit status after SIGTERM ($(cat run.$rate.out.rc))" \
		cmp -s run.$rate.out.rc base.out.rc
	check "rate $rate: same replies, benchmark completed" \
		cmp -s run.$rate.out base.out
	diag "$(tr '\n' ' ' <run.$rate.out.bench | tr -s ' \r')"
	check_same_stderr "rate $rate" base.err "run.$rate.err"
	check_real "redis-server, rate $rate" "redis.$rate.pb.gz" \
		"run.$rate.err" \
		' (zmalloc|zcalloc|zrealloc|sdsnewlen|createObject|[a-z]+Command|[a-z]+[A-Z][A-Za-z]+)$' \
		"$(readlink -f "$(command -v redis-server)")"
done

echo "1..$_n"
done_testing
