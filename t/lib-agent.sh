# SPDX-License-Identifier: MIT
# t/lib-agent.sh: helpers for the agent tests (t/30NN-agent-*.sh), after
# t/lib.sh. Profiles are read back with Go's pprof, never our own decoder.

# raw_values PROFILE OUT: the sample value lines of `pprof -raw`, one
# sample per line as "V1 V2 V3 V4[ V5 V6] | LABELS" (labels may be empty).
raw_values() {
	pprof -raw "$1" >"$2.raw" 2>"$2.err" || return 1
	awk '
		/^Samples:/ { s = 1; next }
		/^Locations/ { s = 0 }
		s && /^ *[0-9-]+( +[0-9-]+)*:/ {
			if (line != "") print line " |" lab
			sub(/:.*/, ""); gsub(/^ +| +$/, ""); gsub(/ +/, " ")
			line = $0; lab = ""; next
		}
		s && line != "" && /^ +[a-z_]+:\[/ { gsub(/^ +/, ""); lab = lab " " $0 }
		END { if (line != "") print line " |" lab }
	' "$2.raw" >"$2"
}

# check_sites TRUTH VALUES: one TAP test per "site NAME: A B C D" line of
# TRUTH, passing when VALUES has a sample with exactly those values.
check_sites() {
	while read -r _site _name _a _b _c _d; do
		[ "$_site" = site ] || continue
		if grep -q "^$_a $_b $_c $_d |" "$2"; then
			ok "site ${_name%:} is $_a $_b $_c $_d"
		else
			not_ok "site ${_name%:} is $_a $_b $_c $_d"
		fi
	done <"$1"
}

# comments PROFILE OUT: the profile's comments, one per line.
comments() {
	pprof -raw "$1" 2>/dev/null | sed -n 's/^Comment: //p' >"$2"
}

# one_profile GLOB: the single file matching GLOB (fails unless exactly one).
one_profile() {
	set -- $1
	[ $# -eq 1 ] && [ -f "$1" ] && echo "$1"
}

# stats_when_ready PID READY_FILE OUT: wait (bounded) until the process
# printed "ready" to READY_FILE, then save its stats, read from its record
# (palloc-dump --stats --json), to OUT.
stats_when_ready() {
	retry 100 0.1 grep -q '^ready' "$2"
	palloc-dump --stats --json "$1" >"$3"
}
