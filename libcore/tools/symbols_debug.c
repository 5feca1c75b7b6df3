/* SPDX-License-Identifier: MIT */
/* Separate debug files for libdwfl: by build id, by .gnu_debuglink, under
 * the root prefix, never from debuginfod (symbols_int.h). */
#include "symbols_int.h"
#include "infile.h"

#include <stdarg.h>
#include <unistd.h>

__thread const char *sym_debug_root;
__thread struct modfile *sym_loading;

/* Open the debug file whose path fmt builds; -1 if absent or too long. */
static int try_debug_file(char **name, const char *fmt, ...)
	PALLOC_PRINTF(2, 3);
static int try_debug_file(char **name, const char *fmt, ...)
{
	char path[4096];
	va_list ap;
	int n, fd;

	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	fd = infile_open(path, NULL);
	if (sym_loading && sym_loading->n_probes < MAX_PROBES) {
		struct probe *pr = &sym_loading->probes[sym_loading->n_probes];

		pr->exists = fd >= 0 && fstat(fd, &pr->st) == 0;
		pr->path = strdup(path);
		if (pr->path)
			sym_loading->n_probes++;
		else
			sym_loading->probes_lost = true;
	} else if (sym_loading) {
		sym_loading->probes_lost = true;
	}
	if (fd < 0)
		return -1;
	*name = strdup(path);
	if (!*name) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Called by libdwfl when the file itself has no DWARF. Like
 * dwfl_standard_find_debuginfo, without debuginfod (no network from a
 * profiler) and under the root prefix: the build-id path first, then the
 * .gnu_debuglink name next to the file, in .debug/ and in /usr/lib/debug.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata PALLOC_UNUSED,
			  const char *modname PALLOC_UNUSED,
			  Dwarf_Addr base PALLOC_UNUSED, const char *file_name,
			  const char *debuglink, GElf_Word crc PALLOC_UNUSED,
			  char **debuginfo_file_name)
{
	const char *root = sym_debug_root ? sym_debug_root : "";
	const unsigned char *id;
	GElf_Addr vaddr;
	char hexid[256];
	const char *slash;
	size_t rootlen = strlen(root);
	int len, dirlen, fd, i;

	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (len > 1 && len < 100) {
		for (i = 1; i < len; i++)
			snprintf(hexid + 2 * (i - 1), 3, "%02x", id[i]);
		fd = try_debug_file(debuginfo_file_name,
				    "%s/usr/lib/debug/.build-id/%02x/%s.debug",
				    root, id[0], hexid);
		if (fd >= 0)
			return fd;
	}
	if (!debuglink || !file_name || !(slash = strrchr(file_name, '/')))
		return -1;
	dirlen = (int)(slash - file_name);
	/* the debuglink may name the file itself: that one has no DWARF */
	if (strcmp(slash + 1, debuglink) != 0) {
		fd = try_debug_file(debuginfo_file_name, "%.*s/%s", dirlen,
				    file_name, debuglink);
		if (fd >= 0)
			return fd;
	}
	fd = try_debug_file(debuginfo_file_name, "%.*s/.debug/%s", dirlen,
			    file_name, debuglink);
	if (fd >= 0)
		return fd;
	/* file_name carries the root prefix; /usr/lib/debug goes under it */
	if (strncmp(file_name, root, rootlen) != 0 || (size_t)dirlen < rootlen)
		return -1;
	return try_debug_file(debuginfo_file_name, "%s/usr/lib/debug%.*s/%s",
			      root, dirlen - (int)rootlen, file_name + rootlen,
			      debuglink);
}

const Dwfl_Callbacks sym_dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};
