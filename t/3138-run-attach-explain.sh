#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-explain and palloc-dump --stats of a process palloc-run -p is
# attached to: 10,000,000 bytes allocated before the attach
# show as the "heap_before_attach" part (the allocator's in-use bytes
# minus the heap the agent saw), 409,600 after it as heap_inuse (rate 1),
# allocator_overhead is unknown rather than holding those blocks, and
# both documents say "attached": true; a process under palloc-run from
# its start says false and keeps its allocator_overhead.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-attach.sh"
need palloc-explain jq
plan 10

# part NAME FILE: the bytes of the explain part NAME ("null" if unknown).
part() { jq -r --arg n "$1" '[.parts[] | select(.name == $n)][0].bytes' "$2"; }

start_target attach-target
say "alloc 1000 10000" "allocated 1000" || echo "# the target did not allocate"
check "attached at rate 1" attach_start "$tp" run.err -r 1 -o a.pb.gz
say "alloc 100 4096" "allocated 100" || echo "# the target did not allocate"
# The allocator's figures in the record are at most one a second, taken
# on the allocation path (the target waits in read(2), not an idle
# point): a second later, 32 small blocks bring a fresh one.
sleep 1.2
say "alloc 32 16" "allocated 32" || echo "# the target did not allocate"
palloc-explain --json "$tp" >ex.json 2>ex.err
palloc-explain "$tp" >ex.txt 2>&1
palloc-dump --stats --json "$tp" >st.json 2>st.err
attach_stop
check "detached: status 0" test "$rc" -eq 0

before=$(part heap_before_attach ex.json)
inuse=$(part heap_inuse ex.json)
diag "before the attach: $before bytes; heap in use: $inuse bytes"
check "both documents say attached" jq -e '.attached == true' ex.json st.json
case $before in *[!0-9]* | '') before=0 ;; esac
case $inuse in *[!0-9]* | '') inuse=0 ;; esac
# 1000 blocks of 10,000 bytes and their 16-byte headers, with the
# program's own few blocks from before (stdio's buffer).
check "heap_before_attach: the 10,000,000 bytes from before (+ <= 256 KiB)" \
	test "$before" -ge 10000000 -a "$before" -le $((10000000 + 262144))
check "heap_inuse: the 410,112 bytes after (+ <= 64 KiB)" \
	test "$inuse" -ge 410112 -a "$inuse" -le $((409600 + 65536))
check "allocator_overhead unknown while attached" \
	test "$(part allocator_overhead ex.json)" = null
check "the table names the part before the attach" \
	grep -Eq '^profile +heap_before_attach +[0-9.]+ MiB' ex.txt
quit_target

# The same program under palloc-run from its start: not attached.
rm -f in
mkfifo in || exit 99
palloc-run -q -o b.pb.gz attach-target <in >out.txt 2>err.txt &
run=$!
bg_add $run
exec 3>in
retry 300 0.1 grep -q '^ready$' out.txt
say "alloc 1000 10000" "allocated 1000" || echo "# the target did not allocate"
kid=$(pgrep -P $run -x attach-target)
palloc-explain --json "$kid" >ex2.json 2>ex2.err
check "under palloc-run from the start: attached false, overhead known" \
	jq -e '.attached == false and ([.parts[] | select(.name ==
	"allocator_overhead")][0].bytes | type) == "number" and
	([.parts[] | select(.name == "heap_before_attach")] | length) == 0' \
	ex2.json
echo quit >&3
exec 3>&-
retry 300 0.1 ended "$run"
done_testing
