#!/bin/sh
# SPDX-License-Identifier: MIT
# Another user answering for a victim's processes: a
# record directory planted before the victim's agents made theirs, with a
# record named after the victim's process in it. The commands find a live
# process's record through its /proc/PID/maps only, and list dead records
# only from a directory of the caller's open to nobody else: palloc-dump
# refuses in one line, exit 2, prints nothing the attacker wrote, and the
# listing says once that it skipped the directory. Users: uids 64001
# (attacker) and 64002 (victim), taken with setpriv (no account needed).
. "$top_srcdir/t/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root to act as two users"
need setpriv
A=64001
V=64002
as_a() { setpriv --reuid=$A --regid=$A --clear-groups "$@"; }
as_v() { setpriv --reuid=$V --regid=$V --clear-groups "$@"; }

chmod 0755 "$T"
pids=
trap 'kill $pids 2>/dev/null; cleanup_tmp' EXIT
unset PALLOC_RECORD_DIR
# The victim's processes (no agent in them).
as_v sleep 120 >/dev/null 2>&1 &
v1=$!
as_v sleep 120 >/dev/null 2>&1 &
v2=$!
pids="$v1 $v2"
esc=$(printf '\033')

# The victim's runtime directory is shared like /tmp (sticky, 1777): the
# attacker makes its palloc/ first, open to all, and plants a "record" of
# the victim's pid there (a name, and escapes for a terminal).
xdg=$T/xdgv
mkdir -m 1777 "$xdg" && chown $V "$xdg" && chmod 1777 "$xdg" || exit 99
as_a mkdir "$xdg/palloc" && chmod 0777 "$xdg/palloc" || exit 99
as_a sh -c "printf 'PALLOCR\\0\\033]0;pwned\\007' >'$xdg/palloc/$v1.1.rec'" ||
	exit 99

plan 7

XDG_RUNTIME_DIR=$xdg
export XDG_RUNTIME_DIR
expect_fail 2 as_v palloc-dump --stats $v1 >out 2>err
check "planted directory: exit 2, nothing printed" test $? -eq 0 -a ! -s out
# (its maps are root's when setpriv made it: not dumpable)
check "planted directory: one line, not the planted record" sh -c "
	test \"\$(wc -l <err)\" = 1 &&
	grep -q \"^palloc-dump: cannot reach agent of process '$v1': \(no record mapped\|permission denied\)\" err &&
	! grep -q '$esc' err"
as_v palloc-dump >list 2>err
check "victim's listing: exit 0" test $? -eq 0
check "victim's listing: none of the attacker's pids or bytes" \
	sh -c "! grep -q '$esc' list err && ! grep -qE '^ *($v1|$v2) ' list"
check "victim's listing: the directory skipped, said once" \
	test "$(grep -c "warning: unsafe record directory '$xdg/palloc': owned by uid $A" err)" = 1
unset XDG_RUNTIME_DIR

# Root asks for the victim's process: nothing but its maps is consulted.
timeout_run 60 palloc-dump --top $v2 >out 2>err
check "root --top: no hang, exit 2" test $? -eq 2
check "root --top: one line" one_line err \
	"palloc-dump: cannot reach agent of process '$v2': no record mapped by process '$v2' (not running under palloc, or an agent without records)"
done_testing
