/* SPDX-License-Identifier: MIT */
/* A command's background thread, told to stop through a pipe. */
#include "common.h"
#include "bgthread.h"
#include "msg.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

void bgthread_init(struct bgthread *b)
{
	b->wake[0] = b->wake[1] = -1;
	b->running = false;
}

static void close_pipe(struct bgthread *b)
{
	close(b->wake[0]);
	close(b->wake[1]);
	b->wake[0] = b->wake[1] = -1;
}

int bgthread_start(struct bgthread *b, void *(*fn)(void *), void *arg,
		   const char *what)
{
	sigset_t all, old;
	int err;

	if (pipe2(b->wake, O_CLOEXEC) < 0)
		return msg_set_errno(errno, "cannot %s", what);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&b->th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		close_pipe(b);
		return msg_set_errno(err, "cannot %s", what);
	}
	b->running = true;
	return 0;
}

bool bgthread_sleep(const struct bgthread *b, int timeout_ms)
{
	struct pollfd pf = {.fd = b->wake[0], .events = POLLIN};
	int rc = poll(&pf, 1, timeout_ms);

	return rc > 0 || (rc < 0 && errno != EINTR);
}

void bgthread_stop(struct bgthread *b)
{
	if (!b->running)
		return;
	/* a thread that cannot be told is left, not waited for */
	if (write(b->wake[1], "x", 1) == 1)
		pthread_join(b->th, NULL);
	close_pipe(b);
	b->running = false;
}
