#!/bin/sh
# SPDX-License-Identifier: MIT
# A C++ program built here by Debian's g++ (std::string, std::vector,
# std::map: operator new everywhere) under palloc-run, at the default rate
# and at rate 1: same output, error and status; go tool pprof shows the
# demangled C++ names (std::...) and keeps the mangled system names;
# palloc-run's summary line shows the top one short.
. "${top_srcdir:-$(dirname "$0")/..}/t/lib.sh"
need_cxx
. "$top_srcdir/t/lib-run.sh"

cat >words.cc <<'CEOF'
#include <iostream>
#include <map>
#include <string>
#include <vector>

// 100000 generated words, 20000 distinct: counted in a std::map, all
// kept in a std::vector.
__attribute__((noinline)) static std::map<std::string, int>
count_words(std::vector<std::string> &all)
{
	std::map<std::string, int> counts;

	for (int i = 0; i < 100000; i++) {
		std::string w = "word-number-" + std::to_string(i % 20000) +
				"-long-enough-to-allocate";
		all.push_back(w);
		counts[w]++;
	}
	return counts;
}

int main()
{
	// Still in use at exit: never deleted.
	auto *all = new std::vector<std::string>;
	auto *counts = new std::map<std::string, int>(count_words(*all));

	std::cout << counts->size() << " words, " << all->size() << " in all\n";
	std::cerr << "first " << counts->begin()->first << "\n";
	return 3;
}
CEOF
/usr/bin/g++ -O2 -o words words.cc || { echo "Bail out! g++ failed"; exit 1; }
./words >base.out 2>base.err
base_rc=$?
diag "without palloc: exit $base_rc, $(cat base.out)"

for rate in default 1; do
	set --
	[ "$rate" = default ] || set -- -r "$rate"
	palloc-run "$@" -o "w.$rate.pb.gz" ./words >out 2>err
	rc=$?
	check "rate $rate: same exit status ($rc)" [ "$rc" -eq "$base_rc" ]
	check "rate $rate: same output" cmp -s out base.out
	check_same_stderr "rate $rate" base.err err
	# The summary line's top function: a C++ name, short.
	check "rate $rate: the summary names the top function without templates or parameters" \
		grep -Eq "$(run_line_re "w.$rate.pb.gz" \
			'inuse: (std::[A-Za-z0-9_:]+|count_words)')" err
	check_real "words, rate $rate" "w.$rate.pb.gz" err \
		' (void )?std::(__cxx11::basic_string|vector|_Rb_tree|map)<' \
		"$T/words"
	set -- $(symbolized "w.$rate.pb.gz")
	check "rate $rate: >= 90% of locations symbolized from the symbol tables ($1/$2)" \
		[ "$2" -gt 0 -a $(($1 * 100)) -ge $(($2 * 90)) ]
	# -raw: "ID: 0xADDR M=N NAME FILE:LINE s=START(SYSTEM_NAME)", the
	# system name only where it differs from the name.
	pprof -symbolize=none -raw "w.$rate.pb.gz" >raw 2>/dev/null
	check "rate $rate: demangled names keep their mangled system names" \
		grep -Eq ' M=[0-9]+ (void )?std::[^ ].* s=[0-9]+\(_ZN(St|K?St)' raw
	check "rate $rate: no mangled name left as a name" \
		[ "$(grep -Ec ' M=[0-9]+ _Z' raw)" -eq 0 ]
done

echo "1..$_n"
done_testing
