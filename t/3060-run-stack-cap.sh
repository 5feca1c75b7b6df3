#!/bin/sh
# SPDX-License-Identifier: MIT
# The agent's stack table cap (65536 stacks): examples/
# stacks at rate 1 with 2^17 distinct allocating stacks keeps at most 65536
# of them, counts every other sample as dropped, with its bytes, in the
# profile's comment, and palloc-run's summary line says so (palloc-dump
# and palloc-diff in a warning, in the same words); with 2^12 stacks
# nothing is dropped and the line says nothing about it.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
. "$top_srcdir/t/lib-run.sh"
. "$top_srcdir/t/lib-examples.sh"
example stacks
plan 18

CAP=65536

# all DESC COND...: one test, passing when every COND (the words of a
# test(1) expression, split on spaces) holds.
all() {
	_desc=$1
	shift
	for _c in "$@"; do
		# shellcheck disable=SC2086
		if ! test $_c; then
			not_ok "$_desc (false: $_c)"
			return
		fi
	done
	ok "$_desc"
}

# comment_numbers RAW: "N M B" from the comment "sampled allocations: N;
# dropped samples: M, about B bytes allocated (...)", then "AC" from
# "counters: alloc_count AC, ..."; empty when a comment is missing.
comment_numbers() {
	sed -n 's/^Comment: sampled allocations: \([0-9]*\); dropped samples: \([0-9]*\), about \([0-9]*\) bytes allocated .*/\1 \2 \3/p' "$1"
	sed -n 's/^Comment: counters: alloc_count \([0-9]*\),.*/\1/p' "$1"
}

# stack_count RAW: "SAMPLES DISTINCT": the samples pprof printed, and how
# many distinct stacks (location lists with their labels) they have.
stack_count() {
	awk '/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 }
	     s && /^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ {
		if (key != "") print key
		key = substr($0, index($0, ":")); next }
	     s { key = key $0 }
	     END { if (key != "") print key }' "$1" >stacks.txt
	echo "$(wc -l <stacks.txt) $(sort -u stacks.txt | wc -l)"
}

# run_stacks NAME BITS: palloc-run -r 1 on examples/stacks --bits BITS;
# NAME.pb.gz, NAME.err (palloc-run's and the program's stderr), NAME.raw
# (pprof -raw), NAME.truth, NAME.leaf (truth.awk per leaf function); sets
# t_objects t_bytes (truth), k_objects k_bytes (kept), sampled dropped
# dropped_bytes alloc_count (comments), n_samples n_distinct (stacks).
run_stacks() {
	palloc-run -r 1 -o "$1.pb.gz" -- "$exe" --bits "$2" \
		--truth "$1.truth" >"$1.out" 2>"$1.err"
	_rc=$?
	if [ $_rc -eq 0 ] && [ -s "$1.pb.gz" ]; then
		ok "$1: palloc-run -r 1 stacks --bits $2 exits 0 with a profile"
	else
		not_ok "$1: palloc-run -r 1 stacks --bits $2 exits 0 with a profile (got $_rc)"
		sed 's/^/# /' "$1.err" | tail -5
	fi
	pprof -raw "$1.pb.gz" >"$1.raw" 2>"$1.raw.err"
	if grep -q '^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes' "$1.raw"; then
		ok "$1: go tool pprof reads it"
	else
		not_ok "$1: go tool pprof reads it"
		head -5 "$1.raw.err" | sed 's/^/# /'
	fi
	truth_awk leaf -v exe= "$1.raw" >"$1.leaf"
	# The truth: leaf_alloc made T_OBJECTS allocations, T_BYTES bytes.
	read -r _pid _site t_objects t_bytes _io _is <<-EOF
		$(grep '^[0-9]* leaf_alloc ' "$1.truth")
	EOF
	# Kept: leaf_alloc's samples (1 object each) and bytes in the profile.
	read -r _f k_objects k_bytes _io _is <<-EOF
		$(awk '$1 == "leaf_alloc"' "$1.leaf")
	EOF
	_name=$1
	set -- $(comment_numbers "$_name.raw")
	sampled=${1:-} dropped=${2:-} dropped_bytes=${3:-} alloc_count=${4:-}
	set -- $(stack_count "$_name.raw")
	n_samples=${1:-0} n_distinct=${2:-0}
}

# ---- 2^17 paths: twice the cap ----
run_stacks cap 17
diag "truth: $t_objects allocations, $t_bytes bytes; profile: $k_objects" \
	"kept, $k_bytes bytes, $n_samples samples ($n_distinct distinct" \
	"stacks); comment: sampled $sampled, dropped $dropped, about" \
	"$dropped_bytes bytes; alloc_count $alloc_count"

