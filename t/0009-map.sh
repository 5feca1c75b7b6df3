#!/bin/sh
# SPDX-License-Identifier: MIT
# The map of the tree (libcore/README.md, HACKING.md) names every module:
# each libcore .c by its name (`name` or `name.c`), each header without a
# .c of its own (`name.h`), each command's file and palloc-run's parts;
# and no comment or page names a libcore path from before the tree had
# directories (libcore/num.c for libcore/base/num.c; a callgrind listing
# quoted in bench/agent/README.md keeps the path it printed then); and
# no file of cmd/ is over 700 lines, none of libcore/ over 1100.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"

top=$top_srcdir
[ -f "$top/libcore/README.md" ] || skip_all "no libcore/README.md in '$top'"
plan 4

: >missing
for f in "$top"/libcore/*/*.c "$top"/libcore/*/*.h; do
	b=${f##*/}
	n=${b%.*}
	case $b in
	*.h) [ -f "${f%.h}.c" ] && continue
		grep -qF "\`$b\`" "$top/libcore/README.md" || echo "$b" >>missing ;;
	*) grep -qE "\`$n(\.c)?\`" "$top/libcore/README.md" ||
		echo "$b" >>missing ;;
	esac
done
if [ -s missing ]; then
	not_ok "libcore/README.md names every module"
	sed 's/^/# not named: /' missing
else
	ok "libcore/README.md names every module"
fi

: >missing
for f in "$top"/cmd/*.c; do
	n=${f##*/}
	n=${n%.c}
	case $n in
	palloc-*) n=${n#palloc}; [ "$n" = -run ] && n=palloc-run ;;
	esac
	grep -qF -- "$n" "$top/HACKING.md" || echo "$f" >>missing
done
if [ -s missing ]; then
	not_ok "HACKING.md's tree names every file of cmd/"
	sed 's/^/# not named: /' missing
else
	ok "HACKING.md's tree names every file of cmd/"
fi

# libcore/X.c or .h where X is now under a directory of libcore
(cd "$top/libcore" && ls -- */*.[ch]) | sed 's|.*/||' | sort -u >names
(cd "$top" && grep -rnoE 'libcore/[a-z_]+\.[ch]\b' --include='*.[ch]' \
	--include='*.sh' --include='*.am' --include='*.md' \
	libcore cmd t mk fuzz examples bench HACKING.md README.md 2>/dev/null) |
	grep -v '^t/0009-map.sh:' |
	grep -v '^bench/agent/README.md:[0-9]*:libcore/stacktab.h$' >paths || :
: >stale
while IFS=: read -r file line path; do
	grep -qxF "${path#libcore/}" names && echo "$file:$line: $path" >>stale
done <paths
if [ -s stale ]; then
	not_ok "no path of libcore without its directory"
	sed 's/^/# /' stale
else
	ok "no path of libcore without its directory"
fi

# Files with one job stay small: no file of cmd/ over 700 lines, none of
# libcore/ over 1100 (htmlreport_assets.c is generated from web/).
: >big
for f in "$top"/cmd/*.c "$top"/libcore/*/*.c; do
	case $f in */htmlreport_assets.c) continue ;; esac
	n=$(wc -l <"$f")
	case $f in
	"$top"/cmd/*) max=700 ;;
	*) max=1100 ;;
	esac
	[ "$n" -le "$max" ] || echo "${f#"$top"/}: $n lines (at most $max)" >>big
done
if [ -s big ]; then
	not_ok "no file of cmd/ over 700 lines, none of libcore/ over 1100"
	sed 's/^/# /' big
else
	ok "no file of cmd/ over 700 lines, none of libcore/ over 1100"
fi
