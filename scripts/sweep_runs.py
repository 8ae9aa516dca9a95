"""scripts/sweep.py's runs: the design points and their directory names, resuming (a run whose
results are there for the same configuration is not run again), running one point (the local
backend, and a Slurm array task through sweep_slurm.py) and gathering a run's table row."""
import concurrent.futures
import hashlib
import itertools
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.parse

from sweep_common import METRICS, read_json

MAX_NAME_BYTES = 200  # well below the usual 255-byte file-name limit

# Keys that change how fast a run goes, never its results: left out when a run's recorded
# configuration is compared with the one asked for.
SPEED_ONLY_KEYS = {("sim", "traffic_thread")}


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


def make_points(varied, seeds, point_list=None):
    """Runs in a fixed order: the product of the --vary lists (first key outermost) or the rows of
    the --points file, seeds innermost. This order is also the row order of the tables, whatever
    --jobs or the backend is."""
    points = []
    if point_list is None:
        value_lists = [values for _, values in varied]
        point_list = [[(k, v) for (k, _), v in zip(varied, combo)]
                      for combo in itertools.product(*value_lists)]
    for assignments in point_list:
        for seed in (seeds if seeds is not None else [None]):
            points.append({"assignments": assignments, "seed": seed,
                           "name": point_name(assignments, seed)})
    return points


def run_command(point, args, pdir):
    cmd = [args.fabricsim, "run", args.config]
    if args.single_thread:
        cmd += ["--set", "sim.traffic_thread=false"]
    for k, v in list(args.fixed) + list(point["assignments"]):
        cmd += ["--set", f"{k}={v}"]
    if point["seed"] is not None:
        cmd += ["--seed", str(point["seed"])]
    cmd += ["--out", pdir]
    return cmd


# --- resuming -----------------------------------------------------------------------------------

def strip_speed_keys(yaml_text):
    """fabricsim check's resolved configuration without the header comment and the keys of
    SPEED_ONLY_KEYS (two-level keys: 'section:' at column 0, '  key: value' below it)."""
    out, section = [], None
    for line in yaml_text.splitlines():
        if line.startswith("#"):
            continue
        if line and not line[0].isspace():
            section = line.split(":", 1)[0]
        elif section is not None and line.startswith("  ") and not line.startswith("   "):
            key = line.strip().split(":", 1)[0]
            if (section, key) in SPEED_ONLY_KEYS:
                continue
        out.append(line)
    return "\n".join(out)


def resolve(fabricsim, config, sets):
    """The resolved configuration as `fabricsim check` prints it (speed-only keys dropped), or
    None if it does not resolve."""
    cmd = [fabricsim, "check", config]
    for k, v in sets:
        cmd += ["--set", f"{k}={v}"]
    p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return strip_speed_keys(p.stdout) if p.returncode == 0 else None


def expected_config(point, args):
    sets = list(args.fixed) + list(point["assignments"])
    if point["seed"] is not None:
        sets.append(("sim.seed", str(point["seed"])))  # as run --seed: applied last
    return resolve(args.fabricsim, args.config, sets)


def recorded_config(pdir):
    """The resolved configuration fabricsim recorded in the run's summary.json, put through the
    same `fabricsim check` (YAML reads its JSON), if the run left a complete, uninterrupted result
    set whose invariants held; else None."""
    s = read_json(os.path.join(pdir, "summary.json"))
    if not isinstance(s, dict) or s.get("interrupted") is not False or \
            not isinstance(s.get("invariants"), dict) or s["invariants"].get("ok") is not True or \
            not isinstance(s.get("config"), dict):
        return None
    for f in ("perf.json", "ports.csv"):
        if not os.path.isfile(os.path.join(pdir, f)):
            return None
    return s["config"]


def reusable(point, args, tmpdir):
    """True if the run's directory holds results of exactly the configuration asked for."""
    pdir = os.path.join(args.out, point["name"])
    cfg = recorded_config(pdir)
    if cfg is None:
        return False
    want = expected_config(point, args)
    if want is None:
        return False  # does not resolve any more: run it and let it fail with its message
    # Beside the sweep's configuration file (YAML reads JSON): a relative traffic.trace.file is
    # read from the configuration's folder, as in the runs. Elsewhere if that folder is read-only
    # (then a run of a trace given by a relative path is run again).
    text = json.dumps(cfg)
    for folder in (os.path.dirname(args.config), tmpdir):
        try:
            fd, path = tempfile.mkstemp(prefix=".sweep-check-", suffix=".yaml", dir=folder)
        except OSError:
            continue
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            have = resolve(args.fabricsim, path, [])
        finally:
            os.remove(path)
        return have is not None and have == want
    return False


def find_reusable(points, args):
    """Indexes of the runs whose results are already there (none with --force)."""
    if args.force:
        return set()
    candidates = [i for i, p in enumerate(points)
                  if os.path.isfile(os.path.join(args.out, p["name"], "summary.json"))]
    if not candidates:
        return set()
    with tempfile.TemporaryDirectory(prefix="sweep-check-") as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            ok = list(pool.map(lambda i: reusable(points[i], args, tmp), candidates))
    return {i for i, good in zip(candidates, ok) if good}


