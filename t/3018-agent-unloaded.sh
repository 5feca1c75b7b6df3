#!/bin/sh
# SPDX-License-Identifier: MIT
# Frames of a plugin unloaded by dlclose keep a mapping
# (path, build id, range) and are named, also when another plugin is then
# loaded at the same address: a stack recorded before belongs to the old
# one. Plugins built -O2 -fomit-frame-pointer, every allocation recorded.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/lib-agent.sh"
need_agent
need_pprof
PATH=$top_builddir/cmd:$top_builddir/t/helper:$PATH

libs=$top_builddir/t/helper/.libs
a=$libs/libpluga.so
b=$libs/libplugb.so
[ -f "$a" ] && [ -f "$b" ] || skip_all "libpluga.so, libplugb.so not built"
id_a=$(readelf -n "$a" | sed -n 's/.*Build ID: //p')
id_b=$(readelf -n "$b" | sed -n 's/.*Build ID: //p')

# traces PROFILE OUT: one line per stack, "INUSE_OBJECTS f1;f2;...",
# leaf first, from pprof -traces.
traces() {
	pprof -sample_index=inuse_objects -traces "$1" 2>"$2.err" | awk '
		function flush() { if (v != "") print v " " s; v = ""; s = "" }
		/^-+\+-+$/ { flush(); next }
		$1 == "thread:" { next }
		NF >= 2 && $1 ~ /^[0-9]+$/ { flush(); v = $1; s = $2; next }
		NF == 1 && v != "" { s = s ";" $1 }
		END { flush() }
	' >"$2"
}

plan 14

# check_run MODE: plugin-host under palloc-run at rate 1, B unloaded too
# at the end with MODE close, kept loaded with MODE keep.
check_run() {
	palloc-run -q -r 1 -o $1.pb.gz plugin-host "$a" "$b" $1 >$1.out 2>$1.err
	rc=$?
	if [ $rc -eq 3 ]; then
		skip "$1: the loader put libplugb.so elsewhere: $(cat $1.out)"
		skip "$1"; skip "$1"; skip "$1"; skip "$1"; skip "$1"; skip "$1"
		return
	fi
	check "$1: plugin-host runs, libplugb.so where libpluga.so was" \
		[ $rc -eq 0 ]
	pprof-check --dump $1.pb.gz >$1.dump 2>&1
	n=$(grep -c '^0x[0-9a-f]* -' $1.dump)
	check "$1: every location has a mapping ($n without)" [ "$n" = 0 ]
	check "$1: mapping of the unloaded libpluga.so, build id $id_a" \
		grep -q "^mapping [0-9]* $a build_id=$id_a functions=1" $1.dump
	check "$1: mapping of libplugb.so, build id $id_b" \
		grep -q "^mapping [0-9]* $b build_id=$id_b functions=1" $1.dump
	traces $1.pb.gz $1.tr
	check "$1: 3 blocks of plugin_a_run, called from main" \
		grep -q '^3 plugin_a_run;main;' $1.tr
	check "$1: 3 of plugin_a_fill, from plugin_a_run" \
		grep -q '^3 plugin_a_fill;plugin_a_run;main;' $1.tr
	check "$1: 4 of plugin_b_run and 4 of plugin_b_fill" \
		eval "grep -q '^4 plugin_b_run;main;' $1.tr &&
		grep -q '^4 plugin_b_fill;plugin_b_run;main;' $1.tr"
	if [ $_failed -ne 0 ]; then
		sed 's/^/# /' $1.err $1.tr
		grep '^mapping' $1.dump | sed 's/^/# /'
	fi
}

check_run close
check_run keep
done_testing
