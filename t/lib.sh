# SPDX-License-Identifier: MIT
# t/lib.sh: the little TAP library every t/NNNN-*.sh script sources.
#
#   . "$top_srcdir/t/lib.sh"
#   plan 3
#   palloc-x --json >out.json && ok "runs" || not_ok "runs"
#   check "json is valid" jq -e . out.json
#
# Scripts run in a fresh temporary directory ($T), removed at exit.

set -u
LC_ALL=C
export LC_ALL
unset PALLOC_OUTPUT PALLOC_SAMPLE_RATE PALLOC_INTERVAL PALLOC_UNWIND \
	PALLOC_MAX_DEPTH PALLOC_FOLLOW_CHILDREN PALLOC_PEAK PALLOC_EXACT PALLOC_SEED \
	PALLOC_DUMP_AT PALLOC_SYSROOT PALLOC_RUN_TOKEN
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"

T=$(mktemp -d "${TMPDIR:-/tmp}/palloc-test.XXXXXX") || exit 99
# The agents' records (wire/record.h: kept after exit) go to a directory
# of the test's own, beside $T (tests list $T): not into the user's
# control directory, where they would pile up run after run.
PALLOC_RECORD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/palloc-rec.XXXXXX") || exit 99
export PALLOC_RECORD_DIR
_lib_rec_dir=$PALLOC_RECORD_DIR
# cleanup_tmp: remove $T and the records' directory; a script that sets
# its own EXIT trap ends it with this (or both directories pile up).
cleanup_tmp() {
	cd / || :
	rm -rf "$T" "$_lib_rec_dir"
}
trap cleanup_tmp EXIT
cd "$T" || exit 99
# symbol indexes (symcache.h) go to the test's own cache, not the user's
XDG_CACHE_HOME=$T/cache
export XDG_CACHE_HOME

_n=0
_failed=0

# plan N: the number of tests this script runs.
plan() { echo "1..$1"; }
# skip_all REASON: skip the whole script (TAP "1..0 # SKIP").
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
ok() { _n=$((_n + 1)); echo "ok $_n - $*"; }
not_ok() { _n=$((_n + 1)); _failed=$((_failed + 1)); echo "not ok $_n - $*"; }
skip() { _n=$((_n + 1)); echo "ok $_n # SKIP $*"; }
# diag TEXT: a TAP comment.
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }

# check DESC CMD...: one test, passing when CMD exits 0.
check() {
	_desc=$1
	shift
	if "$@"; then ok "$_desc"; else not_ok "$_desc"; fi
}

# expect_fail CODE CMD...: CMD must exit with CODE (not die by a signal).
expect_fail() {
	_want=$1
	shift
	"$@"
	_rc=$?
	if [ "$_rc" -gt 128 ] && [ "$_rc" -ne "$_want" ]; then
		echo "# '$*' died by signal $((_rc - 128))"
		return 1
	fi
	if [ "$_rc" -ne "$_want" ]; then
		echo "# '$*' exited $_rc, want $_want"
		return 1
	fi
	return 0
}

# need CMD...: skip the script unless every command exists.
need() {
	for _c in "$@"; do
		command -v "$_c" >/dev/null 2>&1 || skip_all "$_c not installed"
	done
}

need_agent() {
	[ -n "${PALLOC_AGENT:-}" ] && [ -f "$PALLOC_AGENT" ] ||
		skip_all "agent not built (PALLOC_AGENT='${PALLOC_AGENT:-}')"
}

need_cgroup2() {
	grep -q ' cgroup2 ' /proc/self/mountinfo 2>/dev/null ||
		skip_all "no cgroup v2 mount"
}

