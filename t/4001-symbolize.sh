#!/bin/sh
# SPDX-License-Identifier: MIT
# libcore/symbols on a raw profile of a real stack (t/helper/pprof-self):
# names, files, lines and inlined frames from DWARF, build ids checked, and
# go tool pprof shows the names without access to the binaries.
. "$top_srcdir/t/lib.sh"
need_pprof
plan 16

# A copy of the helper that is deleted before pprof runs, so pprof cannot
# symbolize from the binary (it would try the mapping's path).
mkdir bin && cp "$(command -v pprof-self)" bin/pprof-self || exit 99
bin/pprof-self raw.pb.gz >lines.out && ok "pprof-self writes a raw profile" ||
	not_ok "pprof-self writes a raw profile"
l_inl=$(awk '$1 == "self_inl" {print $2}' lines.out)
l_b=$(awk '$1 == "self_b" {print $2}' lines.out)
pprof-symbolize raw.pb.gz sym.pb.gz >stats.out 2>stats.err
bin/pprof-self --bad-build-id bad.pb.gz >/dev/null &&
	pprof-symbolize bad.pb.gz badsym.pb.gz >bad.out 2>bad.err
rm -r bin

pprof -traces raw.pb.gz >raw.traces 2>&1
check "the raw profile has no function names" \
	test "$(grep -c 'self_' raw.traces)" -eq 0

diag "$(cat stats.out)"
check "every location symbolized, no warning" \
	grep -q '^locations \([0-9]*\) symbolized \1 mappings [1-9][0-9]* missing 0 mismatched 0' stats.out
check "no warning" test ! -s stats.err

# The binary is not where pprof could find it: PPROF_BINARY_PATH points
# nowhere (t/lib.sh) and the helper's name is not on pprof's path.
pprof -traces sym.pb.gz >sym.traces 2>&1
sed -n '/^-----/,$p' sym.traces | awk 'NF {print $NF == "(inline)" ? $(NF-1) " (inline)" : $NF}' |
	grep -E '^(self_|main|-)' >frames.out
cat >frames.exp <<'EXP'
-----------+-------------------------------------------------------
self_c
self_inl (inline)
self_b
self_a
main
-----------+-------------------------------------------------------
EXP
check "pprof -traces: self_c, self_inl inlined into self_b, self_a, main" \
	diff -u frames.exp frames.out

pprof-check --dump sym.pb.gz >dump.out
check "self_c has its file and a line" \
	grep -qE ' self_c ([^ ]*/)?t/helper/pprof-self\.c:[1-9][0-9]*$' dump.out
check "the inlined call: self_inl at line $l_inl, then self_b at line $l_b" \
	grep -qE " self_inl [^ ]*pprof-self\.c:$l_inl; self_b [^ ]*pprof-self\.c:$l_b\$" dump.out
check "the main mapping says it has functions, files, lines, inlines" \
	grep -qE '^mapping 1 .*/pprof-self build_id=[0-9a-f]{40} functions=1 filenames=1 lines=1 inline=1$' dump.out

pprof -top -nodecount=20 sym.pb.gz >top.out 2>&1
check "pprof -top shows the names" \
	grep -qE '1kB +100% +self_c$' top.out

# A file whose build id differs from the profile's is refused.
diag "$(cat bad.err)"
check "a build id mismatch is counted" grep -q ' mismatched 1 ' bad.out
check "and warned about, naming the file" \
	grep -q "^pprof-symbolize: warning: build id mismatch for '.*pprof-self': the profile has 0123456789abcdef, the file has [0-9a-f]*; not symbolized\$" bad.err
pprof-check --dump badsym.pb.gz >baddump.out
check "and its frames stay unsymbolized" \
	test "$(grep -c 'self_' baddump.out)" -eq 0

# Separate debug info: a stripped binary with a .gnu_debuglink, then one
# found only by build id under a root prefix (/proc/PID/root for live
# processes): ROOT/usr/lib/debug/.build-id/xx/rest.debug.
if command -v objcopy >/dev/null 2>&1; then
	mkdir dbg &&
		cp "$(command -v pprof-self)" dbg/pprof-self &&
		objcopy --only-keep-debug dbg/pprof-self dbg/pprof-self.debug &&
		objcopy --strip-debug --add-gnu-debuglink=dbg/pprof-self.debug \
			dbg/pprof-self &&
		dbg/pprof-self link.pb.gz >/dev/null &&
		pprof-symbolize link.pb.gz linksym.pb.gz >/dev/null &&
		pprof-check --dump linksym.pb.gz >link.out
	check "the stripped copy has no DWARF of its own" \
		test "$(readelf -S dbg/pprof-self | grep -c '\.debug_info')" -eq 0
	check "its lines come from the .gnu_debuglink file" \
		grep -qE " self_inl [^ ]*pprof-self\.c:$l_inl; self_b [^ ]*pprof-self\.c:$l_b\$" link.out

	id=$(awk '/^mapping 1 / {sub("build_id=", "", $4); print $4}' link.out)
	mkdir -p "root$T/dbg" "root/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)" &&
		mv dbg/pprof-self.debug "root/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug" &&
		mv dbg/pprof-self "root$T/dbg/pprof-self" &&
		pprof-symbolize -r "$T/root" link.pb.gz rootsym.pb.gz >root.out 2>&1 &&
		pprof-check --dump rootsym.pb.gz >rootdump.out
	diag "$(cat root.out)"
	check "under a root prefix, by build id: names, files, lines, inlines" \
		grep -qE " self_inl [^ ]*pprof-self\.c:$l_inl; self_b [^ ]*pprof-self\.c:$l_b\$" rootdump.out
	check "the binary is found under the root (libc is not there)" \
		grep -qE '^mapping 1 .*/dbg/pprof-self build_id=[0-9a-f]+ functions=1 filenames=1 lines=1 inline=1$' rootdump.out
else
	skip "objcopy not installed"
	skip "objcopy not installed"
	skip "objcopy not installed"
	skip "objcopy not installed"
fi
done_testing
