#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-dump --push against fake Pyroscope, Parca and OTLP receivers on
# loopback (t/helper/push-server.py: their servers' rules as their sources
# state them). A service under LD_PRELOAD alone at rate 1 allocates two
# blocks of 1000 bytes every 250 ms and keeps the last 6: every window's
# alloc values are what it allocated in that window, its inuse values the
# 6000 bytes it holds, every upload names the service and its pid. The
# Pyroscope receiver goes away and comes back: the pusher keeps running,
# says so in two lines, stays small, and uploads again. A server that
# never answers costs a timeout. Bad input: one line, exit 2.
. "$top_srcdir/t/lib.sh"
need_agent
need jq push-steady
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "no /usr/bin/python3"
if asan palloc-dump; then skip_all "a sanitized build cannot load the agent"; fi
plan 26

srv=$top_srcdir/t/helper/push-server.py
pids=
trap 'kill -9 $pids 2>/dev/null; wait 2>/dev/null; cleanup_tmp' EXIT

# One process for the four receivers (srv/KIND.port, srv/KIND.log).
mkdir srv
"$PY" "$srv" srv push_burst pyroscope parca otlp hang 2>srv.err &
fake=$!
pids="$pids $fake"
for k in pyroscope parca otlp hang; do
	retry 600 0.05 test -s "srv/$k.port" ||
		{ echo "Bail out! no fake receivers"; cat srv.err; exit 1; }
done
py_port=$(cat srv/pyroscope.port)
pa_port=$(cat srv/parca.port)
ot_port=$(cat srv/otlp.port)
hang_port=$(cat srv/hang.port)
py=srv/pyroscope.log
pa=srv/parca.log
# pyroscope_is STATE: SIGUSR1 took the Pyroscope receiver down or up.
pyroscope_is() { [ "$(cat srv/pyroscope.state 2>/dev/null)" = "$1" ]; }

# uploads LOG PID [LABEL]: the accepted uploads of process PID in LOG
# with label env=LABEL (default test: the pusher of the pid).
uploads() {
	[ -f "$1" ] || { echo 0; return; }
	jq -s --arg pid "$2" --arg env "${3:-test}" '[.[] | select(.ok and
		.labels.pid == $pid and .labels.env == $env)] | length' "$1"
}
# at_least N LOG PID [LABEL]: LOG holds N uploads of PID.
at_least() { [ "$(uploads "$2" "$3" "${4:-test}")" -ge "$1" ]; }


PALLOC_SAMPLE_RATE=1 LD_PRELOAD=$PALLOC_AGENT push-steady 1000 2 250 6 \
	>a.out 2>a.err &
a=$!
pids="$pids $a"
retry 100 0.05 grep -q ready a.out

# The service's pid (its memory is checked: every process of ours would
# be symbolized too without one, with the files of other tests).
palloc-dump --push "pyroscope=http://127.0.0.1:$py_port" \
	--push "parca=http://127.0.0.1:$pa_port/" --every 1 --label env=test \
	--header 'X-Scope-OrgID: tenant1' "$a" 2>push.err &
d=$!
pids="$pids $d"
# Meanwhile, a server that takes a request and never answers.
palloc-dump --push "pyroscope=http://127.0.0.1:$hang_port" --every 1 \
	"$a" 2>hang.err &
h=$!
pids="$pids $h"

# No pid, meanwhile: every process of ours with an agent, found at each
# window; one that starts later is found at the next ones.
palloc-dump --push "parca=http://127.0.0.1:$pa_port" --every 1 \
	--label env=all 2>all.err &
e=$!
pids="$pids $e"
retry 300 0.1 at_least 1 $pa "$a" all
PALLOC_SAMPLE_RATE=1 LD_PRELOAD=$PALLOC_AGENT push-steady 500 1 250 3 \
	>b.out 2>b.err &
b=$!
pids="$pids $b"
retry 300 0.1 at_least 3 $py "$a"
check "Pyroscope got 3 windows of the service" at_least 3 $py "$a"
check "Parca got 3 windows of the service" at_least 3 $pa "$a"

# The receiver goes away for at least two windows, then comes back on
# its port.
kill -USR1 "$fake"
retry 300 0.05 pyroscope_is down
n=$(uploads $pa "$a")
retry 300 0.1 at_least $((n + 2)) $pa "$a"
check "the pusher runs on while Pyroscope is away" kill -0 "$d"
before=$(uploads $py "$a")
back=$(date +%s%N)
kill -USR1 "$fake"
retry 300 0.05 pyroscope_is up || echo "# fake Pyroscope did not come back"
retry 300 0.1 at_least $((before + 1)) $py "$a"
first=$(jq -s --arg pid "$a" '[.[] | select(.ok and .labels.pid == $pid and
	.labels.env == "test")]
	| .['"$before"'].received_ns // 0' $py)
# Within two windows, counted in windows (the Parca receiver's uploads
# between the return and that first upload, one more for the window under
# way), not in seconds: the pusher's own pace is the clock on a loaded machine.
gap=$(jq -s --arg pid "$a" --argjson b "$back" --argjson f "$first" '[.[] |
	select(.ok and .labels.pid == $pid and .labels.env == "test" and
	.received_ns > $b and .received_ns < $f)] | length' $pa)
