#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-report's command line and its reading of a timeline (outside
# input: bounded, one line of error and exit 2), the profiles found from
# the profile events or named, several processes largest first, and the
# page's size: a 10-minute timeline of one process at 100 ms <= 2 MB.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-report.sh"
need palloc-report jq diff-mkprof
plan 16

S='"type":"sample"'
N='"heap_alloc_bytes":null,"allocator_resident_bytes":null,"allocator_free_bytes":null,"anon_bytes":null,"file_bytes":null,"shmem_bytes":null,"swap_bytes":null,"cgroup_usage_bytes":null,"cgroup_limit_bytes":null'
line() { # PID TIME_MS HEAP RSS
	printf '{%s,"time_ns":%s000000,"pid":%s,"heap_inuse_bytes":%s,"rss_bytes":%s,%s}\n' \
		"$S" "$2" "$1" "$3" "$4" "$N"
}
diff-mkprof a.pb.gz <<'P' || exit 99
comment pid: 100
sample 1 4096 1 4096 ; 0x1000=grow_here@a.c:3 0x1100=main@a.c:9
P
diff-mkprof b.pb.gz <<'P' || exit 99
comment pid: 100
sample 3 12288 3 12288 ; 0x1000=grow_here@a.c:3 0x1100=main@a.c:9
P
mkdir -p d
{
	line 100 1000 4096 1000000
	line 200 1000 0 5000000
	echo '{"type":"event","time_ns":1500000000,"pid":100,"event":"profile","path":"../a.pb.gz","kind":"interval"}'
	line 100 2000 8192 2000000
	line 200 2000 0 6000000
	echo '{"type":"event","time_ns":2500000000,"pid":100,"event":"profile","path":"../b.pb.gz","kind":"exit"}'
	echo '{"type":"future","time_ns":2600000000,"pid":100}'
	echo '{"type":"event","time_ns":2700000000,"pid":100,"event":"exit","status":0}'
} >d/tl.ndjson

# 1-3: the usage contract
palloc-report --help >help.out 2>help.err && [ ! -s help.err ] &&
	grep -q '^ palloc-report \[options\] <timeline> \[<profile>...\]$' help.out &&
	ok "--help" || not_ok "--help"
expect_fail 2 palloc-report >u.out 2>u.err && [ ! -s u.out ] &&
	grep -q "^palloc-report: no timeline given$" u.err &&
	ok "no timeline: usage error, exit 2" || not_ok "no timeline: usage error, exit 2"
expect_fail 2 palloc-report d/none.ndjson >u.out 2>u.err && [ ! -s u.out ] &&
	[ "$(wc -l <u.err)" -eq 1 ] &&
	grep -q "^palloc-report: cannot read timeline 'd/none.ndjson': " u.err &&
	ok "a missing timeline: one line, exit 2" || not_ok "a missing timeline: one line, exit 2"

# 4-6: the profiles from the events (relative to the timeline), the
# default output name, the processes largest first
palloc-report d/tl.ndjson >o.out 2>o.err && [ ! -s o.out ] &&
	grep -qx "palloc-report: wrote 'd/tl.html'" o.err &&
	ok "default output: the timeline's name with .html" ||
	{ not_ok "default output: the timeline's name with .html"; diag "$(cat o.err)"; }
data_of d/tl.html >doc.json
jqe '.format == "palloc-report" and ([.processes[].pid] == [200, 100]) and
	(.profiles | length) == 2 and .profiles[0].kind == "interval" and
	.profiles[1].kind == "exit" and .profiles[1].pid == 100 and
	.profiles[1].samples[0][1] == 12288 and
	([.frames[][0]] | index("grow_here")) != null' doc.json &&
	ok "profiles found from the events; processes largest first" ||
	{ not_ok "profiles found from the events; processes largest first"; diag "$(head -c 600 doc.json)"; }
jqe '.processes[1].cols.heap_inuse_bytes == [4096, 4096] and
	.processes[1].t_ms == [0, 1000] and
	.processes[1].cols.anon_bytes == [null, null]' doc.json &&
	ok "columns delta-coded, nulls kept" || not_ok "columns delta-coded, nulls kept"

