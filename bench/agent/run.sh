#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/agent: the agent's overhead and fidelity, beside its peers.
#
#   bench/agent/run.sh TABLE [REPS]
#
# TABLE is one of
#   hot      1. malloc(32)+free pairs: ns per pair (thread CPU time), no
#               interposer / bare forwarding interposer / palloc; 1 and 2
#               threads; plus callgrind instructions per pair
#   default  2. default rate (512 KiB): wall and CPU time ratios on churn
#               (1 and 2 threads), growth, 100-deep stacks, python3,
#               sqlite3; redis-benchmark throughput; peak RSS difference
#   every    3. rate 1: churn slowdown, palloc vs heaptrack; share of the
#               stacks of a 100-deep recursion that reach main (palloc,
#               heaptrack, tcmalloc's HEAPPROFILE)
#   depth    only that last part of table 3
#   bounded  4. churn (1 stack, 2^18 stacks), 10 s, 60 s: profile, RSS
#   peers    6. churn 1 and 2 threads: palloc, heaptrack, jemalloc (plain
#               and prof at 2^19), tcmalloc (plain, sampling at 512 KiB,
#               HEAPPROFILE), palloc over jemalloc
#   parts    where palloc's hot-path time goes: bench/agent/lookalike.c
#               rebuilt piece by piece, CPU time on the churn loop
#   versus   the agent against an earlier build ($PALLOC_BEFORE, a
#               libpalloc.so): callgrind instructions per churn pair at
#               rates 0, 512 KiB and 1, CPU time ratios of the churn loop
#               at the default rate and at rate 1 (heaptrack beside)
#   threads  rate 1 against threads: work churn of 4 M pairs
#               in all ($PALLOC_THREADS_MILLIONS) split over 1, 2, 4 and 8
#               threads: CPU and wall ratios, palloc over heaptrack, CPU
#               ns per pair; $PALLOC_BEFORE (if set) as a column
#   all      all of them (not parts, not versus, not threads), in that order
# REPS is the number of paired runs (default 5 for hot and default, 3
# for every and peers; bounded runs once). PALLOC_BENCH_WORKLOADS limits
# table 2 to some of its workloads (e.g. "churn_1t sqlite3"; no callgrind
# part then). PALLOC_BENCH_PEERS adds peers as columns of table 2 (any
# of jemalloc jeprof tcmalloc tcsample heaptrack; e.g. all five).
#
# Every figure is a ratio to the same program without a profiler, measured
# in the same run: each repetition runs the baseline and then each variant
# back to back (the order reversed on every other repetition), and the
# table gives the median of the per-repetition ratios and their min-max.
# The agent is $PALLOC_AGENT, else the first libpalloc.so found in
# /tmp/build-G, ./ and the source tree; palloc-run is taken from the same
# build directory. Needs: cc, valgrind, heaptrack, libjemalloc2,
# libgoogle-perftools4, redis-server, redis-tools, sqlite3, python3,
# golang-go, time (the Debian packages).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
here=$src/bench/agent
table=${1:-}
reps=${2:-}
libdir=/usr/lib/x86_64-linux-gnu
jemalloc=$libdir/libjemalloc.so.2
tcmalloc=$libdir/libtcmalloc.so.4

# shellcheck source=bench/lib.sh
. "$src/bench/lib.sh"

find_agent /tmp/build-G
before=${PALLOC_BEFORE:-}
build=$(cd "$(dirname "$agent")/../.." && pwd)
run=$build/cmd/palloc-run

tmp=$(mktemp -d "${TMPDIR:-/tmp}/palloc-bench-agent.XXXXXX") || exit 2
port=$((20000 + $$ % 20000))
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1; rm -rf "$tmp"' EXIT

build_programs() {
	cc -O2 -Wall -o "$tmp/hotpath" "$here/hotpath.c" -pthread &&
		cc -O2 -g -Wall -o "$tmp/work" "$here/work.c" -pthread &&
		cc -O2 -Wall -shared -fPIC -o "$tmp/forward.so" \
			"$here/forward.c" -ldl ||
		die "cannot build the benchmark programs"
}

