#!/bin/sh
# SPDX-License-Identifier: MIT
# Another user answering for a victim's processes (issue 11 item 11): a
# socket directory planted before the victim's agents made theirs, a
# socket found through /proc/net/unix, a socket of another user moved into
# the victim's directory. palloc-dump refuses each in one line, exit 2,
# prints nothing the attacker sent, and root's --top does not hang on the
# attacker's profile. Users: uids 64001 (attacker) and 64002 (victim),
# taken with setpriv (no account needed).
. "$top_srcdir/t/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root to act as two users"
need setpriv pprof-gen mkfifo
FAKE=$top_srcdir/t/helper/fake-agent.py
# the system's python3: one under root's home is not for other users
PY=/usr/bin/python3
[ -x $PY ] || skip_all "no /usr/bin/python3"
A=64001
V=64002
as_a() { setpriv --reuid=$A --regid=$A --clear-groups "$@"; }
as_v() { setpriv --reuid=$V --regid=$V --clear-groups "$@"; }

chmod 0755 "$T"
# a copy the attacker's uid can read wherever the sources are
cp "$FAKE" "$T/fake-agent.py" && chmod 0644 "$T/fake-agent.py" || exit 99
FAKE=$T/fake-agent.py
pids=
trap 'kill $pids 2>/dev/null; cd /; rm -rf "$T"' EXIT
# The victim's processes (no agent in them).
as_v sleep 120 &
v1=$!
as_v sleep 120 &
v2=$!
pids="$v1 $v2"

# The attacker's answers: escapes for a terminal, and a raw profile whose
# mapping is a FIFO nobody writes.
printf 'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"program": "\\u001b]0;pwned\\u0007\\u001b[31mEVIL", "\\u001b[2Jkey": 1, "uptime_seconds": 1, "sampled_inuse_bytes": 5}' >stats.http
mkfifo -m 0666 "$T/fifo"
pprof-gen raw raw.pb.gz "$T/fifo" || exit 99
{
	printf 'HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n'
	printf 'Content-Length: %d\r\n\r\n' "$(wc -c <raw.pb.gz)"
	cat raw.pb.gz
} >prof.http
chmod 0644 stats.http prof.http

# start_a SOCKET MODE ARG: a fake agent run by the attacker, its socket
# open to all (umask 0); $fake is its pid once it listens.
start_a() {
	(umask 0 && exec setpriv --reuid=$A --regid=$A --clear-groups \
		$PY "$FAKE" "$@") &
	fake=$!
	pids="$pids $fake"
	_sock=$(echo "$1" | sed "s/{pid}/$fake/")
	retry 200 0.05 test -s "$_sock.ready"
}
esc=$(printf '\033')

# The victim's runtime directory is shared like /tmp (sticky, 1777): the
# attacker makes its palloc/ first, open to all, and binds the sockets of
# the victim's pids there.
xdg=$T/xdgv
mkdir -m 1777 "$xdg" && chown $V "$xdg" && chmod 1777 "$xdg" || exit 99
as_a mkdir "$xdg/palloc" && chmod 0777 "$xdg/palloc" || exit 99
start_a "$xdg/palloc/$v1.sock" file stats.http
start_a "$xdg/palloc/$v2.sock" file prof.http

plan 10

XDG_RUNTIME_DIR=$xdg
export XDG_RUNTIME_DIR
expect_fail 2 as_v palloc-dump --stats $v1 >out 2>err
check "planted directory: exit 2, nothing printed" test $? -eq 0 -a ! -s out
check "planted directory: one line" one_line err \
	"palloc-dump: cannot reach agent of process '$v1': unsafe socket directory '$xdg/palloc': owned by uid $A"
as_v palloc-dump >list 2>err
check "victim's listing: exit 0" test $? -eq 0
check "victim's listing: none of the attacker's pids or bytes" \
	sh -c "! grep -q '$esc' list err && ! grep -qE '^ *($v1|$v2) ' list"
check "victim's listing: the directory skipped, said once" \
	test "$(grep -c "warning: unsafe socket directory '$xdg/palloc': owned by uid $A" err)" = 1
unset XDG_RUNTIME_DIR

# Root asks for the victim's process: the socket is found in
# /proc/net/unix, in a directory of neither root nor the victim.
timeout_run 60 palloc-dump --top $v2 >out 2>err
check "root --top: no hang, exit 2" test $? -eq 2
check "root --top: one line" one_line err \
	"palloc-dump: cannot reach agent of process '$v2': unsafe socket directory '$xdg/palloc': owned by uid $A"

# The attacker's own process, its socket moved into a directory of the
# victim's (right name, right pid): the peer is not the victim's user.
mine=$T/mine
mkdir -m 0777 "$mine" || exit 99
start_a "$mine/{pid}.sock" file stats.http
xdg2=$T/xdgv2
mkdir -m 0700 "$xdg2" "$xdg2/palloc" && chown -R $V "$xdg2" || exit 99
mv "$mine/$fake.sock" "$xdg2/palloc/$fake.sock" || exit 99
expect_fail 2 env XDG_RUNTIME_DIR="$xdg2" setpriv --reuid=$V --regid=$V \
	--clear-groups palloc-dump --stats $fake >out 2>err
check "another user's peer: exit 2, nothing printed" test $? -eq 0 -a ! -s out
check "another user's peer: one line" one_line err \
	"palloc-dump: cannot reach agent of process '$fake': socket '$xdg2/palloc/$fake.sock' is served by uid $A, not by you (uid $V)"
# root neither: the directory is the victim's, the process the attacker's
expect_fail 2 env XDG_RUNTIME_DIR="$xdg2" palloc-dump --stats $fake >out 2>err
check "root: a directory of neither root nor the process's user" one_line err \
	"palloc-dump: cannot reach agent of process '$fake': unsafe socket directory '$xdg2/palloc': owned by uid $V"
done_testing
