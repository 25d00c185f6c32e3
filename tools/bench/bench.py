#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ctprof-core benchmark: snapshot cost against a plain /proc reader.

For each load size N (default 1000, 10000, 30000 threads) this starts
ctp-bench-load (N sleeping threads, 100 per process) and, for each plugin
set, runs R times each and interleaved: ctp-bench-read (the same system
calls as a snapshot with that set, nothing else), the same reader with the
former per-thread cgroup reads, ctprof-core at workers=1 and workers=2
(procfs set: also workers=1 with --no-supervise, the crash supervisor's
cost), and
(procfs set) two readers at once (the contention any two concurrent walks
pay). Every figure of a run comes from wait4() on that child, reaped by the
small C helper ctp-bench-run: user+sys CPU, ru_maxrss, and the wall time
from spawn to reap. Medians are reported.

Plugin sets (--sets):
  procfs     procfs-stat alone: the targets below
  issue3     procfs-stat, schedstat, io, smaps: issue 3's default set minus
             taskstats and jemalloc-probe; CPU target
  taskstats  the issue3 set plus taskstats: ctprof-core workers=1 only (no
             plain reader makes netlink queries); its CPU over the issue3
             set's is what taskstats adds
  default    config/collectors.yaml as shipped, every plugin it enables:
             ctprof-core workers=1 only

  CPU per thread   (user+sys) / threads walked by that run (the whole host,
                   not only N: the snapshot's recorded threads, the reader's
                   walked tids)
  ratio            ctprof-core CPU per thread / reader CPU per thread
  cgroup saving    reader with per-thread cgroup reads minus the reader with
                   one cgroup read per process (what the engine does now)
  wall 2w/1w       median wall at workers=2 / median wall at workers=1
  peak RSS         ru_maxrss, against 16 MiB + 300 B per thread
  snapshot B/thr   compressed snapshot size / threads recorded

Targets (checked on rows with N >= --check-at, default 30000): procfs set,
workers=1 CPU ratio <= 1.15, wall 2w/1w <= 0.6, peak RSS of both worker
counts <= 16 MiB + 300 B/thread; issue3 set, workers=1 CPU ratio <= 1.15.
With --strace, the reader's and ctprof-core's system calls are also
compared call by call (parity). Exit status: 0 all checked targets pass (or
--no-check), 1 a target or the parity failed, 2 the benchmark could not
run.

With --recorder K, every set also measures `ctprof-core record` (issue 15):
workers=1 with --no-supervise beside the supervised one-shot capture, and
the recorder at --interval 100ms with --count 1 and --count K+1, supervised
and not. The recorder's steady-state CPU per capture is
(cpu(K+1) - cpu(1)) / K: the start, plugin load, first capture and exit
cancel out. --recorder-only measures nothing else (no readers, no w2). No
target applies.

With --export, each set measures `ctprof-core export` (issue 16) on one
snapshot of the load instead: the OpenMetrics export with --top 50 grouped
by process name and by thread (--group-by tid, the grouping with the most
groups), R times each: CPU, wall and peak RSS of the export, and the series,
families and groups it reported. No target applies; the series bound is
(top + 1) per family and label value.

