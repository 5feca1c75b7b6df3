#!/bin/sh
# SPDX-License-Identifier: MIT
# At PALLOC_SAMPLE_RATE=1 the peak is the true high-water
# mark, as DHAT's t-gmax. peak-truth reaches its peak (requested bytes) at
# an arbitrary step of a pseudo-random malloc/calloc/realloc/free sequence
# and prints it; the peak file's peak_inuse_space total, the exit
# profile's, and the stats' peak_inuse_bytes must equal it exactly (they
# read 0.8 % and 2.1 % low on sqlite3 and jq while the peak was snapshot
# only at rises of 1/16).
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
need curl jq

plan 9

# total_of PROFILE INDEX: the sum of sample type INDEX (1-based) over all
# samples.
total_of() {
	raw_values "$1" "$1.v" &&
		awk -v k="$2" '{ s += $k } END { print s + 0 }' "$1.v"
}

LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_PEAK=1 \
	PALLOC_OUTPUT=p.%n.pb.gz peak-truth >truth.txt
check "peak-truth runs under the agent" test $? -eq 0
truth=$(sed -n 's/^peak //p' truth.txt)
check "it prints its peak ($truth bytes)" test "${truth:-0}" -gt 1000000
peak=$(total_of p.peak.pb.gz 6)
check "peak file: peak_inuse_space total $peak = $truth" \
	test "$peak" = "$truth"
dflt=$(grep -o '[a-z_]*/bytes\[dflt\]' p.peak.pb.gz.v.raw | head -1)
check "its default sample type is peak_inuse_space ($dflt)" \
	test "$dflt" = 'peak_inuse_space/bytes[dflt]'
peak=$(total_of p.1.pb.gz 6)
check "exit profile: peak_inuse_space total $peak = $truth" \
	test "$peak" = "$truth"
comments p.1.pb.gz c.txt
check "the comment says the rate-1 peak is exact" \
	grep -q '^peak: .*exact' c.txt

# The stats' peak_inuse_bytes (the sampled high-water mark at rate 1)
# while the process waits, everything freed.
LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=/dev/null \
	peak-truth wait >wait.txt &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; cleanup_tmp' EXIT
stats_when_ready $pid wait.txt stats.json
truth=$(sed -n 's/^peak //p' wait.txt)
check "stats answered" jqe '.format == "palloc-stats"' stats.json
check "stats: peak_inuse_bytes = $truth" \
	jqe --argjson t "${truth:-0}" '.peak_inuse_bytes == $t' stats.json
kill $pid
wait $pid
check "the helper ends cleanly on SIGTERM" test $? -eq 0
done_testing
