/* SPDX-License-Identifier: MIT */
/* Unit tests of the record's reader: libcore/pprof/record_profile.c on
 * records built in memory (t/helper/record_build.c), and
 * libcore/tools/record_read.c on files. */
#include "common.h"
#include "msg.h"
#include "pprof.h"
#include "record_build.h"
#include "record_profile.h"
#include "record_read.h"
#include "tap.h"

#include <fcntl.h>
#include <unistd.h>

/* The profile of b, or NULL (the message in msg_last()). */
static struct pprof_profile *profile_of(struct rb *b,
					const struct record_profile_opts *o)
{
	struct record_view v;
	struct pprof_profile *p;

	if (record_check(b->buf, b->size, NULL, &v) < 0)
		return NULL;
	p = record_profile(&v, o, NULL);
	record_view_free(&v);
	return p;
}

/* Sample i as "values | frames (address mapping) | labels". */
static const char *sample_text(const struct pprof_profile *p, size_t i)
{
	static char buf[1024];
	const struct pprof_sample *s = &p->samples[i];
	size_t n = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < p->n_sample_types; k++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%lld",
				      k ? " " : "", (long long)s->values[k]);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, " |");
	for (size_t k = 0; k < s->n_locations; k++) {
		const struct pprof_location *l =
			&p->locations[s->location_ids[k] - 1];
		const char *f = p->mappings[l->mapping_id - 1].file;
		const char *base = strrchr(f, '/');

		n += (size_t)snprintf(buf + n, sizeof(buf) - n, " %llx@%s",
				      (unsigned long long)l->address,
				      base ? base + 1 : f);
	}
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, " |");
	for (size_t k = 0; k < s->n_labels; k++) {
		const struct pprof_label *l = &s->labels[k];

		if (l->str[0])
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
					      " %s=%s", l->key, l->str);
		else
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
					      " %s=%lld%s", l->key,
					      (long long)l->num, l->num_unit);
	}
	return buf;
}

static bool has_comment(const struct pprof_profile *p, const char *c)
{
	for (size_t i = 0; i < p->n_comments; i++)
		if (strcmp(p->comments[i], c) == 0)
			return true;
	return false;
}

static bool has_comment_prefix(const struct pprof_profile *p, const char *c)
{
	for (size_t i = 0; i < p->n_comments; i++)
		if (strncmp(p->comments[i], c, strlen(c)) == 0)
			return true;
	return false;
}

