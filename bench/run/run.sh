#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/run: palloc-run's overhead as ratios to the same program without it.
#
#   bench/run/run.sh [BUILDDIR] [ROUNDS]
#
# In one run, ROUNDS (default 5) paired rounds of: the malloc-heavy loop
# bench/run/churn.c (wall time, 5 million malloc/free pairs) and
# redis-server under redis-benchmark (SET and GET requests per second),
# each without palloc, under palloc-run at the default rate and at rate 1,
# in that order within a round. Prints the median ratio to the baseline of
# the same round, with the min-max over rounds. Time ratios > 1 are slower;
# throughput ratios < 1 are slower.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src}" && pwd)
rounds=${2:-5}
run=$build/cmd/palloc-run
[ -x "$run" ] || { echo "run.sh: no $run (build first)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/palloc-bench.XXXXXX") || exit 2
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
cc -O2 -o churn "$src/bench/run/churn.c" || exit 2

now_ns() { date +%s%N; }

# churn_time MODE: wall nanoseconds of one churn run (base, default, 1).
churn_time() {
	_t0=$(now_ns)
	case $1 in
	base) ./churn 5 >/dev/null ;;
	default) "$run" -q -o churn.pb.gz ./churn 5 >/dev/null ;;
	*) "$run" -q -r "$1" -o churn.pb.gz ./churn 5 >/dev/null ;;
	esac
	_t1=$(now_ns)
	echo $((_t1 - _t0))
}

port=$((30000 + $$ % 20000))
# redis_rps MODE: "SET GET" requests per second of one benchmark run
# against a fresh redis-server (base, default, 1).
redis_rps() {
	case $1 in
	base) set -- ;;
	default) set -- "$run" -q -o redis.pb.gz ;;
	*) set -- "$run" -q -r "$1" -o redis.pb.gz ;;
	esac
	"$@" redis-server --port $port --bind 127.0.0.1 --save '' \
		--appendonly no --dir "$tmp" --logfile "$tmp/redis.log" &
	_pid=$!
	_i=0
	until redis-cli -p $port ping >/dev/null 2>&1; do
		sleep 0.05
		_i=$((_i + 1))
		[ $_i -lt 400 ] || break
	done
	redis-benchmark -p $port -n 50000 -q -t set,get 2>/dev/null |
		tr '\r' '\n' | awk '
		/^SET: [0-9.]+ requests per second/ { s = $2 }
		/^GET: [0-9.]+ requests per second/ { g = $2 }
		END { print s, g }'
	kill -TERM $_pid
	wait $_pid
}

# summary NAME FILE: median [min-max] of the numbers in FILE, 3 decimals.
summary() {
	sort -g "$2" | awk -v name="$1" '
		{ v[NR] = $1 }
		END {
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "| %s | %.3f | %.3f-%.3f | %d |\n", name, m, v[1], v[NR], NR
		}'
}

: >churn.default
: >churn.1
: >set.default
: >set.1
: >get.default
: >get.1
: >abs
for r in $(seq "$rounds"); do
	b=$(churn_time base)
	d=$(churn_time default)
	o=$(churn_time 1)
	echo "$d $b" | awk '{ printf "%.4f\n", $1 / $2 }' >>churn.default
	echo "$o $b" | awk '{ printf "%.4f\n", $1 / $2 }' >>churn.1
	echo "round $r churn ms: base $((b / 1000000)) default $((d / 1000000)) rate1 $((o / 1000000))" >>abs
	set -- $(redis_rps base)
	bs=$1 bg=$2
	set -- $(redis_rps default)
	ds=$1 dg=$2
	set -- $(redis_rps 1)
	os=$1 og=$2
	echo "round $r redis rps SET/GET: base $bs/$bg default $ds/$dg rate1 $os/$og" >>abs
	echo "$ds $bs" | awk '{ printf "%.4f\n", $1 / $2 }' >>set.default
	echo "$os $bs" | awk '{ printf "%.4f\n", $1 / $2 }' >>set.1
	echo "$dg $bg" | awk '{ printf "%.4f\n", $1 / $2 }' >>get.default
	echo "$og $bg" | awk '{ printf "%.4f\n", $1 / $2 }' >>get.1
done

echo "palloc-run overhead, $rounds paired rounds ($(date -u +%Y-%m-%d), $(nproc) CPUs)"
echo
echo "| measure (ratio to no palloc) | median | min-max | rounds |"
echo "| --- | --- | --- | --- |"
summary "churn wall time, default rate" churn.default
summary "churn wall time, rate 1" churn.1
summary "redis SET requests/s, default rate" set.default
summary "redis SET requests/s, rate 1" set.1
summary "redis GET requests/s, default rate" get.default
summary "redis GET requests/s, rate 1" get.1
echo
sed 's/^/    /' abs