With --smaps-load (issue 28), only smaps' time budget under load: the
shipped config (its smaps defaults) captured R times while stress-ng keeps
every CPU busy (--cpu NPROC --io 1 --vm 1 --pthread 1) and --smaps-holders
processes hold that many GiB resident each (default 1,2,3,3). Per capture:
the processes smaps skipped for its budget (skipped_budget), the CPU time
of its smaps_rollup reads (read_us, the budget's meter) and their wall time
(read_wall_us). Target: no capture skips a process.

With --export-fields N (issue 28), only `ctprof-core export` of snapshots
of many fields: N and 8N host fields and as many thread fields, written by
`tests/test_export --write-many` (the build's test), each exported R times:
CPU of the export (median). Target: 8 times the fields cost at most 16
times the CPU (a linear export costs 8, one quadratic in the fields 64).

Snapshots go to a private directory on tmpfs (/dev/shm when present) and are
deleted once measured. Run as root for a whole-host walk (another user's
tasks are partly unreadable, which changes the work done).
"""

import argparse
import datetime
import json
import os
import platform
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TARGET_CPU_RATIO = 1.15
TARGET_WALL_RATIO = 0.6
TARGET_RSS_BASE = 16 * 1024 * 1024
TARGET_RSS_PER_THREAD = 300
# Outside load (CPUs) above which a row's figures get a warning.
BUSY_WARN = 0.1
SUMMARY_RE = re.compile(r": (\d+) threads, (\d+) processes,(?: \d+ cgroups)?"
                        r"(?: in ([\d.]+)s)?, (\d+) bytes; "
                        r"plugins failed: (.*)$", re.M)
READER_RE = re.compile(r"tgids (\d+) tids (\d+) vanished (\d+)")
CLK_TCK = os.sysconf("SC_CLK_TCK")

# name: plugins (config order), the reader's preset (None: no plain
# equivalent), the kinds of run measured, whether targets apply.
SETS = {
    "procfs": {
        "plugins": ["procfs-stat"],
        "reader": ["--preset", "procfs"],
        "kinds": ("reader", "reader_pt", "w1", "w1ns", "w2", "pair"),
        "title": "procfs-stat",
    },
    "issue3": {
        "plugins": ["procfs-stat", "schedstat", "io", "smaps"],
        "reader": ["--preset", "issue3"],
        "kinds": ("reader", "reader_pt", "w1", "w2"),
        "title": "issue-3 set (procfs-stat, schedstat, io, smaps)",
    },
    "taskstats": {
        "plugins": ["procfs-stat", "schedstat", "io", "smaps", "taskstats"],
        "reader": None,
        "kinds": ("w1",),
        "title": "issue-3 set + taskstats",
    },
    "default": {
        # Filled from the file by parse_args(): every plugin it enables.
        "plugins": [],
        "config": os.path.join(REPO, "config", "collectors.yaml"),
        "reader": None,
        "kinds": ("w1",),
        "title": "default config (config/collectors.yaml, every plugin)",
    },
}
# The recorder's kinds (--recorder K): `record --count 1` and
# `record --count K+1`, supervised and with --no-supervise.
REC_KINDS = ("rec1", "recn", "rec1ns", "recnns")
REC_INTERVAL = "100ms"
REC_FILE_RE = re.compile(r"^ctprof-(\d{8}T\d{6})\.(\d{3})Z\.ctprof\.zst$")


class BenchError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def host_busy_seconds():
    """CPU seconds the whole host spent not idle, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal
    return (v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)) \
        / CLK_TCK


def loadavg():
    with open("/proc/loadavg") as f:
        p = f.read().split()
    return float(p[0]), int(p[3].split("/")[1])


def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem_kib = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    return {
        "date": datetime.datetime.now().astimezone().strftime(
            "%Y-%m-%d %H:%M:%S %Z"),
        "nproc": os.cpu_count(),
        "model": model,
        "mem_gib": round(mem_kib / 1024 / 1024, 1),
        "kernel": platform.release(),
        "uid": os.geteuid(),
        "loadavg": loadavg()[0],
    }


RUN_RE = re.compile(r"exit (\d+) user ([\d.]+) sys ([\d.]+) wall ([\d.]+) "
                    r"maxrss (\d+)")


def start_measured(args, argv, outdir, tag):
    """Start argv under ctp-bench-run (spawn + wait4)."""
    out = os.path.join(outdir, tag + ".out")
    err = os.path.join(outdir, tag + ".err")
    proc = subprocess.Popen([args.runner, out, err] + argv,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    return {"proc": proc, "argv": argv, "out": out, "err": err}


def finish_measured(h):
    """Wait for a start_measured() run and return its figures."""
    rout, rerr = h["proc"].communicate()
    m = RUN_RE.search(rout)
    if h["proc"].returncode != 0 or not m:
        raise BenchError("ctp-bench-run %s failed: %s" % (h["argv"][0],
                                                         rerr.strip()))
    with open(h["out"], errors="replace") as f:
        stdout = f.read()
    with open(h["err"], errors="replace") as f:
        stderr = f.read()
    os.unlink(h["out"])
    os.unlink(h["err"])
    rc = int(m.group(1))
    if rc != 0:
        raise BenchError("%s exited with %d:\n%s" % (" ".join(h["argv"]), rc,
                                                     stderr.strip()))
    user, sys_, wall = float(m.group(2)), float(m.group(3)), float(m.group(4))
    return {
        "user": user, "sys": sys_, "cpu": user + sys_, "wall": wall,
        "maxrss": int(m.group(5)) * 1024, "host_busy": 0.0,
        "stdout": stdout, "stderr": stderr,
    }


def run_measured(args, argv, outdir, tag):
    busy0 = host_busy_seconds()
    r = finish_measured(start_measured(args, argv, outdir, tag))
    r["host_busy"] = host_busy_seconds() - busy0
    return r


def reader_counts(r):
    m = READER_RE.search(r["stdout"])
    if not m:
        raise BenchError("ctp-bench-read printed no counts: %r"
                         % r["stdout"])
    r["threads"] = int(m.group(2))
    r["bytes"] = 0
    r["walk"] = None
    return r


def reader_argv(args, sname, per_thread_cg=False):
    argv = [args.reader] + SETS[sname]["reader"]
    if per_thread_cg:
        argv.append("--per-thread-cgroup")
    return argv


def run_reader_pair(args, outdir, sname):
    """Two plain readers at once: what two concurrent walks cost the kernel
    and the hardware, with no code of ours involved."""
    hs = [start_measured(args, reader_argv(args, sname), outdir,
                         "pair%d" % i) for i in range(2)]
    return [reader_counts(finish_measured(h)) for h in hs]


def run_reader(args, outdir, sname, per_thread_cg=False):
    return reader_counts(run_measured(
        args, reader_argv(args, sname, per_thread_cg), outdir, "reader"))


def ctprof_argv(args, config, snap, workers, supervise=True):
    return ([args.ctprof, "--config", config, "-o", snap, "-j", str(workers)]
            + ([] if supervise else ["--no-supervise"]))


def run_ctprof(args, outdir, config, workers, supervise=True):
    snap = os.path.join(outdir, "snap.ctprof.zst")
    r = run_measured(args, ctprof_argv(args, config, snap, workers,
                                       supervise), outdir, "ctprof")
    m = SUMMARY_RE.search(r["stderr"])
    if not m:
        raise BenchError("no summary line from ctprof-core:\n%s"
                         % r["stderr"].strip())
    if m.group(5).strip() != "none":
        raise BenchError("plugins failed: %s\n%s" % (m.group(5),
                                                     r["stderr"].strip()))
    r["threads"] = int(m.group(1))
    # The engine's own walk time (2 decimals), to split wall into walk and
    # the serial rest (startup, plugin load, writer).
    r["walk"] = float(m.group(3)) if m.group(3) else None
    r["bytes"] = os.stat(snap).st_size
    os.unlink(snap)
    return r


def record_argv(args, config, recdir, count, supervise=True):
    return ([args.ctprof, "record", "--config", config, "-o", recdir,
             "--interval", REC_INTERVAL, "--count", str(count), "-j", "1"]
            + ([] if supervise else ["--no-supervise"]))


def capture_walls(recdir):
    """Each file of a recording, in order: its capture's wall time, from
    the start in its name (UTC, ms) to its mtime (written whole)."""
    walls = []
    for name in sorted(os.listdir(recdir)):
        m = REC_FILE_RE.match(name)
        if not m:
            continue
        start = datetime.datetime.strptime(m.group(1), "%Y%m%dT%H%M%S")
        start = (start.replace(tzinfo=datetime.timezone.utc).timestamp()
                 + int(m.group(2)) / 1e3)
        mtime = os.stat(os.path.join(recdir, name)).st_mtime_ns / 1e9
        walls.append(mtime - start)
    return walls


def run_record(args, outdir, config, count, supervise=True):
    """`ctprof-core record --count count`: the whole run's figures, and
    each capture's (threads, walk, bytes, wall) in "captures"."""
    recdir = os.path.join(outdir, "rec")
    r = run_measured(args, record_argv(args, config, recdir, count,
                                       supervise), outdir, "record")
    lines = SUMMARY_RE.findall(r["stderr"])
    walls = capture_walls(recdir)
    shutil.rmtree(recdir)
    if len(lines) != count or len(walls) != count:
        raise BenchError("record --count %d wrote %d files, %d summary "
                         "lines:\n%s" % (count, len(walls), len(lines),
                                         r["stderr"].strip()))
    failed = [m[4].strip() for m in lines if m[4].strip() != "none"]
    if failed:
        raise BenchError("plugins failed: %s\n%s" % (failed[0],
                                                     r["stderr"].strip()))
    r["captures"] = [{"threads": int(m[0]), "walk": float(m[2] or 0),
                      "bytes": int(m[3]), "wall": w}
                     for m, w in zip(lines, walls)]
    r["threads"] = statistics.median(c["threads"] for c in r["captures"])
    r["bytes"] = statistics.median(c["bytes"] for c in r["captures"])
    r["walk"] = None
    return r


def run_kind(args, outdir, configs, sname, kind):
    """One run of `kind` for plugin set `sname`; a list of results (two for
    a pair)."""
    if kind == "reader":
        return [run_reader(args, outdir, sname)]
    if kind == "reader_pt":
        return [run_reader(args, outdir, sname, per_thread_cg=True)]
    if kind == "pair":
        return run_reader_pair(args, outdir, sname)
    if kind == "w1ns":
        return [run_ctprof(args, outdir, configs[sname], 1, supervise=False)]
    if kind in REC_KINDS:
        count = 1 if kind.startswith("rec1") else args.recorder + 1
        return [run_record(args, outdir, configs[sname], count,
                           supervise=not kind.endswith("ns"))]
    return [run_ctprof(args, outdir, configs[sname], int(kind[1:]))]


def other_loads():
    """pids of ctp-bench-load processes already running (not ours)."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % d) as f:
                if f.read().strip() == "ctp-bench-load":
                    found.append(int(d))
        except OSError:
            pass
    return found


class Load:
    """ctp-bench-load running in the background for the life of a block."""

    def __init__(self, args, n, per_process=None, publish=False):
        others = other_loads()
        if others:
            raise BenchError("another ctp-bench-load is running (pids %s); "
                             "its threads would be walked too"
                             % ", ".join(map(str, others[:5])))
        self.proc = subprocess.Popen(
            [args.load, "-n", str(n), "-t",
             str(per_process or args.per_process)]
            + (["--publish"] if publish else []),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        line = ""
        while time.monotonic() < deadline:
            r, _, _ = select.select([self.proc.stdout], [], [], 1.0)
            if r:
                line = self.proc.stdout.readline()
                break
            if self.proc.poll() is not None:
                break
        if not line.startswith("ready "):
            err = self.stop()
            raise BenchError("load generator did not start %d threads:\n%s"
                             % (n, err.strip()))
        _, self.threads, self.procs, _ = line.split()

    def stop(self):
        """Close its stdin (it tears the load down) and reap it."""
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.stderr.read() if self.proc.stderr else ""


def enabled_plugins(path):
    """The plugins a shipped config enables, in its order (its top-level
    `plugins:` block; a plugin without `enabled:` is enabled)."""
    found, inside = {}, False
    with open(path) as f:
        for line in f:
            if re.match(r"^[^\s#]", line):
                inside = line.startswith("plugins:")
                continue
            m = re.match(r"^  ([\w.-]+):\s*(#.*)?$", line)
            if inside and m:
                name = m.group(1)
                found[name] = True
            e = re.match(r"^    enabled:\s*(\w+)", line)
            if inside and e and found:
                found[name] = e.group(1) == "true"
    return [p for p, on in found.items() if on]


def write_shipped_config(path, plugin_dir, shipped):
    """A shipped config as it is, with plugin_dirs pointed at the build."""
    with open(shipped) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text + "\n# added by tools/bench/bench.py\n"
                "plugin_dirs:\n  - \"%s\"\n" % plugin_dir)


def write_config(path, plugin_dir, plugins):
    with open(path, "w") as f:
        f.write("# written by tools/bench/bench.py\n"
                "plugin_dirs:\n  - \"%s\"\n"
                "workers: 1\n"
                "compression_level: 3\n"
                "plugins:\n" % plugin_dir)
        for p in plugins:
            f.write("  %s: {}\n" % p)


STRACE_SYSCALLS = ("openat", "read", "close", "getdents64",
                   "sched_getaffinity", "faccessat", "faccessat2")
STRACE_LINE = re.compile(r"^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+|\?)(.*)$")
# -y prints every fd argument as N</path>; AT_FDCWD as AT_FDCWD</cwd>.
FD_PATH = re.compile(r"^(?:-?\d+|AT_FDCWD)<(.*?)>, \"(.*?)\"")
FD_ONLY = re.compile(r"^-?\d+<(.*?)>")
TASK_PATH = re.compile(r"^/proc/(\d+)(?:/task/(\d+))?(/|$)")
PROC_DIR = re.compile(r"^/proc/\d+$")
ERRNO = re.compile(r"^ (E[A-Z0-9]+) ")
ENTRIES = re.compile(r"/\* (\d+) entries \*/")


def join_path(dirpath, name):
    if name.startswith("/"):
        return name
    if name == ".":
        return dirpath
    return dirpath.rstrip("/") + "/" + name


def strace_run(args, argv, outdir):
    """Run argv under strace -f -y (not timed); returns (ops, counts,
    stdout, stderr): ops are the walk's calls in order, each a tuple
    (call, path or tid, detail...) with the tracee's own and strace's pids
    replaced by SELF and STRACE."""
    log_path = os.path.join(outdir, "strace.txt")
    proc = subprocess.Popen(
        [args.strace, "-f", "-y", "-qq", "-s", "0", "-o", log_path,
         "-e", "trace=" + ",".join(STRACE_SYSCALLS)] + argv,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise BenchError("strace %s failed:\n%s" % (argv[0], err.strip()))
    names = {str(proc.pid): "STRACE"}
    counts = {}
    ops = []
    filled = {}
    odd = 0
    with open(log_path, errors="replace") as f:
        for line in f:
            m = STRACE_LINE.match(line)
            if not m:
                odd += "+++" not in line and "---" not in line
                continue
            pid, call, a, ret, rest = m.groups()
            if not names.get(pid):
                names.setdefault(pid, "SELF")
            counts[call] = counts.get(call, 0) + 1
            e = ERRNO.match(rest)
            res = e.group(1) if ret == "-1" and e else "ok"
            if call in ("openat", "faccessat", "faccessat2"):
                p = FD_PATH.match(a)
                if not p:
                    continue
                op = ("open" if call == "openat" else "access",
                      join_path(p.group(1), p.group(2)), res)
                filled.pop(op[1], None)
            elif call == "sched_getaffinity":
                v = a.split(", ")
                op = ("affinity", v[0], v[1] if len(v) > 1 else "", res)
            else:
                p = FD_ONLY.match(a)
                if not p:
                    continue
                if call == "read":
                    # The buffer the read fills: its count plus what
                    # earlier reads of this fd returned (the count alone
                    # depends on the file's length in that run).
                    done = filled.get(p.group(1), 0)
                    op = ("read", p.group(1), "buf %d" % (
                        int(a.rsplit(", ", 1)[-1]) + done), res)
                    filled[p.group(1)] = done + (max(int(ret), 0)
                                                  if ret != "?" else 0)
                else:
                    op = (call, p.group(1), res)
                    e = ENTRIES.search(a)
                    if call == "getdents64" and e:
                        # Kept apart from the comparison: it tells a
                        # directory that changed between the runs.
                        op += ("entries " + e.group(1),)
            ops.append(op)
    os.unlink(log_path)
    if odd:
        log("  strace: %d lines not understood (threads interleaved?)"
            % odd)

    def norm(s):
        return TASK_PATH.sub(
            lambda m: "/proc/%s%s%s" % (
                names.get(m.group(1), m.group(1)),
                "/task/" + names.get(m.group(2), m.group(2))
                if m.group(2) else "", m.group(3)), s)

    # The walk: from listing the proc root to the last call about a task.
    first = next((i for i, o in enumerate(ops)
                  if o[0] == "getdents64" and o[1] == "/proc"), None)
    if first is None:
        raise BenchError("no walk of /proc in the trace of %s" % argv[0])
    walk = ops[first:]
    last = max((i for i, o in enumerate(walk)
                if o[0] == "affinity" or TASK_PATH.match(o[1])), default=-1)
    walk = [tuple(names.get(x, x) if o[0] == "affinity" and j == 1
                  else norm(x) if j == 1 else x for j, x in enumerate(o))
            for o in walk[:last + 1]]
    return walk, counts, out, err


def segments(ops):
    """Split a walk into per-process runs of calls, keyed by tgid: each run
    starts at the O_PATH open of /proc/<tgid>."""
    segs = {}
    order = []
    key = "(root)"
    segs[key] = []
    for o in ops:
        if o[0] == "open" and (PROC_DIR.match(o[1])
                               or o[1] in ("/proc/SELF", "/proc/STRACE")):
            key = o[1][len("/proc/"):]
            order.append(key)
            segs[key] = []
        segs[key].append(o)
    return segs, order


def thread_set(seg):
    return {m.group(2) for o in seg for m in [TASK_PATH.match(o[1])]
            if m and m.group(2) and o[0] == "open"}


THREAD_CGROUP = re.compile(r"^/proc/[^/]+/task/[^/]+/cgroup$")


def without_cgroup(seg):
    """A run of calls without those that depend on the cgroup tree: the
    threads' own cgroup reads and calls under the cgroup root."""
    return [o for o in seg if o[0] == "affinity" or (
        o[1].startswith("/proc") and not THREAD_CGROUP.match(o[1]))]


def calls(seg):
    """A run of calls without the getdents64 entry counts."""
    return [o[:3] if o[0] == "getdents64" else o for o in seg]


def compare_walks(rops, cops):
    """Compare two walks process by process. A process whose calls differ
    only because it changed between the runs (a thread came or went, a
    task exited mid-read, a directory it lists has other entries, such as
    a cgroup created under the cgroup root) is counted apart from a real
    mismatch."""
    rs, rorder = segments(rops)
    cs, corder = segments(cops)
    # The cgroup tree changed between the runs (a cgroup was created or
    # removed under the root): whether threads share their process's
    # cgroup may then differ for every process after the first.
    cg_changed = ([o for o in rops if o[0] == "getdents64"
                   and not o[1].startswith("/proc")]
                  != [o for o in cops if o[0] == "getdents64"
                      and not o[1].startswith("/proc")])
    res = {"ops_reader": len(rops), "ops_ctprof": len(cops),
           "identical": 0, "changed": 0, "mismatch": 0,
           "cgroup_tree_changed": False,
           "only_reader": len(set(rs) - set(cs)),
           "only_ctprof": len(set(cs) - set(rs)), "first_mismatch": None}
    common = [k for k in rorder if k in cs]
    res["processes"] = len(common)
    # Ascending tgids in both (the walkers' own pids sit wherever they
    # fall, so they are left out of the order check).
    numeric = [k for k in common if k.isdigit()]
    if [k for k in corder if k in rs and k.isdigit()] != numeric:
        res["mismatch"] += 1
        res["first_mismatch"] = {"process": "(order)",
                                 "reader": numeric[:5], "ctprof": []}
    for k in ["(root)"] + common:
        a, b = calls(rs[k]), calls(cs[k])
        if a == b:
            res["identical"] += k != "(root)"
            continue
        gone = any(o[-1] in ("ENOENT", "ESRCH") for o in a + b)
        # A directory listed with another number of entries (a thread
        # came or went; a cgroup appeared under the cgroup root).
        dirs = ([o for o in rs[k] if o[0] == "getdents64"]
                != [o for o in cs[k] if o[0] == "getdents64"])
        if cg_changed and without_cgroup(a) == without_cgroup(b):
            res["changed"] += 1
            res["cgroup_tree_changed"] = True
            continue
        if k != "(root)" and (gone or dirs
                              or thread_set(a) != thread_set(b)):
            res["changed"] += 1
            continue
        res["mismatch"] += 1
        if res["first_mismatch"] is None:
            i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y),
                     min(len(a), len(b)))
            lo = max(0, i - 2)
            res["first_mismatch"] = {
                "process": k, "index": i,
                "reader": [" ".join(o) for o in a[lo:i + 3]],
                "ctprof": [" ".join(o) for o in b[lo:i + 3]]}
    res["ok"] = res["mismatch"] == 0
    return res


