#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Independent decoder for ctprof-core snapshots (docs/FORMAT.md).

Written from the spec only, with python3-msgpack and python3-zstandard; it
shares no code with the C reader.

  decode_snapshot.py FILE...
      decode each snapshot and check it against the spec; exit 1 on the
      first violation.
  decode_snapshot.py --sample-writer BIN --workdir DIR [--golden FILE]
      run `BIN --write-sample DIR/sample.ctprof` (tests/test_writer_reader),
      check the file against the spec AND against the exact values the C
      test put in, then run `BIN --dump` on it and check that the JSON is
      the same tree with the documented string escaping. With --golden,
      check the kept v1 sample FILE the same way, except that it was
      written before plugins[].hint, read_failures.missing,
      read_failures.gates and fields[].derive existed and must still pass
      without them.
  decode_snapshot.py --record BIN --config FILE --plugin-dir DIR
                     --workdir DIR
      real snapshots: `BIN record` of two snapshots of this host with every
      plugin of FILE (the shipped config/collectors.yaml) loaded from
      --plugin-dir and the hostname recorded, each checked against the spec;
      they must hold the keys a capture of a live /proc writes
      (capture.start_boottime_ns, capture.self_tgids, a start_time role).
  decode_snapshot.py --exited-writer BIN --workdir DIR
      run `BIN --write-sample DIR/exited.ctprof` (tests/test_exited), check
      it against the spec, its exited table (section 7.4) against the
      values the C test put in, and `BIN --dump` of it as above.
  decode_snapshot.py --measure FILE
      re-encode FILE's tables row-major and print compressed bytes per
      thread both ways (the layout measurement quoted in docs/FORMAT.md).

A reader ignores the keys it does not know, in every map (FORMAT.md §2), and
unit, kind and rule names it does not know (§2 "Versioning"): so does this
one, and names each on a "note:" line. The keys it knows must come in the
order the spec gives them.
"""

import copy
import json
import os
import shutil
import subprocess
import sys

try:
    import msgpack
    import zstandard
except ImportError as e:  # pragma: no cover
    print("SKIP: %s (use /usr/bin/python3)" % e)
    sys.exit(77)

TOP_KEYS = ["format", "version", "tool", "capture", "fields", "plugins",
            "read_failures", "host", "cgroups", "processes", "threads",
            "exited"]
# Written only when some plugin took part in it (section 7.4).
OPTIONAL_TOP = ("exited",)
EXITED_KEYS = ["fields", "rows", "tid", "tgid", "comm", "exit_boottime_ns",
               "lost", "columns"]
SCOPES = {"host": 1, "cgroup": 2, "process": 3, "thread": 4, "exited": 5}
TYPES = {"u64": 1, "i64": 2, "bool": 3, "char": 4, "string": 5, "cpuset": 6}
UNITS = {"none": 0, "count": 1, "ns": 2, "us": 3, "ticks": 4, "bytes": 5,
         "centipct": 6}
KINDS = {"counter": 1, "peak": 2, "gauge": 3, "categorical": 4, "ordinal": 5,
         "cpuset": 6}
RULES = {"sum": 1, "max": 2, "min": 3, "mode": 4, "range": 5, "union": 6}
STATUSES = {"loaded": 1, "failed": 2, "disabled": 3}
U64_MAX = (1 << 64) - 1
# The C reader's default cap (FORMAT.md §1 "Size cap") and window limit.
MAX_DECOMPRESSED = 512 << 20
MAX_WINDOW = 8 << 20
# What a compatible writer may add that this reader does not know: ignored,
# and named on a note line.
NOTES = []
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


class SpecError(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise SpecError(msg)


class Pairs(list):
    """A decoded map, keeping key order (checked against the spec)."""

    def get(self, key, default=None):
        for k, v in self:
            if k == key:
                return v
        return default

    def keys(self):
        return [k for k, _ in self]

    def __contains__(self, key):
        return any(k == key for k, _ in self)

    def __getitem__(self, key):
        if isinstance(key, int):
            return list.__getitem__(self, key)
        for k, v in self:
            if k == key:
                return v
        raise KeyError(key)


def decode_file(path):
    data = open(path, "rb").read()
    need(data[:4] == b"\x28\xb5\x2f\xfd", "not a zstd frame")
    fp = zstandard.get_frame_parameters(data)
    need(fp.has_checksum, "the zstd frame has no content checksum")
    need(fp.window_size <= MAX_WINDOW, "zstd window over 8 MiB")
    d = zstandard.ZstdDecompressor(max_window_size=MAX_WINDOW).decompressobj()
    # Bounded: a few KB can decompress to gigabytes (FORMAT.md §1).
    raw = b""
    for i in range(0, len(data), 1 << 16):
        raw += d.decompress(data[i:i + (1 << 16)])
        need(len(raw) <= MAX_DECOMPRESSED,
             "decompressed data exceeds the cap of %d bytes" %
             MAX_DECOMPRESSED)
    need(d.eof, "zstd frame is truncated")
    need(not d.unused_data, "trailing data after the zstd frame")
    # str stays str (invalid UTF-8 as surrogates), bin would be bytes.
    obj = msgpack.unpackb(raw, raw=False, unicode_errors="surrogateescape",
                          object_pairs_hook=Pairs, strict_map_key=False,
                          use_list=True)
    return obj, raw


def is_uint(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= U64_MAX


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool) and \
        I64_MIN <= v <= I64_MAX


def is_str(v):
    return isinstance(v, str)


def check_keys(m, keys, where, optional=()):
    """m has every key of keys that is not optional, the known ones in the
    spec's order; a key the spec does not name is ignored (and noted)."""
    need(isinstance(m, Pairs), "%s is not a map" % where)
    got = m.keys()
    need(len(set(got)) == len(got), "%s repeats a key: %r" % (where, got))
    known = [k for k in got if k in keys]
    want = [k for k in keys if k in got or k not in optional]
    need(known == want, "%s keys %r, expected %r" % (where, known, want))
    for k in got:
        if k not in keys:
            note("%s.%s: unknown key, ignored" % (where, k))


