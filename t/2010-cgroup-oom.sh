#!/bin/sh
# SPDX-License-Identifier: MIT
# A profile from just before the OOM kill (PALLOC_DUMP_AT; under palloc-run
# --dump-at, which watches the cgroup and writes it from the record) and
# palloc-run's OOM line (naming the profile written from the record after
# the kill): live in a memory cgroup of our own limited to 64 MiB, and the
# agent's v2 reader on a fixture tree (PALLOC_SYSROOT).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-kernel.sh"

need_agent
RUNS=${PALLOC_OOM_RUNS:-10}
plan 14

# ---- v2 on a fixture: the agent's own reader ----

cp -R "$top_srcdir/t/fixtures/sysroot-cgroup2" root
chmod -R u+w root
# pressure_run NAME FILE VALUE [VAR=VALUE...]: the leaker (64 KiB every
# 10 ms) with the agent, cgroup files read under root/, profiles
# p.NAME.%n.pb.gz; once it runs, VALUE goes into FILE (under root/); waits
# for its first pressure profile, then ends it.
pressure_run() {
	_name=$1 _file=root/sys/fs/cgroup/$2 _value=$3
	shift 3
	timeout_run 60 env "$@" PALLOC_SYSROOT="$T/root" PALLOC_SAMPLE_RATE=1 \
		PALLOC_OUTPUT="$T/p.$_name.%n.pb.gz" LD_PRELOAD="$PALLOC_AGENT" \
		oom-leaker 64k 30 >"$_name.out" 2>"$_name.err" &
	_pid=$!
	retry 100 0.1 grep -q ready "$_name.out"
	echo "$_value" >"$_file"
	retry 100 0.1 sh -c "ls p.$_name.at* >/dev/null 2>&1"
	kill $_pid
	wait $_pid
}
# comment_of FILE: the agent's pressure comment.
comment_of() {
	gzip -dc "$1" | tr -c '[:print:]' '\n' | grep '^memory pressure: '
}
# only NAME SEQ TEXT: the one pressure profile of run NAME is
# p.NAME.SEQ.pb.gz, and its comment has TEXT.
only() {
	[ "$(ls p.$1.at*)" = "p.$1.$2.pb.gz" ] &&
		comment_of "p.$1.$2.pb.gz" | grep -qF "$3"
}

# memory.current 104857600 of memory.max 268435456: 39 % at start, so 30
# counts as crossed before; 150000000 is 55.8 %.
pressure_run at50 user.slice/app.service/memory.current 150000000 \
	PALLOC_DUMP_AT=30,50
diag "$(comment_of p.at50.at50.pb.gz)"
check "v2 fixture, PALLOC_DUMP_AT=30,50 from 39 % to 55.8 %: only at50" \
	only at50 at50 "cgroup v2 usage 150000000 bytes of a limit of 268435456 bytes (55.8 % of the limit; threshold 50 %)"
# A parent's smaller limit is the effective one, with the parent's usage:
# from 45.4 % to 95.3 %, a jump past 80 and 90 writes at95 alone.
echo 110000000 >root/sys/fs/cgroup/user.slice/memory.max
echo 50000000 >root/sys/fs/cgroup/user.slice/memory.current
pressure_run parent user.slice/memory.current 104857600
check "v2 fixture: the parent's smaller limit counts (95.3 %: at95 only)" \
	only parent at95 "of a limit of 110000000 bytes (95.3 % of the limit; threshold 95 %)"
echo 50000000 >root/sys/fs/cgroup/user.slice/memory.current
pressure_run bad user.slice/memory.current 90000000 PALLOC_DUMP_AT=80,abc
check "a bad PALLOC_DUMP_AT warns and keeps 80,90,95 (81.8 %: at80)" \
	sh -c 'grep -q "PALLOC_DUMP_AT=80,abc: expected percentages" bad.err &&
		[ "$(ls p.bad.at*)" = p.bad.at80.pb.gz ]'
# An empty value is no list either (palloc-run's --dump-at refuses it).
echo 50000000 >root/sys/fs/cgroup/user.slice/memory.current
pressure_run empty user.slice/memory.current 90000000 PALLOC_DUMP_AT=
check "an empty PALLOC_DUMP_AT warns and keeps 80,90,95 (81.8 %: at80)" \
	sh -c 'grep -q "PALLOC_DUMP_AT=: expected percentages" empty.err &&
		[ "$(ls p.empty.at*)" = p.empty.at80.pb.gz ]'
# Started at 81.8 %: at80 counts as crossed, 90 is crossed later.
pressure_run above user.slice/memory.current 100000000
check "started above 80 %: no at80, at90 when crossed" \
	only above at90 "(90.9 % of the limit; threshold 90 %)"
