#!/bin/sh
# SPDX-License-Identifier: MIT
# The commands' one profile reader (pprof.h pprof_read_fd: streamed,
# bounded) given what is no profile or too much of one: a gzip bomb (1 GiB
# of zeros, some 1 MB gzipped), a real profile followed by 300 MiB of
# zeros (refused where the profile ends, not at the limit), a 2 GiB sparse
# file, the bomb on stdin. Every command that reads profiles (palloc-dump,
# palloc-diff either side): exit 2, one line, peak RSS under 64 MiB. A big
# valid profile reads; PALLOC_PROFILE_MAX lowers and raises the limit.
. "$top_srcdir/t/lib.sh"
need pprof-gen diff-mkprof gzip truncate head timeout
[ -x /usr/bin/time ] || skip_all "no /usr/bin/time (Debian: time)"
asan palloc-dump && skip_all "AddressSanitizer build: RSS is not the command's"
pprof-gen known base.pb.gz >/dev/null 2>&1 || exit 99

head -c 1G /dev/zero | gzip >bomb.pb.gz || exit 99
{ gzip -dc base.pb.gz && head -c 300M /dev/zero; } | gzip >tail.pb.gz ||
	exit 99
truncate -s 2G sparse.pb.gz || exit 99
prof_len=$(gzip -dc base.pb.gz | wc -c)

plan 30

# refused NAME WANT CMD...: CMD ends at once with exit 2, one line WANT on
# stderr, nothing on stdout, peak RSS under 64 MiB.
refused() {
	_name=$1 _want=$2
	shift 2
	timeout_run 120 /usr/bin/time -f %M -o rss.time "$@" >out 2>err </dev/null
	_rc=$?
	check "$_name: exit 2, nothing on stdout" test $_rc -eq 2 -a ! -s out
	check "$_name: one line" one_line err "$_want"
	_kb=$(tail -n 1 rss.time)
	check "$_name: peak RSS ${_kb} KiB < 64 MiB" test "${_kb:-999999}" -lt 65536
}

zero="malformed protobuf at byte 0: invalid field number 0"
after="malformed protobuf at byte $prof_len: invalid field number 0"
big="larger than 268435456 bytes (2147483648; the limit, PALLOC_PROFILE_MAX)"
# Each file to each reader: "dump" is palloc-dump FILE, "stdin" palloc-dump
# - <FILE, "new" and "base" palloc-diff with FILE on that side.
while read -r file how why; do
	case $why in
	zero) why=$zero ;;
	after) why=$after ;;
	big) why=$big ;;
	esac
	case $how in
	stdin) verb=decode ;;
	*) [ "$file" = sparse.pb.gz ] && verb=read || verb=decode ;;
	esac
	case $how in
	dump) refused "palloc-dump $file" \
		"palloc-dump: cannot $verb profile '$file': $why" \
		palloc-dump "$file" ;;
	stdin) refused "palloc-dump - <$file" \
		"palloc-dump: cannot $verb profile '-': $why" \
		sh -c 'exec palloc-dump - <"$1"' sh "$file" ;;
	new) refused "palloc-diff BASE $file" \
		"palloc-diff: cannot read '$file': $why" \
		palloc-diff base.pb.gz "$file" ;;
	base) refused "palloc-diff $file BASE" \
		"palloc-diff: cannot read '$file': $why" \
		palloc-diff "$file" base.pb.gz ;;
	esac
done <<EOT
bomb.pb.gz dump zero
bomb.pb.gz stdin zero
bomb.pb.gz new zero
bomb.pb.gz base zero
tail.pb.gz dump after
tail.pb.gz new after
sparse.pb.gz dump big
sparse.pb.gz base big
EOT

# A big valid profile (200,000 samples, some 13 MB uncompressed) reads, in
# 64 KiB pieces; a limit below it refuses it; a raised limit reads it.
diff-mkprof --big 200000 1 0 bigp.pb.gz >bigp.len || exit 99
n=$(cat bigp.len)
check "a big valid profile ($n bytes) reads" \
	sh -c 'palloc-dump --top=3 bigp.pb.gz >out 2>err && grep -q method_ out'
PALLOC_PROFILE_MAX=1M palloc-dump --top=3 bigp.pb.gz >out 2>err
check "PALLOC_PROFILE_MAX=1M: the file refused unread, one line" one_line err \
	"palloc-dump: cannot read profile 'bigp.pb.gz': larger than 1048576 bytes ($(wc -c <bigp.pb.gz); the limit, PALLOC_PROFILE_MAX)"
cat bigp.pb.gz | PALLOC_PROFILE_MAX=1M palloc-dump --top=3 - >out 2>err
check "PALLOC_PROFILE_MAX=1M: through a pipe, refused at the limit" \
	sh -c 'test $(wc -l <err) -eq 1 && grep -q "^palloc-dump: cannot decode profile .-.: profile is larger than 1048576 bytes uncompressed (the limit, PALLOC_PROFILE_MAX)" err'
check "PALLOC_PROFILE_MAX=2G: a big one reads" \
	sh -c 'PALLOC_PROFILE_MAX=2G palloc-diff --top=3 bigp.pb.gz bigp.pb.gz >/dev/null'
check "the sparse file is below PALLOC_PROFILE_MAX=3G: read, refused at byte 0" \
	sh -c "PALLOC_PROFILE_MAX=3G timeout 120 palloc-dump sparse.pb.gz 2>&1 | grep -qF \"$zero\""
check "the same profile through a pipe reads" \
	sh -c 'palloc-dump --top=3 - <bigp.pb.gz | grep -q method_'
done_testing
