#!/bin/sh
# SPDX-License-Identifier: MIT
# The OTLP profiles encoder (libcore/tools/otlp.c): requests of
# known profiles (t/helper/otlp-encode.c, pprof-gen) decoded by protoc with the
# opentelemetry-proto subset in proto/opentelemetry, then resolved through
# the dictionary: the resource's attributes, the four sample types, each
# sample's stack of function names and its value; no profile, empty
# profiles and huge strings; a profile without the sample types refused.
. "$top_srcdir/t/lib.sh"
need protoc python3
plan 12

I=$top_srcdir/proto
req=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest
decode() {
	protoc --decode=$req -I "$I" \
		"$I/opentelemetry/proto/collector/profiles/v1development/profiles_service.proto" \
		<"$1" >"$1.txt" 2>"$1.err"
}

# protoc's text format, resolved: string, function, location, stack and
# attribute indices replaced by what they index; every table's entry 0 the
# zero value and no item twice (the dictionary's rules).
cat >resolve.py <<'EOF_PY'
import ast, sys

def parse(lines):
    root = {}
    stack = [root]
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line.endswith('{'):
            d = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(d)
            stack.append(d)
        elif line == '}':
            stack.pop()
        else:
            k, v = line.split(':', 1)
            v = v.strip()
            v = ast.literal_eval(v) if v.startswith('"') else int(v)
            stack[-1].setdefault(k, []).append(v)
    return root

def one(d, k, default=0):
    return d.get(k, [default])[0]

r = parse(open(sys.argv[1]))
d = r['dictionary'][0]
strs = d.get('string_table', [])
tabs = ['mapping_table', 'location_table', 'function_table', 'link_table',
        'attribute_table', 'stack_table']
out = []
assert strs[0] == '', 'string_table[0] is not ""'
assert len(set(strs)) == len(strs), 'a string twice'
for t in tabs:
    items = d.get(t, [])
    assert items, t + ' has no entry 0'
    if t != 'link_table':
        assert items[0] == {}, t + '[0] is not the zero value'
    reprs = [repr(sorted(i.items())) for i in items]
    assert len(set(reprs)) == len(reprs), t + ' has an item twice'
out.append('tables ' + ' '.join('%s=%d' % (t.split('_')[0], len(d[t]))
                               for t in tabs) + ' string=%d' % len(strs))

def anyv(v):
    if 'string_value' in v:
        return one(v, 'string_value')
    return str(one(v, 'int_value'))

def attr(i):
    a = d['attribute_table'][i]
    u = one(a, 'unit_strindex')
    return '%s=%s%s' % (strs[one(a, 'key_strindex')], anyv(one(a, 'value', {})),
                        ' ' + strs[u] if u else '')

def func(loc):
    names = []
    for line in loc.get('lines', []):
        f = d['function_table'][one(line, 'function_index')]
        names.append('%s:%d' % (strs[one(f, 'name_strindex')],
                                one(line, 'line')))
    return '+'.join(names)

for m in d['mapping_table'][1:]:
    out.append('mapping %#x-%#x %s %s' % (
        one(m, 'memory_start'), one(m, 'memory_limit'),
        strs[one(m, 'filename_strindex')],
        ' '.join(attr(i) for i in m.get('attribute_indices', []))))
for rp in r.get('resource_profiles', []):
    for kv in one(rp, 'resource', {}).get('attributes', []):
        out.append('resource %s=%s' % (one(kv, 'key'), anyv(one(kv, 'value', {}))))
    for sp in rp.get('scope_profiles', []):
        sc = one(sp, 'scope', {})
        out.append('scope %s %s' % (one(sc, 'name', ''),
                                    'version' if one(sc, 'version', '') else ''))
        for p in sp.get('profiles', []):
            st, pt = one(p, 'sample_type', {}), one(p, 'period_type', {})
            out.append('profile %s/%s time %d duration %d period %s/%s %d' % (
                strs[one(st, 'type_strindex')], strs[one(st, 'unit_strindex')],
                one(p, 'time_unix_nano'), one(p, 'duration_nano'),
                strs[one(pt, 'type_strindex')], strs[one(pt, 'unit_strindex')],
                one(p, 'period')))
            for s in p.get('samples', []):
                stack = d['stack_table'][one(s, 'stack_index')]
                locs = [d['location_table'][i]
                        for i in stack.get('location_indices', [])]
                out.append('  %s %s %s' % (
                    ' '.join(str(v) for v in s.get('values', [])),
                    ' < '.join(func(l) for l in locs),
                    ' '.join(attr(i) for i in s.get('attribute_indices', []))))