# prefix VARIANT: set pre[] to the command prefix that runs a program as
# VARIANT (see the list in the README); profiles go to $tmp/out.
prefix() {
	local o=$tmp/out
	# a missing library would only make ld.so warn: the base again
	case $1 in
	je* | palloc_je) [ -f "$jemalloc" ] || die "no $jemalloc" ;;
	tc*) [ -f "$tcmalloc" ] || die "no $tcmalloc" ;;
	esac
	case $1 in
	base) pre=() ;;
	forward) pre=(env "LD_PRELOAD=$tmp/forward.so") ;;
	palloc | palloc[01] | before | before[01])
		# before*: the earlier build of table versus
		local lib=$agent
		[ "${1#before}" != "$1" ] && lib=$before
		pre=(env "LD_PRELOAD=$lib" "PALLOC_OUTPUT=$o/palloc.%p.pb.gz")
		case $1 in
		*0) pre+=(PALLOC_SAMPLE_RATE=0) ;;
		*1) pre+=(PALLOC_SAMPLE_RATE=1) ;;
		esac
		;;
	heaptrack) pre=(heaptrack -o "$o/heaptrack") ;;
	jemalloc) pre=(env "LD_PRELOAD=$jemalloc") ;;
	jeprof)
		pre=(env "LD_PRELOAD=$jemalloc"
			"MALLOC_CONF=prof:true,prof_accum:true,lg_prof_sample:19,prof_final:true,prof_prefix:$o/jeprof") ;;
	palloc_je)
		pre=(env "LD_PRELOAD=$agent:$jemalloc"
			"PALLOC_OUTPUT=$o/palloc.%p.pb.gz") ;;
	tcmalloc) pre=(env "LD_PRELOAD=$tcmalloc" TCMALLOC_SAMPLE_PARAMETER=0) ;;
	tcsample)
		pre=(env "LD_PRELOAD=$tcmalloc"
			TCMALLOC_SAMPLE_PARAMETER=524288) ;;
	tcheap) pre=(env "LD_PRELOAD=$tcmalloc" "HEAPPROFILE=$o/tcheap") ;;
	level[0-5]) pre=(env "LD_PRELOAD=$tmp/lookalike-${1#level}.so") ;;
	*) die "unknown variant $1" ;;
	esac
}

# with VARIANT CMD...: run CMD as VARIANT.
with() {
	local pre
	prefix "$1"
	shift
	"${pre[@]}" "$@"
}

# record NAME VARIANT REP: append "NAME VARIANT REP wall cpu maxrss_kib"
# to $tmp/results, from bash's time (wall, user + sys of the command and
# all its children, ms resolution) and time(1)'s %M (the largest maximum
# RSS of the processes it waited for, in KiB).
record() {
	awk -v n="$1" -v v="$2" -v r="$3" -v rss="$(cat "$tmp/time")" \
		'END { printf "%s %s %s %.3f %.3f %d\n", n, v, r, $1, $2 + $3,
		       rss }' "$tmp/btime" >>"$tmp/results"
}

# measure NAME VARIANT REP CMD...: run it as VARIANT and record it; the
# profiles it wrote are removed first.
measure() {
	local name=$1 v=$2 r=$3 pre TIMEFORMAT='%R %U %S'
	shift 3
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	prefix "$v"
	{ time /usr/bin/time -f '%M' -o "$tmp/time" "${pre[@]}" "$@" \
		>/dev/null 2>"$tmp/stderr" </dev/null; } 2>"$tmp/btime" ||
		{ cat "$tmp/stderr" >&2; die "$name $v failed"; }
	record "$name" "$v" "$r"
}

# measure_in NAME VARIANT REP FILE CMD...: as measure, stdin from FILE.
measure_in() {
	local name=$1 v=$2 r=$3 in=$4 pre TIMEFORMAT='%R %U %S'
	shift 4
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	prefix "$v"
	{ time /usr/bin/time -f '%M' -o "$tmp/time" "${pre[@]}" "$@" \
		>/dev/null 2>"$tmp/stderr" <"$in"; } 2>"$tmp/btime" ||
		{ cat "$tmp/stderr" >&2; die "$name $v failed"; }
	record "$name" "$v" "$r"
}

# order REP VARIANT...: the variants in order, reversed on odd REPs.
order() {
	local r=$1
	shift
	if [ $((r % 2)) -eq 0 ]; then
		echo "$@"
	else
		echo "$@" | tr ' ' '\n' | tac | tr '\n' ' '
	fi
}

