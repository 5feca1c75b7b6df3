/* SPDX-License-Identifier: MIT */
/* Reads ELF program headers and "#!" lines to tell whether preloading works. */
#include "elfcheck.h"
#include "msg.h"

#include <elf.h>
#include <endian.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* The kernel reads this much of a "#!" line (BINPRM_BUF_SIZE, Linux 5.1+). */
#define SHEBANG_MAX 256

/* The ELF header of the object this code is linked into (the linker
 * defines __ehdr_start): palloc's, and so its agent's, machine and word
 * size. */
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

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

/*
 * Classify the ELF file open as fd (its identity already checked) with
 * libelf, which reads either word size and byte order and takes the
 * count of program headers from section 0 past PN_XNUM: a program for
 * this machine and word size with a PT_INTERP header is one the loader
 * preloads into.
 */
static enum elfcheck_verdict check_elf(int fd, struct elfcheck_result *r)
{
	enum elfcheck_verdict v = ELFCHECK_BAD_ELF;
	GElf_Ehdr eh;
	size_t phnum;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return ELFCHECK_BAD_ELF;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getphdrnum(elf, &phnum) < 0)
		goto out;
	r->elf_class = gelf_getclass(elf);
	r->elf_machine = eh.e_machine;
	if (r->elf_class != __ehdr_start.e_ident[EI_CLASS] ||
	    r->elf_machine != __ehdr_start.e_machine) {
		v = ELFCHECK_FOREIGN;
		goto out;
	}
	v = ELFCHECK_STATIC;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			v = ELFCHECK_BAD_ELF;
			break;
		}
		if (ph.p_type == PT_INTERP) {
			v = ELFCHECK_OK;
			break;
		}
	}
out:
	elf_end(elf);
	return v;
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
			r->verdict = n < EI_NIDENT ? ELFCHECK_BAD_ELF
						   : check_elf(fd, r);
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