def note(text):
    if text not in NOTES:
        NOTES.append(text)


def check_enum(v, names, where):
    """A unit, kind or rule: a str; one this reader does not know is
    taken as unknown (FORMAT.md §2 "Versioning")."""
    need(is_str(v), "%s is not a str" % where)
    if v not in names:
        note("%s %r: unknown name, read as unknown" % (where, v))


def check_value(ftype, v, where):
    """Check one cell against its field type; None is absent."""
    if v is None:
        return
    if ftype == "u64":
        need(is_uint(v), "%s: %r is not an unsigned integer" % (where, v))
    elif ftype == "i64":
        need(is_int(v), "%s: %r is not a signed 64-bit integer" % (where, v))
    elif ftype == "bool":
        need(isinstance(v, bool), "%s: %r is not a boolean" % (where, v))
    elif ftype == "char":
        need(is_str(v) and len(v.encode("utf-8", "surrogateescape")) == 1,
             "%s: %r is not a 1-byte string" % (where, v))
    elif ftype == "string":
        need(is_str(v), "%s: %r is not a string" % (where, v))
        need("\0" not in v, "%s: NUL in a string" % where)
    elif ftype == "cpuset":
        need(isinstance(v, list) and len(v) % 2 == 0,
             "%s: cpuset %r is not an even-length array" % (where, v))
        prev = -2
        for i in range(0, len(v), 2):
            lo, hi = v[i], v[i + 1]
            need(is_uint(lo) and is_uint(hi) and hi <= 0xffffffff,
                 "%s: cpuset %r has a non-CPU element" % (where, v))
            # Ascending, disjoint, and adjacent runs merged by writers.
            need(lo <= hi and lo > prev + 1,
                 "%s: cpuset %r is not canonical" % (where, v))
            prev = hi
    else:
        raise SpecError("%s: unknown type %r" % (where, ftype))


# Keys added to version 1 before its release; a file of the first v1
# writer (the kept golden sample) lacks them, and a reader must accept that.
LATE_V1_KEYS = ("hint", "missing", "denied", "gates", "derive")


def check_derive(f, earlier, w):
    """A derived field's formula (FORMAT.md section 4): nil, or 1..8
    {field, coef, max_set} maps whose inputs are earlier numeric fields of
    the same scope reduced to one value."""
    d = f.get("derive")
    if d is None:
        return
    w += ".derive"
    need(isinstance(d, list) and 1 <= len(d) <= 8, w + ": 1 to 8 terms")
    need(f["type"] in ("u64", "i64"), w + ": a derived field is u64/i64")
    for i, t in enumerate(d):
        tw = "%s[%d]" % (w, i)
        check_keys(t, ["field", "coef", "max_set"], tw)
        need(is_str(t["field"]) and t["field"] in earlier,
             tw + ".field %r is not an earlier field" % t["field"])
        src = earlier[t["field"]]
        need(src["scope"] == f["scope"] and src["type"] in ("u64", "i64"),
             tw + ".field: not a numeric field of the same scope")
        need(src["rule"] in ("sum", "max", "min", "mode"),
             tw + ".field: rule %r has no single value" % src["rule"])
        need(is_int(t["coef"]) and t["coef"] != 0 and
             -(1 << 31) <= t["coef"] < (1 << 31), tw + ".coef")
        need(is_uint(t["max_set"]) and t["max_set"] <= 255, tw + ".max_set")


def check_field(f, w, fields, late):
    """One entry of a fields list (section 4), added to fields."""
    check_keys(f, ["name", "plugin", "scope", "type", "unit", "kind",
                   "rule", "help", "derive", "section", "dims", "role"], w,
               optional=tuple(late) + ("section", "dims", "role"))
    need(is_str(f["name"]) and f["name"], w + ".name")
    need(f["name"] not in fields, w + ": duplicate name")
    need(f["plugin"] is None or is_str(f["plugin"]), w + ".plugin")
    need(f["scope"] in SCOPES, w + ".scope %r" % f["scope"])
    need(f["type"] in TYPES, w + ".type %r" % f["type"])
    check_enum(f["unit"], UNITS, w + ".unit")
    check_enum(f["kind"], KINDS, w + ".kind")
    check_enum(f["rule"], RULES, w + ".rule")
    need(is_str(f["help"]), w + ".help")
    for k in ("section", "dims", "role"):
        if k in f:
            need(is_str(f[k]) and f[k], "%s.%s" % (w, k))
    check_role(f, fields, w)
    check_derive(f, fields, w)
    fields[f["name"]] = f


def check_role(f, earlier, w):
    """A field's role (section 4): "start_time" is a thread or process u64
    ordinal in ns, us or ticks, one per scope; other roles are ignored."""
    role = f.get("role")
    if role is None:
        return
    if role != "start_time":
        note("%s.role %r: unknown role, ignored" % (w, role))
        return
    need(f["scope"] in ("thread", "process") and f["type"] == "u64" and
         f["kind"] == "ordinal" and f["unit"] in ("ns", "us", "ticks"),
         w + ": a start_time is a thread or process u64 ordinal in ns, us "
         "or ticks")
    need(not any(e.get("role") == "start_time" and e["scope"] == f["scope"]
                 for e in earlier.values()),
         w + ": a second start_time of scope " + f["scope"])