if [ "$first" -gt 0 ] && [ "${gap:-99}" -le 3 ]; then
	ok "uploads again within two windows of its return"
else
	not_ok "uploads again within two windows of its return"
	echo "# back at $back, first upload at $first, $gap Parca windows between"
fi
retry 100 0.1 grep -q "pushing again" push.err
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$d/status")
if asan palloc-dump || [ "${hwm:-999999}" -lt 65536 ]; then
	ok "the pusher stays under 64 MiB (VmHWM ${hwm:-?} KiB)"
else
	not_ok "the pusher stays under 64 MiB (VmHWM ${hwm:-?} KiB)"
fi
kill -TERM "$d"
retry 100 0.05 sh -c "! kill -0 $d 2>/dev/null"
wait "$d"
check "SIGTERM ends it, exit 0" test $? -eq 0
if [ "$(wc -l <push.err)" -le 3 ] &&
	grep -q "pyroscope http://127.0.0.1:$py_port: cannot push" push.err &&
	grep -q "pyroscope http://127.0.0.1:$py_port: pushing again" push.err; then
	ok "one line when it went away, one when it came back"
else
	not_ok "one line when it went away, one when it came back"
	sed 's/^/# /' push.err
fi
if kill -0 "$h" && [ "$(wc -l <hang.err)" -eq 1 ] &&
	grep -q "cannot push (Timeout" hang.err; then
	kill -TERM "$h"
	wait "$h"
	check "a server that never answers: one line, SIGTERM, exit 0" \
		test $? -eq 0
else
	not_ok "a server that never answers: one line, SIGTERM, exit 0"
	sed 's/^/# /' hang.err
fi
kill -9 "$a"
retry 300 0.1 at_least 1 $pa "$b" all
check "without a pid: the processes found, one started later too" \
	jqe -s --arg a "$a" --arg b "$b" '[.[] | select(.ok and .labels.env ==
		"all") | .labels.pid] | index($a) and index($b)' $pa
kill -9 "$b"
kill -TERM "$e"

# The windows, checked against the bursts push-steady said it made.
cat >verify.py <<'EOF'
import json, sys
log, kind, pid, burst_file, size, per, hold = sys.argv[1:8]
size, per, hold = int(size), int(per), int(hold)
bursts = [tuple(map(int, l.split()[1:3])) for l in open(burst_file)
          if l.startswith("burst ")]
margin = 100 * 10**6  # the record is copied just before time_nanos
bad = n = 0
for line in open(log):
    r = json.loads(line)
    if (not r["ok"] or r["labels"].get("pid") != pid or
            r["labels"].get("env") != "test"):
        continue
    for s in r["series"]:
        until = s["time_nanos"]
        frm = until - s["duration_nanos"] if s["duration_nanos"] else None
        f = s["func"]
        if s.get("delta", kind == "pyroscope") or kind == "pyroscope":
            if frm is None:
                continue
            n += 1
            sure = sum(1 for t0, t1 in bursts
                       if t0 > frm and t1 < until - margin)
            maybe = sum(1 for t0, t1 in bursts
                        if t1 > frm - margin and t0 <= until)
            objs = f["alloc_objects"]
            if (f["alloc_space"] != size * objs or
                    not sure * per <= objs <= maybe * per):
                bad += 1
                print("# window %d..%d: %d objects, %d bytes; bursts "
                      "%d..%d" % (frm, until, objs, f["alloc_space"],
                                  sure, maybe))
        if kind == "pyroscope" or not s.get("delta"):
            done = sum(1 for t0, t1 in bursts if t1 < until - margin)
            if done * per < hold:
                continue
            if f["inuse_space"] != size * hold or f["inuse_objects"] != hold:
                bad += 1
                print("# snapshot at %d: %d objects, %d bytes" %
                      (until, f["inuse_objects"], f["inuse_space"]))
print("# %s: %d windows checked, %d wrong" % (kind, n, bad))
sys.exit(1 if bad or n < 3 else 0)
EOF
check "Pyroscope: each window's alloc = the bursts of that window, inuse 6000 B exactly" \
	"$PY" verify.py $py pyroscope "$a" a.out 1000 2 6
check "Parca: the same in its two series" \
	"$PY" verify.py $pa parca "$a" a.out 1000 2 6

host=$(uname -n)
check "every Pyroscope upload names the service, pid, hostname, label" \
	jqe -s --arg pid "$a" --arg h "$host" '[.[] | select(.ok and
		.labels.pid == $pid and .labels.env == "test")] | length > 0 and all(.service ==
		"push-steady" and .labels.hostname == $h and .labels.env ==
		"test" and .spyName == "palloc" and .from < .until and
		.headers["x-scope-orgid"] == "tenant1")' $py
check "Pyroscope names the profile memory, from alloc_ and inuse_ types" \
	jqe -s '[.[] | select(.ok) | .series[]] | all(.type_name ==
		"memory" and (.types | index("alloc_space") and
		index("inuse_space")))' $py
