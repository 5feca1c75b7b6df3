#!/bin/sh
# SPDX-License-Identifier: MIT
# Heaps palloc cannot see do not pass for complete
# profiles. At exit (palloc-run's warning beside the summary line, the
# agent's own line without palloc-run, a profile comment) and in the stats
# JSON, the anonymous memory the process held is compared with the malloc
# heap the agent saw; when most of it did not come through malloc, palloc
# says so with the numbers and the likely owner: pymalloc (with
# PYTHONMALLOC=malloc as the way out), the Go runtime, V8, the JVM.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
need palloc-run jq

plan 19

warn_re='warning: .*most of this process.s memory did not come through malloc'

# 64 MiB mapped and touched outside malloc, 10 KB malloced.
palloc-run -o m.pb.gz mmap-heap >out 2>err
check "mmap-heap under palloc-run" test $? -eq 0
check "palloc-run warns beside the summary, with the numbers" \
	grep -Eq "^palloc-run: $warn_re.*: 6[4-9] MiB of anonymous memory at the peak, 6[3-9] MiB of it not from" err ||
	diag "$(cat err)"
check "... and names no owner it does not know" \
	grep -q 'mapped by other means' err
check "the agent did not print it a second time" \
	test "$(grep -c 'did not come through malloc' err)" -eq 1
comments m.pb.gz c.txt
check "the profile carries the warning and the figures" \
	sh -c "grep -Eq '^$warn_re' c.txt && grep -q '^memory at exit: anonymous' c.txt"

# Beyond palloc-run's 10 summary lines (11 processes allocating 20 MB
# rank first) the warning is still counted.
cat >many.sh <<'SH'
for i in 1 2 3 4 5 6 7 8 9 10 11; do run-workload 10 1000000 >/dev/null; done
mmap-heap
SH
palloc-run -o 's.%p.pb.gz' sh many.sh 2>serr
check "a warned profile among those not listed is counted" \
	grep -q '^palloc-run: warning: 1 of those profiles says that most of their process.s memory did not come through malloc' serr ||
	diag "$(cat serr)"

LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT=m2.pb.gz mmap-heap 2>err2
check "without palloc-run the agent warns itself" \
	grep -Eq "^palloc: $warn_re" err2

LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT=/dev/null mmap-heap wait >wait.txt &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; cleanup_tmp' EXIT
stats_when_ready $pid wait.txt stats.json
kill $pid
wait $pid
check "stats: anonymous memory and what malloc did not explain" \
	jqe '.anon_bytes >= 67108864 and .anon_peak_bytes >= .anon_bytes
	     and .unseen_bytes >= 60000000 and .heap_seen_bytes >= 0' \
	stats.json || diag "$(cat stats.json)"
check "stats: the warning, no owner" \
	jqe '(.unseen_warning | test("did not come through malloc"))
	     and .unseen_owner == null' stats.json

# A normal malloc program: 10 MB kept, nothing said.
palloc-run -o w.pb.gz run-workload 100 100000 >/dev/null 2>err
check "a malloc program: no warning" \
	sh -c "! grep -q 'did not come through malloc' err"
comments w.pb.gz cw.txt
check "its profile has the figures, no warning" \
	sh -c "grep -q '^memory at exit: anonymous' cw.txt && ! grep -q '^warning:' cw.txt"
LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT=/dev/null \
	run-workload 100 100000 serve >wait2.txt 2>&1 &
pid=$!
stats_when_ready $pid wait2.txt stats2.json
kill $pid
wait $pid
check "stats of a malloc program: no warning" \
	jqe '.unseen_warning == null and (.anon_bytes | type) == "number"' \
	stats2.json

# Python: a million small objects live in pymalloc's arenas.
py=/usr/bin/python3
if [ -x "$py" ]; then
	prog='l = [str(i) for i in range(1000000)]'
	palloc-run -o py.pb.gz "$py" -c "$prog" 2>perr
	check "python3 under palloc-run" test $? -eq 0
	check "python3: warned, naming pymalloc and PYTHONMALLOC=malloc" \
		grep -Eq "^palloc-run: $warn_re.*likely owner: pymalloc .*PYTHONMALLOC=malloc" perr ||
		diag "$(cat perr)"
	PYTHONMALLOC=malloc palloc-run -o py2.pb.gz "$py" -c "$prog" 2>perr2
	check "python3 with PYTHONMALLOC=malloc: every object seen, no warning" \
		sh -c "! grep -q 'did not come through malloc' perr2" ||
		diag "$(cat perr2)"
else
	skip "Debian's python3 is not installed"
	skip "Debian's python3 is not installed"
	skip "Debian's python3 is not installed"
fi

# Go, dynamically linked (cgo): its heap is the runtime's, and it exits
# past every exit handler. Built offline from the standard library only.
mkdir gobuild
cat >gobuild/main.go <<'GO'
package main

// #include <stdlib.h>
import "C"

import (
	"fmt"
	"unsafe"
)

var keep [][]byte

func main() {
	C.free(unsafe.Pointer(C.malloc(100)))
	for i := 0; i < 32; i++ {
		keep = append(keep, make([]byte, 1<<20))
	}
	fmt.Println(len(keep))
}
GO
if (cd gobuild && HOME=$T GOCACHE=$T/gocache GOPATH=$T/gopath GOFLAGS= \
	GO111MODULE=off GOPROXY=off CGO_ENABLED=1 \
	go build -o ../gocgo main.go) >gobuild.log 2>&1 &&
	readelf -l gocgo 2>/dev/null | grep -q INTERP; then
	palloc-run -o go.pb.gz ./gocgo >goout 2>goerr
	check "the Go program runs under palloc-run" test $? -eq 0
	# It exits past every exit handler: palloc-run writes its profile
	# from its record; the agent said at start what it is.
	check "palloc-run writes its profile, the agent names the Go runtime" \
		sh -c "grep -q '^palloc-run: wrote go.pb.gz' goerr &&
		grep -q \"^palloc: warning: 'gocgo' is a Go program: the Go runtime keeps its own heap\" goerr"
	check "... and does not blame exec, setuid or LD_PRELOAD" \
		sh -c "! grep -Eq 'setuid|LD_PRELOAD' goerr"
	LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT=/dev/null ./gocgo \
		>/dev/null 2>goerr2
	check "without palloc-run the agent says so at start" \
		grep -q "^palloc: warning: 'gocgo' is a Go program" goerr2
else
	diag "$(tail -3 gobuild.log)"
	skip "cannot build a dynamically linked Go program offline"
	skip "cannot build a dynamically linked Go program offline"
	skip "cannot build a dynamically linked Go program offline"
	skip "cannot build a dynamically linked Go program offline"
fi
done_testing