# 7-8: profiles named: placed by their event, or by their pid comment
palloc-report -o named.html d/tl.ndjson b.pb.gz 2>/dev/null &&
	data_of named.html >named.json &&
	jqe '(.profiles | length) == 1 and .profiles[0].kind == "exit" and
		.profiles[0].t_ms == 1500' named.json &&
	ok "a named profile placed by the event naming the same file" ||
	not_ok "a named profile placed by the event naming the same file"
cp a.pb.gz other.pb.gz
palloc-report -o - d/tl.ndjson other.pb.gz >stdout.html 2>so.err &&
	[ ! -s so.err ] && data_of stdout.html >o.json &&
	jqe '.profiles[0].kind == "named" and .profiles[0].pid == 100' o.json &&
	ok "-o -: standard output, no line on stderr; a profile placed by its pid" ||
	not_ok "-o -: standard output, no line on stderr; a profile placed by its pid"
expect_fail 2 palloc-report -o x.html d/tl.ndjson nothere.pb.gz 2>n.err &&
	[ ! -e x.html ] && [ "$(wc -l <n.err)" -eq 1 ] &&
	grep -q "nothere.pb.gz" n.err &&
	ok "a named profile that cannot be read: exit 2, no page" ||
	not_ok "a named profile that cannot be read: exit 2, no page"

# 10-14: hostile timelines, one line of error and exit 2
refused() { # DESC WHAT-THE-ERROR-SAYS
	expect_fail 2 palloc-report -o bad.html bad.ndjson >b.out 2>b.err &&
		[ ! -s b.out ] && [ ! -e bad.html ] &&
		[ "$(wc -l <b.err)" -eq 1 ] && grep -q "$2" b.err &&
		ok "$1" || { not_ok "$1"; diag "$(cat b.err)"; }
}
{ line 1 1 1 1; head -c 70000 /dev/zero | tr '\0' ' '; echo; } >bad.ndjson
refused "a line longer than 64 KiB" "bad timeline 'bad.ndjson': line 2: longer than 65536 bytes"
{ line 1 1 1 1; echo 'not json'; line 1 2 1 1; } >bad.ndjson
refused "a line that is not JSON" "line 2: not a JSON object"
{ echo '{"type":"sample","time_ns":"soon","pid":1}'; } >bad.ndjson
refused "time_ns not an integer" "line 1: no integer \"time_ns\" and \"pid\""
{ echo '[1,2]'; line 1 2 1 1; } >bad.ndjson
refused "a line that is not an object" "line 1: not a JSON object"
rm -f bad.ndjson
mkfifo bad.ndjson 2>/dev/null
[ -p bad.ndjson ] && refused "a FIFO is not read" "not a regular file" ||
	skip "mkfifo failed"
rm -f bad.ndjson

# 15: the writer killed mid-line: the partial last line is left out
{ line 1 1 1 1; printf '{"type":"sample","time_ns":2'; } >part.ndjson
palloc-report -o part.html part.ndjson 2>p.err && grep -q "warning: 'part.ndjson': its last line is incomplete" p.err &&
	data_of part.html | jq -e '.processes[0].t_ms | length == 1' >/dev/null &&
	ok "an incomplete last line: left out with a warning" ||
	{ not_ok "an incomplete last line: left out with a warning"; diag "$(cat p.err)"; }

# 16: size: 10 minutes at 100 ms, every key set, an interval profile every
# 10 s (the leaking example's when palloc-run and the agent are here)
profs="a.pb.gz b.pb.gz"
if [ -n "${PALLOC_AGENT:-}" ] && command -v leaker >/dev/null 2>&1 &&
	report_leaker_timeline run 4000000 3; then
	profs="run/p.1.pb.gz run/p.2.pb.gz run/p.3.pb.gz"
fi
# shellcheck disable=SC2086
$MAKE_TL long long.ndjson 600 100 $profs &&
	palloc-report -q -o long.html long.ndjson 2>/dev/null &&
	size=$(wc -c <long.html) && [ "$size" -le 2000000 ] &&
	[ "$(grep -c '"type":"sample"' long.ndjson)" -eq 6000 ] &&
	ok "10 minutes at 100 ms: $size bytes <= 2 MB ($(wc -c <long.ndjson) bytes of timeline)" ||
	not_ok "10 minutes at 100 ms: ${size:-?} bytes <= 2 MB"
done_testing