def syscall_parity(args, outdir, config, sname):
    """Trace the reader and a workers=1 snapshot; compare their walks."""
    snap = os.path.join(outdir, "strace.ctprof.zst")
    rops, rc, rout, _ = strace_run(args, reader_argv(args, sname), outdir)
    cops, cc, _, cerr = strace_run(args, ctprof_argv(args, config, snap, 1),
                                   outdir)
    if os.path.exists(snap):
        os.unlink(snap)
    out = {"counts": {}, "walk_counts": {}}
    for name in STRACE_SYSCALLS:
        out["counts"][name] = {"reader": rc.get(name, 0),
                               "ctprof": cc.get(name, 0)}
    for kind in ("open", "read", "close", "getdents64", "affinity",
                 "access"):
        out["walk_counts"][kind] = {
            "reader": sum(o[0] == kind for o in rops),
            "ctprof": sum(o[0] == kind for o in cops)}
    rm, cm = READER_RE.search(rout), SUMMARY_RE.search(cerr)
    out["threads"] = {"reader": int(rm.group(2)) if rm else None,
                      "ctprof": int(cm.group(1)) if cm else None}
    out["compare"] = compare_walks(rops, cops)
    return out


def med(runs, key):
    return statistics.median(r[key] for r in runs)


def med_per_thread(runs, key):
    return statistics.median(r[key] / r["threads"] for r in runs)


def summarize(rs):
    return {
        "threads": med(rs, "threads"),
        "cpu_us_per_thread": med_per_thread(rs, "cpu") * 1e6,
        "user_us_per_thread": med_per_thread(rs, "user") * 1e6,
        "sys_us_per_thread": med_per_thread(rs, "sys") * 1e6,
        "best_cpu_us_per_thread": min(r["cpu"] / r["threads"]
                                      for r in rs) * 1e6,
        "wall_s": med(rs, "wall"),
        "maxrss": med(rs, "maxrss"),
        "bytes_per_thread": med_per_thread(rs, "bytes"),
        "walk_s": (statistics.median(r["walk"] for r in rs)
                   if all(r["walk"] is not None for r in rs) else None),
    }


def paired_ratio(runs, a, b):
    """Median over rounds of run a's CPU per thread over run b's in the
    same round: runs minutes apart see different outside conditions, runs
    of one round share them."""
    return statistics.median(
        (x["cpu"] / x["threads"]) / (y["cpu"] / y["threads"])
        for x, y in zip(runs[a], runs[b]))


def derive(s, runs):
    """Ratios of one plugin set's summaries (a dict kind -> summary) and
    runs (kind -> list, one per round)."""
    d = {}
    if "reader" in s:
        base = s["reader"]["cpu_us_per_thread"]
        for k in ("w1", "w2"):
            if k in s:
                d[k + "_cpu_ratio"] = s[k]["cpu_us_per_thread"] / base
        # Outside load only ever adds CPU time, so the best runs are a
        # second, steadier estimate; shown beside the median, never used
        # for verdicts.
        if "w1" in s:
            d["w1_cpu_ratio_best"] = (s["w1"]["best_cpu_us_per_thread"]
                                      / s["reader"]["best_cpu_us_per_thread"])
            d["w1_cpu_ratio_paired"] = paired_ratio(runs, "w1", "reader")
        if "reader_pt" in s:
            pt = s["reader_pt"]["cpu_us_per_thread"]
            d["cg_saving_us"] = pt - base
            d["cg_saving_pct"] = (pt - base) / pt * 100
        if "pair" in s:
            # Each of two concurrent plain walks against one alone: the
            # contention any 2-worker walk pays before our code does
            # anything.
            d["pair_cpu_factor"] = s["pair"]["cpu_us_per_thread"] / base
    if "w1" in s and "w2" in s:
        d["wall_ratio"] = s["w2"]["wall_s"] / s["w1"]["wall_s"]
        d["w2_cpu_factor"] = (s["w2"]["cpu_us_per_thread"]
                              / s["w1"]["cpu_us_per_thread"])
        d["rss_worst"] = max(s["w1"]["maxrss"], s["w2"]["maxrss"])
    if "w1" in s and "w1ns" in s:
        # The supervisor's cost per capture (fork, wait, the shared page,
        # the per-callback marks): CPU of the supervised run minus the
        # unsupervised one, per round and in median.
        d["sv_cpu_ms"] = (med(runs["w1"], "cpu")
                          - med(runs["w1ns"], "cpu")) * 1e3
        d["sv_cpu_ms_paired"] = statistics.median(
            (x["cpu"] - y["cpu"]) * 1e3
            for x, y in zip(runs["w1"], runs["w1ns"]))
        d["sv_w1_cpu_ms"] = med(runs["w1"], "cpu") * 1e3
        d["sv_w1ns_cpu_ms"] = med(runs["w1ns"], "cpu") * 1e3
    if "recn" in runs:
        d["rec"] = derive_recorder(runs)
    if "w1" in s:
        d["rss_limit"] = (TARGET_RSS_BASE
                          + TARGET_RSS_PER_THREAD * s["w1"]["threads"])
    return d


def kinds_for(args, sname):
    """The kinds of run measured for a set: its own, and with --recorder
    the one-shot capture both ways and the recorder's."""
    kinds = [k for k in SETS[sname]["kinds"]
             if args.cgroup_compare or k != "reader_pt"]
    if not args.recorder:
        return kinds
    if args.recorder_only:
        kinds = ["w1"]
    return kinds + (["w1ns"] if "w1ns" not in kinds else []) \
        + list(REC_KINDS)


def per_capture(one, more):
    """The recorder's CPU per capture once started: (cpu(K+1) - cpu(1)) / K
    from two runs, or from medians."""
    k = len(more["captures"]) - 1
    return (more["cpu"] - one["cpu"]) / k


def later_wall(r):
    """Mean wall of a recording's captures after the first."""
    return statistics.mean(c["wall"] for c in r["captures"][1:])


def recorder_way(runs, oneshot, rec1, recn):
    """The recorder against one-shot captures, one way (supervised or
    not): medians, and ratios paired by round."""
    k = len(runs[recn][0]["captures"]) - 1
    cap = (med(runs[recn], "cpu") - med(runs[rec1], "cpu")) / k
    base = med(runs[oneshot], "cpu")
    rounds = list(zip(runs[oneshot], runs[rec1], runs[recn]))
    return {
        "oneshot_ms": base * 1e3,
        "rec_ms": cap * 1e3,
        "rec_ms_paired": statistics.median(
            per_capture(o, m) for _, o, m in rounds) * 1e3,
        "ratio": cap / base,
        "ratio_paired": statistics.median(
            per_capture(o, m) / w["cpu"] for w, o, m in rounds),
        "rec1_ms": med(runs[rec1], "cpu") * 1e3,
        "oneshot_wall_ms": med(runs[oneshot], "wall") * 1e3,
        "rec_wall_ms": statistics.median(
            later_wall(r) for r in runs[recn]) * 1e3,
        "first_wall_ms": statistics.median(
            r["captures"][0]["wall"] for r in runs[rec1]) * 1e3,
        "oneshot_rss": med(runs[oneshot], "maxrss"),
        "rec_rss": med(runs[recn], "maxrss"),
    }


def derive_recorder(runs):
    """The recorder's figures (kinds REC_KINDS, w1, w1ns) of one set."""
    k = len(runs["recn"][0]["captures"]) - 1
    threads = med(runs["recn"], "threads")
    return {"k": k, "threads": threads,
            "sv": recorder_way(runs, "w1", "rec1", "recn"),
            "ns": recorder_way(runs, "w1ns", "rec1ns", "recnns")}


EXPORT_RE = re.compile(r"(\d+) series in (\d+) families; (\d+) of (\d+) "
                       r"groups")


def export_block(args, n, outdir, configs):
    """`export` on one snapshot of a load of n threads; returns the row."""
    load = Load(args, n)
    row = {"n": n, "load_threads": int(load.threads), "export": {}}
    try:
        log("N=%d: load up (%s threads), export" % (n, load.threads))
        for sn in args.set_list:
            snap = os.path.join(outdir, "export.ctprof.zst")
            run_measured(args, ctprof_argv(args, configs[sn], snap, 1),
                         outdir, "ctprof")
            for by in ("pcomm", "tid"):
                runs = []
                for i in range(args.repeat):
                    r = run_measured(args, [args.ctprof, "export", snap,
                                            "--group-by", by, "--top", "50",
                                            "-o", "/dev/null"],
                                     outdir, "export")
                    m = EXPORT_RE.search(r["stderr"])
                    if not m:
                        raise BenchError("export said no counts:\n%s"
                                         % r["stderr"])
                    r.update(series=int(m.group(1)),
                             families=int(m.group(2)),
                             kept=int(m.group(3)), groups=int(m.group(4)))
                    r.pop("stdout")
                    r.pop("stderr")
                    runs.append(r)
                one = {k: statistics.median(x[k] for x in runs)
                       for k in ("cpu", "wall", "maxrss", "series",
                                 "families", "kept", "groups")}
                row["export"]["%s/%s" % (sn, by)] = one
                log("  %s --group-by %s: %d series in %d families, %d of "
                    "%d groups; %.3f s CPU, %.3f s wall, %.1f MiB"
                    % (sn, by, one["series"], one["families"], one["kept"],
                       one["groups"], one["cpu"], one["wall"],
                       one["maxrss"] / 1048576))
            os.unlink(snap)
    finally:
        load.stop()
    return row


# ---- Issue 17: the default set against the naive reader --------------------

