#!/bin/sh
# SPDX-License-Identifier: MIT
# HACKING.md "Style": every C file under libcore/, cmd/, examples/
# and t/ is as the committed .clang-format (clang-format 14) writes it, and
# cppcheck finds nothing. Files not clean yet are listed in PENDING_*
# below: left out of the verdict and named in a diag line, to be fixed by
# their authors and then removed from the lists.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"

# Files exempted while their authors are still at work on them: none now.
PENDING_FORMAT=
PENDING_CPPCHECK=

have_format= have_cppcheck=
if command -v clang-format >/dev/null 2>&1; then
	# Other versions format some constructs differently: only the
	# version the .clang-format was written for is a verdict.
	fmt_version=$(clang-format --version |
		sed -n 's/.*clang-format version \([0-9]*\)\..*/\1/p')
	[ "$fmt_version" = 14 ] && have_format=1
fi
command -v cppcheck >/dev/null 2>&1 && have_cppcheck=1
[ -n "$have_format$have_cppcheck" ] ||
	skip_all "neither clang-format 14 nor cppcheck installed"
plan 2

# in_list WORD LIST: WORD is one of the words of LIST.
in_list() {
	for _w in $2; do
		[ "$_w" = "$1" ] && return 0
	done
	return 1
}

# The files git tracks in a checkout (a file being written and not yet
# added is not judged), every file in a tarball.
cd "$top_srcdir" || exit 99
if [ -e .git ] && command -v git >/dev/null 2>&1; then
	git ls-files -- 'libcore/*.[ch]' 'cmd/*.[ch]' 'examples/*.[ch]' \
		't/*.[ch]'
else
	find libcore cmd examples t -name '*.[ch]'
fi | grep -v '\.pb-c\.[ch]$' | LC_ALL=C sort >"$T/all" || exit 99
while read -r f; do
	[ -f "$f" ] && echo "$f"
done <"$T/all" >"$T/c-files"

if [ -n "$have_format" ]; then
	: >"$T/format.out"
	checked=0
	pending=
	while read -r f; do
		if in_list "$f" "$PENDING_FORMAT"; then
			clang-format --dry-run --Werror --style=file "$f" \
				>/dev/null 2>&1 || pending="$pending $f"
			continue
		fi
		checked=$((checked + 1))
		clang-format --dry-run --Werror --style=file "$f" \
			>>"$T/format.out" 2>&1
	done <"$T/c-files"
	if [ -s "$T/format.out" ]; then
		not_ok "clang-format: $checked files as .clang-format writes them"
		grep -E '(warning|error):' "$T/format.out" | cut -d: -f1 | sort -u |
			sed 's/^/# not formatted: /'
		diag "fix with: clang-format -i FILE (clang-format 14)"
	else
		ok "clang-format: $checked files as .clang-format writes them"
	fi
	[ -n "$pending" ] && diag "clang-format, pending:$pending"
else
	skip "clang-format 14 not installed (Debian: clang-format-14)"
fi

if [ -n "$have_cppcheck" ]; then
	# The .c files (headers are read through them) but the pending.
	set --
	while read -r f; do
		case $f in *.c) ;; *) continue ;; esac
		in_list "$f" "$PENDING_CPPCHECK" || set -- "$@" "$f"
	done <"$T/c-files"
	if cppcheck --error-exitcode=1 --enable=warning,performance,portability \
		--inline-suppr -q --suppress=missingIncludeSystem \
		--library=t/cppcheck.cfg -I libcore -I libcore/base -I libcore/agent \
		-I libcore/pprof -I libcore/wire -I libcore/tools -I t/unit -I t/helper \
		"$@" >"$T/cppcheck.out" 2>&1; then
		ok "cppcheck: no finding in $# files"
	else
		not_ok "cppcheck: findings in $# files"
		sed 's/^/# /' "$T/cppcheck.out"
	fi
	[ -n "$PENDING_CPPCHECK" ] && diag "cppcheck, pending: $PENDING_CPPCHECK"
else
	skip "cppcheck not installed"
fi
done_testing
