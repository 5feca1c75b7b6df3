# SPDX-License-Identifier: MIT
# t/lib-run.sh: prerequisites and checks shared by the palloc-run tests
# with the agent (t/3101, t/311x), sourced after t/lib.sh. Each check is one
# TAP test.

need_agent
need palloc-run nm
need_pprof
nm -D --defined-only "$PALLOC_AGENT" | grep -qw malloc ||
	skip_all "the agent does not interpose malloc yet"

# run_line_re PATH [TOP]: the summary line palloc-run prints for profile
# PATH, as an extended regular expression; TOP: the top function's (any).
_num='[0-9]+(\.[0-9])? (B|KiB|MiB|GiB|TiB)'
run_line_re() {
	printf '^palloc-run: wrote %s: alloc %s in [0-9]+ objects, inuse %s in [0-9]+ objects, top %s$' \
		"$1" "$_num" "$_num" "${2:-(inuse|alloc): .+}"
}

# check_same_stderr LABEL BASE ERR: the program's standard error under
# palloc-run (ERR less palloc-run's own lines) is BASE, its error without
# palloc: no agent message either (the agent once warned falsely about
# another malloc preloaded first on a non-PIE program such as Debian's
# python3; t/3015 tests the check itself).
check_same_stderr() {
	grep -v '^palloc-run: ' "$3" >err.prog
	if diff -u "$2" err.prog >err.diff; then
		ok "$1: same standard error (palloc-run's lines aside)"
	else
		not_ok "$1: same standard error (palloc-run's lines aside)"
		sed 's/^/# /' err.diff
	fi
}

# symbolized PROFILE: print "NAMED TOTAL" locations, from go tool pprof -raw
# (a location line is "  ID: 0xADDR M=N [function file:line ...]").
symbolized() {
	pprof -symbolize=none -raw "$1" 2>/dev/null | awk '
		/^Locations/ { in_loc = 1; next }
		/^Mappings/ { in_loc = 0 }
		in_loc && $1 ~ /^[0-9]+:$/ && $2 ~ /^0x/ {
			total++
			if (NF > 3) named++
		}
		END { printf "%d %d\n", named, total }'
}

# unnamed PROFILE: the locations left without a function, one per line as
# "FILE OFFSET" (the file-relative address: address - start + offset).
unnamed() {
	pprof -symbolize=none -raw "$1" 2>/dev/null | awk '
		/^Locations/ { in_loc = 1; next }
		/^Mappings/ { in_loc = 0; in_map = 1; next }
		in_loc && $1 ~ /^[0-9]+:$/ && $2 ~ /^0x/ && NF == 3 {
			addr[$2] = substr($3, 3)
		}
		in_map && $1 ~ /^[0-9]+:$/ {
			split($2, r, "/")
			m = substr($1, 1, length($1) - 1)
			start[m] = r[1]; off[m] = r[3]; file[m] = $3
		}
		function hex(s,   i, v, c) {
			v = 0
			s = tolower(substr(s, 3))
			for (i = 1; i <= length(s); i++) {
				c = index("0123456789abcdef", substr(s, i, 1)) - 1
				v = v * 16 + c
			}
			return v
		}
		END {
			for (a in addr) {
				m = addr[a]
				printf "%s %d\n", file[m], hex(a) - hex(start[m]) + hex(off[m])
			}
		}'
}

# nameable PROFILE: how many of the unnamed locations lie inside a function
# that the file's own symbol tables (.dynsym, .symtab: nm -S) name; file
# offsets become addresses through the file's PT_LOAD headers (readelf).
nameable() {
	unnamed "$1" | sort >unnamed.list
	cut -d' ' -f1 unnamed.list | sort -u | while read -r _f; do
		[ -f "$_f" ] || continue
		{ nm -D -S --defined-only "$_f"; nm -S --defined-only "$_f"; } \
			2>/dev/null | awk -v f="$_f" '$3 ~ /^[TtWi]$/ {
				print f, "S", $1, $2 }'
		readelf -lW "$_f" 2>/dev/null | awk -v f="$_f" '$1 == "LOAD" {
			print f, "L", substr($2, 3), substr($3, 3), substr($5, 3) }'
	done >syms.list
	# Both lists to "FILE VA KIND [END]" in decimal, sorted by file and
	# address, symbols (kind 0) before queries (kind 1) at one address;
	# then one sweep: a query is inside a symbol when the largest end of
	# the symbols starting at or before it lies beyond it (linear, where
	# a loop over every symbol per query took seconds for cc1's 28000).
	awk '
		function hex(s,   i, v) {
			v = 0
			s = tolower(s)
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		FILENAME == "syms.list" && $2 == "S" {
			printf "%s %.0f 0 %.0f\n", $1, hex($3), hex($3) + hex($4)
			next }
		FILENAME == "syms.list" && $2 == "L" { nl[$1]++
			loff[$1, nl[$1]] = hex($3); lva[$1, nl[$1]] = hex($4)
			lsz[$1, nl[$1]] = hex($5); next }
		{
			for (i = 1; i <= nl[$1]; i++)
				if ($2 >= loff[$1, i] && $2 < loff[$1, i] + lsz[$1, i])
					printf "%s %.0f 1\n", $1, $2 - loff[$1, i] + lva[$1, i]
		}' syms.list unnamed.list | sort -k1,1 -k2,2n -k3,3n | awk '
		$1 != f { f = $1; end = -1 }
		$3 == 0 { if ($4 + 0 > end) end = $4 + 0; next }
		$2 + 0 < end { c++ }
		END { print c + 0 }'
}

