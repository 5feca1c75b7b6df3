/* SPDX-License-Identifier: MIT */
/* A function called inside a running process, without a debugger (inject.h). */
#include "common.h"
#include "inject.h"
#include "inject_int.h"
#include "clock.h"
#include "elfcheck.h"
#include "msg.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libunwind-ptrace.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif
#ifndef PTRACE_SEIZE
#define PTRACE_SEIZE 0x4206
#define PTRACE_INTERRUPT 0x4207
#define PTRACE_EVENT_STOP 128
#endif

/* How far above the stack pointer the stack is scanned for return
 * addresses into code that holds locks; how much stack the calls need
 * below the frame. */
#define SCAN_BYTES (256 * 1024)
#define CALL_STACK (256 * 1024)
#define BELOW_SP (128 + 16384) /* the red zone, and room for the program */
/* The frame, the XSAVE area and the strings: written through
 * /proc/PID/mem, which does not grow a stack, so inside its mapping. */
#define FRAME_ROOM (BELOW_SP + 16384 + 3 * PATH_MAX)

#if defined(__x86_64__)

/*
 * The trampoline, an instruction a line (r12: the data block, r13: the
 * ucontext of the signal frame, rsp 16-aligned): dlopen, then dlsym, then
 * fn(arg), or dlerror; the result and "done" stored; then
 * sigaltstack(NULL, &uc->uc_stack), rt_sigprocmask(0, NULL,
 * &uc->uc_sigmask, 8), rt_sigreturn. A string: its last byte, the NUL,
 * is not part of it (TRAMP_LEN).
 */
/* clang-format off */
static const char tramp[] =
	"\x49\x8b\x7c\x24\x10"			/* mov rdi, [r12+16] */
	"\x41\x8b\x74\x24\x58"			/* mov esi, [r12+88] */
	"\x41\xff\x14\x24"			/* call [r12] */
	"\x49\x89\x44\x24\x28"			/* mov [r12+40], rax */
	"\x48\x85\xc0"				/* test rax, rax */
	"\x74\x23"				/* je 2f */
	"\x48\x89\xc7"				/* mov rdi, rax */
	"\x49\x8b\x74\x24\x18"			/* mov rsi, [r12+24] */
	"\x41\xff\x54\x24\x08"			/* call [r12+8] */
	"\x48\x85\xc0"				/* test rax, rax */
	"\x74\x1d"				/* je 3f */
	"\x49\x8b\x7c\x24\x20"			/* mov rdi, [r12+32] */
	"\xff\xd0"				/* call rax */
	"\x48\x63\xc0"				/* movsxd rax, eax */
	"\x49\x89\x44\x24\x30"			/* mov [r12+48], rax */
	"\xeb\x1e"				/* jmp 4f */
	"\x41\xff\x54\x24\x50"			/* 2: call [r12+80] */
	"\x49\x89\x44\x24\x48"			/* mov [r12+72], rax */
	"\xeb\x12"				/* jmp 4f */
	"\x49\xc7\x44\x24\x30\xfe\xff\xff\xff"	/* 3: mov qword [r12+48], -2 */
	"\x49\xc7\x44\x24\x60\x01\x00\x00\x00"	/* mov qword [r12+96], 1 */
	"\x49\x8b\x44\x24\x40"			/* 4: mov rax, [r12+64] */
	"\x49\x89\x44\x24\x38"			/* mov [r12+56], rax */
	"\xb8\x83\x00\x00\x00"			/* mov eax, 131 */
	"\x31\xff"				/* xor edi, edi */
	"\x49\x8d\x75\x10"			/* lea rsi, [r13+16] */
	"\x0f\x05"				/* syscall */
	"\xb8\x0e\x00\x00\x00"			/* mov eax, 14 */
	"\x31\xff"				/* xor edi, edi */
	"\x31\xf6"				/* xor esi, esi */
	"\x49\x8d\x95\x28\x01\x00\x00"		/* lea rdx, [r13+296] */
	"\x41\xba\x08\x00\x00\x00"		/* mov r10d, 8 */
	"\x0f\x05"				/* syscall */
	"\x4c\x89\xec"				/* mov rsp, r13 */
	"\xb8\x0f\x00\x00\x00"			/* mov eax, 15 */
	"\x0f\x05"				/* syscall */
	"\x0f\x0b"				/* ud2 */;
