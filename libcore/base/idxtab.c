/* SPDX-License-Identifier: MIT */
/* The commands' hash table of indices (idxtab.h). */
#include "common.h"
#include "idxtab.h"
#include "msg.h"

static int alloc_slots(struct idxtab *t, size_t n)
{
	t->slots = calloc(n, sizeof(*t->slots));
	if (!t->slots)
		return msg_set_errno(ENOMEM, "out of memory");
	t->mask = n - 1;
	return 0;
}

int idxtab_init(struct idxtab *t, size_t expect)
{
	size_t n = 1024;

	while (n / 2 < expect && n < SIZE_MAX / 4 / sizeof(*t->slots))
		n *= 2;
	t->used = 0;
	return alloc_slots(t, n);
}

void idxtab_free(struct idxtab *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

int idxtab_put(struct idxtab *t, size_t i, uint32_t idx, idxtab_hash_fn hash,
	       const void *ctx)
{
	uint32_t *old = t->slots;
	size_t n = t->mask + 1;

	t->slots[i] = idx + 1;
	if (++t->used * 2 <= n)
		return 0;
	if (n > SIZE_MAX / 4 / sizeof(*old))
		return msg_set_errno(ENOMEM, "out of memory");
	if (alloc_slots(t, n * 2) < 0) {
		t->slots = old;
		t->mask = n - 1;
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		size_t j;

		if (!old[k])
			continue;
		for (j = idxtab_first(t, hash(ctx, old[k] - 1)); t->slots[j];
		     j = idxtab_next(t, j))
			;
		t->slots[j] = old[k];
	}
	free(old);
	return 0;
}
