#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent writes its profile itself (libcore/pprof/pprof_pack.c, no
# protobuf-c or zlib inside the target): under LD_PRELOAD alone, at exit,
# a gzip file of stored DEFLATE blocks that gzip(1), Go's pprof and
# palloc's decoder read, with the exact values of rate 1; a profile
# larger than 64 KiB spans several blocks.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
need python3 gzip alloc-exact pprof-check

plan 29

# stored FILE: prints "BLOCKS SIZE" when FILE is one gzip member (no
# flags) holding only stored blocks (BTYPE 00, each LEN = ~NLEN, 65535
# bytes but the last, BFINAL on the last only), with zlib's CRC-32 and
# the size; fails saying why otherwise.
stored() {
	python3 - "$1" <<'PYEOF'
import sys, zlib
d = open(sys.argv[1], "rb").read()
if d[:4] != b"\x1f\x8b\x08\x00":
	sys.exit("not a gzip file without flags")
pos, data, n = 10, b"", 0
while True:
	h = d[pos]
	if h & 6:
		sys.exit("block %d is compressed (BTYPE %d)" % (n, h >> 1 & 3))
	ln = int.from_bytes(d[pos + 1:pos + 3], "little")
	nln = int.from_bytes(d[pos + 3:pos + 5], "little")
	if ln ^ nln != 0xffff or (not h & 1 and ln != 65535) or h > 1:
		sys.exit("block %d: bad header" % n)
	data += d[pos + 5:pos + 5 + ln]
	pos += 5 + ln
	n += 1
	if h & 1:
		break
crc = int.from_bytes(d[pos:pos + 4], "little")
size = int.from_bytes(d[pos + 4:pos + 8], "little")
if pos + 8 != len(d) or crc != zlib.crc32(data) or size != len(data):
	sys.exit("bad trailer")
print(n, len(data))
PYEOF
}

# totals RAW: the sums of the four sample values in `pprof -raw` output
totals() {
	awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && /^ *[0-9-]+( +[0-9-]+)*:/ {
			sub(/:.*/, ""); split($0, v, " ")
			a += v[1]; b += v[2]; c += v[3]; d += v[4]
		}
		END { print a + 0, b + 0, c + 0, d + 0 }' "$1"
}

# counted COMMENTS: the agent's counters as "ALLOCS BYTES LIVE", what the
# alloc_objects, alloc_space and inuse_objects totals must be at rate 1
counted() {
	sed -n 's/^counters: alloc_count \([0-9]*\), free_count \([0-9]*\), alloc_bytes \([0-9]*\)$/\1 \3 \2/p' \
		"$1" | awk '{ print $1, $2, $1 - $3 }'
}

# LD_PRELOAD alone: no palloc-run to deliver to
unset PALLOC_COLLECT

LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 alloc-exact basic \
	>truth.txt 2>err.txt
check "alloc-exact runs under the agent" test $? -eq 0
f=$(one_profile "palloc.alloc-exact.*.pb.gz")
check "it wrote one profile at exit" test -n "$f"
s=$(stored "$f" 2>stored.err)
if [ -n "$s" ]; then
	ok "a gzip of stored blocks with zlib's CRC-32 and size ($s)"
else
	not_ok "a gzip of stored blocks with zlib's CRC-32 and size"
	diag "$(cat stored.err)"
fi
check "gzip -t finds it sound" gzip -t "$f"
if raw_values "$f" values.txt; then
	ok "Go's pprof reads it"
else
	not_ok "Go's pprof reads it"
	diag "$(cat values.txt.err)"
fi
check_sites truth.txt values.txt
comments "$f" comments.txt
t=$(totals values.txt.raw)
c=$(counted comments.txt)
check "totals are the agent's counters ($t; $c)" \
	test -n "$c" -a "${t% *}" = "$c"
pprof-check "$f" >check.out 2>&1 && ok "palloc's decoder reads it" ||
	{ not_ok "palloc's decoder reads it"; diag "$(cat check.out)"; }
check "no message on stderr" test ! -s err.txt

# Every allocation of python3's start: more than 64 KiB of profile.
LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 PALLOC_OUTPUT=py.pb.gz \
	python3 -c 'import json' 2>err.txt
check "python3 runs under the agent" test $? -eq 0
s=$(stored py.pb.gz 2>stored.err)
if [ "${s%% *}" -ge 2 ] 2>/dev/null; then
	ok "a large profile: several stored blocks ($s)"
else
	not_ok "a large profile: several stored blocks ($s)"
	diag "$(cat stored.err)"
fi
check "... that gzip -t finds sound" gzip -t py.pb.gz
pprof -raw py.pb.gz >py.raw 2>py.err && ok "... that Go's pprof reads" ||
	{ not_ok "... that Go's pprof reads"; diag "$(cat py.err)"; }
sed -n 's/^Comment: //p' py.raw >py.comments
t=$(totals py.raw)
c=$(counted py.comments)
check "... whose totals are the agent's counters ($t; $c)" \
	test -n "$c" -a "${t% *}" = "$c"
pprof-check py.pb.gz >check.out 2>&1 &&
	ok "... and that palloc's decoder reads" ||
	{ not_ok "... and that palloc's decoder reads"; diag "$(cat check.out)"; }
check "... no message on stderr" test ! -s err.txt
done_testing