/* clang-format on */
#define TRAMP_LEN (sizeof(tramp) - 1)

/* The data block the trampoline reads and writes (offsets above). */
struct block {
	uint64_t dlopen, dlsym, path, name, arg;
	uint64_t handle, ret, done, nonce, err, dlerror;
	uint32_t flags, pad;
	uint64_t nosym;
};
_Static_assert(offsetof(struct block, handle) == 40, "trampoline");
_Static_assert(offsetof(struct block, nonce) == 64, "trampoline");
_Static_assert(offsetof(struct block, flags) == 88, "trampoline");
_Static_assert(offsetof(struct block, nosym) == 96, "trampoline");

/* The kernel's struct ucontext (asm/ucontext.h); glibc's differs. */
struct kucontext {
	uint64_t uc_flags;
	uint64_t uc_link;
	stack_t uc_stack;
	struct sigcontext uc_mcontext;
	uint64_t uc_sigmask;
};
_Static_assert(offsetof(struct kucontext, uc_stack) == 16, "trampoline");
_Static_assert(offsetof(struct kucontext, uc_mcontext) == 40, "frame");
_Static_assert(offsetof(struct kucontext, uc_sigmask) == 296, "trampoline");

#define UC_FP_XSTATE 1
#define UC_SIGCONTEXT_SS 2
#define UC_STRICT_RESTORE_SS 4
#ifndef FP_XSTATE_MAGIC1
#define FP_XSTATE_MAGIC1 0x46505853u
#define FP_XSTATE_MAGIC2 0x46505845u
#endif
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516
#define NR_RESTART_SYSCALL 219

#endif

/* ---- /proc ---- */

/* /proc/PID/FILE opened to read; NULL with errno. */
static FILE *proc_open(pid_t pid, const char *file)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return fopen(path, "re");
}

