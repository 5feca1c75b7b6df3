#!/bin/sh
# SPDX-License-Identifier: MIT
# The ban list of libcore/base/common.h (HACKING.md "Conventions") is a
# compile error even when the function's own header comes after common.h,
# as it does in a .c file that includes common.h first: compiled with -c
# only, since a shared object (the agent) links with an undefined symbol
# unnoticed.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"

cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || skip_all "no C compiler ($cc)"
printf 'int x;\n' >probe.c
"$cc" -c probe.c -o probe.o 2>/dev/null || skip_all "$cc cannot compile"

# Each line: function, its header, a use of it in a function body.
cat >cases <<'EOF'
sprintf stdio.h char b[8]; sprintf(b, "%d", 1);
vsprintf stdio.h char b[8]; va_list ap; vsprintf(b, "x", ap);
strcpy string.h char b[8]; strcpy(b, "x");
strcat string.h char b[8] = ""; strcat(b, "x");
strncpy string.h char b[8]; strncpy(b, "x", 2);
strtok string.h char b[8] = "a b"; (void)strtok(b, " ");
gmtime time.h time_t t = 0; (void)gmtime(&t);
localtime time.h time_t t = 0; (void)localtime(&t);
atoi stdlib.h (void)atoi("1");
alloca alloca.h (void)alloca(16);
EOF
# Known holes, as TAP TODO (none now: common.h includes <time.h> first).
todo=

plan "$(wc -l <cases)"
while read -r fn hdr use; do
	{
		printf '#include "config.h"\n#include "common.h"\n'
		printf '#include <stdarg.h>\n#include <%s>\n' "$hdr"
		printf 'void f(void);\nvoid f(void)\n{\n\t%s\n}\n' "$use"
	} >"$fn.c"
	directive=
	case " $todo " in *" $fn "*)
		directive=" # TODO common.h must include <$hdr> before the bans" ;;
	esac
	if "$cc" -c -I"$top_builddir" -I"$top_srcdir/libcore/base" "$fn.c" \
		-o "$fn.o" >"$fn.err" 2>&1; then
		echo "not ok $((_n + 1)) - $fn after <$hdr>: a compile error$directive"
		[ -n "$directive" ] || _failed=$((_failed + 1))
		_n=$((_n + 1))
	elif grep -q "sorry_${fn}_is_banned_in_palloc" "$fn.err"; then
		ok "$fn after <$hdr>: a compile error$directive"
	else
		not_ok "$fn after <$hdr>: fails, but not by the ban"
		sed 's/^/# /' "$fn.err"
	fi
done <cases
done_testing
