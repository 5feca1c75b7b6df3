# SPDX-License-Identifier: MIT
# t/lib-attach.sh: palloc-run -p in the background, for t/313x (after
# t/lib.sh). Every background process the helpers start is in $bg_pids;
# the EXIT trap set here kills those still running, by pid. Sourcing it
# skips the test where palloc-run -p cannot work.
#
#   attach_start PID ERR ARGS...  palloc-run -p PID ARGS, stderr in ERR,
#                                 stdout nowhere; $rp its pid; true once
#                                 it says it attached
#   attach_stop [SIGNAL]          SIGINT (or SIGNAL) to $rp, its status
#                                 in $rc; killed after 60 s (then $rc is
#                                 137 and the test fails, it does not hang)
#   bg CMD...                     CMD in the background, stdout and stderr
#                                 where the caller redirects them; $! kept

# The prerequisites of every palloc-run -p test (skip_all otherwise).
need_attach palloc-run palloc-dump

bg_pids=
trap 'for _p in $bg_pids; do kill -KILL "$_p" 2>/dev/null; done
	cd /; rm -rf "$T" "$PALLOC_RECORD_DIR"' EXIT

bg_add() { bg_pids="$bg_pids $*"; }

# ended PID: PID is gone or a zombie.
ended() {
	! [ -e "/proc/$1/stat" ] || [ "$(cut -d' ' -f3 "/proc/$1/stat")" = Z ]
}

_attached_or_gone() {
	grep -q "^palloc-run: attached to process $_a_pid;" "$_a_err" ||
		ended "$rp"
}

attach_start() {
	_a_pid=$1 _a_err=$2
	shift 2
	# the last cycle's line must not count: the shell truncates the file
	# only in the child, which may not have run yet
	rm -f "$_a_err"
	palloc-run -p "$_a_pid" "$@" >/dev/null 2>"$_a_err" &
	rp=$!
	bg_add "$rp"
	retry 300 0.1 _attached_or_gone
	grep -q "^palloc-run: attached to process $_a_pid;" "$_a_err"
}

attach_stop() {
	kill -"${1:-INT}" "$rp" 2>/dev/null
	retry 600 0.1 ended "$rp" || kill -KILL "$rp"
	wait "$rp"
	rc=$?
}

# threads PID, tracer PID, agents PID: its thread count, its tracer's pid
# (0: none), how many mappings of the agent it has.
threads() { awk '/^Threads:/ { print $2 }' "/proc/$1/status"; }
tracer() { awk '/^TracerPid:/ { print $2 }' "/proc/$1/status"; }
agents() { grep -c 'libpalloc\.so' "/proc/$1/maps"; }

# quit_target: "quit" to the target $tp on fd 3, fd 3 closed; two tests:
# it exits 0 (waited for up to 30 s), nothing on its stderr (err.txt).
quit_target() {
	echo quit >&3
	exec 3>&-
	retry 300 0.1 ended "$tp"
	wait "$tp"
	check "exits 0" test $? -eq 0
	check "nothing on its stderr" test ! -s err.txt
}

# start_target CMD...: CMD in the background reading from the fifo "in"
# (fd 3 here), its stdout in out.txt, stderr in err.txt; $tp its pid;
# bails out unless it says "ready" within 30 s.
start_target() {
	rm -f in out.txt err.txt
	mkfifo in || exit 99
	"$@" <in >out.txt 2>err.txt &
	tp=$!
	bg_add "$tp"
	exec 3>in
	retry 300 0.1 grep -q '^ready$' out.txt ||
		{ echo "Bail out! $1 did not start"; exit 1; }
}

# say CMD WANT: the line CMD sent to the target, true once the line WANT
# is in out.txt (30 s at most).
say() {
	printf '%s\n' "$1" >&3
	retry 300 0.1 grep -qx "$2" out.txt
}