static void known_rate1(void)
{
	static const char *const exp[] = {
		"15 41060 5 16434 4 16384 | 555555555200@known "
		"555555555100@known | thread=main",
		"3 3000000 3 3000000 1 1000000 | 7f0000000500@libc.so.6 "
		"555555555100@known | thread=worker",
		"100 6400 0 0 0 0 | 7f1000000100@plugin.so |",
		"1 10 0 0 0 0 | 7f1000000100@other.so |",
		"2 20 2 20 2 20 | 1000@[unmapped] | thread=main",
		"1 8 1 8 0 0 | 555555555300@known | thread=main",
		"1 100 1 100 1 100 | 555555555200@known | thread=main",
	};
	static const char *const maps[] = {
		"/usr/bin/known", "/lib/x86_64-linux-gnu/libc.so.6",
		"/opt/other.so",  "/opt/plugin.so",
		"[unmapped]",
	};
	struct record_profile_opts o = {.time_nanos = 12345};
	struct pprof_profile *p;
	struct rb b;
	bool same;

	rb_known(&b, 1);
	p = profile_of(&b, &o);
	if (!tap_ok(p != NULL, "the known record gives a profile")) {
		printf("# %s\n", msg_last());
		rb_free(&b);
		return;
	}
	tap_ok(p->n_sample_types == 6 &&
		       strcmp(p->sample_types[4].type, "peak_inuse_objects") ==
			       0 &&
		       strcmp(p->sample_types[5].unit, "bytes") == 0,
	       "RECORD_F_PEAK: six sample types");
	tap_ok(p->period == 1 && strcmp(p->period_type.type, "space") == 0 &&
		       strcmp(p->default_sample_type, "inuse_space") == 0 &&
		       p->time_nanos == 12345,
	       "period = rate, default inuse_space, time stamped");
	same = p->n_samples == ARRAY_SIZE(exp);
	for (size_t i = 0; same && i < p->n_samples; i++)
		same = strcmp(sample_text(p, i), exp[i]) == 0;
	tap_ok(same, "samples: own + live threads' records, peak rule, "
		     "clamp, zero stacks skipped, gen picks the module");
	for (size_t i = 0; !same && i < p->n_samples; i++)
		printf("# %s\n", sample_text(p, i));
	same = p->n_mappings == ARRAY_SIZE(maps);
	for (size_t i = 0; same && i < p->n_mappings; i++)
		same = strcmp(p->mappings[i].file, maps[i]) == 0;
	tap_ok(same, "mappings: loaded ones in order, unloaded and "
		     "[unmapped] when used");
	tap_ok(p->n_mappings > 1 && p->mappings[0].start == 0x555555554000 &&
		       p->mappings[0].limit == 0x555555559000 &&
		       strcmp(p->mappings[0].build_id, "abcdef0123456789") ==
			       0 &&
		       p->mappings[1].offset == 0x1000 &&
		       p->mappings[4].start == 0x1000 &&
		       p->mappings[4].limit == 0x2000,
	       "mapping ranges, offset, build id; [unmapped] covers its page");
	tap_ok(has_comment(p, "command line: ./known --fill 3") &&
		       has_comment(p, "pid: 4242") &&
		       has_comment(p, "sample rate: 1 (every allocation)") &&
		       has_comment(p, "unwinder: auto, max depth 64") &&
		       has_comment(p, "counters: alloc_count 150, free_count "
				      "50, alloc_bytes 51000") &&
		       has_comment(p, "reentries after warm-up: 1") &&
		       has_comment(p, "sampled allocations: 15; dropped "
				      "samples: 2, about 8192 bytes allocated "
				      "(stack table full at 65536 stacks, or "
				      "out of memory)") &&
		       has_comment(p, "peak: inuse at the heap's high-water "
				      "mark (every allocation sampled: "
				      "exact)"),
	       "comments: command line, pid, rate, unwinder, counters of "
	       "exited and live threads, samples, peak");
	tap_ok(!has_comment_prefix(p, "seed:") &&
		       !has_comment_prefix(p, "error bars") &&
		       !has_comment_prefix(p, "process title") &&
		       !has_comment_prefix(p, "forked from") &&
		       !has_comment_prefix(p, "exact:") &&
		       !has_comment_prefix(p, "memory at exit") &&
		       !has_comment_prefix(p, "no allocation observed"),
	       "no comment that does not apply");
	tap_ok(p->n_comments > 2 &&
		       strncmp(p->comments[0], "palloc agent ", 13) == 0 &&
		       strncmp(p->comments[1], "command line: ", 14) == 0 &&
		       strcmp(p->comments[2], "pid: 4242") == 0,
	       "comments in the encoder's order");
	pprof_free(p);
	rb_free(&b);
}

