#!/bin/sh
# SPDX-License-Identifier: MIT
# Slow, silent and impatient clients of the agent's control socket (issue
# 11, item 14), served by the program's own thread (single-threaded) and by
# the agent's thread (once the program has one): 16 silent connections do
# not keep a real client waiting, a client trickling its request is cut
# off, and a ?seconds=60 client holds nobody up, connected or hung up.
. "$top_srcdir/t/lib.sh"
need_agent
need curl jq python3 sig-alloc

dir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/palloc}
[ -n "$dir" ] && [ -d "$XDG_RUNTIME_DIR" ] || dir=/tmp/palloc-$(id -u)
pids=
trap 'kill $pids 2>/dev/null; wait 2>/dev/null; cd /; rm -rf "$T"' EXIT

# silent.py SOCK N: connect N times, say nothing, write "ready"; once the
# file "answered" exists, print how many of the N the agent still holds
# open (a closed one reads EOF at once).
cat >silent.py <<'PY'
import os, socket, sys, time
conns = []
for i in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    conns.append(s)
open("ready", "w").close()
for i in range(1200):
    if os.path.exists("answered"):
        break
    time.sleep(0.05)
still = 0
for s in conns:
    s.setblocking(False)
    try:
        still += s.recv(1) != b""
    except BlockingIOError:
        still += 1
    except OSError:
        pass
print(still)
PY

# trickle.py SOCK: send a request one byte every 0.3 s; print how many
# bytes went out before the agent answered or closed.
cat >trickle.py <<'PY'
import socket, sys, time
req = b"GET /debug/palloc/stats HTTP/1.0\r\nHost: palloc\r\n\r\n"
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(0.3)
sent = 0
for b in req:
    try:
        if s.recv(4096) is not None:
            break
    except socket.timeout:
        pass
    try:
        s.send(bytes([b]))
    except OSError:
        break
    sent += 1
print(sent, len(req))
PY

# waiter.py SOCK: ask for ?seconds=60, write "asked", then hang up after
# 0.5 s (argument "hangup") or stay connected.
cat >waiter.py <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"GET /debug/pprof/heap?seconds=60 HTTP/1.0\r\n\r\n")
time.sleep(0.5)
open("asked", "w").close()
if sys.argv[2] == "hangup":
    s.close()
else:
    time.sleep(120)
PY

stats() {
	curl -sf --max-time 50 --unix-socket "$sock" -o "$1" \
		http://palloc/debug/palloc/stats && jqe '.format == "palloc-stats"' "$1"
}

plan 12
for mode in single thread; do
	mkdir "$mode" && cd "$mode" || exit 99
	arg=
	[ $mode = thread ] && arg=thread
	LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 sig-alloc live 120 $arg &
	pid=$!
	pids="$pids $pid"
	sock=$dir/$pid.sock
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	retry 50 0.1 stats first.json
	check "$mode: the agent answers" test $? -eq 0

	python3 ../silent.py "$sock" 16 >silent.out &
	spid=$!
	i=0
	while [ ! -f ready ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	stats s16.json
	rc=$?
	touch answered
	wait $spid
	check "$mode: a client answered beside 16 silent ones" test $rc -eq 0
	check "$mode: ... while the agent still held some of them open ($(cat silent.out))" \
		test "$(cat silent.out)" -ge 1

	timeout_run 60 python3 ../trickle.py "$sock" >trickle.out
	set -- $(cat trickle.out)
	check "$mode: a trickling client is cut off (sent ${1:-?} of ${2:-?} bytes)" \
		test -n "$1" -a "${1:-0}" -lt "${2:-0}"

	python3 ../waiter.py "$sock" stay &
	wpid=$!
	i=0
	while [ ! -f asked ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	stats w1.json
	check "$mode: a ?seconds=60 client holds no other up" test $? -eq 0
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	rm -f asked
	python3 ../waiter.py "$sock" hangup
	stats w2.json
	check "$mode: nor does one that hung up" test $? -eq 0
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	cd .. || exit 99
done
done_testing
