/* SPDX-License-Identifier: MIT */
/* Poisson byte sampling with unbiased per-allocation weights. */
#include "sampler.h"

#include <math.h>

uint64_t sampler_seed(uint64_t a, uint64_t b, uint64_t c)
{
	/* splitmix64 (Steele, Lea, Flood 2014) over the three inputs. */
	uint64_t z = a * 0x9e3779b97f4a7c15ULL ^ b;

	z += c * 0xbf58476d1ce4e5b9ULL + 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return z ? z : 0x2545f4914f6cdd1dULL;
}

uint64_t sampler_next(uint64_t *state)
{
	/* xorshift64* (Vigna 2016): 64-bit state, full period 2^64 - 1. */
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

uint64_t sampler_interval(uint64_t *state, uint64_t rate)
{
	double u, gap;

	if (rate == 0)
		return UINT64_MAX;
	if (rate == 1)
		return 0;
	/*
	 * u uniform in [0, 1) from the top 53 bits; -log(1 - u) is then an
	 * exponential variate of mean 1 (inverse transform sampling), and
	 * 1 - u lies in (0, 1], so the log is finite.
	 */
	u = (double)(sampler_next(state) >> 11) * (1.0 / 9007199254740992.0);
	gap = -log1p(-u) * (double)rate;
	if (gap < 1.0)
		return 1;
	if (gap >= 9.0e18)
		return UINT64_MAX - 1;
	return (uint64_t)ceil(gap);
}

/*
 * Why these weights are unbiased.
 *
 * The sample points of a thread are a Poisson process of intensity 1/R
 * over the bytes it allocates (R = rate): the gaps are exponential of mean
 * R and, being memoryless, it does not matter that after a sample the next
 * gap is drawn afresh from the end of the sampled allocation. An
 * allocation of s bytes covers s bytes of that line, so it is sampled with
 * probability
 *
 *	p(s) = P(at least one point in s bytes) = 1 - exp(-s/R).
 *
 * Give each sampled allocation the weight w = 1/p(s) objects and
 * s/p(s) bytes, and 0 when it is not sampled. Then for every allocation
 *
 *	E[objects] = p(s) * 1/p(s) = 1,   E[bytes] = p(s) * s/p(s) = s,
 *
 * so any sum of weights over a set of allocations (a stack, the live ones,
 * all of them) is an unbiased estimate of that set's true count and bytes,
 * whatever mix of sizes it holds. Go instead scales each stack's totals by
 * its average size, which is biased when sizes vary within a stack.
 *
 * The variance of one allocation's byte estimate is
 * p * (s/p)^2 - s^2 = s^2 (1 - p) / p = w (w - s) with w = s/p, which is
 * what error bars are built from. For s << R, w ~ R (a sample stands for
 * about R bytes); for s >> R, p ~ 1 and w ~ s (large blocks are nearly
 * always seen and weigh only themselves).
 *
 * Numerics: p = -expm1(-s/R) keeps full precision when s/R is tiny, where
 * 1 - exp(-s/R) would cancel. R = 1 is defined as "every allocation"
 * (the interval is 0) rather than as a Poisson process of mean 1, so the
 * weights are exactly 1 and s and a profile at rate 1 is the integer truth.
 * A sampled size-0 allocation (possible only when a rate change or a
 * thread's first call found the countdown at 0) counts as 1 object, 0 bytes.
 */
void sampler_weight(uint64_t rate, uint64_t size, double *objects,
		    double *bytes)
{
	double p;

	if (rate == 0) {
		*objects = 0;
		*bytes = 0;
		return;
	}
	if (rate == 1 || size == 0) {
		*objects = 1;
		*bytes = (double)size;
		return;
	}
	p = -expm1(-(double)size / (double)rate);
	if (!(p > 0)) {
		/* s/R below double precision: cannot happen for s >= 1 and
		 * R < 2^64, but never divide by zero. */
		*objects = (double)rate;
		*bytes = (double)rate;
		return;
	}
	*objects = 1.0 / p;
	*bytes = (double)size / p;
}