def check_columns(t, tname, scope, fields):
    """A table's columns map: fields of its scope, in fields order, each
    of `rows` values of the field's type, none all nil or derived."""
    rows = t["rows"]
    order = [n for n in fields]
    cols = t["columns"]
    need(isinstance(cols, Pairs), tname + ".columns")
    names = cols.keys()
    need(names == sorted(names, key=order.index),
         tname + ".columns not in fields order")
    for name, col in cols:
        need(name in fields, "%s.columns.%s not in fields" % (tname, name))
        f = fields[name]
        need(f.get("derive") is None,
             "%s.columns.%s: a derived field has no column" % (tname, name))
        need(f["scope"] == scope,
             "%s.columns.%s has scope %s" % (tname, name, f["scope"]))
        need(isinstance(col, list) and len(col) == rows,
             "%s.columns.%s length != rows" % (tname, name))
        # An all-absent column is omitted, never written.
        need(any(v is not None for v in col),
             "%s.columns.%s is all nil (should be omitted)" % (tname, name))
        for r, v in enumerate(col):
            check_value(f["type"], v, "%s.columns.%s[%d]" % (tname, name, r))


def check_exited(ex, fields, plugin_names):
    """The exited table (section 7.4): identity columns, losses by plugin,
    columns of exited fields."""
    rows = ex["rows"]
    need(is_uint(rows), "exited.rows")
    for k in ("tid", "tgid", "comm", "exit_boottime_ns"):
        need(isinstance(ex[k], list) and len(ex[k]) == rows,
             "exited.%s length != rows" % k)
    for v in ex["tid"]:
        need(is_uint(v), "exited.tid entry %r" % (v,))
    for k in ("tgid", "exit_boottime_ns"):
        for v in ex[k]:
            need(v is None or is_uint(v), "exited.%s entry %r" % (k, v))
    for v in ex["comm"]:
        need(v is None or is_str(v), "exited.comm entry %r" % (v,))
    lost = ex["lost"]
    need(isinstance(lost, Pairs), "exited.lost is not a map")
    need(len(set(lost.keys())) == len(lost), "exited.lost repeats a plugin")
    for k, v in lost:
        need(k in plugin_names and is_uint(v), "exited.lost entry %r" % k)
    check_columns(ex, "exited", "exited", fields)


