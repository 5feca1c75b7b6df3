#!/bin/sh
# SPDX-License-Identifier: MIT
# The OOM killer's victim leaves an exact profile: in a memory
# cgroup of our own limited to 64 MiB, the leaker at rate 1 is killed; the
# profile palloc-run writes from its record after the kill holds exactly
# the blocks it held (one block of slack: the one being leaked at the
# kill), every run, and palloc-run's OOM line names that profile.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-kernel.sh"
. "$top_srcdir/t/lib-agent.sh"

need_agent
need_pprof
need palloc-run oom-leaker
RUNS=${PALLOC_OOM_RUNS:-10}

memcg_64m palloc-oomrec-$$ ||
	skip_all "no writable memory cgroup here (root and a memory controller needed)"
plan 6

# oom_run N [CGROUP [OPTION]]: palloc-run -r 1 of the leaker (2 MiB every
# 10 ms, counting) in the child cgroup (or CGROUP), --dump-at 0 (or
# OPTION); status in rc.N, stderr in err.N, the leaker's count in
# count.N, profiles in run.N/.
oom_run() {
	mkdir -p "run.$1"
	(cd "run.$1" && timeout_run 120 sh -c \
		'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh \
		"${2:-$child}" palloc-run -r 1 "${3:---dump-at=0}" \
		oom-leaker 2 60 count) >"count.$1" 2>"err.$1"
	echo $? >"rc.$1"
}

killed=0 exact=0 line=0 i=0 pairs=
while [ $i -lt "$RUNS" ]; do
	i=$((i + 1))
	oom_run $i
	[ "$(cat rc.$i)" = 137 ] && killed=$((killed + 1))
	n=$(grep -c '^[0-9]' count.$i)
	f=$(cd run.$i && one_profile 'palloc.oom-leaker.*.pb.gz')
	got=
	if [ -n "$f" ]; then
		raw_values "run.$i/$f" v.$i
		# The leak's sample: 2 MiB blocks, never freed (alloc = inuse).
		got=$(awk '$2 == $1 * 2097152 && $4 == $2 && $1 > 0 {
			print $3; exit }' v.$i)
	fi
	pairs="$pairs $n/${got:-none}"
	# Blocks held at the kill: n counted, or n + 1 when it died
	# between the leak and its count.
	if [ -n "$got" ] && [ "$got" -ge "$n" ] && [ "$got" -le $((n + 1)) ]; then
		exact=$((exact + 1))
	else
		diag "run $i: status $(cat rc.$i), leaked $n, profile $f: ${got:-no leak sample}"
		sed 's/^/# /' err.$i
	fi
	grep -Eq "^palloc-run: oom-leaker was killed by the OOM killer at [0-9.]+ MiB of a limit of 64\.0 MiB; its profile at the kill: $f \(from its record\), top inuse: leak_to_oom$" \
		err.$i && line=$((line + 1))
	[ $i = 1 ] && { diag "run 1: leaked $n, held $got"; sed 's/^/# /' err.1; }
done
diag "blocks leaked (counted) / held in the profile, per run:$pairs"
every_run $killed " runs killed by SIGKILL"
every_run $exact ": the profile from the record holds the blocks held at the kill (one of slack)"
every_run $line ": palloc-run's OOM line names that profile, from the record, leak_to_oom on top"
check "no warning that a profile is missing" \
	sh -c '! grep -q "wrote no profile\|no profile from" err.*'

# In a cgroup without a limit of its own below the 64 MiB one: palloc-run
# watches the effective limit (the parent's), and writes at90 from the
# record before the kill.
if mkdir "$child/inner" 2>/dev/null; then
	oom_run in "$child/inner" --dump-at=90
	gzip -dc run.in/*.at90.pb.gz 2>/dev/null | tr -c '[:print:]' '\n' |
		grep '^memory pressure: ' >in.comment
	diag "$(cat in.comment)"
	check "a child cgroup without a limit: at90 against the parent's 64 MiB" \
		grep -q "of a limit of 67108864 bytes (\\(9[0-9]\\|100\\)\\.[0-9] % of the limit; threshold 90 %) at unix time [0-9.]*, from $child/memory\\.\\(current\\|usage_in_bytes\\)$" in.comment
	rmdir "$child/inner" 2>/dev/null || { sleep 1; rmdir "$child/inner"; }
else
	skip "cannot make a cgroup below the child"
fi

rmdir "$child" 2>/dev/null || { sleep 1; rmdir "$child"; }
check "the child cgroup is gone" [ ! -d "$child" ]
done_testing
