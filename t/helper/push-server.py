#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""push-server.py: fake receivers for palloc-dump --push (t/4070).

  push-server.py DIR FUNC KIND...

One process serves each KIND (pyroscope, parca, otlp, or hang: a server
that reads a request and never answers, nor accepts another meanwhile) on
a port of its own on 127.0.0.1, written to DIR/KIND.port once it listens.
Each request is checked with the rules its server's source states, and
answered 200, or 400 with the reason. DIR/KIND.log gets one JSON line per
request: {"ok", "error", "path", "ctype", "headers", "received_ns",
"service", "labels", "from", "until", "series": [{"type_name" or
"type_names", "delta", "time_nanos", "duration_nanos", "types",
"totals", "func", "functions", "body"}]}, "func" the sums of each sample
type over the samples whose stack holds function FUNC. The pprof bodies,
decompressed, go to DIR/KIND.d/N.pb. SIGUSR1 closes the pyroscope
server's socket (connections refused: the server is down), the next
opens it again on the same port; DIR/pyroscope.state says "down" or "up"
once done.

Pyroscope (grafana/pyroscope pkg/ingester/pyroscope/ingest_handler.go,
api/model/labelset/labelset.go and validate.go, pkg/og/util/attime,
pkg/og/convert/pprof/profile.go): name=SERVICE{k=v,...} parsed as
labelset.Parse does, the service of [A-Za-z0-9_./-], label names of
[A-Za-z0-9_.] and not __name__; from and until by their digits (10:
seconds, 13: ms, 16: us, 19: ns); format=pprof; the body a pprof,
gzipped or not; the profile named from its sample types ("memory" for
alloc_ and inuse_) and stored __delta__="false".

Parca (parca-dev/parca proto/parca/profilestore/v1alpha1/profilestore.proto,
pkg/normalizer/normalizer.go and validate.go,
pkg/profilestore/profilecolumnstore.go): POST /profiles/writeraw, the
JSON form of WriteRawRequest (protojson: lowerCamelCase or the proto
names, bytes as base64), each series with a __name__ label, valid and
unique label names; each raw profile gzip-detected by its magic, then
validated (string table starting "", mapping, function and location ids
sequential, values per sample equal to the sample types, location ids in
range); one profile per sample type, zero values skipped, its type
NAME:TYPE:UNIT:PERIODTYPE:PERIODUNIT with ":delta" when the duration is
not 0.

