#!/bin/sh
# SPDX-License-Identifier: MIT
# The symbol cache (libcore/tools/symcache.c): a module's index written on the
# first run gives byte-identical profiles to libdw's answers, on that run
# and the next; damaged, foreign, truncated, world-readable or symlinked
# cache files and an open cache directory are refused without harm.
. "$top_srcdir/t/lib.sh"
plan 28

C=$XDG_CACHE_HOME/palloc
mkdir bin && cp "$(command -v pprof-self)" bin/pprof-self || exit 99
# a file changed in the last 2 seconds is never cached (racy): age it
touch -d '1 minute ago' bin/pprof-self || exit 99
bin/pprof-self self.pb.gz >/dev/null || exit 99
raws=self.pb.gz
py=/usr/bin/python3
if [ -x $py ]; then
	# rate 1: python3 and libc, with their debug info when installed
	palloc-run --no-symbolize -q -r 1 -o py.pb.gz \
		$py -c 'x = [str(i) for i in range(3000)]' &&
		raws="$raws py.pb.gz"
fi
diag "raw profiles: $raws"

# sym TAG: symbolize every raw profile into TAG.NAME (decompressed)
sym() {
	for r in $raws; do
		pprof-symbolize "$r" "$1.$r" >"$1.out" 2>"$1.err" || return 1
		gzip -dc "$1.$r" >"$1.${r%.gz}" || return 1
	done
}
# same TAG: TAG's profiles are byte-identical to the uncached ones
same() {
	for r in $raws; do
		cmp -s "un.${r%.gz}" "$1.${r%.gz}" || return 1
	done
}
# state: the cache files, inode, mode and time (a rewrite changes them)
state() { ls -il --time-style=full-iso "$C" | grep '\.idx$' | sort; }
idx_of() { ls "$C" | grep "^$1.*\.idx\$"; }

PALLOC_CACHE=0 sym un
check "PALLOC_CACHE=0: symbolized, no cache directory" \
	test -s un.self.pb -a ! -e "$C"
sym c1
check "first run: an index per module with a build id" \
	test "$(state | wc -l)" -ge 1
self_id=$(pprof-check --dump self.pb.gz | awk '/^mapping 1 / {
	for (i = 1; i <= NF; i++) if ($i ~ /^build_id=/) print substr($i, 10) }')
self_idx=$(idx_of "$self_id")
check "the program's index is named by its build id" test -n "$self_idx"
check "the directory is mode 0700" \
	test "$(stat -c %a "$C")" = 700
check "the files are mode 0600, the user's" \
	test -z "$(find "$C" -name '*.idx' \( ! -perm 600 -o ! -user "$(id -u)" \))"
check "first run: byte-identical to the uncached profiles" same c1
check "and no warning" test ! -s c1.err
state >before
sym c2
check "second run: byte-identical" same c2
state >after
check "second run: read the indexes, rewrote none" cmp -s before after

# A damaged file: 64 zero bytes in the middle.
size=$(stat -c %s "$C/$self_idx")
dd if=/dev/zero of="$C/$self_idx" bs=1 count=64 seek=$((size / 2)) \
	conv=notrunc 2>/dev/null
sym bad1
check "a damaged index: byte-identical profiles" same bad1
check "a damaged index: no warning" test ! -s bad1.err
check "a damaged index is written again" \
	test "$(stat -c %s "$C/$self_idx")" = "$size"
sym bad1b
check "and read the next time" same bad1b

# A file cut short.
truncate -s $((size / 3)) "$C/$self_idx"
sym bad2
check "a truncated index: byte-identical profiles" same bad2
check "a truncated index is written again" \
	test "$(stat -c %s "$C/$self_idx")" = "$size"

# Another module's index under this module's name.
other=$(state | awk '{print $NF}' | grep -v "^$self_idx\$" | head -n 1)
if [ -n "$other" ]; then
	cp "$C/$other" "$C/$self_idx"
	sym bad3
	check "another module's index: byte-identical profiles" same bad3
	check "another module's index is replaced" \
		test "$(stat -c %s "$C/$self_idx")" = "$size"
else
	skip "another module's index (only one module indexed)"
	skip "another module's index is replaced (only one module)"
fi

# A file others may read.
chmod 644 "$C/$self_idx"
sym bad4
check "a world-readable index: byte-identical profiles" same bad4
check "it is replaced by one of mode 0600" \
	test "$(stat -c %a "$C/$self_idx")" = 600

# A symlink: not followed, its target left alone.
cp "$C/$self_idx" victim
cp victim victim.orig
rm "$C/$self_idx"
ln -s "$T/victim" "$C/$self_idx"
sym bad5
check "a symlinked index: byte-identical profiles" same bad5
check "its target is untouched" cmp -s victim victim.orig
check "the link is replaced by a regular file" test ! -L "$C/$self_idx" -a -f "$C/$self_idx"

# An open directory: not used at all.
rm -f "$C"/*.idx
chmod 755 "$C"
sym bad6
check "a directory others can read: byte-identical profiles" same bad6
check "a directory others can read: nothing written" \
	test "$(state | wc -l)" -eq 0
chmod 700 "$C"

# palloc-run: the cache, and --no-cache.
if [ -x $py ]; then
	XDG_CACHE_HOME=$T/nc palloc-run --no-cache -q -r 1 -o nc.pb.gz \
		$py -c 'x = [str(i) for i in range(3000)]'
	check "palloc-run --no-cache: symbolized, no cache written" \
		test -s nc.pb.gz -a ! -e "$T/nc/palloc"
	XDG_CACHE_HOME=$T/yc palloc-run -q -r 1 -o yc.pb.gz \
		$py -c 'x = [str(i) for i in range(3000)]'
	check "palloc-run: indexes written" \
		test -n "$(ls "$T/yc/palloc" 2>/dev/null | grep '\.idx$')"
	XDG_CACHE_HOME=$T/yc palloc-run -q -r 1 -o yc2.pb.gz \
		$py -c 'x = [str(i) for i in range(3000)]'
	pprof-check --dump yc2.pb.gz >yc2.dump
	check "palloc-run with the cache: python3's frames named" \
		grep -q ' PyEval_EvalCode' yc2.dump
else
	skip "palloc-run --no-cache (no $py)"
	skip "palloc-run: indexes written (no $py)"
	skip "palloc-run with the cache (no $py)"
fi
check "no index left behind by the tests' HOME" test ! -e "$T/.cache"
done_testing
