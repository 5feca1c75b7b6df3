/* SPDX-License-Identifier: MIT */
/* The commands' growing arrays. */
#include "common.h"
#include "grow.h"

#include <errno.h>
#include <stdlib.h>

int grow_array(void *arrp, size_t *cap, size_t need, size_t size)
{
	void **arr = arrp;
	size_t c = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			goto nomem;
		c *= 2;
	}
	if (size && c > SIZE_MAX / size)
		goto nomem;
	p = realloc(*arr, c * size);
	if (!p)
		goto nomem;
	*arr = p;
	*cap = c;
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

void *grow_push(void *arrp, size_t *n, size_t *cap, size_t size)
{
	char *e;

	if (grow_array(arrp, cap, *n + 1, size) < 0)
		return NULL;
	e = (char *)*(void **)arrp + *n * size;
	memset(e, 0, size);
	(*n)++;
	return e;
}