# --- running one point (local backend, and a Slurm array task) ----------------------------------

def stderr_tail(text, lines=3, chars=400):
    tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    s = " | ".join(tail)
    return s if len(s) <= chars else "..." + s[-chars:]


# The simulations running now: an interrupt of the sweep alone (not of its whole process group, as
# a terminal's Ctrl-C is) is passed on to them, so that they stop and write partial results.
RUNNING = set()
RUNNING_LOCK = threading.Lock()


def fresh_dir(pdir):
    """An empty directory: never read a previous sweep's results for a run that failed early."""
    if os.path.isdir(pdir) and not os.path.islink(pdir):
        shutil.rmtree(pdir)
    elif os.path.lexists(pdir):
        os.remove(pdir)
    os.makedirs(pdir)


def execute(cmd, pdir, timeout):
    """Runs one simulation in an emptied pdir; writes command.txt, stdout.txt, stderr.txt and, at
    the end, outcome.json. Returns (exit_code, error text or '')."""
    fresh_dir(pdir)
    with open(os.path.join(pdir, "command.txt"), "w") as f:
        f.write(shlex.join(cmd) + "\n")
    err_path = os.path.join(pdir, "stderr.txt")
    timed_out = interrupted = False
    with open(os.path.join(pdir, "stdout.txt"), "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        with RUNNING_LOCK:
            RUNNING.add(proc)
        try:
            code = proc.wait(timeout=timeout)
        except KeyboardInterrupt:  # a Slurm task cancelled (SIGTERM); a local sweep's workers
            interrupted = True     # are threads and never see this
            proc.send_signal(signal.SIGINT)  # as a second signal: harmless to fabricsim
            code = proc.wait()
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
        error = f"timed out after {timeout:g} s" + (f": {error}" if error else "")
    if interrupted:
        error = "interrupted (the Slurm task was cancelled)" + (f": {error}" if error else "")
    tmp = os.path.join(pdir, ".outcome.json.part")
    with open(tmp, "w") as f:
        json.dump({"exit_code": code, "error": error}, f)
        f.write("\n")
    os.replace(tmp, os.path.join(pdir, "outcome.json"))
    return code, error


def run_point(point, args, stop):
    """Run one simulation; returns (exit_code or None if not started, error text or '')."""
    if stop.is_set():
        return None, "not run (sweep interrupted)"
    pdir = os.path.join(args.out, point["name"])
    return execute(run_command(point, args, pdir), pdir, args.timeout)


def run_local(points, pending, args):
    """Runs points[i] for i in pending, at most --jobs at a time. Returns ({i: (code, error)},
    interrupted)."""
    stop = threading.Event()
    results = {}
    interrupted = False
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_point, points[i], args, stop): i for i in pending}
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
                    print(f"[{done}/{len(pending)}] {points[i]['name']}: {verdict}",
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
                if i not in results:
                    if fut.done() and not fut.cancelled() and fut.exception() is None:
                        results[i] = fut.result()
                    else:
                        results[i] = (None, "not run (sweep interrupted)")
    return results, interrupted


# --- gathering ----------------------------------------------------------------------------------

def as_int_if_integral(x):
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def collect(point, code, error, args, reused=False):
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
            # not a column: mixed_schemas() reads it
            row["_schema"] = summary.get("schema_version", 1)
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
                # absent from the summaries of simulators before these keys
                "latency_first_half_mean_ns": lat.get("first_half_mean"),
                "latency_second_half_mean_ns": lat.get("second_half_mean"),
                "latency_first_half_count": lat.get("first_half_count"),
                "latency_second_half_count": lat.get("second_half_count"),
                "fct_mean_ns": summary.get("transport", {}).get("fct_ns", {}).get("mean"),
                "fct_p99_ns": summary.get("transport", {}).get("fct_ns", {}).get("p99"),
                "workload_end_ns": summary.get("workload", {}).get("end_ns"),
                "lost_on_links": pk.get("lost_on_links"),
                "retransmitted_packets": summary.get("transport", {}).get(
                    "retransmitted_packets", 0),
                "energy_J": summary.get("energy", {}).get("energy_J"),
                "mean_power_W": summary.get("energy", {}).get("mean_power_W"),
                "window_power_W": summary.get("energy", {}).get("window_power_W"),
                "delivered_pJ_per_bit": summary.get("energy", {}).get("delivered_pJ_per_bit"),
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
    row["reused"] = reused
    row["point"] = point["name"]
    return row


def mixed_schemas(rows):
    """The one-line refusal when the rows' summaries are of two result schemas (a reused run of
    an older build beside new ones: names and meanings differ, docs/results.md), else None."""
    first = {}
    for r in rows:
        if r.get("_schema") is not None:
            first.setdefault(r["_schema"], r["point"])
    if len(first) < 2:
        return None
    (va, pa), (vb, pb) = sorted(first.items())[:2]
    return (f"refusing to compare results of two schemas: run {pa} is summary.json "
            f"schema_version {va}, run {pb} is {vb} (names and meanings differ: docs/results.md); "
            "run the sweep again with --force, or into a new --out")