/* The value of "Key:" in /proc/PID/status, into out[cap]. 0 or -1. */
static int status_field(pid_t pid, const char *key, char *out, size_t cap)
{
	char line[512];
	size_t klen = strlen(key);
	FILE *f = proc_open(pid, "status");
	int rc = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			const char *v = line + klen + 1;

			while (*v == ' ' || *v == '\t')
				v++;
			snprintf(out, cap, "%.*s", (int)strcspn(v, "\n"), v);
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

static bool have_cap_sys_ptrace(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return d[CAP_SYS_PTRACE / 32].effective & (1u << (CAP_SYS_PTRACE % 32));
}

/* /proc/sys/kernel/yama/ptrace_scope, or -1 without Yama. */
static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* ---- ELF: the C library's symbols ---- */

/* The names whose code holds the loader's or the allocator's locks. */
static const char *const lock_holders[] = {
	"malloc",
	"free",
	"calloc",
	"realloc",
	"reallocarray",
	"memalign",
	"aligned_alloc",
	"posix_memalign",
	"valloc",
	"pvalloc",
	"malloc_trim",
	"malloc_usable_size",
	"mallinfo",
	"mallinfo2",
	"malloc_stats",
	"malloc_info",
	"mallopt",
	"fork",
	"_Fork",
	"vfork",
	"pthread_create",
	"pthread_join",
	"dlopen",
	"dlclose",
	"dlsym",
	"dlvsym",
	"dladdr",
	"dladdr1",
	"dlinfo",
	"dlmopen",
	"dl_iterate_phdr",
	"dlerror",
	"__libc_dlopen_mode",
	"free_sized",
	"free_aligned_sized",
};

/*
 * Read libc's dynamic symbols from file (the process's view) loaded at
 * base: dlopen, dlsym, dlerror (default versions) into t, and the ranges
 * of lock_holders into t->unsafe; the end of its executable segment's
 * file bytes and the end of that segment's last page into *text_end,
 * *page_end. 0 or -1 with msg_set().
 */
static int libc_read(const char *file, uintptr_t base, struct inject_target *t,
		     uintptr_t *text_end, uintptr_t *page_end)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	Elf_Data *syms = NULL, *vers = NULL;
	size_t strndx = 0, n = 0, phnum;
	GElf_Shdr sh;
	int fd, rc = -1;

	elf_version(EV_CURRENT);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return msg_set_errno(errno, "cannot open '%s'", file);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		msg_set("cannot read '%s': not an ELF file", file);
		goto out;
	}
	*text_end = *page_end = 0;
	if (elf_getphdrnum(e, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) ||
			    ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
				continue;
			*text_end = base + ph.p_vaddr + ph.p_filesz;
			*page_end = (base + ph.p_vaddr + ph.p_memsz + 4095) &
				    ~(uintptr_t)4095;
		}
	}
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM) {
			syms = elf_getdata(scn, NULL);
			strndx = sh.sh_link;
			n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		} else if (sh.sh_type == SHT_GNU_versym) {
			vers = elf_getdata(scn, NULL);
		}
	}
	if (!syms) {
		msg_set("'%s' has no dynamic symbols", file);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		GElf_Versym v = 0;
		const char *name;

		if (!gelf_getsym(syms, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
		    GELF_ST_TYPE(s.st_info) != STT_FUNC)
			continue;
		name = elf_strptr(e, strndx, s.st_name);
		if (!name)
			continue;
		if (vers)
			gelf_getversym(vers, (int)i, &v);
		for (size_t k = 0; k < ARRAY_SIZE(lock_holders); k++) {
			if (strcmp(name, lock_holders[k]) != 0 ||
			    t->n_unsafe >= ARRAY_SIZE(t->unsafe))
				continue;
			t->unsafe[t->n_unsafe++] = (struct inject_range){
				base + s.st_value,
				base + s.st_value +
					(s.st_size ? s.st_size : 1)};
		}
		if (v & 0x8000)
			continue; /* a hidden (old) version */
		if (strcmp(name, "dlopen") == 0)
			t->dlopen = base + s.st_value;
		else if (strcmp(name, "dlsym") == 0)
			t->dlsym = base + s.st_value;
		else if (strcmp(name, "dlerror") == 0)
			t->dlerror = base + s.st_value;
	}
	rc = 0;
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

/* ---- the checks ---- */

int inject_check(pid_t pid, const char *agent, struct inject_target *t)
{
	char path[PATH_MAX + 64], val[256], line[PATH_MAX + 256];
	char libc[PATH_MAX] = "", last[PATH_MAX] = "", exe[PATH_MAX] = "";
	char copy[PATH_MAX] = "";
	ssize_t n;
	uintptr_t libc_base = 0, text_end = 0, page_end = 0;
	struct stat a, b;
	bool code_ok = false;
	FILE *f;
	int scope;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->copy_dir = -1;
#if !defined(__x86_64__)
	(void)agent;
	(void)copy;
	(void)path;
	(void)val;
	(void)line;
	(void)libc;
	(void)libc_base;
	(void)text_end;
	(void)page_end;
	(void)a;
	(void)b;
	(void)code_ok;
	(void)f;
	(void)scope;
	return msg_set("attaching is implemented on x86-64 only");
#else
	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH) ||
	    status_field(pid, "State", val, sizeof(val)) < 0)
		return msg_set("no such process");
	if (pid == getpid())
		return msg_set("that is palloc-run itself");
	if (val[0] == 'Z' || val[0] == 'X')
		return msg_set("the process has ended (%s)", val);
	if (val[0] == 'T' || val[0] == 't')
		return msg_set("the process is stopped (%s): continue it first",
			       val);
	if (status_field(pid, "TracerPid", val, sizeof(val)) == 0 &&
	    strcmp(val, "0") != 0)
		return msg_set("it is already traced by process %s (a "
			       "debugger, strace or another palloc-run)",
			       val);
	/* a filter may refuse (or kill on) the calls the attach makes
	 * in the process: mmap, mprotect, openat, rt_sigreturn */
	if (status_field(pid, "Seccomp", val, sizeof(val)) == 0 &&
	    strcmp(val, "0") != 0)
		return msg_set("it runs under seccomp (Seccomp: %s in "
			       "/proc/%d/status), which may refuse or kill on "
			       "the calls the attach makes",
			       val, (int)pid);
	if (status_field(pid, "Uid", val, sizeof(val)) == 0) {
		unsigned long u[4] = {0};
		bool other = false;

		sscanf(val, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]);
		for (int i = 0; i < 3; i++)
			other |= u[i] != (unsigned long)getuid();
		if (other && !have_cap_sys_ptrace())
			return msg_set("it runs as uid %lu: attaching to "
				       "another user's process needs "
				       "CAP_SYS_PTRACE (run as root)",
				       u[1]);
	}
	scope = yama_scope();
	if (scope == 3)
		return msg_set("/proc/sys/kernel/yama/ptrace_scope is 3: no "
			       "process may be traced until reboot");
	if (scope == 2 && !have_cap_sys_ptrace())
		return msg_set("/proc/sys/kernel/yama/ptrace_scope is 2: only "
			       "a process with CAP_SYS_PTRACE may attach "
			       "(run as root)");
	if (scope == 1 && !have_cap_sys_ptrace() && getppid() != pid) {
		/* allowed only if the process named us (PR_SET_PTRACER): the
		 * seize tells; it is refused before anything is changed */
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	f = proc_open(pid, "maps");
	if (!f)
		return msg_set_errno(errno, "cannot read '/proc/%d/maps'",
				     (int)pid);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		char perms[8];
		int pos = 0;
		const char *file, *bn;
		bool unsafe = false;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perms,
			   &off, &pos) < 4 ||
		    !pos)
			continue;
		file = line + pos;
		line[strcspn(line, "\n")] = '\0';
		if (file[0] != '/')
			continue;
		bn = base_name(file);
		if (strncmp(bn, "libc.so.6", 9) == 0 && off == 0 && !libc[0]) {
			snprintf(libc, sizeof(libc), "%s", file);
			libc_base = lo;
		}
		if (perms[2] != 'x' || strncmp(bn, "libc.so.6", 9) == 0)
			continue;
		if (strncmp(bn, "palloc-agent-", 13) == 0 && !copy[0])
			inject_copy_of_maps(bn, copy, sizeof(copy));
		if (strncmp(bn, "ld-linux", 8) == 0 ||
		    strncmp(bn, "libpalloc.so", 12) == 0 ||
		    strncmp(bn, "palloc-agent-", 13) == 0) {
			unsafe = true;
		} else if (strcmp(file, last) != 0) {
			/* another allocator's code (its internal functions,
			 * tail calls: all of it), or a program that has its
			 * own malloc */
			snprintf(last, sizeof(last), "%s", file);
			snprintf(path, sizeof(path), "/proc/%d/root%s",
				 (int)pid, file);
			unsafe = elfcheck_exports(path, "malloc");
			if (unsafe && strcmp(file, exe) == 0) {
				fclose(f);
				return msg_set("it has its own malloc (an "
					       "allocator linked into the "
					       "program): its allocations "
					       "would not be seen");
			}
		}
		if (unsafe && t->n_unsafe < ARRAY_SIZE(t->unsafe))
			t->unsafe[t->n_unsafe++] =
				(struct inject_range){lo, hi};
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (!libc[0]) {
		if (elfcheck_is_go(path))
			return msg_set("it is a Go program: its memory does "
				       "not come from malloc");
		return msg_set("it does not use the shared C library "
			       "libc.so.6 (a static program)");
	}
	if (elfcheck_is_go(path))
		return msg_set("it is a Go program: its memory does not come "
			       "from malloc");
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, libc);
	if (libc_read(path, libc_base, t, &text_end, &page_end) < 0)
		return -1;
	if (!t->dlopen || !t->dlsym || !t->dlerror)
		return msg_set("its C library '%s' has no dlopen (glibc 2.34 "
			       "or later is needed)",
			       libc);
	/* the trampoline: in the unused tail of the executable segment's
	 * last page, 16-aligned */
	t->code = (text_end + 15) & ~(uintptr_t)15;
	code_ok = text_end && t->code + TRAMP_LEN <= page_end;
	if (!code_ok)
		return msg_set("no room for the call in its C library '%s'",
			       libc);
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, agent);
	if (stat(agent, &a) < 0)
		return msg_set_errno(errno, "cannot use the agent '%s'", agent);
	if (copy[0]) {
		/* an earlier attach's copy, loaded: found by its name */
		snprintf(t->agent, sizeof(t->agent), "%s", copy);
		t->reused = true;
		return 0;
	}
	if (stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino) {
		snprintf(t->agent, sizeof(t->agent), "%s", agent);
		return 0;
	}
	return inject_copy_agent(pid, agent, t);
