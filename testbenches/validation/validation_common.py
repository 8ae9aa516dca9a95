"""What every validation case group shares (validate.py and validate_*.py import it; it imports
none of them): the repository root, the Runner that runs `fabricsim run` and reads its summary, and
the two kinds of row, a value with a tolerance and a band."""
import csv
import json
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Runner:
    def __init__(self, fabricsim, workdir, helper_threads=True):
        self.fabricsim = fabricsim
        self.workdir = workdir
        self.count = 0
        self.helper_threads = helper_threads

    def run(self, config, sets, horizon=False):
        """Runs fabricsim; any failure raises. `horizon`: the run stops at a fixed time with work
        still in flight by design (a rate measured over a horizon, not a job run to its end), so
        exit 3 with no violation but the messages left unfinished is accepted."""
        self.count += 1
        out = os.path.join(self.workdir, f"run{self.count}")
        cmd = [self.fabricsim, "run", config, "--out", out]
        if not self.helper_threads:
            cmd += ["--set", "sim.traffic_thread=false"]
        for s in sets:
            cmd += ["--set", s]
        p = subprocess.run(cmd, capture_output=True, text=True)
        s = None
        if p.returncode in (0, 3):
            with open(os.path.join(out, "summary.json")) as f:
                s = json.load(f)
        unfinished_only = horizon and p.returncode == 3 and all(
            re.match(r"nic: \d+ of \d+ messages unfinished when the run ended", v)
            for v in s["invariants"]["violations"])
        if p.returncode != 0 and not unfinished_only:
            raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
        if not s["invariants"]["ok"] and not unfinished_only:
            raise RuntimeError(f"invariants violated: {s['invariants']['violations']}")
        self.last_out = out
        return s

    def links(self):
        """The last run's links.csv: one row per direction of every cable."""
        with open(os.path.join(self.last_out, "links.csv")) as f:
            return list(csv.DictReader(f))


def walk(d, prefix=""):
    """A summary's nested counters as (dotted name, value) pairs."""
    for k, v in d.items():
        if isinstance(v, dict):
            yield from walk(v, prefix + k + ".")
        else:
            yield prefix + k, v


def row(case, params, expected, measured, tol, note=""):
    return {"case": case, "params": params, "expected": expected, "measured": measured,
            "tol": tol, "ok": abs(measured - expected) <= tol, "note": note}


def band(case, params, lo, hi, measured, note=""):
    """A row whose expectation is an interval (a bound with a stated shortfall)."""
    return {"case": case, "params": params, "lo": lo, "hi": hi, "expected": (lo + hi) / 2,
            "measured": measured, "tol": (hi - lo) / 2, "ok": lo <= measured <= hi, "note": note}
