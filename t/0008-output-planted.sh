#!/bin/sh
# SPDX-License-Identifier: MIT
# Every command's -o into a sticky, world-writable directory (as /tmp)
# where another user planted a FIFO, a symbolic link to a file of the
# victim's, a socket or a device: the command ends at once (timeout: a
# hang fails), exit 2 and one line, and nothing is written there (the
# FIFO never opened, the link's target unchanged, no file left beside).
# outfile.h: the commands' one writer, base/safefile.c's rules.
. "$top_srcdir/t/lib.sh"
need mkfifo pprof-gen timeout
pprof-gen known base.pb.gz >/dev/null 2>&1 || { echo "Bail out! pprof-gen"; exit 1; }

# The commands, each writing with -o OUT, or --output-file OUT for the
# view commands whose -o names the table's columns ("@" is replaced by
# OUT).
cmds="palloc-dump -o @ base.pb.gz
palloc-dump --stats -o @ $$
palloc-diff -o @ base.pb.gz base.pb.gz
palloc-smaps --output-file @ $$
palloc-explain --output-file @ $$
palloc-mallinfo --output-file @ $$
palloc-cgroup --output-file @ $$"
ncmd=$(printf '%s\n' "$cmds" | wc -l)
kinds="fifo link sock dev"
plan $((ncmd * 4 * 2 + 4))

# The planter: root plants as nobody when it can (the usual attack: the
# victim is root or another user), else the test's user plants.
root=false
[ "$(id -u)" -eq 0 ] && root=true
as_planter() {
	if $root && command -v setpriv >/dev/null 2>&1; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	else
		"$@"
	fi
}

D=$T/sticky
# $T is the test's own (0700): others reach the sticky directory in it.
chmod 755 "$T" && mkdir "$D" && chmod 1777 "$D" || exit 99
echo precious >victim
chmod 644 victim
as_planter mkfifo "$D/fifo" || exit 99
as_planter ln -s "$T/victim" "$D/link" || exit 99
have_sock=false
if command -v python3 >/dev/null 2>&1 && python3 -c 'import socket,sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$D/sock"; then
	have_sock=true
	$root && chown -h nobody "$D/sock"
fi
# Only root makes device nodes: 1:5 is /dev/zero's (1:3, /dev/null's, is
# the one device a command accepts: it means "discard", below).
have_dev=false
if $root && mknod "$D/dev" c 1 5 2>/dev/null; then
	chown nobody "$D/dev" 2>/dev/null
	have_dev=true
fi
ls -A "$D" >before

what() {
	case $1 in
	fifo) echo "it is a FIFO" ;;
	link) echo "it is a symbolic link, never followed" ;;
	sock) echo "it is a socket" ;;
	dev) echo "it is a character device" ;;
	esac
}

printf '%s\n' "$cmds" >cmds
while IFS= read -r line; do
	cmd=${line%% *}
	for k in $kinds; do
		if [ $k = sock ] && ! $have_sock; then
			skip "$cmd: no python3 to plant a socket"
			skip "$cmd: no python3 to plant a socket"
			continue
		fi
		if [ $k = dev ] && ! $have_dev; then
			skip "$cmd: only root plants a device"
			skip "$cmd: only root plants a device"
			continue
		fi
		args=$(printf '%s\n' "$line" | sed "s|@|$D/$k|")
		# shellcheck disable=SC2086 # words on purpose
		timeout_run 30 $args >out 2>err </dev/null
		rc=$?
		check "$line ($k): exit 2 at once, nothing on stdout" \
			test $rc -eq 2 -a ! -s out
		check "$line ($k): one line" one_line err \
			"$cmd: cannot write '$D/$k': $(what $k)"
	done
done <cmds

ls -A "$D" >after
check "nothing left beside the planted files" cmp -s before after
check "the FIFO is still a FIFO, the link still a link" \
	test -p "$D/fifo" -a -L "$D/link"
check "the link's target is unchanged" \
	test "$(cat victim)" = precious

# /dev/null is the one device written to: as "nothing", and it stays a
# device (never renamed over, even as root).
timeout_run 30 palloc-dump -o /dev/null base.pb.gz >out 2>err
check "-o /dev/null: exit 0, silent, /dev/null still a device" \
	test $? -eq 0 -a ! -s err -a -c /dev/null
done_testing