rm -f p.*

# ---- live: a child memory cgroup limited to 64 MiB ----

if ! memcg_64m palloc-oom-$$; then
	for i in 1 2 3 4 5 6 7 8 9; do
		skip "no writable memory cgroup here (root and a memory controller needed)"
	done
	done_testing
fi

# oom_run N [OPTIONS...] [-- LEAKER ARGS]: palloc-run of the leaker in the
# child cgroup; status in rc.N, stderr in err.N, profiles in run.N/.
oom_run() {
	_i=$1
	shift
	mkdir -p "run.$_i"
	(cd "run.$_i" && timeout_run 120 sh -c \
		'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$child" \
		palloc-run "$@") 2>"err.$_i"
	echo $? >"rc.$_i"
}
# best N: the profile of run N written at the highest percent (atNN).
best() {
	ls "run.$1" | grep '\.at[0-9]*\.pb\.gz$' | sort -t. -k3.3n | tail -1
}

killed=0 line=0 at90=0 top=0
i=0
while [ $i -lt "$RUNS" ]; do
	i=$((i + 1))
	oom_run $i oom-leaker 2
	[ "$(cat rc.$i)" = 137 ] && killed=$((killed + 1))
	grep -Eq "^palloc-run: oom-leaker was killed by the OOM killer at [0-9.]+ MiB of a limit of 64\.0 MiB; its profile at the kill: palloc\.oom-leaker\.[0-9]+\.pb\.gz \(from its record\), top inuse: leak_to_oom$" \
		err.$i && line=$((line + 1))
	b=$(best $i)
	if [ -n "$b" ] && comment_of "run.$i/$b" |
		grep -Eq '\((9[0-9]|100)\.[0-9] % of the limit'; then
		at90=$((at90 + 1))
		palloc-dump --top=1 --sample-index inuse_space "run.$i/$b" \
			>top.$i 2>&1
		awk '$NF == "leak_to_oom" && $2 ~ /%$/ { f = 1 } END { exit !f }' \
			top.$i && top=$((top + 1))
	fi
	if [ $i = 1 ] || ! grep -q 'killed by the OOM killer' err.$i; then
		diag "run $i: status $(cat rc.$i), $(ls run.$i | tr '\n' ' ')"
		sed 's/^/# /' err.$i
	fi
done
every_run $killed " runs killed by SIGKILL"
every_run $line ": palloc-run names the OOM kill, the profile at the kill (from the record) and leak_to_oom"
every_run $at90 ": a profile written at >= 90 % of the limit"
every_run $top ": leak_to_oom on top of its inuse_space"

# A threaded program leaking 8 MiB every 10 ms: the agent's pressure thread
# checks, woken by the allocating threads at every 1 % of the limit.
oom_run t -q oom-leaker 8 60 threads
diag "threaded: $(ls run.t | tr '\n' ' ')"
check "threaded: killed, reported, a profile at >= 90 %" sh -c \
	'[ "$(cat rc.t)" = 137 ] && ls run.t | grep -q "\.at9[05]\.pb\.gz$" &&
	grep -q "killed by the OOM killer.*profile at the kill.*top inuse: leak_to_oom" err.t'

# --dump-at 0: no pressure profile; the one from the record at the kill.
oom_run z --dump-at 0 oom-leaker 2
check "--dump-at 0: no atNN profile, the profile at the kill named" sh -c \
	'! ls run.z | grep -q "\.at" &&
	grep -Eq "^palloc-run: oom-leaker was killed by the OOM killer at .* of a limit of 64\.0 MiB; its profile at the kill: palloc\.oom-leaker\.[0-9]+\.pb\.gz \(from its record\)" err.z'

# A SIGKILL that is not the OOM killer's: no OOM line.
mkdir run.k
(cd run.k && exec palloc-run sh -c 'echo $$ >../pid.k && exec oom-leaker 1 60') \
	2>err.k &
prun=$!
retry 50 0.1 test -s pid.k
kill -KILL "$(cat pid.k)"
wait $prun
diag "$(cat err.k)"
check "a plain SIGKILL is not called an OOM kill (its profile from the record)" \
	sh -c 'grep -q "^palloc-run: wrote palloc\.oom-leaker\." err.k &&
	! grep -q "OOM killer" err.k'

# Unlimited cgroup: nothing is read, no pressure profile.
check "outside a limited cgroup no pressure profile is written" \
	sh -c '! ls run.k | grep -q "\.at"'

rmdir "$child" 2>/dev/null || { sleep 1; rmdir "$child"; }
check "the child cgroup is gone" [ ! -d "$child" ]
done_testing
