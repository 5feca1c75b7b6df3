/* SPDX-License-Identifier: MIT */
/* Profile names, and the agent's end of the channel to palloc-run. */
#include "deliver.h"
#include "fmt.h"
#include "msg.h"

#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define NAME_CAP 64

void deliver_sanitize(char *out, size_t cap, const char *in, size_t n)
{
	size_t k = 0;

	if (cap > NAME_CAP)
		cap = NAME_CAP;
	for (size_t i = 0; i < n && in[i] && k + 1 < cap; i++) {
		char c = in[i];
		bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '_' || c == '-' ||
			    c == '+' || (c == '.' && k > 0);

		out[k++] = safe ? c : '_';
	}
	out[k] = '\0';
	if (k == 0) {
		struct fmt_buf b;

		fmt_init(&b, out, cap);
		fmt_append(&b, "unknown");
	}
}

/* The last component of path[len]. */
static const char *base_name(const char *path, size_t *len)
{
	const char *b = path;

	for (size_t i = 0; i < *len; i++)
		if (path[i] == '/')
			b = path + i + 1;
	*len -= (size_t)(b - path);
	return b;
}

void deliver_exe_name(char *out, size_t cap)
{
	const char *fn = (const char *)getauxval(AT_EXECFN);
	char exe[PATH_MAX];
	const char *b = NULL;
	size_t len = 0;

	/* fexecve(3) and execveat(2) name the program /dev/fd/N. */
	if (fn && strncmp(fn, "/dev/fd/", 8) != 0 &&
	    strncmp(fn, "/proc/self/fd/", 14) != 0) {
		len = strlen(fn);
		b = base_name(fn, &len);
	}
	if (!b || !len) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		len = n > 0 ? (size_t)n : 0;
		exe[len] = '\0';
		/* a deleted executable reads "PATH (deleted)" */
		if (len > 10 && strcmp(exe + len - 10, " (deleted)") == 0)
			len -= 10;
		b = base_name(exe, &len);
	}
	deliver_sanitize(out, cap, b, len);
}

bool deliver_seq_valid(const char *seq)
{
	size_t n = strlen(seq), i = 0;

	if (strcmp(seq, "peak") == 0)
		return true;
	if (n > 2 && seq[0] == 'a' && seq[1] == 't') {
		if (n > 5)
			return false;
		i = 2;
	} else if (n < 1 || n > 20) {
		return false;
	}
	for (; i < n; i++)
		if (seq[i] < '0' || seq[i] > '9')
			return false;
	return true;
}

int deliver_expand(char *out, size_t cap, const char *pattern, long pid,
		   const char *exe, const char *seq, long long t)
{
	/* the peak and pressure files have names of their own */
	bool named = strcmp(seq, "peak") == 0 || strncmp(seq, "at", 2) == 0;
	bool has_n = false;
	struct fmt_buf b;
	size_t len;

	fmt_init(&b, out, cap);
	for (const char *c = pattern; *c; c++) {
		if (c[0] != '%' || c[1] == '\0') {
			fmt_mem(&b, c, 1);
			continue;
		}
		switch (*++c) {
		case 'p':
			fmt_append(&b, "%ld", pid);
			break;
		case 'n':
			fmt_append(&b, "%s", seq);
			has_n = true;
			break;
		case 't':
			fmt_append(&b, "%lld", t);
			break;
		case 'e':
			fmt_append(&b, "%s", *exe ? exe : "unknown");
			break;
		case '%':
			fmt_mem(&b, "%", 1);
			break;
		default:
			fmt_mem(&b, c - 1, 2);
			break;
		}
	}
	if (named && !has_n) {
		len = b.len;
		if (len > 6 && strcmp(out + len - 6, ".pb.gz") == 0) {
			b.len = len - 6;
			out[b.len] = '\0';
		}
		fmt_append(&b, ".%s.pb.gz", seq);
	}
	if (b.truncated) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

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