# For the awk summaries: med(a, n), the median of a[1..n] (sorts a);
# keep(x), x as val[workload $1, variant $2, rep $3], the workloads in
# names[1..nn] in order of appearance, maxr the last rep; put(x), x into
# the cell a[1..n] with its least lo and greatest hi (set n = 0 and lo, hi
# first); cell(fmt), the cell printed as fmt's "median lo hi", or " - |"
# when empty.
awk_med='
	function med(a, n,   i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function keep(x) {
		val[$1, $2, $3] = x
		if (!($1 in seen)) { seen[$1] = 1; names[++nn] = $1 }
		if ($3 > maxr) maxr = $3
	}
	function put(x) {
		a[++n] = x
		if (x < lo) lo = x
		if (x > hi) hi = x
	}
	function cell(fmt) {
		if (n)
			printf fmt, med(a, n), lo, hi
		else
			printf " - |"
	}'

# ratios FIELD BASE VARIANT...: one row per workload of $tmp/results:
# median (min-max) over reps of VARIANT's FIELD (4 wall, 5 cpu) divided by
# BASE's in the same rep. BASE "/N": FIELD (seconds) in ns per op for N
# operations instead.
ratios() {
	local field=$1 base=$2
	shift 2
	awk -v f="$field" -v base="$base" -v vars="$*" "$awk_med"'
	BEGIN { if (base ~ /^\//) ops = substr(base, 2) + 0 }
	{ keep($f) }
	END {
		nv = split(vars, v, " ")
		printf "| workload |"
		for (i = 1; i <= nv; i++) printf " %s |", v[i]
		printf "\n|---|"
		for (i = 1; i <= nv; i++) printf "---|"
		printf "\n"
		for (k = 1; k <= nn; k++) {
			w = names[k]
			printf "| %s |", w
			for (i = 1; i <= nv; i++) {
				n = 0; lo = 1e9; hi = 0
				for (r = 1; r <= maxr; r++) {
					if (ops && ((w, v[i], r) in val)) {
						x = val[w, v[i], r] * 1e9 / ops
					} else if (!((w, v[i], r) in val) ||
					    !((w, base, r) in val) ||
					    val[w, base, r] <= 0) {
						continue
					} else {
						x = val[w, v[i], r] / val[w, base, r]
					}
					put(x)
				}
				cell(ops ? " %.0f (%.0f-%.0f) |" : \
				    " %.3f (%.3f-%.3f) |")
			}
			printf "\n"
		}
	}' "$tmp/results"
}

# rssdiff BASE VARIANT...: per workload, median (min-max) of each
# VARIANT's maxrss minus BASE's in the same rep, in MiB.
rssdiff() {
	local base=$1
	shift
	awk -v base="$base" -v vars="$*" "$awk_med"'
	{ keep($6) }
	END {
		nv = split(vars, v, " ")
		printf "| workload | %s peak RSS MiB |", base
		for (i = 1; i <= nv; i++) printf " %s - %s MiB |", v[i], base
		printf "\n|---|---|"
		for (i = 1; i <= nv; i++) printf "---|"
		printf "\n"
		for (k = 1; k <= nn; k++) {
			w = names[k]; bn = 0
			for (r = 1; r <= maxr; r++)
				if ((w, base, r) in val)
					b[++bn] = val[w, base, r] / 1024
			printf "| %s | %.1f |", w, med(b, bn)
			for (i = 1; i <= nv; i++) {
				n = 0; lo = 1e9; hi = -1e9
				for (r = 1; r <= maxr; r++) {
					if (!((w, v[i], r) in val) ||
					    !((w, base, r) in val))
						continue
					x = (val[w, v[i], r] - val[w, base, r]) / 1024
					put(x)
				}
				cell(" %+.1f (%+.1f..%+.1f) |")
			}
			printf "\n"
		}
	}' "$tmp/results"
}

# ---- table 1: hot path ----

table_hot() {
	local r v th out
	local reps=${reps:-5}

	echo "## Table 1: malloc(32)+free, ns per pair ($reps paired runs)"
	echo
	: >"$tmp/hot"
	for r in $(seq 1 "$reps"); do
		for th in 1 2; do
			for v in $(order "$r" base forward palloc); do
				mkdir -p "$tmp/out"
				out=$(with "$v" "$tmp/hotpath" 10 "$th") ||
					die "hotpath $v failed"
				echo "$th $v $r $out" >>"$tmp/hot"
			done
		done
	done
	awk "$awk_med"'
	function stat(th, v, d,   r, n, x, lo, hi, a) {
		n = 0; lo = 1e9; hi = -1e9
		for (r = 1; r <= maxr; r++) {
			if (!((th, v, r) in ns)) continue
			x = ns[th, v, r] - (d ? ns[th, "base", r] : 0)
			a[++n] = x
			if (x < lo) lo = x
			if (x > hi) hi = x
		}
		return sprintf("%.2f (%.2f..%.2f)", med(a, n), lo, hi)
	}
	{ ns[$1, $2, $3] = $4; if ($3 > maxr) maxr = $3 }
	END {
		print "| threads | no interposer ns | forwarding ns | palloc ns | forwarding - none | palloc - none |"
		print "|---|---|---|---|---|---|"
		for (th = 1; th <= 2; th++)
			printf "| %d | %s | %s | %s | %s | %s |\n", th,
				stat(th, "base", 0), stat(th, "forward", 0),
				stat(th, "palloc", 0), stat(th, "forward", 1),
				stat(th, "palloc", 1)
	}' "$tmp/hot"
	echo
	echo "Callgrind, instructions per pair (Ir of 1 million pairs minus Ir"
	echo "of 0 pairs, divided by 10^6; deterministic):"
	echo
	echo "| threads | no interposer | forwarding | palloc | palloc - none |"
	echo "|---|---|---|---|---|"
	for th in 1 2; do
		local ir=()
		for v in base forward palloc; do
			local i0 i1
			for n in 0 1; do
				mkdir -p "$tmp/out"
				with "$v" valgrind --tool=callgrind \
					--callgrind-out-file="$tmp/cg.$v.$n.$th" \
					"$tmp/hotpath" "$n" "$th" \
					>/dev/null 2>&1 ||
					die "callgrind $v failed"
			done
			i0=$(awk '/^(summary|totals):/ { print $2; exit }' \
				"$tmp/cg.$v.0.$th")
			i1=$(awk '/^(summary|totals):/ { print $2; exit }' \
				"$tmp/cg.$v.1.$th")
			ir+=("$(awk -v a="$i0" -v b="$i1" -v t="$th" \
				'BEGIN { printf "%.1f", (b - a) / 1e6 / t }')")
		done
		echo "| $th | ${ir[0]} | ${ir[1]} | ${ir[2]} |" \
			"$(awk -v a="${ir[0]}" -v b="${ir[2]}" \
				'BEGIN { printf "%+.1f", b - a }') |"
	done
	echo
	echo "Per function, palloc, 1 thread, 1 million pairs (callgrind_annotate):"
	echo
	echo '```'
	callgrind_annotate "$tmp/cg.palloc.1.1" 2>/dev/null |
		sed -n '/file:function/,$p' | sed -n '3,10p'
	echo '```'
	echo
}

# ---- table 2: default rate ----

cat_python() {
	cat <<'EOF'
for i in range(2):
    l = [str(j) * 3 for j in range(200000)]
    d = {s: [s] for s in l}
    t = sorted(d.items(), key=lambda kv: kv[0][::-1])
    del l, d, t
EOF
}

cat_sqlite() {
	cat <<'EOF'
CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v INTEGER, pad TEXT);
CREATE INDEX t_k ON t(k);
CREATE INDEX t_v ON t(v);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300000)
INSERT INTO t(k, v, pad) SELECT hex(randomblob(12)), abs(random()) % 100000,
       printf('%.*c', 40 + i % 60, 'x') FROM c;
SELECT count(*), sum(length(pad)) FROM t WHERE v < 50000;
EOF
}

# redis_one VARIANT REP: one redis-server under VARIANT, one
# redis-benchmark (SET and GET, 50000 each, 50 clients) against it; appends
# "redis_set VARIANT REP rps 0 hwm_kib" and the same for GET to
# $tmp/redis.
redis_one() {
	local v=$1 r=$2 pid hwm
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	with "$v" redis-server --port "$port" --bind 127.0.0.1 --save '' \
		--appendonly no --dir "$tmp" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 1 100); do
		redis-cli -p "$port" ping >/dev/null 2>&1 && break
		sleep 0.05
	done
	redis-benchmark -p "$port" -n 50000 -t set,get -q --csv \
		>"$tmp/rb.csv" 2>/dev/null || die "redis-benchmark failed"
	# $pid is the subshell of "with"; the server is its child.
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$(redis-cli -p "$port" \
		info server | tr -d '\r' | awk -F: '$1 == "process_id" {
		print $2 }')/status")
	redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
	wait "$pid"
	awk -F, -v v="$v" -v r="$r" -v h="$hwm" '
		{ gsub(/"/, "") }
		$1 == "SET" { printf "redis_set %s %s %s 0 %s\n", v, r, $2, h }
		$1 == "GET" { printf "redis_get %s %s %s 0 %s\n", v, r, $2, h }
	' "$tmp/rb.csv" >>"$tmp/redis"
}

# workload NAME VARIANT REP: run workload NAME (sizes of table 2) once
# as VARIANT and record it.
workload() {
	case $1 in
	churn_1t) measure "$@" "$tmp/work" churn 30 1 ;;
	churn_2t) measure "$@" "$tmp/work" churn 15 2 ;;
	growth_512MiB) measure "$@" "$tmp/work" growth 512 ;;
	deep_100) measure "$@" "$tmp/work" deep 40 100 ;;
	deep_100x1) measure "$@" "$tmp/work" deep 10 100 1 ;;
	python3) measure "$@" /usr/bin/python3 "$tmp/py.py" ;;
	sqlite3) measure_in "$@" "$tmp/sq.sql" /usr/bin/sqlite3 :memory: ;;
	redis) redis_one "$2" "$3" ;;
	esac
}

