/* SPDX-License-Identifier: MIT */
/* Test helper: write a hand-built record file (t/helper/record_build.c). */
#include "common.h"
#include "record_build.h"
#include "record_read.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/*
 * record-write --live DIR [exit]: as the agent does, the known record
 * with this process's pid and start ticks in DIR/PID.START.rec, mapped
 * MAP_SHARED; prints the path, then waits for stdin's end; with "exit"
 * marks the record EXITED (status 3) before leaving.
 */
static int live(const char *dir, bool mark_exit)
{
	char path[4096], c;
	struct timespec ts;
	struct record_header *h;
	struct rb b;
	uint64_t pc;
	size_t off;
	void *map;
	int fd;

	clock_gettime(CLOCK_REALTIME, &ts);
	rb_known(&b, 1);
	RB_HDR(&b)->pid = getpid();
	RB_HDR(&b)->start_unix_ns =
		(int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (record_start_ticks(getpid(), &RB_HDR(&b)->start_ticks) < 0)
		return 2;
	/* a frame in this program's own code, which no module of the
	 * record covers: a reader's /proc/PID/maps names it */
	pc = (uint64_t)(uintptr_t)live + 1;
	off = rb_stack(&b, "main", &pc, 1);
	RB_AT(&b, off, struct record_stack)->alloc_objects = 1;
	snprintf(path, sizeof(path), "%s/%d.%lld.rec", dir, (int)getpid(),
		 (long long)RB_HDR(&b)->start_unix_ns);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0 || write(fd, b.buf, b.size) != (ssize_t)b.size) {
		perror(path);
		return 2;
	}
	map = mmap(NULL, b.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	close(fd);
	printf("%s\n", path);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	h = map;
	if (mark_exit) {
		h->state = RECORD_EXITED;
		h->exit_status = 3;
	}
	rb_free(&b);
	return 0;
}

/*
 * record-write FILE [RATE] [KIND]: rb_known()'s record at RATE (default
 * 1) to FILE. KIND "odd-seq": header.seq odd (a change under way that
 * never ends); "exited": state EXITED, status 3, title and memory at
 * exit; "bad-size": header.size past the file; "compact": the compact
 * form of the fuzz target (record_build.h), a seed.
 */
int main(int argc, char **argv)
{
	uint64_t rate = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	const char *kind = argc > 3 ? argv[3] : "";
	struct rb b;
	FILE *f;

	if (argc >= 3 && strcmp(argv[1], "--live") == 0)
		return live(argv[2], argc > 3 && strcmp(argv[3], "exit") == 0);
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: record-write FILE [RATE] [KIND]\n");
		return 2;
	}
	rb_known(&b, rate);
	if (strcmp(kind, "odd-seq") == 0) {
		RB_HDR(&b)->seq = 3;
	} else if (strcmp(kind, "exited") == 0) {
		RB_HDR(&b)->state = RECORD_EXITED;
		RB_HDR(&b)->exit_status = 3;
		RB_HDR(&b)->end_unix_ns = 1700000001000000000;
		snprintf(RB_HDR(&b)->title, sizeof(RB_HDR(&b)->title),
			 "known: worker");
		RB_HDR(&b)->anon_bytes = (int64_t)100 << 20;
		RB_HDR(&b)->anon_peak_bytes = (int64_t)120 << 20;
		RB_HDR(&b)->heap_bytes = (int64_t)10 << 20;
		RB_HDR(&b)->unseen_bytes = (int64_t)110 << 20;
	} else if (strcmp(kind, "bad-size") == 0) {
		RB_HDR(&b)->size = b.size + 16;
	} else if (strcmp(kind, "compact") == 0) {
		unsigned char *c;
		size_t n;

		rb_compact(&b, &c, &n);
		free(b.buf);
		b.buf = c;
		b.size = n;
	} else if (kind[0]) {
		fprintf(stderr, "record-write: unknown kind '%s'\n", kind);
		return 2;
	}
	f = fopen(argv[1], "wbx");
	if (!f || fwrite(b.buf, 1, b.size, f) != b.size || fclose(f) != 0) {
		perror(argv[1]);
		return 2;
	}
	rb_free(&b);
	return 0;
}
