#!/bin/sh
# SPDX-License-Identifier: MIT
# palloc-run -p PID refuses, one line and status 125, the
# process untouched (not traced, no agent mapped, still answering):
# - a process under a seccomp filter (one that refuses ptrace(2) in it):
#   the calls the attach makes there could be refused or kill it;
# - a program with its own malloc (an allocator linked in and exported):
#   the agent would not see its allocations;
# - a Go program: its memory does not come from malloc;
# (a process in another mount namespace: t/3139)
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-attach.sh"
need attach-target

plan 15

# untouched PID: not traced, no agent mapped, answering "alloc 1 10"
untouched() {
	[ "$(tracer "$1")" = 0 ] && [ "$(agents "$1")" -eq 0 ] &&
		say "alloc 1 10" "allocated 1"
}

# refused LABEL REASON: palloc-run -p $tp ends 125 with the one line
# REASON, the process untouched; then it quits (5 tests)
refused() {
	timeout_run 60 palloc-run -p "$tp" -o /dev/null 2>err.refused
	check "$1: 125" test $? -eq 125
	check "$1: one line" one_line err.refused \
		"palloc-run: cannot attach to process '$tp': $2"
	check "$1: the process untouched" untouched "$tp"
	quit_target
}

# ---- seccomp ----
if command -v cc >/dev/null 2>&1; then
	cat >sc.c <<'CEOF'
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A filter refusing ptrace (EPERM), then attach-target's protocol for
 * "alloc N SIZE" answered without allocating, "quit". */
int main(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ptrace, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	char buf[64];
	unsigned long n, size;
	ssize_t r;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return 2;
	printf("ready\n");
	fflush(stdout);
	while ((r = read(0, buf, sizeof(buf) - 1)) > 0) {
		buf[r] = '\0';
		if (sscanf(buf, "alloc %lu %lu", &n, &size) == 2)
			printf("allocated %lu\n", n);
		else
			break;
		fflush(stdout);
	}
	return 0;
}
CEOF
	cc -O1 -o sc sc.c || { echo "Bail out! cc failed"; exit 1; }
	start_target ./sc
	refused seccomp "it runs under seccomp (Seccomp: 2 in /proc/$tp/status), which may refuse or kill on the calls the attach makes"
else
	for i in 1 2 3 4 5; do skip "no C compiler (cc)"; done
fi

# ---- its own malloc (t/helper/own-malloc.h), and attach-target's
# protocol answered without allocating ----
if command -v cc >/dev/null 2>&1; then
	cat >own.c <<'CEOF'
#include <stdio.h>
#include <unistd.h>
#include "own-malloc.h"
int main(void)
{
	char buf[64];
	unsigned long n, size;
	ssize_t r;

	printf("ready\n");
	fflush(stdout);
	while ((r = read(0, buf, sizeof(buf) - 1)) > 0) {
		buf[r] = '\0';
		if (sscanf(buf, "alloc %lu %lu", &n, &size) != 2)
			break;
		printf("allocated %lu\n", n);
		fflush(stdout);
	}
	return 0;
}
CEOF
	cc -O1 -I"$top_srcdir/t/helper" -o own own.c || { echo "Bail out! cc failed"; exit 1; }
	start_target ./own
	refused "own malloc" "it has its own malloc (an allocator linked into the program): its allocations would not be seen"
else
	for i in 1 2 3 4 5; do skip "no C compiler (cc)"; done
fi

# ---- a Go program (static, the standard library only, built offline) ----
mkdir gobuild
cat >gobuild/main.go <<'GO'
package main

import (
	"bufio"
	"fmt"
	"os"
)

func main() {
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var n, size uint64
		if _, err := fmt.Sscanf(in.Text(), "alloc %d %d", &n, &size); err != nil {
			return
		}
		fmt.Printf("allocated %d\n", n)
	}
}
GO
if (cd gobuild && HOME=$T GOCACHE=$T/gocache GOPATH=$T/gopath GOFLAGS= \
	GO111MODULE=off GOPROXY=off CGO_ENABLED=0 \
	go build -o ../goprog main.go) >gobuild.log 2>&1; then
	start_target ./goprog
	refused "Go program" "it is a Go program: its memory does not come from malloc"
else
	sed 's/^/# /' gobuild.log
	for i in 1 2 3 4 5; do skip "cannot build a Go program offline"; done
fi

done_testing
