#!/bin/sh
# SPDX-License-Identifier: MIT
# The rules of libcore/README.md: what runs inside the target (libcore/agent,
# and base/, pprof/, wire/, which the agent links too) includes no library of
# the commands, prints nothing through stdio, allocates with malloc only in
# the files named below, and locks only the agent's own locks. Checked on the
# sources, comments and strings left out; a file that breaks a rule, or a
# new file that does what only the listed ones may, fails the test.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"

command -v perl >/dev/null 2>&1 || skip_all "no perl (strips comments)"
lc=$top_srcdir/libcore
[ -d "$lc/agent" ] || skip_all "no libcore/agent in '$top_srcdir'"

# The agent side, as paths under libcore/; each file without its comments,
# string and character literals, in code/PATH.
(cd "$lc" && ls agent/*.[ch] base/*.[ch] pprof/*.[ch] wire/*.[ch]) >files ||
	exit 99
while read -r f; do
	mkdir -p "code/$(dirname "$f")" &&
		perl -0777 -pe 's{/\*.*?\*/}{ }gs; s{"(\\.|[^"\\\n])*"}{""}g;
			s{'"'"'(\\.|[^'"'"'\\\n])+'"'"'}{0}g' \
			"$lc/$f" >"code/$f" || exit 99
done <files

# rule NAME ALLOWED-FILES ERE: no file but ALLOWED-FILES matches ERE, in
# $src (code: without comments and literals; $lc: as written, for includes).
rule() {
	name=$1 allowed=$2 ere=$3
	: >hits
	while read -r f; do
		case " $allowed " in *" $f "*) continue ;; esac
		grep -nE "$ere" "$src/$f" | sed "s|^|libcore/$f:|" >>hits
	done <files
	if [ -s hits ]; then
		not_ok "$name"
		sed 's/^/# /' hits
	else
		ok "$name"
	fi
}
call='(^|[^._>a-zA-Z0-9])'

plan 10

# Headers: the agent links libunwind only, besides the C library
# (palloc(7)). The codec (protobuf-c and zlib: pprof_encode.c,
# pprof_decode.c, pprof_proto.h) is in pprof/ but only
# in libpalloc-core (libcore/pprof/Makemodule.am: LIBCORE_PPROF_CORE).
src=$lc
rule "agent side: no jansson, libelf, libdw or libmicrohttpd header" "" \
	'^#[[:space:]]*include[[:space:]]*<(jansson|libelf|gelf|dwarf|elfutils/[^>]*|microhttpd)\.h>'
rule "agent side: no protobuf-c or zlib header (the codec: commands only)" \
	"pprof/pprof_encode.c pprof/pprof_decode.c pprof/pprof_proto.h" \
	'^#[[:space:]]*include[[:space:]]*[<"]((protobuf-c/)?protobuf-c|zlib|profile\.pb-c)\.h[>"]'
tools=$(cd "$lc/tools" && ls -- *.h | sed 's/\./\\./' | paste -sd'|')
rule "agent side: no header of libcore/tools" "" \
	"^#[[:space:]]*include[[:space:]]*\"($tools)\""

src=code

# stdio streams: allocstats.c reads malloc_info(3) through a memory stream
# when it takes the allocator's figures, guard set. (The commands' half of
# msg is in tools/msg_cli.c.)
rule "agent side: no stdio stream outside allocstats.c" \
	"agent/allocstats.c" \
	"$call(printf|fprintf|vfprintf|vprintf|dprintf|puts|fputs|fputc|putc|putchar|fopen|fdopen|freopen|fclose|fwrite|fread|fgets|getline|getdelim|fscanf|scanf|sscanf|fflush|setvbuf|perror|popen|open_memstream|tmpfile)[[:space:]]*\\("

# The commands' half of msg (tools/msg_cli.c) is called nowhere on the
# agent side.
cmds='msg_init|msg_prog|msg_error|msg_error_last|msg_warn|msg_usage|msg_version|msg_fputs_escaped'
rule "agent side: calls no function of the commands' halves in tools/" \
	"" "$call($cmds)[[:space:]]*\\("

# malloc and friends: hooks.c is the interposer; allocstats.c takes the
# allocator's figures with the guard set (the real allocator, unsampled:
# the C library's memory stream); pprof_delta.c is in the commands' library
# only (libcore/pprof/Makemodule.am: LIBCORE_PPROF_CORE); pprof.c's default
# allocator is the commands' (the agent passes its arena's); msg.c in the
# commands' half checked above; base/idxtab.c and base/grow.c, the
# commands' hash table and growing arrays, are in the commands' library
# only (libcore/base/Makemodule.am).
rule "agent side: malloc family only in the files that may" \
	"agent/hooks.c agent/allocstats.c pprof/pprof_delta.c pprof/pprof.c base/msg.c base/idxtab.c base/grow.c" \
	"$call(malloc|calloc|realloc|reallocarray|free|strdup|strndup|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|asprintf|vasprintf)[[:space:]]*\\("

# The codec's functions (protobuf-c, zlib) are not the agent's: it encodes
# with pprof_pack (pprof.h declares them).
rule "agent side: no call into the codec (pprof_pack encodes)" \
	"pprof/pprof_encode.c pprof/pprof_decode.c pprof/pprof.h" \
	"$call(pprof_encode|pprof_decode|pprof_write_fd|pprof_free_buffer|pprof_read_file|pprof_read_fd)[[:space:]]*\\("

# Locks: the agent's own only (its thread registry in threads.c, taken by
# agent.c's fork handlers too, its arena, lock.c's futex).
rule "agent side: pthread locks only on the agent's own" \
	"agent/agent.c agent/threads.c agent/arena.c agent/lock.c" \
	"$call(pthread_mutex_lock|pthread_mutex_trylock|pthread_mutex_timedlock|pthread_rwlock_[a-z]*lock|pthread_spin_lock|sem_wait|sem_timedwait|flockfile)[[:space:]]*\\("
# The built agent: the codec is not in it, and it needs no library
# but the C library's and libunwind (and libunwind's own): not libm (the
# sampler has its own log and expm1, sqrt is an instruction) nor libgcc_s
# (hooks_cxx.c forwards to the unwinder's functions), whose loading every
# process paid. Every symbol it leaves undefined is one of the
# C library's (versioned GLIBC_*) or libunwind's: an unversioned other one
# (sqrt, once libm is gone) would fail only when first called.
so=$top_builddir/libcore/.libs/libpalloc.so
if [ ! -f "$so" ] || ! command -v readelf >/dev/null 2>&1 ||
	! command -v nm >/dev/null 2>&1; then
	skip "no built libpalloc.so or no readelf"
	skip "no built libpalloc.so or no nm"
else
	readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >needed
	if grep -vE '^(libc|libdl|libpthread|libunwind(-[a-z0-9_]+)?)\.so\.[0-9]+$' needed >extra; then
		not_ok "libpalloc.so needs only libc and libunwind"
		sed 's/^/# /' extra
	else
		ok "libpalloc.so needs only libc and libunwind"
	fi
	nm -D --undefined-only "$so" | awk '$1 == "U" { print $2 }' |
		grep -vE '@GLIBC_[0-9.]+$|^_U[Lx]|^unw_' >undef
	if [ -s undef ]; then
		not_ok "libpalloc.so leaves undefined only libc's and libunwind's symbols"
		sed 's/^/# /' undef
	else
		ok "libpalloc.so leaves undefined only libc's and libunwind's symbols"
	fi
fi
done_testing
