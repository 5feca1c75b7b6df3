#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent's side of planted files: what another user plants at
# or beside the output name. The agent wrote with stat() then a blocking
# open() that followed links, into PATH.tmp.PID opened without O_EXCL: a
# FIFO at the default name hung the program, a symlink was followed or
# replaced, an attacker's pre-created temporary kept a copy of the
# profile, and a SIGKILL between write and rename left the .tmp behind.
. "$top_srcdir/t/lib.sh"
need_agent
plan 10

# run_as_sh CMD: run "sh -c CMD" under the agent from a shell whose pid
# (and so the profile's default name palloc.sh.PID.pb.gz, the pid kept by
# exec) CMD's prelude knows as $$.
agent_sh() {
	sh -c "$1"' && exec env LD_PRELOAD="$PALLOC_AGENT" sh -c "exit 0"'
}

# A FIFO at the default name, in the working directory, nobody reading.
mkdir fifo && cd fifo || exit 1
timeout_run 20 sh -c 'mkfifo "palloc.sh.$$.pb.gz" &&
	exec env LD_PRELOAD="$PALLOC_AGENT" sh -c "exit 0"' 2>../fifo.err
rc=$?
cd .. || exit 1
check "FIFO at the default name: the program ends normally (no hang)" \
	[ $rc -eq 0 ]
check "FIFO at the default name: still a FIFO, the reason said" \
	sh -c 'test -p fifo/palloc.sh.*.pb.gz &&
		grep -q "it is a FIFO" fifo.err'

# A symlink at the name, to a file the test owns: not followed, not
# replaced.
mkdir link && cd link || exit 1
echo mine >target
sh -c 'ln -s target "palloc.sh.$$.pb.gz" &&
	exec env LD_PRELOAD="$PALLOC_AGENT" sh -c "exit 0"' 2>../link.err
rc=$?
cd .. || exit 1
check "symlink at the name: exit 0" [ $rc -eq 0 ]
check "symlink at the name: still the symlink, its target untouched" \
	sh -c 'test -L link/palloc.sh.*.pb.gz &&
		test "$(readlink link/palloc.sh.*.pb.gz)" = target &&
		test "$(cat link/target)" = mine'
check "symlink at the name: the reason said" \
	grep -q "it is a symbolic link, never followed" link.err

# SIGKILL between writing and naming the file (strace kills the process
# as it enters linkat or rename): no temporary file is left.
if command -v strace >/dev/null 2>&1 &&
	strace -f -qq -o /dev/null true 2>/dev/null; then
	mkdir kill && cd kill || exit 1
	strace -f -qq -o /dev/null \
		-e trace=linkat,rename,renameat,renameat2 \
		-e inject=linkat,rename,renameat,renameat2:signal=KILL \
		env LD_PRELOAD="$PALLOC_AGENT" sh -c 'exit 0' 2>/dev/null
	cd .. || exit 1
	check "SIGKILL mid-write: no temporary file left" \
		[ -z "$(ls -A kill)" ]
	ls -A kill | sed 's/^/# left: /'
else
	skip "strace cannot trace here"
fi

# A sticky world-writable directory where another user (nobody) has
# pre-created the old predictable temporary name, readable by all: the
# profile must not end up in it.
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	for i in 1 2 3 4; do skip "needs root and setpriv (a second user)"; done
	done_testing
fi
mkdir sticky && chmod 1777 sticky && cd sticky || exit 1
sh -c 'name="palloc.sh.$$.pb.gz" &&
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		sh -c "umask 0; : >$name.tmp.$$; : >.palloc.tmp" &&
	exec env LD_PRELOAD="$PALLOC_AGENT" sh -c "exit 0"' 2>../sticky.err
rc=$?
cd .. || exit 1
check "sticky directory: exit 0" [ $rc -eq 0 ]
check "sticky directory: the other user's files are still empty" \
	[ -z "$(find sticky -user 65534 -size +0)" ]
check "sticky directory: the profile is root's, mode 0600" \
	sh -c 'test "$(stat -c %U:%a sticky/palloc.sh.*.pb.gz)" = root:600'
check "sticky directory: nothing else was written" \
	[ "$(find sticky -type f -user 0 | wc -l)" -eq 1 ]
done_testing