#endif
}

void inject_release(struct inject_target *t)
{
	if (t->copy_dir < 0)
		return;
	unlinkat(t->copy_dir, t->copy_name, 0);
	close(t->copy_dir);
	t->copy_dir = -1;
}

#if defined(__x86_64__)

/* ---- the call ---- */

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static bool unsafe_addr(const struct inject_target *t, uintptr_t a)
{
	for (size_t i = 0; i < t->n_unsafe; i++)
		if (a >= t->unsafe[i].lo && a < t->unsafe[i].hi)
			return true;
	return false;
}

/* The mapping of pid holding addr: [*lo, *hi), and whether it is the
 * main thread's growable "[stack]". 0 or -1. */
static int mapping_of(pid_t pid, uintptr_t addr, uintptr_t *lo, uintptr_t *hi,
		      bool *grows)
{
	char line[PATH_MAX + 256];
	FILE *f = proc_open(pid, "maps");
	int rc = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (sscanf(line, "%lx-%lx", &a, &b) != 2 || addr < a ||
		    addr >= b)
			continue;
		*lo = a;
		*hi = b;
		*grows = strstr(line, "[stack]") != NULL;
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

static ssize_t read_mem(pid_t pid, uintptr_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)addr, len};

	return process_vm_readv(pid, &l, 1, &r, 1, 0);
}