# default_peers WORKLOAD: the peers of $PALLOC_BENCH_PEERS that table 2
# runs on WORKLOAD (heaptrack, which records every allocation, only on
# python3, sqlite3 and redis: the churn loops at 3 M pairs are in table 6).
default_peers() {
	local p
	for p in ${PALLOC_BENCH_PEERS:-}; do
		case $p:$1 in
		heaptrack:churn* | heaptrack:growth* | heaptrack:deep*) ;;
		*) printf '%s ' "$p" ;;
		esac
	done
}

table_default() {
	local r v w
	local reps=${reps:-5}
	local workloads=${PALLOC_BENCH_WORKLOADS:-churn_1t churn_2t \
		growth_512MiB deep_100 deep_100x1 python3 sqlite3 redis}

	local peers=${PALLOC_BENCH_PEERS:-}

	cat_python >"$tmp/py.py"
	cat_sqlite >"$tmp/sq.sql"
	: >"$tmp/results"
	: >"$tmp/redis"
	for r in $(seq 1 "$reps"); do
		for w in $workloads; do
			for v in $(order "$r" base forward palloc0 palloc \
				$(default_peers "$w")); do
				workload "$w" "$v" "$r"
			done
		done
	done
	echo "## Table 2: default rate (512 KiB), palloc / no palloc ($reps paired runs)"
	echo
	echo "Wall time ratio, median (min-max); forward = the bare forwarding"
	echo "interposer (the floor of any LD_PRELOAD profiler); palloc0 ="
	echo "palloc with sampling off (PALLOC_SAMPLE_RATE=0: hot path and"
	echo "counters only); palloc = the default rate:"
	echo
	ratios 4 base forward palloc0 palloc $peers
	echo
	echo "CPU time (user+sys) ratio, median (min-max):"
	echo
	ratios 5 base forward palloc0 palloc $peers
	echo
	default_own 5
	echo "redis-benchmark throughput ratio (requests/s, palloc / none):"
	echo
	mv "$tmp/results" "$tmp/results.work"
	cp "$tmp/redis" "$tmp/results"
	ratios 4 base forward palloc0 palloc $peers
	echo
	default_own 4
	echo "Peak RSS (time -v maxrss; redis: VmHWM of the server):"
	echo
	cat "$tmp/results.work" >>"$tmp/results"
	rssdiff base forward palloc0 palloc $peers
	echo
	[ -z "${PALLOC_BENCH_WORKLOADS:-}" ] && default_callgrind
}

