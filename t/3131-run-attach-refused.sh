#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run -p PID refuses, one line and status 125, the
# process untouched (not traced, still answering, no agent loaded): no
# such process, a process already traced, a static program, another
# user's process without CAP_SYS_PTRACE; and the usage errors of -p.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need_attach palloc-run attach-target kernel-idle

plan 18

tracer() { awk '/^TracerPid:/ { print $2 }' "/proc/$1/status"; }
agents() { grep -c 'libpalloc\.so' "/proc/$1/maps"; }

# ---- no such process ----
gone=$(sh -c 'echo $$')
while kill -0 "$gone" 2>/dev/null; do gone=$((gone + 1)); done
palloc-run -p "$gone" 2>err.txt
check "no such process: 125" test $? -eq 125
check "no such process: one line" one_line err.txt \
	"palloc-run: cannot attach to process '$gone': no such process"

# ---- a static program ----
kernel-idle 1 >idle.out &
sp=$!
retry 100 0.1 grep -q ready idle.out
palloc-run -p "$sp" 2>err.txt
check "static program: 125" test $? -eq 125
check "static program: one line" one_line err.txt \
	"palloc-run: cannot attach to process '$sp': it does not use the shared C library libc.so.6 (a static program)"
check "static program: not traced after" test "$(tracer "$sp")" = 0
kill "$sp"
wait "$sp" 2>/dev/null

# ---- already traced ----
rm -f in
mkfifo in || exit 99
attach-target <in >out.txt &
tp=$!
exec 3>in
retry 100 0.1 grep -q '^ready$' out.txt
if command -v strace >/dev/null 2>&1; then
	strace -p "$tp" -o /dev/null 2>/dev/null &
	sp=$!
	retry 100 0.1 sh -c "[ \"\$(awk '/^TracerPid:/ { print \$2 }' /proc/$tp/status)\" = $sp ]"
	palloc-run -p "$tp" 2>err.txt
	check "already traced: 125" test $? -eq 125
	check "already traced: one line naming the tracer" one_line err.txt \
		"palloc-run: cannot attach to process '$tp': it is already traced by process $sp (a debugger, strace or another palloc-run)"
	kill "$sp"
	wait "$sp" 2>/dev/null
	retry 100 0.1 test "$(tracer "$tp")" = 0
else
	skip "strace not installed"
	skip "strace not installed"
fi

# ---- another user's process ----
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	for_other_users palloc-run && chmod a+rx "$T"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$T/bin/palloc-run" -p "$tp" -o /dev/null 2>err.txt
	check "another user's process: 125" test $? -eq 125
	check "another user's process: one line (CAP_SYS_PTRACE named)" \
		one_line err.txt \
		"palloc-run: cannot attach to process '$tp': it runs as uid 0: attaching to another user's process needs CAP_SYS_PTRACE (run as root)"
else
	skip "not root: cannot run as another user"
	skip "not root: cannot run as another user"
fi

check "after the refusals: not traced" test "$(tracer "$tp")" = 0
check "after the refusals: no agent loaded" test "$(agents "$tp")" -eq 0
printf 'alloc 1 10\n' >&3
check "after the refusals: still answering" \
	retry 100 0.1 grep -qx 'allocated 1' out.txt

# ---- usage ----
palloc-run -p "$tp" true 2>err.txt
check "-p with a program: 125" test $? -eq 125
check "-p with a program: says so" \
	grep -q "^palloc-run: -p/--pid and a program to run cannot be given together$" err.txt
palloc-run -p "$tp" --peak 2>err.txt
check "-p with --peak: 125" test $? -eq 125
check "-p with --peak: says so" \
	grep -q "cannot be used with -p/--pid$" err.txt
palloc-run -p 0 2>err.txt
check "-p 0: 125" test $? -eq 125
check "the process was not touched by the usage errors" \
	test "$(agents "$tp")" -eq 0

printf 'quit\n' >&3
exec 3>&-
wait "$tp"

done_testing
