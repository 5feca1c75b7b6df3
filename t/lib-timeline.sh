# SPDX-License-Identifier: MIT
# t/lib-timeline.sh: checks of palloc-run --timeline files (palloc(7)
# "Timeline"), sourced after t/lib.sh by t/314x.

PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "/usr/bin/python3 not installed"
need jq

# tl_valid FILE: every line a JSON object of the documented schema: a
# sample with every key (integers or null), or an event with its keys;
# the reason on stdout (as TAP comments) when not.
tl_valid() {
	"$PY" - "$1" <<'PYEOF'
import json, sys
S = ["type", "time_ns", "pid", "heap_inuse_bytes", "heap_alloc_bytes",
     "allocator_resident_bytes", "allocator_free_bytes", "rss_bytes",
     "anon_bytes", "file_bytes", "shmem_bytes", "swap_bytes",
     "cgroup_usage_bytes", "cgroup_limit_bytes"]
E = {"profile": ["path", "kind"], "exec": ["exe", "cmdline"],
     "fork": ["parent_pid"], "exit": ["status", "signal"],
     "oom_kill": ["limit_bytes"], "threshold": ["percent", "usage_bytes", "limit_bytes"]}
bad = 0
n = 0
with open(sys.argv[1], "rb") as f:
    data = f.read()
if data and not data.endswith(b"\n"):
    print("# the last line is not whole"); bad += 1
for i, raw in enumerate(data.splitlines(), 1):
    n += 1
    try:
        o = json.loads(raw)
    except ValueError as e:
        print("# line %d: not JSON: %s" % (i, e)); bad += 1; continue
    if not isinstance(o, dict):
        print("# line %d: not an object" % i); bad += 1; continue
    if o.get("type") == "sample":
        if list(o) != S:
            print("# line %d: keys %s" % (i, list(o))); bad += 1
        elif any(not (v is None or type(v) is int) for k, v in o.items()
                 if k != "type"):
            print("# line %d: a value not an integer or null" % i); bad += 1
    elif o.get("type") == "event":
        want = ["type", "time_ns", "pid", "event"] + E.get(o.get("event"), ["?"])
        if list(o) != want:
            print("# line %d: keys %s, want %s" % (i, list(o), want)); bad += 1
        if o.get("event") == "profile" and o.get("kind") not in (
                "interval", "peak", "pressure", "exit"):
            print("# line %d: kind %r" % (i, o.get("kind"))); bad += 1
    else:
        print("# line %d: type %r" % (i, o.get("type"))); bad += 1
if n == 0:
    print("# empty"); bad += 1
sys.exit(1 if bad else 0)
PYEOF
}

# tl_samples FILE PID: that pid's samples, one compact line each.
tl_samples() { jq -c "select(.type == \"sample\" and .pid == $2)" "$1"; }

# tl_events FILE EVENT: the events EVENT, one compact line each.
tl_events() { jq -c "select(.type == \"event\" and .event == \"$2\")" "$1"; }