static void known_sampled(void)
{
	struct pprof_profile *p;
	struct rb b;
	struct record_header *h;

	rb_known(&b, 4096);
	h = RB_HDR(&b);
	h->parent_pid = 4000;
	h->flags |= RECORD_F_EXACT;
	h->exact_inuse = 77;
	h->exact_peak = 99;
	snprintf(h->title, sizeof(h->title), "known: worker");
	h->exited_alloc_count = 0; /* 50 live <= 55 at init */
	h->alloc_at_init = 55;
	h->anon_bytes = (int64_t)100 << 20;
	h->anon_peak_bytes = (int64_t)120 << 20;
	h->heap_bytes = (int64_t)10 << 20;
	h->unseen_bytes = (int64_t)110 << 20;
	p = profile_of(&b, &(struct record_profile_opts){
				   .default_sample_type = "alloc_space",
				   .unseen_owner = "the Go runtime",
				   .unseen_hint = "use runtime/pprof"});
	if (!tap_ok(p != NULL, "rate 4096 gives a profile")) {
		rb_free(&b);
		return;
	}
	tap_ok(p->n_samples > 0 &&
		       strcmp(sample_text(p, 0),
			      "15 41060 5 16434 4 16384 | 555555555200@known "
			      "555555555100@known | thread=main "
			      "alloc_objects_stddev=0count "
			      "alloc_space_stddev=4bytes "
			      "inuse_objects_stddev=2count "
			      "inuse_space_stddev=0bytes "
			      "peak_inuse_objects_stddev=2count "
			      "peak_inuse_space_stddev=0bytes") == 0,
	       "rate > 1: TYPE_stddev labels, sqrt of the variances "
	       "(peak's from inuse before the peak): %s",
	       p->n_samples ? sample_text(p, 0) : "");
	tap_ok(p->period == 4096 &&
		       strcmp(p->default_sample_type, "alloc_space") == 0,
	       "period 4096, default alloc_space");
	tap_ok(has_comment(p, "sample rate: 4096 bytes (Poisson; values are "
			      "unbiased estimates)") &&
		       has_comment(p, "seed: 7 (PALLOC_SEED)") &&
		       has_comment_prefix(p, "error bars: labels "
					     "TYPE_stddev") &&
		       has_comment_prefix(p, "peak: inuse when the sampled"),
	       "comments: rate, seed, error bars, sampled peak");
	tap_ok(has_comment(p, "process title: known: worker (the program "
			      "rewrote its argv)") &&
		       has_comment(p, "forked from pid 4000: this profile "
				      "starts at the fork") &&
		       has_comment(p, "exact: inuse_bytes 77, "
				      "peak_inuse_bytes 99 (usable sizes)") &&
		       has_comment(p, "no allocation observed since the agent "
				      "started"),
	       "comments: title, fork, exact, nothing observed");
	tap_ok(has_comment(p, "memory at exit: anonymous 104857600 bytes, "
			      "about 125829120 at the peak; malloc heap seen "
			      "10485760 bytes; not from it 115343360 bytes") &&
		       has_comment(p, "warning: most of this process's memory "
				      "did not come through malloc, so the "
				      "profile does not show it: 120 MiB of "
				      "anonymous memory at the peak, 110 MiB "
				      "of it not from the malloc heap palloc "
				      "saw (10 MiB); likely owner: the Go "
				      "runtime (use runtime/pprof)"),
	       "comments: memory at exit and its warning");
	pprof_free(p);
	rb_free(&b);
}

static void stats(void)
{
	struct record_view v;
	struct record_stats s;
	struct rb b;

	rb_known(&b, 1);
	if (record_check(b.buf, b.size, NULL, &v) < 0) {
		tap_ok(0, "stats: %s", msg_last());
		rb_free(&b);
		return;
	}
	record_stats(&v, &s);
	tap_ok(s.pid == 4242 && s.alloc_count == 150 && s.free_count == 50 &&
		       s.alloc_bytes == 51000 && s.samples == 15 &&
		       s.reentries == 1 && s.live_threads == 1 &&
		       s.n_stacks == 8 && s.n_modules == 4 &&
		       strcmp(s.exe, "known") == 0 && s.dropped_bytes == 8192,
	       "record_stats: counters, counts, strings");
	tap_ok(s.alloc_bytes_sampled ==
			       41060 + 3000000 + 6400 + 10 + 20 + 8 + 100 &&
		       s.allocator_text_len == 30 &&
		       memcmp(s.allocator_text, "<malloc", 7) == 0 &&
		       !s.allocator_torn,
	       "record_stats: sampled totals (live threads' records in), "
	       "allocator text: %lld",
	       (long long)s.alloc_bytes_sampled);
	record_view_free(&v);
	rb_free(&b);
}

