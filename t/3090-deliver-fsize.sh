#!/bin/sh
# SPDX-License-Identifier: MIT
# Under `ulimit -f`, writing a profile raised SIGXFSZ and
# killed the program (exit 5 became 153), left a partial .tmp, and
# palloc-run blamed "a signal before the agent could write". The agent
# takes EFBIG (SIGXFSZ blocked around its own writes only), keeps the
# program's status, signal mask and handlers, leaves no file, says why.
. "$top_srcdir/t/lib.sh"
need_agent
need deliver-child palloc-run
plan 12

# ulimit -f counts 512-byte blocks in dash: 1 is less than any profile.
sh -c 'ulimit -f 1 && exec env LD_PRELOAD="$PALLOC_AGENT" \
	PALLOC_OUTPUT="$PWD/lim.%p.pb.gz" sh -c "exit 5"' 2>lim.err
rc=$?
check "LD_PRELOAD, exit profile over the limit: status 5 kept (not 153)" \
	[ $rc -eq 5 ]
check "no profile and no temporary left" \
	[ -z "$(ls -A | grep -v '^lim\.err$')" ]
check "the agent says why: the file size limit" \
	grep -q "^palloc: profile not written: cannot write '.*lim\..*\.pb\.gz': File too large (the file size limit" lim.err
sed 's/^/# /' lim.err

# palloc_dump() under the limit: -1 EFBIG, and the program's signal
# state as it was (its own SIGXFSZ handler still runs for its own write).
mkdir d && cd d || exit 1
sh -c 'ulimit -f 1 && exec env LD_PRELOAD="$PALLOC_AGENT" \
	PALLOC_OUTPUT=/dev/null deliver-child xfsz "$PWD/dump.pb.gz"' \
	>../x.out 2>../x.err
rc=$?
cd .. || exit 1
check "palloc_dump over the limit: EFBIG, mask and handler unchanged" \
	[ $rc -eq 5 ]
sed 's/^/# /' x.err
check "palloc_dump over the limit: nothing left beside own.out" \
	[ "$(ls -A d)" = own.out ]

# Under palloc-run the limit covers the record too: the agent keeps it in
# private memory and writes its profile itself, which fails the same way;
# the program's status stands, the agent names the file and why.
mkdir r && cd r || exit 1
sh -c 'ulimit -f 1 && exec palloc-run -o "p.%p.pb.gz" sh -c "exit 5"' \
	>../r.out 2>../r.err
rc=$?
cd .. || exit 1
check "palloc-run over the limit: status 5 kept" [ $rc -eq 5 ]
check "palloc-run over the limit: no file, no temporary" [ -z "$(ls -A r)" ]
check "the agent names the profile and why" \
	grep -Eq "^palloc: profile not written: cannot write '.*/r/p\.[0-9]+\.pb\.gz': File too large" r.err
check "palloc-run does not blame a signal" \
	sh -c '! grep -q "killed by signal" r.err'
sed 's/^/# /' r.err

# Under `ulimit -v` below the record's address range (RECORD_MAX_SIZE,
# reserved once at start) the agent makes no record at all: the program
# runs as it would, the agent says so in one warning and one line.
sh -c 'ulimit -v 400000 && exec env LD_PRELOAD="$PALLOC_AGENT" \
	PALLOC_OUTPUT="$PWD/v.%p.pb.gz" sh -c "exit 6"' 2>v.err
rc=$?
check "ulimit -v: status 6 kept" [ $rc -eq 6 ]
check "ulimit -v: the agent says no record can be made, and why" \
	grep -q "^palloc: warning: no record file (kept in memory): cannot reserve its address range (no profile can be made): Cannot allocate memory" v.err
check "ulimit -v: no profile, no temporary" \
	sh -c '! ls -A | grep -q "^v\.[0-9].*pb"'
sed 's/^/# /' v.err
done_testing
