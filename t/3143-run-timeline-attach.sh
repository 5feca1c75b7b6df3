#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run -p PID --timeline: a program started plainly,
# attached at rate 1: samples of its pid in time order, its heap from the
# record once attached (the blocks it allocates then, exactly), the
# detach's profile as the "exit" profile event and no exit event; attached
# again, its end gives the exit event.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need_attach palloc-run attach-target
. "$top_srcdir/t/lib-timeline.sh"
plan 9

tp= rp=
cleanup() {
	[ -n "$rp" ] && kill -KILL "$rp" 2>/dev/null
	[ -n "$tp" ] && kill -KILL "$tp" 2>/dev/null
	cd / && rm -rf "$T" "$PALLOC_RECORD_DIR"
}
trap cleanup EXIT

mkfifo in || exit 99
attach-target <in >out.txt 2>err.txt &
tp=$!
exec 3>in
retry 100 0.1 grep -q '^ready$' out.txt || exit 99

# attach FILE: palloc-run -p in the background ($rp), its timeline FILE.
attach() {
	rm -f a.err
	palloc-run -p "$tp" -r 1 -o "a.%p.%n.pb.gz" --timeline-period 20 \
		--timeline "$1" 2>a.err &
	rp=$!
	retry 300 0.1 grep -q "^palloc-run: attached to process $tp;" a.err
}
ended() { ! [ -e "/proc/$1/stat" ] || [ "$(cut -d' ' -f3 "/proc/$1/stat")" = Z ]; }
# 100 blocks of 10000 bytes, exactly, in a sample of FILE
seen() {
	jqe -s "any(.[]; .type == \"sample\" and .pid == $tp and
		.heap_inuse_bytes != null and .heap_inuse_bytes >= 1000000)" "$1"
}

attach a.ndjson
printf 'alloc 100 10000\n' >&3
retry 300 0.1 grep -qx "allocated 100" out.txt
retry 300 0.1 seen a.ndjson
kill -INT "$rp"
retry 600 0.1 ended "$rp" || kill -KILL "$rp"
wait "$rp"
rc=$?
rp=
check "detached: status 0" [ $rc -eq 0 ]
check "every line valid JSON with every key" tl_valid a.ndjson
tl_samples a.ndjson "$tp" >s
diag "$(wc -l <s) samples; last: $(tail -n 1 s)"
check "samples of the pid, in time order" jqe -s \
	'length >= 2 and ([.[].time_ns] | . == sort)' s
check "the blocks allocated once attached, in heap_inuse_bytes" seen a.ndjson
check "the detach's profile: a profile event of kind exit" jqe -s \
	"[.[] | select(.event == \"profile\") | .kind] == [\"exit\"]" a.ndjson
check "no exit event: the program runs on" jqe -s \
	'[.[] | select(.event == "exit")] | length == 0' a.ndjson
check "the program runs on" kill -0 "$tp"

attach b.ndjson
printf 'quit\n' >&3
exec 3>&-
retry 600 0.1 ended "$rp" || kill -KILL "$rp"
wait "$rp"
rp=
check "its end: an exit event" jqe -s \
	"[.[] | select(.event == \"exit\" and .pid == $tp)] | length == 1" \
	b.ndjson
check "every line valid JSON with every key" tl_valid b.ndjson
grep -v '"sample"' a.ndjson b.ndjson | sed 's/^/# /'
