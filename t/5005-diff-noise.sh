#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-diff knows its noise: PAIRS (default 20) pairs of runs of one
# workload holding 300 MiB (blocks of 64 KiB to 1 MiB) at the default rate,
# 512 KiB, with other PALLOC_SEEDs, and a third run with a 16 MiB leak in a
# new function. The raw 1 MiB gate trips on sampling noise alone; the
# default gate (significant growth, z = 3) passes on noise and catches every
# leak. The agent runs by LD_PRELOAD and the raw profiles are diffed
# (bench/diff/noise.sh gives the 100-pair figures). Profiles without error
# bars (rate 1) keep the raw gate.
. "$top_srcdir/t/lib.sh"
need_agent
need jq palloc-diff diff-noise
pairs=${PAIRS:-20}
plan 17

# run SEED OUT [LEAK_MIB]: one run of the workload under the agent.
run() {
	LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=${rate:-524288} \
		PALLOC_SEED=$1 PALLOC_OUTPUT=$T/$2 diff-noise 300 ${3:-} &&
		[ -s "$2" ]
}
# gate BASE NEW [ARGS...]: prints the exit status of the 1 MiB gate.
gate() {
	_b=$1 _n=$2
	shift 2
	palloc-diff -q --fail-on-growth 1MiB "$@" "$_b" "$_n" 2>/dev/null
	echo $?
}

# 1-4: the pairs
i=0 runs_ok=1 raw=0 sig=0 leak_sig=0 leak_raw=0 trouble=0 raw_pair=
while [ "$i" -lt "$pairs" ]; do
	b=b$i.pb.gz n=n$i.pb.gz l=l$i.pb.gz
	run $((3 * i + 1)) "$b" && run $((3 * i + 2)) "$n" &&
		run $((3 * i + 3)) "$l" 16 || { runs_ok=; break; }
	for x in "raw $b $n --raw-gate" "sig $b $n" "leak_raw $b $l --raw-gate" \
		"leak_sig $b $l"; do
		set -- $x
		_v=$1
		shift
		case $(gate "$@") in
		0) ;;
		1) eval "$_v=\$(($_v + 1))"
			[ "$_v" = raw ] && [ -z "$raw_pair" ] && raw_pair=$i ;;
		*) trouble=$((trouble + 1)) ;;
		esac
	done
	i=$((i + 1))
done
[ -n "$runs_ok" ] && [ "$trouble" -eq 0 ] &&
	ok "$pairs x 3 runs under the agent, every diff exit 0 or 1" ||
	not_ok "$pairs x 3 runs under the agent, every diff exit 0 or 1 (trouble $trouble)"
diag "noise: raw gate fails $raw/$pairs, significant gate fails $sig/$pairs"
diag "16 MiB leak: raw gate fails $leak_raw/$pairs, significant gate fails $leak_sig/$pairs"
[ "$raw" -ge 2 ] && ok "the raw 1MiB gate trips on noise ($raw of $pairs)" ||
	not_ok "the raw 1MiB gate trips on noise ($raw of $pairs)"
[ $((pairs - sig)) -ge $((pairs - 1)) ] &&
	ok "the default gate passes on noise ($((pairs - sig)) of $pairs)" ||
	not_ok "the default gate passes on noise ($((pairs - sig)) of $pairs)"
[ "$leak_sig" -eq "$pairs" ] &&
	ok "the default gate catches the 16 MiB leak ($leak_sig of $pairs)" ||
	not_ok "the default gate catches the 16 MiB leak ($leak_sig of $pairs)"

# 5-6: JSON of a noise pair and of a leak pair
palloc-diff --json b0.pb.gz n0.pb.gz >n.json 2>n.err &&
	jqe '.growth_stddev_bytes > 4194304 and .noise_z == 3 and
		.raw_gate == false and .growth_limit_exceeded == null and
		(.growth_within_noise | type) == "boolean" and
		([.functions[] | .within_noise | type] | unique) == ["boolean"] and
		([.functions[] | select(.flat_bytes != 0) |
			.flat_stddev_bytes > 0] | all)' n.json &&
	ok "--json: the sigma of the growth and a within_noise per function" ||
	{ not_ok "--json: the sigma of the growth and a within_noise per function"; diag "$(head -40 n.json; cat n.err)"; }
palloc-diff --json b0.pb.gz l0.pb.gz >l.json 2>l.err &&
	jqe '[.functions[] | select(.flat_bytes != 0 and .within_noise == false)]
		| length == 1 and .[0].flat_bytes > 8388608 and
		.[0].flat_bytes > 3 * .[0].flat_stddev_bytes' l.json &&
	jqe '.significant_growth_bytes > 1048576' l.json &&
	ok "--json: only the leak's row is outside the noise" ||
	{ not_ok "--json: only the leak's row is outside the noise"; diag "$(cat l.json l.err)"; }

# 7: --top: the noise line, the columns, the marks
palloc-diff --top b0.pb.gz l0.pb.gz >top.out 2>top.err &&
	sed -n 3p top.out | grep -q '^Sampling noise: total change .* (3 sigma); rows marked ~ changed within it$' &&
	sed -n 4p top.out | grep -q ' flat3sd  *cum3sd  *name$' &&
	[ "$(grep -c ' ~ diff-noise+0x' top.out)" -ge 1 ] &&
	grep -q '  +-[0-9.]*MB   diff-noise+0x' top.out &&
	ok "--top: noise line, flat3sd/cum3sd, ~ on the rows within noise" ||
	{ not_ok "--top: noise line, flat3sd/cum3sd, ~ on the rows within noise"; diag "$(cat top.out top.err)"; }

