/* SPDX-License-Identifier: MIT */
/* The agent's end of the channel to palloc-run. */
#include "deliver.h"
#include "msg.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline (CLOCK_MONOTONIC, ms). */
static long long left_ms(long long deadline)
{
	return deadline - now_ms();
}

/* SO_SNDTIMEO and SO_RCVTIMEO to what is left: a blocking call returns
 * EAGAIN when time is up. false when it already is. */
static bool set_timeouts(int fd, long long deadline)
{
	long long ms = left_ms(deadline);
	struct timeval tv;

	if (ms <= 0)
		return false;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return true;
}

static int send_all(int fd, const void *buf, size_t len, long long deadline)
{
	const char *p = buf;

	while (len) {
		ssize_t n;

		if (!set_timeouts(fd, deadline)) {
			errno = ETIMEDOUT;
			return -1;
		}
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			continue; /* the deadline decides */
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int recv_all(int fd, void *buf, size_t len, long long deadline)
{
	char *p = buf;

	while (len) {
		ssize_t n;

		if (!set_timeouts(fd, deadline)) {
			errno = ETIMEDOUT;
			return -1;
		}
		n = recv(fd, p, len, 0);
		if (n < 0 &&
		    (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n == 0)
			errno = ECONNRESET;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int deliver_send(const char *name, const struct deliver_header *h,
		 const void *payload, struct deliver_reply *reply,
		 int timeout_ms)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t nlen = name ? strlen(name) : 0;
	long long deadline = now_ms() + timeout_ms;
	socklen_t salen;
	int fd, err = 0;

	if (nlen < 2 || name[0] != '@' || nlen > sizeof(sa.sun_path)) {
		errno = EINVAL;
		return msg_set("invalid %s '%s': not an abstract socket name",
			       DELIVER_ENV, name ? name : "");
	}
	/* sun_path[0] = '\0': Linux's abstract namespace, no file. */
	memcpy(sa.sun_path + 1, name + 1, nlen - 1);
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + nlen);
	fd = socket(AF_UNIX,
		    SOCK_STREAM | SOCK_CLOEXEC |
			    (timeout_ms > 0 ? 0 : SOCK_NONBLOCK),
		    0);
	if (fd < 0)
		return msg_set_errno(errno, "cannot reach palloc-run");
	if (timeout_ms <= 0) {
		/* A hello: one try, never waiting (a full backlog drops it). */
		if (connect(fd, (struct sockaddr *)&sa, salen) < 0 ||
		    send(fd, h, sizeof(*h), MSG_NOSIGNAL) !=
			    (ssize_t)sizeof(*h))
			err = errno ? errno : EIO;
		reply = NULL;
	} else if (!set_timeouts(fd, deadline) ||
		   connect(fd, (struct sockaddr *)&sa, salen) < 0 ||
		   send_all(fd, h, sizeof(*h), deadline) < 0 ||
		   (h->kind == DELIVER_PROFILE &&
		    send_all(fd, payload, (size_t)h->length, deadline) < 0)) {
		err = errno ? errno : EIO;
	}
	if (!err && reply) {
		if (recv_all(fd, reply, sizeof(*reply), deadline) < 0)
			err = errno ? errno : EIO;
		else if (memcmp(reply->magic, DELIVER_MAGIC, 8) != 0)
			err = EPROTO;
		else
			reply->text[sizeof(reply->text) - 1] = '\0';
	}
	close(fd);
	if (err) {
		errno = err;
		return msg_set_errno(err, "cannot deliver to palloc-run");
	}
	return 0;
}
