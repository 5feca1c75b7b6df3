#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run --timeline: a program keeping 1 MiB more every
# 100 ms for 4 s at rate 1 gives >= 30 samples in time order whose heap
# rises to what it holds at its end and whose RSS rises by >= 30 MiB, with
# its profile and exit events; a program that forks and execs gives the
# fork and exec events; every line is valid JSON with every key; a
# symbolic link, a FIFO and a directory are refused before the program runs;
# past palloc-run's file size limit, one warning, the file ends with a
# whole line and the program runs on.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need_agent
need palloc-run timeline-grow forker
. "$top_srcdir/t/lib-timeline.sh"
plan 25
MIB=1048576

timeout_run 300 palloc-run -q -r 1 -i 1 -o 'g.%p.%n.pb.gz' \
	--timeline g.ndjson timeline-grow >g.out 2>g.err
rc=$?
check "the program's status passed through: 0" [ $rc -eq 0 ]
check "every line valid JSON with every key" tl_valid g.ndjson
root=$(tl_events g.ndjson exec | jq -r .pid | head -n 1)
held=$(sed -n 's/^held //p' g.out)
tl_samples g.ndjson "${root:-0}" >s
n=$(wc -l <s)
diag "pid ${root:-none}, holds ${held:-?} bytes at its end, $n samples"
check ">= 30 samples of the program ($n)" [ "$n" -ge 30 ]
check "samples in time order" jqe -s '[.[].time_ns] | . == sort' s
check "heap_inuse_bytes never falls, rises by >= 30 MiB" jqe -s \
	"[.[].heap_inuse_bytes] | . as \$h | all(range(1; length);
	\$h[.] >= \$h[. - 1]) and (\$h[-1] - \$h[0] >= 30 * $MIB)" s
last=$(jq -s '.[-1].heap_inuse_bytes' s)
diag "last heap_inuse_bytes $last"
check "the last heap_inuse_bytes within 5 % of what it holds" \
	awk -v l="${last:-0}" -v h="${held:-0}" \
	'BEGIN { d = l - h; if (d < 0) d = -d; exit !(h > 0 && d <= h / 20) }'
check "rss_bytes rises by >= 30 MiB" jqe -s \
	"[.[].rss_bytes | select(. != null)] | .[-1] - .[0] >= 30 * $MIB" s
check "anon_bytes and cgroup_usage_bytes read" jqe -s \
	'all(.[]; .anon_bytes != null and .cgroup_usage_bytes != null)' s
check "interval profile events, with their files" jqe -s \
	"[.[] | select(.event == \"profile\" and .pid == ${root:-0} and
	.kind == \"interval\")] | length >= 2" g.ndjson
check "the exit profile event names the profile written" sh -c \
	"tl_f=\$(jq -r 'select(.event == \"profile\" and .kind == \"exit\" and
	.pid == ${root:-0}) | .path' g.ndjson) && [ -n \"\$tl_f\" ] &&
	test -s \"\$tl_f\""
check "the exit event: status 0" jqe -s \
	"[.[] | select(.event == \"exit\" and .pid == ${root:-0})] |
	length == 1 and .[0].status == 0 and .[0].signal == null" g.ndjson
check "no fork event for the program itself" jqe -s \
	'[.[] | select(.event == "fork")] | length == 0' g.ndjson

# forker: two fork children, then a child that execs itself.
timeout_run 120 palloc-run -q -o 'f.%p.%n.pb.gz' --timeline f.ndjson \
	forker >f.out 2>f.err
check "forker: every line valid" tl_valid f.ndjson
froot=$(tl_events f.ndjson exec | jq -r .pid | head -n 1)
check "forker: three fork events, from the program" jqe -s \
	"[.[] | select(.event == \"fork\")] | length == 3 and
	all(.[]; .parent_pid == ${froot:-0})" f.ndjson
check "forker: the exec of a fork child, after its fork" jqe -s \
	"[.[] | select(.event == \"fork\")] as \$f |
	[.[] | select(.event == \"exec\" and .pid != ${froot:-0})] |
	length == 1 and (.[0] as \$e | any(\$f[]; .pid == \$e.pid and
	.time_ns <= \$e.time_ns))" f.ndjson
check "forker: an exit event (status 0) for each of its four processes" \
	jqe -s '[.[] | select(.event == "exit")] | length == 4 and
	all(.[]; .status == 0) and ([.[].pid] | unique | length == 4)' \
	f.ndjson
grep -v '"sample"' f.ndjson | sed 's/^/# /'

# The example kept for palloc-report's tests follows the schema too.
check "t/data/timeline-example.ndjson: every line valid" \
	tl_valid "$top_srcdir/t/data/timeline-example.ndjson"

# Bad paths: refused (125, one line) before the program runs.
refused() { # NAME PATH REASON
	timeout_run 30 palloc-run --timeline "$2" timeline-grow 1 \
		>"$1.out" 2>"$1.err"
	_rc=$?
	if [ $_rc -eq 125 ] && ! [ -s "$1.out" ] &&
		one_line "$1.err" "palloc-run: cannot write timeline '$2': $3"; then
		return 0
	fi
	diag "status $_rc"
	return 1
}
: >target
ln -s target link
check "a symbolic link refused" refused link link "a symbolic link"
check "... and its target untouched" [ ! -s target ]
mkfifo fifo
check "a FIFO refused, without blocking" refused fifo fifo \
	"not a regular file"
mkdir dir
check "a directory refused" refused dir dir "Is a directory"
expect_fail 125 palloc-run --timeline-period 5 --timeline x true \
	2>period.err
check "--timeline-period below 10 ms refused" grep -q \
	"invalid timeline period '5': use 10 to 3600000 milliseconds" \
	period.err

# The file size limit (RLIMIT_FSIZE) of palloc-run alone, set once the
# timeline has begun: EFBIG, no SIGXFSZ, no torn line.
if command -v prlimit >/dev/null 2>&1; then
	palloc-run -o /dev/null --timeline z.ndjson timeline-grow 20 \
		>z.out 2>z.err &
	zp=$!
	retry 300 0.1 test -s z.ndjson
	prlimit --pid $zp --fsize=$(($(wc -c <z.ndjson) + 1000))
	wait $zp
	rc=$?
	check "past the size limit: the program's status, 0" [ $rc -eq 0 ]
	check "... one warning" one_line z.err \
		"palloc-run: warning: timeline 'z.ndjson' not written further: File too large"
	check "... the file ends with a whole line" tl_valid z.ndjson
else
	skip "prlimit not installed"
	skip "prlimit not installed"
	skip "prlimit not installed"
fi
