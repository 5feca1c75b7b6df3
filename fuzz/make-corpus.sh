#!/bin/sh
# SPDX-License-Identifier: MIT
# Generate the fuzzer's seed corpus from real profiles: palloc's own (the
# t/helper generators of a build tree) and Go runtime/pprof profiles (heap,
# allocs, goroutine) written by a small Go program run with `go run`; each
# also un-gzipped, since the decoder takes both.
# Usage: fuzz/make-corpus.sh BUILDDIR [OUTDIR]   (default OUTDIR: fuzz/corpus)
# BUILDDIR is a configured palloc build where `make check` built t/helper.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: make-corpus.sh BUILDDIR [OUTDIR]}" && pwd)
out=${2:-$here/corpus}
h=$build/t/helper
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$h/pprof-gen" known "$out/known.pb.gz"
"$h/pprof-gen" valid "$out/valid.pb.gz"
"$h/pprof-gen" broken "$tmp"
for f in "$tmp"/*; do
	case $f in *.expect) ;; *) cp "$f" "$out/broken-${f##*/}" ;; esac
done
"$h/pprof-self" "$out/self-raw.pb.gz" >/dev/null
"$h/pprof-symbolize" "$out/self-raw.pb.gz" "$out/self-sym.pb.gz" >/dev/null

cat >"$tmp/main.go" <<'GO'
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
)

var keep [][]byte
var words []string
var mu sync.Mutex

func small(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 64))
	}
}

func large() { keep = append(keep, make([]byte, 1<<20)) }

func text(n int) {
	for i := 0; i < n; i++ {
		words = append(words, strings.Repeat(fmt.Sprint(i), 3))
	}
}

func worker(wg *sync.WaitGroup) {
	defer wg.Done()
	b := make([]byte, 4096)
	mu.Lock()
	keep = append(keep, b)
	mu.Unlock()
}

func main() {
	runtime.MemProfileRate = 1
	small(500)
	large()
	text(300)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go worker(&wg)
	}
	wg.Wait()
	runtime.GC()
	for _, name := range []string{"heap", "allocs", "goroutine"} {
		f, err := os.Create(os.Args[1] + "/go-" + name + ".pb.gz")
		if err != nil {
			panic(err)
		}
		pprof.Lookup(name).WriteTo(f, 0)
		f.Close()
	}
}
GO
(cd "$tmp" && HOME=$tmp GOCACHE=$tmp/gocache GO111MODULE=off GOFLAGS= \
	go run main.go "$out")
for f in "$out"/*.pb.gz; do
	gzip -dc "$f" >"${f%.gz}" 2>/dev/null || rm -f "${f%.gz}"
done
ls "$out" | wc -l | sed 's/$/ seed files/'
