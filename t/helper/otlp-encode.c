/* SPDX-License-Identifier: MIT */
/* Test helper: OTLP profiles requests of known profiles, on stdout. */
#include "common.h"
#include "msg_cli.h"
#include "otlp.h"
#include "pprof.h"

/*
 * otlp-encode ALLOC INUSE   the request of two profile files (t/4000's
 *                           pprof-gen known, say); "none": no profile
 * otlp-encode empty         two profiles of the four types, no sample
 * otlp-encode huge          a 1 MiB function name, a 124 KiB label and a
 *                           64 KiB service name
 * otlp-encode notypes       a profile without alloc_space: refused
 * The resource: service.name "svc" (or the 64 KiB of 's'), process.pid
 * 4242, host.name "host1", the label env=test. Exit 0, 1 when the encoder
 * refused (its message on stderr), 2 on other trouble.
 */
static const struct pprof_value_type types[4] = {
	{"alloc_objects", "count"},
	{"alloc_space", "bytes"},
	{"inuse_objects", "count"},
	{"inuse_space", "bytes"},
};

/* A profile of n_types types; with a name, one sample of 1 object and
 * 4096 bytes in a function of that name, labelled big=label. */
static struct pprof_profile *made(size_t n_types, const char *name,
				  const char *label)
{
	static const int64_t v[4] = {1, 4096, 1, 4096};
	struct pprof_label big = {"big", label, 0, ""};
	struct pprof_profile *p = pprof_new(NULL);
	struct pprof_line line = {0, 7};
	uint64_t loc;

	if (!p || pprof_set_sample_types(p, types, n_types) < 0)
		return NULL;
	if (!name)
		return p;
	line.function_id = pprof_add_function(p, name, name, "huge.c", 7);
	loc = line.function_id ? pprof_add_location(p, 0, 0x1000, &line, 1) : 0;
	if (!loc || pprof_add_sample(p, &loc, 1, v, &big, 1) < 0)
		return NULL;
	return p;
}

static char *filled(size_t n, char c)
{
	char *s = malloc(n + 1);

	if (s) {
		memset(s, c, n);
		s[n] = '\0';
	}
	return s;
}

static struct pprof_profile *read_or_none(const char *path)
{
	return strcmp(path, "none") ? pprof_read_file(path) : NULL;
}

int main(int argc, char **argv)
{
	static const char *const keys[1] = {"env"}, *const values[1] = {"test"};
	struct otlp_resource res = {
		.service_name = "svc",
		.pid = 4242,
		.host_name = "host1",
		.label_keys = keys,
		.label_values = values,
		.n_labels = 1,
	};
	struct pprof_profile *a = NULL, *u = NULL;
	const char *mode = argc >= 2 ? argv[1] : "";
	char *big = NULL, *svc = NULL;
	bool want_a = true;
	void *buf = NULL;
	size_t len = 0;
	int r;

	msg_init(argv[0]);
	if (argc == 3) {
		a = read_or_none(argv[1]);
		u = read_or_none(argv[2]);
		want_a = strcmp(argv[1], "none");
		if ((!a && want_a) || (!u && strcmp(argv[2], "none"))) {
			msg_error_last("cannot read the profiles");
			return 2;
		}
	} else if (!strcmp(mode, "empty")) {
		a = made(4, NULL, NULL);
		u = made(4, NULL, NULL);
	} else if (!strcmp(mode, "huge")) {
		big = filled((size_t)1 << 20, 'f');
		svc = filled(64 << 10, 's');
		if (big && svc) {
			a = made(4, big, big + (900 << 10));
			u = made(4, big, big + (900 << 10));
		}
		res.service_name = svc;
	} else if (!strcmp(mode, "notypes")) {
		a = made(1, NULL, NULL);
	} else {
		fprintf(stderr, "usage: otlp-encode ALLOC INUSE | empty | huge "
				"| notypes\n");
		return 2;
	}
	if (want_a && !a) {
		msg_error_last("cannot build the profile");
		return 2;
	}
	r = otlp_encode_request(a, u, &res, 1700000000000000000ULL,
				1700000015000000000ULL, &buf, &len);
	pprof_free(a);
	pprof_free(u);
	free(big);
	free(svc);
	if (r < 0) {
		msg_error_last("otlp_encode_request");
		return 1;
	}
	r = fwrite(buf, 1, len, stdout) == len && fflush(stdout) == 0;
	free(buf);
	return r ? 0 : 2;
}
