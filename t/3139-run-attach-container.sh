#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run -p PID of a process in another mount namespace (a
# container): the directory of the agent hidden there (a tmpfs mounted
# over it, unshare -m), palloc-run copies the agent into the process's
# /tmp through /proc/PID/root and loads it from there: attached at rate 1
# its allocations are exact, the copy is removed once loaded, a second
# attach reuses the loaded copy, and the process runs on after the detach
# and exits 0. Then the same with the agent's libunwind unreadable there
# (/dev/null bound over it): refused, one line, status 125, the process
# untouched, no copy left behind.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-attach.sh"
need attach-target ldd
[ "$(id -u)" = 0 ] || skip_all "not root (unshare -m, mount)"
unshare -m true 2>/dev/null || skip_all "unshare -m unavailable"

plan 21

agentdir=$(cd "$(dirname "$PALLOC_AGENT")" && pwd)
copies() { grep -c 'palloc-agent-' "/proc/$1/maps"; }
copy_files() { grep -o '/[^ ]*palloc-agent-[^ ]*\.so' "/proc/$1/maps" | sort -u | wc -l; }
# left_in PID: copies of the agent lying in the process's /tmp
left_in() { ls "/proc/$1/root/tmp" | grep -c '^palloc-agent-'; }

# ---- attached, profiled, detached, attached again ----
start_target unshare -m --propagation private sh -c \
	"mount -t tmpfs none '$agentdir' && exec attach-target"
check "the agent is hidden in the process's mount namespace" \
	test ! -e "/proc/$tp/root$PALLOC_AGENT"
check "attached (rate 1)" attach_start "$tp" run.err -r 1 -o 'c.%p.pb.gz'
check "the copy of the agent is loaded" test "$(copies "$tp")" -ge 1
check "the copy is removed once loaded" test "$(left_in "$tp")" -eq 0
check "alloc 7 x 1000 answered" say "alloc 7 1000" "allocated 7"
check "alloc 3 x 40 answered" say "alloc 3 40" "allocated 3"
check "free answered" say "free" "freed"
check "alloc 5 x 100 answered" say "alloc 5 100" "allocated 5"
attach_stop
check "detached: status 0" test "$rc" -eq 0
sed 's/^/# /' run.err
check "the summary: 15 objects allocated, 5 x 100 in use, at alloc_site" \
	grep -Eq "^palloc-run: wrote c\.$tp\.pb\.gz: alloc 7\.4 KiB in 15 objects, inuse 500 B in 5 objects, top alloc: alloc_site$" run.err
check "not traced after the detach" test "$(tracer "$tp")" = 0
check "it runs on after the detach" say "alloc 2 10" "allocated 2"
check "attached again" attach_start "$tp" run2.err -o /dev/null
check "the second attach reuses the loaded copy" test "$(copy_files "$tp")" -eq 1
attach_stop
check "detached again: status 0" test "$rc" -eq 0
quit_target

# ---- the agent cannot be loaded there: refused ----
unw=$(ldd "$PALLOC_AGENT" | awk '/libunwind[-.]/ { print $3; exit }')
unw=$(readlink -f "$unw")
start_target unshare -m --propagation private sh -c \
	"mount -t tmpfs none '$agentdir' && mount --bind /dev/null '$unw' && exec attach-target"
timeout_run 60 palloc-run -p "$tp" -o /dev/null 2>err.refused
check "libunwind unusable there: 125" test $? -eq 125
sed 's/^/# /' err.refused
check "libunwind unusable there: one line naming it" sh -c "
	test \$(wc -l <err.refused) -eq 1 &&
	grep -Eq \"^palloc-run: cannot attach to process '$tp': the agent copied to '/tmp/palloc-agent-tmp-[0-9a-f]{32}\\.so' cannot be loaded in the process's mount namespace: .*libunwind\" err.refused"
check "refused: the process untouched, no copy left" sh -c "
	test \"\$(awk '/^TracerPid:/ { print \$2 }' /proc/$tp/status)\" = 0 &&
	! grep -q palloc-agent- /proc/$tp/maps &&
	! ls /proc/$tp/root/tmp | grep -q '^palloc-agent-'"
check "refused: it answers" say "alloc 1 10" "allocated 1"
echo quit >&3
exec 3>&-
retry 300 0.1 ended "$tp"

done_testing
