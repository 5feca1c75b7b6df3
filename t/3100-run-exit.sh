#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run as a wrapper: exit status passthrough, 125/126/127, refusal of
# static, setuid and setgid programs, option validation, signal forwarding.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need_agent
need palloc-run

# The program's exit status comes through; 128+N when killed by signal N.
palloc-run -q sh -c 'exit 0' 2>err
check "exit 0 passes through" [ $? -eq 0 ]
palloc-run -q sh -c 'exit 3' 2>err
check "exit 3 passes through" [ $? -eq 3 ]
palloc-run -q sh -c 'exit 2' 2>err
check "exit 2 (a usage error's code elsewhere) passes through" [ $? -eq 2 ]
palloc-run -q sh -c 'kill -TERM $$' 2>err
check "killed by SIGTERM: 143" [ $? -eq 143 ]
mkdir k && cd k || exit 99
palloc-run -q sh -c 'kill -KILL $$' 2>err
rc=$?
check "killed by SIGKILL: 137" [ $rc -eq 137 ]
check "killed by SIGKILL: its profile is written from its record, no warning" \
	sh -c '[ "$(ls palloc.sh.*.pb.gz | wc -l)" -eq 1 ] && [ ! -s err ]'
# Without the run's token the record is not the run's: no profile then,
# and one line says so.
palloc-run -q sh -c 'exec env -u PALLOC_RUN_TOKEN sh -c "kill -KILL \$\$"' \
	2>err2
check "killed by SIGKILL, no record of the run: one line says no profile was written" \
	grep -q "^palloc-run: warning: 'sh' wrote no profile .*killed by signal 9" err2
cd .. || exit 99

# Started with SIGCHLD ignored, palloc-run still gets the program's status
# (the kernel would otherwise reap it), and the program inherits SIG_IGN.
cat >chld.py <<'EOF'
import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execvp(sys.argv[1], sys.argv[1:])
EOF
if command -v python3 >/dev/null 2>&1; then
	python3 chld.py palloc-run -q sh -c 'exit 4' >out 2>err
	rc=$?
	python3 chld.py palloc-run -q grep ^SigIgn /proc/self/status >out 2>err
	check "SIGCHLD ignored: the status still comes through (4)" [ $rc -eq 4 ]
	# SIGCHLD is signal 17: bit 16 of the SigIgn mask.
	ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' out)
	check "SIGCHLD ignored: and the program inherits it ($ign)" \
		[ $((0x$ign >> 16 & 1)) -eq 1 ]
else
	skip "python3 missing: SIGCHLD ignored not tested"
	skip "python3 missing"
fi

# Options end at the program name (env(1) style): its options are its own.
palloc-run -q sh -c 'echo "$1"' sh -q >out 2>err
check "options after the program are the program's" \
	test "$(cat out)" = "-q"
palloc-run -q -- sh -c 'echo "$0"' x >out 2>err
check "-- ends the options" test "$(cat out)" = "x"

# The environment the program sees.
# (--no-follow is t/3101's: the agent then clears these for children.)
palloc-run -q -r 4k -i 2 --unwind fp --max-depth 12 --peak \
	--exact -o "prof.%p.pb.gz" sh -c 'env' >env.out 2>err
{
	grep -q "^LD_PRELOAD=$PALLOC_AGENT" env.out &&
		grep -qx "PALLOC_SAMPLE_RATE=4096" env.out &&
		grep -qx "PALLOC_INTERVAL=2" env.out &&
		grep -qx "PALLOC_UNWIND=fp" env.out &&
		grep -qx "PALLOC_MAX_DEPTH=12" env.out &&
		grep -qx "PALLOC_PEAK=1" env.out &&
		grep -qx "PALLOC_EXACT=1" env.out &&
		grep -qx "PALLOC_OUTPUT=$T/prof.%p.pb.gz" env.out
} || sed 's/^/# /' env.out
check "options become PALLOC_* variables, agent first in LD_PRELOAD" \
	test $? -eq 0
LD_PRELOAD=/nonexistent/x.so palloc-run -q sh -c 'echo "$LD_PRELOAD"' \
	>out 2>err
