#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run writes its processes' profiles from their records:
# a process killed by SIGKILL leaves its exact profile; an idle program
# gets its interval profiles (palloc-run writes them, not the agent); the
# run's record directory is private, carries a token, and is removed at
# the end; a record without the run's token is not read.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
need palloc-run alloc-exact

plan 38

# ---- SIGKILL at rate 1: the profile from the record is exact ----
mkdir k && cd k || exit 99
palloc-run -r 1 -o 'k.%p.pb.gz' alloc-exact kill >truth.txt 2>err.txt
rc=$?
check "alloc-exact kill: status 137" [ $rc -eq 137 ]
f=$(one_profile 'k.*.pb.gz')
check "its profile is written (from its record)" test -n "$f"
check "the summary line names it, no warning" sh -c \
	'grep -Eq "^palloc-run: wrote k\.[0-9]+\.pb\.gz: " err.txt &&
	! grep -q warning err.txt'
sed 's/^/# /' err.txt
check "the profile is 0600" test "$(stat -c %a "$f")" = 600
raw_values "$f" v.txt
check "go tool pprof -raw reads it" test -s v.txt
# Every site at its exact values (alloc and inuse), as pprof -raw reads
# the very file palloc-run wrote.
check_sites truth.txt v.txt
# The inuse total: the truth's sum against the profile's (pprof -raw).
want=$(awk '$1 == "site" { s += $6 } END { print s }' truth.txt)
got=$(awk '{ s += $4 } END { print s }' v.txt)
diag "inuse of the sites: truth $want, the profile's total $got"
check "the profile's inuse total holds the truth's ($want <= $got)" \
	[ "$got" -ge "$want" ]
cd .. || exit 99

# ---- the directory, the token, their removal ----
mkdir d && cd d || exit 99
palloc-run -q sh -c 'printf "%s\n%s\n" "$PALLOC_RECORD_DIR" \
	"$PALLOC_RUN_TOKEN" >env.txt; stat -c %a "$PALLOC_RECORD_DIR" >mode.txt;
	ls -A "$PALLOC_RECORD_DIR" >list.txt'
dir=$(sed -n 1p env.txt)
diag "PALLOC_RECORD_DIR=$dir, mode $(cat mode.txt)"
check "PALLOC_RUN_TOKEN: 32 hex digits" \
	grep -Eqx '[0-9a-f]{32}' <<EOF
$(sed -n 2p env.txt)
EOF
check "PALLOC_RECORD_DIR: palloc-run.<32 hex digits>" \
	grep -Eqx '/.*/palloc-run\.[0-9a-f]{32}' <<EOF
$dir
EOF
if [ "$(id -u)" = 0 ]; then
	check "as root: 1777 in /tmp (other users create, none removes another's)" \
		sh -c '[ "$(cat mode.txt)" = 1777 ] && [ "${1%/*}" = /tmp ]' \
		sh "$dir"
else
	check "not root: 0700" [ "$(cat mode.txt)" = 700 ]
fi
check "the program's own record is there while it runs" \
	grep -Eq '^[0-9]+\.[0-9]+\.rec$' list.txt
check "the directory is removed at the end" test ! -e "$dir"
cd .. || exit 99

# ---- a record without the run's token is not read ----
mkdir t && cd t || exit 99
mkdir rec
PALLOC_RECORD_DIR=$PWD/rec LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 \
	PALLOC_OUTPUT=/dev/null alloc-exact kill >/dev/null 2>&1
set -- rec/*.rec
check "a record of a killed process, outside palloc-run" test -f "$1"
stranger=${1##*/}
spid=${stranger%%.*}
palloc-run -o 't.%p.pb.gz' sh -c 'cp "$1" "$PALLOC_RECORD_DIR/"' sh "$1" \
	>out 2>err
check "planted in the run's directory: no profile for pid $spid" \
	sh -c '! ls t.$1.pb.gz 2>/dev/null && ! grep -q "pid $1" err' sh "$spid"
check "the program's own profile is written" test "$(ls t.*.pb.gz | wc -l)" -ge 1
sed 's/^/# /' err
cd .. || exit 99