need_ptrace() {
	[ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" = 0 ] ||
		skip_all "ptrace restricted"
}

# every_run N TEXT: the check "N of $RUNS<TEXT>" that N is $RUNS (the
# runs of a test that repeats a racy scenario RUNS times).
every_run() { check "$1 of $RUNS$2" [ "$1" = "$RUNS" ]; }

# need_attach CMD...: what palloc-run -p needs (the agent, ptrace, x86-64)
# and the commands CMD.
need_attach() {
	need_agent
	need "$@"
	need_ptrace
	[ "$(uname -m)" = x86_64 ] ||
		skip_all "attaching is implemented on x86-64 only"
}

# pprof ARGS...: Go's pprof, the independent reader of our profiles.
pprof() {
	HOME=$T PPROF_TMPDIR=$T/pprof PPROF_BINARY_PATH=/nonexistent \
		GOCACHE=$T/gocache GOFLAGS= go tool pprof "$@"
}
need_pprof() {
	command -v go >/dev/null 2>&1 || skip_all "go (golang-go) not installed"
}

# need_cxx: the tests that build C++ programs skip without g++.
need_cxx() {
	[ -x /usr/bin/g++ ] || skip_all "g++ is not installed"
}

# jqe ARGS...: jq -e, quiet: the exit status is the verdict (1 for false
# or null, 5 for a jq error, 2 for a missing file).
jqe() { jq -e "$@" >/dev/null; }

# retry TRIES SECONDS CMD...: run CMD until it exits 0, at most TRIES times,
# SECONDS apart (a socket, file or server that appears shortly after a
# start). Returns 0, or CMD's last status.
retry() {
	_retry_n=$1 _retry_s=$2
	shift 2
	while :; do
		"$@" && return 0
		_retry_rc=$?
		_retry_n=$((_retry_n - 1))
		[ "$_retry_n" -gt 0 ] || return $_retry_rc
		sleep "$_retry_s"
	done
}

# one_line FILE WANT: FILE is exactly one line, equal to WANT (an error
# message); says what it got otherwise.
one_line() {
	[ "$(wc -l <"$1")" -eq 1 ] && [ "$(cat "$1")" = "$2" ] && return 0
	echo "# got: $(cat "$1")"
	echo "# want: $2"
	return 1
}

# for_other_users CMD...: copy the commands CMD (found on PATH) and the
# agent into $T/bin, readable by every user, and put them first on PATH
# and in PALLOC_AGENT: a test that runs them as another user works when
# the build tree is where that user cannot read (a clone under /root).
for_other_users() {
	mkdir -p "$T/bin" || return 1
	for _c in "$@"; do
		cp "$(command -v "$_c")" "$T/bin/" || return 1
	done
	if [ -n "${PALLOC_AGENT:-}" ]; then
		cp "$PALLOC_AGENT" "$T/bin/" || return 1
		PALLOC_AGENT=$T/bin/${PALLOC_AGENT##*/}
	fi
	chmod 755 "$T/bin" && chmod a+rx "$T/bin"/* || return 1
	PATH=$T/bin:$PATH
	export PATH PALLOC_AGENT
}

# asan CMD: command CMD was built with AddressSanitizer (configure
# --enable-asan), whose allocator copies on every realloc and keeps freed
# memory in quarantine: peak memory figures are not the command's own.
asan() { nm "$(command -v "$1")" 2>/dev/null | grep -q ' __asan_init$'; }

# peak_kb FILE CMD...: run CMD under /usr/bin/time (Debian: time), its
# peak RSS in KiB into FILE; returns CMD's status.
peak_kb() {
	_pk_f=$1
	shift
	/usr/bin/time -f %M -o "$_pk_f.time" "$@"
	_pk_rc=$?
	tail -n 1 "$_pk_f.time" >"$_pk_f"
	return $_pk_rc
}

# timeout_run SECONDS CMD...: run CMD, killed if it outlives SECONDS.
timeout_run() { timeout -k 5 "$@"; }

# nginx_conf PORT WORKERS: an nginx.conf on stdout for a server in $T
# (run as root: a master and WORKERS workers as nobody) answering "hello
# from nginx" on 127.0.0.1:PORT, its pid in $T/nginx.pid, its temporary
# files in $T/tmp (to be made, mode 755), no access log.
nginx_conf() {
	cat <<CONF
daemon off;
master_process on;
worker_processes $2;
user nobody nogroup;
pid $T/nginx.pid;
error_log $T/error.log;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $T/tmp/body;
	proxy_temp_path $T/tmp/proxy;
	fastcgi_temp_path $T/tmp/fastcgi;
	uwsgi_temp_path $T/tmp/uwsgi;
	scgi_temp_path $T/tmp/scgi;
	server {
		listen 127.0.0.1:$1;
		location / { return 200 "hello from nginx\n"; }
	}
}
CONF
}

# done_testing: exit non-zero if any test failed (the TAP lines already say).
done_testing() { [ "$_failed" -eq 0 ]; exit $?; }
