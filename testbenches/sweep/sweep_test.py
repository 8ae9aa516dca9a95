#!/usr/bin/env python3
"""scripts/sweep.py beyond one pass on local cores (testbenches/cli/scripts_test.py has that):
resuming (only the missing runs run again), statistics over seeds (mean, Student-t 95% CI), the
steady-state verdict (`unstable`) on a real saturated point, --points, --replot; and the model's
per-half latency in summary.json that the verdict reads.

  sweep_test.py BUILD/fabricsim [unittest options]

Plotting runs under the first of $PLOT_PYTHON, this interpreter and /usr/bin/python3 that can
import matplotlib."""
import csv
import importlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWEEP = os.path.join(ROOT, "scripts", "sweep.py")
SLOTTED = os.path.join(ROOT, "configs", "validation", "slotted.yaml")
CHIP = os.path.join(ROOT, "configs", "switch_51t2.yaml")
TINY = ["--set", "sim.duration=3us", "--set", "sim.warmup=1us", "--set", "switch.ports=4"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def load_sweep_module(name):
    """scripts/NAME.py: sweep.py (the command) or one of its modules (sweep_runs, sweep_stats,
    ...), imported from scripts/ as they import each other."""
    scripts = os.path.dirname(SWEEP)
    if scripts not in sys.path:
        sys.path.append(scripts)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in scripts/
    try:
        return importlib.import_module(name)
    finally:
        sys.dont_write_bytecode = saved


_plot_python = []


def plot_python():
    if not _plot_python:
        found = None
        for cand in (os.environ.get("PLOT_PYTHON"), sys.executable, "/usr/bin/python3"):
            if cand and os.path.exists(cand) and subprocess.run(
                    [cand, "-c", "import matplotlib"], capture_output=True).returncode == 0:
                found = cand
                break
        _plot_python.append(found)
    return _plot_python[0]


class Base(unittest.TestCase):
    def setUp(self):
        self.assertTrue(os.path.isfile(FABRICSIM) and os.access(FABRICSIM, os.X_OK),
                        f"fabricsim binary not found: {FABRICSIM!r} (pass it as argument 1)")
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def sweep(self, *args, config=SLOTTED, tiny=True, python=None):
        cmd = [python or sys.executable, SWEEP, config, *(TINY if tiny else []),
               "--fabricsim", FABRICSIM, *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    def plotter(self):
        py = plot_python()
        if py is None:
            self.fail("matplotlib is importable neither by this interpreter nor by "
                      "/usr/bin/python3: install python3-matplotlib (scripts/setup.sh does)")
        return py

    def assert_png(self, path):
        self.assertTrue(os.path.isfile(path), f"{path} not written")
        with open(path, "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], PNG_SIGNATURE, path)
        self.assertGreater(len(data), 20000, f"{path} suspiciously small")


class Resume(Base):
    def mark(self, out, rows):
        """A file the sweep never writes: it survives only in a run directory not run again."""
        for r in rows:
            open(os.path.join(out, r["point"], "keep.me"), "w").close()

    def survivors(self, out, rows):
        return [os.path.exists(os.path.join(out, r["point"], "keep.me")) for r in rows]

    def test_only_missing_or_changed_runs_run_again(self):
        out = os.path.join(self.tmp, "sw")
        grid = ["--vary", "traffic.load=0.3,0.6", "--seeds", "1,2", "--jobs", "2"]
        p = self.sweep(*grid, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        first = read_csv(os.path.join(out, "sweep.csv"))
        self.assertEqual([r["reused"] for r in first], ["false"] * 4)
        # all there: nothing runs, the tables come out the same (wall_s is the runs' own)
        self.mark(out, first)
        p = self.sweep(*grid, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("4 of 4 runs already done", p.stderr)
        again = read_csv(os.path.join(out, "sweep.csv"))
        self.assertEqual([r["reused"] for r in again], ["true"] * 4)
        self.assertEqual([{k: v for k, v in r.items() if k != "reused"} for r in again],
                         [{k: v for k, v in r.items() if k != "reused"} for r in first])
        self.assertEqual(self.survivors(out, again), [True] * 4)

        # one run gone, one interrupted, one failed its invariants, one whose recorded
        # configuration differs (edited: a different seed): all four run again ...
        os.remove(os.path.join(out, first[0]["point"], "summary.json"))
        for r, edit in ((first[1], lambda s: s.update(interrupted=True)),
                        (first[2], lambda s: s["invariants"].update(ok=False)),
                        (first[3], lambda s: s["config"]["sim"].update(seed=99))):
            path = os.path.join(out, r["point"], "summary.json")
            with open(path) as f:
                s = json.load(f)
            edit(s)
            with open(path, "w") as f:
                json.dump(s, f)
        self.mark(out, first)
        p = self.sweep(*grid, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("already done", p.stderr)
        rows = read_csv(os.path.join(out, "sweep.csv"))
        self.assertEqual([r["reused"] for r in rows], ["false"] * 4)
        self.assertEqual(self.survivors(out, rows), [False] * 4)
        for r, f in zip(rows, first):  # ... and give the same results (deterministic)
            self.assertEqual(r["latency_mean_ns"], f["latency_mean_ns"])

        # a recorded configuration is compared as fabricsim resolves it: the same values written
        # differently (--set 3us vs 3000ns) are the same configuration; sim.traffic_thread (a
        # speed setting, which the sweep sets by --jobs) is left out of the comparison
        self.mark(out, rows)
        p = self.sweep(*grid[:-2], "--jobs", "1", "--set", "sim.duration=3000ns", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("4 of 4 runs already done", p.stderr)
        # a changed fixed key runs everything again; so does --force
        p = self.sweep(*grid, "--set", "traffic.pattern=uniform", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("4 of 4 runs already done", p.stderr)  # uniform is the config's own
        p = self.sweep(*grid, "--set", "switch.scheduler.iterations=2", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("already done", p.stderr)
        self.assertEqual(self.survivors(out, rows), [False] * 4)
        self.mark(out, rows)
        p = self.sweep(*grid, "--set", "switch.scheduler.iterations=2", "--force", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.survivors(out, rows), [False] * 4)

    def test_an_interrupted_sweep_continues_where_it_stopped(self):
        # One run at a time, the last one long: stop the sweep while it runs. Run again: the
        # finished runs are reused, only the stopped one runs (cut short by --timeout here).
        out = os.path.join(self.tmp, "sw")
        points = os.path.join(self.tmp, "points.csv")
        with open(points, "w") as f:
            f.write("# load, duration\ntraffic.load,sim.duration\n0.3,3us\n0.5,3us\n"
                    "0.7,100000us\n")
        args = [sys.executable, SWEEP, SLOTTED, "--set", "sim.warmup=1us", "--set",
                "switch.ports=4", "--points", points, "--jobs", "1", "--fabricsim", FABRICSIM,
                "--out", out]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        long_dir = os.path.join(out, "traffic.load=0.7,sim.duration=100000us")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and \
                not os.path.exists(os.path.join(long_dir, "stdout.txt")):
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, stdout + stderr)
        rows = read_csv(os.path.join(out, "sweep.csv"))
        self.assertEqual([r["status"] for r in rows], ["ok", "ok", "failed"])
        p = subprocess.run(args + ["--timeout", "1"], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("2 of 3 runs already done", p.stderr)
        rows = read_csv(os.path.join(out, "sweep.csv"))
        self.assertEqual([r["reused"] for r in rows], ["true", "true", "false"])
        self.assertIn("timed out after 1 s", rows[2]["error"])
        self.assertEqual([r["sim.duration"] for r in rows], ["3us", "3us", "100000us"])


class Statistics(Base):
    def test_student_t_quantiles_and_intervals(self):
        sw = load_sweep_module("sweep_stats")
        # the 0.975 quantiles of the t tables
        for nu, t in ((1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (29, 2.045),
                      (120, 1.980)):
            self.assertAlmostEqual(sw.t_quantile_975(nu), t, places=3)
        m, ci = sw.mean_ci95([1.0, 2.0, 3.0, 4.0, 5.0])
        self.assertEqual(m, 3.0)
        self.assertAlmostEqual(ci, 2.776 * math.sqrt(2.5 / 5), places=3)
        self.assertEqual(sw.mean_ci95([7.0]), (7.0, None))
        self.assertEqual(sw.mean_ci95([]), (None, None))

    def test_points_table_means_and_intervals_over_seeds(self):
        out = os.path.join(self.tmp, "sw")
        p = self.sweep("--vary", "traffic.load=0.4,0.7", "--nseeds", "3", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        runs = read_csv(os.path.join(out, "sweep.csv"))
        self.assertEqual([r["seed"] for r in runs], ["1", "2", "3"] * 2)
        points = read_csv(os.path.join(out, "sweep_points.csv"))
        self.assertEqual([pt["traffic.load"] for pt in points], ["0.4", "0.7"])
        sw = load_sweep_module("sweep_stats")
        for pt in points:
            self.assertEqual((pt["runs"], pt["runs_ok"], pt["seeds"]), ("3", "3", "1 2 3"))
            mine = [r for r in runs if r["traffic.load"] == pt["traffic.load"]]
            for m in ("latency_mean_ns", "accepted_load", "latency_p99_ns"):
                vals = [float(r[m]) for r in mine]
                mean = sum(vals) / 3
                sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / 2)
                self.assertAlmostEqual(float(pt[m + "_mean"]), mean, places=9)
                self.assertAlmostEqual(float(pt[m + "_ci95"]), sw.t_quantile_975(2) * sd /
                                       math.sqrt(3), places=9)
                if m != "latency_p99_ns":  # (bucketed: equal in some seeds)
                    self.assertGreater(float(pt[m + "_ci95"]), 0, m)  # the seeds differ
            self.assertEqual(pt["unstable"], "false", pt)
        # one seed: no interval, the mean is the run's value
        out1 = os.path.join(self.tmp, "one")
        p = self.sweep("--vary", "traffic.load=0.4", "--out", out1)
        self.assertEqual(p.returncode, 0, p.stderr)
        pt, = read_csv(os.path.join(out1, "sweep_points.csv"))
        run, = read_csv(os.path.join(out1, "sweep.csv"))
        self.assertEqual(pt["latency_mean_ns_ci95"], "")
        self.assertEqual(float(pt["latency_mean_ns_mean"]), float(run["latency_mean_ns"]))

    def test_latency_halves_in_summary(self):
        # the model's per-half figures: the two halves are all the measured packets, and their
        # means combine into the overall mean
        out = os.path.join(self.tmp, "run")
        p = subprocess.run([FABRICSIM, "run", SLOTTED, *TINY, "--set", "traffic.load=0.8",
                            "--out", out], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            lat = json.load(f)["latency_ns"]
        n1, n2 = lat["first_half_count"], lat["second_half_count"]
        self.assertEqual(n1 + n2, lat["count"])
        self.assertGreater(min(n1, n2), 0.4 * lat["count"])  # split at the window's middle
        self.assertAlmostEqual((n1 * lat["first_half_mean"] + n2 * lat["second_half_mean"]) /
                               (n1 + n2), lat["mean"], delta=1e-6 * lat["mean"])
        self.assertNotEqual(lat["first_half_mean"], lat["second_half_mean"])


class SteadyState(Base):
    def test_verdict_rules(self):
        sw = load_sweep_module("sweep_stats")

        def run(seed, offered, accepted, first, second):
            return {"k": "a", "seed": seed, "status": "ok", "offered_load": offered,
                    "accepted_load": accepted, "latency_first_half_mean_ns": first,
                    "latency_second_half_mean_ns": second, "latency_first_half_count": 100,
                    "latency_second_half_count": 100}

        def verdict(runs, load_tol=0.01, drift_tol=0.05):
            p, = sw.point_stats(runs, ["k"], load_tol, drift_tol)
            return p["unstable"], p["unstable_reason"]

        self.assertEqual(verdict([run(1, 0.9, 0.895, 100, 102)]), (False, ""))
        self.assertEqual(verdict([run(1, 0.9, 0.87, 100, 102)]), (True, "load"))
        self.assertEqual(verdict([run(1, 0.9, 0.87, 100, 102)], load_tol=0.05), (False, ""))
        self.assertEqual(verdict([run(1, 0.9, 0.9, 100, 125)]), (True, "latency"))
        self.assertEqual(verdict([run(1, 0.9, 0.9, 125, 100)]), (True, "latency"))  # draining
        self.assertEqual(verdict([run(1, 0.9, 0.8, 100, 125)]), (True, "load+latency"))
        # over seeds: a drift beyond the tolerance but within the noise (its CI) is not flagged
        noisy = [run(1, 0.9, 0.9, 100, 160), run(2, 0.9, 0.9, 100, 60), run(3, 0.9, 0.9, 100, 118)]
        self.assertEqual(verdict(noisy), (False, ""))
        steady = [run(1, 0.9, 0.9, 100, 120), run(2, 0.9, 0.9, 100, 122),
                  run(3, 0.9, 0.9, 100, 119)]
        self.assertEqual(verdict(steady), (True, "latency"))
        failed = [dict(run(1, 0.9, 0.9, 100, 100), status="failed")]
        self.assertEqual(verdict(failed), (None, "no successful run"))

    def test_islip1_at_load_09_in_20us_is_flagged_and_the_plot_rings_it(self):
        # The example: on the 51.2T chip iSLIP with one iteration at load 0.9 looks
        # saturated (accepted ~0.87) in the default 20 us, its latency still climbing; four
        # iterations are in steady state by then. 1 ms runs show iSLIP-1 stable (docs/sweeps.md).
        # The chip as it was when the issue was written: a crossbar (it is shared-memory now)
        # with free matchings (its own, one cycle an iteration and one at a time, cap iSLIP-4
        # below 0.9) and a cell-wide datapath (its 256 B/cycle one moves more per matching).
        out = os.path.join(self.tmp, "islip")
        p = self.sweep("--vary", "switch.scheduler.iterations=1,4", "--set", "traffic.load=0.9",
                       "--set", "switch.scheduler.cycles_per_iteration=0",
                       "--set", "switch.architecture=voq",
                       "--set", "switch.datapath.bytes_per_cycle=0",
                       "--nseeds", "2", "--out", out, "--plot", config=CHIP, tiny=False,
                       python=self.plotter())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1 of 2 point(s) not in steady state", p.stderr)
        it1, it4 = read_csv(os.path.join(out, "sweep_points.csv"))
        self.assertEqual((it1["unstable"], it1["unstable_reason"]), ("true", "load+latency"))
        self.assertGreater(float(it1["load_shortfall"]), 0.02)
        self.assertGreater(float(it1["latency_drift"]), 0.15)
        self.assertEqual((it4["unstable"], it4["unstable_reason"]), ("false", ""))
        self.assertLess(abs(float(it4["latency_drift"])), 0.05)
        self.assert_png(os.path.join(out, "sweep.png"))
        # a looser tolerance on a replot changes the verdict drawn, runs nothing
        png = os.path.join(self.tmp, "loose.png")
        p = subprocess.run([self.plotter(), SWEEP, "--replot", os.path.join(out, "sweep.csv"),
                            "--png", png, "--load-tolerance", "0.5", "--drift-tolerance", "5"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("unstable", p.stdout + p.stderr)
        self.assert_png(png)


class Replot(Base):
    def test_replot_redraws_without_running(self):
        out = os.path.join(self.tmp, "sw")
        p = self.sweep("--vary", "traffic.load=0.3,0.6", "--vary", "switch.scheduler.iterations=1,2",
                       "--nseeds", "2", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "sweep.png")))
        # no simulator needed: the point directories go, the tables stay
        for r in read_csv(os.path.join(out, "sweep.csv")):
            subprocess.run(["rm", "-r", os.path.join(out, r["point"])], check=True)
        py = self.plotter()
        for target, png in ((out, os.path.join(out, "sweep.png")),
                            (os.path.join(out, "sweep_points.csv"), os.path.join(self.tmp, "p.png")),
                            (os.path.join(out, "sweep.csv"), os.path.join(self.tmp, "c.png"))):
            with self.subTest(target=target):
                cmd = [py, SWEEP, "--replot", target]
                if not png.startswith(out):
                    cmd += ["--png", png]
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                                   env=dict(os.environ, PATH="/nonexistent"))
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assert_png(png)
        self.assertEqual(sorted(os.listdir(out)), ["sweep.csv", "sweep.json", "sweep.png",
                                                   "sweep_points.csv", "sweep_setup.json"])

    def test_bad_replot_and_points_arguments_exit_2(self):
        junk = os.path.join(self.tmp, "junk.csv")
        with open(junk, "w") as f:
            f.write("a,b\n1,2\n")
        bad_points = os.path.join(self.tmp, "bad.csv")
        with open(bad_points, "w") as f:
            f.write("traffic.load,sim.duration\n0.3,3us\n0.5\n")
        dup_points = os.path.join(self.tmp, "dup.csv")
        with open(dup_points, "w") as f:
            f.write("traffic.load\n0.3\n0.3\n")
        out = os.path.join(self.tmp, "never")
        cases = [
            ([SWEEP, "--replot", junk], "neither a sweep.csv"),
            ([SWEEP, "--replot", os.path.join(self.tmp, "missing.csv")], "cannot read"),
            ([SWEEP, "--replot", self.tmp], "no sweep.csv"),
            ([SWEEP, SLOTTED, "--replot", junk], "does not go with it"),
            ([SWEEP, "--replot", junk, "--vary", "traffic.load=0.1"], "does not go with it"),
            ([SWEEP, SLOTTED, "--points", bad_points, "--out", out], f"{bad_points}:3: 1 value"),
            ([SWEEP, SLOTTED, "--points", dup_points, "--out", out], "repeats"),
            ([SWEEP, SLOTTED, "--points", bad_points, "--vary", "traffic.load=0.1", "--out", out],
             "--points and --vary"),
            ([SWEEP, SLOTTED, "--vary", "traffic.load=0.1", "--nseeds", "0", "--out", out],
             "--nseeds 0"),
            ([SWEEP, SLOTTED, "--vary", "traffic.load=0.1", "--nseeds", "2", "--seeds", "1",
              "--out", out], "--seeds and --nseeds"),
            ([SWEEP, SLOTTED, "--vary", "traffic.load=0.1", "--slurm-time", "1:00", "--out", out],
             "--slurm-time goes with --backend slurm"),
            ([SWEEP, SLOTTED, "--vary", "traffic.load=0.1", "--load-tolerance", "1.5",
              "--out", out], "--load-tolerance 1.5"),
        ]
        for args, needle in cases:
            with self.subTest(args=args[1:]):
                p = subprocess.run([sys.executable, *args, "--fabricsim", FABRICSIM],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(needle, p.stderr)
                self.assertNotIn("Traceback", p.stderr)
                self.assertFalse(os.path.exists(out))


def hidden_module_env(tmp, module):
    """An environment in which `import MODULE` fails as if it were not installed (scripts_test's
    helper: a package of that name first on the path raising ModuleNotFoundError)."""
    sys.path.insert(0, os.path.join(ROOT, "testbenches", "cli"))
    from scripts_test import hidden_modules_env
    return hidden_modules_env(tmp, module)


def png_size(path):
    """(width, height) in pixels from a PNG's IHDR chunk."""
    with open(path, "rb") as f:
        head = f.read(24)
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


# Draws sweep.py's figure in the plotting interpreter and prints what a reader sees on it.
FIGURE_PROBE = r"""
import json, sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import sweep, sweep_plot
args = sweep.build_parser().parse_args(["--replot", sys.argv[2]])
points, keys, out, info = sweep_plot.replot_inputs(args)
fig = sweep_plot.figure(points, keys, info)
fig.canvas.draw()
w, h = fig.get_size_inches() * fig.dpi
axes = []
for ax in fig.axes:
    lo, hi = ax.get_ylim()
    axes.append({"title": ax.get_title(), "log": ax.get_yscale() == "log",
                 "labels": [t.get_text() for t, v in zip(ax.get_yticklabels(), ax.get_yticks())
                            if t.get_text() and lo <= v <= hi],
                 # the data lines (not the error bars' caps, which have no line)
                 "lines": [[str(l.get_color()), l.get_marker(), str(l.get_linestyle())]
                           for l in ax.get_lines() if l.get_linestyle() != "None"],
                 "texts": [t.get_text() for t in ax.texts]})
print(json.dumps({"px": [round(w), round(h)], "suptitle": fig._suptitle.get_text(), "axes": axes}))
"""


class Hostile(Base):
    """Bad input files are refused with exit 2 and one line naming the file and the line, never a
    traceback; nothing is run or written."""

    def refused(self, args, *needles):
        out = os.path.join(self.tmp, "never")
        p = subprocess.run([sys.executable, SWEEP, *args, "--fabricsim", FABRICSIM]
                           + ([] if "--replot" in args else ["--out", out]),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertLess(len(p.stderr), 400, "a message quotes a clipped value, not a whole field")
        for needle in needles:
            self.assertIn(needle, p.stderr)
        self.assertFalse(os.path.exists(out))
        return p.stderr

    def write(self, name, data):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_hostile_points_files(self):
        head = b"# load and duration\ntraffic.load,sim.duration\n0.3,3us\n"
        cases = [
            ("latin1.csv", head + b"0.5,3\xb5s\n", ":4:6: not UTF-8 text (byte 0xb5)"),
            ("huge_field.csv", head + b"0.5," + b"9" * 131073 + b"us\n",
             ":4: field larger than field limit (131072)"),
            ("quote.csv", head + b'0.5,"3us\n', ":4: unexpected end of data"),
            ("nul.csv", head + b"0.5,3us\x00\n", ":4: control character '\\x00'"),
            ("short.csv", head + b"\n# a comment keeps the line numbers\n0.5\n", ":6: 1 value"),
            ("repeat.csv", head + b"0.3,3us\n", ":4: repeats the point of line 3"),
            ("badkey.csv", b"traffic.load," + b"x y" * 40000 + b"\n0.3,1\n",
             ":1: 'x yx y", "(120000 characters)"),
            ("big.csv", head + b"#" * (17 << 20) + b"\n", "larger than 16 MiB"),
        ]
        for name, data, *needles in cases:
            with self.subTest(name=name):
                path = self.write(name, data)
                self.refused([SLOTTED, "--points", path], "--points " + path, *needles)
        with self.subTest(name="directory"):
            self.refused([SLOTTED, "--points", self.tmp], "not a regular file")
        with self.subTest(name="fifo"):  # would block in open() for ever
            fifo = os.path.join(self.tmp, "fifo.csv")
            os.mkfifo(fifo)
            self.refused([SLOTTED, "--points", fifo], "not a regular file")
        # a spreadsheet's byte-order mark and CRLF line ends are fine
        ok = self.write("excel.csv", b"\xef\xbb\xbftraffic.load\r\n0.3\r\n0.5\r\n")
        sw = load_sweep_module("sweep")
        self.assertEqual(sw.parse_points_file(ok), (["traffic.load"], [["0.3"], ["0.5"]]))

    def test_hostile_replot_tables(self):
        good = b"traffic.load,seed,point,status\n0.3,1,a,ok\n"
        cases = [
            ("latin1.csv", good + b"0.5,1,b\xe9,ok\n", ":3:8: not UTF-8 text (byte 0xe9)"),
            ("fields.csv", good + b"0.5,1,b\n", ":3: 3 fields, the header has 4"),
            ("huge.csv", good + b"0.5,1," + b"b" * 131073 + b",ok\n", ":3: field larger"),
        ]
        for name, data, needle in cases:
            with self.subTest(name=name):
                path = self.write(name, data)
                self.refused(["--replot", path], "--replot " + path + needle)


class Plot(Base):
    def probe(self, target):
        p = subprocess.run([self.plotter(), "-c", FIGURE_PROBE, os.path.dirname(SWEEP), target],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_overlapping_lines_and_a_narrow_latency_range(self):
        # Three series drawn on top of each other, latencies within 500..520 ns: every line
        # differs in colour, marker and dashes, and each log axis labels several ticks (matplotlib
        # alone labels one or none in less than a decade).
        sw = load_sweep_module("sweep_stats")
        rows = []
        for it in ("1", "2", "4"):
            for load, lat in (("0.2", 500.0), ("0.5", 510.0), ("0.8", 520.0)):
                rows.append({"traffic.load": load, "switch.scheduler.iterations": it, "seed": 1,
                             "status": "ok", "offered_load": float(load),
                             "accepted_load": float(load), "latency_mean_ns": lat,
                             "latency_p99_ns": lat + 5})
        keys = ["traffic.load", "switch.scheduler.iterations"]
        points = sw.point_stats(rows, keys, 0.01, 0.05)
        sw.write_csv(os.path.join(self.tmp, "sweep_points.csv"), sw.point_columns(keys), points)
        fig = self.probe(os.path.join(self.tmp, "sweep_points.csv"))
        self.assertLessEqual(fig["px"][0], 1400)
        logs = [ax for ax in fig["axes"] if ax["log"]]
        self.assertEqual(len(logs), 2)
        for ax in logs:
            self.assertGreaterEqual(len(ax["labels"]), 3, ax)
            self.assertNotIn("e+", " ".join(ax["labels"]))
        for ax in fig["axes"]:
            series = [tuple(l) for l in ax["lines"] if l[2] != ":"]  # not the offered load
            if ax["title"].startswith(("mean", "p99", "accepted")):
                self.assertEqual(len(series), 3, ax)
                for i in range(3):  # colour, marker and dashes each differ between the lines
                    self.assertEqual(len({s[i] for s in series}), 3, series)
        self.assertIn("base config and fixed overrides: not recorded", fig["suptitle"])

    def test_plot_states_the_base_config_and_fixed_overrides(self):
        out = os.path.join(self.tmp, "sw")
        p = self.sweep("--vary", "traffic.load=0.3,0.6", "--vary",
                       "switch.scheduler.iterations=1,2", "--set", "traffic.pattern=uniform",
                       "--out", out, "--plot", python=self.plotter())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertLessEqual(png_size(os.path.join(out, "sweep.png"))[0], 1400)
        with open(os.path.join(out, "sweep_setup.json")) as f:
            setup = json.load(f)
        self.assertEqual(setup["config"], SLOTTED)
        self.assertEqual(setup["fixed"], ["sim.duration=3us", "sim.warmup=1us", "switch.ports=4",
                                          "traffic.pattern=uniform"])
        fig = self.probe(out)  # what the plot says, redrawn from the tables
        self.assertEqual(fig["suptitle"],
                         "base config: configs/validation/slotted.yaml   x axis: traffic.load")
        text = "\n".join(t for ax in fig["axes"] for t in ax["texts"]).replace("\n  ", "  ")
        self.assertIn("base config: configs/validation/slotted.yaml", text)
        self.assertIn("fixed overrides (--set): sim.duration=3us  sim.warmup=1us  switch.ports=4  "
                      "traffic.pattern=uniform", text)
        self.assertIn("a line per switch.scheduler.iterations", text)

    def test_missing_matplotlib_exits_2_before_running(self):
        env = hidden_module_env(self.tmp, "matplotlib")
        out = os.path.join(self.tmp, "never")
        for args in (["--vary", "traffic.load=0.3", "--out", out, "--plot"],
                     ["--replot", self.tmp]):
            with self.subTest(args=args):
                if args[0] == "--replot":
                    with open(os.path.join(self.tmp, "sweep_points.csv"), "w") as f:
                        f.write("traffic.load,runs,latency_mean_ns_mean\n0.3,1,100\n")
                    cmd = [sys.executable, SWEEP, *args]
                else:
                    cmd = [sys.executable, SWEEP, SLOTTED, *TINY, "--fabricsim", FABRICSIM, *args]
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn("matplotlib", p.stderr)
                self.assertIn("apt install python3-matplotlib", p.stderr)
                self.assertFalse(os.path.exists(out), "nothing may run")
                self.assertFalse(os.path.exists(os.path.join(self.tmp, "sweep.png")))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: sweep_test.py BUILD/fabricsim [unittest options]")
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
