#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run's symbolized rewrites are compressed at deflate's
# fastest level (the gzip header's XFL byte says 4); a profile that fits
# the encoder's 64 KiB stage is compressed with a window no larger than
# itself, a large one streams with the full window. The agent links no
# zlib: its own files are stored, not deflated (XFL 0; t/4009 reads their
# blocks). Every one reads back.
. "$top_srcdir/t/lib.sh"
need_agent
need palloc-run palloc-diff python3

plan 10

# xfl FILE: the gzip header's extra flags (byte 8)
xfl() { od -An -tu1 -j8 -N1 "$1" | tr -d ' '; }

# inflates FILE: it inflates with a window of the smallest power of two
# (512 to 32768) that holds the whole uncompressed profile; prints its
# uncompressed size.
inflates() {
	python3 - "$1" <<'EOF'
import gzip, sys, zlib
data = open(sys.argv[1], "rb").read()
raw = gzip.decompress(data)
bits = 9
while bits < 15 and len(raw) + 262 > 1 << bits:
	bits += 1
if zlib.decompress(data, 16 + bits) != raw:
	sys.exit(1)
print(len(raw))
EOF
}

LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT=small.pb.gz /bin/true
check "the agent writes the profile of /bin/true" test -s small.pb.gz
check "... stored, not deflated (XFL 0)" test "$(xfl small.pb.gz)" = 0
n=$(inflates small.pb.gz)
check "... and it reads back ($n bytes)" test -n "$n"

# every allocation of python3's start: some 200 KB of profile
LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT=large.pb.gz PALLOC_SAMPLE_RATE=1 \
	python3 -c 'import json' 2>err
n=$(inflates large.pb.gz)
check "a profile larger than the stage reads back ($n bytes)" \
	test "${n:-0}" -gt 65536
check "... stored too" test "$(xfl large.pb.gz)" = 0
palloc-diff large.pb.gz large.pb.gz >diff.out 2>diff.err
check "palloc-diff decodes it" test $? -eq 0

palloc-run -q -r 1 -o run.pb.gz python3 -c pass 2>err
check "palloc-run rewrites a profile symbolized" test $? -eq 0
check "... at the fastest level" test "$(xfl run.pb.gz)" = 4
n=$(inflates run.pb.gz)
check "... and it reads back ($n bytes)" test -n "$n"
palloc-run -q -o run2.pb.gz /bin/true 2>err
n=$(inflates run2.pb.gz)
check "a profile with no samples, delivered to palloc-run, reads back" \
	test -n "$n"
done_testing
