#!/usr/bin/env python3
"""Parameter sweeps over fabricsim runs: latency-vs-load curves and friends.

  sweep.py CONFIG.yaml --vary traffic.load=0.1,0.3,0.5,0.7,0.9 \\
           [--vary switch.scheduler.iterations=1,2,4] [--set KEY=VALUE]... [--seeds 1,2] \\
           [--jobs N] [--timeout S] --out DIR [--fabricsim PATH] [--plot]

Runs the cartesian product of the --vary lists (x the --seeds) as
`fabricsim run CONFIG --set ... [--seed S] --out DIR/<point>`, N at a time (with
`--set sim.traffic_thread=false` first when 2N exceeds the CPUs, unless the sweep sets that key:
runs sharing the CPUs are faster without the simulator's helper threads), then writes
DIR/sweep.csv and DIR/sweep.json (one row per run, in the order of the --vary lists, seeds last)
and, with --plot, DIR/sweep.png. Each point directory holds the run's usual result files plus
command.txt, stdout.txt and stderr.txt.

A value list is split on commas outside brackets, so list values work:
`--vary traffic.sizes=[64,1500],[256,9000]`. Without --seeds every run uses the configuration's seed
(sim.seed) and point names carry no seed.

Exit status: 0 if every run succeeded; 1 if any run failed (all runs are still made and recorded,
the failed points are listed at the end); 2 for bad arguments; 130 if interrupted (Ctrl-C: running
simulations write their partial results, queued points are not started, the tables are written).
"""
import argparse
import concurrent.futures
import csv
import hashlib
import io
import itertools
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FABRICSIM = os.path.join(ROOT, "build", "fabricsim")

KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
JSON_NUMBER_RE = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")
MAX_NAME_BYTES = 200  # well below the usual 255-byte file-name limit

# Result columns after the varied keys and the seed, in CSV order.
METRICS = [
    "offered_load", "accepted_load",
    "latency_mean_ns", "latency_p50_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns",
    "latency_count",
    "buffer_peak_bytes", "buffer_mean_bytes",
    "injected", "delivered", "dropped", "in_flight",  # whole run, as fabricsim prints them
    "window_injected", "window_dropped",             # packets injected in the measurement window
    "invariants_ok",
]
TRAILER = ["exit_code", "status", "wall_s", "error"]


class UsageError(Exception):
    """Bad command-line input: exit 2."""


# --- argument parsing ---------------------------------------------------------------------------

def split_values(text):
    """Split on commas that are not inside [] or {} (so YAML list values survive)."""
    items, depth, cur = [], 0, []
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced brackets")
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise ValueError("unbalanced brackets")
    items.append("".join(cur))
    return [v.strip() for v in items]


def check_key(key, spec, option):
    if not KEY_RE.match(key):
        raise UsageError(f"{option} {spec}: '{key}' is not a configuration key "
                         "(expected dotted names like traffic.load)")


def parse_vary(spec):
    """'key=v1,v2,...' -> (key, [v1, v2, ...])."""
    if "=" not in spec:
        raise UsageError(f"--vary {spec}: expected KEY=V1,V2,... (e.g. traffic.load=0.1,0.5,0.9)")
    key, _, text = spec.partition("=")
    key = key.strip()
    check_key(key, spec, "--vary")
    try:
        values = split_values(text)
    except ValueError as e:
        raise UsageError(f"--vary {spec}: {e}") from None
    if any(v == "" for v in values):
        raise UsageError(f"--vary {spec}: empty value in the list (expected KEY=V1,V2,...)")
    dups = sorted({v for v in values if values.count(v) > 1})
    if dups:
        raise UsageError(f"--vary {spec}: value {dups[0]} is listed twice")
    return key, values


def parse_set(spec):
    if "=" not in spec:
        raise UsageError(f"--set {spec}: expected KEY=VALUE (e.g. sim.duration=50us)")
    key, _, value = spec.partition("=")
    key = key.strip()
    check_key(key, spec, "--set")
    return key, value.strip()


