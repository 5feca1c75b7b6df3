#!/bin/sh
# SPDX-License-Identifier: MIT
# The command-line contract (HACKING.md "Commands", "Errors") for every
# palloc-* command built in cmd/, and mandoc -Tlint over every man page.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"

cmds=
for f in "$top_builddir"/cmd/palloc-*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	case ${f##*/} in *.*) continue ;; esac
	cmds="$cmds ${f##*/}"
done
[ -n "$cmds" ] || skip_all "no command built in $top_builddir/cmd"
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' \
	"$top_builddir/config.h")

# roff to plain text for option lookups: "\-\-foo" and "\fB--foo\fR".
unroff() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' "$1"; }
# The long options (--foo-bar) named in a file, one per line, sorted.
longopts() { grep -o -e '--[a-z][a-z0-9-]*' "$1" | sort -u; }
# has_opt OPT FILE: OPT appears in FILE as a whole option name.
has_opt() { grep -q -E -e "$1([^a-z0-9-]|\$)" "$2"; }
have_mandoc=
command -v mandoc >/dev/null 2>&1 && have_mandoc=1
# lint PAGE: one test, mandoc -Tlint silent and exit 0 (style included).
lint() {
	if [ -z "$have_mandoc" ]; then
		skip "mandoc not installed: ${1##*/} not linted"
		return
	fi
	mandoc -Tlint "$1" >lint.out 2>&1
	_rc=$?
	if [ "$_rc" -eq 0 ] && [ ! -s lint.out ]; then
		ok "${1##*/}: mandoc -Tlint is clean"
	else
		not_ok "${1##*/}: mandoc -Tlint (exit $_rc)"
		sed 's/^/# /' lint.out
	fi
}

# bad_usage DESC ERE ARGS...: "$c ARGS" is a usage error: exit $usage_rc,
# nothing on stdout, two lines on stderr, the first matching ERE, the
# second the hint. One test.
bad_usage() {
	_desc=$1 _re=$2
	shift 2
	"$c" "$@" >bad.out 2>bad.err
	_rc=$?
	if [ "$_rc" -eq "$usage_rc" ] && [ ! -s bad.out ] &&
		[ "$(wc -l <bad.err)" -eq 2 ] &&
		head -1 bad.err | grep -Eq -e "$_re" &&
		[ "$(tail -1 bad.err)" = \
			"Try '$c --help' for more information." ]; then
		ok "$c $_desc"
	else
		not_ok "$c $_desc (exit $_rc, want $usage_rc)"
		sed 's/^/# /' bad.out bad.err
	fi
}

for c in $cmds; do
	case $c in palloc-run) usage_rc=125 ;; *) usage_rc=2 ;; esac
	man=$top_srcdir/man/$c.1
	comp=$top_srcdir/contrib/bash-completion/$c

	"$c" --help >help.out 2>help.err
	rc=$?
	if [ "$rc" -eq 0 ] && [ ! -s help.err ] &&
		head -1 help.out | grep -q '^Usage:$' &&
		grep -q "^ $c " help.out &&
		tail -1 help.out | grep -q "$c(1)"; then
		ok "$c --help: usage on stdout, exit 0"
	else
		not_ok "$c --help: usage on stdout, exit 0 (exit $rc)"
		sed 's/^/# /' help.out help.err | head -20
	fi

	"$c" -h >h.out 2>&1
	check "$c -h is --help" cmp -s h.out help.out

	"$c" --version >version.out 2>version.err
	rc=$?
	if [ "$rc" -eq 0 ] && [ ! -s version.err ] &&
		[ "$(head -1 version.out)" = "$c from palloc $version" ]; then
		ok "$c --version: '$c from palloc $version', exit 0"
	else
		not_ok "$c --version (exit $rc)"
		sed 's/^/# /' version.out version.err
	fi
	"$c" -V >v.out 2>&1
	check "$c -V is --version" cmp -s v.out version.out

	bad_usage "--no-such-option: exit $usage_rc, 2 stderr lines" \
		"^$c: .*'--no-such-option'" --no-such-option
	bad_usage "-Z: exit $usage_rc, 2 stderr lines, no stdout" "" -Z
	# glibc's own wording, through cli_bad_option().
	bad_usage "--help=x: doesn't allow an argument" \
		"^$c: option '--help' doesn't allow an argument\$" --help=x
	bad_usage "-o: option requires an argument" \
		"^$c: option requires an argument -- 'o'\$" -o

	longopts help.out >help.opts
	if [ -f "$man" ]; then
		unroff "$man" >man.txt
		missing=
		for o in $(cat help.opts); do
			has_opt "$o" man.txt || missing="$missing $o"
		done
		if [ -z "$missing" ]; then
			ok "$c: every --help option is in $c.1"
		else
			not_ok "$c: not in man/$c.1:$missing"
		fi
		lint "$man"
	else
		not_ok "$c: man page man/$c.1 exists"
		not_ok "$c: man page lint (no page)"
	fi

	if [ -f "$comp" ]; then
		missing=
		for o in $(cat help.opts); do
			has_opt "$o" "$comp" || missing="$missing $o"
		done
		if [ -z "$missing" ]; then
			ok "$c: every --help option is in its bash completion"
		else
			not_ok "$c: not in contrib/bash-completion/$c:$missing"
		fi
		# And the completion offers nothing --help does not document.
		extra=
		for o in $(longopts "$comp"); do
			has_opt "$o" help.out || extra="$extra $o"
		done
		if [ -z "$extra" ] && bash -n "$comp"; then
			ok "$c: completion parses, offers only documented options"
		else
			not_ok "$c: completion offers undocumented:$extra"
		fi
	else
		not_ok "$c: completion contrib/bash-completion/$c exists"
		not_ok "$c: completion options (no file)"
	fi
done

# Every other page in man/: palloc(7) and pages of commands to come.
if [ -n "$have_mandoc" ]; then
	for m in "$top_srcdir"/man/*.[1-8]; do
		[ -f "$m" ] || continue
		case ${m##*/} in palloc-*.1)
			[ -x "$top_builddir/cmd/$(basename "$m" .1)" ] && continue ;;
		esac
		lint "$m"
	done
else
	skip "mandoc not installed: man pages not linted"
fi

echo "1..$_n"
done_testing
