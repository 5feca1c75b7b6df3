#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the libFuzzer target for the profile decoder (not part of make
# check): clang with -fsanitize=fuzzer,address,undefined, straight from the
# sources. Usage: fuzz/build.sh [OUTDIR]   (default: fuzz/build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
out=${1:-$here/build}
CC=${CC:-clang}

mkdir -p "$out/proto"
protoc-c --proto_path="$top/proto" --c_out="$out/proto" \
	"$top/proto/profile.proto"
printf '#define _GNU_SOURCE 1\n#define PACKAGE_VERSION "fuzz"\n' \
	>"$out/config.h"
# shellcheck disable=SC2046
$CC -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -include "$out/config.h" \
	-I"$top/libcore" -I"$out/proto" \
	$(pkg-config --cflags libprotobuf-c zlib) \
	"$here/pprof_decode_fuzz.c" "$top/libcore/pprof.c" \
	"$top/libcore/pprof_codec.c" "$top/libcore/msg.c" \
	"$out/proto/profile.pb-c.c" \
	$(pkg-config --libs libprotobuf-c zlib) \
	-o "$out/pprof_decode_fuzz"
echo "built $out/pprof_decode_fuzz"
