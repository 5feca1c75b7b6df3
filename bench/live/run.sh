#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/live: does taking heap profiles and allocator state from a loaded
# redis-server slow it down? redis-benchmark throughput with no requests to
# the agent, then with palloc-dump + palloc-mallinfo every second, then with
# palloc-dump back to back, in alternating rounds; medians printed.
#
#   bench/live/run.sh [ROUNDS] [REQUESTS]     (defaults 5, 300000)
#
# Needs: a built tree (PALLOC_AGENT or ./libcore/.libs/libpalloc.so, cmd/ on
# PATH or ./cmd), redis-server, redis-benchmark, redis-cli, python3.
set -eu
rounds=${1:-5}
requests=${2:-300000}
agent=${PALLOC_AGENT:-$PWD/libcore/.libs/libpalloc.so}
PATH=$PWD/cmd:$PATH
tmp=$(mktemp -d)
port=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
LD_PRELOAD=$agent PALLOC_OUTPUT=$tmp/exit.%p.pb.gz redis-server \
	--port "$port" --bind 127.0.0.1 --save '' --appendonly no \
	>"$tmp/redis.log" 2>&1 &
redis=$!
loop=
# set +e first: under set -e a failing command would end the trap early
# and leave redis-server running.
trap 'set +e; [ -z "$loop" ] || kill $loop 2>/dev/null
	redis-cli -p $port shutdown nosave >/dev/null 2>&1
	kill $redis 2>/dev/null; wait $redis 2>/dev/null
	rm -rf "$tmp"' EXIT
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
pid=$(redis-cli -p "$port" info server | tr -d '\r' | sed -n 's/^process_id://p')

# CPU ticks (utime + stime) of redis's main thread and of the whole process.
ticks() {
	main=$(sed 's/.*) //' "/proc/$pid/task/$pid/stat" | awk '{ print $12 + $13 }')
	all=$(sed 's/.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }')
	echo "$main $all"
}
hz=$(getconf CLK_TCK)
bench() {
	redis-benchmark -p "$port" -t set,get -n "$requests" -r 100000 -d 256 \
		-c 50 --csv 2>/dev/null | tr -d '"' |
		awk -F, '$1 == "SET" { s = $2 } $1 == "GET" { g = $2 }
			END { printf "%d %d\n", s, g }'
}
# The requests to the agent, in a loop: every second, or back to back.
# sock: the agent's side alone, as fast as it answers: curl on the unix
# socket, no symbolization, no process started per request.
sockloop() {
	dir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/palloc}
	[ -n "$dir" ] && [ -d "$XDG_RUNTIME_DIR" ] || dir=/tmp/palloc-$(id -u)
	while :; do
		curl -s --unix-socket "$dir/$pid.sock" -o /dev/null \
			http://palloc/debug/pprof/heap
		curl -s --unix-socket "$dir/$pid.sock" -o /dev/null \
			http://palloc/debug/palloc/mallinfo
		echo >>"$tmp/count.sock"
	done
}
# At nice 19: on a small machine the commands' own work (symbolization)
# would otherwise compete with redis and redis-benchmark for the CPUs, and
# the question is what the requests cost inside redis.
dumper() {
	while :; do
		nice -n 19 palloc-dump "$pid" -o "$tmp/d.pb.gz" \
			2>>"$tmp/dump.err"
		nice -n 19 palloc-mallinfo --json "$pid" >/dev/null \
			2>>"$tmp/dump.err"
		echo >>"$tmp/count.$2"
		[ "$1" = 0 ] || sleep "$1"
	done
}

bench >/dev/null # warm up: fill the keyspace
: >"$tmp/none"; : >"$tmp/every1s"; : >"$tmp/b2b"; : >"$tmp/sock"
# one CASE: a benchmark run with that case's requests to the agent.
one() {
	case $1 in
	every1s) dumper 1 every1s & loop=$! ;;
	b2b) dumper 0 b2b & loop=$! ;;
	sock) sockloop & loop=$! ;;
	esac
	t0=$(ticks)
	res=$(bench)
	t1=$(ticks)
	# requests: SET and GET, $requests each; CPU in microseconds per request.
	echo "$res $t0 $t1" | awk -v n="$requests" -v hz="$hz" \
		'{ printf "%s %s %.2f %.2f\n", $1, $2, ($5 - $3) * 1e6 / hz / (2 * n),
			($6 - $4) * 1e6 / hz / (2 * n) }' >>"$tmp/$1"
	[ -z "$loop" ] || { kill $loop; wait $loop 2>/dev/null || true; }
	loop=
	echo "round $r $1: $(tail -1 "$tmp/$1")" >&2
}
# The order rotates each round, so drift of a shared machine spreads evenly.
for r in $(seq "$rounds"); do
	case $((r % 3)) in
	0) one none; one every1s; one b2b; one sock ;;
	1) one every1s; one b2b; one sock; one none ;;
	2) one b2b; one sock; one none; one every1s ;;
	esac
done
dumps=$(grep -c . "$tmp/dump.err" 2>/dev/null || true)
pairs() { cat "$tmp/count.$1" 2>/dev/null | wc -l; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '%-10s %10s %10s %16s %16s\n' "case" "SET rps" "GET rps" \
	"main us/req" "process us/req"
for c in none every1s b2b sock; do
	printf '%-10s %10s %10s %16s %16s\n' "$c" \
		"$(cut -d' ' -f1 "$tmp/$c" | median)" \
		"$(cut -d' ' -f2 "$tmp/$c" | median)" \
		"$(cut -d' ' -f3 "$tmp/$c" | median)" \
		"$(cut -d' ' -f4 "$tmp/$c" | median)"
done
echo "(medians of $rounds rounds of $requests SET + $requests GET, 50 clients)"
echo "dump+mallinfo pairs: every1s $(pairs every1s), b2b $(pairs b2b)," \
	"sock $(pairs sock) (all rounds)"
echo "errors from palloc-dump/palloc-mallinfo: ${dumps:-0}"
echo "heap of redis at the end: $(palloc-dump --stats --json "$pid" |
	sed -n 's/.*"allocator_allocated_bytes": *\([0-9]*\).*/\1/p') bytes allocated"
