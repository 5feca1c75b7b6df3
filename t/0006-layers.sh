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

plan 6

# Headers: the agent links libunwind, protobuf-c and zlib only (palloc(7)).
src=$lc
rule "agent side: no jansson, libelf, libdw or libmicrohttpd header" "" \
	'^#[[:space:]]*include[[:space:]]*<(jansson|libelf|gelf|dwarf|elfutils/[^>]*|microhttpd)\.h>'
tools=$(cd "$lc/tools" && ls -- *.h | sed 's/\./\\./' | paste -sd'|')
rule "agent side: no header of libcore/tools" "" \
	"^#[[:space:]]*include[[:space:]]*\"($tools)\""

src=code

# stdio streams: allocstats.c reads malloc_info(3) through open_memstream
# on the control thread. (The commands' halves of msg, ctlsock and http are
# in tools/: msg_cli.c, ctlsock_client.c, http_client.c.)
rule "agent side: no stdio stream outside allocstats.c" \
	"agent/allocstats.c" \
	"$call(printf|fprintf|vfprintf|vprintf|dprintf|puts|fputs|fputc|putc|putchar|fopen|fdopen|freopen|fclose|fwrite|fread|fgets|getline|getdelim|fscanf|scanf|sscanf|fflush|setvbuf|perror|popen|open_memstream|tmpfile)[[:space:]]*\\("

# The commands' halves of msg, ctlsock and http (tools/) are called nowhere
# on the agent side.
cmds='msg_init|msg_prog|msg_error|msg_error_last|msg_warn|msg_usage|msg_version|msg_fputs_escaped'
cmds=$cmds'|ctlsock_find|ctlsock_get|ctlsock_get_path|ctlsock_list|ctlsock_list_warn'
cmds=$cmds'|http_read_response|http_read_response_until|http_response_free|http_now_ms'
rule "agent side: calls no function of the commands' halves in tools/" \
	"" "$call($cmds)[[:space:]]*\\("

# malloc and friends: hooks.c is the interposer; control.c, allocstats.c
# and pprof_delta.c run on the control thread with the guard set (the real
# allocator, unsampled); pprof.c's default allocator is the commands' (the
# agent passes its arena's); msg.c, http.c and ctlsock.c in the commands'
# halves checked above.
rule "agent side: malloc family only in the files that may" \
	"agent/hooks.c agent/control.c agent/allocstats.c pprof/pprof_delta.c pprof/pprof.c base/msg.c wire/http.c wire/ctlsock.c" \
	"$call(malloc|calloc|realloc|reallocarray|free|strdup|strndup|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|asprintf|vasprintf)[[:space:]]*\\("

# Locks: the agent's own only (its thread registry in threads.c, taken by
# agent.c's fork handlers too, its arena, lock.c's futex).
rule "agent side: pthread locks only on the agent's own" \
	"agent/agent.c agent/threads.c agent/arena.c agent/lock.c" \
	"$call(pthread_mutex_lock|pthread_mutex_trylock|pthread_mutex_timedlock|pthread_rwlock_[a-z]*lock|pthread_spin_lock|sem_wait|sem_timedwait|flockfile)[[:space:]]*\\("
done_testing
