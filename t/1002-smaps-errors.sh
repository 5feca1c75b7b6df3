#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-smaps on bad input: one line on stderr, exit 2, nothing on stdout.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-kernel.sh"

plan 29
F=$top_srcdir/t/fixtures

# A PID that does not exist (above any pid_max: 2^22).
fails "no such process" "^palloc-smaps: no such process '2147483647'\$" \
	palloc-smaps 2147483647

# A PID that has exited but is still in /proc (a zombie: its mm is gone, as
# for a process that exits while being read; the kernel answers ESRCH).
fails_exited "exited process" "^palloc-smaps: cannot read process '%s': it exited" \
	palloc-smaps --json

# Processes that exit while they are read, for real: 100 short-lived ones,
# each read as it ends. Every run is either a whole JSON object (exit 0) or
# one error line and nothing on stdout (exit 2); never half of either.
race_ok() {
	_i=0 _good=0 _gone=0
	while [ $_i -lt 100 ]; do
		sh -c 'x=1' &
		palloc-smaps --json --maps $! >race.out 2>race.err
		_rc=$?
		if [ $_rc -eq 0 ] && jqe .processes[0].pid race.out
		then
			_good=$((_good + 1))
		elif [ $_rc -eq 2 ] && [ ! -s race.out ] &&
			[ "$(wc -l <race.err)" -eq 1 ]; then
			_gone=$((_gone + 1))
		else
			echo "# run $_i: exit $_rc"; sed 's/^/# /' race.err
			return 1
		fi
		wait
		_i=$((_i + 1))
	done
	echo "# read whole: $_good, gone (one error line): $_gone"
}
check "100 processes read as they exit: whole output or one error" race_ok

# Another user's process: permission denied (needs root to switch users).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		palloc-smaps --version >/dev/null 2>&1; then
	fails "another user's process" \
		"^palloc-smaps: cannot read '/proc/$$/smaps_rollup': Permission denied\$" \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		palloc-smaps --json $$
else
	skip "not root, or palloc-smaps not runnable as nobody"
	skip "not root"; skip "not root"
fi

# Garbage, empty, truncated and wrong-unit smaps_rollup files.
G=$F/sysroot-garbage
fails "garbage file" "cannot parse '.*/proc/600/smaps_rollup': line 1 " \
	palloc-smaps --sysroot "$G" --json 600
fails "empty file" "cannot parse '.*/proc/601/smaps_rollup': empty file" \
	palloc-smaps --sysroot "$G" 601
fails "truncated file" "cannot parse '.*/proc/602/smaps_rollup': no Rss or Pss" \
	palloc-smaps --sysroot "$G" --prom 602

fails "known field in another unit" \
	"cannot parse '.*/proc/603/smaps_rollup': line 3 " \
	palloc-smaps --sysroot "$G" 603
fails "listing with a garbage process" "cannot parse '.*/smaps_rollup'" \
	palloc-smaps --sysroot "$G" --json

# Usage errors: the error, then the pointer to --help; nothing on stdout.
check "bad PID: usage error" usage_fails palloc-smaps abc
check "--count without --watch: usage error" usage_fails palloc-smaps \
	--count 2 $$
check "--watch with --prom: usage error" usage_fails palloc-smaps \
	--watch 1 --prom

# -o FILE on error: neither the file nor a temporary one is left behind.
palloc-smaps --output-file never.json --json 2147483647 2>/dev/null
check "--output-file FILE: no file on error" [ -z "$(ls never.json* 2>/dev/null)" ]
done_testing