check "every Parca upload: service_name, pid, hostname, label" \
	jqe -s --arg pid "$a" --arg h "$host" '[.[] | select(.ok and
		.labels.pid == $pid and .labels.env == "test")] | length > 0 and all(.service ==
		"push-steady" and .labels.hostname == $h and .labels.env ==
		"test")' $pa
check "Parca: an alloc delta and an inuse snapshot per window" \
	jqe -s --arg pid "$a" '[.[] | select(.ok and .labels.pid == $pid and
		.labels.env == "test")] | length > 0 and all(.series | length
		== 2 and (.[0].type_names | index(
		"memory:alloc_space:bytes:space:bytes:delta")) and
		(.[1].type_names | index("memory:inuse_space:bytes:space:bytes"))
		and .[1].duration_nanos == 0)' $pa
check "every upload was accepted" \
	jqe -s 'all(.ok)' $py $pa
check "the frames are symbolized: push_burst and main" \
	jqe -s '[.[] | select(.ok) | .series[] | select(.func.alloc_space > 0)
		| .functions] | length > 0 and all(index("push_burst") and
		index("main"))' $py

if command -v go >/dev/null 2>&1; then
	fails=0
	# a Pyroscope body, and a Parca request's two (alloc, inuse)
	for f in $( (jq -r --arg pid "$a" 'select(.ok and .labels.pid == $pid
		and .labels.env == "test") | .series[].body' $py | tail -n 1
		jq -r --arg pid "$a" 'select(.ok and .labels.pid == $pid
		and .labels.env == "test") | .series[].body' $pa |
		tail -n 2)); do
		pprof -raw "$f" >raw.txt 2>raw.err &&
			grep -q push_burst raw.txt || {
			fails=$((fails + 1))
			echo "# $f: $(head -c 300 raw.err)"
		}
	done
	check "go tool pprof -raw reads the bodies" test "$fails" -eq 0
else
	skip "go (golang-go) not installed"
fi

# OTLP: the request, as protoc reads it.
PALLOC_SAMPLE_RATE=1 LD_PRELOAD=$PALLOC_AGENT push-steady 1000 2 250 6 \
	>c.out 2>c.err &
c=$!
pids="$pids $c"
retry 100 0.05 grep -q ready c.out
palloc-dump --push "otlp=http://127.0.0.1:$ot_port" --every 1 "$c" \
	2>otlp.err &
o=$!
pids="$pids $o"
retry 100 0.1 test -s srv/otlp.log
check "otlp: the request reaches /v1development/profiles as protobuf" \
	jqe -s 'length > 0 and all(.ok and .ctype ==
		"application/x-protobuf")' srv/otlp.log
# protoc reads the body with the opentelemetry-proto subset in proto/: the
# service, its pid and the host, the four sample types, the helper's
# function.
I=$top_srcdir/proto
otlp_has() {
	body=$(jq -r 'select(.ok) | .body' srv/otlp.log | head -1)
	[ -f "$body" ] && command -v protoc >/dev/null || return 1
	protoc --decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
		-I "$I" "$I/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto" \
		<"$body" >otlp.txt 2>otlp.perr || return 1
	grep -A2 '"service.name"' otlp.txt | grep -q 'string_value: "push-steady"' &&
		grep -A2 '"process.pid"' otlp.txt | grep -q "int_value: $c\$" &&
		grep -A2 '"host.name"' otlp.txt | grep -q "string_value: \"$(uname -n)\"" &&
		for t in alloc_objects alloc_space inuse_objects inuse_space; do
			grep -q "\"$t\"" otlp.txt || return 1
		done &&
		grep -q '"push_burst"' otlp.txt
}
if command -v protoc >/dev/null; then
	check "otlp: protoc decodes it: service, pid, host, four types, the function" otlp_has
else
	skip "protoc (protobuf-compiler) not installed"
fi
kill -TERM "$o"
wait "$o"

# Bad input: one line, exit 2.
bad() {
	_bad=$1
	shift
	expect_fail 2 palloc-dump "$@" >bad.out 2>bad.err || return 1
	[ "$(wc -l <bad.err)" -eq 1 ] && grep -qF -- "$_bad" bad.err && return 0
	echo "# $(cat bad.err)"
	return 1
}
check "bad kind" bad "invalid --push 'zipkin=http://x': unknown kind" \
	--push zipkin=http://x
check "bad URL" bad "invalid --push 'parca=ftp://x'" --push parca=ftp://x
check "URL without a host" bad "invalid --push 'parca=http://'" \
	--push parca=http://
check "bad label" bad "invalid --label 'bad key=1'" \
	--push parca=http://127.0.0.1:1 --label 'bad key=1'
check "label value Pyroscope cannot carry" bad "invalid --label 'k=a,b'" \
	--push pyroscope=http://127.0.0.1:1 --label 'k=a,b'
check "bad header, bad --every" sh -c '
	palloc-dump --push parca=http://h --header nocolon 2>e1
	r1=$?
	palloc-dump --push parca=http://h --every 0 2>e2
	r2=$?
	[ $r1 -eq 2 ] && [ $r2 -eq 2 ] && [ $(cat e1 e2 | wc -l) -eq 2 ]'

done_testing