check "the user's LD_PRELOAD is kept after the agent" \
	test "$(cat out)" = "$PALLOC_AGENT:/nonexistent/x.so"

# Not found, not executable.
expect_fail 127 palloc-run no-such-program-palloc 2>err
check "not found: 127" [ $? -eq 0 ]
check "not found: the message" diff -u - err <<EOF
palloc-run: cannot run 'no-such-program-palloc': No such file or directory
EOF
printf '#!/bin/sh\nexit 0\n' >noexec
chmod 644 noexec
expect_fail 126 palloc-run ./noexec 2>err
check "not executable: 126" [ $? -eq 0 ]
check "not executable: the message" diff -u - err <<EOF
palloc-run: cannot run './noexec': Permission denied
EOF
mkdir -p bin && printf '#!/bin/sh\necho found "$@"\n' >bin/palloc-t-prog &&
	chmod 755 bin/palloc-t-prog
PATH=$T/bin:$PATH palloc-run -q palloc-t-prog a >out 2>err
check "found through PATH" test "$(cat out)" = "found a"

# Refused: 125 and why.
if cc -static -o static-prog -x c - 2>cc.err <<EOF
int main(void) { return 0; }
EOF
then
	expect_fail 125 palloc-run ./static-prog >out 2>err
	check "static program: 125" [ $? -eq 0 ]
	check "static program: says why" diff -u - err <<EOF
palloc-run: cannot profile './static-prog': statically linked: there is no dynamic loader, so LD_PRELOAD is never read
EOF
	printf '#!%s/static-prog\n' "$T" >static-script
	chmod 755 static-script
	expect_fail 125 palloc-run ./static-script >out 2>err
	check "script with a static interpreter: 125, names it" \
		grep -q "its interpreter '$T/static-prog' is statically linked" err
else
	skip "cc -static does not work (libc6-dev's libc.a?)"
	skip "cc -static does not work"
	skip "cc -static does not work"
fi
cp /bin/true suid-true && chmod u+s suid-true
expect_fail 125 palloc-run ./suid-true 2>err
check "setuid program: 125" [ $? -eq 0 ]
check "setuid program: says why" diff -u - err <<EOF
palloc-run: cannot profile './suid-true': set-user-ID: the dynamic loader ignores LD_PRELOAD in secure-execution mode
EOF
cp /bin/true sgid-true && chmod g+s,g+x sgid-true
expect_fail 125 palloc-run ./sgid-true 2>err
check "setgid program: 125" grep -q "set-group-ID" err

# ELF files palloc-run reads itself: a 32-bit x86 header (another word size
# than the agent's), a truncated one.
printf '\177ELF\001\001\001\000\000\000\000\000\000\000\000\000\002\000\003\000\001\000\000\000' >elf32
head -c 32 /dev/zero >>elf32
chmod 755 elf32
expect_fail 125 palloc-run ./elf32 2>err
check "32-bit program: 125" [ $? -eq 0 ]
check "32-bit program: says why" grep -q \
	"^palloc-run: cannot profile './elf32': built for another architecture or word size than the agent" err
printf '\177ELF\002\001' >trunc
chmod 755 trunc
expect_fail 126 palloc-run ./trunc 2>err
check "truncated ELF: 126, says so" \
	grep -q "^palloc-run: cannot run './trunc': './trunc' is not a valid ELF file" err

# Usage errors: 125, one line and the hint, nothing on stdout.
for args in "-r" "-r 12x true" "--unwind frames true" "--max-depth 0 true" \
	"-i -1 true" "-o - true" ""; do
	# shellcheck disable=SC2086
	palloc-run $args >out 2>err
	rc=$?
	if [ $rc -ne 125 ] || [ -s out ] || [ "$(wc -l <err)" -ne 2 ]; then
		diag "palloc-run $args: exit $rc"
		sed 's/^/# /' err
		break
	fi
done
check "bad option values: 125, two stderr lines, no stdout" [ $rc -eq 125 ]
expect_fail 125 palloc-run -o nodir/x.pb.gz true 2>err
check "missing output directory: 125, names it" \
	grep -q "cannot write profiles to 'nodir/x.pb.gz'" err
