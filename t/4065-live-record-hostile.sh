#!/bin/sh
# SPDX-License-Identifier: MIT
# A program that overwrites its own record with random bytes (all of it,
# its entries only, or a byte in 64): palloc-dump, palloc-mallinfo and
# palloc-explain of it each exit 2 with one line, or succeed; never a
# crash or a hang.
. "$top_srcdir/t/lib.sh"
need_agent
need idle-alloc
if asan palloc-dump; then skip_all "a sanitized build cannot load the agent"; fi

XDG_RUNTIME_DIR=$T/run
export XDG_RUNTIME_DIR
mkdir -m 700 "$XDG_RUNTIME_DIR"
pid=
trap 'kill -9 $pid 2>/dev/null; wait 2>/dev/null; cleanup_tmp' EXIT

# sane NAME CMD...: CMD exits 0, or 2 with one line on stderr, within 20 s.
sane() {
	_name=$1
	shift
	timeout_run 20 "$@" >"$_name.out" 2>"$_name.err"
	_rc=$?
	[ $_rc -eq 0 ] && return 0
	if [ $_rc -eq 2 ] && [ "$(wc -l <"$_name.err")" -eq 1 ]; then
		return 0
	fi
	echo "# $*: exit $_rc: $(head -c 300 "$_name.err")"
	return 1
}

modes="all entries sparse"
seeds="1 2 3"
plan $((3 * 3 * 3 + 2))

refused=0
for mode in $modes; do
	for seed in $seeds; do
		PALLOC_SAMPLE_RATE=1 LD_PRELOAD=$PALLOC_AGENT \
			idle-alloc scribble $seed $mode >scribble.out 2>&1 &
		pid=$!
		retry 100 0.05 grep -q scribbled scribble.out
		sane dump palloc-dump $pid --json
		check "$mode $seed: palloc-dump" test $? -eq 0
		[ -s dump.err ] && refused=$((refused + 1))
		sane mallinfo palloc-mallinfo --json $pid
		check "$mode $seed: palloc-mallinfo" test $? -eq 0
		sane explain palloc-explain --json $pid
		check "$mode $seed: palloc-explain" test $? -eq 0
		if [ "$mode $seed" = "all 1" ]; then
			cp dump.err all.err
		fi
		kill -9 $pid
		wait $pid 2>/dev/null
	done
done
diag "palloc-dump refused $refused of 9 scribbled records"
check "a record scribbled whole is refused, saying why" \
	grep -q "^palloc-dump: cannot reach agent of process '[0-9]*': record '.*\.rec': " \
	all.err
check "the idle-alloc helper found its record each time" \
	test "$(grep -c scribbled scribble.out)" = 1
done_testing