# has_debug_info FILE: Debian's detached debug info for FILE is installed.
has_debug_info() {
	_id=$(readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: *//p')
	[ -n "$_id" ] && [ -f "/usr/lib/debug/.build-id/$(echo "$_id" |
		cut -c1-2)/$(echo "$_id" | cut -c3-).debug" ]
}

# check_real LABEL PROFILE ERRFILE NAME_RE FILE...: the run's summary line,
# names matching NAME_RE in pprof -top (alloc_space, pprof not allowed to
# symbolize by itself), every location named that the ELF symbol tables
# or installed debug info (/usr/lib/debug/.build-id) can name, and at
# least 90% of the locations symbolized when Debian's debug info for the
# program's own FILEs is installed (without it, functions that are static
# in a stripped binary have no name anywhere).
check_real() {
	_label=$1 _prof=$2 _err=$3 _re=$4
	shift 4
	if [ "$(grep -Ec "$(run_line_re "$_prof")" "$_err")" -eq 1 ]; then
		ok "$_label: one summary line"
		sed 's/^/# /' "$_err" | grep 'palloc-run: wrote'
	else
		not_ok "$_label: one summary line"
		sed 's/^/# /' "$_err" | tail -5
	fi
	pprof -symbolize=none -top -sample_index=alloc_space "$_prof" \
		>"$_prof.top" 2>"$_prof.toperr"
	if grep -Eq "$_re" "$_prof.top"; then
		ok "$_label: go tool pprof -top names its functions"
		sed -n '/flat%/,$p' "$_prof.top" | head -10 | sed 's/^/# /'
	else
		not_ok "$_label: go tool pprof -top names its functions ($_re)"
		head -20 "$_prof.top" "$_prof.toperr" | sed 's/^/# /'
	fi
	_files=$*
	set -- $(symbolized "$_prof")
	_named=$1 _total=$2
	_missed=$(nameable "$_prof")
	diag "$_label: $_named of $_total locations symbolized"
	check "$_label: every location the symbol tables name is named ($_missed missed)" \
		[ "$_total" -gt 0 -a "$_missed" -eq 0 ]
	# nameable left unnamed.list: count those in files with debug info.
	_dbgmiss=0
	for _f in $(cut -d' ' -f1 unnamed.list | sort -u); do
		has_debug_info "$_f" || continue
		_dbgmiss=$((_dbgmiss + $(grep -c "^$_f " unnamed.list)))
	done
	check "$_label: every location in a file with debug info is named ($_dbgmiss missed)" \
		[ "$_dbgmiss" -eq 0 ]
	_dbg=yes
	for _f in $_files; do
		has_debug_info "$_f" || _dbg="no debug info for $_f"
	done
	if [ "$_dbg" != yes ]; then
		skip "$_label: >= 90% symbolized needs debug info ($_dbg; $_named/$_total from symbol tables)"
	elif [ $((_named * 100)) -ge $((_total * 90)) ]; then
		ok "$_label: at least 90% of locations symbolized ($_named/$_total)"
	else
		not_ok "$_label: at least 90% of locations symbolized ($_named/$_total)"
	fi
}

# more_line_re N: the line palloc-run prints for the N profiles beyond its
# 10 summary lines.
more_line_re() {
	printf '^palloc-run: and %s more profiles with less allocated: alloc %s in [0-9]+ objects, inuse %s in [0-9]+ objects$' \
		"$1" "$_num" "$_num"
}

# check_many LABEL DIR ERRFILE: the profiles palloc-run wrote into DIR
# (one per process), all read by go tool pprof without a complaint, and
# summarized in ERRFILE as palloc-run(1) says: a line each up to 10, else
# the 10 largest and one line for the rest. Leaves DIR's largest profile
# (by file size) in $largest and their number in $nprof.
check_many() {
	_label=$1 _dir=$2 _err=$3
	set -- "$_dir"/*.pb.gz
	nprof=$#
	largest=$(ls -S "$_dir"/*.pb.gz | head -1)
	pprof -symbolize=none -raw "$@" >"$_dir.raw" 2>"$_dir.rawerr"
	if [ $? -eq 0 ] && [ ! -s "$_dir.rawerr" ] &&
		grep -q '^Samples:' "$_dir.raw"; then
		ok "$_label: go tool pprof reads all $nprof profiles"
	else
		not_ok "$_label: go tool pprof reads all $nprof profiles"
		head -5 "$_dir.rawerr" | sed 's/^/# /'
	fi
	_lines=$(grep -Ec "$(run_line_re "$_dir/[^ ]+\.pb\.gz")" "$_err")
	_want=$nprof
	[ "$nprof" -le 10 ] || _want=10
	_missing=0
	for _f in $(sed -n 's/^palloc-run: wrote \([^ ]*\): .*/\1/p' "$_err"); do
		[ -f "$_f" ] || _missing=$((_missing + 1))
	done
	check "$_label: $_want summary lines for $nprof profiles ($_lines), each of an existing file" \
		[ "$_lines" -eq "$_want" -a "$_missing" -eq 0 ]
	if [ "$nprof" -gt 10 ]; then
		check "$_label: one line for the $((nprof - 10)) other profiles" \
			[ "$(grep -Ec "$(more_line_re $((nprof - 10)))" "$_err")" -eq 1 ]
	else
		check "$_label: no line for other profiles" \
			[ "$(grep -c 'more profiles' "$_err")" -eq 0 ]
	fi
}

# all_valid DIR: one TAP test, passing when go tool pprof reads every
# *.pb.gz in DIR (each one it cannot read is named).
all_valid() {
	_bad=0
	for _f in "$1"/*.pb.gz; do
		pprof -raw "$_f" >/dev/null 2>&1 ||
			{ _bad=$((_bad + 1)) && diag "pprof cannot read $_f"; }
	done
	check "every profile is valid for go tool pprof" [ $_bad -eq 0 ]
}