def check_spec(snap, legacy=False):
    """Everything docs/FORMAT.md promises about a file our writer made.

    legacy: the file may predate LATE_V1_KEYS (each is then simply absent);
    a file of the current writer must have every one of them."""
    late = LATE_V1_KEYS if legacy else ()
    check_keys(snap, TOP_KEYS, "top level", optional=OPTIONAL_TOP)
    need(snap["format"] == "ctprof-core-snapshot", "wrong format")
    need(snap["version"] == 1 and is_uint(snap["version"]), "wrong version")
    check_keys(snap["tool"], ["name", "version"], "tool")
    need(snap["tool"]["name"] == "ctprof-core", "tool.name")

    cap = snap["capture"]
    check_keys(cap, ["start_realtime_ns", "end_realtime_ns", "duration_ns",
                     "workers", "roots", "config_path", "kernel_release",
                     "ptrace_capable", "hostname", "start_boottime_ns",
                     "cgroups_read_boottime_ns", "self_tgids",
                     "walk_source", "walk_unlisted", "walk_fallback",
                     "walk_fallbacks"],
               "capture",
               optional=("ptrace_capable", "hostname", "start_boottime_ns",
                         "cgroups_read_boottime_ns", "self_tgids",
                         "walk_source", "walk_unlisted", "walk_fallback",
                         "walk_fallbacks"))
    for k in ("start_realtime_ns", "end_realtime_ns", "duration_ns",
              "workers"):
        need(is_uint(cap[k]), "capture.%s" % k)
    check_keys(cap["roots"], ["proc", "sys", "cgroup"], "capture.roots")
    for k in ("proc", "sys", "cgroup"):
        need(cap["roots"][k] is None or is_str(cap["roots"][k]),
             "capture.roots.%s" % k)
    for k in ("config_path", "kernel_release"):
        need(cap[k] is None or is_str(cap[k]), "capture.%s" % k)
    if "hostname" in cap:
        need(is_str(cap["hostname"]), "capture.hostname")
    if "ptrace_capable" in cap:
        need(isinstance(cap["ptrace_capable"], bool), "capture.ptrace_capable")
    if "start_boottime_ns" in cap:
        need(is_uint(cap["start_boottime_ns"]), "capture.start_boottime_ns")
    if "cgroups_read_boottime_ns" in cap:
        cr = cap["cgroups_read_boottime_ns"]
        need(is_uint(cr) and cr >= cap.get("start_boottime_ns", 0),
             "capture.cgroups_read_boottime_ns %r: not before the start"
             % (cr,))
    for k in ("walk_source", "walk_fallback"):
        if k in cap:
            need(is_str(cap[k]) and cap[k], "capture.%s" % k)
    need(("walk_fallback" in cap) == ("walk_fallbacks" in cap) and
         not ("walk_source" in cap and "walk_fallback" in cap),
         "capture: walk_fallback and walk_fallbacks come together, never "
         "with walk_source")
    need(("walk_source" in cap) == ("walk_unlisted" in cap) and
         is_uint(cap.get("walk_unlisted", 0)),
         "capture.walk_unlisted comes with walk_source, an uint")
    if "walk_fallbacks" in cap:
        need(is_uint(cap["walk_fallbacks"]) and cap["walk_fallbacks"] >= 1,
             "capture.walk_fallbacks")
    if "self_tgids" in cap:
        st = cap["self_tgids"]
        need(isinstance(st, list) and 1 <= len(st) <= 4 and
             all(is_uint(v) for v in st),
             "capture.self_tgids %r: 1 to 4 process ids" % (st,))

    fields = {}
    need(isinstance(snap["fields"], list), "fields is not an array")
    for i, f in enumerate(snap["fields"]):
        check_field(f, "fields[%d]" % i, fields, late)
        need(f["scope"] != "exited", "fields[%d]: an exited field belongs "
             "in exited.fields" % i)
    if "exited" in snap:
        ex = snap["exited"]
        check_keys(ex, EXITED_KEYS, "exited")
        need(isinstance(ex["fields"], list), "exited.fields")
        for i, f in enumerate(ex["fields"]):
            check_field(f, "exited.fields[%d]" % i, fields, late)
            need(f["scope"] == "exited", "exited.fields[%d]: scope %r" %
                 (i, f["scope"]))

    plugin_names = set()
    for i, p in enumerate(snap["plugins"]):
        w = "plugins[%d]" % i
        check_keys(p, ["name", "status", "reason", "hint", "version", "path",
                       "required", "time_ns", "calls", "errors", "vanished",
                       "summary", "resource"], w,
                   optional=tuple(late) + ("resource",))
        need(is_str(p["name"]), w + ".name")
        plugin_names.add(p["name"])
        need(p["status"] in STATUSES, w + ".status")
        for k in ("reason", "hint", "version", "path"):
            if k in p:
                need(p[k] is None or is_str(p[k]), "%s.%s" % (w, k))
        if p.get("hint") is not None:
            need("\n" not in p["hint"], w + ".hint is not one line")
        need(isinstance(p["required"], bool), w + ".required")
        for k in ("time_ns", "calls", "errors", "vanished"):
            need(is_uint(p[k]), "%s.%s" % (w, k))
        need(isinstance(p["summary"], Pairs), w + ".summary")
        for k, v in p["summary"]:
            need(is_str(k) and is_uint(v), w + ".summary entry")
        if "resource" in p:
            need(is_uint(p["resource"]), w + ".resource")
    for f in fields.values():
        need(f["plugin"] is None or f["plugin"] in plugin_names,
             "field %s names an unknown plugin" % f["name"])

    rf = snap["read_failures"]
    # Section 6 "Resource errors": written together, only by a capture
    # short of resources.
    resource_keys = ("tids_unread_resource", "tgids_unread_resource",
                     "cgroups_unread_resource", "resource", "resource_error",
                     "nofile_limit")
    check_keys(rf, ["tids_walked", "tids_recorded", "tids_vanished",
                    "tgids_walked", "tgids_vanished", "files", "missing",
                    "denied", "dominant_file", "gates"] + list(resource_keys),
               "read_failures", optional=tuple(late) + resource_keys)
    got = [k for k in resource_keys if k in rf]
    need(not got or len(got) == len(resource_keys),
         "read_failures has %r of the resource keys, not all" % got)
    if got:
        for k in ("tids_unread_resource", "tgids_unread_resource",
                  "cgroups_unread_resource", "nofile_limit"):
            need(is_uint(rf[k]), "read_failures." + k)
        need(rf["resource_error"] is None or rf["resource_error"] in
             ("EMFILE", "ENFILE", "ENOMEM", "ENOBUFS"),
             "read_failures.resource_error %r" % (rf["resource_error"],))
        need(rf["tids_walked"] == rf["tids_recorded"] + rf["tids_vanished"]
             + rf["tids_unread_resource"],
             "read_failures: threads walked are not recorded + vanished + "
             "unread")
    need(all(("resource" in p) == bool(got) for p in snap["plugins"]),
         "plugins[].resource written without read_failures' resource keys, "
         "or the other way round")
    for k in ("tids_walked", "tids_recorded", "tids_vanished",
              "tgids_walked", "tgids_vanished"):
        need(is_uint(rf[k]), "read_failures." + k)
    need(isinstance(rf["files"], Pairs), "read_failures.files is not a map")
    best, most = None, 0
    failures = {}
    for k, v in rf["files"]:
        need(is_str(k) and is_uint(v), "read_failures.files entry")
        need(k not in failures, "read_failures.files lists %r twice" % k)
        failures[k] = v
        if v > most:
            best, most = k, v
    need(rf["dominant_file"] == best,
         "dominant_file %r, the most failures are in %r" %
         (rf["dominant_file"], best))
    part = dict((k, 0) for k in failures)
    for key in ("missing", "denied", "resource"):
        if key not in rf:
            continue
        # The ENOENT (missing), EACCES/EPERM (denied) and resource parts
        # of each file's failures: the same files in the same order,
        # together never more than the failures.
        m = rf[key]
        need(isinstance(m, Pairs), "read_failures.%s is not a map" % key)
        need(m.keys() == rf["files"].keys(),
             "read_failures.%s keys %r, files keys %r" %
             (key, m.keys(), rf["files"].keys()))
        for k, v in m:
            need(is_uint(v), "read_failures.%s.%s = %r" % (key, k, v))
            part[k] += v
            need(part[k] <= failures[k], "read_failures.%s.%s = %d: more "
                 "than its %d failures" % (key, k, v, failures[k]))
    if "gates" in rf:
        # Gated files only, in files order, each once, to a kconfig name.
        g = rf["gates"]
        need(isinstance(g, Pairs), "read_failures.gates is not a map")
        order = rf["files"].keys()
        for k, v in g:
            need(k in failures, "read_failures.gates: %r not in files" % k)
            need(is_str(v) and v, "read_failures.gates.%s = %r" % (k, v))
        need(g.keys() == [k for k in order if k in g.keys()],
             "read_failures.gates keys %r not in files order, or repeated"
             % g.keys())

    host = snap["host"]
    need(isinstance(host, Pairs), "host is not a map")
    host_fields = [n for n, f in fields.items() if f["scope"] == "host"]
    need(host.keys() == host_fields, "host keys %r, expected every host "
         "field in fields order %r" % (host.keys(), host_fields))
    for k, v in host:
        check_value(fields[k]["type"], v, "host." + k)
        need(v is None or fields[k].get("derive") is None,
             "host.%s: a derived field has no stored value" % k)

    idents = {"cgroups": ["path"], "processes": ["tgid", "comm", "nthreads"],
              "threads": ["tid", "tgid", "comm", "cgroup"]}
    scope_of = {"cgroups": "cgroup", "processes": "process",
                "threads": "thread"}
    for tname in ("cgroups", "processes", "threads"):
        t = snap[tname]
        check_keys(t, ["rows"] + idents[tname] + ["columns"], tname)
        rows = t["rows"]
        need(is_uint(rows), tname + ".rows")
        for k in idents[tname]:
            need(isinstance(t[k], list) and len(t[k]) == rows,
                 "%s.%s length %d != rows %d" % (tname, k, len(t[k]), rows))
        check_columns(t, tname, scope_of[tname], fields)
    if "exited" in snap:
        check_exited(snap["exited"], fields, plugin_names)

    cg, pr, th = snap["cgroups"], snap["processes"], snap["threads"]
    for p in cg["path"]:
        need(is_str(p), "cgroups.path entry")
    for k in ("tgid", "nthreads"):
        for v in pr[k]:
            need(is_uint(v), "processes.%s entry" % k)
    need(pr["tgid"] == sorted(pr["tgid"]), "processes not in tgid order")
    for v in pr["comm"] + th["comm"]:
        need(v is None or is_str(v), "comm entry %r" % (v,))
    for k in ("tid", "tgid"):
        for v in th[k]:
            need(is_uint(v), "threads.%s entry" % k)
    keys = list(zip(th["tgid"], th["tid"]))
    need(keys == sorted(keys), "threads not in (tgid, tid) order")
    for v in th["cgroup"]:
        need(v is None or (is_uint(v) and v < cg["rows"]),
             "threads.cgroup %r is not a cgroups row" % (v,))
    need(sum(pr["nthreads"]) == th["rows"], "nthreads do not sum to rows")
    per = {}
    for tg in th["tgid"]:
        per[tg] = per.get(tg, 0) + 1
    for tg, n in zip(pr["tgid"], pr["nthreads"]):
        need(per.get(tg, 0) == n, "nthreads of %d is %d, %d rows" %
             (tg, n, per.get(tg, 0)))