/*
 * The frames of the stopped thread tid, unwound from the objects' unwind
 * tables (libunwind-ptrace): 1 when the walk reached the outermost frame
 * and none is in unsafe code, 0 when one is, -1 when the walk did not
 * finish (code without unwind tables: JIT; the caller then scans the
 * whole stack instead).
 */
static int frames_safe(const struct inject_target *t, pid_t tid)
{
	unw_addr_space_t as = unw_create_addr_space(&_UPT_accessors, 0);
	unw_cursor_t c;
	void *ui;
	int rc = -1, step = -1, n = 0;

	if (!as)
		return -1;
	ui = _UPT_create(tid);
	if (ui && unw_init_remote(&c, as, ui) == 0) {
		do {
			unw_word_t ip;

			if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0) {
				step = -1;
				break;
			}
			/* a return address: its call is the byte before */
			if (unsafe_addr(t, ip) ||
			    (n > 0 && unsafe_addr(t, ip - 1))) {
				rc = 0;
				break;
			}
			n++;
			step = unw_step(&c);
		} while (step > 0 && n < 1024);
		if (rc != 0 && step == 0 && n >= 2)
			rc = 1;
	}
	if (ui)
		_UPT_destroy(ui);
	unw_destroy_addr_space(as);
	return rc;
}

/*
 * May the thread stopped with regs make the calls now: its pc and its
 * callers outside the code that holds the locks (its frames unwound; when
 * that fails, every word of its stack), no restart of restart_syscall
 * pending, and room on its stack? 1 yes, 0 not now.
 */
