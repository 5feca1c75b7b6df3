#!/bin/sh
# SPDX-License-Identifier: MIT
# Every command's main paths under valgrind's memcheck (HACKING.md
# "Tests"): no invalid access, no uninitialised use, no definite leak, and the
# exit status the path must have. The agent has its own test (t/3010).
. "$top_srcdir/t/lib.sh"
# A sanitized build leaves PALLOC_AGENT empty, and memcheck cannot run
# ASan binaries: need_agent skips both.
need_agent
need valgrind jq gzip

F=$top_srcdir/t/fixtures

# vg WANT DESC CMD...: one test; CMD under memcheck must exit WANT (99 is
# memcheck's own verdict). stdout goes to out.N, the program's stderr to
# err.N, memcheck's report to vg.N (shown on failure).
_vg=0
vg() {
	_want=$1 _desc=$2
	shift 2
	_vg=$((_vg + 1))
	valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite --track-fds=no \
		--trace-children=no --log-file="vg.$_vg" \
		"$@" >"out.$_vg" 2>"err.$_vg"
	_rc=$?
	if [ "$_rc" -eq "$_want" ] && ! [ -s "vg.$_vg" ]; then
		ok "$_desc"
		return 0
	fi
	not_ok "$_desc (exit $_rc, want $_want)"
	sed 's/^/# /' "vg.$_vg" "err.$_vg" | head -60
	return 1
}

# vg_like DESC CMD...: CMD's status depends on the machine (a cgroup, the
# processes running): memcheck must see the same status as a native run.
vg_like() {
	"$@" >/dev/null 2>&1
	vg $? "$*" "$@"
}

# The input profiles come from a native run of examples/truth: the real
# mappings make --symbolize do its work.
truth=$(command -v truth) || skip_all "examples/truth not built"
palloc-run -q -r 1 -o base.pb.gz -- "$truth" 2>/dev/null &&
	palloc-run -q -r 1 -o new.pb.gz -- "$truth" 2>/dev/null &&
	palloc-run -q -r 1 --no-symbolize -o raw.pb.gz -- "$truth" \
		2>/dev/null || skip_all "palloc-run on examples/truth failed"
printf 'no protobuf here\n' | gzip >broken.pb.gz
true &
dead=$!
wait $dead

plan 58

# palloc-run itself: the program runs natively with the agent, then
# palloc-run symbolizes the profile under memcheck.
vg 0 "palloc-run --help" palloc-run --help
vg 0 "palloc-run -r 1 on examples/truth" \
	palloc-run -r 1 -o run.pb.gz -- "$truth"
check "palloc-run summary names the top site" \
	grep -q 'wrote run.pb.gz:.*top inuse: keep_medium' "err.$_vg"
vg 0 "palloc-run --peak --exact -i 1" palloc-run -q -r 1 --peak --exact -i 1 \
	-o pk.%n.pb.gz -- "$truth"
vg 127 "palloc-run on a missing program exits 127" \
	palloc-run -- ./no-such-program

# palloc-diff
vg 0 "palloc-diff two profiles" palloc-diff base.pb.gz new.pb.gz
vg 0 "palloc-diff --top 3" palloc-diff --top 3 base.pb.gz new.pb.gz
vg 0 "palloc-diff --json" palloc-diff --json base.pb.gz new.pb.gz
check "palloc-diff --json is a diff document" \
	jqe '.format and .format_version == 1' "out.$_vg"
vg 0 "palloc-diff -o" palloc-diff -q -o diff.pb.gz base.pb.gz new.pb.gz
check "palloc-diff -o wrote a profile" test -s diff.pb.gz
vg 2 "palloc-diff on a broken file exits 2" \
	palloc-diff base.pb.gz broken.pb.gz
if command -v diff-mkprof >/dev/null; then
	echo 'sample 1 100 1 100 ; 0x1000=leak@app.c:12 main' |
		diff-mkprof small.pb.gz &&
		echo 'sample 2 9000 2 9000 ; 0x1000=leak@app.c:12 main' |
		diff-mkprof big.pb.gz
	vg 1 "palloc-diff --fail-on-growth exits 1 on growth" \
		palloc-diff --fail-on-growth 1k small.pb.gz big.pb.gz
else
	skip "t/helper/diff-mkprof not built"
fi

# palloc-report: a timeline naming both profiles, one of them raw
# (symbolized by palloc-report), and a refused timeline
printf '{"type":"sample","time_ns":1000000000,"pid":7,"heap_inuse_bytes":10,"rss_bytes":4096}\n{"type":"event","time_ns":1100000000,"pid":7,"event":"profile","path":"base.pb.gz","kind":"interval"}\n{"type":"event","time_ns":1200000000,"pid":7,"event":"profile","path":"raw.pb.gz","kind":"exit"}\n' >tl.ndjson
vg 0 "palloc-report" palloc-report -o tl.html tl.ndjson
check "palloc-report wrote a page" test -s tl.html
printf 'not json\n{}\n' >bad.ndjson
vg 2 "palloc-report on a bad timeline exits 2" palloc-report bad.ndjson

# palloc-dump on files
vg 0 "palloc-dump FILE" palloc-dump base.pb.gz
vg 0 "palloc-dump --top 5" palloc-dump --top 5 base.pb.gz
check "palloc-dump --top shows keep_medium" grep -q keep_medium "out.$_vg"
vg 0 "palloc-dump --json" palloc-dump --json base.pb.gz
vg 0 "palloc-dump --folded" palloc-dump --folded base.pb.gz
vg 0 "palloc-dump --symbolize a raw profile" \
	palloc-dump --symbolize --top 0 raw.pb.gz