# ---- The sample written by test_writer_reader --write-sample ------------------

def b(s):
    """Bytes as the decoder hands them back (surrogate-escaped str)."""
    return s.decode("utf-8", "surrogateescape")


SAMPLE_FIELDS = [
    ("alpha.host_mem", "host", "u64", "bytes", "gauge", "max", "Total memory"),
    ("alpha.host_name", "host", "string", "none", "categorical", "mode", ""),
    ("alpha.host_cpus", "host", "cpuset", "none", "cpuset", "union",
     "Online CPUs"),
    ("alpha.host_skew", "host", "i64", "ns", "gauge", "min", "Never measured"),
    ("alpha.cg_usage", "cgroup", "u64", "us", "counter", "sum",
     "cpu.stat usage_usec"),
    ("alpha.rss", "process", "u64", "bytes", "peak", "max", "Peak RSS"),
    ("alpha.nice", "process", "i64", "none", "ordinal", "range", "Nice"),
    ("alpha.utime", "thread", "u64", "ticks", "counter", "sum", "User time"),
    ("alpha.delta", "thread", "i64", "ns", "gauge", "min", "Signed gauge"),
    ("alpha.running", "thread", "bool", "none", "categorical", "mode",
     "Is running"),
    ("alpha.state", "thread", "char", "none", "ordinal", "mode", "Task state"),
    ("alpha.wchan", "thread", "string", "none", "categorical", "mode",
     "Wait channel"),
    ("alpha.cpus", "thread", "cpuset", "none", "cpuset", "union",
     "Allowed CPUs"),
    ("alpha.never", "thread", "u64", "count", "counter", "sum", "Never set"),
    ("alpha.load", "thread", "u64", "centipct", "gauge", "max", "Load"),
]

ODD = b(b'we"ird\\\x01\xff')
EMOJI = b(b"\xc3\xa9moji\xe2\x9c\x93")
SAMPLE_THREADS = {
    "tid": [50, 100, 101, 102, 200, 201, 300],
    "tgid": [50, 100, 100, 100, 200, 200, 300],
    "comm": ["init", ODD, "worker/1", "worker/2", EMOJI, "tab\there", "p300"],
    "cgroup": [0, 1, None, 1, 2, 2, 0],
    "alpha.utime": [0, None, 12345678901234, 7, U64_MAX, 1, 2],
    "alpha.delta": [-5, 0, I64_MIN, I64_MAX, -1, 1, None],
    "alpha.running": [True, False, None, True, False, True, None],
    "alpha.state": ["S", "R", "D", None, "Z", "S", None],
    "alpha.wchan": ["do_wait", None, b(b'bad\xc3\x28utf8"q\n'), "", "ep_poll",
                    "futex_wait_queue", None],
    "alpha.cpus": [[0, 3], [0, 0, 2, 2, 4, 4], [], None,
                   [1, 1, 63, 64, 127, 128], [0, 18], None],
    "alpha.load": [100, None, 0, 10000, 5, 1, None],
}


