#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/run: palloc-run's overhead as ratios to the same program without it.
#
#   bench/run/run.sh [BUILDDIR] [ROUNDS]
#
# In one run, ROUNDS (default 7) paired rounds of: the malloc-heavy loop
# bench/run/churn.c (10 million malloc/free pairs of mixed sizes) and
# redis-server under redis-benchmark (50,000 SET and 50,000 GET, 50
# clients), each without palloc, under palloc-run at the default rate and at
# rate 1, in that order within a round. For each measure it prints the
# median over rounds of the ratio to the same round's baseline, and the
# min-max. Measures: churn wall time and CPU time (user+sys of the whole
# run, palloc-run's symbolization included), redis requests per second
# (SET, GET) and redis-server CPU time per request (INFO cpu, before and
# after the benchmark). Time ratios > 1 and throughput ratios < 1 are the
# overhead. On a shared machine the CPU ratios are the steadier ones. It
# also prints palloc-run's fixed cost, the CPU time of `palloc-run true`
# (agent start, profile write, symbolization) less that of `true`.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"
find_run "${1:-$src}"
rounds=${2:-7}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/palloc-bench.XXXXXX") || exit 2
port=$((30000 + $$ % 20000))
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
cc -O2 -o churn "$src/bench/run/churn.c" || exit 2

# prefix MODE: set PRE to the words that run a command without palloc
# (base), or under palloc-run at the default rate (default) or at rate MODE.
prefix() {
	case $1 in
	base) PRE=() ;;
	default) PRE=("$run" -q -o "$tmp/prof.pb.gz") ;;
	*) PRE=("$run" -q -r "$1" -o "$tmp/prof.pb.gz") ;;
	esac
}

# churn_time MODE: "WALL CPU" seconds of one churn run.
churn_time() {
	local TIMEFORMAT='%R %U %S' PRE
	prefix "$1"
	{ time "${PRE[@]}" ./churn 10 >/dev/null 2>&1; } 2>&1 |
		awk '{ printf "%s %.3f\n", $1, $2 + $3 }'
}

# redis_cpu: the server's used CPU seconds (user + sys) so far.
redis_cpu() {
	redis-cli -p $port info cpu | tr -d '\r' | awk -F: '
		$1 == "used_cpu_sys" || $1 == "used_cpu_user" { s += $2 }
		END { printf "%.6f\n", s }'
}

# redis_run MODE: "SET_RPS GET_RPS CPU_US_PER_REQUEST" against a fresh
# redis-server.
redis_run() {
	local pid i c0 c1 rps PRE
	prefix "$1"
	"${PRE[@]}" redis-server --port $port --bind 127.0.0.1 --save '' \
		--appendonly no --dir "$tmp" --logfile "$tmp/redis.log" &
	pid=$!
	for ((i = 0; i < 400; i++)); do
		redis-cli -p $port ping >/dev/null 2>&1 && break
		sleep 0.05
	done
	c0=$(redis_cpu)
	rps=$(redis-benchmark -p $port -n 50000 -q -t set,get 2>/dev/null |
		tr '\r' '\n' | awk '
		/^SET: [0-9.]+ requests per second/ { s = $2 }
		/^GET: [0-9.]+ requests per second/ { g = $2 }
		END { print s, g }')
	c1=$(redis_cpu)
	kill -TERM $pid
	wait $pid
	echo "$rps $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.3f", (b - a) * 1e6 / 100000 }')"
}

# ratio A B: A / B with 4 decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", a / b }'; }

# summary NAME FILE: a table row, median and min-max of FILE's numbers.
summary() {
	sort -g "$2" | awk -v name="$1" '
		{ v[NR] = $1 }
		END {
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "| %s | %.2f | %.2f-%.2f |\n", name, m, v[1], v[NR]
		}'
}

for m in default 1; do
	: >"wall.$m" ; : >"cpu.$m" ; : >"set.$m" ; : >"get.$m" ; : >"rcpu.$m"
done
: >abs
: >fixed
: >fixed.raw
for ((r = 1; r <= rounds; r++)); do
	read -r bw bc < <(churn_time base)
	read -r bs bg bu < <(redis_run base)
	echo "round $r base: churn ${bw}s wall ${bc}s cpu; redis SET $bs/s GET $bg/s, ${bu}us cpu/request" >>abs
	for m in default 1; do
		read -r w c < <(churn_time $m)
		read -r s g u < <(redis_run $m)
		echo "round $r rate $m: churn ${w}s wall ${c}s cpu; redis SET $s/s GET $g/s, ${u}us cpu/request" >>abs
		ratio "$w" "$bw" >>"wall.$m"
		ratio "$c" "$bc" >>"cpu.$m"
		ratio "$s" "$bs" >>"set.$m"
		ratio "$g" "$bg" >>"get.$m"
		ratio "$u" "$bu" >>"rcpu.$m"
	done
done

# The fixed cost, median of 5.
for ((i = 0; i < 5; i++)); do
	read -r _ bc < <(TIMEFORMAT='%R %U %S'; { time /bin/true; } 2>&1 |
		awk '{ print $1, $2 + $3 }')
	read -r _ pc < <(TIMEFORMAT='%R %U %S'
		{ time "$run" -q -o "$tmp/t.pb.gz" /bin/true; } 2>&1 |
		awk '{ print $1, $2 + $3 }')
	read -r _ rc < <(TIMEFORMAT='%R %U %S'
		{ time "$run" -q --no-symbolize -o "$tmp/t.pb.gz" /bin/true; } 2>&1 |
		awk '{ print $1, $2 + $3 }')
	awk -v a="$pc" -v b="$bc" 'BEGIN { printf "%.0f\n", (a - b) * 1000 }' >>fixed
	awk -v a="$rc" -v b="$bc" 'BEGIN { printf "%.0f\n", (a - b) * 1000 }' >>fixed.raw
done
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "palloc-run overhead: $rounds paired rounds, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| ratio to the same program without palloc | median | min-max |"
echo "| --- | --- | --- |"
for m in default 1; do
	label=$([ $m = default ] && echo "default rate (512 KiB)" || echo "rate 1")
	summary "churn wall time, $label" "wall.$m"
	summary "churn CPU time, $label" "cpu.$m"
	summary "redis SET requests/s, $label" "set.$m"
	summary "redis GET requests/s, $label" "get.$m"
	summary "redis-server CPU per request, $label" "rcpu.$m"
done
echo
echo "palloc-run's fixed cost (CPU of palloc-run true less true, median of 5): $(median fixed) ms, $(median fixed.raw) ms with --no-symbolize"
echo
sed 's/^/    /' abs