print('\n'.join(out))
EOF_PY

# The request of t/4000's known profile as the alloc delta and as the inuse
# snapshot (read twice: two profiles, one dictionary).
pprof-gen known known.pb.gz &&
	otlp-encode known.pb.gz known.pb.gz >known.pb 2>known.err &&
	ok "otlp-encode writes a request" ||
	not_ok "otlp-encode writes a request ($(cat known.err))"
check "protoc decodes it as an ExportProfilesServiceRequest" decode known.pb
python3 resolve.py known.pb.txt >known.out 2>known.py.err
cat >known.exp <<'EXP'
tables mapping=2 location=5 function=5 link=1 attribute=3 stack=4 string=17
mapping 0x555555554000-0x555555559000 /usr/bin/known process.executable.build_id.gnu=abcdef0123456789
resource service.name=svc
resource process.pid=4242
resource host.name=host1
resource env=test
scope palloc version
profile alloc_objects/count time 1700000000000000000 duration 15000000000 period space/bytes 1
  10 make_buffers:13 < main:5 thread=main
  3 ns::Cache::grow(unsigned long):24 < main:5 thread=main
  100 leak_strings:35 < main:5 thread=main
profile alloc_space/bytes time 1700000000000000000 duration 15000000000 period space/bytes 1
  40960 make_buffers:13 < main:5 thread=main
  3000000 ns::Cache::grow(unsigned long):24 < main:5 thread=main
  6400 leak_strings:35 < main:5 thread=main
profile inuse_objects/count time 1700000015000000000 duration 0 period space/bytes 1
  4 make_buffers:13 < main:5 thread=main
  3 ns::Cache::grow(unsigned long):24 < main:5 thread=main
profile inuse_space/bytes time 1700000015000000000 duration 0 period space/bytes 1
  16384 make_buffers:13 < main:5 thread=main
  3000000 ns::Cache::grow(unsigned long):24 < main:5 thread=main
EXP
check "the resource, the four sample types, the stacks' functions and values; one dictionary for both profiles" \
	diff -u known.exp known.out
[ -s known.py.err ] && diag "$(cat known.py.err)"

# No profile: the resource alone; empty profiles: four Profiles, no sample.
otlp-encode none none >null.pb 2>null.err && decode null.pb &&
	python3 resolve.py null.pb.txt >null.out 2>null.py.err
cat >null.exp <<'EXP'
tables mapping=1 location=1 function=1 link=1 attribute=1 stack=1 string=1
resource service.name=svc
resource process.pid=4242
resource host.name=host1
resource env=test
scope palloc version
EXP
check "no profile: a request with the resource and no Profile" \
	diff -u null.exp null.out
otlp-encode empty >empty.pb 2>empty.err && decode empty.pb &&
	python3 resolve.py empty.pb.txt >empty.out 2>empty.py.err
grep -c '^profile ' empty.out >empty.n 2>/dev/null
check "empty profiles: four Profiles" test "$(cat empty.n)" = 4
check "empty profiles: no sample" test "$(grep -c '^  ' empty.out)" = 0

# Huge strings: a 1 MiB function name, a 124 KiB label, a 64 KiB service.
otlp-encode huge >huge.pb 2>huge.err
check "huge strings: encoded" test -s huge.pb
check "huge strings: decoded" decode huge.pb
python3 resolve.py huge.pb.txt >huge.out 2>huge.py.err
awk '/^resource service.name=/ { print length($0) - length("resource service.name=") }
	/^  4096 / && !seen++ { split($2, f, ":"); print length(f[1])
		split($0, a, "big="); print length(a[2]) }' \
	huge.out >huge.len
printf '%s\n' 65536 1048576 126976 >huge.exp
check "huge strings: the service name, function name and label whole" \
	diff -u huge.exp huge.len

# A profile that lacks a sample type is refused with a reason.
check "a profile without alloc_space: exit 1" \
	expect_fail 1 sh -c 'otlp-encode notypes >notypes.pb 2>notypes.err'
check "a profile without alloc_space: nothing written" test ! -s notypes.pb
check "a profile without alloc_space: the reason" \
	grep -q "no sample type 'alloc_objects'\|no sample type 'alloc_space'" notypes.err

done_testing