static int moment_safe(const struct inject_target *t, pid_t tid,
		       const struct user_regs_struct *r)
{
	uintptr_t lo, hi, end;
	bool grows;
	uint64_t *buf;
	ssize_t n;
	int ok = 1;

	if (unsafe_addr(t, r->rip))
		return 0;
	if ((long)r->rax == -ERESTART_RESTARTBLOCK &&
	    (long)r->orig_rax == NR_RESTART_SYSCALL)
		return 0;
	if (mapping_of(t->pid, r->rsp, &lo, &hi, &grows) < 0)
		return 0;
	if (!grows && r->rsp - lo < BELOW_SP + CALL_STACK + 65536)
		return 0;
	if (grows && r->rsp - lo < FRAME_ROOM)
		return 0; /* not yet: the stack has not grown that far */
	switch (frames_safe(t, tid)) {
	case 0:
		return 0;
	case 1:
		return 1;
	}
	end = r->rsp + SCAN_BYTES < hi ? r->rsp + SCAN_BYTES : hi;
	buf = malloc(SCAN_BYTES);
	if (!buf)
		return 0;
	n = read_mem(t->pid, r->rsp & ~(uintptr_t)7, buf,
		     end - (r->rsp & ~(uintptr_t)7));
	for (ssize_t i = 0; n > 0 && i < n / 8; i++) {
		if (unsafe_addr(t, buf[i])) {
			ok = 0;
			break;
		}
	}
	if (n <= 0)
		ok = 0;
	free(buf);
	return ok;
}