SAMPLE_HINT = "run as root or grant CAP_NET_ADMIN (3 of 42 probes: EPERM)"


def check_sample(snap, legacy=False):
    """legacy: the kept golden sample, written before LATE_V1_KEYS."""
    need(snap["tool"]["version"] == "9.9.9-test", "tool.version")
    cap = snap["capture"]
    expect = [("start_realtime_ns", 1700000000123456789),
              ("end_realtime_ns", 1700000002623456789),
              ("duration_ns", 2500000000), ("workers", 3),
              ("config_path", "/etc/ctprof/collectors.yaml"),
              ("kernel_release", "6.1.0-test"), ("hostname", "sample-host")]
    for k, v in expect:
        need(cap[k] == v, "capture.%s = %r, expected %r" % (k, cap[k], v))
    need(list(cap["roots"]) == [("proc", "/proc"), ("sys", "/sys"),
                                ("cgroup", "/sys/fs/cgroup")], "roots")

    got = [(f["name"], f["scope"], f["type"], f["unit"], f["kind"],
            f["rule"], f["help"]) for f in snap["fields"]]
    need(got == SAMPLE_FIELDS, "fields differ:\n%r" % got)
    if legacy:
        need(all("derive" not in f for f in snap["fields"]),
             "derive in the golden sample")
    else:
        need(all("derive" in f and f["derive"] is None
                 for f in snap["fields"]), "derive of an ordinary field")
    need(all(f["plugin"] == "alpha" for f in snap["fields"]), "plugin")

    p = snap["plugins"]
    need([x["name"] for x in p] == ["alpha", "beta", "gamma"], "plugin names")
    need([x["status"] for x in p] == ["loaded", "failed", "disabled"],
         "plugin status")
    a = p[0]
    need((a["version"], a["path"], a["reason"], a["required"], a["time_ns"],
          a["calls"], a["errors"], a["vanished"]) ==
         ("1.2.3", "/usr/lib/ctprof/plugins/alpha.so", None, True, 123456789,
          42, 1, 2), "plugin alpha: %r" % a)
    need(list(a["summary"]) == [("probes", 7), ("skipped", 0)], "summary")
    need((p[1]["reason"], p[1]["version"], p[1]["path"]) ==
         ("dlopen: cannot open shared object file", None, None), "beta")
    need(p[2]["reason"] == "disabled in config", "gamma")
    if legacy:
        need(all("hint" not in x for x in p), "hint in the golden sample")
    else:
        need([x["hint"] for x in p] == [SAMPLE_HINT, None, None],
             "plugin hints: %r" % [x["hint"] for x in p])

    rf = snap["read_failures"]
    need([rf[k] for k in ("tids_walked", "tids_recorded", "tids_vanished",
                          "tgids_walked", "tgids_vanished")] ==
         [9, 7, 2, 5, 1], "read_failures")
    need(list(rf["files"]) == [("stat", 0), ("status", 3), ("io", 5)],
         "read_failures.files")
    need(rf["dominant_file"] == "io", "dominant_file")
    if legacy:
        need("missing" not in rf and "gates" not in rf and
             "denied" not in rf,
             "missing or gates in the golden sample")
    else:
        need(list(rf["missing"]) == [("stat", 0), ("status", 1), ("io", 5)],
             "read_failures.missing: %r" % list(rf["missing"]))
        need(list(rf["denied"]) == [("stat", 0), ("status", 2), ("io", 0)],
             "read_failures.denied: %r" % list(rf["denied"]))
        need(list(rf["gates"]) == [("io", "CONFIG_TASK_IO_ACCOUNTING")],
             "read_failures.gates: %r" % list(rf["gates"]))

    need(list(snap["host"]) == [
        ("alpha.host_mem", 8589934592), ("alpha.host_name", "box-1"),
        ("alpha.host_cpus", [0, 3, 8, 11, 64, 64, 66, 70]),
        ("alpha.host_skew", None)], "host: %r" % list(snap["host"]))

    cg = snap["cgroups"]
    need(cg["rows"] == 3 and cg["path"] == ["/", '/system.slice/odd"n\\x',
                                            "/user.slice"], "cgroups")
    need(list(cg["columns"]) == [("alpha.cg_usage", [1000, None, 0])],
         "cgroup columns")

    pr = snap["processes"]
    need(pr["rows"] == 4 and pr["tgid"] == [50, 100, 200, 300] and
         pr["comm"] == ["init", ODD, EMOJI, "p300"] and
         pr["nthreads"] == [1, 3, 2, 1], "processes identity")
    need(list(pr["columns"]) == [("alpha.rss", [1048576, None, 0, 4096]),
                                 ("alpha.nice", [0, -20, 19, None])],
         "process columns: %r" % list(pr["columns"]))

    th = snap["threads"]
    need(th["rows"] == 7, "threads.rows")
    for k in ("tid", "tgid", "comm", "cgroup"):
        need(th[k] == SAMPLE_THREADS[k], "threads.%s = %r" % (k, th[k]))
    # alpha.never is absent everywhere: omitted from columns.
    want_cols = [n for n, *_ in SAMPLE_FIELDS
                 if n in SAMPLE_THREADS and n != "alpha.never"]
    need(th["columns"].keys() == want_cols,
         "thread columns %r" % th["columns"].keys())
    for name, col in th["columns"]:
        need(col == SAMPLE_THREADS[name],
             "threads.columns.%s = %r, expected %r" %
             (name, col, SAMPLE_THREADS[name]))
    # A measured 0 is 0, not nil; an absent cell is nil, not 0.
    utime = th["columns"]["alpha.utime"]
    need(utime[0] == 0 and utime[0] is not None and utime[1] is None,
         "absent vs zero")


