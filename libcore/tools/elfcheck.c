/* SPDX-License-Identifier: MIT */
/* Reads ELF program headers and "#!" lines to tell whether preloading works. */
#include "elfcheck.h"
#include "msg.h"

#include <elf.h>
#include <endian.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* The kernel reads this much of a "#!" line (BINPRM_BUF_SIZE, Linux 5.1+). */
#define SHEBANG_MAX 256

/* The ELF machine palloc (and so its agent) is built for; 0: unknown. */
static int native_machine(void)
{
#if defined(__x86_64__)
	return EM_X86_64;
#elif defined(__i386__)
	return EM_386;
#elif defined(__aarch64__)
	return EM_AARCH64;
#elif defined(__arm__)
	return EM_ARM;
#elif defined(__powerpc64__)
	return EM_PPC64;
#elif defined(__s390x__)
	return EM_S390;
#elif defined(__riscv)
	return EM_RISCV;
#else
	return 0;
#endif
}

static int native_class(void)
{
	return sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
}

const char *elfcheck_reason(enum elfcheck_verdict v)
{
	switch (v) {
	case ELFCHECK_OK:
		return "can be preloaded";
	case ELFCHECK_STATIC:
		return "statically linked: there is no dynamic loader, so "
		       "LD_PRELOAD is never read";
	case ELFCHECK_SETUID:
		return "set-user-ID: the dynamic loader ignores LD_PRELOAD "
		       "in secure-execution mode";
	case ELFCHECK_SETGID:
		return "set-group-ID: the dynamic loader ignores LD_PRELOAD "
		       "in secure-execution mode";
	case ELFCHECK_CAPS:
		return "has file capabilities: the dynamic loader ignores "
		       "LD_PRELOAD in secure-execution mode";
	case ELFCHECK_FOREIGN:
		return "built for another architecture or word size than the "
		       "agent: the dynamic loader would skip it";
	case ELFCHECK_BAD_ELF:
		return "not a valid ELF file";
	case ELFCHECK_NESTED:
		return "too many levels of '#!' interpreters";
	}
	return "unknown";
}

/* Read exactly len bytes at off; 0, or -1 (short file: errno 0). */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	if (off > (uint64_t)INT64_MAX)
		return -1;
	do {
		n = pread(fd, buf, len, (off_t)off);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if ((size_t)n != len) {
		errno = 0;
		return -1;
	}
	return 0;
}

struct elf_reader {
	int fd;
	bool swap; /* file byte order differs from ours */
	bool is64;
};

static uint16_t get16(const struct elf_reader *e, uint16_t v)
{
	return e->swap ? __builtin_bswap16(v) : v;
}

static uint32_t get32(const struct elf_reader *e, uint32_t v)
{
	return e->swap ? __builtin_bswap32(v) : v;
}

static uint64_t get64(const struct elf_reader *e, uint64_t v)
{
	return e->swap ? __builtin_bswap64(v) : v;
}

/*
 * Look for PT_INTERP among the program headers. Returns 1 if present,
 * 0 if not, -1 if the headers are inconsistent or unreadable.
 */
static int has_interp(const struct elf_reader *e, uint64_t phoff,
		      uint32_t phnum, uint16_t phentsize)
{
	size_t want = e->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);

	if (phnum == 0)
		return 0;
	if (phentsize < want)
		return -1;
	for (uint32_t i = 0; i < phnum; i++) {
		uint64_t off = phoff + (uint64_t)i * phentsize;
		uint32_t type;

		if (e->is64) {
			Elf64_Phdr ph;

			if (read_at(e->fd, &ph, sizeof(ph), off) < 0)
				return -1;
			type = get32(e, ph.p_type);
		} else {
			Elf32_Phdr ph;

			if (read_at(e->fd, &ph, sizeof(ph), off) < 0)
				return -1;
			type = get32(e, ph.p_type);
		}
		if (type == PT_INTERP)
			return 1;
	}
	return 0;
}

/* Classify the ELF file open as fd; its identity bytes are in ident. */
static enum elfcheck_verdict check_elf(int fd, const unsigned char *ident,
				       struct elfcheck_result *r)
{
	struct elf_reader e = {.fd = fd};
	uint64_t phoff, shoff;
	uint32_t phnum;
	uint16_t phentsize, shentsize;
	bool little = ident[EI_DATA] == ELFDATA2LSB;
	int rc;

