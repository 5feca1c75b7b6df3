/* SPDX-License-Identifier: MIT */
/* The commands' one profile reader: streamed, checked as it comes, bounded. */
#include "pprof.h"
#include "msg.h"
#include "num.h"
#include "pprof_read.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Bytes read, and inflated, at a time. */
#define CHUNK ((size_t)64 << 10)

size_t pprof_read_limit(void)
{
	const char *s = getenv("PALLOC_PROFILE_MAX");
	uint64_t v;

	if (s && *s && num_parse_u64(s, true, &v) == 0 && v > 0 &&
	    v < SIZE_MAX / 2)
		return (size_t)v;
	return PPROF_READ_MAX;
}

/*
 * The stream so far, checked as it grows: buf[0, have) of at most max
 * bytes (one spare after), pos the first top-level field not yet checked.
 */
struct stream {
	unsigned char *buf;
	size_t have, cap, max, pos;
};

/* A varint at b[*pos, end): 1 read, 0 incomplete, -1 longer than 10. */
static int get_varint(const unsigned char *b, size_t end, size_t *pos,
		      uint64_t *v)
{
	uint64_t x = 0;

	for (size_t i = 0; i < 10; i++) {
		if (*pos + i >= end)
			return 0;
		x |= (uint64_t)(b[*pos + i] & 0x7f) << (7 * i);
		if (!(b[*pos + i] & 0x80)) {
			*pos += i + 1;
			*v = x;
			return 1;
		}
	}
	return -1;
}

/*
 * Check the top-level fields that are complete in s->buf: each key a
 * field of profile.proto's Profile with its wire type (unknown field
 * numbers pass, as protobuf says), each length within the limit. The
 * decoder checks everything again; this refuses a stream at its first
 * byte that is no profile (a gzip bomb of zeros, a sparse file), before
 * it is held. 0, or -1 with msg_set().
 */
static int check_fields(struct stream *s)
{
	while (s->pos < s->have) {
		size_t at = s->pos, p = s->pos;
		unsigned long long field;
		unsigned int wt, want;
		uint64_t key, v;
		int r = get_varint(s->buf, s->have, &p, &key);

		if (r == 0)
			return 0;
		if (r < 0)
			return msg_set("malformed protobuf at byte %zu: "
				       "invalid field key",
				       at);
		field = key >> 3;
		wt = key & 7;
		if (field == 0 || field > 536870911)
			return msg_set("malformed protobuf at byte %zu: "
				       "invalid field number %llu",
				       at, field);
		if (wt == 0 || wt == 2) {
			r = get_varint(s->buf, s->have, &p, &v);
		} else if (wt == 1 || wt == 5) {
			v = wt == 1 ? 8 : 4;
		} else {
			return msg_set("malformed protobuf at byte %zu: "
				       "unsupported wire type %u of field %llu",
				       at, wt, field);
		}
		if (r == 0)
			return 0;
		if (r < 0)
			return msg_set("malformed protobuf at byte %zu: "
				       "invalid varint of field %llu",
				       at, field);
		/* pprof_decode.c's check_field(): messages and strings are
		 * length-delimited, comment may be packed, the rest varints */
		want = field <= 6 || field == 11 ? 2
		       : field == 13 && wt == 2	 ? 2
						 : 0;
		if (field <= 14 && wt != want)
			return msg_set("malformed protobuf at byte %zu: field "
				       "%llu has wire type %u, not %u",
				       at, field, wt, want);
		if (wt != 0) {
			if (v > s->max || p + v > s->max)
				return msg_set("profile is larger than %zu "
					       "bytes uncompressed (the "
					       "limit, PALLOC_PROFILE_MAX): "
					       "field %llu at byte %zu "
					       "declares %llu bytes",
					       s->max, field, at,
					       (unsigned long long)v);
			p += (size_t)v;
		}
		s->pos = p;
	}
	return 0;
}

/* The limit's message. -1. */
static int over_limit(const struct stream *s)
{
	errno = EFBIG;
	return msg_set("profile is larger than %zu bytes uncompressed (the "
		       "limit, PALLOC_PROFILE_MAX)",
		       s->max);
}

/* Room for at least one more byte in s->buf, which holds at most max + 1
 * (one past the limit says the limit was passed). 0 or -1. */
static int grow(struct stream *s)
{
	size_t cap;
	unsigned char *b;

	if (s->have < s->cap)
		return 0;
	if (s->have > s->max)
		return over_limit(s);
	cap = s->cap ? s->cap * 2 : CHUNK;
	if (cap > s->max + 1 || cap < s->cap)
		cap = s->max + 1;
	b = realloc(s->buf, cap);
	if (!b)
		return msg_set_errno(ENOMEM, "cannot hold the profile");
	s->buf = b;
	s->cap = cap;
	return 0;
}

/* Append in[0, len) to s. 0 or -1. */
static int append(struct stream *s, const unsigned char *in, size_t len)
{
	while (len) {
		size_t n;

		if (grow(s) < 0)
			return -1;
		n = s->cap - s->have < len ? s->cap - s->have : len;
		memcpy(s->buf + s->have, in, n);
		s->have += n;
		in += n;
		len -= n;
		if (s->have > s->max)
			return over_limit(s);
	}
	return check_fields(s);
}