# default_own FIELD: with jemalloc's or tcmalloc's profiler among
# $PALLOC_BENCH_PEERS, its ratio to its own allocator (FIELD of ratios).
default_own() {
	local p=" $peers "
	if [ "${p#* jemalloc }" != "$p" ] && [ "${p#* jeprof }" != "$p" ]; then
		echo "jemalloc's profiler over plain jemalloc:"
		echo
		ratios "$1" jemalloc jeprof
		echo
	fi
	if [ "${p#* tcmalloc }" != "$p" ] && [ "${p#* tcsample }" != "$p" ]; then
		echo "tcmalloc's sampling over plain tcmalloc:"
		echo
		ratios "$1" tcmalloc tcsample
		echo
	fi
}

# ir VARIANT [<FILE] CMD...: the instructions callgrind counts for CMD run
# as VARIANT (the whole process: start-up, agent set-up and exit dump
# included).
ir() {
	local pre
	prefix "$1"
	shift
	rm -rf "$tmp/out"
	mkdir -p "$tmp/out"
	"${pre[@]}" valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.ir" \
		"$@" >/dev/null 2>&1 || die "callgrind $* failed"
	awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg.ir"
}

# default_callgrind: table 2's workloads, smaller, as instruction ratios.
default_callgrind() {
	local w v base x
	cat_python | sed 's/range(2)/range(1)/; s/200000/50000/' >"$tmp/py-s.py"
	cat_sqlite | sed 's/i < 300000/i < 30000/' >"$tmp/sq-s.sql"
	echo "Callgrind instructions, ratio to base (deterministic; smaller"
	echo "inputs: churn 2 M pairs, deep 2 M pairs, python3 50,000 strings"
	echo "once, sqlite3 30,000 rows; whole process):"
	echo
	echo "| workload | base Ir | forward | palloc0 | palloc |"
	echo "|---|---|---|---|---|"
	for w in churn_1t deep_100 deep_100x1 python3 sqlite3; do
		printf "| %s |" "$w"
		base=
		for v in base forward palloc0 palloc; do
			case $w in
			churn_1t) x=$(ir "$v" "$tmp/work" churn 2 1) ;;
			deep_100) x=$(ir "$v" "$tmp/work" deep 2 100) ;;
			deep_100x1) x=$(ir "$v" "$tmp/work" deep 0.5 100 1) ;;
			python3) x=$(ir "$v" /usr/bin/python3 "$tmp/py-s.py") ;;
			sqlite3) x=$(ir "$v" /usr/bin/sqlite3 -init \
				"$tmp/sq-s.sql" :memory: .quit) ;;
			esac
			if [ -z "$base" ]; then
				base=$x
				printf " %s |" "$x"
			else
				awk -v a="$base" -v b="$x" \
					'BEGIN { printf " %.3f |", b / a }'
			fi
		done
		echo
	done
	echo
}

# ---- table 3: every allocation ----

# churn_pairs M1 M2 VARIANT...: $reps paired runs of the churn loop as
# each VARIANT, M1 million pairs in 1 thread (churn_1t) and M2 million in
# each of 2 (churn_2t), into a fresh $tmp/results.
churn_pairs() {
	local m1=$1 m2=$2 r v
	shift 2
	: >"$tmp/results"
	for r in $(seq 1 "$reps"); do
		for v in $(order "$r" "$@"); do
			measure churn_1t "$v" "$r" "$tmp/work" churn "$m1" 1
		done
		for v in $(order "$r" "$@"); do
			measure churn_2t "$v" "$r" "$tmp/work" churn "$m2" 2
		done
	done
}

