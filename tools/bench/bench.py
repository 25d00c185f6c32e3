#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ctprof-core benchmark: snapshot cost against a plain /proc reader.

For each load size N (default 1000, 10000, 30000 threads) this starts
ctp-bench-load (N sleeping threads, 100 per process), then runs, R times each
and interleaved, ctp-bench-read (the same system calls as a snapshot, nothing
else), ctprof-core with the procfs-stat plugin at workers=1 and workers=2,
and two readers at once (the contention any two concurrent walks pay).
Every figure of a run comes from wait4() on that child, reaped by the small
C helper ctp-bench-run: user+sys CPU, ru_maxrss, and the wall time from spawn
to reap. Medians are reported.

  CPU per thread   (user+sys) / threads walked by that run (the whole host,
                   not only N: the snapshot's recorded threads, the reader's
                   walked tids)
  ratio            ctprof-core CPU per thread / reader CPU per thread
  wall 2w/1w       median wall at workers=2 / median wall at workers=1
  peak RSS         ru_maxrss, against 16 MiB + 300 B per thread
  snapshot B/thr   compressed snapshot size / threads recorded

Targets (checked on rows with N >= --check-at, default 30000): workers=1 CPU
ratio <= 1.15; wall 2w/1w <= 0.6; peak RSS of both worker counts <= 16 MiB +
300 B/thread. Exit status: 0 all checked targets pass (or --no-check), 1 a
target failed, 2 the benchmark could not run.

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
KINDS = ("reader", "w1", "w2", "pair")
# Outside load (CPUs) above which a row's figures get a warning.
BUSY_WARN = 0.1
SUMMARY_RE = re.compile(r": (\d+) threads, (\d+) processes,(?: \d+ cgroups)?"
                        r"(?: in ([\d.]+)s)?, (\d+) bytes; "
                        r"plugins failed: (.*)$", re.M)
READER_RE = re.compile(r"tgids (\d+) tids (\d+) vanished (\d+)")
CLK_TCK = os.sysconf("SC_CLK_TCK")


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


def run_reader_pair(args, outdir):
    """Two plain readers at once: what two concurrent walks cost the kernel
    and the hardware, with no code of ours involved."""
    hs = [start_measured(args, [args.reader], outdir, "pair%d" % i)
          for i in range(2)]
    return [reader_counts(finish_measured(h)) for h in hs]


def run_reader(args, outdir):
    return reader_counts(run_measured(args, [args.reader], outdir, "reader"))