/*
 * Inflate z's input (in[0, len); len 0: the end of the file, drain) into
 * s, member after member. *end: the last member ended. Returns the bytes
 * of in left unused (0, or 1 when a member ended on the last byte but
 * one: the next member's magic is not whole yet), or -1.
 */
static long inflate_into(struct stream *s, z_stream *z, unsigned char *in,
			 size_t len, bool *end)
{
	z->next_in = in;
	z->avail_in = (uInt)len;
	while (z->avail_in > 0 || (len == 0 && !*end)) {
		int ret;

		if (*end) {
			if (z->avail_in < 2)
				return (long)z->avail_in;
			/* gzip allows several members one after another */
			if (z->next_in[0] != 0x1f || z->next_in[1] != 0x8b ||
			    inflateReset(z) != Z_OK)
				return msg_set("invalid gzip data: trailing "
					       "garbage");
			*end = false;
			continue;
		}
		if (grow(s) < 0)
			return -1;
		z->next_out = s->buf + s->have;
		z->avail_out = s->cap - s->have > UINT_MAX
				       ? UINT_MAX
				       : (uInt)(s->cap - s->have);
		ret = inflate(z, Z_NO_FLUSH);
		s->have = (size_t)(z->next_out - s->buf);
		if (s->have > s->max)
			return over_limit(s);
		if (ret == Z_STREAM_END)
			*end = true;
		else if (ret == Z_BUF_ERROR && z->avail_in == 0 && len)
			break; /* more input needed */
		else if (ret == Z_BUF_ERROR && z->avail_in == 0)
			return msg_set("truncated gzip data after %zu bytes",
				       s->have);
		else if (ret == Z_MEM_ERROR)
			return msg_set_errno(ENOMEM, "cannot inflate");
		else if (ret != Z_OK)
			return msg_set("invalid gzip data: %s",
				       z->msg ? z->msg : "zlib error");
		if (check_fields(s) < 0)
			return -1;
	}
	return 0;
}

/* Read fd through to its end into s, inflating gzip. 0 or -1; *io: the
 * failure was reading, not what was read. */
static int read_stream(int fd, struct stream *s, bool *io)
{
	unsigned char *in = malloc(CHUNK);
	bool gz = false, started = false, end = false;
	size_t keep = 0;
	z_stream z = {0};
	int rc = -1;

	if (!in)
		return msg_set_errno(ENOMEM, "cannot read");
	for (;;) {
		ssize_t r = read(fd, in + keep, CHUNK - keep);
		size_t n;
		long left;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN) {
			/* a non-blocking stream the caller handed down */
			struct timespec ts = {0, 10000000};

			nanosleep(&ts, NULL);
			continue;
		}
		if (r < 0) {
			msg_set_errno(errno, "read error");
			*io = true;
			goto out;
		}
		n = (size_t)r + keep;
		keep = 0;
		if (!started) {
			if (n == 1 && r > 0) {
				keep = 1; /* the magic needs two bytes */
				continue;
			}
			started = true;
			gz = n >= 2 && in[0] == 0x1f && in[1] == 0x8b;
			if (gz && inflateInit2(&z, 15 + 16) != Z_OK) {
				msg_set("cannot inflate: %s",
					z.msg ? z.msg : "out of memory");
				gz = false;
				goto out;
			}
		}
		if (!gz) {
			if (append(s, in, n) < 0)
				goto out;
			if (r == 0)
				break;
			continue;
		}
		if (n > 0) {
			left = inflate_into(s, &z, in, n, &end);
			if (left < 0)
				goto out;
			if (left) {
				in[0] = in[n - 1];
				keep = 1;
			}
		}
		if (r == 0) {
			if (keep) {
				msg_set("invalid gzip data: trailing garbage");
				goto out;
			}
			if (inflate_into(s, &z, in, 0, &end) < 0)
				goto out;
			break;
		}
	}
	if (s->have == 0) {
		msg_set("invalid profile: empty input");
		goto out;
	}
	rc = 0;
out:
	if (gz)
		inflateEnd(&z);
	free(in);
	return rc;
}

struct pprof_profile *pprof_read_fd_io(int fd, size_t max, bool *io)
{
	struct stream s = {.max = max ? max : pprof_read_limit()};
	struct pprof_profile *p = NULL;
	struct stat st;

	*io = false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size > s.max) {
		*io = true;
		errno = EFBIG;
		msg_set("larger than %zu bytes (%lld; the limit, "
			"PALLOC_PROFILE_MAX)",
			s.max, (long long)st.st_size);
		return NULL;
	}
	/* Plain protobuf now, whole: the decoder does not copy it. */
	if (read_stream(fd, &s, io) == 0)
		p = pprof_decode(s.buf, s.have, s.max, NULL);
	free(s.buf);
	return p;
}

struct pprof_profile *pprof_read_fd(int fd, size_t max)
{
	bool io;

	return pprof_read_fd_io(fd, max, &io);
}
