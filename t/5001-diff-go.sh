#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-diff on profiles nobody here wrote (Go's runtime/pprof) agrees with
# `go tool pprof -top -diff_base=BASE NEW` to the unit, for every sample type.
. "$top_srcdir/t/lib.sh"
need_pprof
need jq palloc-diff

cat >heapdiff.go <<'GO'
// heapdiff writes two heap profiles: BASE, then NEW after known growth.
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var keep [][]byte
var sink []byte

//go:noinline
func steady(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 4096))
	}
}

//go:noinline
func leak(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 1000))
	}
}

//go:noinline
func leakBig(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 65536))
	}
}

//go:noinline
func shrink() {
	for i := 0; i < 20; i++ {
		keep[i] = nil
	}
}

//go:noinline
func transient(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		sink = make([]byte, 2048)
		s += len(sink)
	}
	return s
}

func write(path string) {
	runtime.GC()
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		panic(err)
	}
	f.Close()
}

func main() {
	runtime.MemProfileRate = 1
	keep = make([][]byte, 0, 4096)
	steady(100)
	leak(50)
	transient(10)
	write(os.Args[1])
	leak(200)
	leakBig(3)
	transient(30)
	shrink()
	write(os.Args[2])
}
GO
HOME=$T GOCACHE=$T/gocache GOFLAGS= GO111MODULE=off \
	timeout_run 300 go run heapdiff.go base.pb.gz new.pb.gz ||
	skip_all "cannot run a Go program"

types="alloc_objects alloc_space inuse_objects inuse_space"
plan 14

# pprof's rows "flat cum name" (exact integers: -unit=B prints bytes, and
# counts get a stray B), without pprof's "(inline)" marks and 0/0 rows.
pprof_rows() {
	pprof -top -unit=B -nodecount=1000000 -nodefraction=0 -edgefraction=0 \
		-sample_index="$1" -diff_base=base.pb.gz new.pb.gz >"pprof.$1" \
		2>"pprof.$1.err" || return 1
	sed -n '/^ *flat  *flat%/,$p' "pprof.$1" | sed 1d |
		sed -e 's/ (inline)$//' -e 's/ (partial-inline)$//' |
		awk '{ f = $1; c = $4; sub(/B$/, "", f); sub(/B$/, "", c);
		       if (f != 0 || c != 0) { $1 = $2 = $3 = $4 = $5 = "";
		       sub(/^ +/, ""); print f, c, $0 } }' | sort
}
pprof_total() {
	sed -n 's/^Showing nodes accounting for .* of \(-*[0-9]*\)B* total$/\1/p' \
		"pprof.$1"
}

for t in $types; do
	palloc-diff --json --sample-index="$t" base.pb.gz new.pb.gz \
		>"diff.$t.json" 2>"diff.$t.err" || { not_ok "$t: palloc-diff runs"; continue; }
	u=$(jq -r '.unit' "diff.$t.json")
	[ "$u" = bytes ] && k=bytes || k=count
	jq -r ".functions[] | \"\(.flat_$k) \(.cum_$k) \(.function)\"" \
		"diff.$t.json" | sort >"ours.$t"
	pprof_rows "$t" >"theirs.$t" || { not_ok "$t: pprof runs"; continue; }
	diag "$t: $(wc -l <"theirs.$t") functions with a change in pprof's table"
	if [ -s "theirs.$t" ] && diff -u "theirs.$t" "ours.$t"; then
		ok "$t: per-function flat and cum agree with pprof -diff_base"
	else
		not_ok "$t: per-function flat and cum agree with pprof -diff_base"
	fi
	want=$(pprof_total "$t")
	got=$(jq -r ".pprof_total_$k" "diff.$t.json")
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		ok "$t: total $got agrees with pprof"
	else
		not_ok "$t: total: pprof '$want', palloc-diff '$got'"
	fi
done

# The growth is what the program did: leak() 200 more objects of 1000
# bytes (Go rounds to its 1024-byte size class), leakBig() 3 x 65536.
check "leak grew by 200 x 1024 bytes" \
	jqe '.functions[] | select(.function == "main.leak") |
		.flat_bytes == 204800' diff.inuse_space.json
check "leakBig grew by 3 x 65536 bytes" \
	jqe '.functions[] | select(.function == "main.leakBig") |
		.flat_bytes == 196608' diff.inuse_space.json
check "steady shrank by 20 x 4096 bytes" \
	jqe '.functions[] | select(.function == "main.steady") |
		.flat_bytes == -81920' diff.inuse_space.json

# A profile diffed with itself is empty and exits 0.
palloc-diff --json new.pb.gz new.pb.gz >self.json 2>self.err &&
	jqe '.growth_bytes == 0 and .changed_stack_count == 0 and
		.function_count == 0 and .functions == []' self.json &&
	[ ! -s self.err ] &&
	ok "a Go profile diffed with itself is empty, exit 0" ||
	not_ok "a Go profile diffed with itself is empty, exit 0"

# -o writes a profile that pprof reads back with the same numbers.
palloc-diff -o d.pb.gz base.pb.gz new.pb.gz 2>o.err &&
	pprof -top -unit=B -nodecount=1000000 -nodefraction=0 -edgefraction=0 \
		-sample_index=inuse_space d.pb.gz >d.top 2>d.err &&
	sed -n '/^ *flat  *flat%/,$p' d.top | sed 1d |
		sed -e 's/ (inline)$//' -e 's/ (partial-inline)$//' |
		awk '{ f = $1; c = $4; sub(/B$/, "", f); sub(/B$/, "", c);
		       if (f != 0 || c != 0) { $1 = $2 = $3 = $4 = $5 = "";
		       sub(/^ +/, ""); print f, c, $0 } }' | sort >d.rows &&
	diff -u theirs.inuse_space d.rows &&
	ok "-o output read by pprof gives the same flat and cum" ||
	not_ok "-o output read by pprof gives the same flat and cum"
# The --top table: same rows in the same order (pprof's FlatNameOrder) with
# the same flat%, sum% and cum% as pprof prints them.
pct_rows() { # the table of FILE as "flat% sum% cum% name", 0/0 rows out
	sed -n '/^ *flat  *flat%/,$p' "$1" | sed 1d |
		sed -e 's/ (inline)$//' -e 's/ (partial-inline)$//' |
		awk '$1 != "0" || $4 != "0" { n = $2 " " $3 " " $5;
		       $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print n, $0 }'
}
palloc-diff --top=0 base.pb.gz new.pb.gz >ours.top 2>/dev/null &&
	pct_rows pprof.inuse_space >theirs.pct && pct_rows ours.top >ours.pct &&
	[ -s ours.pct ] && diff -u theirs.pct ours.pct &&
	ok "--top: rows, order and percentages as pprof -top -diff_base" ||
	not_ok "--top: rows, order and percentages as pprof -top -diff_base"
done_testing