table_every() {
	local reps=${reps:-3}

	churn_pairs 10 5 base palloc1 heaptrack
	echo "## Table 3: every allocation (rate 1) ($reps paired runs)"
	echo
	echo "Wall time ratio to no profiler, median (min-max):"
	echo
	ratios 4 base palloc1 heaptrack
	echo
	echo "palloc's slowdown over heaptrack's (wall; target <= 0.333):"
	echo
	ratios 4 heaptrack palloc1
	echo
	echo "CPU time (user+sys, of all processes: heaptrack's"
	echo "heaptrack_interpret included) ratio to no profiler:"
	echo
	ratios 5 base palloc1 heaptrack
	echo
	every_depth
}

# every_depth: a 100-deep recursion at rate 1 and max depth 128: how many
# of its stacks reach main, and how deep they are.
every_depth() {
	local o=$tmp/out
	rm -rf "$o"
	mkdir -p "$o"
	"$run" -q -r 1 --max-depth 128 -o "$o/deep.pb.gz" \
		"$tmp/work" deep 0.02 100 >/dev/null ||
		die "palloc-run deep failed"
	go tool pprof -sample_index=alloc_space -traces \
		"$o/deep.pb.gz" 2>/dev/null >"$tmp/traces-palloc"
	# gperftools: its legacy heap file, which go tool pprof reads too
	with tcheap "$tmp/work" deep 0.02 100 >/dev/null 2>&1 ||
		die "tcmalloc HEAPPROFILE deep failed"
	go tool pprof -sample_index=alloc_space -traces "$tmp/work" \
		"$o"/tcheap.*.heap 2>/dev/null >"$tmp/traces-tcheap"
	# heaptrack: folded stacks (root first, "f (file);g (file) N") turned
	# into the same layout as pprof's -traces
	heaptrack -o "$o/ht" "$tmp/work" deep 0.02 100 >/dev/null 2>&1 &&
		heaptrack_print -f "$o"/ht.*zst --print-flamegraph \
			"$tmp/ht.folded" >/dev/null 2>&1 ||
		die "heaptrack deep failed"
	awk '{
		sub(/ [0-9]+$/, "")
		n = split($0, f, ";")
		print "-----------+-------"
		for (i = n; i >= 1; i--) {
			sub(/ \(.*$/, "", f[i])
			print "  " f[i]
		}
	}' "$tmp/ht.folded" >"$tmp/traces-heaptrack"
	echo "100-deep recursion (work deep 0.02 100: 20,000 allocations, every"
	echo "one recorded): palloc-run -r 1 --max-depth 128, heaptrack, and"
	echo "tcmalloc's HEAPPROFILE; the stacks that pass through leaf(), read"
	echo "with go tool pprof -traces (heaptrack: heaptrack_print's folded"
	echo "stacks):"
	echo
	echo "| profiler | stacks through leaf | reaching main | share | frames min-max |"
	echo "|---|---|---|---|---|"
	for v in palloc heaptrack tcheap; do
		awk -v name="$v" '
		# Traces are separated by lines of dashes; the header before
		# the first one and the "thread:" label lines are not frames;
		# the last field of a frame line is the function.
		function done_trace() {
			if (nf && hasleaf) {
				n++
				if (hasmain) m++
				if (nf > mx) mx = nf
				if (!mn || nf < mn) mn = nf
			}
			nf = 0; hasmain = 0; hasleaf = 0
		}
		/^-+\+-+$/ { done_trace(); s = 1; next }
		s && NF && $1 != "thread:" {
			nf++
			if ($NF == "main") hasmain = 1
			if ($NF == "leaf") hasleaf = 1
		}
		END {
			done_trace()
			printf "| %s | %d | %d | %.1f %% | %d-%d |\n", name, n,
				m, n ? 100 * m / n : 0, mn, mx
		}' "$tmp/traces-$v"
	done
	echo
}

table_depth() {
	echo "## Table 3b: stacks of a 100-deep recursion"
	echo
	every_depth
}

# ---- table 4: bounded memory and output ----

