# SPDX-License-Identifier: MIT
# Reads `go tool pprof -raw` output and sums samples per leaf function,
# per thread label, or counts the stacks that reach a function; used by the
# t/305x tests to compare a profile with an example's printed truth.
#
#   awk -f truth.awk -v mode=leaf   [-v exe=EXE -v nmfile=NM] RAW
#       -> "func alloc_objects alloc_space inuse_objects inuse_space"
#   awk -f truth.awk -v mode=thread [-v exe=EXE -v nmfile=NM] RAW
#       -> "thread alloc_objects alloc_space inuse_objects inuse_space"
#   (-v values=6 for those two: the peak_inuse values too, PALLOC_PEAK=1)
#   awk -f truth.awk -v mode=stacks -v target=main [-v count=F] ... RAW
#       -> per sample "alloc_objects frames reaches n_F leaf": reaches is 1
#          when a frame of the stack is the function target, n_F counts
#          the frames of function F
#
# NM is the output of `nm -S --defined-only EXE` in a file: locations the
# profile leaves unnamed that fall in EXE's mapping are named from it (the
# address minus the mapping's start plus its file offset is the ELF address
# for the PIE text segment gcc and ld produce, where p_vaddr == p_offset).
# A named location takes its innermost line's function (pprof's Line[0],
# what -top calls flat). Values are the four sample types in the profile's
# order: alloc_objects alloc_space inuse_objects inuse_space.

function hex(s,    i, c, v) {
	s = tolower(s)
	sub(/^0x/, "", s)
	v = 0
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1)) - 1
		if (c < 0)
			break
		v = v * 16 + c
	}
	return v
}

# the function of an ELF address from the nm table, "" if none
function nm_name(a,    i) {
	for (i = 1; i <= nsym; i++)
		if (a >= sym_lo[i] && a < sym_hi[i])
			return sym_name[i]
	return ""
}

BEGIN {
	# nm -S: "addr size type name" (symbols without a size are skipped)
	while (nmfile != "" && (getline line < nmfile) > 0) {
		n = split(line, f, " ")
		if (n >= 4 && f[3] ~ /^[tTwW]$/) {
			nsym++
			sym_lo[nsym] = hex(f[1])
			sym_hi[nsym] = hex(f[1]) + hex(f[2])
			sym_name[nsym] = f[4]
		}
	}
}

/^Samples:/ { section = "samples"; header = 1; next }
/^Locations/ { section = "locations"; next }
/^Mappings/ { section = "mappings"; next }

section == "samples" {
	if (header) { header = 0; next }
	if ($0 ~ /:[ 0-9]*$/ && $0 ~ /^ *-?[0-9]+ /) {
		ns++
		split($0, parts, ":")
		nv = split(parts[1], vals, " ")
		for (i = 1; i <= (values ? values : 4); i++)
			sv[ns, i] = (i <= nv) ? vals[i] : 0
		sframes[ns] = parts[2]
		sthread[ns] = ""
		next
	}
	if ($0 ~ /thread:\[/) {
		t = $0
		sub(/.*thread:\[/, "", t)
		sub(/\].*/, "", t)
		sthread[ns] = t
	}
	next
}

section == "locations" {
	if ($0 ~ /^ *[0-9]+: 0x/) {
		id = $1
		sub(/:$/, "", id)
		cur = id
		laddr[id] = hex($2)
		m = $3
		sub(/^M=/, "", m)
		lmap[id] = m
		rest = $0
		sub(/^ *[0-9]+: 0x[0-9a-f]+ (M=[0-9]+ )?(\[F\] )?/, "", rest)
	} else {
		rest = $0
		sub(/^ +/, "", rest)
	}
	if (rest == "" || rest == "??")
		next
	# "name file:line s=N[(system_name)]": the name is what precedes the
	# last two fields
	n = split(rest, f, " ")
	name = f[1]
	for (i = 2; i <= n - 2; i++)
		name = name " " f[i]
	if (!(cur in lname))
		lname[cur] = name
	lall[cur] = lall[cur] "\t" name
	next
}

section == "mappings" {
	if ($0 ~ /^ *[0-9]+: 0x/) {
		id = $1
		sub(/:$/, "", id)
		split($2, r, "/")
		mstart[id] = hex(r[1])
		moff[id] = hex(r[3])
		mpath[id] = $3
	}
	next
}

# a location's names, tab-separated with a leading tab ("" if unknown)
function names(id,    nm) {
	if (id in lall)
		return lall[id]
	if (exe != "" && mpath[lmap[id]] == exe) {
		nm = nm_name(laddr[id] - mstart[lmap[id]] + moff[lmap[id]])
		if (nm != "")
			return "\t" nm
	}
	return ""
}

function first_name(id,    s) {
	s = names(id)
	sub(/^\t/, "", s)
	sub(/\t.*/, "", s)
	return s == "" ? "?" : s
}

END {
	for (s = 1; s <= ns; s++) {
		nf = split(sframes[s], fr, " ")
		if (mode == "leaf" || mode == "thread") {
			key = (mode == "leaf") ? first_name(fr[1]) : sthread[s]
			if (!(key in seen)) {
				seen[key] = 1
				keys[++nkeys] = key
			}
			for (i = 1; i <= (values ? values : 4); i++)
				sum[key, i] += sv[s, i]
			continue
		}
		hit = 0
		nc = 0
		for (i = 1; i <= nf; i++) {
			nm = names(fr[i]) "\t"
			if (index(nm, "\t" target "\t"))
				hit = 1
			if (count != "" && index(nm, "\t" count "\t"))
				nc++
		}
		printf "%.0f %d %d %d %s\n", sv[s, 1], nf, hit, nc, first_name(fr[1])
	}
	if (mode == "stacks")
		exit 0
	for (k = 1; k <= nkeys; k++) {
		printf "%s", keys[k]
		for (i = 1; i <= (values ? values : 4); i++)
			printf " %.0f", sum[keys[k], i]
		printf "\n"
	}
}