OTLP: POST /v1development/profiles, Content-Type application/x-protobuf,
a non-empty body (its schema is checked by the encoder's own tests).
"""
import base64
import binascii
import gzip
import http.server
import json
import os
import re
import signal
import sys
import threading
import time
import urllib.parse


def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """(field, wire type, value) of one message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("truncated field")
            v = b[i:i + n]
            i += n
        elif wt == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif wt == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def ints(wt, v):
    """A repeated integer field, packed or not."""
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def msg(b, spec):
    """The fields of b named by spec {number: (name, repeated int?)}."""
    out = {name: [] if rep else 0 for name, rep in spec.values()}
    for f, wt, v in fields(b):
        if f not in spec:
            continue
        name, rep = spec[f]
        if rep:
            out[name].extend(ints(wt, v))
        else:
            out[name] = v
    return out


def pprof(b):
    """The parts of a profile.proto the rules need."""
    p = {"types": [], "samples": [], "mappings": [], "locations": [],
         "functions": [], "strings": [], "time_nanos": 0,
         "duration_nanos": 0, "period_type": None}
    for f, wt, v in fields(b):
        if f == 1:
            p["types"].append(msg(v, {1: ("type", False), 2: ("unit", False)}))
        elif f == 2:
            s = msg(v, {1: ("loc", True), 2: ("val", True)})
            s["val"] = [signed(x) for x in s["val"]]
            s["labels"] = [msg(l, {1: ("key", False), 2: ("str", False)})
                           for g, _, l in fields(v) if g == 3]
            p["samples"].append(s)
        elif f == 3:
            p["mappings"].append(msg(v, {1: ("id", False),
                                         5: ("filename", False),
                                         6: ("build_id", False)}))
        elif f == 4:
            loc = msg(v, {1: ("id", False), 2: ("mapping_id", False)})
            loc["lines"] = [msg(l, {1: ("function_id", False)})
                            for g, _, l in fields(v) if g == 4]
            p["locations"].append(loc)
        elif f == 5:
            p["functions"].append(msg(v, {1: ("id", False), 2: ("name", False),
                                          3: ("system_name", False),
                                          4: ("filename", False)}))
        elif f == 6:
            p["strings"].append(v.decode("utf-8"))
        elif f == 9:
            p["time_nanos"] = signed(v)
        elif f == 10:
            p["duration_nanos"] = signed(v)
        elif f == 11:
            p["period_type"] = msg(v, {1: ("type", False), 2: ("unit", False)})
    return p


def validate(p):
    """Parca's ValidatePprofProfile (pkg/normalizer/validate.go)."""
    st = p["strings"]
    n = len(st)
    if n and st[0] != "":
        raise ValueError("first item in string table is expected to be empty")
    for i, m in enumerate(p["mappings"]):
        if m["id"] != i + 1:
            raise ValueError("mapping id is not sequential")
        if m["filename"] >= n or m["build_id"] >= n:
            raise ValueError("mapping has invalid string index")
    for i, f in enumerate(p["functions"]):
        if f["id"] != i + 1:
            raise ValueError("function id is not sequential")
        if max(f["name"], f["system_name"], f["filename"]) >= n:
            raise ValueError("function has invalid string index")
    for i, l in enumerate(p["locations"]):
        if l["id"] != i + 1:
            raise ValueError("location id is not sequential")
        if l["mapping_id"] > len(p["mappings"]):
            raise ValueError("location has invalid mapping id")
        for ln in l["lines"]:
            if ln["function_id"] > len(p["functions"]):
                raise ValueError("location has invalid function id")
    if not p["types"] and p["samples"]:
        raise ValueError("missing sample type information")
    for t in p["types"]:
        if t["type"] >= n or t["unit"] >= n:
            raise ValueError("sample type has invalid index")
    for s in p["samples"]:
        if len(s["val"]) != len(p["types"]):
            raise ValueError("mismatch: sample values vs. types")
        for l in s["loc"]:
            if l == 0 or l > len(p["locations"]):
                raise ValueError("location id of stacktrace out of range")
        for l in s["labels"]:
            if l["key"] == 0 or l["key"] >= n:
                raise ValueError("sample label has no or an invalid key")


def summary(p, func):
    """Totals per sample type, and those of the samples through func."""
    st = p["strings"]
    types = [st[t["type"]] for t in p["types"]]
    fname = {f["id"]: st[f["name"]] for f in p["functions"]}
    names = {l["id"]: [fname.get(ln["function_id"], "")
                       for ln in l["lines"]] for l in p["locations"]}
    totals = {t: 0 for t in types}
    through = {t: 0 for t in types}
    seen = set()
    for s in p["samples"]:
        stack = [n for l in s["loc"] for n in names.get(l, [])]
        seen.update(stack)
        for t, v in zip(types, s["val"]):
            totals[t] += v
            if func in stack:
                through[t] += v
    return types, totals, through, sorted(x for x in seen if x)


def unpack(body):
    if body[:2] == b"\x1f\x8b":
        return gzip.decompress(body)
    return body


# ---- Pyroscope ----

SERVICE_RE = re.compile(r"^[A-Za-z0-9_./-]+$")
LABEL_RE = re.compile(r"^[A-Za-z0-9_.]+$")


def labelset_parse(name):
    """labelset.Parse: SERVICE{k=v,...}, trimmed; state machine."""
    labels, state, key, value = {}, "name", "", ""
    for r in name + "{":
        if state == "name":
            if r == "{":
                state = "tags"
                svc = value.strip()
                if not svc or not SERVICE_RE.match(svc):
                    raise ValueError("invalid service name: %r" % svc)
                labels["__name__"] = svc
            else:
                value += r
        elif state == "tags":
            if r == "}":
                state = "done"
            elif r == "=":
                state = "value"
                value = ""
            else:
                key += r
        elif state == "value":
            if r in ",}":
                state = "tags"
                k = key.strip()
                if k != "__name__" and (not k or not LABEL_RE.match(k)):
                    raise ValueError("invalid label name: %r" % k)
                labels[k] = value.strip()
                key = ""
            else:
                value += r
    return labels


def attime(s):
    """attime.Parse for digits: the time in ns by the digits' count."""
    s = s.strip().replace("_", "").replace(",", "").replace(" ", "")
    if not s.isdigit():
        raise ValueError("not a Unix time: %r" % s)
    v = int(s)
    scale = {13: 10**6, 16: 10**3, 19: 1}.get(len(s), 10**9)
    return v * scale


def metric_name(types):
    for t in types:
        if "alloc_" in t or "inuse_" in t or t in ("space", "objects"):
            return "memory"
    return types[-1] if types else ""


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, text):
        data = (text + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        srv = self.server
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        if srv.kind == "hang":
            with open(srv.log, "a") as f:
                f.write(json.dumps({"ok": False, "path": self.path,
                                    "error": "hung"}) + "\n")
            time.sleep(3600)
        url = urllib.parse.urlsplit(self.path)
        rec = {"ok": False, "path": url.path, "received_ns": time.time_ns(),
               "ctype": self.headers.get("Content-Type", ""),
               "headers": {k.lower(): v for k, v in self.headers.items()},
               "series": []}
        try:
            getattr(self, "check_" + srv.kind)(url, body, rec)
            rec["ok"] = True
        except (ValueError, KeyError, TypeError, binascii.Error,
                OSError, EOFError, UnicodeDecodeError) as e:
            rec["error"] = str(e)
        with open(srv.log, "a") as f:
            f.write(json.dumps(rec) + "\n")
        if rec["ok"]:
            self.reply(200, "ok")
        else:
            self.reply(400, rec["error"])

    def profile(self, raw, rec, extra):
        srv = self.server
        srv.count += 1
        path = os.path.join(srv.dir, "%d.pb" % srv.count)
        with open(path, "wb") as f:
            f.write(raw)
        p = pprof(raw)
        types, totals, through, names = summary(p, srv.func)
        s = {"time_nanos": p["time_nanos"],
             "duration_nanos": p["duration_nanos"], "types": types,
             "totals": totals, "func": through, "functions": names,
             "body": path}
        s.update(extra(p, types))
        rec["series"].append(s)
        return p

    def check_pyroscope(self, url, body, rec):
        if url.path != "/ingest":
            raise ValueError("no such path %s" % url.path)
        q = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        one = {k: v[0] for k, v in q.items()}
        labels = labelset_parse(one.get("name", ""))
        rec["service"] = labels.pop("__name__")
        rec["labels"] = labels
        rec["from"] = attime(one["from"]) if "from" in one else None
        rec["until"] = attime(one["until"]) if "until" in one else None
        rec["spyName"] = one.get("spyName", "unknown")
        if one.get("format") != "pprof":
            raise ValueError("format is not pprof: %r" % one.get("format"))
        self.profile(unpack(body), rec,
                     lambda p, types: {"type_name": metric_name(types),
                                       "delta": False})

    def check_parca(self, url, body, rec):
        if url.path != "/profiles/writeraw":
            raise ValueError("no such path %s" % url.path)
        req = json.loads(body)
        for s in req.get("series", []):
            ls, name = {}, ""
            for l in s.get("labels", {}).get("labels", []):
                if l.get("name") == "__name__":
                    name = l.get("value", "")
                    continue
                if not re.match(r"^[a-zA-Z_][a-zA-Z0-9_]*$", l.get("name", "")):
                    raise ValueError("invalid label name: %r" % l.get("name"))
                if l["name"] in ls:
                    raise ValueError("duplicate label name: %s" % l["name"])
                ls[l["name"]] = l.get("value", "")
            if not name:
                raise ValueError("missing __name__ label")
            rec["service"] = ls.get("service_name")
            rec["labels"] = ls
            for sample in s.get("samples", []):
                b64 = sample.get("rawProfile", sample.get("raw_profile", ""))
                b64 = b64.replace("-", "+").replace("_", "/")
                raw = base64.b64decode(b64 + "=" * (-len(b64) % 4),
                                       validate=True)
                p = pprof(unpack(raw))
                validate(p)

                def extra(p, types, name=name):
                    st = p["strings"]
                    pt = p["period_type"] or {"type": 0, "unit": 0}
                    per = [name, st[pt["type"]], st[pt["unit"]]]
                    delta = p["duration_nanos"] != 0
                    # a type whose values are all 0 makes no row
                    return {"type_names": [
                        ":".join([per[0], st[t["type"]], st[t["unit"]]] +
                                 per[1:]) + (":delta" if delta else "")
                        for k, t in enumerate(p["types"])
                        if any(s["val"][k] for s in p["samples"])],
                        "delta": delta}
                self.profile(unpack(raw), rec, extra)

    def check_otlp(self, url, body, rec):
        if url.path != "/v1development/profiles":
            raise ValueError("no such path %s" % url.path)
        if self.headers.get("Content-Type") != "application/x-protobuf":
            raise ValueError("Content-Type is not application/x-protobuf")
        if not body:
            raise ValueError("empty body")
        list(fields(body))  # a protobuf message at least
        rec["length"] = len(body)
        srv = self.server
        srv.count += 1
        rec["body"] = os.path.join(srv.dir, "%d.pb" % srv.count)
        with open(rec["body"], "wb") as f:
            f.write(body)


def serve(dir_, func, kind, port):
    srv = http.server.HTTPServer(("127.0.0.1", port), Handler)
    srv.kind, srv.func = kind, func
    srv.log = os.path.join(dir_, kind + ".log")
    srv.dir = os.path.join(dir_, kind + ".d")
    os.makedirs(srv.dir, exist_ok=True)
    srv.count = len([x for x in os.listdir(srv.dir) if x.endswith(".pb")])
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def publish(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text + "\n")
    os.rename(path + ".tmp", path)


def main():
    dir_, func = sys.argv[1:3]
    servers = {k: serve(dir_, func, k, 0) for k in sys.argv[3:]}
    toggles = []
    signal.signal(signal.SIGUSR1, lambda *a: toggles.append(1))
    for k, srv in servers.items():
        publish(os.path.join(dir_, k + ".port"), str(srv.server_address[1]))
    while True:
        signal.pause()
        while toggles:
            toggles.pop()
            srv = servers.get("pyroscope")
            state = os.path.join(dir_, "pyroscope.state")
            if srv is None:
                continue
            if srv.socket.fileno() >= 0:
                port = srv.server_address[1]
                srv.shutdown()
                srv.server_close()
                srv.port = port
                publish(state, "down")
            else:
                servers["pyroscope"] = serve(dir_, func, "pyroscope", srv.port)
                publish(state, "up")


if __name__ == "__main__":
    main()