/* A malformed record: record_check refuses it with a message holding
 * want, and reads nothing outside the image (ASan builds). */
static void refused(struct rb *b, size_t len, const char *what,
		    const char *want)
{
	struct record_view v;
	int rc;

	msg_set("%s", "");
	rc = record_check(b->buf, len, NULL, &v);
	tap_ok(rc < 0 && strstr(msg_last(), want) != NULL &&
		       !strchr(msg_last(), '\n'),
	       "refused: %s: %s", what, msg_last());
	if (rc == 0)
		record_view_free(&v);
}

/* Offsets of rb_known()'s entries: the n-th entry of type. */
static size_t nth(struct rb *b, uint32_t type, size_t n)
{
	for (size_t off = RECORD_DATA; off < b->size;) {
		struct record_entry *e = RB_AT(b, off, struct record_entry);

		if (e->type == type && n-- == 0)
			return off;
		off += e->size;
	}
	abort();
}

#define BODY(b, off, type) RB_AT(b, (off) + 16, type)

static void malformed(void)
{
	struct rb b;
	size_t off;

#define CASE(setup, len, what, want)                                           \
	do {                                                                   \
		rb_known(&b, 1);                                               \
		setup;                                                         \
		refused(&b, (len) ? (len) : b.size, what, want);               \
		rb_free(&b);                                                   \
	} while (0)
	CASE((void)0, 100, "shorter than the header",
	     "shorter than its header");
	CASE(RB_HDR(&b)->magic[0] = 'X', 0, "magic", "bad magic");
	CASE(RB_HDR(&b)->version = 2, 0, "version", "version 2");
	CASE(RB_HDR(&b)->header_size = 8, 0, "header size", "header size 8");
	CASE(RB_HDR(&b)->header_size = RECORD_DATA + 1, 0, "header size",
	     "header size");
	CASE((void)0, b.size - 16, "size past the copy", "outside");
	CASE(RB_HDR(&b)->size = 100, 0, "size below the data", "outside");
	CASE(RB_HDR(&b)->state = 7, 0, "state", "unknown state 7");
	CASE(memset(RB_HDR(&b)->cmdline, 'x', sizeof(RB_HDR(&b)->cmdline)), 0,
	     "command line without NUL", "not NUL-terminated");
	CASE(memset(RB_HDR(&b)->title, 'x', sizeof(RB_HDR(&b)->title)), 0,
	     "title without NUL", "not NUL-terminated");
	CASE(memset(RB_HDR(&b)->exe, 'x', sizeof(RB_HDR(&b)->exe)), 0,
	     "exe without NUL", "not NUL-terminated");
	CASE(RB_AT(&b, RECORD_DATA, struct record_entry)->size = 8, 0,
	     "entry size below 16", "size 8");
	CASE(RB_AT(&b, RECORD_DATA, struct record_entry)->size += 8, 0,
	     "entry size not a multiple of 16", "multiple of 16");
	CASE(RB_AT(&b, nth(&b, RECORD_TEXT, 0), struct record_entry)->size +=
	     16,
	     0, "last entry past size", "size");
	CASE(RB_AT(&b, RECORD_DATA, struct record_entry)->type = 9, 0,
	     "entry type", "unknown type 9");
	CASE(BODY(&b, nth(&b, RECORD_STACK, 1), struct record_stack)->id = 7, 0,
	     "stack ids out of order", "id 7 where 2");
	CASE(BODY(&b, nth(&b, RECORD_STACK, 0), struct record_stack)->depth =
		     RECORD_MAX_DEPTH + 1,
	     0, "depth above the maximum", "depth 257");
	CASE(BODY(&b, nth(&b, RECORD_STACK, 0), struct record_stack)->depth = 3,
	     0, "frames past the entry", "do not fit");
	CASE(memset(BODY(&b, nth(&b, RECORD_STACK, 0), struct record_stack)
			    ->thread,
		    'x', RECORD_THREAD_NAME),
	     0, "thread name without NUL", "thread name");
	CASE(off = nth(&b, RECORD_STACK, 0);
	     RB_AT(&b, off, struct record_entry)->size = 32, 0,
	     "stack entry too short", "shorter than a stack");
	CASE(off = nth(&b, RECORD_MODULE, 0);
	     memset(BODY(&b, off, struct record_module)->path, 'x',
		    RB_AT(&b, off, struct record_entry)->size - 16 -
			    sizeof(struct record_module)),
	     0, "module path without NUL", "path not NUL-terminated");
	CASE(off = nth(&b, RECORD_MODULE, 0);
	     memset(BODY(&b, off, struct record_module)->build_id, 'a',
		    sizeof(BODY(&b, off, struct record_module)->build_id)),
	     0, "build id without NUL", "build id");
	CASE(off = nth(&b, RECORD_MODULE, 0);
	     BODY(&b, off, struct record_module)->limit = 0, 0,
	     "module limit below start", "limit not above start");
	CASE(off = nth(&b, RECORD_MODULE, 0);
	     RB_AT(&b, off, struct record_entry)->size = 16, 0,
	     "module entry too short", "too short for a module");
	CASE(off = nth(&b, RECORD_THREAD, 0);
	     BODY(&b, off, struct record_thread)->state = 5, 0, "thread state",
	     "unknown state 5");
	CASE(off = nth(&b, RECORD_THREAD, 0);
	     BODY(&b, off, struct record_thread)->recs += 16, 0,
	     "records not at a RECS body", "not a RECS entry's body");
	CASE(off = nth(&b, RECORD_THREAD, 0);
	     BODY(&b, off, struct record_thread)->recs = 0xffffffffffff, 0,
	     "records far outside", "not a RECS entry's body");
	CASE(off = nth(&b, RECORD_THREAD, 0);
	     BODY(&b, off, struct record_thread)->recs =
		     nth(&b, RECORD_TEXT, 0) + 16,
	     0, "records at a TEXT body", "not a RECS entry's body");
	CASE(off = nth(&b, RECORD_THREAD, 0);
	     BODY(&b, off, struct record_thread)->recs_cap = 9, 0,
	     "records past their entry", "do not fit");
	CASE(off = nth(&b, RECORD_THREAD, 1);
	     BODY(&b, off, struct record_thread)->recs_cap = 0x80000000u, 0,
	     "a free slot's huge capacity", "do not fit");
	CASE(BODY(&b, nth(&b, RECORD_THREAD, 1), struct record_thread)->state =
		     RECORD_THREAD_LIVE;
	     BODY(&b, nth(&b, RECORD_THREAD, 1), struct record_thread)->recs =
		     BODY(&b, nth(&b, RECORD_THREAD, 0), struct record_thread)
			     ->recs,
	     0, "two live threads sharing a table", "another live thread's");
	CASE(off = nth(&b, RECORD_THREAD, 0);
	     RB_AT(&b, off, struct record_entry)->size = 32, 0,
	     "thread entry too short", "too short for a thread");
	CASE(RB_HDR(&b)->allocator.text += 16, 0, "text not at a TEXT body",
	     "not a TEXT entry's body");
	CASE(RB_HDR(&b)->allocator.text = nth(&b, RECORD_RECS, 0) + 16, 0,
	     "text at a RECS body", "not a TEXT entry's body");
	CASE(RB_HDR(&b)->allocator.text_len = 100, 0, "text_len above cap",
	     "do not fit");
	CASE(RB_HDR(&b)->allocator.text_cap = 1000, 0, "text_cap past entry",
	     "do not fit");
#undef CASE
	{
		/* not aligned: a copy at an odd address */
		unsigned char *m;

		rb_known(&b, 1);
		m = malloc(b.size + 1);
		memcpy(m + 1, b.buf, b.size);
		{
			struct record_view v;

			tap_ok(record_check(m + 1, b.size, NULL, &v) < 0 &&
				       strstr(msg_last(), "aligned"),
			       "refused: a copy not 8-byte aligned");
		}
		free(m);
		rb_free(&b);
	}
}

