#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# Writes timelines in palloc-run --timeline's format (palloc(7) "Timeline")
# for palloc-report's tests, until palloc-run writes them itself:
#
#   make-timeline.py run OUT DIR [--truth FILE] -- palloc-run ARGS...
#       runs palloc-run in DIR, samples its descendants' /proc/PID/status
#       and cgroup every 100 ms (heap_inuse_bytes from an example's
#       --truth FILE when given, else null), then adds a profile event for
#       each DIR/*.pb.gz (its time from palloc-dump -j, kind from its name:
#       *peak* peak, the last of the others exit, the rest interval; its
#       pid a sampled pid in its name, as palloc-run -o 'p.%p.%n.pb.gz'
#       writes it, else the first process's) and the exit
#       event; lines sorted by time.
#   make-timeline.py long OUT SECONDS PERIOD_MS PROFILE...
#       a synthetic timeline of one process: SECONDS of samples every
#       PERIOD_MS with every key set and noisy values, and an interval
#       profile event every 10 s naming the PROFILEs in turn (the size
#       test: 10 minutes at 100 ms).
import glob
import json
import os
import random
import re
import subprocess
import sys
import time


def status(pid):
    out = {}
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                k, _, v = line.partition(':')
                v = v.split()
                if v and v[-1] == 'kB':
                    out[k] = int(v[0]) * 1024
    except OSError:
        return None
    return out


def cgroup_of(pid):
    try:
        with open('/proc/%d/cgroup' % pid) as f:
            for line in f:
                if line.startswith('0::'):
                    return '/sys/fs/cgroup' + line[3:].strip()
    except OSError:
        pass
    return None


def read_int(path):
    try:
        with open(path) as f:
            s = f.read().strip()
        return None if s == 'max' else int(s)
    except (OSError, ValueError):
        return None


def children(pid):
    out = []
    for t in glob.glob('/proc/%d/task/*/children' % pid):
        try:
            with open(t) as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def descendants(pid):
    todo, seen = children(pid), []
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.append(p)
            todo += children(p)
    return seen


def truth_inuse(path):
    try:
        with open(path) as f:
            return sum(int(l.split()[5]) for l in f
                       if l[0].isdigit() and len(l.split()) >= 6)
    except (OSError, ValueError):
        return None


def sample(pid, now, heap):
    st = status(pid)
    if st is None:
        return None
    cg = cgroup_of(pid)
    return {'type': 'sample', 'time_ns': now, 'pid': pid,
            'heap_inuse_bytes': heap, 'heap_alloc_bytes': None,
            'allocator_resident_bytes': None,
            'allocator_free_bytes': None,
            'rss_bytes': st.get('VmRSS'), 'anon_bytes': st.get('RssAnon'),
            'file_bytes': st.get('RssFile'),
            'shmem_bytes': st.get('RssShmem'),
            'swap_bytes': st.get('VmSwap'),
            'cgroup_usage_bytes': read_int(cg + '/memory.current')
            if cg else None,
            'cgroup_limit_bytes': read_int(cg + '/memory.max')
            if cg else None}


def run(out, d, args):
    truth = None
    if args[:1] == ['--truth']:
        truth, args = args[1], args[2:]
    if args[:1] == ['--']:
        args = args[1:]
    lines = []
    p = subprocess.Popen(args, cwd=d)
    main = None
    while p.poll() is None:
        now = time.time_ns()
        kids = descendants(p.pid)
        for k in kids:
            if main is None:
                main = k
                lines.append({'type': 'event', 'time_ns': now, 'pid': k,
                              'event': 'exec'})
            heap = truth_inuse(os.path.join(d, truth)) if truth else None
            s = sample(k, now, heap if k == main else None)
            if s:
                lines.append(s)
        time.sleep(0.1)
    end = time.time_ns()
    profs = []
    for f in sorted(glob.glob(os.path.join(d, '*.pb.gz'))):
        doc = json.loads(subprocess.run(['palloc-dump', '-j', f],
                                        capture_output=True,
                                        check=True).stdout)
        profs.append((doc.get('time_ns') or end, os.path.basename(f)))
    profs.sort()
    # a sampled pid in the name (palloc-run -o '...%p...'), else the
    # first process
    pids = set(x['pid'] for x in lines)
    pid_of = {}
    for _, n in profs:
        nums = [int(x) for x in re.findall(r'\d+', n)]
        pid_of[n] = next((x for x in nums if x in pids), main or 0)
    last = {}
    for t, name in profs:
        if 'peak' not in name:
            last[pid_of[name]] = name
    for t, name in profs:
        kind = 'peak' if 'peak' in name else \
            'exit' if last.get(pid_of[name]) == name else 'interval'
        lines.append({'type': 'event', 'time_ns': t, 'pid': pid_of[name],
                      'event': 'profile', 'path': name, 'kind': kind})
    lines.append({'type': 'event', 'time_ns': end, 'pid': main or 0,
                  'event': 'exit', 'status': p.returncode})
    lines.sort(key=lambda x: x['time_ns'])
    with open(out, 'w') as f:
        for x in lines:
            f.write(json.dumps(x, separators=(',', ':')) + '\n')
    return p.returncode


def long(out, seconds, period_ms, profiles):
    rnd = random.Random(42)
    t0 = 1790000000 * 10**9
    n = seconds * 1000 // period_ms
    heap, free, other, fil = 50 << 20, 4 << 20, 20 << 20, 8 << 20
    with open(out, 'w') as f:
        for i in range(n):
            t = t0 + i * period_ms * 10**6
            heap += rnd.randint(-200000, 260000)
            free = max(0, free + rnd.randint(-50000, 50000))
            fil = max(0, fil + rnd.randint(-4096, 4096) * 4)
            anon = heap + free + other + rnd.randint(0, 64) * 4096
            s = {'type': 'sample', 'time_ns': t, 'pid': 4242,
                 'heap_inuse_bytes': heap,
                 'heap_alloc_bytes': heap * 3 + i * 1000,
                 'allocator_resident_bytes': heap + free + 123456,
                 'allocator_free_bytes': free,
                 'rss_bytes': anon + fil + 65536, 'anon_bytes': anon,
                 'file_bytes': fil, 'shmem_bytes': 65536,
                 'swap_bytes': 0,
                 'cgroup_usage_bytes': anon + fil + 65536 +
                 rnd.randint(0, 1 << 20),
                 'cgroup_limit_bytes': 1 << 30}
            f.write(json.dumps(s, separators=(',', ':')) + '\n')
            if i % (10000 // period_ms) == 0 and profiles:
                k = (i // (10000 // period_ms)) % len(profiles)
                f.write(json.dumps({'type': 'event', 'time_ns': t,
                                    'pid': 4242, 'event': 'profile',
                                    'path': profiles[k],
                                    'kind': 'interval'}) + '\n')
        f.write(json.dumps({'type': 'event', 'time_ns': t, 'pid': 4242,
                            'event': 'exit', 'status': 0}) + '\n')


if __name__ == '__main__':
    if sys.argv[1] == 'run':
        sys.exit(run(sys.argv[2], sys.argv[3], sys.argv[4:]))
    long(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:])