# Kinds of run of --issue17, in the order of each round. "floor" is the
# plain reader's lower bound of the shipped walk (ctp-bench-read --preset
# floor), "floor2" the same reads split between two readers started
# together (--shard 0/2 and 1/2): how far the kernel lets them run in
# parallel on this machine.
I17_KINDS = ("naive", "w1", "w2", "nocap", "ps", "atop", "floor", "floor2")


def i17_argv(args, kind, config, snap):
    """argv of one --issue17 kind, or None when its tool is missing."""
    if kind == "naive":
        return [args.reader, "--preset", "naive"]
    if kind == "floor":
        return [args.reader, "--preset", "floor"]
    if kind == "floor2":
        return [args.reader, "--preset", "floor", "--shard", "K/2"]
    if kind in ("w1", "w2"):
        return ctprof_argv(args, config, snap, int(kind[1:]))
    if kind == "nocap":
        # Root without CAP_NET_ADMIN: the bounding set drops it at exec.
        tool = shutil.which("setpriv")
        return ([tool, "--bounding-set=-net_admin",
                 "--inh-caps=-net_admin"] + ctprof_argv(args, config, snap, 1)
                if tool else None)
    if kind == "ps":
        tool = shutil.which("ps")
        return [tool, "-eLo", "pid,tid,stat,pcpu,rss,comm"] if tool else None
    if kind == "atop":
        tool = shutil.which("atop")
        return ([tool, "-w", os.path.join(os.path.dirname(snap), "atop.raw"),
                 "1", "1"] if tool else None)
    raise BenchError("unknown kind %s" % kind)


def run_sharded(args, argv, outdir, n=2):
    """argv (with a K/n shard) as n readers started together: CPU summed,
    wall and RSS the largest, threads walked summed."""
    busy0 = host_busy_seconds()
    hs = [start_measured(args, [a.replace("K/%d" % n, "%d/%d" % (k, n))
                                for a in argv], outdir, "shard%d" % k)
          for k in range(n)]
    rs = [finish_measured(h) for h in hs]
    tids = 0
    for r in rs:
        m = READER_RE.search(r["stdout"])
        tids += int(m.group(2)) if m else 0
    return {"user": sum(r["user"] for r in rs),
            "sys": sum(r["sys"] for r in rs),
            "cpu": sum(r["cpu"] for r in rs),
            "wall": max(r["wall"] for r in rs),
            "maxrss": max(r["maxrss"] for r in rs),
            "host_busy": host_busy_seconds() - busy0,
            "stdout": "tgids 0 tids %d vanished 0\n" % tids, "stderr": ""}


def i17_threads(kind, r, fallback):
    """Threads a run walked: the snapshot's, the reader's, else the
    host's count taken beside it."""
    if kind in ("naive", "floor", "floor2"):
        m = READER_RE.search(r["stdout"])
        return int(m.group(2)) if m else fallback
    if kind in ("w1", "w2", "nocap"):
        m = SUMMARY_RE.search(r["stderr"])
        return int(m.group(1)) if m else fallback
    return fallback


def host_threads():
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                n += len(os.listdir("/proc/%s/task" % d))
            except OSError:
                pass
    return n