def parse_seeds(text):
    try:
        seeds = [int(s) for s in split_values(text)]
    except ValueError:
        raise UsageError(f"--seeds {text}: expected a comma-separated list of integers "
                         "(e.g. 1,2,3)") from None
    if any(s < 0 for s in seeds):
        raise UsageError(f"--seeds {text}: seeds must be >= 0")
    if len(set(seeds)) != len(seeds):
        raise UsageError(f"--seeds {text}: a seed is listed twice")
    return seeds


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="sweep.py", description=__doc__.split("\n\n")[0],
        epilog="Writes DIR/sweep.csv, DIR/sweep.json (and DIR/sweep.png with --plot); one "
               "directory per run under DIR. Exit 0 ok, 1 a run failed, 2 bad arguments.")
    ap.add_argument("config", help="configuration file (YAML)")
    ap.add_argument("--vary", action="append", default=[], metavar="KEY=V1,V2,...",
                    help="a key and the values to sweep it over (repeatable: cartesian product)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="sets",
                    help="a fixed override for every run (repeatable)")
    ap.add_argument("--seeds", metavar="S1,S2,...",
                    help="run every point with each of these seeds (default: the config's seed)")
    ap.add_argument("--jobs", "-j", type=int, metavar="N",
                    help="parallel runs (default: number of CPUs)")
    ap.add_argument("--timeout", type=float, metavar="SECONDS",
                    help="interrupt a run after this long (it is recorded as failed)")
    ap.add_argument("--out", required=True, metavar="DIR", help="sweep output directory")
    ap.add_argument("--fabricsim", default=DEFAULT_FABRICSIM, metavar="PATH",
                    help="simulator binary (default: build/fabricsim in the repository)")
    ap.add_argument("--plot", action="store_true",
                    help="also write DIR/sweep.png (needs matplotlib)")
    args = ap.parse_args(argv)

    args.varied = []  # [(key, [values])]
    for spec in args.vary:
        key, values = parse_vary(spec)
        if any(k == key for k, _ in args.varied):
            raise UsageError(f"--vary {spec}: {key} is already varied")
        args.varied.append((key, values))
    args.fixed = [parse_set(s) for s in args.sets]
    varied_keys = {k for k, _ in args.varied}
    for key, value in args.fixed:
        if key in varied_keys:
            raise UsageError(f"--set {key}={value}: {key} is also given to --vary")
    args.seed_list = parse_seeds(args.seeds) if args.seeds is not None else None
    if args.seed_list is not None and ("sim.seed" in varied_keys
                                       or any(k == "sim.seed" for k, _ in args.fixed)):
        raise UsageError("--seeds conflicts with --vary/--set sim.seed: use one of them")
    if not args.varied and args.seed_list is None:
        raise UsageError("nothing to sweep: give at least one --vary KEY=V1,V2,... or --seeds")
    if args.plot and not args.varied:
        raise UsageError("--plot needs at least one --vary (its first key is the x axis)")
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if args.jobs is None:
        args.jobs = cpus
    elif args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: must be >= 1")
    # A run with its helper threads (sim.traffic_thread) keeps about 1.4 CPUs busy; runs that have
    # to share the CPUs are faster without them (2 runs on 2 CPUs: ~1.4x), and the results are
    # the same either way. Unless the sweep sets the key itself.
    args.single_thread = args.jobs * 2 > cpus and "sim.traffic_thread" not in varied_keys and \
        all(k != "sim.traffic_thread" for k, _ in args.fixed)
    if args.timeout is not None and not args.timeout > 0:
        raise UsageError(f"--timeout {args.timeout}: must be > 0")
    if not os.path.isfile(args.config):
        raise UsageError(f"{args.config}: no such configuration file")
    if not (os.path.isfile(args.fabricsim) and os.access(args.fabricsim, os.X_OK)):
        raise UsageError(f"{args.fabricsim}: simulator not found or not executable "
                         "(build it, or pass --fabricsim PATH)")
    return args


# --- points -------------------------------------------------------------------------------------

def safe_value(value):
    """A value as it appears in a directory name: percent-encoded outside [A-Za-z0-9_.~+-], so the
    name is filesystem-safe and still unambiguous (',' and '=' inside values are encoded too)."""
    return urllib.parse.quote(value, safe="+")


