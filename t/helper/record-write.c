/* SPDX-License-Identifier: MIT */
/* Test helper: write a hand-built record file (t/helper/record_build.c). */
#include "common.h"
#include "record_build.h"

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