/* Every prefix, and bytes flipped at random: an answer, never a crash
 * (the sanitizers' CI build watches the reads). */
static void hostile(void)
{
	struct rb b;
	unsigned seed = 1;
	size_t ok_profiles = 0, refused_n = 0;
	bool all_answered = true;

	rb_known(&b, 4096);
	for (int i = 0; i < 3000; i++) {
		unsigned char *copy = malloc(b.size);
		struct record_view v;

		memcpy(copy, b.buf, b.size);
		for (int k = 0; k < 1 + i % 8; k++) {
			size_t at;

			seed = seed * 1103515245 + 12345;
			at = i % 2 ? RECORD_DATA + seed % (b.size - RECORD_DATA)
				   : (seed >> 3) % b.size;
			copy[at] ^= (unsigned char)(1u << (seed >> 28) % 8);
		}
		if (record_check(copy, b.size, NULL, &v) == 0) {
			struct pprof_profile *p =
				record_profile(&v, NULL, NULL);

			all_answered &= p != NULL;
			ok_profiles += p != NULL;
			pprof_free(p);
			record_view_free(&v);
		} else {
			refused_n++;
			all_answered &= msg_last()[0] != '\0';
		}
		free(copy);
	}
	tap_ok(all_answered && ok_profiles && refused_n,
	       "3000 damaged copies: %zu profiles, %zu refused with a "
	       "message",
	       ok_profiles, refused_n);
	rb_free(&b);
}