# 8-10: the gate's message, --raw-gate, --noise-z 0
expect_fail 1 palloc-diff -f 1MiB b0.pb.gz l0.pb.gz >g.out 2>g.err &&
	[ ! -s g.out ] &&
	grep -q '^palloc-diff: inuse_space grew by -*[0-9]* bytes (.* of BASE); beyond sampling noise (3 sigma, [0-9]* bytes for the total) [0-9]* bytes, over the limit of 1048576 bytes; top growing stacks:$' g.err &&
	sed -n 2p g.err | grep -q '^palloc-diff:   +[0-9]* bytes (noise +-[0-9]*): diff-noise+0x' &&
	ok "the gate says how much grew beyond the noise, the leak first" ||
	{ not_ok "the gate says how much grew beyond the noise, the leak first"; diag "$(cat g.err)"; }
if [ -n "$raw_pair" ]; then
	expect_fail 1 palloc-diff -f 1MiB --raw-gate b$raw_pair.pb.gz \
		n$raw_pair.pb.gz 2>r.err &&
		grep -q "^palloc-diff: inuse_space grew by [0-9]* bytes (+[0-9.]*% of BASE), over the limit of 1048576 bytes; top growing stacks:$" r.err &&
		palloc-diff --json -f 1MiB --raw-gate b$raw_pair.pb.gz \
		n$raw_pair.pb.gz >r.json 2>/dev/null
	[ $? -eq 1 ] && jqe '.raw_gate and .growth_limit_exceeded' r.json &&
		ok "--raw-gate: pair $raw_pair fails on its raw growth" ||
		{ not_ok "--raw-gate: pair $raw_pair fails on its raw growth"; diag "$(cat r.err)"; }
	[ "$(gate b$raw_pair.pb.gz n$raw_pair.pb.gz --noise-z 0)" -eq 1 ] &&
		[ "$(gate b$raw_pair.pb.gz n$raw_pair.pb.gz --noise-z=0.5)" -le 1 ] &&
		ok "--noise-z 0 is the raw gate" || not_ok "--noise-z 0 is the raw gate"
else
	skip "no pair failed the raw gate"
	skip "no pair failed the raw gate"
fi

# 11: a percentage limit compares significant growth too
[ "$(gate b0.pb.gz l0.pb.gz --fail-on-growth 1%)" -eq 1 ] &&
	[ "$(gate b0.pb.gz n0.pb.gz --fail-on-growth 0.1%)" -eq 0 ] &&
	[ "$(gate b0.pb.gz l0.pb.gz --fail-on-growth 10%)" -eq 0 ] &&
	ok "--fail-on-growth PERCENT: the leak over 1%, noise under 0.1%" ||
	not_ok "--fail-on-growth PERCENT: the leak over 1%, noise under 0.1%"

# 12: -o carries the sigma of the difference as labels
palloc-diff -o d.pb.gz b0.pb.gz l0.pb.gz && palloc-diff -o empty.pb.gz \
	b0.pb.gz b0.pb.gz && palloc-diff --json empty.pb.gz d.pb.gz >dd.json &&
	jq -n --slurpfile a l.json --slurpfile b dd.json \
		'($a[0].growth_stddev_bytes - $b[0].growth_stddev_bytes) as $d |
		($d * $d) < 1e-4 * $a[0].growth_stddev_bytes * $a[0].growth_stddev_bytes and
		$b[0].significant_growth_bytes == $a[0].significant_growth_bytes' |
	grep -q true && ok "-o: the difference carries its sigma (inuse_space_stddev)" ||
	{ not_ok "-o: the difference carries its sigma (inuse_space_stddev)"; diag "$(cat dd.json)"; }

# 13-14: bad --noise-z
for z in -1 abc; do
	expect_fail 2 palloc-diff --noise-z "$z" b0.pb.gz n0.pb.gz >z.out 2>z.err &&
		[ ! -s z.out ] &&
		grep -q "^palloc-diff: invalid --noise-z '$z'" z.err &&
		ok "--noise-z $z: usage error" || not_ok "--noise-z $z: usage error"
done

# 15-17: rate 1, no error bars: sigma 0, the raw gate, pprof's table
rate=1
run 1 e0.pb.gz && run 2 e1.pb.gz 1 &&
	palloc-diff --json e0.pb.gz e1.pb.gz >e.json &&
	jqe '.growth_bytes >= 1048576 and .growth_stddev_bytes == 0 and
		.significant_growth_bytes == .growth_bytes and
		.growth_within_noise == false and
		([.functions[] | .within_noise] | unique) == [false] and
		(.functions[0] | has("flat_stddev_bytes") | not)' e.json &&
	ok "rate 1: sigma 0, significant growth is the growth" ||
	{ not_ok "rate 1: sigma 0, significant growth is the growth"; diag "$(cat e.json)"; }
grew=$(jq -r .growth_bytes e.json)
[ "$(gate e0.pb.gz e1.pb.gz --fail-on-growth $((grew - 1)))" -eq 1 ] &&
	[ "$(gate e0.pb.gz e1.pb.gz --fail-on-growth "$grew")" -eq 0 ] &&
	ok "rate 1: the gate trips at the byte, as the raw gate" ||
	not_ok "rate 1: the gate trips at the byte, as the raw gate"
palloc-diff --top e0.pb.gz e1.pb.gz >et.out &&
	sed -n 3p et.out | grep -q '^ *flat  *flat%  *sum%  *cum  *cum%  *name$' &&
	! grep -q '~\|sigma' et.out &&
	ok "rate 1: the table is pprof's" || { not_ok "rate 1: the table is pprof's"; diag "$(cat et.out)"; }
done_testing
