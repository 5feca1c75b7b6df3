/* SPDX-License-Identifier: MIT */
/* Unit test of Poisson byte sampling: intervals and unbiased weights. */
#include "sampler.h"
#include "tap.h"

#include <math.h>

int main(void)
{
	uint64_t st = sampler_seed(1, 2, 3);
	double sum = 0, sumsq = 0, o, b;
	const int n = 200000;
	const uint64_t rate = 524288;
	uint64_t s2 = sampler_seed(1, 2, 3);

	tap_ok(st != 0 && st != sampler_seed(1, 2, 4), "seeds differ");
	tap_ok(sampler_next(&s2) == sampler_next(&st),
	       "same seed, same stream");
	tap_ok(sampler_interval(&st, 0) == UINT64_MAX, "rate 0: never");
	tap_ok(sampler_interval(&st, 1) == 0, "rate 1: every allocation");
	for (int i = 0; i < n; i++) {
		double x = (double)sampler_interval(&st, rate);

		sum += x;
		sumsq += x * x;
	}
	/*
	 * The mean of n exponential draws has standard deviation rate /
	 * sqrt(n) (~0.22 % here); 5 sigma is 1.1 %. The variance of an
	 * exponential is rate^2: its estimate is within 5 % at this n.
	 */
	{
		double mean = sum / n, var = sumsq / n - mean * mean;
		double tol = 5 * (double)rate / sqrt(n);

		tap_ok(fabs(mean - (double)rate) < tol,
		       "mean interval %.0f within %.0f of %llu", mean, tol,
		       (unsigned long long)rate);
		tap_ok(fabs(sqrt(var) / (double)rate - 1) < 0.05,
		       "standard deviation %.0f ~ rate", sqrt(var));
	}
	sampler_weight(1, 1234, &o, &b);
	tap_ok(o == 1 && b == 1234, "rate 1: weight 1 object, size bytes");
	sampler_weight(1, 0, &o, &b);
	tap_ok(o == 1 && b == 0, "rate 1, size 0: 1 object, 0 bytes");
	sampler_weight(0, 100, &o, &b);
	tap_ok(o == 0 && b == 0, "rate 0: no weight");
	sampler_weight(rate, 8, &o, &b);
	tap_ok(fabs(b - (double)rate) < 8 && fabs(o * 8 - b) < 1e-6,
	       "small size weighs about one rate of bytes (%.1f)", b);
	sampler_weight(rate, 64u << 20, &o, &b);
	tap_ok(fabs(o - 1) < 1e-6 && fabs(b - (64u << 20)) < 1,
	       "huge size weighs itself");
	sampler_weight(rate, 524288, &o, &b);
	tap_ok(fabs(o - 1 / (1 - exp(-1.0))) < 1e-9,
	       "size = rate: weight 1/(1-1/e) = %.6f", o);

	/*
	 * Unbiasedness end to end: simulate the countdown over a stream of
	 * mixed sizes (16 B to 64 KiB, about 4 GB in all) and compare the
	 * weighted byte sum with the truth. Its variance is the sum of
	 * w (w - s), below rate * total, so the relative standard error is
	 * under sqrt(rate / total) = 1.1 %: 5 % is more than 4 sigma.
	 * (The object count is not checked: 16-byte blocks weigh 32768
	 * objects each and are rarely seen, so it is unbiased but noisy.)
	 */
	{
		uint64_t left = sampler_interval(&st, rate), x = 12345;
		double est_b = 0, est_o = 0, true_b = 0;
		const int m = 400000;

		for (int i = 0; i < m; i++) {
			uint64_t size;

			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			size = 16u << ((x >> 33) % 13);
			true_b += (double)size;
			if (size < left) {
				left -= size;
				continue;
			}
			sampler_weight(rate, size, &o, &b);
			est_o += o;
			est_b += b;
			left = sampler_interval(&st, rate);
		}
		tap_ok(fabs(est_b / true_b - 1) < 0.05 && est_o > 0,
		       "bytes estimate %.4f of truth", est_b / true_b);
	}

	/*
	 * The sampler's own -log(1 - u) and 1 - e^-y (the agent links no
	 * libm) against libm's log1p and expm1: the intervals of a million
	 * draws at three rates equal libm's ceil(-log1p(-u) rate) but for
	 * rounding at an integer (at most 1 apart, and rarely), and the
	 * weights over sizes from 1 byte to 2^40 within 1e-14 of 1/p.
	 */
	{
		static const uint64_t rates[] = {3, 4096, 524288};
		long differ = 0, far = 0;

		for (size_t r = 0; r < sizeof(rates) / sizeof(*rates); r++) {
			uint64_t a = sampler_seed(7, r, 9), c = a;

			for (int i = 0; i < 1000000; i++) {
				uint64_t got = sampler_interval(&a, rates[r]);
				double u = (double)(sampler_next(&c) >> 11) *
					   (1.0 / 9007199254740992.0);
				double g = -log1p(-u) * (double)rates[r];
				uint64_t want = g < 1.0 ? 1 : (uint64_t)ceil(g);

				differ += got != want;
				far += got + 1 < want || want + 1 < got;
			}
		}
		tap_ok(far == 0 && differ < 30,
		       "intervals as libm's: %ld of 3 M differ by 1, %ld more",
		       differ, far);
	}
	{
		double worst = 0;

		for (uint64_t size = 1; size < (1ULL << 40);
		     size += size / 7 + 1)
			for (uint64_t rt = 2; rt < (1ULL << 32);
			     rt += rt / 3 + 1) {
				double want =
					-expm1(-(double)size / (double)rt);
				double e;

				sampler_weight(rt, size, &o, &b);
				e = fabs(o * want - 1);
				if (e > worst)
					worst = e;
			}
		tap_ok(worst < 1e-14, "weights as libm's: worst relative %.3g",
		       worst);
	}
	return tap_done();
}