static int write_mem(int memfd, uintptr_t addr, const void *buf, size_t len)
{
	return pwrite(memfd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

/* What the calls found, read back from the block. */
struct outcome {
	struct block b;
	bool seen;
};

/*
 * Seize thread tid, stop it, and when the moment is safe point it at the
 * trampoline and let it go. 1: the thread runs the calls (the block's
 * address in *blk); 0: not now (the thread let go untouched); -1: error
 * (msg_set()).
 */
static int try_thread(const struct inject_target *t, pid_t tid, int memfd,
		      const char *lib, int flags, const char *fn,
		      const char *arg, uint64_t nonce, uintptr_t *blk)
{
	struct user_regs_struct r, nr;
	static unsigned char xs[65536] __attribute__((aligned(64)));
	struct iovec iov = {xs, sizeof(xs)};
	struct kucontext uc;
	struct block b;
	uintptr_t top, xsa, ucp, bp, sp, strs;
	size_t xlen, xsz, lp = strlen(lib) + 1, lf = strlen(fn) + 1;
	size_t la = strlen(arg) + 1;
	int st, scope;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
		if (errno == ESRCH)
			return 0;
		if (errno == EPERM) {
			scope = yama_scope();
			if (scope >= 1)
				return msg_set("ptrace refused (EPERM): "
					       "/proc/sys/kernel/yama/"
					       "ptrace_scope is %d",
					       scope);
			return msg_set("ptrace refused (EPERM): the process "
				       "is not dumpable (setuid, "
				       "PR_SET_DUMPABLE) or another user's");
		}
		return msg_set_errno(errno, "cannot trace thread %d", tid);
	}
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0)
		goto let_go_err;
	for (;;) {
		if (waitpid(tid, &st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return msg_set_errno(errno, "cannot wait for thread %d",
					     tid);
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return 0; /* the thread (or process) ended */
		if (!WIFSTOPPED(st))
			continue;
		if ((st >> 16) == PTRACE_EVENT_STOP) {
			if (WSTOPSIG(st) == SIGTRAP)
				break;
			/* a group stop: the process is being stopped */
			ptrace(PTRACE_DETACH, tid, NULL, NULL);
			return msg_set("the process was stopped (signal %d)",
				       WSTOPSIG(st));
		}
		/* a signal for the thread: deliver it, stop again */
		if (ptrace(PTRACE_CONT, tid, NULL,
			   (void *)(uintptr_t)WSTOPSIG(st)) < 0)
			return 0;
		ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
	}
	if (ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0)
		goto let_go_err;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) < 0)
		goto let_go_err;
	xlen = iov.iov_len;
	if (xlen < 576 || xlen + 4 > sizeof(xs)) {
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return msg_set("unexpected XSAVE size %zu", xlen);
	}
	if (!moment_safe(t, tid, &r)) {
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return 0;
	}

	/* the signal frame: the registers as the kernel would resume */
	memset(&uc, 0, sizeof(uc));
	uc.uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	uc.uc_mcontext.r8 = r.r8;
	uc.uc_mcontext.r9 = r.r9;
	uc.uc_mcontext.r10 = r.r10;
	uc.uc_mcontext.r11 = r.r11;
	uc.uc_mcontext.r12 = r.r12;
	uc.uc_mcontext.r13 = r.r13;
	uc.uc_mcontext.r14 = r.r14;
	uc.uc_mcontext.r15 = r.r15;
	uc.uc_mcontext.rdi = r.rdi;
	uc.uc_mcontext.rsi = r.rsi;
	uc.uc_mcontext.rbp = r.rbp;
	uc.uc_mcontext.rbx = r.rbx;
	uc.uc_mcontext.rdx = r.rdx;
	uc.uc_mcontext.rax = r.rax;
	uc.uc_mcontext.rcx = r.rcx;
	uc.uc_mcontext.rsp = r.rsp;
	uc.uc_mcontext.rip = r.rip;
	uc.uc_mcontext.eflags = r.eflags;
	uc.uc_mcontext.cs = (unsigned short)r.cs;
	uc.uc_mcontext.__pad0 = (unsigned short)r.ss; /* ss */
	if ((long)r.orig_rax >= 0) {
		switch (-(long)r.rax) {
		case ERESTARTSYS:
		case ERESTARTNOINTR:
		case ERESTARTNOHAND:
		case ERESTART_RESTARTBLOCK:
			/* the call again, as the kernel restarts it */
			uc.uc_mcontext.rax = r.orig_rax;
			uc.uc_mcontext.rip = r.rip - 2;
			break;
		}
	}

	/* where it all goes, below the stack pointer */
	top = (r.rsp - BELOW_SP) & ~(uintptr_t)63;
	xsa = (top - xlen - 4 - 64) & ~(uintptr_t)63;
	ucp = (xsa - sizeof(uc) - 128 - 64) & ~(uintptr_t)63;
	bp = (ucp - 8 - sizeof(b) - lp - lf - la - 128) & ~(uintptr_t)63;
	strs = bp + ((sizeof(b) + 15) & ~(size_t)15);
	sp = (bp - 256) & ~(uintptr_t)15;
	uc.uc_mcontext.fpstate = (struct _fpstate *)xsa;
	{
		/* the software bytes at 464 of the FXSAVE area (the kernel
		 * gives a signal frame's), and magic2 after the XSAVE area */
		uint32_t *sw = (uint32_t *)(xs + 464);
		uint64_t feat;

		memcpy(&feat, xs + 512, sizeof(feat));
		if (sw[0] != FP_XSTATE_MAGIC1 || sw[4] > xlen || sw[4] < 576) {
			sw[0] = FP_XSTATE_MAGIC1;
			memcpy(&sw[2], &feat, sizeof(feat));
			sw[4] = (uint32_t)xlen;
		}
		xsz = sw[4];
		sw[1] = (uint32_t)xsz + 4;
		*(uint32_t *)(xs + xsz) = FP_XSTATE_MAGIC2;
	}
	memset(&b, 0, sizeof(b));
	b.dlopen = t->dlopen;
	b.dlsym = t->dlsym;
	b.dlerror = t->dlerror;
	b.path = strs;
	b.name = strs + lp;
	b.arg = strs + lp + lf;
	b.flags = (uint32_t)flags;
	b.nonce = nonce;
	if (write_mem(memfd, xsa, xs, (xsz + 4 > xlen ? xsz + 4 : xlen)) < 0 ||
	    write_mem(memfd, ucp, &uc, sizeof(uc)) < 0 ||
	    write_mem(memfd, bp, &b, sizeof(b)) < 0 ||
	    write_mem(memfd, strs, lib, lp) < 0 ||
	    write_mem(memfd, strs + lp, fn, lf) < 0 ||
	    write_mem(memfd, strs + lp + lf, arg, la) < 0 ||
	    write_mem(memfd, t->code, tramp, TRAMP_LEN) < 0) {
		int err = errno;

		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return msg_set_errno(err, "cannot write into process %d",
				     t->pid);
	}
	/* The one change of the thread's registers: from here on it needs
	 * no tracer. orig_rax -1: no restart applied on the way out. */
	nr = r;
	nr.rip = t->code;
	nr.rsp = sp;
	nr.r12 = bp;
	nr.r13 = ucp;
	nr.orig_rax = (unsigned long long)-1;
	nr.eflags &= ~(unsigned long long)0x400; /* DF clear, as calls need */
	if (ptrace(PTRACE_SETREGS, tid, NULL, &nr) < 0)
		goto let_go_err;
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	*blk = bp;
	return 1;
let_go_err : {
	int err = errno;

	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	return msg_set_errno(err, "cannot control thread %d", tid);
}
}

