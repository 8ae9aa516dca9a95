"""scripts/sweep.py's statistics and tables: the mean and 95% Student-t confidence interval of
each metric over a design point's seeds, the steady-state verdict, and the files sweep.csv,
sweep.json, sweep_points.csv and sweep_setup.json."""
import csv
import io
import json
import math
import os
import re

from sweep_common import METRICS, TRAILER

JSON_NUMBER_RE = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")
# Per design point (sweep_points.csv): mean and 95% CI over its seeds of these.
STAT_METRICS = [
    "offered_load", "accepted_load",
    "latency_mean_ns", "latency_p50_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns",
    "buffer_peak_bytes", "buffer_mean_bytes", "window_dropped",
    "latency_first_half_mean_ns", "latency_second_half_mean_ns",
    "fct_mean_ns", "fct_p99_ns", "workload_end_ns",
    "lost_on_links", "retransmitted_packets", "energy_J", "mean_power_W", "window_power_W", "delivered_pJ_per_bit",
]
POINT_HEAD = ["runs", "runs_ok", "seeds"]
POINT_TAIL = ["load_shortfall", "latency_drift", "latency_drift_ci95", "unstable",
              "unstable_reason"]
DEFAULT_LOAD_TOLERANCE = 0.01
DEFAULT_DRIFT_TOLERANCE = 0.05


# --- statistics over seeds ----------------------------------------------------------------------

def _t_pdf(x, nu):
    c = math.exp(math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2)) / math.sqrt(nu * math.pi)
    return c * (1 + x * x / nu) ** (-(nu + 1) / 2)


def _t_cdf_from_0(x, nu, steps=400):
    """P(0 <= T <= x) for Student's t with nu degrees of freedom (Simpson's rule)."""
    h = x / steps
    s = _t_pdf(0, nu) + _t_pdf(x, nu)
    for k in range(1, steps):
        s += (4 if k % 2 else 2) * _t_pdf(k * h, nu)
    return s * h / 3


_T975 = {}


def t_quantile_975(nu):
    """The 0.975 quantile of Student's t with nu degrees of freedom: a 95% two-sided interval."""
    if nu not in _T975:
        lo, hi = 0.0, 1.0
        while _t_cdf_from_0(hi, nu) < 0.475:
            hi *= 2
        for _ in range(60):
            mid = (lo + hi) / 2
            if _t_cdf_from_0(mid, nu) < 0.475:
                lo = mid
            else:
                hi = mid
        _T975[nu] = (lo + hi) / 2
    return _T975[nu]


def mean_ci95(values):
    """(mean, half-width of the 95% Student-t confidence interval of the mean); the half-width is
    None for fewer than two values. (None, None) for none."""
    n = len(values)
    if n == 0:
        return None, None
    m = sum(values) / n
    if n < 2:
        return m, None
    var = sum((v - m) ** 2 for v in values) / (n - 1)
    return m, t_quantile_975(n - 1) * math.sqrt(var / n)


def num(v):
    """A table value as a float, or None (empty, missing, not a number)."""
    if v is None or isinstance(v, bool):
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def point_stats(rows, keys, load_tol, drift_tol):
    """One row per design point (the runs of equal varied values, in order of first appearance):
    mean and 95% CI over its successful runs of each STAT_METRICS, and the steady-state verdict.

    Unstable when (a) the mean accepted load falls short of the mean offered load by more than
    load_tol of it (the fabric does not carry what is offered: saturated, or dropping), or (b) the
    mean over the runs of the relative latency drift (second half's mean latency minus the first
    half's, over the first half's) exceeds drift_tol in size and, with two seeds or more, its 95%
    CI too (beyond noise): the queues were still filling (or draining) when the window ended."""
    groups = {}
    for r in rows:
        groups.setdefault(tuple(str(r.get(k)) for k in keys), []).append(r)
    out = []
    for values, runs in groups.items():
        ok = [r for r in runs if r.get("status") == "ok"]
        p = dict(zip(keys, values))
        p["runs"] = len(runs)
        p["runs_ok"] = len(ok)
        p["seeds"] = " ".join(str(r.get("seed")) for r in ok if r.get("seed") not in (None, ""))
        for m in STAT_METRICS:
            vals = [x for x in (num(r.get(m)) for r in ok) if x is not None]
            p[m + "_mean"], p[m + "_ci95"] = mean_ci95(vals)
        offered, accepted = p["offered_load_mean"], p["accepted_load_mean"]
        p["load_shortfall"] = ((offered - accepted) / offered
                               if offered is not None and accepted is not None and offered > 0
                               else None)
        drifts = []
        for r in ok:
            first, second = num(r.get("latency_first_half_mean_ns")), \
                num(r.get("latency_second_half_mean_ns"))
            n1, n2 = num(r.get("latency_first_half_count")), num(r.get("latency_second_half_count"))
            if first and second is not None and n1 and n2:
                drifts.append((second - first) / first)
        p["latency_drift"], p["latency_drift_ci95"] = mean_ci95(drifts)
        reasons = []
        if p["load_shortfall"] is not None and p["load_shortfall"] > load_tol:
            reasons.append("load")
        d, ci = p["latency_drift"], p["latency_drift_ci95"]
        if d is not None and abs(d) > drift_tol and (ci is None or abs(d) > ci):
            reasons.append("latency")
        if not ok:
            p["unstable"], p["unstable_reason"] = None, "no successful run"
        else:
            p["unstable"] = bool(reasons)
            p["unstable_reason"] = "+".join(reasons)
        out.append(p)
    return out


# --- tables -------------------------------------------------------------------------------------

def columns(args):
    return [k for k, _ in args.varied] + ["seed", "point"] + METRICS + TRAILER


def point_columns(keys):
    return list(keys) + POINT_HEAD + [m + suffix for m in STAT_METRICS
                                      for suffix in ("_mean", "_ci95")] + POINT_TAIL


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


def write_csv(path, cols, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows:
        w.writerow([csv_cell(row.get(c)) for c in cols])
    tmp = path + ".part"
    with open(tmp, "w", newline="") as f:
        f.write(buf.getvalue())
    os.replace(tmp, path)


def write_tables(rows, points, args):
    write_csv(os.path.join(args.out, "sweep.csv"), columns(args), rows)
    varied_keys = {k for k, _ in args.varied}
    cols = columns(args)
    objs = [{c: json_value(c, row.get(c), varied_keys) for c in cols} for row in rows]
    with open(os.path.join(args.out, "sweep.json"), "w") as f:
        json.dump(objs, f, indent=2)
        f.write("\n")
    keys = [k for k, _ in args.varied]
    write_csv(os.path.join(args.out, "sweep_points.csv"), point_columns(keys), points)
    with open(os.path.join(args.out, "sweep_setup.json"), "w") as f:
        json.dump(setup_record(args), f, indent=2)
        f.write("\n")


def setup_record(args):
    """What every run shares and what varies (sweep_setup.json): the plot states it, and
    --replot finds it beside the tables."""
    return {"config": args.config, "fixed": [f"{k}={v}" for k, v in args.fixed],
            "speed_only": ["sim.traffic_thread=false"] if args.single_thread else [],
            "varied": [[k, vs] for k, vs in args.varied], "seeds": args.seed_list,
            "load_tolerance": args.load_tolerance, "drift_tolerance": args.drift_tolerance}