def point_name(assignments, seed=None):
    """Deterministic directory name: 'traffic.load=0.5,switch.scheduler.iterations=2,seed=1'."""
    parts = [f"{k}={safe_value(v)}" for k, v in assignments]
    if seed is not None:
        parts.append(f"seed={seed}")
    name = ",".join(parts)
    if len(name.encode()) > MAX_NAME_BYTES:
        digest = hashlib.sha1(name.encode()).hexdigest()[:12]
        name = name[:MAX_NAME_BYTES - 13] + "~" + digest
    return name


def make_points(varied, seeds):
    """Points in a fixed order: the product of the --vary lists (first key outermost), seeds
    innermost. This order is also the row order of the tables, whatever --jobs is."""
    points = []
    value_lists = [values for _, values in varied]
    for combo in itertools.product(*value_lists):
        assignments = [(k, v) for (k, _), v in zip(varied, combo)]
        for seed in (seeds if seeds is not None else [None]):
            points.append({"assignments": assignments, "seed": seed,
                           "name": point_name(assignments, seed)})
    return points


# --- running ------------------------------------------------------------------------------------

def stderr_tail(text, lines=3, chars=400):
    tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    s = " | ".join(tail)
    return s if len(s) <= chars else "..." + s[-chars:]


# The simulations running now: an interrupt of the sweep alone (not of its whole process group, as
# a terminal's Ctrl-C is) is passed on to them, so that they stop and write partial results.
RUNNING = set()
RUNNING_LOCK = threading.Lock()


def run_point(point, args, stop):
    """Run one simulation; returns (exit_code or None if not started, error text or '')."""
    pdir = os.path.join(args.out, point["name"])
    if stop.is_set():
        return None, "not run (sweep interrupted)"
    # A fresh directory: never read a previous sweep's results for a run that failed early.
    if os.path.isdir(pdir) and not os.path.islink(pdir):
        shutil.rmtree(pdir)
    elif os.path.lexists(pdir):
        os.remove(pdir)
    os.makedirs(pdir)
    cmd = [args.fabricsim, "run", args.config]
    if args.single_thread:
        cmd += ["--set", "sim.traffic_thread=false"]
    for k, v in list(args.fixed) + list(point["assignments"]):
        cmd += ["--set", f"{k}={v}"]
    if point["seed"] is not None:
        cmd += ["--seed", str(point["seed"])]
    cmd += ["--out", pdir]
    with open(os.path.join(pdir, "command.txt"), "w") as f:
        f.write(shlex.join(cmd) + "\n")
    err_path = os.path.join(pdir, "stderr.txt")
    timed_out = False
    with open(os.path.join(pdir, "stdout.txt"), "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        with RUNNING_LOCK:
            RUNNING.add(proc)
        try:
            code = proc.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.send_signal(signal.SIGINT)  # fabricsim writes partial results on SIGINT
            try:
                code = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
        finally:
            with RUNNING_LOCK:
                RUNNING.discard(proc)
    with open(err_path, errors="replace") as f:
        error = stderr_tail(f.read()) if code != 0 else ""
    if timed_out:
        error = f"timed out after {args.timeout:g} s" + (f": {error}" if error else "")
    return code, error


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def as_int_if_integral(x):
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def collect(point, code, error, args):
    """One table row: varied values, seed, metrics from summary.json/perf.json, outcome."""
    row = {k: v for k, v in point["assignments"]}
    row["seed"] = point["seed"]
    for m in METRICS:
        row[m] = None
    pdir = os.path.join(args.out, point["name"])
    summary = read_json(os.path.join(pdir, "summary.json")) if code is not None else None
    perf = read_json(os.path.join(pdir, "perf.json")) if code is not None else None
    if summary is not None:
        try:
            if row["seed"] is None:
                row["seed"] = summary.get("seed")
            tp, lat, buf, pk = (summary["throughput"], summary["latency_ns"], summary["buffer"],
                                summary["packets"])
            row.update({
                "offered_load": tp["offered_load"], "accepted_load": tp["accepted_load"],
                "latency_mean_ns": lat["mean"], "latency_p50_ns": lat["p50"],
                "latency_p99_ns": lat["p99"], "latency_p999_ns": lat["p999"],
                "latency_max_ns": lat["max"], "latency_count": lat["count"],
                "buffer_peak_bytes": as_int_if_integral(buf["peak_bytes"]),
                "buffer_mean_bytes": buf["mean_bytes"],
                "injected": pk["injected"], "delivered": pk["delivered"],
                "dropped": pk["dropped"], "in_flight": pk["in_flight"],
                "window_injected": pk.get("window", {}).get("injected"),
                "window_dropped": pk.get("window", {}).get("dropped"),
                "invariants_ok": bool(summary["invariants"]["ok"]),
            })
        except (KeyError, TypeError) as e:
            summary = None
            error = (error + "; " if error else "") + f"summary.json lacks {e}"
    elif code == 0:
        error = "exit 0 but no readable summary.json"
    row["exit_code"] = code
    row["status"] = "ok" if code == 0 and summary is not None else "failed"
    row["wall_s"] = perf.get("wall_s") if isinstance(perf, dict) else None
    row["error"] = error
    row["point"] = point["name"]
    return row


def run_all(points, args):
    """Runs every point, at most --jobs at a time. Returns (rows in point order, interrupted)."""
    stop = threading.Event()
    results = [None] * len(points)
    interrupted = False
    done = 0
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_point, p, args, stop): i for i, p in enumerate(points)}
        try:
            for fut in concurrent.futures.as_completed(futures):
                i = futures[fut]
                try:
                    code, error = fut.result()
                except Exception as e:  # e.g. the binary vanished, the disk is full
                    code, error = None, f"not run: {e}"
                results[i] = (code, error)
                done += 1
                if code is not None:
                    verdict = "ok" if code == 0 else f"FAILED (exit {code})"
                    print(f"[{done}/{len(points)}] {points[i]['name']}: {verdict}",
                          file=sys.stderr, flush=True)
        except KeyboardInterrupt:
            interrupted = True
            stop.set()
            print("sweep: interrupted; waiting for the running simulations to stop",
                  file=sys.stderr, flush=True)
            with RUNNING_LOCK:
                for proc in RUNNING:
                    proc.send_signal(signal.SIGINT)  # a second one is harmless to fabricsim
            pool.shutdown(wait=True, cancel_futures=True)
            for fut, i in futures.items():
                if results[i] is None:
                    if fut.done() and not fut.cancelled() and fut.exception() is None:
                        results[i] = fut.result()
                    else:
                        results[i] = (None, "not run (sweep interrupted)")
    rows = [collect(p, code, error, args) for p, (code, error) in zip(points, results)]
    print(f"sweep: {len(points)} runs in {time.monotonic() - t0:.1f} s with {args.jobs} jobs",
          file=sys.stderr)
    return rows, interrupted