def i17_syscalls(args, outdir, config):
    """System calls per thread of one workers=1 capture, strace -f -c."""
    tool = shutil.which("strace")
    if not tool:
        return None
    out = os.path.join(outdir, "i17-strace.txt")
    snap = os.path.join(outdir, "i17-strace.ctprof.zst")
    p = subprocess.run([tool, "-f", "-c", "-o", out] +
                       ctprof_argv(args, config, snap, 1, supervise=False),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    m = SUMMARY_RE.search(p.stderr)
    total = 0
    with open(out) as f:
        for line in f:
            if line.strip().endswith("total"):
                total = int(line.split()[3])
    for path in (out, snap):
        if os.path.exists(path):
            os.unlink(path)
    return total / int(m.group(1)) if m and total else None


def issue17_block(args, n, per_process, outdir, config):
    """One load size and shape: every kind R times, rounds rotated."""
    args.per_process = per_process
    load = Load(args, n)
    runs = {k: [] for k in I17_KINDS}
    snap = os.path.join(outdir, "i17.ctprof.zst")
    try:
        log("N=%d, %d threads per process: load up (%s threads in %s "
            "processes)" % (n, per_process, load.threads, load.procs))
        kinds = [k for k in I17_KINDS if i17_argv(args, k, config, snap)]
        for k in ("naive", "w1"):
            run_measured(args, i17_argv(args, k, config, snap), outdir, k)
        for i in range(args.repeat):
            shift = i % len(kinds)
            for k in kinds[shift:] + kinds[:shift]:
                base = host_threads()
                argv = i17_argv(args, k, config, snap)
                r = (run_sharded(args, argv, outdir) if k == "floor2" else
                     run_measured(args, argv, outdir, k))
                r["threads"] = i17_threads(k, r, base)
                r["walk"] = None
                r["bytes"] = (os.path.getsize(snap) if k == "w1" and
                              os.path.exists(snap) else 0)
                r.pop("stdout")
                r.pop("stderr")
                runs[k].append(r)
            log("  round %d/%d: " % (i + 1, args.repeat) + "  ".join(
                "%s %.3fs" % (k, runs[k][-1]["cpu"]) for k in kinds))
        sc = i17_syscalls(args, outdir, config)
    finally:
        err = load.stop()
        if err.strip():
            log("  " + err.strip().replace("\n", "\n  "))
    row = {"n": n, "per_process": per_process,
           "load_threads": int(load.threads),
           "load_processes": int(load.procs), "syscalls_per_thread": sc,
           "runs": runs, "sum": {}}
    for k, rs in runs.items():
        if rs:
            row["sum"][k] = summarize(rs)
    s = row["sum"]
    nv = s["naive"]["cpu_us_per_thread"]
    for k in ("w1", "nocap", "ps", "atop", "floor"):
        if k in s:
            row["sum"][k]["ratio"] = s[k]["cpu_us_per_thread"] / nv
            row["sum"][k]["ratio_paired"] = paired_ratio(runs, k, "naive")
    if "w2" in s:
        row["wall_2w_1w"] = s["w2"]["wall_s"] / s["w1"]["wall_s"]
        row["cpu_2w_1w"] = (s["w2"]["cpu_us_per_thread"]
                            / s["w1"]["cpu_us_per_thread"])
    if "floor2" in s:
        row["wall_floor2"] = s["floor2"]["wall_s"] / s["floor"]["wall_s"]
    return row


def print_issue17(rows, out):
    out.write("| N | thr/proc | naive µs/thr | ctprof w1 µs/thr | w1 / naive "
              "(paired) | no CAP_NET_ADMIN / naive (paired) | ps -eLo / "
              "naive | atop -w / naive | w2/w1 wall | w2/w1 CPU/thr | "
              "peak RSS MiB | snapshot B/thr | syscalls/thr | floor / "
              "naive (paired) | floor 2 readers / 1, wall |\n")
    out.write("|" + " --- |" * 15 + "\n")
    for r in rows:
        s = r["sum"]

        def ratio(k):
            if k not in s:
                return "-"
            return "%.2fx (%.2fx)" % (s[k]["ratio"], s[k]["ratio_paired"])
        out.write("| %d | %d | %.1f | %.1f | %s | %s | %s | %s | %s | %s | "
                  "%.1f | %.1f | %s | %s | %s |\n" % (
                      r["load_threads"], r["per_process"],
                      s["naive"]["cpu_us_per_thread"],
                      s["w1"]["cpu_us_per_thread"], ratio("w1"),
                      ratio("nocap"),
                      "%.2fx" % s["ps"]["ratio"] if "ps" in s else "-",
                      "%.2fx" % s["atop"]["ratio"] if "atop" in s else "-",
                      "%.2f" % r["wall_2w_1w"] if "wall_2w_1w" in r else "-",
                      "%.2f" % r["cpu_2w_1w"] if "cpu_2w_1w" in r else "-",
                      mib(max(s["w1"]["maxrss"],
                              s.get("w2", s["w1"])["maxrss"])),
                      s["w1"]["bytes_per_thread"],
                      "%.1f" % r["syscalls_per_thread"]
                      if r["syscalls_per_thread"] else "-", ratio("floor"),
                      "%.2f" % r["wall_floor2"] if "wall_floor2" in r
                      else "-"))


# ---- Issue 33: the BPF task source ----------------------------------------

# Targets of issue 33: the shipped config with bpf-task against the naive
# reader, CPU per thread, by load shape (threads per process); the
# recorder's CPU per thread per capture once started.
I33_RATIO_WIDE = 0.10   # 1,000 threads per process (30 processes)
I33_RATIO_NARROW = 0.35  # 10 threads per process (per-process files stay)
I33_REC_US = 2.0
I33_KINDS = ("naive", "remain", "bpf", "files", "rec1", "recn")


def bpf_config(path, plugin_dir, shipped, enabled):
    """The shipped config with bpf-task enabled (first of its plugins) or
    disabled, plugin_dirs at the build."""
    with open(shipped) as f:
        text = f.read()
    m = re.search(r"^  bpf-task:\n    enabled: (true|false)\n", text,
                  re.M)
    entry = "  bpf-task:\n    enabled: %s\n" % ("true" if enabled
                                                 else "false")
    if m:
        text = text[:m.start()] + entry + text[m.end():]
    else:
        text = re.sub(r"^plugins:\n", "plugins:\n" + entry, text, count=1,
                      flags=re.M)
    with open(path, "w") as f:
        f.write(text + "\n# added by tools/bench/bench.py\n"
                "plugin_dirs:\n  - \"%s\"\n" % plugin_dir)


def i33_run(args, kind, outdir, configs, snap):
    if kind == "naive":
        r = run_measured(args, [args.reader, "--preset", "naive"], outdir,
                         kind)
        m = READER_RE.search(r["stdout"])
        r["threads"] = int(m.group(2)) if m else host_threads()
        r["bytes"] = 0
    elif kind == "remain":
        # What the source leaves (per-process files, no thread touched):
        # per thread of the host, as the others.
        r = run_measured(args, [args.reader, "--preset", "remain"], outdir,
                         kind)
        r["threads"] = host_threads()
        r["bytes"] = 0
    elif kind in ("bpf", "files"):
        r = run_measured(args, ctprof_argv(args, configs[kind], snap, 1),
                         outdir, kind)
        m = SUMMARY_RE.search(r["stderr"])
        if not m:
            raise BenchError("no summary line from ctprof-core:\n%s"
                             % r["stderr"].strip())
        r["threads"] = int(m.group(1))
        r["bytes"] = os.path.getsize(snap)
    else:
        r = run_record(args, outdir, configs["bpf"],
                       1 if kind == "rec1" else args.i33_captures + 1)
    r["walk"] = None
    r.pop("stdout", None)
    r.pop("stderr", None)
    return r


def issue33_block(args, n, per_process, outdir, configs):
    """One load size and shape: every kind R times, rounds rotated."""
    args.per_process = per_process
    load = Load(args, n)
    runs = {k: [] for k in I33_KINDS}
    snap = os.path.join(outdir, "i33.ctprof.zst")
    try:
        log("N=%d, %d threads per process: load up (%s threads in %s "
            "processes)" % (n, per_process, load.threads, load.procs))
        i33_run(args, "bpf", outdir, configs, snap)  # warm the caches
        for i in range(args.repeat):
            shift = i % len(I33_KINDS)
            for k in I33_KINDS[shift:] + I33_KINDS[:shift]:
                runs[k].append(i33_run(args, k, outdir, configs, snap))
            log("  round %d/%d: " % (i + 1, args.repeat) + "  ".join(
                "%s %.3fs" % (k, runs[k][-1]["cpu"]) for k in I33_KINDS))
    finally:
        err = load.stop()
        if err.strip():
            log("  " + err.strip().replace("\n", "\n  "))
    row = {"n": n, "per_process": per_process,
           "load_threads": int(load.threads),
           "load_processes": int(load.procs), "runs": runs, "sum": {}}
    for k in ("naive", "remain", "bpf", "files"):
        row["sum"][k] = summarize(runs[k])
    nv = row["sum"]["naive"]["cpu_us_per_thread"]
    for k in ("remain", "bpf", "files"):
        row["sum"][k]["ratio"] = row["sum"][k]["cpu_us_per_thread"] / nv
        row["sum"][k]["ratio_paired"] = paired_ratio(runs, k, "naive")
    threads = med(runs["recn"], "threads")
    rounds = list(zip(runs["rec1"], runs["recn"]))
    row["rec_us_per_thread"] = (
        (med(runs["recn"], "cpu") - med(runs["rec1"], "cpu"))
        / args.i33_captures / threads * 1e6)
    row["rec_us_per_thread_paired"] = statistics.median(
        per_capture(o, m) for o, m in rounds) / threads * 1e6
    row["rec_threads"] = threads
    return row


def i33_verdicts(row, check_at):
    """(what, value, limit, ok) for each target this row checks."""
    out = []
    if row["load_threads"] < check_at:
        return out
    limit = (I33_RATIO_WIDE if row["per_process"] >= 1000 else
             I33_RATIO_NARROW if row["per_process"] <= 10 else None)
    if limit is not None:
        v = row["sum"]["bpf"]["ratio"]
        out.append(("bpf / naive, %d thr/proc" % row["per_process"], v,
                    limit, v <= limit))
    v = row["rec_us_per_thread"]
    out.append(("record µs/thread/capture, %d thr/proc"
                % row["per_process"], v, I33_REC_US, v <= I33_REC_US))
    return out


def print_issue33(rows, out):
    out.write("| N | thr/proc | naive µs/thr | left to files µs/thr "
              "(/ naive) | bpf-task µs/thr | bpf / naive "
              "(paired) | files µs/thr | files / naive (paired) | record "
              "µs/thr/capture (paired) | peak RSS MiB bpf / files | "
              "snapshot B/thr |\n")
    out.write("|" + " --- |" * 11 + "\n")
    for r in rows:
        s = r["sum"]
        out.write("| %d | %d | %.1f | %.2f (%.3fx) | %.2f | %.3fx (%.3fx) | "
                  "%.1f | %.2fx "
                  "(%.2fx) | %.2f (%.2f) | %.1f / %.1f | %.1f |\n" % (
                      r["load_threads"], r["per_process"],
                      s["naive"]["cpu_us_per_thread"],
                      s["remain"]["cpu_us_per_thread"],
                      s["remain"]["ratio"],
                      s["bpf"]["cpu_us_per_thread"], s["bpf"]["ratio"],
                      s["bpf"]["ratio_paired"],
                      s["files"]["cpu_us_per_thread"], s["files"]["ratio"],
                      s["files"]["ratio_paired"], r["rec_us_per_thread"],
                      r["rec_us_per_thread_paired"],
                      mib(s["bpf"]["maxrss"]), mib(s["files"]["maxrss"]),
                      s["bpf"]["bytes_per_thread"]))


# ---- --appstats (issue 19): what the appstats collector costs ------------


def run_with_plugin(args, outdir, config, plugin):
    """A capture (workers 1); with `plugin`, that plugin's callback time and
    summary counters from the snapshot."""
    snap = os.path.join(outdir, "snap.ctprof.zst")
    r = run_measured(args, ctprof_argv(args, config, snap, 1), outdir,
                     "ctprof")
    m = SUMMARY_RE.search(r["stderr"])
    if not m or m.group(5).strip() != "none":
        raise BenchError("capture failed:\n%s" % r["stderr"].strip())
    r["processes"] = int(m.group(2))
    if plugin:
        doc = json.loads(subprocess.run([args.ctprof, "dump", snap],
                                        capture_output=True, text=True,
                                        check=True).stdout)
        p = [x for x in doc["plugins"] if x["name"] == plugin][0]
        r["plugin_ns"] = p["time_ns"]
        r["summary"] = p["summary"]
    os.unlink(snap)
    return r


def recorded_plugin_ns(args, outdir, config, plugin, count=5):
    """`record --count count`: the plugin's callback time in each capture
    after the first (its caches warm), with its summary counters."""
    recdir = os.path.join(outdir, "rec")
    subprocess.run(record_argv(args, config, recdir, count),
                   capture_output=True, check=True)
    out = []
    for name in sorted(os.listdir(recdir))[1:]:
        doc = json.loads(subprocess.run(
            [args.ctprof, "dump", os.path.join(recdir, name)],
            capture_output=True, text=True, check=True).stdout)
        p = [x for x in doc["plugins"] if x["name"] == plugin][0]
        out.append((p["time_ns"], p["summary"]))
    shutil.rmtree(recdir)
    return out


def appstats_block(args, outdir, publish):
    """Interleaved captures without and with appstats (procfs-stat in
    both), on the host as it is or with a 1,000-thread publisher."""
    without = os.path.join(outdir, "appstats-without.yaml")
    with_ = os.path.join(outdir, "appstats-with.yaml")
    write_config(without, args.plugin_dir, ["procfs-stat"])
    write_config(with_, args.plugin_dir, ["procfs-stat", "appstats"])
    load = Load(args, 1000, per_process=1000, publish=True) if publish \
        else None
    runs, warm = [], []
    try:
        for _ in range(args.repeat):
            a = run_with_plugin(args, outdir, without, None)
            b = run_with_plugin(args, outdir, with_, "appstats")
            runs.append((a, b))
        warm = recorded_plugin_ns(args, outdir, with_, "appstats")
    finally:
        if load:
            load.stop()
    walked = statistics.median(b["summary"]["processes_walked"]
                               for _, b in runs)
    ns = statistics.median(b["plugin_ns"] for _, b in runs)
    cpu_a = statistics.median(a["cpu"] for a, _ in runs)
    cpu_b = statistics.median(b["cpu"] for _, b in runs)
    return {
        "scene": "1,000-thread publisher" if publish else "no publisher",
        "processes": walked,
        "publishers": statistics.median(b["summary"]["publishers"]
                                        for _, b in runs),
        "threads_ok": statistics.median(b["summary"]["threads_ok"]
                                        for _, b in runs),
        "plugin_ms": ns / 1e6,
        "plugin_us_per_process": ns / 1e3 / walked if walked else 0.0,
        "cpu_without_ms": cpu_a * 1e3,
        "cpu_with_ms": cpu_b * 1e3,
        "cpu_delta_ms": statistics.median((b["cpu"] - a["cpu"]) * 1e3
                                          for a, b in runs),
        "warm_ms": statistics.median(w[0] for w in warm) / 1e6,
        "warm_us_per_process": statistics.median(
            w[0] / 1e3 / w[1]["processes_walked"] for w in warm),
        "runs": [[a["cpu"], b["cpu"], b["plugin_ns"]] for a, b in runs],
        "warm": [w[0] for w in warm],
    }


def print_appstats(rows, out):
    out.write("| host | processes | publishers | threads read | "
              "one-shot: appstats callbacks | per process | capture CPU "
              "without / with | recorder, warm: callbacks | per process "
              "|\n|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        out.write("| %s | %d | %d | %d | %.2f ms | %.1f us | %.1f / %.1f "
                  "ms | %.2f ms | %.1f us |\n" % (
                      r["scene"], r["processes"], r["publishers"],
                      r["threads_ok"], r["plugin_ms"],
                      r["plugin_us_per_process"], r["cpu_without_ms"],
                      r["cpu_with_ms"], r["warm_ms"],
                      r["warm_us_per_process"]))


# ---- --smaps-load (issue 28): smaps' budget under load -------------------


class SmapsLoad:
    """stress-ng on every CPU and processes holding memory resident, for
    the life of the block."""

    def __init__(self, gib):
        self.procs = []
        stress = shutil.which("stress-ng")
        if not stress:
            raise BenchError("--smaps-load needs stress-ng "
                             "(apt-get install stress-ng)")
        need = sum(gib) << 30
        avail = 0
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) << 10
        if need > avail // 2:
            raise BenchError("--smaps-holders wants %.1f GiB, more than "
                             "half of MemAvailable (%.1f GiB)"
                             % (need / 2**30, avail / 2**30))
        try:
            for g in gib:
                # Every page written, so all of it is resident; stdin's
                # EOF ends it.
                p = subprocess.Popen(
                    [sys.executable, "-c",
                     "import sys\nb = bytearray(b'\\1') * (%d << 30)\n"
                     "print('ready', flush=True)\nsys.stdin.read()" % g],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    text=True)
                self.procs.append(p)
                if p.stdout.readline().strip() != "ready":
                    raise BenchError("a %d GiB holder did not start" % g)
            self.procs.append(subprocess.Popen(
                [stress, "--cpu", str(os.cpu_count() or 1), "--io", "1",
                 "--vm", "1", "--pthread", "1", "--timeout", "3600s"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True))
            time.sleep(5)  # stress-ng's workers up and busy
        except BaseException:
            self.stop()
            raise

    def stop(self):
        for p in self.procs:
            if p.stdin:
                try:
                    p.stdin.close()
                except BrokenPipeError:
                    pass
            elif p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []


def smaps_load_block(args, outdir):
    """R captures with the shipped config under SmapsLoad: smaps' skips by
    its budget and the CPU and wall time of its reads."""
    config = os.path.join(outdir, "smaps-load.yaml")
    write_shipped_config(config, args.plugin_dir,
                         os.path.join(REPO, "config", "collectors.yaml"))
    load = SmapsLoad([int(x) for x in args.smaps_holders.split(",") if x])
    runs = []
    try:
        for _ in range(args.repeat):
            r = run_with_plugin(args, outdir, config, "smaps")
            runs.append({"processes": r["processes"],
                         "loadavg": loadavg()[0],
                         "skipped_budget": r["summary"]["skipped_budget"],
                         "skipped_rss": r["summary"]["skipped_rss"],
                         "read_cpu_ms": r["summary"]["read_us"] / 1e3,
                         "read_wall_ms":
                         r["summary"].get("read_wall_us", 0) / 1e3,
                         "capture_wall_s": r["wall"]})
    finally:
        load.stop()
    return runs


def export_fields_block(args, outdir):
    """`export` of snapshots of N and 8N fields: the CPU of each (median
    of R) and their ratio."""
    maker = os.path.join(os.path.abspath(args.build_dir), "tests",
                         "test_export")
    if not os.access(maker, os.X_OK):
        raise BenchError("%s is missing (build the tests)" % maker)
    rows = []
    for n in (args.export_fields, 8 * args.export_fields):
        snap = os.path.join(outdir, "fields-%d.ctprof" % n)
        log("fields: writing a snapshot of %d host and %d thread fields"
            % (n, n))
        subprocess.run([maker, "--write-many", str(n), snap], check=True,
                       stdout=subprocess.DEVNULL)
        cpus = []
        for _ in range(args.repeat):
            r = run_measured(args, [args.ctprof, "export", snap, "-o",
                                    "/dev/null"], outdir, "export")
            cpus.append(r["cpu"])
        os.unlink(snap)
        rows.append({"fields": 2 * n, "cpu": statistics.median(cpus)})
        log("  %d fields: %.3f s CPU" % (2 * n, rows[-1]["cpu"]))
    return rows


def print_export_fields(rows, out):
    out.write("| fields | export CPU (median) |\n|---|---|\n")
    for r in rows:
        out.write("| %d | %.3f s |\n" % (r["fields"], r["cpu"]))


def print_smaps_load(runs, out):
    out.write("| capture | processes | load average | skipped by the budget "
              "| skipped by max_rss_bytes | smaps_rollup CPU | its wall time "
              "| capture wall |\n|---|---|---|---|---|---|---|---|\n")
    for i, r in enumerate(runs):
        out.write("| %d | %d | %.1f | %d | %d | %.1f ms | %.1f ms | %.2f s "
                  "|\n" % (i + 1, r["processes"], r["loadavg"],
                            r["skipped_budget"], r["skipped_rss"],
                            r["read_cpu_ms"], r["read_wall_ms"],
                            r["capture_wall_s"]))


def print_export(rows, out):
    print("| threads | set, grouping | groups | series | families | CPU | "
          "wall | peak RSS |", file=out)
    print("|---|---|---|---|---|---|---|---|", file=out)
    for row in rows:
        for k, e in row["export"].items():
            print("| %d | %s | %d (%d kept) | %d | %d | %.3f s | %.3f s | "
                  "%.1f MiB |" % (row["load_threads"], k, e["groups"],
                                  e["kept"], e["series"], e["families"],
                                  e["cpu"], e["wall"], e["maxrss"] / 1048576),
                  file=out)


def block(args, n, outdir, configs):
    """Measure one load size; returns the row."""
    strace = {}
    load = Load(args, n)
    tasks = [(sn, k) for sn in args.set_list for k in kinds_for(args, sn)]
    runs = {sn: {k: [] for s2, k in tasks if s2 == sn}
            for sn in args.set_list}
    try:
        _, host = loadavg()
        log("N=%d: load up (%s threads in %s processes), %d threads on the "
            "host" % (n, load.threads, load.procs, host))
        # Warm the dentry and page caches the first walk of a new task set
        # fills, and the binaries; these runs are not counted.
        for sn in args.set_list:
            if SETS[sn]["reader"]:
                run_reader(args, outdir, sname=sn)
            run_ctprof(args, outdir, configs[sn], 1)
        for i in range(args.repeat):
            # Rotate the order each round so a burst of outside load does
            # not always hit the same kind.
            shift = (i * len(tasks)) // args.repeat
            for sn, k in tasks[shift:] + tasks[:shift]:
                for r in run_kind(args, outdir, configs, sn, k):
                    r.pop("stdout")
                    r.pop("stderr")
                    runs[sn][k].append(r)
            log("  round %d/%d: " % (i + 1, args.repeat) + "  ".join(
                "%s %s" % (sn, " ".join(
                    "%s %.3fs" % (k, runs[sn][k][-1]["cpu"])
                    for k in ("reader", "w1", "recn") if k in runs[sn]))
                for sn in args.set_list) + " cpu")
        if args.strace:
            for sn in args.set_list:
                if SETS[sn]["reader"]:
                    log("  strace parity, %s set" % sn)
                    strace[sn] = syscall_parity(args, outdir, configs[sn],
                                                sn)
    finally:
        err = load.stop()
        if err.strip():
            log("  " + err.strip().replace("\n", "\n  "))
    row = {"n": n, "load_threads": int(load.threads),
           "load_processes": int(load.procs), "runs": runs,
           "strace": strace, "sets": {}, "derived": {}}
    for sn in args.set_list:
        row["sets"][sn] = {k: summarize(rs) for k, rs in runs[sn].items()}
        row["derived"][sn] = derive(row["sets"][sn], runs[sn])
    if "taskstats" in row["sets"] and "issue3" in row["sets"]:
        row["derived"]["taskstats"]["taskstats_us"] = (
            row["sets"]["taskstats"]["w1"]["cpu_us_per_thread"]
            - row["sets"]["issue3"]["w1"]["cpu_us_per_thread"])
    # Others' CPU while we measured: host busy time not spent by our runs
    # (pairs overlap, so they are left out).
    all_runs = [r for sn in runs for k in runs[sn] if k != "pair"
                for r in runs[sn][k]]
    busy = sum(r["host_busy"] for r in all_runs)
    ours = sum(r["cpu"] for r in all_runs)
    wall = sum(r["wall"] for r in all_runs)
    row["background_cores"] = max(0.0, (busy - ours) / wall) if wall else 0.0
    return row


def verdicts(row):
    """(label, set, ok, measured, limit) for each target of the row."""
    v = []
    d = row["derived"]
    if "procfs" in d and "w1_cpu_ratio" in d["procfs"]:
        p = d["procfs"]
        v.append(("CPU per thread, workers=1 / reader", "procfs",
                  p["w1_cpu_ratio"] <= TARGET_CPU_RATIO,
                  "%.3fx (best runs %.3fx, paired by round %.3fx)" % (
                      p["w1_cpu_ratio"], p["w1_cpu_ratio_best"],
                      p["w1_cpu_ratio_paired"]),
                  "%.2fx" % TARGET_CPU_RATIO))
        if "wall_ratio" in p:
            v.append(("wall, workers=2 / workers=1", "procfs",
                      p["wall_ratio"] <= TARGET_WALL_RATIO,
                      "%.3fx (other CPU busy %.2f)" % (
                          p["wall_ratio"], row["background_cores"]),
                      "%.1fx" % TARGET_WALL_RATIO))
            v.append(("peak RSS (worst of w1, w2)", "procfs",
                      p["rss_worst"] <= p["rss_limit"],
                      "%.2f MiB" % mib(p["rss_worst"]),
                      "%.2f MiB" % mib(p["rss_limit"])))
    if "issue3" in d and "w1_cpu_ratio" in d["issue3"]:
        p = d["issue3"]
        v.append(("CPU per thread, workers=1 / reader", "issue3",
                  p["w1_cpu_ratio"] <= TARGET_CPU_RATIO,
                  "%.3fx (best runs %.3fx, paired by round %.3fx)" % (
                      p["w1_cpu_ratio"], p["w1_cpu_ratio_best"],
                      p["w1_cpu_ratio_paired"]),
                  "%.2fx" % TARGET_CPU_RATIO))
    for sn, st in row["strace"].items():
        c = st["compare"]
        v.append(("system calls, reader = workers=1 (strace)", sn, c["ok"],
                  "%d processes: %d identical, %d changed between runs, "
                  "%d mismatched" % (c["processes"], c["identical"],
                                     c["changed"], c["mismatch"]),
                  "0 mismatched"))
    return v


def mib(b):
    return b / (1024 * 1024)


def pf(ok):
    return "PASS" if ok else "FAIL"


def fmt_parity(st):
    """Lines describing one strace comparison."""
    c = st["compare"]
    lines = ["system calls of the walk (strace -f -y), reader / ctprof-core "
             "workers=1, threads %s / %s:" % (st["threads"]["reader"],
                                              st["threads"]["ctprof"]),
             "  " + ", ".join("%s %d / %d" % (k, x["reader"], x["ctprof"])
                              for k, x in st["walk_counts"].items()),
             "  per process: %d compared, %d identical, %d changed between "
             "the runs, %d mismatched; %d only in the reader's walk, %d "
             "only in ctprof-core's" % (
                 c["processes"], c["identical"], c["changed"],
                 c["mismatch"], c["only_reader"], c["only_ctprof"])]
    if c.get("cgroup_tree_changed"):
        lines.append("  the cgroup tree changed between the runs (another "
                     "entry count under the cgroup root)")
    fm = c["first_mismatch"]
    if fm:
        lines.append("  first mismatch, process %s:" % fm["process"])
        lines += ["    reader: " + x for x in fm["reader"]]
        lines += ["    ctprof: " + x for x in fm["ctprof"]]
    return lines


def print_text(rows, check_at, out):
    p = lambda s="": print(s, file=out)
    for sn in rows[0]["sets"]:
        kinds = rows[0]["sets"][sn]
        p("%s: CPU per thread (user+sys, median of runs; us)"
          % SETS[sn]["title"])
        if "reader" in kinds:
            p("%7s %8s | %8s %8s | %8s %6s %6s | %8s %6s" % (
                "N", "threads", "reader", "rd pt-cg", "w1", "user", "ratio",
                "w2", "ratio"))
            for r in rows:
                s, d = r["sets"][sn], r["derived"][sn]
                p("%7d %8d | %8.2f %8s | %8.2f %6.2f %6.2f | %8.2f %6.2f" % (
                    r["n"], s["w1"]["threads"],
                    s["reader"]["cpu_us_per_thread"],
                    "%.2f" % s["reader_pt"]["cpu_us_per_thread"]
                    if "reader_pt" in s else "-",
                    s["w1"]["cpu_us_per_thread"],
                    s["w1"]["user_us_per_thread"], d["w1_cpu_ratio"],
                    s["w2"]["cpu_us_per_thread"], d["w2_cpu_ratio"]))
            p("(rd pt-cg: the reader reading every thread's cgroup, as "
              "the engine did before)")
            p()
            p("Wall time (median; ms), peak RSS (MiB), snapshot size")
            p("%7s | %8s %8s %8s %6s | %7s %7s %7s %7s | %6s" % (
                "N", "reader", "w1", "w2", "2w/1w", "rss rd", "rss w1",
                "rss w2", "limit", "B/thr"))
            for r in rows:
                s, d = r["sets"][sn], r["derived"][sn]
                p("%7d | %8.1f %8.1f %8.1f %6.2f | %7.2f %7.2f %7.2f %7.2f "
                  "| %6.1f" % (
                      r["n"], s["reader"]["wall_s"] * 1e3,
                      s["w1"]["wall_s"] * 1e3, s["w2"]["wall_s"] * 1e3,
                      d["wall_ratio"], mib(s["reader"]["maxrss"]),
                      mib(s["w1"]["maxrss"]), mib(s["w2"]["maxrss"]),
                      mib(d["rss_limit"]), s["w1"]["bytes_per_thread"]))
        else:
            p("%7s %8s | %8s %6s | %8s %8s | %s" % (
                "N", "threads", "w1", "user", "wall ms", "rss MiB",
                "over issue3 w1"))
            for r in rows:
                s, d = r["sets"][sn], r["derived"][sn]
                p("%7d %8d | %8.2f %6.2f | %8.1f %8.2f | %s" % (
                    r["n"], s["w1"]["threads"],
                    s["w1"]["cpu_us_per_thread"],
                    s["w1"]["user_us_per_thread"], s["w1"]["wall_s"] * 1e3,
                    mib(s["w1"]["maxrss"]),
                    "%+.2f us" % d["taskstats_us"]
                    if "taskstats_us" in d else "-"))
        p()
    print_recorder_text(rows, p)
    p("Other load: CPUs kept busy by the rest of the host while we measured")
    p("  " + ", ".join("N=%d %.2f" % (r["n"], r["background_cores"])
                       for r in rows))
    p()
    for r in rows:
        tag = "" if r["n"] >= check_at else "  (not checked: N < %d)" \
            % check_at
        p("N=%d%s" % (r["n"], tag))
        if r["background_cores"] > BUSY_WARN:
            p("  warning: the rest of the host kept %.2f CPUs busy; the "
              "wall figures (and less so CPU) are unreliable, rerun on a "
              "quiet machine" % r["background_cores"])
        for label, sn, ok, meas, lim in verdicts(r):
            p("  %s  %s: %s %s (target <= %s)" % (pf(ok), sn, label, meas,
                                                  lim))
        for sn in r["sets"]:
            d, s = r["derived"][sn], r["sets"][sn]
            if "cg_saving_us" in d:
                p("        %s: one cgroup read per process instead of per "
                  "thread saves the reader %.2f us/thread (%.1f %%)"
                  % (sn, d["cg_saving_us"], d["cg_saving_pct"]))
            if "pair_cpu_factor" in d:
                p("        %s: 2 workers CPU %.3fx of 1 worker; two plain "
                  "readers at once: each %.3fx the CPU of one alone" % (
                      sn, d["w2_cpu_factor"], d["pair_cpu_factor"]))
            if ("w2" in s and s["w1"]["walk_s"] is not None
                    and s["w2"]["walk_s"] is not None):
                p("        %s: walk w1 %.0f ms, w2 %.0f ms (ctprof-core's "
                  "summary, to 10 ms); rest of the run (start, plugins, "
                  "writer) w1 ~%.0f ms, w2 ~%.0f ms" % (
                      sn, s["w1"]["walk_s"] * 1e3, s["w2"]["walk_s"] * 1e3,
                      (s["w1"]["wall_s"] - s["w1"]["walk_s"]) * 1e3,
                      (s["w2"]["wall_s"] - s["w2"]["walk_s"]) * 1e3))
            if "sv_cpu_ms" in d:
                p("        %s: supervisor: CPU per capture %.1f ms "
                  "supervised, %.1f ms with --no-supervise: %+.2f ms "
                  "(median), %+.2f ms (paired by round)" % (
                      sn, d["sv_w1_cpu_ms"], d["sv_w1ns_cpu_ms"],
                      d["sv_cpu_ms"], d["sv_cpu_ms_paired"]))
            if "taskstats_us" in d:
                p("        taskstats set: taskstats adds %.2f us/thread of "
                  "CPU to the issue-3 set (workers=1)" % d["taskstats_us"])
        for sn, st in r["strace"].items():
            p("        %s set, " % sn + "\n        ".join(fmt_parity(st)))


def recorder_rows(rows):
    """(set, row, way label, figures) for every recorder measurement."""
    return [(sn, r, label, r["derived"][sn]["rec"][way])
            for sn in rows[0]["sets"] for r in rows
            for way, label in (("sv", "supervised"),
                               ("ns", "--no-supervise"))
            if "rec" in r["derived"][sn]]


def print_recorder_text(rows, p):
    got = recorder_rows(rows)
    if not got:
        return
    k = got[0][1]["derived"][got[0][0]]["rec"]["k"]
    p("Recorder (record --interval %s, --count 1 and --count %d): CPU per "
      "capture (user+sys, ms), one-shot capture (w1) against the recorder "
      "once started ((cpu(%d) - cpu(1)) / %d)" % (REC_INTERVAL, k + 1,
                                                 k + 1, k))
    p("%-9s %6s %-14s | %8s %8s %6s %6s | %8s | %8s %8s %8s | %7s %7s" % (
        "set", "N", "", "1-shot", "rec/cap", "ratio", "paired", "rec -n1",
        "wall 1sh", "1st cap", "rec cap", "rss 1sh", "rss rec"))
    for sn, r, label, f in got:
        p("%-9s %6d %-14s | %8.1f %8.1f %6.2f %6.2f | %8.1f | %8.1f %8.1f "
          "%8.1f | %7.2f %7.2f" % (
              sn, r["n"], label, f["oneshot_ms"], f["rec_ms"], f["ratio"],
              f["ratio_paired"], f["rec1_ms"], f["oneshot_wall_ms"],
              f["first_wall_ms"], f["rec_wall_ms"], mib(f["oneshot_rss"]),
              mib(f["rec_rss"])))
    p("(wall: ms, the one-shot process from spawn to reap, a recorder "
      "capture from its start to its file; rss: MiB, ru_maxrss, the "
      "recorder's after %d captures)" % (k + 1))
    p()


def print_recorder_markdown(rows, p):
    got = recorder_rows(rows)
    if not got:
        return
    k = got[0][1]["derived"][got[0][0]]["rec"]["k"]
    p()
    p("Recorder (issue 15): CPU (user+sys) of one separate capture "
      "(`workers: 1`) against the recorder's per capture once started, "
      "(cpu(`record --count %d`) - cpu(`record --count 1`)) / %d, "
      "`--interval %s`:" % (k + 1, k, REC_INTERVAL))
    p()
    p("| set | N | threads | mode | one capture | recorder per capture | "
      "ratio (median / paired) | saved per capture | `record --count 1` | "
      "wall: one capture / recorder's first / later | peak RSS: one "
      "capture / recorder | other CPU busy |")
    p("|" + "---|" * 12)
    for sn, r, label, f in got:
        p("| %s | %d | %d | %s | %.1f ms | %.1f ms | %.2fx / %.2fx | "
          "%.1f ms (%.0f %%) | %.1f ms | %.0f / %.0f / %.0f ms | "
          "%.2f / %.2f MiB | %.2f CPUs |" % (
              sn, r["n"], r["derived"][sn]["rec"]["threads"], label,
              f["oneshot_ms"], f["rec_ms"], f["ratio"], f["ratio_paired"],
              f["oneshot_ms"] - f["rec_ms"], (1 - f["ratio"]) * 100,
              f["rec1_ms"], f["oneshot_wall_ms"], f["first_wall_ms"],
              f["rec_wall_ms"], mib(f["oneshot_rss"]), mib(f["rec_rss"]),
              r["background_cores"]))


def print_markdown(rows, info, args, check_at, out):
    p = lambda s="": print(s, file=out)
    p("Measured %s on %d CPUs (%s), %.1f GiB, Linux %s, as uid %d; "
      "load average %.2f before the first load; %d runs per figure "
      "(median), %d threads per load process."
      % (info["date"], info["nproc"], info["model"], info["mem_gib"],
         info["kernel"], info["uid"], info["loadavg"], args.repeat,
         args.per_process))
    for sn in rows[0]["sets"]:
        kinds = rows[0]["sets"][sn]
        p()
        p("%s:" % SETS[sn]["title"])
        p()
        if "reader" not in kinds:
            p("| N | threads walked | w1 CPU/thr | over the issue-3 set | "
              "wall w1 | RSS w1 | snapshot B/thr | other CPU busy |")
            p("|" + "---|" * 8)
            for r in rows:
                s, d = r["sets"][sn], r["derived"][sn]
                p("| %d | %d | %.2f us | %s | %.0f ms | %.2f MiB | %.1f | "
                  "%.2f CPUs |" % (
                      r["n"], s["w1"]["threads"],
                      s["w1"]["cpu_us_per_thread"],
                      "%+.2f us" % d["taskstats_us"]
                      if "taskstats_us" in d else "-",
                      s["w1"]["wall_s"] * 1e3, mib(s["w1"]["maxrss"]),
                      s["w1"]["bytes_per_thread"], r["background_cores"]))
            continue
        p("| N | threads walked | reader CPU/thr | w1 CPU/thr | w1 ratio | "
          "w2 CPU/thr | w2 ratio | wall reader | wall w1 | wall w2 | 2w/1w "
          "| RSS w1 | RSS w2 | RSS limit | snapshot B/thr | other CPU busy |")
        p("|" + "---|" * 16)
        for r in rows:
            s, d = r["sets"][sn], r["derived"][sn]
            p("| %d | %d | %.2f us | %.2f us | %.2fx | %.2f us | %.2fx | "
              "%.0f ms | %.0f ms | %.0f ms | %.2f | %.2f MiB | %.2f MiB | "
              "%.2f MiB | %.1f | %.2f CPUs |" % (
                  r["n"], s["w1"]["threads"],
                  s["reader"]["cpu_us_per_thread"],
                  s["w1"]["cpu_us_per_thread"], d["w1_cpu_ratio"],
                  s["w2"]["cpu_us_per_thread"], d["w2_cpu_ratio"],
                  s["reader"]["wall_s"] * 1e3, s["w1"]["wall_s"] * 1e3,
                  s["w2"]["wall_s"] * 1e3, d["wall_ratio"],
                  mib(s["w1"]["maxrss"]), mib(s["w2"]["maxrss"]),
                  mib(d["rss_limit"]), s["w1"]["bytes_per_thread"],
                  r["background_cores"]))
    if any("cg_saving_us" in r["derived"][sn] for r in rows
           for sn in r["derived"]):
        p()
        p("Plain reader, one cgroup read per process (what the engine does "
          "now) against one per thread (before):")
        p()
        p("| set | N | per process | per thread | saving per thread | "
          "saving |")
        p("|---|---|---|---|---|---|")
        for sn in rows[0]["sets"]:
            for r in rows:
                s, d = r["sets"][sn], r["derived"][sn]
                if "cg_saving_us" not in d:
                    continue
                p("| %s | %d | %.2f us | %.2f us | %.2f us | %.1f %% |" % (
                    sn, r["n"], s["reader"]["cpu_us_per_thread"],
                    s["reader_pt"]["cpu_us_per_thread"], d["cg_saving_us"],
                    d["cg_saving_pct"]))
    if any("sv_cpu_ms" in r["derived"][sn] for r in rows
           for sn in r["derived"]):
        p()
        p("Crash containment: CPU per capture (user+sys, workers=1) "
          "supervised (the default) and with --no-supervise:")
        p()
        p("| set | N | supervised | --no-supervise | difference (median) "
          "| difference (paired by round) |")
        p("|---|---|---|---|---|---|")
        for sn in rows[0]["sets"]:
            for r in rows:
                d = r["derived"][sn]
                if "sv_cpu_ms" not in d:
                    continue
                p("| %s | %d | %.1f ms | %.1f ms | %+.2f ms | %+.2f ms |"
                  % (sn, r["n"], d["sv_w1_cpu_ms"], d["sv_w1ns_cpu_ms"],
                     d["sv_cpu_ms"], d["sv_cpu_ms_paired"]))
    print_recorder_markdown(rows, p)
    p()
    if not any(r["n"] >= check_at for r in rows):
        p("Targets not checked: no N >= %d." % check_at)
        return
    p("| target | set | N | measured | limit | result |")
    p("|---|---|---|---|---|---|")
    for r in rows:
        if r["n"] < check_at:
            continue
        for label, sn, ok, meas, lim in verdicts(r):
            p("| %s | %s | %d | %s | %s | %s |" % (label, sn, r["n"], meas,
                                                   lim, pf(ok)))


def parse_args():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="See docs/PERFORMANCE.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1000,10000,30000",
                    help="comma list of load sizes N (default %(default)s)")
    ap.add_argument("--sets", default="procfs,issue3",
                    help="comma list of plugin sets: procfs, issue3, "
                    "taskstats, default (default %(default)s)")
    ap.add_argument("--recorder", type=int, default=0, metavar="K",
                    help="also measure `ctprof-core record`: --count 1 and "
                    "--count K+1 (K >= 1; 5 or more advised), supervised "
                    "and not, against one-shot captures")
    ap.add_argument("--recorder-only", action="store_true",
                    help="with --recorder: measure only the one-shot "
                    "capture and the recorder (no readers, no workers=2)")
    ap.add_argument("--export", action="store_true",
                    help="measure `ctprof-core export` only (issue 16)")
    ap.add_argument("--issue17", metavar="SHAPES", nargs="?",
                    const="1000,10",
                    help="measure the shipped config (workers 1 and 2, and "
                    "without CAP_NET_ADMIN) against the naive reader of "
                    "the full file set, ps -eLo and atop -w, for each load "
                    "shape (threads per process, default %(const)s); "
                    "prints syscalls per thread (issue 17)")
    ap.add_argument("--issue33", metavar="SHAPES", nargs="?",
                    const="1000,10",
                    help="the shipped config with bpf-task (one-shot, "
                    "workers 1) against the naive reader and against the "
                    "same config with bpf-task disabled (files), and the "
                    "recorder's CPU per thread per capture, for each load "
                    "shape (threads per process, default %(const)s); checks "
                    "issue 33's targets at N >= --check-at")
    ap.add_argument("--i33-captures", type=int, default=10, metavar="K",
                    help="with --issue33: the recorder is measured as "
                    "record --count K+1 less --count 1 (default %(default)s)")
    ap.add_argument("--appstats", action="store_true",
                    help="issue 19: the appstats collector's cost, without "
                    "and with a 1,000-thread publisher (not --threads)")
    ap.add_argument("--smaps-load", action="store_true",
                    help="issue 28: smaps' time budget under a stress-ng "
                    "load and large resident processes (not --threads); "
                    "target: no process skipped")
    ap.add_argument("--export-fields", type=int, default=0, metavar="N",
                    help="issue 28: export of snapshots of N and 8N fields "
                    "(not --threads); target: at most 16 times the CPU")
    ap.add_argument("--smaps-holders", default="1,2,3,3", metavar="GIB",
                    help="with --smaps-load: GiB each memory holder keeps "
                    "resident (default %(default)s)")
    ap.add_argument("--per-process", type=int, default=100,
                    help="threads per load process (default %(default)s)")
    ap.add_argument("-r", "--repeat", type=int, default=5,
                    help="runs of each kind per N (default %(default)s)")
    ap.add_argument("--no-cgroup-compare", dest="cgroup_compare",
                    action="store_false",
                    help="skip the reader with per-thread cgroup reads")
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                    help="build tree with ctprof-core, plugins/ and "
                    "tools/bench/ (default %(default)s)")
    ap.add_argument("--ctprof", help="ctprof-core binary")
    ap.add_argument("--plugin-dir", help="directory with the plugins' .so")
    ap.add_argument("--load", help="ctp-bench-load binary")
    ap.add_argument("--reader", help="ctp-bench-read binary")
    ap.add_argument("--runner", help="ctp-bench-run binary")
    ap.add_argument("--tmpdir", help="where snapshots go (default /dev/shm "
                    "when it is a tmpfs, else $TMPDIR)")
    ap.add_argument("--check-at", type=int, default=30000,
                    help="check targets on rows with N >= this "
                    "(default %(default)s)")
    ap.add_argument("--no-check", action="store_true",
                    help="report only; exit 0 whatever the verdicts")
    ap.add_argument("--strace", nargs="?", const="strace", metavar="PATH",
                    help="after timing each N, trace the reader and "
                    "ctprof-core workers=1 of each set under strace -f -y "
                    "and compare their walks call by call (not timed)")
    ap.add_argument("--markdown", action="store_true",
                    help="also print the tables as Markdown")
    ap.add_argument("--json", metavar="FILE",
                    help="write every run's figures to FILE")
    a = ap.parse_args()
    try:
        a.sizes = [int(x) for x in a.threads.split(",") if x.strip()]
    except ValueError:
        ap.error("--threads takes a comma list of integers")
    if not a.sizes or min(a.sizes) < 1 or a.repeat < 1 or a.per_process < 1:
        ap.error("sizes, --repeat and --per-process must be positive")
    if a.recorder < 0 or (a.recorder_only and not a.recorder):
        ap.error("--recorder takes K >= 1; --recorder-only needs it")
    a.set_list = [x.strip() for x in a.sets.split(",") if x.strip()]
    bad = [x for x in a.set_list if x not in SETS]
    if bad or not a.set_list or len(set(a.set_list)) != len(a.set_list):
        ap.error("--sets takes distinct names among %s" % ", ".join(SETS))
    b = os.path.abspath(a.build_dir)
    a.ctprof = a.ctprof or os.path.join(b, "ctprof-core")
    a.plugin_dir = os.path.abspath(a.plugin_dir or os.path.join(b, "plugins"))
    a.load = a.load or os.path.join(b, "tools", "bench", "ctp-bench-load")
    a.reader = a.reader or os.path.join(b, "tools", "bench", "ctp-bench-read")
    a.runner = a.runner or os.path.join(b, "tools", "bench", "ctp-bench-run")
    for path in (a.ctprof, a.load, a.reader, a.runner):
        if not os.access(path, os.X_OK):
            ap.error("%s is missing or not executable (build first, or "
                     "pass --build-dir)" % path)
    if "default" in a.set_list:
        SETS["default"]["plugins"] = enabled_plugins(
            SETS["default"]["config"])
    for sn in a.set_list:
        for plugin in SETS[sn]["plugins"]:
            if not os.path.exists(os.path.join(a.plugin_dir,
                                               plugin + ".so")):
                ap.error("no %s.so in %s (needed by the %s set)"
                         % (plugin, a.plugin_dir, sn))
    return a


