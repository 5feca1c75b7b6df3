#!/bin/sh
# SPDX-License-Identifier: MIT
# The TCP servers under many idle connections (1100 of
# them made 1006 threads and a listening thread spinning at 100 % CPU), and
# the addresses they refuse to listen on without --allow-users any.
. "$top_srcdir/t/lib.sh"
need_agent
need curl leaker palloc-run python3

plan 10
# Not loopback: a usage error naming the option, before anything runs.
expect_fail 125 timeout_run 10 palloc-run --http 0.0.0.0:0 -- true >out 2>err
check "palloc-run --http 0.0.0.0: exit 125, nothing on stdout" \
	test $? -eq 0 -a ! -s out
check "palloc-run: says why" grep -q \
	"^palloc-run: cannot serve on '0.0.0.0:0': not a loopback address: .*--allow-users=any" err
expect_fail 2 timeout_run 10 palloc-dump --serve '[::]:0' >out 2>err
check "palloc-dump --serve [::]: exit 2, nothing on stdout" \
	test $? -eq 0 -a ! -s out
check "palloc-dump: two lines, the reason and --help" \
	test "$(wc -l <err)" = 2 -a "$(grep -c 'not a loopback address' err)" = 1

# single-threaded: its agent answers while it allocates (palloc(7), Threads)
LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=4096 leaker --seconds 120 \
	--rate 65536 2>leaker.err &
pid=$!
server=
flood=
trap 'kill $pid $server $flood 2>/dev/null; wait $pid $server $flood 2>/dev/null;
	cleanup_tmp' EXIT
retry 100 0.1 palloc-dump --stats $pid >/dev/null 2>&1
palloc-dump --serve 127.0.0.1:0 $pid 2>serve.err &
server=$!
i=0
until grep -q serving serve.err 2>/dev/null || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
url=$(sed -n 's|.*serving \(http://[^ ]*\)/$|\1|p' serve.err)
port=${url##*:}

# 1100 connections that send nothing, held until stdin closes.
cat >flood.py <<'EOF'
import resource, socket, sys
n, port = int(sys.argv[1]), int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft != resource.RLIM_INFINITY and soft < n + 64:
    want = n + 64 if hard == resource.RLIM_INFINITY else min(hard, n + 64)
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
held = []
for i in range(n):
    s = socket.socket()
    s.settimeout(10)
    try:
        s.connect(("127.0.0.1", port))
    except OSError as e:
        print("connect %d: %s" % (i, e), file=sys.stderr)
        s.close()
        break
    held.append(s)
print(len(held), flush=True)
sys.stdin.read()
for s in held:
    s.close()
EOF
mkfifo hold
python3 flood.py 1100 "$port" <hold >flood.out 2>flood.err &
flood=$!
exec 9>hold
i=0
until [ -s flood.out ] || [ $i -ge 600 ]; do sleep 0.1; i=$((i + 1)); done
diag "idle connections held: $(cat flood.out) $(cat flood.err)"
check "1100 connections opened" test "$(cat flood.out)" = 1100
# Measure once the server has taken them all (a loaded machine accepts the
# backlog for a while): its descriptors then number over 1100.
nfd() { ls /proc/$server/fd 2>/dev/null | wc -l; }
retry 600 0.1 sh -c "[ \$(ls /proc/$server/fd 2>/dev/null | wc -l) -gt 1100 ]"
diag "server descriptors: $(nfd)"

c=$(curl -s -m 20 -o stats.json -w '%{http_code}' "$url/debug/palloc/stats")
check "a real request is answered meanwhile (got $c)" test "$c" = 200
threads=$(awk '/^Threads:/ { print $2 }' /proc/$server/status)
check "threads stay few ($threads)" test "$threads" -le 16
cpu() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' /proc/$server/stat; }
before=$(cpu)
sleep 2
after=$(cpu)
hz=$(getconf CLK_TCK)
diag "server CPU over 2 s with 1100 idle connections: $((after - before)) of $hz ticks a second"
check "no spinning: under 0.5 s of CPU in 2 s" \
	test $((after - before)) -lt $((hz / 2))
exec 9>&-
wait $flood
flood=
c=$(curl -s -m 20 -o /dev/null -w '%{http_code}' "$url/debug/palloc/stats")
check "still answering after they close (got $c)" test "$c" = 200
cpu0=$(cpu)
sleep 1
check "and idle again" test $(($(cpu) - cpu0)) -lt $((hz / 2))
done_testing
