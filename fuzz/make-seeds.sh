#!/bin/sh
# SPDX-License-Identifier: MIT
# Seed corpora of the text-format fuzz targets, one directory per target:
# the t/fixtures sysroots (captured and kernel-documented files), this
# machine's own /proc/self and cgroup files, glibc's malloc_info of a
# small program, hand-written HTTP heads, tiny ELF files built with cc
# (with and without DWARF, inlined frames, stripped), and the seeds of
# t/fixtures/fuzz for the pattern, comment, smallfile and pressure targets.
# Usage: fuzz/make-seeds.sh [OUTDIR]   (default: fuzz/corpus)
# Needs: cc (gcc), and clang for the DWARF 5 seed (optional).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
fx=$top/t/fixtures
out=${1:-$here/corpus}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sep='%%'

# join FILE... : the files' contents, each followed by a "%%" line ("-"
# for an empty part; a missing file is an empty part)
join() {
	first=1
	for f in "$@"; do
		[ $first = 1 ] || printf '%s\n' "$sep"
		first=0
		[ "$f" = - ] || cat "$f" 2>/dev/null || true
	done
}

# ---- procfs_fuzz: smaps_rollup %% smaps %% status %% comm %% cmdline
d=$out/procfs_fuzz
mkdir -p "$d"
for p in "$fx"/sysroot-*/proc/[0-9]*; do
	n=$(basename "$(dirname "$(dirname "$p")")")-${p##*/}
	smaps=$p/smaps
	[ -f "$smaps" ] || smaps=$fx/sysroot-nosmapsrollup/proc/500/smaps
	join "$p/smaps_rollup" "$smaps" "$p/status" "$p/comm" \
		"$p/cmdline" >"$d/$n"
done
cat /proc/self/smaps_rollup >"$tmp/rollup"
head -n 460 /proc/self/smaps >"$tmp/smaps"
cp /proc/self/status "$tmp/status"
cp /proc/self/comm "$tmp/comm"
cp /proc/self/cmdline "$tmp/cmdline"
join "$tmp/rollup" "$tmp/smaps" "$tmp/status" "$tmp/comm" "$tmp/cmdline" \
	>"$d/live-self"

# ---- cgroup_fuzz: cgroup %% mountinfo %% v2 files %% v1 files (the
# order of cgroup_fuzz.c's table); the fixtures' directories are copied
# to the target's fixed directories fz/ by naming the mount points so.
d=$out/cgroup_fuzz
mkdir -p "$d"
v2() { # DIR: the v2 files of DIR in table order
	for f in memory.stat memory.events memory.pressure memory.current \
		memory.max memory.high memory.peak memory.swap.current; do
		printf '%s\n' "$sep"
		cat "$1/$f" 2>/dev/null || true
	done
}
v1() {
	for f in memory.usage_in_bytes memory.limit_in_bytes \
		memory.max_usage_in_bytes memory.memsw.usage_in_bytes \
		memory.stat memory.oom_control; do
		printf '%s\n' "$sep"
		cat "$1/$f" 2>/dev/null || true
	done
}
mi2='25 24 0:23 / /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 rw,nsdelegate'
mi1='35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory'
c2=$fx/sysroot-cgroup2/sys/fs/cgroup
for dir in "$c2/user.slice/app.service" "$c2/floor.slice" "$c2"; do
	{
		printf '0::/fz\n%s\n%s\n' "$sep" "$mi2"
		v2 "$dir"
		v1 /nonexistent
	} >"$d/v2-$(basename "$dir")"
done
for c in "$fx"/sysroot-v1 "$fx"/sysroot-hybrid "$fx"/sysroot-garbage; do
	vdir=$(find "$c/sys" -name memory.usage_in_bytes 2>/dev/null |
		head -n 1)
	{
		printf '5:memory:/fz\n0::/fz\n%s\n' "$sep"
		cat "$c/proc/self/mountinfo"
		v2 /nonexistent
		v1 "${vdir%/*}"
	} >"$d/v1-${c##*/}"
done
cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
live=/sys/fs/cgroup$cg
{
	printf '0::/fz\n%s\n%s\n' "$sep" "$mi2"
	v2 "$live"
	printf '%s\n' "$sep"
	cat /proc/self/mountinfo
} >"$d/live-v2"
{
	printf '%s\n' "$sep"
	cat /proc/self/mountinfo
	v2 /nonexistent
	v1 /sys/fs/cgroup/memory
} >"$d/live-mountinfo"
printf '%s\n%s\n%s\n%s\n' "4:memory:/fz" "$sep" "$mi1" "$sep" \
	>"$d/v1-mount-only"

# ---- mallinfo_xml_fuzz: a program with a few threads' arenas
d=$out/mallinfo_xml_fuzz
mkdir -p "$d"
cat >"$tmp/mi.c" <<'C'
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
static void *run(void *a)
{
	void *p[64];
	int i;
	for (i = 0; i < 64; i++)
		p[i] = malloc((size_t)(i * 40 + 16));
	for (i = 0; i < 64; i += 2)
		free(p[i]);
	return a;
}
int main(void)
{
	pthread_t t[3];
	int i;
	void *big = malloc(1 << 20);
	for (i = 0; i < 3; i++)
		pthread_create(&t[i], 0, run, 0);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], 0);
	run(0);
	malloc_info(0, stdout);
	free(big);
	return 0;
}
C
cc -O0 -pthread -o "$tmp/mi" "$tmp/mi.c"
"$tmp/mi" >"$d/threads.xml"
head -c 700 "$d/threads.xml" >"$d/truncated.xml"

