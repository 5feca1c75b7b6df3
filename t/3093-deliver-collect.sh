#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run's side of collecting profiles: a process that
# drops privileges, chroots or closes its fds still gets its profile
# (palloc-run writes it from the process's record, as its own user; the
# agent hands nothing over), every profile is named in the summary, a
# symbolized profile keeps mode 0600, and a file that merely matches the
# output pattern is never symbolized. Before, nginx workers run as nobody
# lost their profiles silently and palloc-run symbolized whatever matched.
. "$top_srcdir/t/lib.sh"
need_agent
need_pprof
need deliver-child palloc-run
plan 16

# child_ok LABEL ERR: two summary lines (parent and child), the child's
# with child_blocks' 20 blocks of 5000 bytes; the profiles mode 0600.
child_ok() {
	_lines=$(grep -Ec '^palloc-run: wrote p\.deliver-child\.[0-9]+\.pb\.gz: ' "$2")
	_child=$(grep -Ec '^palloc-run: wrote p\.deliver-child\.[0-9]+\.pb\.gz: alloc 97\.7 KiB in 20 objects, inuse 97\.7 KiB in 20 objects' "$2")
	_modes=$(stat -c %a p.deliver-child.*.pb.gz | sort -u)
	sed 's/^/# /' "$2"
	if [ "$_lines" -eq 2 ] && [ "$_child" -eq 1 ] && [ "$_modes" = 600 ]; then
		ok "$1: both profiles named, the child's with its 20 blocks, mode 0600"
	else
		not_ok "$1: both profiles named, the child's with its 20 blocks, mode 0600 ($_lines, $_child, $_modes)"
	fi
}

run() {
	rm -f p.*
	palloc-run -r 1 -o 'p.%e.%p.pb.gz' deliver-child "$@" >run.out 2>run.err
}

run closefds
check "child closing all its fds: exit 0" [ $? -eq 0 ]
child_ok "closefds" run.err
check "closefds: the child's profile is symbolized (child_blocks)" \
	grep -Eq '^palloc-run: wrote p\.deliver-child\.[0-9]+\.pb\.gz: .* top inuse: child_blocks$' run.err

# A file matching the pattern that palloc-run did not write (another
# user's, or the program's own) is neither summarized nor rewritten.
env LD_PRELOAD="$PALLOC_AGENT" PALLOC_OUTPUT="$PWD/raw.pb.gz" true
cp raw.pb.gz before.pb.gz
rm -f p.*
palloc-run -o 'p.%e.%p.pb.gz' sh -c 'cp raw.pb.gz p.evil.1.pb.gz' \
	>ev.out 2>ev.err
check "planted file: not summarized" sh -c '! grep -q "p\.evil" ev.err'
check "planted file: not rewritten" cmp -s before.pb.gz p.evil.1.pb.gz
check "planted file: the program's own profile is" \
	grep -Eq '^palloc-run: wrote p\.sh\.[0-9]+\.pb\.gz: ' ev.err
sed 's/^/# /' ev.err

# A process killed before writing (the program's child here; SIGKILL
# leaves the agent no chance) gets its profile from its record.
rm -f p.*
palloc-run -o 'p.%e.%p.pb.gz' sh -c 'sh -c "kill -KILL \$\$"; exit 0' \
	>k.out 2>k.err
check "a child killed by SIGKILL: its profile from its record, no warning" \
	sh -c '[ "$(grep -Ec "^palloc-run: wrote p\.sh\.[0-9]+\.pb\.gz: " k.err)" -eq 2 ] &&
		! grep -q "no profile from" k.err'
sed 's/^/# /' k.err
# One whose record does not carry the run's token is not trusted (another
# user may plant records in a shared run directory): no profile from it.
rm -f p.*
palloc-run -o 'p.%e.%p.pb.gz' sh -c \
	'env -u PALLOC_RUN_TOKEN sh -c "kill -KILL \$\$"; exit 0' >k.out 2>k2.err
check "a child killed by SIGKILL without the run's token: only the parent's profile" \
	sh -c '[ "$(grep -Ec "^palloc-run: wrote p\.sh\.[0-9]+\.pb\.gz: " k2.err)" -eq 1 ] &&
		[ "$(ls p.* | wc -l)" -eq 1 ]'
sed 's/^/# /' k2.err

# -o /dev/null throws the profiles away, as asked: no warning, and
# /dev/null stays the device it is.
palloc-run -o /dev/null sh -c 'exit 0' >null.out 2>null.err
check "-o /dev/null: exit 0, nothing said" [ $? -eq 0 -a ! -s null.err ]
check "-o /dev/null: still a character device" test -c /dev/null
sed 's/^/# /' null.err

if [ "$(id -u)" != 0 ]; then
	for i in 1 2 3 4 5 6; do skip "setuid and chroot need root"; done
	done_testing
fi

# chroot into an empty directory: the output directory does not exist
# there, the abstract socket still does.
mkdir empty
run chroot "$T/empty"
check "child in a chroot: exit 0" [ $? -eq 0 ]
child_ok "chroot" run.err
check "chroot: nothing written inside it" [ -z "$(ls -A empty)" ]

# setuid to nobody in a directory only root may write (0755): nobody could
# not create the file; palloc-run, root, writes it, mode 0600.
mkdir -m 755 rootdir && cd rootdir || exit 1
run setuid
check "child dropping to nobody: exit 0" [ $? -eq 0 ]
child_ok "setuid" run.err
check "setuid: the profiles are root's" \
	[ "$(stat -c %U p.deliver-child.*.pb.gz | sort -u)" = root ]
cd .. || exit 1
done_testing
