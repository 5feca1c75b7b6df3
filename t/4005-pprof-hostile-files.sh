#!/bin/sh
# SPDX-License-Identifier: MIT
# Hostile profile files: a FIFO as an operand of
# palloc-dump or palloc-diff, a profile whose mapping is a FIFO, a 2 GiB
# sparse file, a gzip bomb. One line, exit 2 (or a warning for the
# mapping), never a hang, and memory far below what the file claims.
. "$top_srcdir/t/lib.sh"
need pprof-gen mkfifo gzip truncate
pprof-gen known base.pb.gz || exit 99


plan 14

# FIFOs nobody writes: refused, not opened (an open would block).
mkfifo fifo
timeout_run 30 palloc-dump fifo >out 2>err
check "palloc-dump FIFO: exit 2, no hang" test $? -eq 2 -a ! -s out
check "palloc-dump FIFO: one line" one_line err \
	"palloc-dump: cannot read profile 'fifo': not a regular file (a FIFO)"
timeout_run 30 palloc-diff base.pb.gz fifo >out 2>err
check "palloc-diff BASE FIFO: exit 2, no hang" test $? -eq 2 -a ! -s out
check "palloc-diff BASE FIFO: one line" one_line err \
	"palloc-diff: cannot read 'fifo': not a regular file (a FIFO)"
timeout_run 30 palloc-diff fifo fifo >out 2>err
check "palloc-diff FIFO FIFO: exit 2, no hang" test $? -eq 2
# The user's own streams still work: stdin and an open descriptor.
check "palloc-dump - reads stdin" \
	sh -c 'palloc-dump --top - <base.pb.gz | grep -q make_buffers'
check "palloc-diff /dev/fd/3 reads a descriptor given" \
	sh -c 'palloc-diff --top /dev/fd/3 base.pb.gz 3<base.pb.gz >/dev/null'

# A raw profile whose one mapping is the FIFO: symbolizing skips it.
pprof-gen raw raw.pb.gz "$T/fifo" || exit 99
timeout_run 30 palloc-dump --symbolize --top raw.pb.gz >out 2>err
check "--symbolize, mapping a FIFO: exit 0, no hang" test $? -eq 0
check "--symbolize, mapping a FIFO: said" grep -qx \
	"palloc-dump: warning: cannot open '$T/fifo': not a regular file (a FIFO); not symbolized" err

if ! [ -x /usr/bin/time ]; then
	for i in 1 2 3 4 5; do skip "no /usr/bin/time (Debian: time)"; done
	done_testing
fi
# 2 GiB of holes: refused by its size (past the 256 MiB limit), unread.
truncate -s 2G sparse.pb.gz
expect_fail 2 peak_kb rss palloc-dump sparse.pb.gz 2>err
check "2 GiB sparse file: one line, exit 2" one_line err \
	"palloc-dump: cannot read profile 'sparse.pb.gz': larger than 268435456 bytes (2147483648; the limit, PALLOC_PROFILE_MAX)"
check "2 GiB sparse file: unread ($(cat rss) KiB)" test "$(cat rss)" -lt 65536
expect_fail 2 peak_kb rss palloc-diff base.pb.gz sparse.pb.gz 2>err
check "palloc-diff, 2 GiB sparse file: unread ($(cat rss) KiB)" \
	test "$(cat rss)" -lt 65536

# A gzip bomb: 70 members of 16 MiB of zeros, 5 MB that inflate to
# 1.1 GiB. Inflated in 64 KiB pieces, refused at its first byte (no
# profile starts with field 0), never held.
head -c 16777216 /dev/zero | gzip -1 >m.gz || exit 99
i=0
while [ $i -lt 70 ]; do cat m.gz; i=$((i + 1)); done >bomb.pb.gz
expect_fail 2 peak_kb rss palloc-dump bomb.pb.gz 2>err
check "gzip bomb: one line, exit 2" one_line err \
	"palloc-dump: cannot decode profile 'bomb.pb.gz': malformed protobuf at byte 0: invalid field number 0"
check "gzip bomb: never inflated whole ($(cat rss) KiB)" \
	test "$(cat rss)" -lt 65536
done_testing