check "the truth: 131072 allocations in leaf_alloc" [ "${t_objects:-0}" -eq 131072 ]
check "the comment: sampled and dropped counts, bytes, alloc_count" \
	[ -n "$alloc_count" ]
# Rate 1: every allocation is a sample, kept or dropped.
check "rate 1: sampled allocations ($sampled) = alloc_count ($alloc_count)" \
	[ "${sampled:-x}" = "${alloc_count:-y}" ]
# One sample per stack in the file, and at most the cap of them. The table
# fills: every slot not holding a leaf_alloc path holds the stack of one
# of the alloc_count - 2^17 other allocations (libc's, before main), so at
# least CAP - (alloc_count - 2^17) leaf_alloc paths are kept.
others=$((${alloc_count:-0} - ${t_objects:-0}))
all "stacks in the profile: $n_distinct distinct of $n_samples samples, at most $CAP" \
	"$n_samples -eq $n_distinct" "$n_distinct -le $CAP"
all "kept leaf_alloc paths: $k_objects, at least $CAP - $others other allocations" \
	"${k_objects:-0} -ge $((CAP - others))" \
	"${k_objects:-0} -le $n_distinct"
# Derivation, at rate 1: each of leaf_alloc's 2^17 allocations is sampled
# once and has a stack of its own (a distinct path), so it is either kept
# (1 object, its size, in its own stack: k_objects, k_bytes) or dropped
# (1 in M, its size, weight size/(1-exp(-size)) = size exactly for 64 B and
# more, in B). The program allocates nothing else once the table is full,
# so every dropped sample is leaf_alloc's: M = T - K, B = T_BYTES - K_BYTES.
check "dropped samples M = $t_objects - $k_objects leaf_alloc samples kept" \
	[ "${dropped:-x}" = "$((${t_objects:-0} - ${k_objects:-0}))" ]
check "dropped bytes B = $t_bytes - $k_bytes leaf_alloc bytes kept" \
	[ "${dropped_bytes:-x}" = "$((${t_bytes:-0} - ${k_bytes:-0}))" ]
# The summary line: the profile's totals (kept samples only), then the
# drop with the comment's count.
grep '^palloc-run: ' cap.err >cap.line
if grep -Eq "^palloc-run: wrote cap.pb.gz: alloc [^;]* in $((k_objects + others)) objects, .*, top alloc: leaf_alloc; $dropped samples dropped, about [0-9.]+ (KiB|MiB) \\(stack table full or out of memory\\)$" cap.line &&
	[ "$(wc -l <cap.line)" -eq 1 ]; then
	ok "summary line reports $dropped samples dropped"
else
	not_ok "summary line reports $dropped samples dropped"
	sed 's/^/# /' cap.line
fi
diag "$(cat cap.line)"
# palloc-dump and palloc-diff read the same comment (pprof_comments.c) and
# say the same in a warning line.
drop_text=$(sed -n 's/^palloc-run: wrote cap.pb.gz: .*; \([0-9]* samples dropped, .*\)$/\1/p' cap.line)
palloc-dump -t cap.pb.gz >dump.out 2>dump.err
check "palloc-dump cap.pb.gz: one warning line, palloc-run's words" \
	one_line dump.err "palloc-dump: warning: cap.pb.gz: ${drop_text:-?}"
palloc-diff cap.pb.gz cap.pb.gz >diff.out 2>diff.err
check "palloc-diff cap.pb.gz cap.pb.gz: a warning line for each, the same" \
	[ "$(cat diff.err)" = "palloc-diff: warning: cap.pb.gz: ${drop_text:-?}
palloc-diff: warning: cap.pb.gz: ${drop_text:-?}" ]

# ---- 2^12 paths: under the cap ----
run_stacks small 12
all "2^12 paths: every leaf_alloc sample kept ($k_objects of $t_objects, $k_bytes of $t_bytes bytes)" \
	"${t_objects:-0} -eq 4096" "${k_objects:-x} = ${t_objects:-y}" \
	"${k_bytes:-x} = ${t_bytes:-y}"
all "2^12 paths: at least 4096 distinct stacks ($n_distinct of $n_samples samples)" \
	"$n_samples -eq $n_distinct" "$n_distinct -ge 4096"
check "2^12 paths: comment says 0 dropped, about 0 bytes" \
	[ "$dropped $dropped_bytes" = "0 0" ]
grep '^palloc-run: ' small.err >small.line
if grep -Eq "$(run_line_re small.pb.gz 'alloc: leaf_alloc')" small.line &&
	! grep -q dropped small.line; then
	ok "2^12 paths: summary line without drop wording"
else
	not_ok "2^12 paths: summary line without drop wording"
	sed 's/^/# /' small.line
fi
done_testing