	if (ident[EI_CLASS] != ELFCLASS32 && ident[EI_CLASS] != ELFCLASS64)
		return ELFCHECK_BAD_ELF;
	if (ident[EI_DATA] != ELFDATA2LSB && ident[EI_DATA] != ELFDATA2MSB)
		return ELFCHECK_BAD_ELF;
	e.is64 = ident[EI_CLASS] == ELFCLASS64;
	e.swap = little != (__BYTE_ORDER == __LITTLE_ENDIAN);
	r->elf_class = ident[EI_CLASS];
	if (e.is64) {
		Elf64_Ehdr h;

		if (read_at(fd, &h, sizeof(h), 0) < 0)
			return ELFCHECK_BAD_ELF;
		r->elf_machine = get16(&e, h.e_machine);
		phoff = get64(&e, h.e_phoff);
		shoff = get64(&e, h.e_shoff);
		phnum = get16(&e, h.e_phnum);
		phentsize = get16(&e, h.e_phentsize);
		shentsize = get16(&e, h.e_shentsize);
	} else {
		Elf32_Ehdr h;

		if (read_at(fd, &h, sizeof(h), 0) < 0)
			return ELFCHECK_BAD_ELF;
		r->elf_machine = get16(&e, h.e_machine);
		phoff = get32(&e, h.e_phoff);
		shoff = get32(&e, h.e_shoff);
		phnum = get16(&e, h.e_phnum);
		phentsize = get16(&e, h.e_phentsize);
		shentsize = get16(&e, h.e_shentsize);
	}
	/* More than 0xfffe headers: the real count is section 0's sh_info. */
	if (phnum == PN_XNUM) {
		if (e.is64) {
			Elf64_Shdr sh;

			if (shentsize < sizeof(sh) ||
			    read_at(fd, &sh, sizeof(sh), shoff) < 0)
				return ELFCHECK_BAD_ELF;
			phnum = get32(&e, sh.sh_info);
		} else {
			Elf32_Shdr sh;

			if (shentsize < sizeof(sh) ||
			    read_at(fd, &sh, sizeof(sh), shoff) < 0)
				return ELFCHECK_BAD_ELF;
			phnum = get32(&e, sh.sh_info);
		}
	}
	if (r->elf_class != native_class() ||
	    (native_machine() != 0 && r->elf_machine != native_machine()))
		return ELFCHECK_FOREIGN;
	rc = has_interp(&e, phoff, phnum, phentsize);
	if (rc < 0)
		return ELFCHECK_BAD_ELF;
	return rc ? ELFCHECK_OK : ELFCHECK_STATIC;
}

/* Secure execution (AT_SECURE) from the file's mode bits or capabilities. */
static enum elfcheck_verdict check_secure(int fd, const struct stat *st)
{
	ssize_t n;

	if (st->st_mode & S_ISUID)
		return ELFCHECK_SETUID;
	/* Set-group-ID without group execute means mandatory locking. */
	if ((st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP))
		return ELFCHECK_SETGID;
	n = fgetxattr(fd, "security.capability", NULL, 0);
	if (n > 0)
		return ELFCHECK_CAPS;
	return ELFCHECK_OK;
}

/*
 * From a "#!" line in buf (len bytes), copy the interpreter path into out.
 * Returns 0, or -1 when the line names no interpreter.
 */
static int shebang_interp(const char *buf, size_t len, char *out,
			  size_t out_size)
{
	size_t i = 2, start, n;

	while (i < len && (buf[i] == ' ' || buf[i] == '\t'))
		i++;
	start = i;
	while (i < len && buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' &&
	       buf[i] != '\0')
		i++;
	n = i - start;
	if (n == 0 || n >= out_size)
		return -1;
	memcpy(out, buf + start, n);
	out[n] = '\0';
	return 0;
}

