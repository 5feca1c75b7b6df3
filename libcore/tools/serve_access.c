/* SPDX-License-Identifier: MIT */
/* The HTTP server's access policy: who the client is (its uid, from
 * /proc/net/tcp) and whether it may read (serve_int.h). */
#include "common.h"
#include "serve_int.h"

#include <arpa/inet.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "allocinfo.h"
#include "cgroup.h"
#include "clock.h"
#include "msg_cli.h"
#include "num.h"
#include "pprof.h"
#include "procfs.h"
#include "prom.h"
#include "symbols.h"

/* ---- who may read ---- */

bool serve_endpoint_of(const struct sockaddr *sa, socklen_t len,
		       struct endpoint *e)
{
	memset(e, 0, sizeof(*e));
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;

		e->a[10] = e->a[11] = 0xff;
		memcpy(e->a + 12, &in->sin_addr, 4);
		e->port = ntohs(in->sin_port);
		return true;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		memcpy(e->a, &in6->sin6_addr, 16);
		e->port = ntohs(in6->sin6_port);
		return true;
	}
	return false;
}

bool serve_endpoint_loopback(const struct endpoint *e)
{
	static const unsigned char v4[12] = {[10] = 0xff, [11] = 0xff};
	static const unsigned char v6[16] = {[15] = 1};

	return (memcmp(e->a, v4, 12) == 0 && e->a[12] == 127) ||
	       memcmp(e->a, v6, 16) == 0;
}

/*
 * "0100007F:1F90" (/proc/net/tcp: each 32-bit word of the address in the
 * kernel's byte order, the port in hex) into e. false if malformed.
 */
static bool endpoint_parse(const char *hex, struct endpoint *e)
{
	size_t n = strcspn(hex, ":");
	unsigned char *dst;

	if ((n != 8 && n != 32) || hex[n] != ':')
		return false;
	memset(e, 0, sizeof(*e));
	dst = e->a;
	if (n == 8) {
		e->a[10] = e->a[11] = 0xff;
		dst += 12;
	}
	for (size_t w = 0; w < n / 8; w++) {
		char word[9];
		char *end;
		uint32_t v;

		memcpy(word, hex + w * 8, 8);
		word[8] = '\0';
		v = (uint32_t)strtoul(word, &end, 16);
		if (*end)
			return false;
		memcpy(dst + w * 4, &v, 4);
	}
	e->port = (unsigned)strtoul(hex + n + 1, NULL, 16);
	return true;
}

/*
 * The uid owning the local TCP socket whose local end is client and whose
 * remote port is server_port: the client of one of our connections, when
 * it runs on this host. /proc/net/tcp and tcp6 list every socket of the
 * network namespace with its owner. Returns 0 with *uid, or -1 when no
 * such socket (a remote client) or several with different owners.
 */
static int peer_uid(const struct endpoint *client, unsigned server_port,
		    uid_t *uid)
{
	static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	char *line = NULL;
	size_t cap = 0;
	int found = 0;

	for (size_t f = 0; f < ARRAY_SIZE(files) && found >= 0; f++) {
		FILE *fp = fopen(files[f], "re");

		if (!fp)
			continue;
		while (getline(&line, &cap, fp) > 0) {
			char local[64], remote[64];
			struct endpoint l, r;
			unsigned u;

			if (sscanf(line,
				   " %*u: %63s %63s %*x %*x:%*x %*x:%*x %*x "
				   "%u",
				   local, remote, &u) != 3 ||
			    !endpoint_parse(local, &l) ||
			    !endpoint_parse(remote, &r) ||
			    l.port != client->port || r.port != server_port ||
			    memcmp(l.a, client->a, 16) != 0)
				continue;
			if (found && *uid != (uid_t)u) {
				found = -1;
				break;
			}
			*uid = (uid_t)u;
			found = 1;
		}
		fclose(fp);
	}
	free(line);
	return found > 0 ? 0 : -1;
}

static bool uid_allowed(const struct serve *s, uid_t uid)
{
	if (uid == 0 || uid == s->owner)
		return true;
	for (size_t i = 0; i < s->access.n_uids; i++)
		if (s->access.uids[i] == uid)
			return true;
	return false;
}

void serve_log_refusal(struct serve *s, const char *fmt, ...)
{
	long now = (long)clock_mono_ms();
	unsigned skipped;
	char line[256];
	va_list ap;

	pthread_mutex_lock(&s->lock);
	if (s->last_log_ms && now - s->last_log_ms < 1000) {
		s->unlogged++;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	s->last_log_ms = now;
	skipped = s->unlogged;
	s->unlogged = 0;
	pthread_mutex_unlock(&s->lock);
	if (!s->cfg.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (skipped) {
		size_t n = strlen(line);

		snprintf(line + n, sizeof(line) - n, " (and %u more refused)",
			 skipped);
	}
	s->cfg.warn(line);
}

enum MHD_Result serve_accept_policy(void *cls, const struct sockaddr *addr,
				    socklen_t len)
{
	struct serve *s = cls;
	struct peer *p = &s->pending;
	struct endpoint e;

	memset(p, 0, sizeof(*p));
	if (s->access.any) {
		p->allowed = true;
		return MHD_YES;
	}
	if (serve_endpoint_of(addr, len, &e) &&
	    peer_uid(&e, s->port, &p->uid) == 0)
		p->known = true;
	p->allowed = p->known && uid_allowed(s, p->uid);
	if (p->allowed || __atomic_load_n(&s->n_foreign, __ATOMIC_RELAXED) <
				  SERVE_FOREIGN_MAX)
		return MHD_YES;
	serve_log_refusal(s,
			  "refused a connection from %s %u: %u connections of "
			  "users not allowed are open",
			  p->known ? "uid" : "unknown user, as", p->uid,
			  SERVE_FOREIGN_MAX);
	return MHD_NO;
}

void serve_notify_connection(void *cls, struct MHD_Connection *c,
			     void **socket_context,
			     enum MHD_ConnectionNotificationCode code)
{
	struct serve *s = cls;
	struct peer *p = *socket_context;

	(void)c;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		/* Called right after serve_accept_policy, in the same thread.
		 */
		p = malloc(sizeof(*p));
		if (p) {
			*p = s->pending;
			if (!p->allowed)
				__atomic_add_fetch(&s->n_foreign, 1,
						   __ATOMIC_RELAXED);
		}
		*socket_context = p;
	} else if (p) {
		if (!p->allowed)
			__atomic_sub_fetch(&s->n_foreign, 1, __ATOMIC_RELAXED);
		free(p);
		*socket_context = NULL;
	}
}
