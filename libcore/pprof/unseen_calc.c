/* SPDX-License-Identifier: MIT */
/* Memory malloc did not give: the figures and the warning (unseen_calc.h). */
#include "common.h"
#include "fmt.h"
#include "unseen_calc.h"

void unseen_compute(struct unseen *u, const struct unseen_status *st,
		    int64_t heap_bytes, int64_t heap_peak_bytes,
		    int64_t own_bytes)
{
	int64_t peak, base;

	memset(u, 0, sizeof(*u));
	u->anon_bytes = u->anon_peak_bytes = u->unseen_bytes = -1;
	u->heap_bytes = heap_bytes;
	if (heap_peak_bytes > u->heap_bytes)
		u->heap_bytes = heap_peak_bytes;
	if (u->heap_bytes < 0)
		u->heap_bytes = 0;
	if (!st || st->rss_anon < 0)
		return;
	u->anon_bytes = st->rss_anon;
	u->anon_peak_bytes = u->anon_bytes;
	peak = st->vm_hwm - st->rss_file - st->rss_shmem;
	if (st->vm_hwm >= 0 && st->rss_file >= 0 && st->rss_shmem >= 0 &&
	    peak > u->anon_peak_bytes)
		u->anon_peak_bytes = peak;
	/* Without a peak of the heap, compare the present with the
	 * present. */
	u->at_peak = heap_peak_bytes >= 0;
	base = u->at_peak ? u->anon_peak_bytes : u->anon_bytes;
	u->unseen_bytes =
		base - u->heap_bytes - (own_bytes > 0 ? own_bytes : 0);
	if (u->unseen_bytes < 0)
		u->unseen_bytes = 0;
	u->most = u->unseen_bytes >= UNSEEN_MIN_BYTES &&
		  u->unseen_bytes > base / 2;
}

void unseen_text(const struct unseen *u, char *buf, size_t cap)
{
	struct fmt_buf b;
	int64_t mib = 1 << 20;

	fmt_init(&b, buf, cap);
	fmt_append(
		&b,
		"most of this process's memory did not come through "
		"malloc, so the profile does not show it: %lld MiB of "
		"anonymous memory %s, %lld MiB of it not from the malloc "
		"heap palloc saw (%lld MiB)",
		(long long)(((u->at_peak ? u->anon_peak_bytes : u->anon_bytes) +
			     mib / 2) /
			    mib),
		u->at_peak ? "at the peak" : "now",
		(long long)((u->unseen_bytes + mib / 2) / mib),
		(long long)((u->heap_bytes + mib / 2) / mib));
	if (u->owner)
		fmt_append(&b, "; likely owner: %s (%s)", u->owner, u->hint);
	else
		fmt_append(&b, "; it was mapped by other means (mmap, another "
			       "allocator)");
}