table_bounded() {
	local s v w size stacks secs=${PALLOC_BOUNDED_SECONDS:-10 60}
	local bits=18

	for s in $secs; do
		case $s in
		'' | *[!0-9]* | 0) die "PALLOC_BOUNDED_SECONDS: '$s' is not a positive number of seconds" ;;
		esac
	done
	echo "## Table 4: bounded memory and output, $(echo $secs |
		sed 's/ /, /g') s (1 run each)"
	echo
	echo "churn: the churn loop, one allocating stack; spread: the same"
	echo "loop with each malloc at the end of one of 2^$bits = $((1 << bits))"
	echo "call paths (work spread $bits), past the stack table's cap of 65536."
	echo "Dropped: samples whose new stack did not fit (count, and about how"
	echo "many bytes they stand for), from the profile's comment."
	echo
	echo "| workload | seconds | profile bytes | stacks in profile | sampled allocations | dropped | dropped bytes | peak RSS base MiB | peak RSS palloc MiB | palloc - base MiB |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for w in churn spread; do
		for s in $secs; do
			: >"$tmp/results"
			for v in base palloc; do
				rm -rf "$tmp/keep"
				mkdir -p "$tmp/keep"
				set -- churn 0 1 "$s"
				[ "$w" = spread ] && set -- spread "$bits" "$s"
				/usr/bin/time -f '%U %S %M' -o "$tmp/time" env \
					LD_PRELOAD="$([ "$v" = palloc ] && echo "$agent")" \
					PALLOC_OUTPUT="$tmp/keep/p.pb.gz" \
					"$tmp/work" "$@" >/dev/null ||
					die "$w $s s failed"
				awk -v v="$v" '{ print "w", v, 1, 0, $1 + $2, $3 }' \
					"$tmp/time" >>"$tmp/results"
			done
			size=$(stat -c %s "$tmp/keep/p.pb.gz")
			stacks=$(go tool pprof -raw "$tmp/keep/p.pb.gz" 2>/dev/null |
				awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
				     s && /^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ { n++ }
				     END { print n + 0 }')
			go tool pprof -comments "$tmp/keep/p.pb.gz" 2>/dev/null \
				>"$tmp/comments"
			# "sampled allocations: N; dropped samples: M, about B
			# bytes allocated (...)"
			awk -v w="$w" -v s="$s" -v size="$size" -v stacks="$stacks" \
				-v c="$(grep -m1 '^sampled allocations' "$tmp/comments")" '
				{ rss[$2] = $6 }
				END {
					n = split(c, f, /[:;,] */)
					sampled = f[2]; dropped = f[4]; bytes = f[5]
					sub(/^about /, "", bytes)
					sub(/[^0-9].*/, "", bytes)
					if (n < 5) sampled = dropped = bytes = "?"
					printf "| %s | %d | %d | %d | %s | %s | %s | %.1f | %.1f | %+.1f |\n",
						w, s, size, stacks, sampled, dropped,
						bytes, rss["base"] / 1024,
						rss["palloc"] / 1024,
						(rss["palloc"] - rss["base"]) / 1024
				}' "$tmp/results"
		done
	done
	echo
}

# ---- table 6: peers ----

table_peers() {
	local r v
	local reps=${reps:-3}
	local fast="palloc jemalloc jeprof palloc_je tcmalloc tcsample"
	local slow="palloc heaptrack tcheap"

	: >"$tmp/results"
	for r in $(seq 1 "$reps"); do
		# name, variants, millions of pairs per thread, threads
		while read -r w vs m th; do
			for v in $(order "$r" base ${!vs}); do
				measure "$w" "$v" "$r" "$tmp/work" churn "$m" "$th"
			done
		done <<-EOF
			churn_1t fast 20 1
			churn_2t fast 10 2
			churn_1t_3M slow 3 1
			churn_2t_3M slow 1.5 2
		EOF
	done
	echo "## Table 6: peers on the churn loop ($reps paired runs)"
	echo
	echo "churn_1t: 20 million pairs, churn_2t: 2 threads x 10 million;"
	echo "the slow profilers (heaptrack, tcmalloc HEAPPROFILE) on 3 million"
	echo "(churn_*_3M), each against a baseline of the same size."
	echo
	# field of $tmp/results (5 CPU, 4 wall time): title
	while read -r f title; do
		echo "$title"
		echo
		ratios "$f" base $fast | grep -v '_3M |'
		echo
		ratios "$f" base $slow | grep -E '_3M \||workload|---'
		echo
	done <<-EOF
		5 CPU time (user+sys) ratio to glibc without a profiler, median (min-max):
		4 Wall time ratio to glibc without a profiler:
	EOF
	echo "Each profiler against its own allocator (CPU time): jemalloc"
	echo "prof / plain jemalloc, palloc over jemalloc / plain jemalloc,"
	echo "tcmalloc sampling / plain tcmalloc:"
	echo
	ratios 5 jemalloc jeprof palloc_je | grep -v '_3M |'
	echo
	ratios 5 tcmalloc tcsample | grep -v '_3M |'
	echo
	echo "Peak RSS differences to glibc without a profiler (MiB; heaptrack:"
	echo "the largest process, i.e. heaptrack_interpret):"
	echo
	rssdiff base $fast | grep -v '_3M |'
	echo
	rssdiff base heaptrack tcheap | grep -E '_3M \||workload|---'
	echo
}

# ---- parts: the price of each piece of the hot path ----

table_parts() {
	local r v l
	local reps=${reps:-5}
	local vars="forward level0 level1 level2 level3 level4 level5 palloc0"

	for l in 0 1 2 3 4 5; do
		cc -O2 -Wall -shared -fPIC -DLEVEL=$l -o "$tmp/lookalike-$l.so" \
			"$here/lookalike.c" -ldl || die "cannot build lookalike.c"
	done
	: >"$tmp/results"
	for r in $(seq 1 "$reps"); do
		for v in $(order "$r" base $vars); do
			measure churn_1t "$v" "$r" "$tmp/work" churn 30 1
		done
	done
	echo "## The hot path piece by piece ($reps paired runs, work churn 30 1)"
	echo
	echo "CPU time ratio to no interposer, median (min-max). level0:"
	echo "forwarding with palloc's free checks; level1: + malloc guard and"
	echo "countdown; level2: + alloc_count, alloc_bytes; level3: + free guard"
	echo "and free_count; level4: + the 256 KiB filter load; level5: level 4"
	echo "with an 8 KiB 1-bit filter; palloc0: libpalloc.so, sampling off."
	echo
	ratios 5 base $vars
	echo
}

