/* SPDX-License-Identifier: MIT */
/* Named threads allocating known amounts: the thread label's truth. */
#include "common.h"

#include <pthread.h>

#include "example.h"

/*
 * Built with the project's CFLAGS (default -g -O2). Thread i (0-based,
 * named "worker-i" with pthread_setname_np before it allocates) calls
 * worker_alloc, which allocates (i + 1) * 64 blocks of 64 KiB and frees
 * every other one: per thread (i + 1) * 64 objects and (i + 1) * 4 MiB
 * allocated, half of both live at exit. The main thread ("threads", the
 * program name) allocates nothing of its own. Truth lines: one per thread
 * (site "thread=worker-i") and one for the function worker_alloc (all
 * threads summed).
 */

#define MAX_THREADS 64
#define BLOCK (64 << 10)

struct worker {
	pthread_t tid;
	unsigned index;
	char name[16];
	struct ex_site site;
	void **blocks;
	size_t n_blocks;
};

static struct worker workers[MAX_THREADS];

EX_SITE void worker_alloc(struct worker *w);
EX_SITE void *worker_main(void *arg);

EX_SITE void worker_alloc(struct worker *w)
{
	for (size_t i = 0; i < w->n_blocks; i++) {
		w->blocks[i] = ex_keep(malloc(BLOCK));
		ex_check(w->blocks[i], "malloc");
		ex_alloc(&w->site, BLOCK);
	}
	for (size_t i = 0; i < w->n_blocks; i += 2) {
		free(w->blocks[i]);
		w->blocks[i] = NULL;
		ex_free(&w->site, BLOCK);
	}
}

EX_SITE void *worker_main(void *arg)
{
	struct worker *w = arg;

	/* Named before any allocation, so every sample carries the name. */
	pthread_setname_np(pthread_self(), w->name);
	worker_alloc(w);
	return NULL;
}

static const char help[] =
	"Usage: threads [--threads <n>] [--truth <file>]\n"
	"\n"
	"Start <n> threads named worker-0 .. worker-<n-1> (default 4);\n"
	"thread i allocates (i+1)*64 blocks of 64 KiB in worker_alloc "
	"and\n"
	"frees half of them. Prints the truth per thread (site\n"
	"thread=worker-i) and for worker_alloc, on stderr and (with\n"
	"--truth) in <file>: pid site alloc_objects alloc_space\n"
	"inuse_objects inuse_space.\n"
	"\n"
	"Options:\n"
	" -n, --threads <n>    number of threads, 1 to 64 (default 4)\n" EX_HELP_OPTIONS
	"See examples/README.md.\n";

int main(int argc, char **argv)
{
	struct ex_site out[MAX_THREADS + 1];
	struct ex_site *sum = &out[0];
	unsigned long n = 4;
	char names[MAX_THREADS][24];
	const struct ex_opt opts[] = {
		{"threads", 'n', "thread count", 1, MAX_THREADS, &n, NULL},
	};
	const char *truth =
		ex_options("threads", help, argc, argv, opts, ARRAY_SIZE(opts));

	if (ex_truth_start("threads", truth) != 0)
		return 2;

	/*
	 * The block arrays are static storage: a malloc here would be a
	 * site of main's, outside the truth.
	 */
	static void *storage[MAX_THREADS * (MAX_THREADS + 1) * 64 / 2];
	size_t used = 0;

	for (unsigned i = 0; i < n; i++) {
		struct worker *w = &workers[i];

		w->index = i;
		snprintf(w->name, sizeof(w->name), "worker-%u", i);
		w->n_blocks = (size_t)(i + 1) * 64;
		w->blocks = &storage[used];
		used += w->n_blocks;
		if (pthread_create(&w->tid, NULL, worker_main, w) != 0) {
			fprintf(stderr, "threads: cannot create thread %u\n",
				i);
			return 2;
		}
	}
	memset(out, 0, sizeof(out));
	sum->name = "worker_alloc";
	for (unsigned i = 0; i < n; i++) {
		struct worker *w = &workers[i];

		pthread_join(w->tid, NULL);
		out[i + 1] = w->site;
		snprintf(names[i], sizeof(names[i]), "thread=%s", w->name);
		out[i + 1].name = names[i];
		sum->alloc_objects += w->site.alloc_objects;
		sum->alloc_space += w->site.alloc_space;
		sum->inuse_objects += w->site.inuse_objects;
		sum->inuse_space += w->site.inuse_space;
	}
	return ex_report("threads", truth, out, n + 1);
}
