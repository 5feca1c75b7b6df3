#!/bin/sh
# SPDX-License-Identifier: MIT
# A record file (wire/record.h) written by hand (t/helper/record-write)
# made into a pprof by the record's reader (t/helper/record-dump), read
# back by go tool pprof: the values, stacks, mappings and labels the
# agent's encoder would write; a broken record is refused in one line.
. "$top_srcdir/t/lib.sh"
plan 16

record-write known.rec 1 >/dev/null 2>err &&
	ok "record-write writes a record" || not_ok "record-write writes a record"
check "record-dump writes its pprof" record-dump known.rec known.pb.gz
pprof-check known.pb.gz >sum.out 2>&1
check "the profile decodes (libcore)" grep -q . sum.out

record-write exited.rec 4096 exited >/dev/null
record-dump --stats exited.rec >stats.out 2>stats.err
cat >stats.exp <<'EXP'
pid 4242
state 1
exit_status 3
exe known
alloc_count 150
free_count 50
alloc_bytes 51000
samples 15
reentries 1
stacks 8
modules 4
live_threads 1
alloc_bytes_sampled 3047598
inuse_bytes_sampled 3016563
allocator_text_len 30
EXP
check "record-dump --stats: counters of exited and live threads" \
	diff -u stats.exp stats.out

record-write odd.rec 1 odd-seq >/dev/null
record-dump odd.rec odd.pb.gz 2>odd.err
check "a record whose seq stays odd: kept, with a warning" \
	grep -qx 'record-dump: warning: the record kept changing: the copy may be inconsistent' odd.err

record-write bad.rec 1 bad-size >/dev/null
if record-dump bad.rec bad.pb.gz 2>bad.err; then
	not_ok "a record whose size is past the file is refused"
else
	check "a record whose size is past the file: retried, then refused" \
		grep -qx 'record-dump: record: size 19392 outside \[16384, 19376\]' bad.err
fi

# A live process mapping its record, as the agent does: found through
# /proc/PID/maps, listed live; then exited (state EXITED) and killed.
mkdir -p recs
mkfifo in1 in2
record-write --live recs exit <in1 >live1.out &
p1=$!
exec 3>in1
record-write --live recs <in2 >live2.out &
p2=$!
exec 4>in2
retry 100 0.1 test -s live1.out
retry 100 0.1 test -s live2.out
check "record-dump --pid finds the live record in /proc/PID/maps" \
	record-dump --pid "$p1" live.pb.gz
pprof-check live.pb.gz >live.sum 2>&1
check "the live record's profile decodes" grep -q . live.sum
record-dump --pid "$p1" --jit jit.pb.gz 2>jit.err
pprof-check --dump jit.pb.gz >jit.dump 2>&1
# address 0x1000 is in no executable region: the reader's [unmapped];
# the helper's own code is, named from /proc/PID/maps
check "--jit: /proc/PID/maps names an executable region, else [unmapped]" \
	grep -q '^mapping 6 .*/record-write build_id= ' jit.dump
check "--jit: an address in no region: [unmapped]" \
	grep -q '^mapping 5 \[unmapped\]' jit.dump
record-dump --pid "$p1" nojit.pb.gz
pprof-check --dump nojit.pb.gz >nojit.dump 2>&1
check "without --jit: both in [unmapped]" \
	test "$(grep -c '^mapping' nojit.dump)" = 5
record-dump --list recs >list.out
printf '%s live 0 1\n%s live 0 1\n' "$p1" "$p2" | sort -n >list.exp
check "record_list: both live" diff -u list.exp list.out
exec 3>&- 4>&-
wait "$p1"
kill -9 "$p2" 2>/dev/null
wait "$p2" 2>/dev/null
record-dump --list recs >list2.out
printf '%s exited 3 1\n%s killed 0 1\n' "$p1" "$p2" | sort -n >list2.exp
check "record_list: exited (state EXITED) and gone (killed)" \
	diff -u list2.exp list2.out
record-dump --pid $$ none.pb.gz 2>none.err
check "a process without a record: one line" one_line none.err \
	"record-dump: no record mapped by process '$$' (not running under palloc, or an agent without records)"

if ! command -v go >/dev/null 2>&1; then
	skip "go (golang-go) not installed"
	skip "go (golang-go) not installed"
	done_testing
fi
pprof -raw known.pb.gz >raw.out 2>raw.err
sed -n '/^Samples:/,/^Locations/p' raw.out >samples.out
cat >samples.exp <<'EXP'
Samples:
alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt] peak_inuse_objects/count peak_inuse_space/bytes
         15      41060          5      16434          4      16384: 1 2 
                thread:[main]
          3    3000000          3    3000000          1    1000000: 3 2 
                thread:[worker]
        100       6400          0          0          0          0: 4 
          1         10          0          0          0          0: 5 
          2         20          2         20          2         20: 6 
                thread:[main]
          1          8          1          8          0          0: 7 
                thread:[main]
          1        100          1        100          1        100: 1 
                thread:[main]
Locations
EXP
check "pprof -raw: the samples, values and labels" \
	diff -u samples.exp samples.out
# (pprof lists mappings by address, ours are in order of use)
sed -n '/^Mappings/,$p' raw.out >maps.out
cat >maps.exp <<'EXP'
Mappings
1: 0x555555554000/0x555555559000/0x0 /usr/bin/known abcdef0123456789 
2: 0x7f0000000000/0x7f0000100000/0x1000 /lib/x86_64-linux-gnu/libc.so.6 00112233 
3: 0x7f1000000000/0x7f1000010000/0x0 /opt/plugin.so  
4: 0x7f1000000000/0x7f1000010000/0x0 /opt/other.so  
5: 0x1000/0x2000/0x0 [unmapped]  
EXP
check "pprof -raw: the mappings, unloaded and [unmapped] ones too" \
	diff -u maps.exp maps.out
done_testing