# ---- as root, a process that dropped privileges ----
mkdir u && cd u || exit 99
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	# nobody runs alloc-exact with the agent preloaded: both copied
	# where it can read them (a build tree under /root is not).
	for_other_users alloc-exact && chmod a+rx "$T" || exit 99
	chmod 1777 .
	palloc-run -r 1 -o "$PWD/u.%p.pb.gz" setpriv --reuid=65534 \
		--regid=65534 --clear-groups alloc-exact kill >truth.txt 2>err.txt
	rc=$?
	f=$(one_profile 'u.*.pb.gz')
	check "killed after dropping to uid 65534: 137, its profile written" \
		test $rc -eq 137 -a -n "$f"
	check "written as palloc-run's user (root), 0600" \
		test "$(stat -c %u:%a "$f" 2>/dev/null)" = 0:600
	raw_values "$f" v.txt
	check "and exact: site malloc" grep -q '^10 10010 6 6006 |' v.txt
	sed 's/^/# /' err.txt
else
	skip "not root, or setpriv cannot drop privileges here"
	skip "not root"
	skip "not root"
fi
cd .. || exit 99

# ---- an exited process whose agent delivered nothing ----
# (No channel: its agent writes its own file, which palloc-run neither
# knows nor reads; palloc-run writes the profile from the record.)
mkdir x && cd x || exit 99
palloc-run -r 1 -o "$PWD/x.%p.pb.gz" sh -c \
	'exec env -u PALLOC_COLLECT PALLOC_OUTPUT=/dev/null alloc-exact basic' \
	>truth.txt 2>err.txt
f=$(one_profile 'x.*.pb.gz')
raw_values "$f" v.txt
check "exited without delivering: its profile from the record, exact" \
	sh -c 'grep -q "^10 10010 6 6006 |" v.txt &&
	grep -Eq "^palloc-run: wrote x\.[0-9]+\.pb\.gz: " err.txt'
sed 's/^/# /' err.txt
cd .. || exit 99

# ---- an idle program gets its interval profiles ----
mkdir i && cd i || exit 99
palloc-run -r 1 -i 0.5 -o 'i.%p.%n.pb.gz' alloc-exact sleep 3000 \
	>out 2>err
rc=$?
n=$(ls i.*.pb.gz 2>/dev/null | wc -l)
diag "$n profiles: $(ls i.*.pb.gz | tr '\n' ' ')"
check "-i 0.5, a program sleeping 3 s: status 0, >= 5 profiles ($n)" \
	test $rc -eq 0 -a "$n" -ge 5
check "numbered 1 to $n without a gap (the exit profile last)" \
	test "$(ls i.*.pb.gz | sed 's/.*\.\([0-9]*\)\.pb\.gz/\1/' | sort -n |
		tr '\n' ' ')" = "$(seq 1 "$n" | tr '\n' ' ')"
raw_values "$(ls i.*.1.pb.gz)" v1.txt
check "the first interval profile holds the block kept (site malloc)" \
	grep -q '^10 10010 6 6006 |' v1.txt
check "one summary line per profile" \
	[ "$(grep -c '^palloc-run: wrote i\.' err)" -eq "$n" ]
# The agent is told to write none itself.
palloc-run -q -i 0.5 sh -c 'echo "$PALLOC_INTERVAL $PALLOC_DUMP_AT"' >env.txt
check "the agent gets PALLOC_INTERVAL=0 and PALLOC_DUMP_AT=0" \
	test "$(cat env.txt)" = "0 0"
# PALLOC_INTERVAL in the environment is palloc-run's interval too.
PALLOC_INTERVAL=0.5 palloc-run -r 1 -o 'e.%p.%n.pb.gz' alloc-exact sleep 1500 \
	>out 2>err
n=$(ls e.*.pb.gz 2>/dev/null | wc -l)
check "PALLOC_INTERVAL=0.5 without -i: >= 3 profiles over 1.5 s ($n)" \
	test "$n" -ge 3
cd .. || exit 99
done_testing
