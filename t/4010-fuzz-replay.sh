#!/bin/sh
# SPDX-License-Identifier: MIT
# Replay what the fuzzers found (t/fixtures/fuzz/TARGET/*: inputs that once
# crashed a parser or broke a target's property, plus a few seeds) through
# each fuzz target linked with a plain main(): every input must pass.
. "$top_srcdir/t/lib.sh"

fx=$top_srcdir/t/fixtures/fuzz
n=$(find "$fx" -type f ! -name README | wc -l)
plan "$n"
for dir in "$fx"/*/; do
	target=$(basename "$dir")
	helper=fuzz-$(echo "${target%_fuzz}" | tr _ -)
	for f in "$dir"*; do
		[ -f "$f" ] || continue
		name=$target/$(basename "$f")
		if "$helper" "$f" >out 2>err; then
			ok "$name"
		else
			not_ok "$name (exit $?)"
			diag "$(head -n 20 err)"
		fi
	done
done
