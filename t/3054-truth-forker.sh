#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/forker at PALLOC_SAMPLE_RATE=1: two forked children, one
# fork+exec of itself and the parent each write their own profile, named
# by the default output pattern (palloc.%e.%p.pb.gz); each profile's named
# function (child_work, exec_child_work, parent_work) shows exactly the
# truth that process printed under its pid, read with go tool pprof -raw.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-examples.sh"
example forker
plan 6

timeout_run 60 env LD_PRELOAD="$PALLOC_AGENT" PALLOC_SAMPLE_RATE=1 \
	"$exe" --children 2 --truth truth.txt >run.out 2>run.err
rc=$?
if [ $rc -eq 0 ]; then ok "forker and its children exit 0"; else
	not_ok "forker exits $rc"
	sed 's/^/# /' run.err
fi
grep -v '^#' truth.txt >want.txt
set -- palloc.*.pb.gz
if [ $# -eq 4 ] && [ "$(wc -l <want.txt)" -eq 4 ]; then
	ok "four processes, four profiles: $*"
else
	not_ok "four processes (truth: $(wc -l <want.txt) lines), profiles: $*"
fi

# pid site alloc_objects alloc_space inuse_objects inuse_space
while read -r pid site ao as io is; do
	set -- palloc.*."$pid".pb.gz
	got=
	if [ -f "$1" ] && pprof -raw "$1" >"raw.$pid" 2>"raw.$pid.err"; then
		got=$(truth_awk leaf "raw.$pid" |
			awk -v s="$site" '$1 == s { print $2, $3, $4, $5 }')
	fi
	if [ "$got" = "$ao $as $io $is" ]; then
		ok "pid $pid $site: $ao objects, $as bytes allocated; $io, $is in use"
	else
		not_ok "pid $pid $site: want $ao $as $io $is, got '${got:-nothing}' from '$1'"
	fi
done <want.txt
done_testing