# --- tables -------------------------------------------------------------------------------------

def columns(args):
    return [k for k, _ in args.varied] + ["seed", "point"] + METRICS + TRAILER


def csv_cell(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ""
    return str(v)


def json_value(key, v, varied_keys):
    if key in varied_keys and isinstance(v, str) and JSON_NUMBER_RE.match(v):
        return json.loads(v)  # '0.5' -> 0.5 so JSON readers get numbers
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def write_tables(rows, args):
    cols = columns(args)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows:
        w.writerow([csv_cell(row.get(c)) for c in cols])
    with open(os.path.join(args.out, "sweep.csv"), "w", newline="") as f:
        f.write(buf.getvalue())
    varied_keys = {k for k, _ in args.varied}
    objs = [{c: json_value(c, row.get(c), varied_keys) for c in cols} for row in rows]
    with open(os.path.join(args.out, "sweep.json"), "w") as f:
        json.dump(objs, f, indent=2)
        f.write("\n")


# --- plot ---------------------------------------------------------------------------------------

def numeric(values):
    try:
        return [float(v) for v in values]
    except ValueError:
        return None


def plot_sweep(rows, args, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    xkey, xvalues = args.varied[0]
    others = args.varied[1:]
    xnum = numeric(xvalues)
    xpos = xnum if xnum is not None else list(range(len(xvalues)))
    combos = list(itertools.product(*[vals for _, vals in others]))
    ok = [r for r in rows if r["status"] == "ok"]
    failed = len(rows) - len(ok)

    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2), constrained_layout=True)
    ax_mean, ax_p99, ax_load = axes
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ci, combo in enumerate(combos):
        if len(others) == 1:
            label = combo[0]  # the legend title names the key
        else:
            label = ", ".join(f"{k}={v}" for (k, _), v in zip(others, combo)) or "mean over seeds"
        color = colors[ci % len(colors)]
        series = {m: ([], []) for m in ("latency_mean_ns", "latency_p99_ns", "accepted_load",
                                        "offered_load")}
        for xi, xv in enumerate(xvalues):
            match = [r for r in ok if r[xkey] == xv
                     and all(r[k] == v for (k, _), v in zip(others, combo))]
            for m, (xs, ys) in series.items():
                vals = [r[m] for r in match if isinstance(r[m], (int, float))]
                if m.startswith("latency"):
                    vals = [v for v in vals if v > 0]  # log axis
                if vals:
                    xs.append(xpos[xi])
                    ys.append(sum(vals) / len(vals))
        ax_mean.plot(*series["latency_mean_ns"], "o-", color=color, label=label)
        ax_p99.plot(*series["latency_p99_ns"], "o-", color=color, label=label)
        ax_load.plot(*series["accepted_load"], "o-", color=color, label=label)
        ax_load.plot(*series["offered_load"], ":", color=color, alpha=0.6)
    ax_mean.set_title("mean latency")
    ax_p99.set_title("p99 latency")
    ax_load.set_title("accepted load (dotted: offered)")
    for ax in (ax_mean, ax_p99):
        ax.set_yscale("log")
        # Plain numbers, and labels at 2x and 5x too: latency curves often span under a decade.
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(ticker.FuncFormatter(
            lambda v, _: f"{v:g}" if round(v / 10 ** math.floor(math.log10(v))) in (2, 5) else ""))
        ax.set_ylabel("latency (ns)")
    ax_load.set_ylabel("fraction of capacity")
    for ax in axes:
        ax.set_xlabel(xkey)
        ax.grid(True, which="both", alpha=0.3)
        if xnum is None:
            ax.set_xticks(xpos)
            ax.set_xticklabels(xvalues)
    ax_load.legend(fontsize=8, title=", ".join(k for k, _ in others) if others else None)
    seeds = (f"mean over seeds {','.join(map(str, args.seed_list))}" if args.seed_list
             else "config seed")
    title = f"{os.path.basename(args.config)}: {len(rows)} runs, {seeds}"
    if args.fixed:
        title += "\n" + "  ".join(f"{k}={v}" for k, v in args.fixed)
    if failed:
        title += f"\n{failed} failed run(s) omitted"
    fig.suptitle(title, fontsize=10)
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- main ---------------------------------------------------------------------------------------

