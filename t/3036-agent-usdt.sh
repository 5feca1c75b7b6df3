#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent's USDT probes for the OpenTelemetry eBPF profiler
# (libcore/agent/usdt.h): readelf shows otel_memory:alloc with three
# arguments and otel_memory:free with one; where the kernel lets bpftrace
# attach, it counts exactly the sampled allocations of a program at rate 1
# (every one), their weights (the sizes) and the frees of those blocks.
. "$top_srcdir/t/lib.sh"
need_agent
need readelf cc

plan 8

# Each note of provider otel_memory as "NAME ARGS", ARGS its argument count.
readelf -n "$PALLOC_AGENT" >notes.txt 2>notes.err
awk '/Provider:/ { p = $2 } /Name:/ { n = $2 }
	/Arguments:/ { if (p == "otel_memory") print n, NF - 1; p = "" }' \
	notes.txt | sort -u >probes.txt
cat >probes.exp <<'EXP'
alloc 3
free 1
EXP
check "readelf -n: otel_memory:alloc with three arguments, free with one" \
	diff -u probes.exp probes.txt
check "no semaphore (the probes are nops until a tracer attaches)" \
	test "$(grep -A1 'Name: \(alloc\|free\)' notes.txt |
		grep -c 'Semaphore: 0x0*0$')" -eq "$(grep -c 'Name: \(alloc\|free\)' notes.txt)"

# 1000 blocks of 12345 bytes, 600 freed, 100 moved by realloc to 23456.
cat >usdtcount.c <<'CEOF'
#include <stdlib.h>

int main(void)
{
	static void *p[1000];
	int i;

	for (i = 0; i < 1000; i++)
		p[i] = malloc(12345);
	for (i = 0; i < 600; i++)
		free(p[i]);
	for (i = 600; i < 700; i++)
		p[i] = realloc(p[i], 23456);
	return !p[999] || !p[600];
}
CEOF
cc -O0 -o usdtcount usdtcount.c || { echo "Bail out! cc failed"; exit 1; }

# bpftrace needs root (or CAP_BPF and CAP_PERFMON) and a kernel with BPF
# and uprobes: where it cannot even run BEGIN, the rest is skipped.
why=
if ! command -v bpftrace >/dev/null 2>&1; then
	why="bpftrace not installed"
elif ! timeout -k 5 60 bpftrace -e 'BEGIN { exit(); }' >bt0.out 2>bt0.err; then
	why="bpftrace cannot run here: $(grep -v RLIMIT_MEMLOCK bt0.err | head -1)"
fi
if [ -n "$why" ]; then
	for i in 1 2 3 4 5 6; do skip "$why"; done
	done_testing
fi

# Attached to the agent's file (every process mapping it: the filter on
# the program's name keeps the other tests' out); "ready" once attached.
cat >count.bt <<EOF_BT
usdt:$PALLOC_AGENT:otel_memory:alloc /comm == "usdtcount"/ {
	@alloc[arg1] = count(); @weight[arg1] = sum(arg2);
	@live[arg0] = 1; @held = sum(1);
}
usdt:$PALLOC_AGENT:otel_memory:free /comm == "usdtcount" && @live[arg0]/ {
	@free = count(); delete(@live[arg0]); @held = sum(-1);
}
BEGIN { printf("ready\n"); }
END { clear(@live); }
EOF_BT
bpftrace count.bt >bt.out 2>bt.err &
bt=$!
i=0
while ! grep -q '^ready' bt.out 2>/dev/null && kill -0 $bt 2>/dev/null &&
	[ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
if ! grep -q '^ready' bt.out; then
	kill -INT $bt 2>/dev/null
	wait $bt
	why="bpftrace cannot attach to the probes: $(grep -v RLIMIT_MEMLOCK bt.err | head -1)"
	for i in 1 2 3 4 5 6; do skip "$why"; done
	done_testing
fi
LD_PRELOAD=$PALLOC_AGENT PALLOC_SAMPLE_RATE=1 ./usdtcount >run.out 2>run.err
check "the program runs at rate 1 with bpftrace attached" test $? -eq 0
kill -INT $bt
wait $bt
sed 's/^/# /' bt.err | grep -v RLIMIT_MEMLOCK
grep '^@' bt.out >counts.txt
check "alloc fired for each of the 1000 mallocs of 12345 bytes" \
	grep -qx '@alloc\[12345\]: 1000' counts.txt
check "alloc fired for each of the 100 reallocs to 23456 bytes" \
	grep -qx '@alloc\[23456\]: 100' counts.txt
check "weighted_bytes is the size at rate 1 (12345 x 1000)" \
	grep -qx '@weight\[12345\]: 12345000' counts.txt
check "free fired for the 600 blocks freed and the 100 moved by realloc" \
	grep -qx '@free: 700' counts.txt
check "400 of them still held at exit" grep -qx '@held: 400' counts.txt
[ $_failed -eq 0 ] || sed 's/^/# /' counts.txt

done_testing
