#!/bin/sh
# SPDX-License-Identifier: MIT
# A setuid program (AT_SECURE) under LD_PRELOAD=agent: the loader refuses
# to preload a path from the environment there, so the program must run
# exactly as without the agent and no profile appears. (The agent's own
# AT_SECURE check covers preloads the loader does honour, such as
# /etc/ld.so.preload; a test cannot install one.)
. "$top_srcdir/t/lib.sh"
need_agent

[ "$(id -u)" = 0 ] || skip_all "needs root to make a setuid program"
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv not installed"

plan 3

dir=$(mktemp -d /tmp/palloc-suid.XXXXXX) || exit 99
trap 'rm -rf "$dir"; cleanup_tmp' EXIT
chmod 1777 "$dir"
cp "$(command -v alloc-exact)" "$dir/suid-alloc" && chown root "$dir/suid-alloc" &&
	chmod 4755 "$dir/suid-alloc" || skip_all "cannot make a setuid copy"
cd "$dir" || exit 99
setpriv --reuid=65534 --regid=65534 --clear-groups \
	env LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 ./suid-alloc basic \
	>out.txt 2>err.txt
check "setuid program runs, exit 0" test $? -eq 0
check "its output is complete" grep -q '^site strdup: ' out.txt
check "no profile written" test -z "$(ls palloc.* 2>/dev/null)"
done_testing