# ---- The exited table written by test_exited --write-sample -----------------

def check_exited_sample(snap):
    """The values tests/test_exited.c put in (its build())."""
    need([f["name"] for f in snap["fields"]] == ["alpha.utime"],
         "top-level fields: %r" % [f["name"] for f in snap["fields"]])
    ex = snap["exited"]
    need([(f["name"], f["scope"], f["type"]) for f in ex["fields"]] == [
        ("alpha.exited.cpu", "exited", "u64"),
        ("alpha.exited.code", "exited", "i64"),
        ("alpha.exited.state", "exited", "char"),
        ("alpha.exited.never", "exited", "u64"),
        ("alpha.exited.cpu2", "exited", "u64")], "exited.fields")
    need(ex["fields"][4]["derive"] == [Pairs([
        ("field", "alpha.exited.cpu"), ("coef", 2), ("max_set", 0)])],
        "exited derive: %r" % ex["fields"][4]["derive"])
    need(ex["rows"] == 3 and ex["tid"] == [1001, 1002, 1003] and
         ex["tgid"] == [1000, None, 1000] and
         ex["comm"] == ["cc1", None, "as"] and
         ex["exit_boottime_ns"] == [5000000001, None, 6000000000],
         "exited identity: %r" % list(ex))
    need(list(ex["lost"]) == [("alpha", 7)], "exited.lost")
    need(list(ex["columns"]) == [
        ("alpha.exited.cpu", [20000, None, 0]),
        ("alpha.exited.code", [0, -9, None]),
        ("alpha.exited.state", ["Z", None, "X"])],
        "exited.columns: %r" % list(ex["columns"]))


# ---- What a later compatible writer may add ---------------------------------

def check_later_writer(snap):
    """The sample as a later writer of version 1 could write it: a key this
    reader does not know in every map whose keys the spec names, and a unit,
    kind and rule of new names (FORMAT.md §2 "Versioning"). It must pass,
    each addition named on a note line, nothing else."""
    def add(m, where):
        m.append(("zz_later", [1, {"x": None}]))
        return where + ".zz_later: unknown key, ignored"

    later = copy.deepcopy(snap)
    want = [add(later, "top level")]
    for k in ("tool", "capture", "read_failures", "cgroups", "processes",
              "threads"):
        want.append(add(later[k], k))
    want.append(add(later["capture"]["roots"], "capture.roots"))
    for i, f in enumerate(later["fields"]):
        want.append(add(f, "fields[%d]" % i))
    for i, p in enumerate(later["plugins"]):
        want.append(add(p, "plugins[%d]" % i))
    f = later["fields"][0]
    for k, new in (("unit", "furlongs"), ("kind", "tidal"), ("rule", "vote")):
        f[[n for n, _ in f].index(k)] = (k, new)
        want.append("fields[0].%s %r: unknown name, read as unknown" %
                    (k, new))
    del NOTES[:]
    check_spec(later)
    need(sorted(NOTES) == sorted(want),
         "notes on a later writer's sample: %r" %
         sorted(set(NOTES) ^ set(want)))
    del NOTES[:]


# ---- dump's JSON against our own decoding ---------------------------------------

def to_json_model(o):
    """The tree `dump` must print: invalid UTF-8 bytes become U+00XX."""
    if isinstance(o, Pairs):
        return {to_json_model(k): to_json_model(v) for k, v in o}
    if isinstance(o, list):
        return [to_json_model(v) for v in o]
    if isinstance(o, str):
        return "".join(chr(ord(c) - 0xdc00) if 0xdc80 <= ord(c) <= 0xdcff
                       else c for c in o)
    return o


def check_dump(binary, path, escapes=True):
    out = subprocess.run([binary, "--dump", path], check=True,
                         stdout=subprocess.PIPE).stdout
    need(out.endswith(b"\n"), "dump output does not end with a newline")
    text = out.decode("utf-8")  # must be valid UTF-8, whatever the input
    snap, _ = decode_file(path)
    # Key order is kept by dump.
    top = json.loads(text, object_pairs_hook=list)
    need([k for k, _ in top] == snap.keys(), "dump key order")
    dumped = json.loads(text)
    want = to_json_model(snap)
    for k in snap.keys():
        need(dumped[k] == want[k], "dump JSON differs from decode at %s:\n"
             "%r\n%r" % (k, dumped[k], want[k]))
    need(dumped == want, "dump JSON differs from decode")
    if escapes:
        need("\\u00ff" in text and "\\u0001" in text and
             "\\u00c3(" in text, "dump escapes")


# ---- Layout measurement ------------------------------------------------------------

