#!/bin/sh
# SPDX-License-Identifier: MIT
# A mapping is marked symbolized (has_functions and the
# other has_* flags) only when every one of its locations is named. pprof
# re-symbolizes only mappings with none of has_functions, has_filenames,
# has_line_numbers set (internal/symbolizer, newMapping): a stripped
# library whose static functions have no name must not carry them, so that
# a later run with its debug symbols installed names the rest.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
need strip readelf
PATH=$top_builddir/cmd:$top_builddir/t/helper:$PATH

libs=$top_builddir/t/helper/.libs
[ -f "$libs/libpluga.so" ] || skip_all "libpluga.so not built"
# libpluga.so stripped: plugin_a_run is exported (named from .dynsym),
# the static plugin_a_fill is not.
strip -o libpluga.so "$libs/libpluga.so" || skip_all "strip failed"
id=$(readelf -n libpluga.so | sed -n 's/.*Build ID: //p')

# flags PROFILE NAME: the has_* flags of the mapping of the file NAME,
# as pprof -raw prints them: "flags:[FN][FL][LN][IN]", "flags:" for none.
flags() {
	pprof -raw -symbolize=none "$1" 2>/dev/null | awk -v f="$2" '
		/^Mappings/ { m = 1; next }
		m && $3 ~ ("/" f "$") {
			print "flags:" ($NF ~ /^\[/ ? $NF : ""); exit
		}'
}

plan 6

palloc-run -q -r 1 -o p.pb.gz plugin-host "$T/libpluga.so" - >out 2>err
check "plugin-host runs" [ $? -eq 0 ]
pprof -sample_index=inuse_objects -traces p.pb.gz >p.tr 2>&1
check "the stripped library names its exported function only" \
	eval "grep -q plugin_a_run p.tr && ! grep -q plugin_a_fill p.tr"
check "partly named libpluga.so: no has_* flag" \
	[ "$(flags p.pb.gz libpluga.so)" = "flags:" ]
check "fully named plugin-host: has_functions" \
	eval "flags p.pb.gz plugin-host | grep -q '^flags:\[FN\]'"

# The debug symbols installed (the unstripped file by build id under
# --root): symbolizing again names the rest and marks the mapping.
mkdir -p "root$T" "root/usr/lib/debug/.build-id/${id%"${id#??}"}"
cp libpluga.so "root$T/"
cp "$libs/libpluga.so" "root/usr/lib/debug/.build-id/${id%"${id#??}"}/${id#??}.debug"
palloc-dump --root "$T/root" --symbolize -o q.pb.gz p.pb.gz 2>q.err
pprof -sample_index=inuse_objects -traces q.pb.gz >q.tr 2>&1
check "symbolized again: plugin_a_fill named" grep -q plugin_a_fill q.tr
check "... and libpluga.so has_functions now" \
	eval "flags q.pb.gz libpluga.so | grep -q '^flags:\[FN\]'"
if [ $_failed -ne 0 ]; then
	pprof -raw -symbolize=none p.pb.gz 2>&1 | sed -n '/^Mappings/,$p' |
		sed 's/^/# /'
	sed 's/^/# /' p.tr q.err q.tr
fi
done_testing
