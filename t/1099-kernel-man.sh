#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-smaps(1) and palloc-cgroup(1): mandoc -Tlint clean, and every long
# option of --help in the man page and the bash completion (and back).
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"

need mandoc
plan 8

for cmd in palloc-smaps palloc-cgroup; do
	man=$top_srcdir/man/$cmd.1
	comp=$top_srcdir/contrib/bash-completion/$cmd
	check "$cmd.1: mandoc -Tlint is clean" mandoc -Tlint -W style "$man"
	$cmd --help >help
	grep -oE -- '--[a-z][a-z-]*' help | sort -u >opts.help
	# Options in the man page source: \-\-name, after .B/.BR/.BI or inline.
	sed 's/\\-/-/g' "$man" | grep -oE -- '--[a-z][a-z-]*' | sort -u >opts.man
	grep -oE -- '--[a-z][a-z-]*' "$comp" | sort -u >opts.comp
	check "$cmd: every --help option is in the man page" sh -c \
		'comm -23 opts.help opts.man | grep . && exit 1; exit 0'
	check "$cmd: every --help option is in the completion" sh -c \
		'comm -23 opts.help opts.comp | grep . && exit 1; exit 0'
	check "$cmd: the completion offers nothing --help lacks" sh -c \
		'comm -13 opts.help opts.comp | grep . && exit 1; exit 0'
done
done_testing
