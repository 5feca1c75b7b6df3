/* SPDX-License-Identifier: MIT */
/* The contended halves of the futex mutex (lock.h). */
#include "common.h"

#include "lock.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Both preserve errno: they run inside the program's malloc and free. */
void agent_lock_wait(struct agent_lock *l, int seen)
{
	int c = seen, saved = errno;

	/* Mark the lock contended (2), then sleep while it stays so. */
	if (c != 2)
		c = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		/* EAGAIN (state moved) and EINTR just retry. */
		syscall(SYS_futex, &l->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL,
			0);
		c = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
	}
	errno = saved;
}

void agent_lock_wake(struct agent_lock *l)
{
	int saved = errno;

	__atomic_store_n(&l->state, 0, __ATOMIC_RELEASE);
	syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = saved;
}