/* The threads of pid, the main one first; malloc'd, *n. */
static pid_t *threads_of(pid_t pid, size_t *n)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	pid_t *v = NULL;
	size_t cap = 0;

	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		if (*n == cap) {
			pid_t *nv = realloc(v, (cap + 16) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
			cap += 16;
		}
		v[(*n)++] = (pid_t)tid;
		if (tid == pid) {
			v[*n - 1] = v[0];
			v[0] = (pid_t)tid;
		}
	}
	closedir(d);
	return v;
}

int inject_call(const struct inject_target *t, const char *lib, int flags,
		const char *fn, const char *arg, int timeout_ms, int *ret)
{
	char path[64];
	int64_t deadline = clock_mono_ms() + timeout_ms;
	uint64_t nonce = ((uint64_t)getpid() << 32) ^
			 (uint64_t)clock_mono_ms() ^ 0x9e3779b97f4a7c15u;
	uintptr_t blk = 0;
	struct block b;
	int memfd, rc = 0;
	size_t n = 0;
	pid_t *tids = NULL;

	if (t->reused)
		flags |= RTLD_NOLOAD;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)t->pid);
	memfd = open(path, O_RDWR | O_CLOEXEC);
	if (memfd < 0)
		return msg_set_errno(errno, "cannot open '%s'", path);
	for (unsigned i = 0; clock_mono_ms() < deadline; i++) {
		if (i % 16 == 0) {
			free(tids);
			tids = threads_of(t->pid, &n);
			if (!n) {
				rc = msg_set("the process ended");
				break;
			}
		}
		rc = try_thread(t, tids[i % n], memfd, lib, flags, fn, arg,
				nonce, &blk);
		if (rc != 0)
			break;
		sleep_ms(i < 50 ? 2 : 20);
	}
	free(tids);
	close(memfd);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return msg_set("no moment free of the loader's and the "
			       "allocator's locks within %d ms",
			       timeout_ms);
	/* the thread runs the calls: read the block until it says done */
	while (clock_mono_ms() < deadline + 5000) {
		if (read_mem(t->pid, blk, &b, sizeof(b)) !=
		    (ssize_t)sizeof(b)) {
			if (kill(t->pid, 0) < 0)
				return msg_set("the process ended");
		} else if (b.done == nonce) {
			if (!b.handle) {
				char e[512] = "";

				if (b.err)
					read_mem(t->pid, b.err, e,
						 sizeof(e) - 1);
				e[sizeof(e) - 1] = '\0';
				if (t->copy_dir >= 0)
					return msg_set(
						"the agent copied to '%s' "
						"cannot be loaded in the "
						"process's mount namespace%s%s",
						lib, e[0] ? ": " : "", e);
				return msg_set(
					"dlopen failed in the process%s%s",
					e[0] ? ": " : "", e);
			}
			if (b.nosym)
				return msg_set("no '%s' in '%s'", fn, lib);
			*ret = (int)b.ret;
			return 0;
		}
		sleep_ms(1);
	}
	return msg_set("the call did not end within %d ms (or its result was "
		       "overwritten)",
		       timeout_ms + 5000);
}

#else

int inject_call(const struct inject_target *t, const char *lib, int flags,
		const char *fn, const char *arg, int timeout_ms, int *ret)
{
	(void)t;
	(void)lib;
	(void)flags;
	(void)fn;
	(void)arg;
	(void)timeout_ms;
	(void)ret;
	return msg_set("attaching is implemented on x86-64 only");
}

#endif
