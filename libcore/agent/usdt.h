/* SPDX-License-Identifier: MIT */
/* The agent's USDT probes for the OpenTelemetry eBPF profiler. */
#ifndef PALLOC_USDT_H
#define PALLOC_USDT_H

#include "common.h"

#include <sys/sdt.h>

/*
 * The contract of open-telemetry/opentelemetry-ebpf-profiler's
 * design-docs/00003-memory-profiling ("USDT contract"), provider
 * otel_memory:
 *
 *   alloc(ptr, size, weighted_bytes)  at each sampled allocation: the
 *       block's address (void *), its size in bytes as asked (uint64_t)
 *       and the bytes it stands for (uint64_t): sampler_weight()'s
 *       size / (1 - exp(-size / rate)), rounded to the nearest byte
 *       (exactly size at rate 1, and in exact mode's samples);
 *   free(ptr)  when a block fired as alloc is freed (or moved by
 *       realloc): the address it had.
 *
 * SystemTap's <sys/sdt.h> (header-only, systemtap-sdt-dev): each probe is
 * a nop at its site plus a .note.stapsdt ELF note naming the provider,
 * the probe, its address and where its arguments are (`readelf -n
 * libpalloc.so`); a tracer (bpftrace, the eBPF profiler, perf) turns the
 * nop into a breakpoint while it is attached. No semaphore: a nop costs
 * less than testing one, and the probes stand only on the slow paths (a
 * sample, the free of a sampled block), never on the per-call fast path.
 * Safe in any thread and in a signal handler (a nop); with a tracer
 * attached the kernel runs its program and returns, errno untouched.
 */
#define USDT_ALLOC(ptr, size, weighted_bytes)                                  \
	DTRACE_PROBE3(otel_memory, alloc, (void *)(ptr), (uint64_t)(size),     \
		      (uint64_t)(weighted_bytes))
#define USDT_FREE(ptr) DTRACE_PROBE1(otel_memory, free, (void *)(ptr))

#endif /* PALLOC_USDT_H */