def tmp_base(arg):
    if arg:
        return arg
    try:
        with open("/proc/mounts") as f:
            for line in f:
                p = line.split()
                if len(p) > 2 and p[1] == "/dev/shm" and p[2] == "tmpfs":
                    return "/dev/shm"
    except OSError:
        pass
    return None


def report_block(args, info, title, how, printer, key, rows):
    """A one-block run's header line and table, and its --json."""
    print("ctprof-core %s, %s; %d CPUs (%s), Linux %s; %s" % (
        title, info["date"], info["nproc"], info["model"], info["kernel"],
        how))
    printer(rows, sys.stdout)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, key: rows}, f, indent=1)


def main():
    args = parse_args()
    info = machine()
    if info["uid"] != 0:
        log("note: not root; other users' tasks are partly unreadable, so "
            "the walk differs from a root snapshot")
    outdir = tempfile.mkdtemp(prefix="ctprof-bench-",
                              dir=tmp_base(args.tmpdir))
    configs = {}
    for sn in args.set_list:
        configs[sn] = os.path.join(outdir, "bench-%s.yaml" % sn)
        if "config" in SETS[sn]:
            write_shipped_config(configs[sn], args.plugin_dir,
                                 SETS[sn]["config"])
        else:
            write_config(configs[sn], args.plugin_dir, SETS[sn]["plugins"])

    # A SIGTERM tears down like Ctrl-C: the finally blocks stop the load.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    rows = []
    if args.issue17:
        shipped = os.path.join(outdir, "bench-shipped.yaml")
        write_shipped_config(shipped, args.plugin_dir,
                             os.path.join(REPO, "config", "collectors.yaml"))
    try:
        if args.appstats:
            rows = [appstats_block(args, outdir, p) for p in (False, True)]
            report_block(args, info, "appstats benchmark",
                         "medians of %d interleaved rounds" % args.repeat,
                         print_appstats, "rows", rows)
            return 0
        if args.export_fields:
            rows = export_fields_block(args, outdir)
            report_block(args, info, "export of many fields",
                         "medians of %d runs" % args.repeat,
                         print_export_fields, "rows", rows)
            ratio = rows[1]["cpu"] / max(rows[0]["cpu"], 1e-3)
            failed = ratio > 16
            print("\n%s: 8 times the fields cost %.1f times the CPU"
                  % ("FAILED" if failed else "PASS", ratio))
            return 1 if failed and not args.no_check else 0
        if args.smaps_load:
            runs = smaps_load_block(args, outdir)
            report_block(args, info, "smaps budget under load",
                         "%d captures, shipped config" % args.repeat,
                         print_smaps_load, "runs", runs)
            failed = any(r["skipped_budget"] for r in runs)
            print("\n%s" % ("FAILED: processes skipped by the budget"
                            if failed else "PASS: no process skipped by "
                            "the budget"))
            return 1 if failed and not args.no_check else 0
        if args.issue33:
            cfgs = {"bpf": os.path.join(outdir, "bench-bpf.yaml"),
                    "files": os.path.join(outdir, "bench-files.yaml")}
            shipped33 = os.path.join(REPO, "config", "collectors.yaml")
            bpf_config(cfgs["bpf"], args.plugin_dir, shipped33, True)
            bpf_config(cfgs["files"], args.plugin_dir, shipped33, False)
            for n in args.sizes:
                for t in [int(x) for x in args.issue33.split(",")]:
                    rows.append(issue33_block(args, n, t, outdir, cfgs))
            print("ctprof-core issue-33 benchmark, %s; %d CPUs (%s), %.1f "
                  "GiB, Linux %s; medians of %d rounds" % (
                      info["date"], info["nproc"], info["model"],
                      info["mem_gib"], info["kernel"], args.repeat))
            print_issue33(rows, sys.stdout)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump({"machine": info, "rows": rows}, f, indent=1)
            vs = [v for r in rows for v in i33_verdicts(r, args.check_at)]
            for what, v, lim, ok in vs:
                print("%s: %s %.3f (limit %.2f)" % (
                    "PASS" if ok else "FAILED", what, v, lim))
            if not vs:
                print("targets not checked: no N >= %d" % args.check_at)
            failed = any(not ok for _, _, _, ok in vs)
            return 1 if failed and not args.no_check else 0
        for n in args.sizes:
            if args.issue17:
                for t in [int(x) for x in args.issue17.split(",")]:
                    rows.append(issue17_block(args, n, t, outdir, shipped))
                continue
            rows.append(export_block(args, n, outdir, configs)
                        if args.export else block(args, n, outdir, configs))
    except BenchError as e:
        log("bench: %s" % e)
        return 2
    except KeyboardInterrupt:
        log("bench: interrupted")
        return 2
    finally:
        shutil.rmtree(outdir, ignore_errors=True)

    if args.export:
        print_export(rows, sys.stdout)
        return 0
    if args.issue17:
        print("ctprof-core issue-17 benchmark, %s; %d CPUs (%s), %.1f GiB, "
              "Linux %s; medians of %d rounds" % (
                  info["date"], info["nproc"], info["model"],
                  info["mem_gib"], info["kernel"], args.repeat))
        print_issue17(rows, sys.stdout)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"machine": info, "rows": rows}, f, indent=1)
        return 0
    check_at = args.check_at
    print("ctprof-core benchmark, %s; %d CPUs (%s), %.1f GiB, Linux %s; "
          "load average %.2f at start"
          % (info["date"], info["nproc"], info["model"], info["mem_gib"],
             info["kernel"], info["loadavg"]))
    print()
    print_text(rows, check_at, sys.stdout)
    if args.markdown:
        print()
        print_markdown(rows, info, args, check_at, sys.stdout)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "rows": rows}, f, indent=1)

    checked = [r for r in rows if r["n"] >= check_at]
    # Targets count at N >= check_at; parity at every N, since a mismatch
    # voids the comparison itself.
    failed = any(not v[2] for r in checked for v in verdicts(r)) or any(
        not st["compare"]["ok"] for r in rows for st in r["strace"].values())
    if not checked:
        print("\ntargets not checked: no N >= %d" % check_at)
    print("\n%s" % ("some checks FAILED" if failed else
                    "all checked targets PASS"))
    return 1 if failed and not args.no_check else 0


if __name__ == "__main__":
    sys.exit(main())