def main(argv=None):
    try:
        args = parse_args(argv)
    except UsageError as e:
        print(f"sweep.py: error: {e}", file=sys.stderr)
        return 2
    try:  # before any run: a bad --out fails at once
        os.makedirs(args.out, exist_ok=True)
        probe = os.path.join(args.out, ".sweep-write-test")
        with open(probe, "w"):
            pass
        os.remove(probe)
    except OSError as e:
        print(f"sweep.py: error: --out {args.out}: cannot write there: {e.strerror}",
              file=sys.stderr)
        return 2
    # `kill` and a closed terminal stop the sweep as Ctrl-C does.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler)
    points = make_points(args.varied, args.seed_list)
    rows, interrupted = run_all(points, args)
    write_tables(rows, args)
    failed = [r for r in rows if r["status"] != "ok"]
    print(f"sweep: {len(rows) - len(failed)}/{len(rows)} runs ok; "
          f"results in {os.path.join(args.out, 'sweep.csv')}")
    status = 0
    if failed:
        print(f"sweep: {len(failed)} run(s) failed:", file=sys.stderr)
        for r in failed:
            code = "not run" if r["exit_code"] is None else f"exit {r['exit_code']}"
            print(f"  {r['point']} ({code}): {r['error']}", file=sys.stderr)
        status = 1
    if args.plot:
        path = os.path.join(args.out, "sweep.png")
        try:
            plot_sweep(rows, args, path)
            print(f"sweep: plot in {path}")
        except ImportError as e:
            print(f"sweep.py: error: cannot plot: {e} (the tables are written; install "
                  f"matplotlib for {sys.executable}, on Debian: apt install python3-matplotlib)",
                  file=sys.stderr)
            status = status or 1
    if interrupted:
        return 130
    return status


if __name__ == "__main__":
    sys.exit(main())
