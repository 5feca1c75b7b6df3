#!/bin/sh
# SPDX-License-Identifier: MIT
# Profiles written by libcore/pprof read back by go tool pprof, and
# profiles written by Go (pprof -proto, runtime/pprof) read by libcore.
. "$top_srcdir/t/lib.sh"
need_pprof
plan 8

pprof-gen known known.pb.gz && ok "pprof-gen writes a profile" ||
	not_ok "pprof-gen writes a profile"

# The exact values and stacks, as Go's reader sees them.
pprof -raw known.pb.gz >raw.out 2>raw.err
sed -n '/^Samples:/,/^Locations/p' raw.out >samples.out
cat >samples.exp <<'EXP'
Samples:
alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt]
         10      40960          4      16384: 1 2 
                thread:[main]
          3    3000000          3    3000000: 3 2 
                thread:[main]
        100       6400          0          0: 4 2 
                thread:[main]
Locations
EXP
check "pprof -raw shows the samples, values and labels" \
	diff -u samples.exp samples.out

grep -E '^ +[0-9]+: 0x' raw.out >locs.out
cat >locs.exp <<'EXP'
     1: 0x555555555200 M=1 make_buffers known.c:13 s=11
     2: 0x555555555100 M=1 main known.c:5 s=1
     3: 0x555555555300 M=1 ns::Cache::grow(unsigned long) known.c:24 s=22(_ZN2ns5Cache4growEm)
     4: 0x555555555400 M=1 leak_strings known.c:35 s=33
EXP
check "pprof -raw shows names, system names, files and lines" \
	diff -u locs.exp locs.out
check "pprof -raw shows the mapping with its build id" \
	grep -qx '1: 0x555555554000/0x555555559000/0x0 /usr/bin/known abcdef0123456789 \[FN\]\[FL\]\[LN\]' raw.out

pprof -top -nodecount=10 -sample_index=alloc_objects known.pb.gz >top.out 2>&1
grep -E '^ +[0-9]' top.out | awk '{printf "%s", $1; for (i = 6; i <= NF; i++) printf " %s", $i
	print ""}' >top.cut
cat >top.exp <<'EXP'
100 leak_strings
10 make_buffers
3 ns::Cache::grow(unsigned long)
0 main
EXP
check "pprof -top -sample_index=alloc_objects" diff -u top.exp top.cut

# Go's encoder (pprof -proto re-encodes) read by our decoder.
pprof -proto known.pb.gz >go.pb.gz 2>/dev/null
pprof-check known.pb.gz >ours.sum && pprof-check go.pb.gz >go.sum
check "a profile re-encoded by Go decodes to the same totals" \
	diff -u ours.sum go.sum

# A Go heap profile from runtime/pprof: totals agree with pprof -raw.
cat >main.go <<'EOF_GO'
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var keep [][]byte

func grow() {
	for i := 0; i < 1000; i++ {
		keep = append(keep, make([]byte, 4096))
	}
}

func main() {
	runtime.MemProfileRate = 1
	grow()
	runtime.GC()
	f, _ := os.Create(os.Args[1])
	pprof.WriteHeapProfile(f)
	f.Close()
}
EOF_GO
if HOME=$T GOCACHE=$T/gocache GOFLAGS= GO111MODULE=off \
	timeout_run 120 go run main.go goheap.pb.gz 2>go.err; then
	pprof-check goheap.pb.gz >goheap.sum 2>goheap.err
	ours=$(awk '/^inuse_space/ {print $2}' goheap.sum)
	pprof -raw goheap.pb.gz 2>/dev/null |
		awk '/^Samples:/ {s=1; next} /^Locations/ {s=0}
		     s && $4 ~ /^[0-9]+:?$/ {sub(":", "", $4); t += $4}
		     END {print t + 0}' >go.total
	go_total=$(cat go.total)
	diag "inuse_space: ours $ours, pprof $go_total"
	check "a runtime/pprof heap profile decodes; inuse_space totals agree" \
		test -n "$ours" -a "$ours" = "$go_total" -a "$ours" -ge 4096000
	check "its functions are there (main.grow)" \
		grep -q 'functions [1-9]' goheap.sum
else
	cat go.err
	not_ok "go run writes a heap profile"
	skip "no Go heap profile"
fi
done_testing