# A pattern the agent would refuse (pattern_invalid: longer than PATH_MAX/2)
# is refused before the program runs, not replaced by the default in it.
long=$(printf '%03000d' 0)
expect_fail 125 palloc-run -o "$long" true >out 2>err
check "pattern too long for the agent: 125" [ $? -eq 0 ]
check "pattern too long for the agent: says why" \
	grep -q "^palloc-run: invalid output pattern '0*': too long$" err
palloc-run --http 127.0.0.1:99999 true >out 2>err
check "--http with a bad port: 125 before the program runs" \
	test $? -eq 125 -a ! -s out
check "--http with a bad port: says so" \
	grep -q "^palloc-run: cannot serve on '127.0.0.1:99999'" err
env PALLOC_AGENT="$T/none.so" palloc-run true 2>err
check "missing agent: 125" [ $? -eq 125 ]
check "missing agent: names it" grep -q "cannot use agent '$T/none.so'" err

# Signals sent to palloc-run reach the program (once).
cat >trap.sh <<'EOF'
#!/bin/sh
n=0
trap 'n=$((n + 1)); echo "usr1 $n"' USR1
trap 'echo "term after $n"; exit 7' TERM
echo ready >ready
while :; do sleep 0.1; done
EOF
chmod 755 trap.sh
palloc-run -q ./trap.sh >out 2>err &
pid=$!
i=0
while [ ! -f ready ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -USR1 $pid
sleep 0.5
kill -TERM $pid
wait $pid
rc=$?
check "SIGUSR1 forwarded, once; SIGTERM forwarded; status 7" diff -u - out <<EOF
usr1 1
term after 1
EOF
check "status of a program stopped by a forwarded signal" [ $rc -eq 7 ]

# SIGINT from a terminal reaches the program from the kernel, once: not
# forwarded again. SIGINT sent to palloc-run with kill(2) is forwarded.
# script(1) gives a pseudo-terminal; env --default-signal=INT undoes a
# SIGINT ignored by whatever started the tests (a background job of a
# non-interactive shell), which palloc-run would rightly keep ignoring.
# caught_by_child: wait (10 s at most) until the program palloc-run (pid in
# the file pid) started catches SIGINT and SIGUSR1: a signal sent before
# would kill it, however long a loaded machine takes to get there.
caught_by_child() {
	_i=0
	while [ $_i -lt 100 ]; do
		_p=$(cat pid 2>/dev/null)
		_c=$(cat "/proc/$_p/task/$_p/children" 2>/dev/null)
		_m=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/${_c%% *}/status" \
			2>/dev/null)
		[ -n "$_c" ] && [ -n "$_m" ] &&
			[ $((0x$_m & 0x202)) -eq $((0x202)) ] && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}
# gone: wait (20 s at most) until palloc-run has ended, keeping the
# terminal open until then.
gone() {
	_i=0
	while kill -0 "$(cat pid)" 2>/dev/null && [ $_i -lt 200 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}
if command -v script >/dev/null 2>&1 && command -v run-workload >/dev/null; then
	rm -f pid
	(caught_by_child; printf '\003'; gone) |
		script -qfec 'echo $$ >pid; exec env --default-signal=INT \
			palloc-run -q run-workload 1 1 sigs' /dev/null | tr -d '\r' >tty.out
	check "terminal ^C: the program gets it once, from the kernel" \
		diff -u - tty.out <<EOF
ready
^CINT kernel
EOF
	rm -f pid
	(
		caught_by_child
		kill -INT "$(cat pid)"
		sleep 0.2
		kill -USR1 "$(cat pid)"
		gone
	) | script -qfec 'echo $$ >pid; exec env --default-signal=INT \
		palloc-run -q run-workload 1 1 sigs' \
		/dev/null | tr -d '\r' >kill.out
	check "kill -INT, kill -USR1 to palloc-run: forwarded, once each" \
		diff -u - kill.out <<EOF
ready
INT parent
USR1 parent
EOF
else
	skip "script(1) or run-workload missing: terminal signals not tested"
	skip "script(1) or run-workload missing"
fi

echo "1..$_n"
done_testing
