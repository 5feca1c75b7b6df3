/* SPDX-License-Identifier: MIT */
/* The HTTP server's listening address: parsed, and checked against the
 * access rules (serve.h, serve_int.h). */
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

int serve_parse_addr(const char *addr, struct sockaddr_storage *ss,
		     socklen_t *sl)
{
	char host[256] = "127.0.0.1";
	const char *port = addr, *colon = strrchr(addr, ':');
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	uint64_t pv;
	int e;

	if (colon) {
		size_t hl = (size_t)(colon - addr);

		port = colon + 1;
		if (hl && addr[0] == '[' && addr[hl - 1] == ']') {
			addr++;
			hl -= 2;
		}
		if (hl >= sizeof(host))
			return msg_set("invalid address '%s'", addr);
		if (hl) {
			memcpy(host, addr, hl);
			host[hl] = '\0';
		}
	}
	if (num_parse_u64(port, false, &pv) < 0 || pv > 65535)
		return msg_set("invalid port '%s'", port);
	e = getaddrinfo(host, port, &hints, &res);
	if (e != 0 || !res)
		return msg_set("cannot resolve '%s': %s", host,
			       gai_strerror(e));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sl = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* Whether the address in ss is a loopback one (127/8, ::1). */
static bool addr_loopback(const struct sockaddr_storage *ss, socklen_t sl)
{
	struct endpoint e;

	return serve_endpoint_of((const struct sockaddr *)ss, sl, &e) &&
	       serve_endpoint_loopback(&e);
}

int serve_parse_access(const char *arg, struct serve_access *a)
{
	char *copy = strdup(arg), *word, *save = NULL;
	int rc = 0;

	memset(a, 0, sizeof(*a));
	if (!copy)
		return msg_set_errno(ENOMEM, "--allow-users");
	for (word = strtok_r(copy, ",", &save); word && rc == 0;
	     word = strtok_r(NULL, ",", &save)) {
		struct passwd *pw;
		uint64_t v;

		if (strcmp(word, "any") == 0) {
			a->any = true;
			continue;
		}
		if (a->n_uids == SERVE_MAX_USERS) {
			rc = msg_set("more than %d users", SERVE_MAX_USERS);
			break;
		}
		pw = getpwnam(word);
		if (pw)
			a->uids[a->n_uids++] = pw->pw_uid;
		else if (num_parse_u64(word, false, &v) == 0 && v < (uid_t)-1)
			a->uids[a->n_uids++] = (uid_t)v;
		else
			rc = msg_set("no such user '%s'", word);
	}
	if (rc == 0 && !a->any && !a->n_uids)
		rc = msg_set("no user named");
	free(copy);
	return rc;
}

int serve_check_addr(const char *addr, const struct serve_access *a)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	if (serve_parse_addr(addr, &ss, &sl) < 0)
		return -1;
	if (!a->any && !addr_loopback(&ss, sl))
		return msg_set("not a loopback address: the users of other "
			       "hosts cannot be told apart; "
			       "--allow-users=any serves whoever can "
			       "connect");
	return 0;
}
