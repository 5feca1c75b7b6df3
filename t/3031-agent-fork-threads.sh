#!/bin/sh
# SPDX-License-Identifier: MIT
# Fork children of a threaded program built -O2 -fomit-frame-pointer:
# a second thread churns malloc/free while the main
# thread forks; at -r 1 that thread is often inside libunwind's
# dl_iterate_phdr at the fork, so the child may inherit the loader's lock
# held. Each child must still unwind as its parent from its first
# allocation: its 3000 blocks of 700 bytes, every one on a full stack
# (child_alloc called from main), in each of 20 runs of 4 forks. Before the
# agent answered libunwind from its fork-time copy of the loaded objects,
# such a child used frame pointers until a probe thread saw the loader
# free: one frame, or a stack without child_alloc or main.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need forkthreads palloc-dump

runs=20
forks=4
plan 3

bad_runs=0
crashed=0
i=0
while [ $i -lt $runs ]; do
	i=$((i + 1))
	mkdir "run$i" && cd "run$i" || exit 99
	timeout_run 60 env LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 \
		PALLOC_OUTPUT='prof.%p.pb.gz' forkthreads $forks \
		>out.txt 2>err.txt || crashed=$((crashed + 1))
	bad=0
	n=0
	for c in $(sed -n 's/^child //p' out.txt); do
		n=$((n + 1))
		for t in alloc_objects:3000 alloc_space:2100000; do
			palloc-dump --symbolize --folded --sample-index \
				"${t%:*}" "prof.$c.pb.gz" >"$c.${t%:*}" \
				2>"$c.err" || bad=$((bad + 1))
			# every sample of child_alloc, and all on a stack
			# that reaches main; nothing else counts
			got=$(awk '/(^|;)child_alloc( |;)/ { a += $NF }
				/(^|;)main;(.*;)?child_alloc( |;)/ { m += $NF }
				END { printf "%d %d", a, m }' "$c.${t%:*}")
			if [ "$got" != "${t#*:} ${t#*:}" ]; then
				bad=$((bad + 1))
				diag "run $i child $c ${t%:*}: want ${t#*:} in" \
					"child_alloc, all under main; got $got:"
				diag "$(head -5 "$c.${t%:*}")"
			fi
		done
	done
	[ $n -eq $forks ] || bad=$((bad + 1))
	[ $bad -eq 0 ] || bad_runs=$((bad_runs + 1))
	cd .. || exit 99
done
check "the forker exits 0 in every run" test $crashed -eq 0
check "$forks children in each run" \
	test "$(cat run*/out.txt | grep -c '^child ')" -eq $((runs * forks))
check "every child exact with full stacks in $runs of $runs runs" \
	test $bad_runs -eq 0
diag "runs with a wrong child: $bad_runs of $runs"
done_testing