int elfcheck_program(const char *path, struct elfcheck_result *r)
{
	char cur[PATH_MAX];

	memset(r, 0, sizeof(*r));
	if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur)) {
		errno = ENAMETOOLONG;
		return msg_set_errno(errno, "cannot read '%s'", path);
	}
	for (;;) {
		char buf[SHEBANG_MAX];
		struct stat st;
		ssize_t n;
		int fd;

		snprintf(r->target, sizeof(r->target), "%s", cur);
		fd = open(cur, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			int e = errno;

			msg_set_errno(e, "cannot read '%s'", cur);
			errno = e;
			return -1;
		}
		if (fstat(fd, &st) < 0) {
			int e = errno;

			close(fd);
			msg_set_errno(e, "cannot read '%s'", cur);
			errno = e;
			return -1;
		}
		do {
			n = pread(fd, buf, sizeof(buf), 0);
		} while (n < 0 && errno == EINTR);
		if (n < 0) {
			int e = errno;

			close(fd);
			msg_set_errno(e, "cannot read '%s'", cur);
			errno = e;
			return -1;
		}
		if (n >= SELFMAG && memcmp(buf, ELFMAG, SELFMAG) == 0) {
			if (n < EI_NIDENT)
				r->verdict = ELFCHECK_BAD_ELF;
			else
				r->verdict = check_elf(
					fd, (const unsigned char *)buf, r);
			if (r->verdict == ELFCHECK_OK)
				r->verdict = check_secure(fd, &st);
			close(fd);
			return 0;
		}
		close(fd);
		if (r->scripts >= ELFCHECK_MAX_SCRIPTS) {
			r->verdict = ELFCHECK_NESTED;
			return 0;
		}
		r->scripts++;
		if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
			if (shebang_interp(buf, (size_t)n, cur, sizeof(cur)) <
			    0) {
				errno = ENOEXEC;
				return msg_set("cannot run '%s': its '#!' line "
					       "names no interpreter",
					       r->target);
			}
			continue;
		}
		/* No known format: execvp(3) runs it with the shell. */
		if (r->scripts > 1) {
			errno = ENOEXEC;
			return msg_set_errno(errno, "cannot run '%s'",
					     r->target);
		}
		r->via_shell = true;
		snprintf(cur, sizeof(cur), "%s", "/bin/sh");
	}
}

/*
 * libelf's view of the regular file at path, its descriptor in *fd (both
 * for elf_close); NULL when there is none. O_NONBLOCK and the S_ISREG
 * check: a FIFO or device planted at path neither blocks nor is read.
 */
static Elf *elf_open(const char *path, int *fd)
{
	struct stat st;
	Elf *elf = NULL;

	*fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	if (fstat(*fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    elf_version(EV_CURRENT) != EV_NONE)
		elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		close(*fd);
	return elf;
}

static void elf_close(Elf *elf, int fd)
{
	elf_end(elf);
	close(fd);
}

/*
 * Does the ELF file elf define a function (or ifunc) named name in table
 * type (SHT_SYMTAB or SHT_DYNSYM)? False when it cannot tell (no such
 * table: a stripped program has no .symtab).
 */
static bool elf_defines(Elf *elf, Elf64_Word type, const char *name)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type ||
		    !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    sym.st_shndx == SHN_UNDEF ||
			    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && strcmp(s, name) == 0)
				return true;
		}
	}
	return false;
}

/*
 * A program with its own malloc that it does not export (an allocator
 * linked in with hidden visibility) calls it directly: the agent cannot
 * see those allocations, nor tell from inside (it reads only the dynamic
 * symbols). The symbol table says so when the program is not stripped.
 */
bool elfcheck_hidden_malloc(const char *path)
{
	int fd;
	Elf *elf = elf_open(path, &fd);
	bool hidden;

	if (!elf)
		return false;
	hidden = elf_defines(elf, SHT_SYMTAB, "malloc") &&
		 !elf_defines(elf, SHT_DYNSYM, "malloc");
	elf_close(elf, fd);
	return hidden;
}

bool elfcheck_exports(const char *path, const char *name)
{
	int fd;
	Elf *elf = elf_open(path, &fd);
	bool found;

	if (!elf)
		return false;
	found = elf_defines(elf, SHT_DYNSYM, name);
	elf_close(elf, fd);
	return found;
}

bool elfcheck_is_go(const char *path)
{
	static const char *const go_sections[] = {".go.buildinfo", ".gopclntab",
						  ".note.go.buildid"};
	int fd;
	Elf *elf = elf_open(path, &fd);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool go = false;

	if (!elf)
		return false;
	if (elf_getshdrstrndx(elf, &shstrndx) == 0)
		while (!go && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *n;

			if (!gelf_getshdr(scn, &sh))
				continue;
			n = elf_strptr(elf, shstrndx, sh.sh_name);
			for (size_t k = 0; n && k < ARRAY_SIZE(go_sections);
			     k++)
				go = go || strcmp(n, go_sections[k]) == 0;
		}
	elf_close(elf, fd);
	return go;
}
