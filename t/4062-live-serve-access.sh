#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-dump --serve and palloc-run --http answer only their own user and
# root: another local user gets 403, unless
# --allow-users names it; a client that hangs up ends its ?seconds wait,
# which holds neither the agent nor the server's other clients.
. "$top_srcdir/t/lib.sh"
need_agent
need curl leaker palloc-run python3 setpriv useradd userdel
[ "$(id -u)" = 0 ] || skip_all "needs root to create two users"

owner=palloc4058a
other=palloc4058b
for u in $owner $other; do
	id -u $u >/dev/null 2>&1 || useradd -M -N -s /bin/false $u ||
		skip_all "useradd $u failed"
done
# $(as USER) CMD...: run CMD as USER, exec'd all the way ($! is its pid).
as() {
	printf 'env -u XDG_RUNTIME_DIR -u PALLOC_RECORD_DIR setpriv --reuid=%s --regid=%s --clear-groups' \
		"$(id -u "$1")" "$(id -g "$1")"
}
chmod 711 "$T"
for_other_users leaker palloc-dump palloc-run || skip_all "cannot copy the commands"
mkdir w && chmod 1777 w && cd w || exit 99

pids=
cleanup() {
	kill $pids 2>/dev/null
	wait $pids 2>/dev/null
	cleanup_tmp
	userdel -f $owner 2>/dev/null
	userdel -f $other 2>/dev/null
}
trap cleanup EXIT

# The leaker, as the owner, keeps its record in the owner's directory
# (not the test's PALLOC_RECORD_DIR, which only root may enter).
$(as $owner) env PALLOC_OUTPUT=/dev/null LD_PRELOAD="$PALLOC_AGENT" \
	PALLOC_SAMPLE_RATE=4096 leaker --seconds 120 --rate 65536 2>leaker.err &
pid=$!
pids=$pid
i=0
until $(as $owner) palloc-dump --stats $pid >/dev/null 2>&1 || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done

# serve LOG ARGS...: palloc-dump --serve as the owner; sets url and server.
serve() {
	_log=$1
	shift
	$(as $owner) palloc-dump --serve 127.0.0.1:0 "$@" $pid 2>"$_log" &
	server=$!
	pids="$pids $server"
	_i=0
	until grep -q serving "$_log" 2>/dev/null || [ $_i -ge 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	url=$(sed -n 's|.*serving \(http://[^ ]*\)/$|\1|p' "$_log")
}
# code USER PATH: the HTTP status USER gets.
code() {
	$(as "$1") curl -s -m 30 -o /dev/null -w '%{http_code}' "$url$2"
}

plan 16
serve serve.err
diag "palloc-dump --serve: $url"
c=$(code $other /debug/palloc/stats)
check "--serve: another user gets 403 (got $c)" test "$c" = 403
c=$(code $other /metrics)
check "--serve: /metrics too (got $c)" test "$c" = 403
c=$(code $owner /debug/palloc/stats)
check "--serve: the owner gets 200 (got $c)" test "$c" = 200
c=$(code root /debug/pprof/heap)
check "--serve: root gets 200 (got $c)" test "$c" = 200
check "one warning line per refusal" \
	test "$(grep -c "refused a request from uid $(id -u $other)" serve.err)" = 1
sed 's/^/# /' serve.err

# ?seconds: hung up clients free their place. At most 16 deltas at once;
# 16 clients ask for an hour and hang up after 1 s, then a 17th is served.
i=0
curls=
while [ $i -lt 16 ]; do
	$(as $owner) curl -s -m 1 -o /dev/null \
		"$url/debug/pprof/heap?seconds=3600" &
	curls="$curls $!"
	i=$((i + 1))
done
wait $curls
# The server looks every 0.2 s: give it up to 10 s on a loaded machine.
i=0
until c=$(code $owner '/debug/pprof/heap?seconds=1') && [ "$c" = 200 ] ||
	[ $i -ge 20 ]; do
	sleep 0.5
	i=$((i + 1))
done
check "?seconds waits end when their clients hang up (got $c)" test "$c" = 200
$(as $owner) palloc-dump --timeout 3 --stats $pid >stats.json 2>stats.err
check "the agent itself is not held by ?seconds" test $? -eq 0
c=$($(as $owner) curl -s -m 10 -o delta.pb.gz -w '%{http_code}' \
	"$url/debug/pprof/heap?seconds=1&symbolize=0")
check "a delta profile is served (got $c)" test "$c" = 200
check "and decodes" sh -c "palloc-dump delta.pb.gz --json >delta.json"
c=$(code $owner '/debug/pprof/heap?seconds=3601')
check "at most 3600 seconds (got $c)" test "$c" = 400
kill $server
wait $server 2>/dev/null

serve allow.err --allow-users=$other
c=$(code $other /debug/palloc/stats)
check "--allow-users USER: that user gets 200 (got $c)" test "$c" = 200
kill $server
wait $server 2>/dev/null
serve any.err --allow-users any
c=$(code $other /debug/palloc/stats)
check "--allow-users any: 200 (got $c)" test "$c" = 200
kill $server
wait $server 2>/dev/null

# palloc-run --http as the owner.
port=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
$(as $owner) palloc-run -q -r 4096 --http "127.0.0.1:$port" \
	-o "$PWD/run.%p.pb.gz" -- leaker --seconds 120 --rate 65536 \
	>run.out 2>run.err &
run=$!
pids="$pids $run"
i=0
until [ "$(code $owner /debug/palloc/stats)" = 200 ] || [ $i -ge 100 ]; do
	kill -0 $run 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
c=$(code $other /debug/palloc/stats)
check "--http: another user gets 403 (got $c)" test "$c" = 403
c=$(code $owner /debug/palloc/stats)
check "--http: the owner gets 200 (got $c)" test "$c" = 200
c=$(code root /debug/palloc/stats)
check "--http: root gets 200 (got $c)" test "$c" = 200
check "--http: the refusal logged" grep -q "refused a request from uid" run.err
done_testing