/* record_copy on a file: consistent, then an odd seq retried and flagged. */
static void copy_file(void)
{
	char path[] = "/tmp/palloc-record-unit-XXXXXX";
	struct record_image im;
	struct rb b;
	int fd = mkstemp(path), rc;

	if (fd < 0)
		abort();
	unlink(path);
	rb_known(&b, 1);
	if (write(fd, b.buf, b.size) != (ssize_t)b.size)
		abort();
	tap_ok(record_copy(fd, &im) == 0 && im.len == b.size &&
		       !im.inconsistent && im.tries == 1 &&
		       memcmp(im.buf, b.buf, b.size) == 0,
	       "record_copy: a quiet record copied once, consistent");
	record_image_free(&im);
	RB_HDR(&b)->seq = 5;
	if (pwrite(fd, b.buf, RECORD_DATA, 0) != RECORD_DATA)
		abort();
	rc = record_copy(fd, &im);
	tap_ok(rc == 0 && im.inconsistent && im.tries == RECORD_READ_TRIES,
	       "record_copy: seq odd: %u tries, then kept as inconsistent",
	       im.tries);
	record_image_free(&im);
	RB_HDR(&b)->seq = 6;
	RB_HDR(&b)->size = b.size + 4096;
	if (pwrite(fd, b.buf, RECORD_DATA, 0) != RECORD_DATA)
		abort();
	tap_ok(record_copy(fd, &im) == 0 && im.inconsistent,
	       "record_copy: header.size past the file: inconsistent");
	record_image_free(&im);
	if (ftruncate(fd, 100) < 0)
		abort();
	rc = record_copy(fd, &im);
	tap_ok(rc < 0 && strstr(msg_last(), "too short"),
	       "record_copy: a file shorter than the header: %s", msg_last());
	close(fd);
	rb_free(&b);
}

int main(void)
{
	known_rate1();
	known_sampled();
	stats();
	malformed();
	hostile();
	copy_file();
	return tap_done();
}
