/* SPDX-License-Identifier: MIT */
/* Poisson byte sampling with unbiased per-allocation weights. */
#include "sampler.h"

/*
 * -log(1 - u) and -expm1(-y) without libm: the agent links no library but
 * libc and libunwind (libm's loading, some 20,000 instructions, was paid
 * by every process at start). Both to within a few units in the last
 * place of libm's, checked against it by t/unit/sampler; the gaps and
 * weights they make are only ever used as random variates and their
 * inverse probabilities.
 */
#define LN2_HI 6.93147180369123816490e-01 /* ln 2, high 32 bits */
#define LN2_LO 1.90821492927058770002e-10 /* ln 2 - LN2_HI */

/* 1/n for the series below (folded at compile time: no division). */
static const double inv[26] = {
	0,	  1,	    1.0 / 2,  1.0 / 3,	1.0 / 4,  1.0 / 5,  1.0 / 6,
	1.0 / 7,  1.0 / 8,  1.0 / 9,  1.0 / 10, 1.0 / 11, 1.0 / 12, 1.0 / 13,
	1.0 / 14, 1.0 / 15, 1.0 / 16, 1.0 / 17, 1.0 / 18, 1.0 / 19, 1.0 / 20,
	1.0 / 21, 1.0 / 22, 1.0 / 23, 1.0 / 24, 1.0 / 25,
};

/*
 * -log(x) for x in (0, 1]: x = m 2^e with m in [sqrt(1/2), sqrt(2)), and
 * log m = 2 atanh(t) = 2 (t + t^3/3 + t^5/5 + ...) with t = (m - 1) /
 * (m + 1), |t| < 0.172: the terms to t^25 reach 2^-60 of the sum.
 */
static double neg_log(double x)
{
	union {
		double d;
		uint64_t u;
	} v = {.d = x};
	int e = (int)((v.u >> 52) & 0x7ff) - 1023;
	double m, t, t2, sum = 0;

	if (!(x > 0))
		return __builtin_inf();
	if (e == -1023) /* subnormal: -log x = -log(x 2^54) + 54 ln 2 */
		return neg_log(x * 18014398509481984.0) + 54 * LN2_LO +
		       54 * LN2_HI;
	v.u = (v.u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
	m = v.d; /* [1, 2) */
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	t = (m - 1) / (m + 1); /* m - 1 is exact */
	t2 = t * t;
	for (int k = 25; k > 1; k -= 2)
		sum = sum * t2 + inv[k];
	return -((double)e * LN2_LO + t * (2 + 2 * t2 * sum) +
		 (double)e * LN2_HI);
}

/* -expm1(-y) = 1 - e^-y for y >= 0. */
static double one_minus_exp_neg(double y)
{
	double r, sum = 1;
	int k;

	if (y < 0.5) {
		/* y (1 - y/2 (1 - y/3 (1 - ...))): no cancellation; the
		 * terms to y^18/18! reach 2^-60 of the sum. */
		for (int n = 18; n > 1; n--)
			sum = 1 - y * inv[n] * sum;
		return y * sum;
	}
	if (y > 40) /* e^-y < 2^-57: 1 - e^-y rounds to 1 */
		return 1;
	/* e^-y = 2^-k e^-r with |r| <= ln 2 / 2, e^-r by its series to
	 * r^16; 1 - e^-y >= 0.39: no cancellation either. */
	k = (int)(y / (LN2_HI + LN2_LO) + 0.5);
	r = (y - k * LN2_HI) - k * LN2_LO;
	for (int n = 16; n > 0; n--)
		sum = 1 - r * inv[n] * sum;
	return 1 - sum / (double)(1ULL << k);
}

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
	gap = neg_log(1 - u) * (double)rate; /* 1 - u is exact */
	if (gap < 1.0)
		return 1;
	if (gap >= 9.0e18)
		return UINT64_MAX - 1;
	return (uint64_t)gap + ((double)(uint64_t)gap < gap); /* ceil */
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
	p = one_minus_exp_neg((double)size / (double)rate);
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
