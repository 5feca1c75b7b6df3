#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/threads at PALLOC_SAMPLE_RATE=1, 4 threads named worker-0..3
# (pthread_setname_np before they allocate): one profile; each thread
# label's four values and worker_alloc's, read back with go tool pprof
# -raw, equal the truth the program printed, exactly.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-examples.sh"
example threads
plan 8

LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 "$exe" --threads 4 \
	--truth truth.txt >run.out 2>run.err
rc=$?
set -- palloc.threads.*.pb.gz
if [ $rc -eq 0 ] && [ $# -eq 1 ] && [ -f "$1" ]; then
	ok "threads exits 0 and leaves one profile"
else
	not_ok "threads exits $rc, profiles: $*"
	sed 's/^/# /' run.err
fi
pprof -raw "$1" >raw.txt 2>raw.err
check "go tool pprof reads it, with thread labels" grep -q 'thread:\[worker-0\]' raw.txt
truth_awk thread raw.txt >threads.txt
truth_awk leaf raw.txt >leaf.txt

# pid site alloc_objects alloc_space inuse_objects inuse_space
grep -v '^#' truth.txt >want.txt
while read -r _pid site ao as io is; do
	case $site in
	thread=*) got=$(awk -v s="${site#thread=}" '$1 == s { print $2, $3, $4, $5 }' threads.txt) ;;
	*) got=$(awk -v s="$site" '$1 == s { print $2, $3, $4, $5 }' leaf.txt) ;;
	esac
	if [ "$got" = "$ao $as $io $is" ]; then
		ok "$site: $ao objects, $as bytes allocated; $io, $is in use"
	else
		not_ok "$site: want $ao $as $io $is, got '${got:-nothing}'"
	fi
done <want.txt
check "the truth has 5 sites" [ "$(wc -l <want.txt)" -eq 5 ]
diag "per thread label: $(cat threads.txt)"
done_testing