# ---- num_fuzz
d=$out/num_fuzz
mkdir -p "$d"
for s in 0 42 18446744073709551615 18446744073709551616 -9223372036854775808 \
	4KiB 16M 1G 0.5 2.25 007 ' 1' 1x; do
	printf '%s' "$s" >"$d/$(printf '%s' "$s" | od -An -tx1 | tr -d ' \n')"
done

# ---- pattern_fuzz, pprof_comments_fuzz, smallfile_fuzz, pressure_fuzz,
# record_fuzz (t/helper/record-write FILE RATE compact), timeline_fuzz:
# the hand-written seeds of t/fixtures/fuzz, and this machine's files
for t in pattern_fuzz pprof_comments_fuzz smallfile_fuzz pressure_fuzz \
	record_fuzz timeline_fuzz; do
	mkdir -p "$out/$t"
	cp "$fx/fuzz/$t"/seed-* "$out/$t/"
done
for f in /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory.current \
	/sys/fs/cgroup/memory/memory.limit_in_bytes \
	/sys/fs/cgroup/memory/memory.usage_in_bytes; do
	if [ -r "$f" ]; then
		cat "$f" >"$out/smallfile_fuzz/self-${f##*/}"
	fi
done
{
	printf '80,90,95%s\n' "$sep"
	join /proc/self/cgroup /proc/self/mountinfo
} >"$out/pressure_fuzz/self"

# ---- symbols_fuzz: small ELF files
d=$out/symbols_fuzz
mkdir -p "$d"
cat >"$tmp/lib.c" <<'C'
static inline __attribute__((always_inline)) int leaf(int x)
{
	return x * 3 + 1;
}
__attribute__((noinline)) int mid(int x)
{
	return leaf(x) + leaf(x + 1);
}
int fuzz_entry(int x)
{
	return mid(x) * 2;
}
C
so='-O1 -shared -fPIC -nostdlib -Wl,-e,fuzz_entry'
# shellcheck disable=SC2086
{
	cc -g $so -o "$d/dwarf.so" "$tmp/lib.c"
	cc -g $so -Wl,--build-id -o "$tmp/s.so" "$tmp/lib.c"
	strip -o "$d/stripped.so" "$tmp/s.so"
	cc -g1 -gdwarf-4 $so -o "$d/dwarf4.so" "$tmp/lib.c"
	cc $so -o "$d/symtab.so" "$tmp/lib.c"
	if command -v clang >/dev/null; then
		clang -g -gdwarf-5 $so -o "$d/clang5.so" "$tmp/lib.c"
	fi
}
for t in "$out"/*_fuzz; do
	echo "${t##*/}: $(ls "$t" | wc -l) seed files"
done
