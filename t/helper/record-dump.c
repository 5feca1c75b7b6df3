/* SPDX-License-Identifier: MIT */
/* Test helper: read a record file (wire/record.h), write its pprof. */
#include "common.h"
#include "msg.h"
#include "msg_cli.h"
#include "pprof.h"
#include "record_profile.h"
#include "record_read.h"

#include <unistd.h>

/*
 * record-dump [--alloc] [--stats] FILE|--pid PID OUT: the profile of the
 * record (the default sample type inuse_space, alloc_space with --alloc)
 * written gzipped to OUT ("-": stdout), or with --stats the record's
 * figures as "key value" lines; --pid PID finds the live record of
 * process PID (record_find_live) and --pid PID --jit names the frames
 * in no module from its /proc/PID/maps; record-dump --list DIR lists
 * DIR's records. Exit 2 with one line on error; a copy
 * that stayed inconsistent says so on stderr ("record-dump: warning:").
 */
static PALLOC_NORETURN void die(void)
{
	msg_error("%s", msg_last());
	exit(2);
}

static void stats(const struct record_view *v)
{
	struct record_stats s;

	record_stats(v, &s);
	printf("pid %d\nstate %u\nexit_status %d\nexe %s\n", (int)s.pid,
	       s.state, (int)s.exit_status, s.exe);
	printf("alloc_count %llu\nfree_count %llu\nalloc_bytes %llu\n",
	       (unsigned long long)s.alloc_count,
	       (unsigned long long)s.free_count,
	       (unsigned long long)s.alloc_bytes);
	printf("samples %llu\nreentries %llu\nstacks %zu\nmodules %zu\n",
	       (unsigned long long)s.samples, (unsigned long long)s.reentries,
	       s.n_stacks, s.n_modules);
	printf("live_threads %zu\nalloc_bytes_sampled %lld\n", s.live_threads,
	       (long long)s.alloc_bytes_sampled);
	printf("inuse_bytes_sampled %lld\nallocator_text_len %zu\n",
	       (long long)s.inuse_bytes_sampled, s.allocator_text_len);
}

/* record-dump --list DIR: "PID LIFE EXIT_STATUS VALID" per record. */
static int list(const char *dir)
{
	struct record_listing *l;
	size_t n;

	if (record_list(dir, &l, &n) < 0)
		die();
	for (size_t i = 0; i < n; i++)
		printf("%d %s %d %d\n", (int)l[i].pid,
		       record_life_name(l[i].life), (int)l[i].exit_status,
		       l[i].valid);
	free(l);
	return 0;
}

int main(int argc, char **argv)
{
	struct record_profile_opts o = {0};
	struct record_image im;
	struct record_view v;
	struct pprof_profile *p;
	struct record_maps maps = {0};
	bool want_stats = false;
	pid_t pid;
	int i = 1, fd, rc;

	msg_init(argv[0]);
	if (argc == 3 && strcmp(argv[1], "--list") == 0)
		return list(argv[2]);
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (strcmp(argv[i], "--alloc") == 0)
			o.default_sample_type = "alloc_space";
		else if (strcmp(argv[i], "--stats") == 0)
			want_stats = true;
		else if (strcmp(argv[i], "--pid") == 0)
			break;
		else
			goto usage;
	}
	if (i < argc && strcmp(argv[i], "--pid") == 0) {
		pid = (pid_t)strtol(argv[i + 1 < argc ? i + 1 : i], NULL, 10);
		i += 2;
		if (i < argc && strcmp(argv[i], "--jit") == 0) {
			if (record_maps_read(pid, &maps) < 0)
				die();
			o.unmapped = record_maps_unmapped;
			o.unmapped_ctx = &maps;
			i++;
		}
		if (argc - i != !want_stats)
			goto usage;
		fd = record_find_live(pid, NULL, 0);
	} else {
		if (argc - i != 1 + !want_stats)
			goto usage;
		fd = record_open(argv[i]);
		i++;
	}
	if (fd < 0)
		die();
	rc = record_copy(fd, &im);
	close(fd);
	if (rc < 0)
		die();
	if (im.inconsistent)
		msg_warn("the record kept changing: the copy may be "
			 "inconsistent");
	if (record_check(im.buf, im.len, NULL, &v) < 0)
		die();
	if (want_stats) {
		stats(&v);
		return 0;
	}
	o.time_nanos =
		v.h->end_unix_ns ? v.h->end_unix_ns : v.h->update_unix_ns;
	p = record_profile(&v, &o, NULL);
	if (!p || pprof_write_file(p, argv[i]) < 0)
		die();
	pprof_free(p);
	record_maps_free(&maps);
	record_view_free(&v);
	record_image_free(&im);
	return 0;
usage:
	fprintf(stderr, "usage: record-dump [--alloc] [--stats] FILE|--pid "
			"PID [--jit] OUT\n       record-dump --list DIR\n");
	return 2;
}