def measure(path, level=3):
    """Compressed size of FILE as written (columnar) and of the same data
    with the process and thread tables re-encoded row-major."""
    snap, raw = decode_file(path)
    cctx = zstandard.ZstdCompressor(level=level)

    def unsurrogate(o):
        if isinstance(o, str):
            return o.encode("utf-8", "surrogateescape")
        if isinstance(o, Pairs):
            return {unsurrogate(k): unsurrogate(v) for k, v in o}
        if isinstance(o, list):
            return [unsurrogate(v) for v in o]
        return o

    def row_major(t, as_maps):
        idents = [k for k in t.keys() if k not in ("rows", "columns")]
        cols = list(t["columns"])
        rows = []
        for r in range(t["rows"]):
            if as_maps:
                # Only present fields, keyed by name.
                m = Pairs((k, t[k][r]) for k in idents)
                m.extend((name, c[r]) for name, c in cols
                         if c[r] is not None)
                rows.append(m)
            else:
                # A fixed-position array, nil when absent.
                rows.append([t[k][r] for k in idents] +
                            [c[r] for _, c in cols])
        out = Pairs([("rows", t["rows"])])
        if not as_maps:
            out.append(("names", idents + [name for name, _ in cols]))
        out.append(("data", rows))
        return out

    def size(as_maps):
        doc = Pairs((k, row_major(v, as_maps)
                     if k in ("processes", "threads") else v)
                    for k, v in snap)
        packed = msgpack.packb(unsurrogate(doc), use_bin_type=True)
        return len(packed), len(cctx.compress(packed))

    n = snap["threads"]["rows"]
    nf = sum(1 for f in snap["fields"] if f["scope"] == "thread")
    print("%d threads, %d processes, %d thread fields, zstd level %d" %
          (n, snap["processes"]["rows"], nf, level))
    print("%-18s %11s %11s %13s" % ("layout", "raw bytes", "compressed",
                                   "bytes/thread"))
    # The columnar size is the C writer's own file, recompressed here at
    # the same level so all three use one zstd.
    col_z = len(cctx.compress(raw))
    for name, (r, z) in (("columnar (v1)", (len(raw), col_z)),
                         ("row-major arrays", size(False)),
                         ("row-major maps", size(True))):
        print("%-18s %11d %11d %13.2f" % (name, r, z, z / max(n, 1)))
    return 0


def record(binary, config, plugin_dir, workdir):
    """Two snapshots of this host by the real recorder, checked."""
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    cfg = os.path.join(workdir, "collectors.yaml")
    text = open(config).read()
    need("record_hostname: false" in text, config + ": no record_hostname")
    with open(cfg, "w") as f:
        f.write("plugin_dirs: [%s]\n" % json.dumps(plugin_dir))
        f.write(text.replace("record_hostname: false",
                             "record_hostname: true"))
    rec = os.path.join(workdir, "rec")
    subprocess.run([binary, "record", "--config", cfg, "-o", rec,
                    "--count", "2", "--interval", "1s"], check=True)
    files = sorted(os.listdir(rec))
    need(len(files) == 2, "record wrote %r" % files)
    for name in files:
        path = os.path.join(rec, name)
        snap, _ = decode_file(path)
        check_spec(snap)
        cap = snap["capture"]
        for k in ("hostname", "start_boottime_ns", "self_tgids",
                  "cgroups_read_boottime_ns"):
            need(k in cap, "%s: no capture.%s" % (path, k))
        need(any(f.get("role") == "start_time" for f in snap["fields"]),
             "%s: no field with the start_time role" % path)
        print("ok: %s (%d threads, %d processes, %d fields, %d plugins%s)" %
              (path, snap["threads"]["rows"], snap["processes"]["rows"],
               len(snap["fields"]), len(snap["plugins"]),
               ", %d exited" % snap["exited"]["rows"]
               if "exited" in snap else ""))
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "--measure":
        return measure(argv[1], int(argv[2]) if len(argv) > 2 else 3)
    if argv[:1] == ["--sample-writer"]:
        binary = argv[1]
        workdir = argv[argv.index("--workdir") + 1]
        os.makedirs(workdir, exist_ok=True)
        path = os.path.join(workdir, "sample.ctprof")
        if os.path.exists(path):
            os.unlink(path)
        subprocess.run([binary, "--write-sample", path], check=True)
        snap, _ = decode_file(path)
        check_spec(snap)
        check_sample(snap)
        check_dump(binary, path)
        check_later_writer(snap)
        if "--golden" in argv:
            golden = argv[argv.index("--golden") + 1]
            snap, _ = decode_file(golden)
            check_spec(snap, legacy=True)
            check_sample(snap, legacy=True)
        print("ok: %s decodes per docs/FORMAT.md with the expected values, "
              "dump JSON matches" % path)
        return 0
    if argv[:1] == ["--exited-writer"]:
        binary = argv[1]
        workdir = argv[argv.index("--workdir") + 1]
        os.makedirs(workdir, exist_ok=True)
        path = os.path.join(workdir, "exited.ctprof")
        if os.path.exists(path):
            os.unlink(path)
        subprocess.run([binary, "--write-sample", path], check=True)
        snap, _ = decode_file(path)
        check_spec(snap)
        check_exited_sample(snap)
        check_dump(binary, path, escapes=False)
        print("ok: %s: exited table per docs/FORMAT.md, dump matches" % path)
        return 0
    if argv[:1] == ["--record"]:
        return record(argv[1], argv[argv.index("--config") + 1],
                      argv[argv.index("--plugin-dir") + 1],
                      argv[argv.index("--workdir") + 1])
    if not argv:
        print(__doc__)
        return 2
    for path in argv:
        snap, _ = decode_file(path)
        check_spec(snap)
        print("ok: %s (%d threads, %d processes, %d fields)" %
              (path, snap["threads"]["rows"], snap["processes"]["rows"],
               len(snap["fields"])))
    return 0


def run(argv):
    try:
        return main(argv)
    finally:
        for n in NOTES:
            print("note: " + n)


if __name__ == "__main__":
    try:
        sys.exit(run(sys.argv[1:]))
    except SpecError as e:
        print("FAIL: %s" % e)
        sys.exit(1)
