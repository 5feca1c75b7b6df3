#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-dump against fake agents of its own user (issue 11 items 11, 12):
# a socket named after another process, an agent that trickles its answer,
# answers larger than any profile, escape sequences in what an agent says,
# a profile whose mapping names a FIFO. One line and exit 2, or the data
# escaped; never a hang, never the memory of the answer's claimed size.
. "$top_srcdir/t/lib.sh"
need python3 pprof-gen mkfifo
FAKE=$top_srcdir/t/helper/fake-agent.py

XDG_RUNTIME_DIR=$T/xdg
export XDG_RUNTIME_DIR
dir=$XDG_RUNTIME_DIR/palloc
mkdir -m 0700 "$XDG_RUNTIME_DIR" "$dir" || exit 99
pids=
sleep 120 &
victim=$!
trap 'kill $pids $victim 2>/dev/null; cd /; rm -rf "$T"' EXIT

# start NAME MODE ARG: a fake agent on $dir/NAME ("{pid}": its own pid);
# $fake is its pid once it listens.
start() {
	python3 "$FAKE" "$dir/$1" "$2" "$3" &
	fake=$!
	pids="$pids $fake"
	_sock=$(echo "$dir/$1" | sed "s/{pid}/$fake/")
	retry 200 0.05 test -s "$_sock.ready"
}
esc=$(printf '\033')

# An agent's answers: JSON with terminal escapes in a value and a key,
# and a raw profile whose one mapping is a FIFO.
printf 'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"program": "\\u001b]0;pwned\\u0007\\u001b[31mEVIL", "\\u001b[2Jkey": 1, "uptime_seconds": 1, "sampled_inuse_bytes": 5}' >stats.http
mkfifo "$T/fifo"
pprof-gen raw raw.pb.gz "$T/fifo" || exit 99
{
	printf 'HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n'
	printf 'Content-Length: %d\r\n\r\n' "$(wc -c <raw.pb.gz)"
	cat raw.pb.gz
} >prof.http

plan 16

# A socket named after process $victim, served by another process.
start "$victim.sock" file stats.http
impostor=$fake
expect_fail 2 palloc-dump --stats $victim >out 2>err
check "impostor: exit 2, nothing printed" test $? -eq 0 -a ! -s out
check "impostor: one line naming the real server" one_line err \
	"palloc-dump: cannot reach agent of process '$victim': socket '$dir/$victim.sock' is served by process $impostor, not by process $victim"

# The same user's own process may say anything: printed escaped.
start "{pid}.sock" file stats.http
own=$fake
palloc-dump --stats $own >out 2>err
check "--stats of a hostile agent: exit 0" test $? -eq 0
check "--stats: no escape byte, escaped key and value" \
	sh -c "! grep -q '$esc' out && grep -qF '\\x1b[2Jkey' out &&
		grep -qF 'u001B[31mEVIL' out"
palloc-dump >list 2>list.err
check "listing: exit 0" test $? -eq 0
check "listing: no escape byte, the program escaped" \
	sh -c "! grep -q '$esc' list list.err &&
		grep -qF '\\x1b]0;pwned\\x07\\x1b[31mEVIL' list"
check "listing: the impostor listed with why, not with its data" \
	sh -c "grep '^ *$victim ' list | grep -q 'is served by process $impostor'"

# A profile whose mapping is a FIFO: the symbolizer does not open it.
start "{pid}.sock" file prof.http
timeout_run 60 palloc-dump --top $fake >top 2>err
check "FIFO mapping: no hang, exit 0" test $? -eq 0
check "FIFO mapping: said and not symbolized" \
	grep -q "cannot open '/proc/$fake/root$T/fifo': not a regular file (a FIFO); not symbolized" err

# One byte every 0.5 s (stats.http takes over 90 s): the timeout is total.
start "{pid}.sock" trickle stats.http
trickler=$fake
timeout_run 60 palloc-dump --timeout 1 --stats $trickler >out 2>err
check "trickling agent: exit 2 after --timeout 1" test $? -eq 2
# (the fake agent is a single-threaded python3: the line says what that
# means for a real agent, palloc(7) Threads)
st_hint="the process is single-threaded and answers only while it allocates (palloc(7), Threads)"
check "trickling agent: one line" one_line err \
	"palloc-dump: cannot reach agent of process '$trickler': timed out after 1000 ms: $st_hint"
timeout_run 60 palloc-dump --json >list.json 2>err
check "listing with a trickling agent: done, its 2 s spent" \
	jqe ".agents[] | select(.pid == $trickler) |
		.error == \"timed out after 2000 ms: $st_hint\"" list.json

# Answers larger than any profile the agent can write (512 MiB).
start "{pid}.sock" huge 900000000
huge=$fake
if [ -x /usr/bin/time ]; then
	expect_fail 2 peak_kb rss palloc-dump $huge -o none.pb.gz 2>err
	check "Content-Length 900 MB: exit 2" test $? -eq 0
	check "Content-Length 900 MB: one line" one_line err \
		"palloc-dump: cannot reach agent of process '$huge': response too large: 900000000 bytes (the limit is 536870912)"
	# refused before the body: the command's own size, far below 64 MiB
	check "Content-Length 900 MB: refused unread ($(cat rss) KiB)" \
		test "$(cat rss)" -lt 65536
	start "{pid}.sock" huge-nolen 900000000
	expect_fail 2 peak_kb rss palloc-dump $fake -o none.pb.gz 2>err
	# at most the 512 MiB limit read, plus 64 MiB for the command (under
	# ASan, whose realloc copies, the last doubling's two buffers too)
	lim=$((512 * 1024 + 65536))
	! asan palloc-dump || lim=$((3 * 512 * 1024 + 65536))
	check "900 MB without a length: refused at the limit ($(cat rss) KiB)" \
		sh -c "test $(cat rss) -lt $lim &&
			grep -q 'response too large: more than 536870912 bytes' err"
else
	skip "no /usr/bin/time (Debian: time)"
	skip "no /usr/bin/time (Debian: time)"
	skip "no /usr/bin/time (Debian: time)"
	skip "no /usr/bin/time (Debian: time)"
fi
done_testing
