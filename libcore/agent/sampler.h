/* SPDX-License-Identifier: MIT */
/* Poisson byte sampling: intervals, per-allocation weights, the PRNG. */
#ifndef PALLOC_SAMPLER_H
#define PALLOC_SAMPLER_H

#include "common.h"

/*
 * Each thread counts requested bytes down to its next sample point; the
 * gaps between points are exponential with mean `rate` bytes, so the points
 * form a Poisson process over the bytes a thread allocates. An allocation
 * that covers a point is sampled (once, however many points it covers) and
 * carries a weight that makes the sums unbiased (see sampler.c).
 *
 * rate 0: sampling off (interval "infinite"); rate 1: every allocation is
 * sampled with weight exactly 1 object and its size in bytes.
 *
 * Pure functions over caller-owned state: thread-safe, no allocation, no
 * errno, async-signal-safe.
 */

/* A 64-bit seed from a few varying inputs (pid, tid, time, an address),
 * mixed with splitmix64 so that close inputs give unrelated streams.
 * Never returns 0 (xorshift's fixed point). */
uint64_t sampler_seed(uint64_t a, uint64_t b, uint64_t c);

/* The next output of the xorshift64* generator in *state (non-zero). */
uint64_t sampler_next(uint64_t *state);

/*
 * Bytes until the next sample point: a draw from an exponential
 * distribution of mean rate, rounded up, at least 1. rate 0 gives
 * UINT64_MAX (never), rate 1 gives 0 (the next allocation, whatever its
 * size, is sampled).
 */
uint64_t sampler_interval(uint64_t *state, uint64_t rate);

/*
 * The weight of one sampled allocation of size bytes: *objects is how many
 * allocations it stands for, *bytes how many bytes. rate 1: exactly 1 and
 * size. rate 0 (nothing is sampled): 0 and 0.
 */
void sampler_weight(uint64_t rate, uint64_t size, double *objects,
		    double *bytes);

#endif /* PALLOC_SAMPLER_H */