check "palloc-dump --symbolize found the function names" \
	grep -q large_blocks "out.$_vg"
vg 0 "palloc-dump --symbolize -o" palloc-dump --symbolize -o sym.pb.gz \
	raw.pb.gz
vg 2 "palloc-dump on a broken file exits 2" palloc-dump broken.pb.gz

# palloc-smaps
vg 0 "palloc-smaps --json \$\$" palloc-smaps --json $$
check "palloc-smaps --json names this shell" \
	jqe --argjson p $$ '[.. | objects | select(.pid? == $p)] | length > 0' \
	"out.$_vg"
vg_like palloc-smaps
vg 0 "palloc-smaps --maps \$\$" palloc-smaps --maps $$
vg 0 "palloc-smaps --prom \$\$" palloc-smaps --prom $$
vg 0 "palloc-smaps --sysroot --json --maps" \
	palloc-smaps --sysroot "$F/sysroot-nosmapsrollup" --json --maps 500
vg 0 "palloc-smaps --sysroot listing" palloc-smaps --sysroot "$F/sysroot-cgroup2"
vg 2 "palloc-smaps --sysroot sysroot-garbage 600 603 exits 2" \
	palloc-smaps --sysroot "$F/sysroot-garbage" --json 600 603

vg 0 "palloc-smaps --watch" palloc-smaps -w 0.1 -c 2 $$
vg 2 "palloc-smaps on a dead pid exits 2" palloc-smaps --json $dead

# palloc-cgroup
vg_like palloc-cgroup --json
vg_like palloc-cgroup --prom
for _s in sysroot-cgroup2 sysroot-v1 sysroot-hybrid; do
	vg 0 "palloc-cgroup --sysroot $_s --json" \
		palloc-cgroup --sysroot "$F/$_s" --json
done
vg 0 "palloc-cgroup --sysroot --prom" \
	palloc-cgroup --sysroot "$F/sysroot-v1" --prom
vg 2 "palloc-cgroup --sysroot sysroot-garbage exits 2" \
	palloc-cgroup --sysroot "$F/sysroot-garbage" --json
vg 0 "palloc-cgroup --watch" palloc-cgroup --sysroot "$F/sysroot-cgroup2" \
	-w 0.1 -c 2
vg 2 "palloc-mallinfo on a dead pid exits 2" palloc-mallinfo $dead
vg 2 "palloc-dump on a dead pid exits 2" palloc-dump $dead

# Against a live agent: the listings and the socket clients. The leaker
# runs natively, its socket in a directory of our own; single-threaded, it
# answers at its samples (palloc(7), Threads): 64 a second here.
mkdir run && XDG_RUNTIME_DIR=$T/run && export XDG_RUNTIME_DIR
if leaker=$(command -v leaker); then
	LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=65536 "$leaker" \
		--seconds 60 --rate 4194304 2>/dev/null &
	pid=$!
	server=
	trap 'kill $pid $server 2>/dev/null; wait $pid $server 2>/dev/null
		cleanup_tmp' EXIT
	retry 50 0.1 palloc-dump --stats --json $pid >/dev/null 2>&1
	# The listings also see /tmp/palloc-UID: a short --timeout bounds
	# the wait on stopped agents of other programs there.
	vg 0 "palloc-mallinfo lists the agents" palloc-mallinfo --timeout 1
	check "palloc-mallinfo lists the leaker" \
		grep -Eq "^ *$pid +leaker +live +glibc" "out.$_vg"
	vg 0 "palloc-dump lists the agents" palloc-dump --timeout 1
	check "palloc-dump lists the leaker" grep -Eq "^ *$pid +leaker" \
		"out.$_vg"
	vg 0 "palloc-dump --top PID" palloc-dump --top 5 -o live.pb.gz $pid
	check "palloc-dump PID wrote a profile" test -s live.pb.gz
	vg 0 "palloc-dump --stats --json PID" palloc-dump --stats --json $pid
	vg 0 "palloc-mallinfo --json PID" palloc-mallinfo --json $pid
	check "palloc-mallinfo names glibc" \
		jqe '.allocator == "glibc"' "out.$_vg"
	vg 0 "palloc-mallinfo --prom PID" palloc-mallinfo --prom $pid
	# palloc-dump --serve under memcheck: /metrics and a profile over
	# HTTP, then SIGTERM, which it answers with a clean exit.
	if command -v curl >/dev/null; then
		valgrind -q --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite --track-fds=no \
			--log-file=vg.serve palloc-dump --timeout 5 \
			--serve 127.0.0.1:0 $pid >/dev/null 2>serve.err &
		server=$!
		retry 100 0.2 grep -q 'serving http' serve.err
		url=$(sed -n 's|.*serving \(http://[^ ]*\)/$|\1|p' serve.err)
		curl -sf "$url/metrics" >metrics.txt
		check "palloc-dump --serve /metrics names the leaker" \
			grep -q "^palloc_alloc_total{pid=\"$pid\"" metrics.txt
		curl -sf -o served.pb.gz "$url/debug/pprof/heap?pid=$pid"
		check "palloc-dump --serve sends a profile" test -s served.pb.gz
		kill -TERM $server
		wait $server
		_rc=$?
		check "palloc-dump --serve: no memcheck error (exit $_rc)" \
			test $_rc -eq 0 -a ! -s vg.serve
		sed 's/^/# /' vg.serve | head -40
	else
		skip "curl not installed" && skip && skip
	fi
	kill $pid 2>/dev/null
else
	for _i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do
		skip "examples/leaker not built"
	done
fi

done_testing
