#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the libFuzzer targets (not part of make check): clang with
# -fsanitize=fuzzer,address,undefined, straight from the sources.
# Usage: fuzz/build.sh [OUTDIR [TARGET...]]   (default: fuzz/build, all)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
out=${1:-$here/build}
[ $# -gt 0 ] && shift
CC=${CC:-clang}
lc=$top/libcore

mkdir -p "$out/proto"
proto=${PPROF_PROTO:-/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto}
protoc-c --proto_path="$(dirname "$proto")" --c_out="$out/proto" "$proto"
printf '#define _GNU_SOURCE 1\n#define PACKAGE_VERSION "fuzz"\n' \
	>"$out/config.h"

# build NAME PKGS EXTRA_LIBS SOURCES...
build() {
	name=$1 pkgs=$2 libs=$3
	shift 3
	cflags='' ldlibs=''
	if [ -n "$pkgs" ]; then
		# shellcheck disable=SC2086
		cflags=$(pkg-config --cflags $pkgs)
		# shellcheck disable=SC2086
		ldlibs=$(pkg-config --libs $pkgs)
	fi
	# shellcheck disable=SC2086
	$CC -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -include "$out/config.h" \
		-I"$lc" -I"$lc/base" -I"$lc/agent" -I"$lc/pprof" \
		-I"$lc/wire" -I"$lc/tools" -I"$here" -I"$out/proto" \
		$cflags "$@" $ldlibs $libs -o "$out/$name"
	echo "built $out/$name"
}

pprof="$lc/pprof/pprof.c $lc/pprof/pprof_encode.c $lc/pprof/pprof_decode.c $out/proto/profile.pb-c.c"
all="pprof_decode_fuzz procfs_fuzz cgroup_fuzz mallinfo_xml_fuzz num_fuzz symbols_fuzz symcache_fuzz
pattern_fuzz pprof_comments_fuzz smallfile_fuzz pressure_fuzz record_fuzz timeline_fuzz
elfcheck_fuzz"
# shellcheck disable=SC2086
[ $# -gt 0 ] || set -- $all
for t in "$@"; do
	case $t in
	pprof_decode_fuzz)
		# shellcheck disable=SC2086
		build "$t" "libprotobuf-c zlib" "" "$here/$t.c" $pprof \
			"$lc/tools/pprof_read.c" "$lc/base/num.c" \
			"$lc/base/msg.c" ;;
	procfs_fuzz)
		build "$t" jansson "" "$here/$t.c" "$here/fuzz_util.c" \
			"$lc/tools/procfs.c" "$lc/tools/json.c" \
			"$lc/tools/prom.c" "$lc/tools/msg_cli.c" "$lc/base/grow.c" \
			"$lc/base/smallfile.c" "$lc/base/num.c" "$lc/base/msg.c" ;;
	cgroup_fuzz)
		build "$t" jansson "" "$here/$t.c" "$here/fuzz_util.c" \
			"$lc/tools/cgroup.c" "$lc/tools/procfs.c" "$lc/tools/json.c" \
			"$lc/tools/prom.c" "$lc/tools/msg_cli.c" "$lc/base/grow.c" \
			"$lc/base/smallfile.c" "$lc/base/num.c" "$lc/base/msg.c" ;;
	mallinfo_xml_fuzz)
		build "$t" jansson "" "$here/$t.c" \
			"$lc/tools/mallinfo_xml.c" "$lc/tools/json.c" \
			"$lc/tools/msg_cli.c" "$lc/base/num.c" "$lc/base/msg.c" ;;
	num_fuzz)
		build "$t" "" "" "$here/$t.c" "$lc/base/num.c" "$lc/base/msg.c" ;;
	symbols_fuzz)
		# shellcheck disable=SC2086
		build "$t" "libprotobuf-c zlib libelf libdw" -lstdc++ \
			"$here/$t.c" "$here/fuzz_util.c" "$lc/tools/symbols.c" \
			"$lc/tools/symbols_cache.c" "$lc/tools/symbols_debug.c" \
			"$lc/tools/symbols_dwarf.c" "$lc/tools/symbols_elf.c" \
			"$lc/tools/symcache_index.c" \
			"$lc/tools/infile.c" "$lc/tools/symcache.c" \
			"$lc/tools/perfmap.c" "$lc/pprof/pprof_comments.c" \
			"$lc/base/fmt.c" "$lc/base/grow.c" $pprof "$lc/base/msg.c" ;;
	symcache_fuzz)
		build "$t" "" "" "$here/$t.c" "$here/fuzz_util.c" \
			"$lc/tools/symcache.c" "$lc/base/grow.c" "$lc/base/msg.c" ;;
	elfcheck_fuzz)
		build "$t" libelf "" "$here/$t.c" "$here/fuzz_util.c" \
			"$lc/tools/elfcheck.c" "$lc/base/msg.c" ;;
	pattern_fuzz)
		build "$t" "" "" "$here/$t.c" "$lc/pprof/pattern.c" \
			"$lc/base/fmt.c" ;;
	pprof_comments_fuzz)
		# shellcheck disable=SC2086
		build "$t" "libprotobuf-c zlib" "" "$here/$t.c" $pprof \
			"$lc/pprof/pprof_comments.c" "$lc/base/fmt.c" \
			"$lc/base/msg.c" ;;
	smallfile_fuzz)
		build "$t" "" "" "$here/$t.c" "$here/fuzz_util.c" \
			"$lc/base/smallfile.c" "$lc/base/num.c" \
			"$lc/base/msg.c" ;;
	pressure_fuzz)
		build "$t" "" "" -I"$out" "$here/$t.c" "$here/fuzz_util.c" \
			"$lc/agent/lines.c" "$lc/base/smallfile.c" \
			"$lc/base/num.c" "$lc/base/msg.c" "$lc/base/fmt.c" \
			"$lc/pprof/pprof_comments.c" "$lc/pprof/pprof.c" ;;
	record_fuzz)
		# shellcheck disable=SC2086
		build "$t" "libprotobuf-c zlib" -lm -I"$top/t/helper" \
			"$here/$t.c" "$top/t/helper/record_build.c" \
			"$lc/pprof/record_check.c" "$lc/pprof/record_profile.c" \
			"$lc/pprof/pprof_comments.c" \
			$pprof "$lc/base/fmt.c" "$lc/base/msg.c" ;;
	timeline_fuzz)
		# shellcheck disable=SC2086
		build "$t" "jansson libprotobuf-c zlib smartcols" -lm "$here/$t.c" \
			"$lc/tools/timeline_read.c" "$lc/tools/htmlreport_model.c" \
			"$lc/base/grow.c" "$lc/base/idxtab.c" "$lc/base/safefile.c" \
			"$lc/tools/table.c" \
			"$lc/tools/htmlreport_page.c" "$here/timeline_assets.c" \
			"$lc/tools/json.c" "$lc/tools/infile.c" \
			"$lc/tools/report.c" "$lc/tools/cli.c" "$lc/tools/msg_cli.c" \
			"$lc/tools/outfile.c" "$lc/base/num.c" \
			"$lc/pprof/pprof_comments.c" \
			$pprof "$lc/base/fmt.c" "$lc/base/msg.c" ;;
	*)
		echo "build.sh: unknown target '$t'" >&2
		exit 2 ;;
	esac
done