# ---- versus: this agent against an earlier build ----

# pair_ir VARIANT MILLIONS: callgrind instructions per pair of
# work churn MILLIONS 1, less those of churn 0 1 (start-up and exit).
pair_ir() {
	local a b
	a=$(ir "$1" "$tmp/work" churn 0 1)
	b=$(ir "$1" "$tmp/work" churn "$2" 1)
	awk -v a="$a" -v b="$b" -v m="$2" \
		'BEGIN { printf "%.1f", (b - a) / (m * 1e6) }'
}

# versus_ir LABEL MILLIONS BASE BEFORE AFTER: one row of the versus
# table's instructions per pair.
versus_ir() {
	local b x y
	b=$(pair_ir "$3" "$2")
	x=$(pair_ir "$4" "$2")
	y=$(pair_ir "$5" "$2")
	echo "| $1 | $b | $x | $y | $(awk -v x="$x" -v y="$y" \
		'BEGIN { printf "%+.1f", y - x }') |"
}

table_versus() {
	local reps=${reps:-5}

	[ -f "${before:-}" ] || die "versus: set PALLOC_BEFORE to a libpalloc.so"
	echo "## This agent against $before ($reps paired runs)"
	echo
	echo "Callgrind, instructions per malloc/free pair of work churn"
	echo "(2 M pairs; rate 1: 0.2 M), less those of 0 pairs:"
	echo
	echo "| rate | no agent | before | after | after - before |"
	echo "|---|---|---|---|---|"
	versus_ir "0 (off)" 2 base before0 palloc0
	versus_ir "512 KiB" 2 base before palloc
	versus_ir 1 0.2 base before1 palloc1
	echo
	churn_pairs 30 15 base before palloc
	echo "CPU time (user+sys) ratio to no agent, default rate,"
	echo "work churn 30 1 and 15 2 (target <= 1.10):"
	echo
	ratios 5 base before palloc
	echo
	churn_pairs 10 5 base before1 palloc1 heaptrack
	echo "CPU time ratio to no profiler at rate 1, work churn 10 1 and 5 2"
	echo "(heaptrack: its interpreter process included):"
	echo
	ratios 5 base before1 palloc1 heaptrack
	echo
	echo "Slowdown over heaptrack's (CPU; target <= 0.333):"
	echo
	ratios 5 heaptrack before1 palloc1
	echo
}

# ---- rate 1 against threads ----

table_threads() {
	local reps=${reps:-3} total=${PALLOC_THREADS_MILLIONS:-4} r t m v
	local vars="palloc1 heaptrack"

	[ -f "${before:-}" ] && vars="before1 $vars"
	: >"$tmp/results"
	for r in $(seq 1 "$reps"); do
		for t in 1 2 4 8; do
			m=$(awk -v a="$total" -v t="$t" 'BEGIN { print a / t }')
			for v in $(order "$r" base $vars); do
				measure "churn_${t}t" "$v" "$r" \
					"$tmp/work" churn "$m" "$t"
			done
		done
	done
	echo "## Rate 1 against threads: $total M churn pairs in all ($reps paired runs)"
	echo
	echo "before1 = ${before:-(none)} at rate 1; palloc1 = $agent"
	echo "at rate 1; heaptrack: its interpreter process included."
	echo
	echo "CPU time (user+sys) ratio to no profiler, median (min-max):"
	echo
	ratios 5 base $vars
	echo
	echo "Wall time ratio to no profiler:"
	echo
	ratios 4 base $vars
	echo
	echo "Slowdown over heaptrack's, CPU (target <= 0.333):"
	echo
	ratios 5 heaptrack ${vars% heaptrack}
	echo
	echo "Slowdown over heaptrack's, wall (target <= 0.333):"
	echo
	ratios 4 heaptrack ${vars% heaptrack}
	echo
	echo "CPU ns per pair (all threads' CPU time / pairs):"
	echo
	ratios 5 "/$(awk -v a="$total" 'BEGIN { printf "%d", a * 1e6 }')" \
		base $vars
	echo
}

case $table in
hot | default | every | bounded | peers | parts | versus | depth | threads) ;;
all) ;;
*)
	sed -n '3,36p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
build_programs
# The machine is shared: as root, run ahead of the neighbours' builds.
[ "$(id -u)" = 0 ] && renice -n -10 $$ >/dev/null 2>&1
echo "<!-- $(date -u '+%Y-%m-%d %H:%M UTC'), agent $agent of" \
	"$(date -u -r "$agent" '+%H:%M UTC'), source at" \
	"$(git -C "$src" log -1 --format=%h 2>/dev/null), load" \
	"$(cut -d' ' -f1-3 /proc/loadavg) -->"
echo
if [ "$table" = all ]; then
	for t in hot default every bounded peers; do
		"table_$t"
	done
else
	"table_$table"
fi