def run_ctprof(args, outdir, config, workers):
    snap = os.path.join(outdir, "snap.ctprof.zst")
    r = run_measured(args, [args.ctprof, "--config", config, "-o", snap, "-j",
                      str(workers)], outdir, "ctprof")
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

    def __init__(self, args, n):
        others = other_loads()
        if others:
            raise BenchError("another ctp-bench-load is running (pids %s); "
                             "its threads would be walked too"
                             % ", ".join(map(str, others[:5])))
        self.proc = subprocess.Popen(
            [args.load, "-n", str(n), "-t", str(args.per_process)],
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


def write_config(path, plugin_dir):
    with open(path, "w") as f:
        f.write("# written by tools/bench/bench.py\n"
                "plugin_dirs:\n  - \"%s\"\n"
                "workers: 1\n"
                "compression_level: 3\n"
                "plugins:\n  procfs-stat: {}\n" % plugin_dir)


STRACE_SYSCALLS = ("openat", "read", "close", "getdents64",
                   "sched_getaffinity")


def strace_counts(args, argv, outdir):
    """System call counts of one run under strace -f -c (not timed)."""
    log_path = os.path.join(outdir, "strace.txt")
    res = subprocess.run(
        [args.strace, "-f", "-c", "-o", log_path,
         "-e", "trace=" + ",".join(STRACE_SYSCALLS)] + argv,
        stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if res.returncode != 0:
        raise BenchError("strace %s failed:\n%s" % (argv[0],
                                                    res.stderr.strip()))
    counts = {}
    with open(log_path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 5 and p[-1] in STRACE_SYSCALLS:
                counts[p[-1]] = int(p[3])
    os.unlink(log_path)
    threads = None
    m = SUMMARY_RE.search(res.stderr) or READER_RE.search(res.stdout)
    if m:
        threads = int(m.group(1) if m.re is SUMMARY_RE else m.group(2))
    return counts, threads


def syscall_parity(args, outdir, config):
    """Check that the reader makes the snapshot's per-task calls."""
    snap = os.path.join(outdir, "strace.ctprof.zst")
    rc, rt = strace_counts(args, [args.reader], outdir)
    cc, ct = strace_counts(args, [args.ctprof, "--config", config, "-o",
                                  snap, "-j", "1"], outdir)
    if os.path.exists(snap):
        os.unlink(snap)
    out = {}
    for name in STRACE_SYSCALLS:
        out[name] = {"reader": rc.get(name, 0), "ctprof": cc.get(name, 0)}
    out["threads"] = {"reader": rt, "ctprof": ct}
    return out


def med(runs, key):
    return statistics.median(r[key] for r in runs)


def med_per_thread(runs, key):
    return statistics.median(r[key] / r["threads"] for r in runs)


def block(args, n, outdir, config):
    """Measure one load size; returns the row."""
    row_strace = None
    load = Load(args, n)
    try:
        _, host = loadavg()
        log("N=%d: load up (%s threads in %s processes), %d threads on the "
            "host" % (n, load.threads, load.procs, host))
        # Warm the dentry and page caches the first walk of a new task set
        # fills, and the binaries; these runs are not counted.
        run_reader(args, outdir)
        run_ctprof(args, outdir, config, 1)
        runs = {k: [] for k in KINDS}
        for i in range(args.repeat):
            order = KINDS[i % 4:] + KINDS[:i % 4]
            for k in order:
                if k == "reader":
                    rs = [run_reader(args, outdir)]
                elif k == "pair":
                    rs = run_reader_pair(args, outdir)
                else:
                    rs = [run_ctprof(args, outdir, config, int(k[1:]))]
                for r in rs:
                    r.pop("stdout")
                    r.pop("stderr")
                    runs[k].append(r)
            log("  round %d/%d: reader %.3fs  w1 %.3fs  w2 %.3fs cpu"
                % (i + 1, args.repeat, runs["reader"][-1]["cpu"],
                   runs["w1"][-1]["cpu"], runs["w2"][-1]["cpu"]))
        if args.strace:
            row_strace = syscall_parity(args, outdir, config)
    finally:
        err = load.stop()
        if err.strip():
            log("  " + err.strip().replace("\n", "\n  "))
    row = {"n": n, "load_threads": int(load.threads),
           "load_processes": int(load.procs), "runs": runs,
           "strace": row_strace}
    for k in KINDS:
        rs = runs[k]
        row[k] = {
            "threads": med(rs, "threads"),
            "cpu_us_per_thread": med_per_thread(rs, "cpu") * 1e6,
            "user_us_per_thread": med_per_thread(rs, "user") * 1e6,
            "sys_us_per_thread": med_per_thread(rs, "sys") * 1e6,
            "wall_s": med(rs, "wall"),
            "maxrss": med(rs, "maxrss"),
            "bytes_per_thread": med_per_thread(rs, "bytes"),
            "walk_s": (statistics.median(r["walk"] for r in rs)
                       if all(r["walk"] is not None for r in rs) else None),
        }
    base = row["reader"]["cpu_us_per_thread"]
    for k in ("w1", "w2"):
        row[k]["cpu_ratio"] = row[k]["cpu_us_per_thread"] / base
    # Outside load only ever adds CPU time, so the best runs are a second,
    # steadier estimate; shown beside the median, never used for verdicts.
    best = lambda k: min(r["cpu"] / r["threads"] for r in runs[k])
    row["w1"]["cpu_ratio_best"] = best("w1") / best("reader")
    row["wall_ratio"] = row["w2"]["wall_s"] / row["w1"]["wall_s"]
    # Each of two concurrent plain walks against one alone: the contention
    # any 2-worker walk pays before our code does anything.
    row["pair_cpu_factor"] = row["pair"]["cpu_us_per_thread"] / base
    row["w2_cpu_factor"] = (row["w2"]["cpu_us_per_thread"]
                            / row["w1"]["cpu_us_per_thread"])
    threads = row["w1"]["threads"]
    row["rss_limit"] = TARGET_RSS_BASE + TARGET_RSS_PER_THREAD * threads
    row["rss_worst"] = max(row["w1"]["maxrss"], row["w2"]["maxrss"])
    # Others' CPU while we measured: host busy time not spent by our runs.
    all_runs = [r for k in ("reader", "w1", "w2") for r in runs[k]]
    busy = sum(r["host_busy"] for r in all_runs)
    ours = sum(r["cpu"] for r in all_runs)
    wall = sum(r["wall"] for r in all_runs)
    row["background_cores"] = max(0.0, (busy - ours) / wall) if wall else 0.0
    return row


def verdicts(row):
    return {
        "cpu": row["w1"]["cpu_ratio"] <= TARGET_CPU_RATIO,
        "wall": row["wall_ratio"] <= TARGET_WALL_RATIO,
        "rss": row["rss_worst"] <= row["rss_limit"],
    }


def mib(b):
    return b / (1024 * 1024)


def pf(ok):
    return "PASS" if ok else "FAIL"


def print_text(rows, check_at, out):
    p = lambda s="": print(s, file=out)
    p("CPU per thread (user+sys, median of runs; us)")
    p("%7s %8s | %8s | %8s %6s %6s | %8s %6s" % (
        "N", "threads", "reader", "w1", "user", "ratio", "w2", "ratio"))
    for r in rows:
        p("%7d %8d | %8.2f | %8.2f %6.2f %6.2f | %8.2f %6.2f" % (
            r["n"], r["w1"]["threads"], r["reader"]["cpu_us_per_thread"],
            r["w1"]["cpu_us_per_thread"], r["w1"]["user_us_per_thread"],
            r["w1"]["cpu_ratio"], r["w2"]["cpu_us_per_thread"],
            r["w2"]["cpu_ratio"]))
    p()
    p("Wall time (median; ms), peak RSS (MiB), snapshot size, other load")
    p("%7s | %8s %8s %8s %6s | %7s %7s %7s %7s | %6s | %5s" % (
        "N", "reader", "w1", "w2", "2w/1w", "rss rd", "rss w1", "rss w2",
        "limit", "B/thr", "other"))
    for r in rows:
        p("%7d | %8.1f %8.1f %8.1f %6.2f | %7.2f %7.2f %7.2f %7.2f | %6.1f "
          "| %5.2f" % (
              r["n"], r["reader"]["wall_s"] * 1e3, r["w1"]["wall_s"] * 1e3,
              r["w2"]["wall_s"] * 1e3, r["wall_ratio"],
              mib(r["reader"]["maxrss"]), mib(r["w1"]["maxrss"]),
              mib(r["w2"]["maxrss"]), mib(r["rss_limit"]),
              r["w1"]["bytes_per_thread"], r["background_cores"]))
    p("(other: CPUs kept busy by the rest of the host while we measured)")
    p()
    for r in rows:
        v = verdicts(r)
        tag = "" if r["n"] >= check_at else "  (not checked: N < %d)" \
            % check_at
        p("N=%d%s" % (r["n"], tag))
        if r["background_cores"] > BUSY_WARN:
            p("  warning: the rest of the host kept %.2f CPUs busy; the "
              "wall figures (and less so CPU) are unreliable, rerun on a "
              "quiet machine" % r["background_cores"])
        p("  %s  CPU/thread workers=1 %.3fx reader (target <= %.2fx; best "
          "runs: %.3fx)" % (pf(v["cpu"]), r["w1"]["cpu_ratio"],
                            TARGET_CPU_RATIO, r["w1"]["cpu_ratio_best"]))
        p("  %s  wall workers=2 %.3fx workers=1 (target <= %.2fx)"
          % (pf(v["wall"]), r["wall_ratio"], TARGET_WALL_RATIO))
        p("  %s  peak RSS %.2f MiB (target <= %.2f MiB = 16 MiB + 300 B x "
          "%d threads)" % (pf(v["rss"]), mib(r["rss_worst"]),
                           mib(r["rss_limit"]), r["w1"]["threads"]))
        p("        2 workers: CPU %.3fx of 1 worker; two plain readers at "
          "once: each %.3fx the CPU of one alone" % (
              r["w2_cpu_factor"], r["pair_cpu_factor"]))
        st = r.get("strace")
        if st:
            p("        system calls (strace -f -c), reader / ctprof-core w1, "
              "threads %s / %s:" % (st["threads"]["reader"],
                                    st["threads"]["ctprof"]))
            p("        " + ", ".join("%s %d / %d" % (k, st[k]["reader"],
                                                    st[k]["ctprof"])
                                   for k in STRACE_SYSCALLS))
        if r["w1"]["walk_s"] is not None and r["w2"]["walk_s"] is not None:
            p("        walk w1 %.0f ms, w2 %.0f ms (ctprof-core's summary, to "
              "10 ms); rest of the run (start, plugins, writer) w1 ~%.0f ms, "
              "w2 ~%.0f ms" % (
                  r["w1"]["walk_s"] * 1e3, r["w2"]["walk_s"] * 1e3,
                  (r["w1"]["wall_s"] - r["w1"]["walk_s"]) * 1e3,
                  (r["w2"]["wall_s"] - r["w2"]["walk_s"]) * 1e3))


def print_markdown(rows, info, args, check_at, out):
    p = lambda s="": print(s, file=out)
    p("Measured %s on %d CPUs (%s), %.1f GiB, Linux %s, as uid %d; "
      "load average %.2f before the first load; %d runs per figure "
      "(median), %d threads per load process."
      % (info["date"], info["nproc"], info["model"], info["mem_gib"],
         info["kernel"], info["uid"], info["loadavg"], args.repeat,
         args.per_process))
    p()
    p("| N | threads walked | reader CPU/thr | w1 CPU/thr | w1 ratio | "
      "w2 CPU/thr | w2 ratio | wall reader | wall w1 | wall w2 | 2w/1w | "
      "RSS w1 | RSS w2 | RSS limit | snapshot B/thr | other CPU busy |")
    p("|" + "---|" * 16)
    for r in rows:
        p("| %d | %d | %.2f us | %.2f us | %.2fx | %.2f us | %.2fx | "
          "%.0f ms | %.0f ms | %.0f ms | %.2f | %.2f MiB | %.2f MiB | "
          "%.2f MiB | %.1f | %.2f CPUs |" % (
              r["n"], r["w1"]["threads"], r["reader"]["cpu_us_per_thread"],
              r["w1"]["cpu_us_per_thread"], r["w1"]["cpu_ratio"],
              r["w2"]["cpu_us_per_thread"], r["w2"]["cpu_ratio"],
              r["reader"]["wall_s"] * 1e3, r["w1"]["wall_s"] * 1e3,
              r["w2"]["wall_s"] * 1e3, r["wall_ratio"],
              mib(r["w1"]["maxrss"]), mib(r["w2"]["maxrss"]),
              mib(r["rss_limit"]), r["w1"]["bytes_per_thread"],
              r["background_cores"]))
    p()
    if not any(r["n"] >= check_at for r in rows):
        p("Targets not checked: no N >= %d." % check_at)
        return
    p("| target | N | measured | limit | result |")
    p("|---|---|---|---|---|")
    for r in rows:
        if r["n"] < check_at:
            continue
        v = verdicts(r)
        p("| CPU per thread, workers=1 / reader | %d | %.3fx (best runs "
          "%.3fx) | 1.15x | %s |" % (r["n"], r["w1"]["cpu_ratio"],
                                     r["w1"]["cpu_ratio_best"],
                                     pf(v["cpu"])))
        p("| wall, workers=2 / workers=1 | %d | %.3fx (other CPU busy "
          "%.2f) | 0.6x | %s |" % (r["n"], r["wall_ratio"],
                                   r["background_cores"], pf(v["wall"])))
        p("| peak RSS (worst of w1, w2) | %d | %.2f MiB | %.2f MiB | %s |"
          % (r["n"], mib(r["rss_worst"]), mib(r["rss_limit"]),
             pf(v["rss"])))


def parse_args():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="See docs/PERFORMANCE.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1000,10000,30000",
                    help="comma list of load sizes N (default %(default)s)")
    ap.add_argument("--per-process", type=int, default=100,
                    help="threads per load process (default %(default)s)")
    ap.add_argument("-r", "--repeat", type=int, default=5,
                    help="runs of each kind per N (default %(default)s)")
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                    help="build tree with ctprof-core, plugins/ and "
                    "tools/bench/ (default %(default)s)")
    ap.add_argument("--ctprof", help="ctprof-core binary")
    ap.add_argument("--plugin-dir", help="directory with procfs-stat.so")
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
                    help="after timing each N, count the reader's and "
                    "ctprof-core's openat/read/close/getdents64/"
                    "sched_getaffinity calls under strace (not timed)")
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
    if not os.path.exists(os.path.join(a.plugin_dir, "procfs-stat.so")):
        ap.error("no procfs-stat.so in %s" % a.plugin_dir)
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


def main():
    args = parse_args()
    info = machine()
    if info["uid"] != 0:
        log("note: not root; other users' tasks are partly unreadable, so "
            "the walk differs from a root snapshot")
    outdir = tempfile.mkdtemp(prefix="ctprof-bench-",
                              dir=tmp_base(args.tmpdir))
    config = os.path.join(outdir, "bench.yaml")
    write_config(config, args.plugin_dir)

    # A SIGTERM tears down like Ctrl-C: the finally blocks stop the load.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    rows = []
    try:
        for n in args.sizes:
            rows.append(block(args, n, outdir, config))
    except BenchError as e:
        log("bench: %s" % e)
        return 2
    except KeyboardInterrupt:
        log("bench: interrupted")
        return 2
    finally:
        shutil.rmtree(outdir, ignore_errors=True)

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
    if not checked:
        print("\ntargets not checked: no N >= %d" % check_at)
        return 0
    failed = any(not all(verdicts(r).values()) for r in checked)
    print("\n%s" % ("some targets FAILED" if failed else
                    "all checked targets PASS"))
    return 1 if failed and not args.no_check else 0


if __name__ == "__main__":
    sys.exit(main())
