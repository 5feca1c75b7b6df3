#!/bin/sh
# SPDX-License-Identifier: MIT
# Debian's git under palloc-run, at the default rate and at rate 1: a
# script that makes a repository of 300 generated files, commits twice,
# counts the log and runs git gc (which starts pack-refs, reflog, repack,
# pack-objects, prune, worktree, rerere: a process each). Same output,
# error and status as without palloc; one profile per git process (as
# many as GIT_TRACE counts), all read by go tool pprof; the summary cut
# at 10 lines; the largest profile's names.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
[ -x /usr/bin/git ] || skip_all "git is not installed"
need bash
. "$top_srcdir/t/lib-run.sh"

mkdir src
i=0
while [ $i -lt 300 ]; do
	printf 'file %d\nline %d\n' $i $((i * 7)) >src/f$i.txt
	i=$((i + 1))
done
cat >work.sh <<'SEOF'
set -e
git init -q repo
cp -r src/. repo/
cd repo
git add .
git commit -q -m first
for f in f1*.txt; do echo change >>"$f"; done
git commit -q -a -m second
git log --oneline | wc -l
git gc -q
git count-objects -v | grep -E '^(count|in-pack|packs):'
git log --oneline
SEOF
# Fixed dates and identity: the same commit ids in every run. (stdin is
# /dev/null below: git gc's repack would otherwise read whatever make check
# left on it as revisions.)
GIT_AUTHOR_DATE=2020-01-01T00:00:00Z GIT_COMMITTER_DATE=2020-01-01T00:00:00Z
GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=T
GIT_COMMITTER_EMAIL=t@example.org HOME=$T GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_DATE GIT_COMMITTER_DATE GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL \
	GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL HOME GIT_CONFIG_NOSYSTEM

# No background gc or maintenance that could outlive palloc-run.
printf '[gc]\n\tautoDetach = false\n' >"$HOME/.gitconfig"

mkdir base && cp -r src work.sh base/ && (cd base && bash work.sh </dev/null) \
	>base.out 2>base.err
base_rc=$?
diag "without palloc: exit $base_rc, $(tr '\n' ' ' <base.out)"

for rate in default 1; do
	set --
	[ "$rate" = default ] || set -- -r "$rate"
	mkdir run.$rate prof.$rate && cp -r src work.sh run.$rate/ || exit 99
	(cd run.$rate && GIT_TRACE=$T/trace.$rate palloc-run "$@" \
		-o "$T/prof.$rate/p.%e.%p.pb.gz" bash work.sh </dev/null) >out 2>err
	rc=$?
	check "rate $rate: same exit status ($rc)" [ "$rc" -eq "$base_rc" ]
	check "rate $rate: same output" cmp -s out base.out
	check_same_stderr "rate $rate" base.err err
	ngit=$(grep -c 'trace: built-in: git' trace.$rate)
	set -- prof.$rate/p.git.*.pb.gz
	check "rate $rate: one profile per git process ($# for $ngit)" \
		[ "$#" -eq "$ngit" -a "$ngit" -ge 8 ]
	check_many "rate $rate" "$T/prof.$rate" err
	diag "rate $rate: $nprof profiles, the largest ${largest#$T/}"
	check_real "git, rate $rate" "$largest" err ' [A-Za-z_][A-Za-z_0-9]*$' \
		/usr/bin/git
done

echo "1..$_n"
done_testing
