#!/usr/bin/env python3
"""Tests of the analysis scripts on tiny simulations: scripts/sweep.py (parameter sweeps into
sweep.csv/sweep.json/sweep.png) and scripts/plot_results.py (plots of one run); and of every script
in scripts/ this suite owns: --help complete with defaults, a missing Python module one line naming
the Debian package (exit 2), bad input files exit 2 with one line naming the file and the line
(timeline.py, phase_report.py, plot_busbw.py, make_workload.py, make_chakra_examples.py).

  scripts_test.py BUILD/fabricsim [unittest options]

Plotting runs under the first of $PLOT_PYTHON, this interpreter and /usr/bin/python3 that can
import matplotlib (Debian's python3-matplotlib lives in the system interpreter only)."""
import ast
import csv
import importlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

FABRICSIM = os.environ.get("FABRICSIM", "")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWEEP = os.path.join(ROOT, "scripts", "sweep.py")
PLOT = os.path.join(ROOT, "scripts", "plot_results.py")
SLOTTED = os.path.join(ROOT, "configs", "validation", "slotted.yaml")
# 4 ports for 3 us: a few thousand one-cell packets, well under a second per run.
TINY = ["--set", "sim.duration=3us", "--set", "sim.warmup=1us", "--set", "switch.ports=4"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

_plot_python = []


def plot_python():
    """An interpreter that can import matplotlib, or None."""
    if not _plot_python:
        found = None
        for cand in (os.environ.get("PLOT_PYTHON"), sys.executable, "/usr/bin/python3"):
            if cand and os.path.exists(cand) and subprocess.run(
                    [cand, "-c", "import matplotlib"], capture_output=True).returncode == 0:
                found = cand
                break
        _plot_python.append(found)
    return _plot_python[0]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def without_column(csv_text, column):
    rows = list(csv.reader(io.StringIO(csv_text)))
    i = rows[0].index(column)
    return [r[:i] + r[i + 1:] for r in rows]


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


class ScriptsTestCase(unittest.TestCase):
    def setUp(self):
        self.assertTrue(os.path.isfile(FABRICSIM) and os.access(FABRICSIM, os.X_OK),
                        f"fabricsim binary not found: {FABRICSIM!r} (pass it as argument 1)")
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def plot_python(self):
        py = plot_python()
        if py is None:
            self.fail(f"matplotlib is importable neither by {sys.executable} nor by "
                      "/usr/bin/python3: install python3-matplotlib (scripts/setup.sh does)")
        return py

    def no_matplotlib_env(self):
        """An environment in which `import matplotlib` fails, to prove an import is lazy."""
        shadow = os.path.join(self.tmp, "shadow", "matplotlib")
        os.makedirs(shadow, exist_ok=True)
        with open(os.path.join(shadow, "__init__.py"), "w") as f:
            f.write("raise ImportError('matplotlib blocked by scripts_test')\n")
        return dict(os.environ, PYTHONPATH=os.path.dirname(shadow))

    def sweep(self, *args, python=None, env=None, tiny=True):
        cmd = [python or sys.executable, SWEEP, SLOTTED, *(TINY if tiny else []),
               "--fabricsim", FABRICSIM, *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)

    def plot(self, *args, python=None, env=None):
        return subprocess.run([python or self.plot_python(), PLOT, *args], capture_output=True,
                              text=True, env=env, timeout=120)

    def assert_png(self, path, min_bytes=5000):
        self.assertTrue(os.path.isfile(path), f"{path} not written")
        with open(path, "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], PNG_SIGNATURE, path)
        self.assertGreater(len(data), min_bytes, f"{path} suspiciously small")

    def simulate(self, name, *sets):
        out = os.path.join(self.tmp, name)
        p = subprocess.run([FABRICSIM, "run", SLOTTED, *TINY, *sets, "--out", out],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return out


class Sweep(ScriptsTestCase):
    def test_load_sweep_rows_values_and_accepted_load_rises(self):
        out = os.path.join(self.tmp, "sw")
        loads = ["0.2", "0.5", "0.8"]
        # matplotlib blocked: the sweep runner itself must not need it
        p = self.sweep("--vary", "traffic.load=" + ",".join(loads), "--seeds", "1,2",
                       "--jobs", "2", "--out", out, env=self.no_matplotlib_env())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        rows = read_csv(os.path.join(out, "sweep.csv"))
        self.assertEqual([(r["traffic.load"], r["seed"]) for r in rows],
                         [(l, s) for l in loads for s in ("1", "2")])
        for r in rows:
            self.assertEqual(r["point"], f"traffic.load={r['traffic.load']},seed={r['seed']}")
            self.assertEqual((r["exit_code"], r["status"], r["invariants_ok"], r["error"]),
                             ("0", "ok", "true", ""))
            for col in ("latency_mean_ns", "latency_p50_ns", "latency_p99_ns", "latency_p999_ns",
                        "latency_max_ns", "buffer_peak_bytes", "buffer_mean_bytes", "wall_s"):
                self.assertGreater(float(r[col]), 0, col)
            self.assertLessEqual(float(r["latency_p50_ns"]), float(r["latency_p99_ns"]))
            self.assertLessEqual(float(r["latency_p99_ns"]), float(r["latency_max_ns"]))
            self.assertEqual(int(r["dropped"]), 0)
            self.assertEqual(int(r["window_dropped"]), 0)
            self.assertAlmostEqual(float(r["offered_load"]), float(r["traffic.load"]), delta=0.05)
            # the overrides reached the simulator: its resolved config and seed say so
            with open(os.path.join(out, r["point"], "summary.json")) as f:
                s = json.load(f)
            self.assertEqual(s["seed"], int(r["seed"]))
            self.assertEqual(s["config"]["traffic"]["load"], float(r["traffic.load"]))
            self.assertEqual(s["config"]["switch"]["ports"], 4)
            self.assertEqual(float(r["accepted_load"]), s["throughput"]["accepted_load"])
            self.assertEqual(int(r["window_injected"]), s["packets"]["window"]["injected"])
            self.assertEqual(int(r["injected"]), s["packets"]["injected"])
        accepted = [sum(float(r["accepted_load"]) for r in rows if r["traffic.load"] == l) / 2
                    for l in loads]
        self.assertEqual(accepted, sorted(accepted))
        self.assertGreater(accepted[1], accepted[0] + 0.2)
        self.assertGreater(accepted[2], accepted[1] + 0.2)
        # sweep.json holds the same rows, with numbers as numbers
        with open(os.path.join(out, "sweep.json")) as f:
            objs = json.load(f)
        self.assertEqual(len(objs), len(rows))
        for o, r in zip(objs, rows):
            self.assertEqual(list(o), list(r))
            self.assertEqual(o["traffic.load"], float(r["traffic.load"]))
            self.assertEqual(o["seed"], int(r["seed"]))
            self.assertEqual(o["accepted_load"], float(r["accepted_load"]))
            self.assertIs(o["invariants_ok"], True)
            self.assertEqual(o["exit_code"], 0)
        self.assertFalse(os.path.exists(os.path.join(out, "sweep.png")))

    def test_two_keys_independent_of_jobs_and_plot(self):
        args = ["--vary", "traffic.load=0.3,0.9", "--vary", "switch.scheduler.iterations=1,2",
                "--seeds", "1,2"]
        a, b = os.path.join(self.tmp, "a"), os.path.join(self.tmp, "b")
        pa = self.sweep(*args, "--jobs", "1", "--out", a)
        self.assertEqual(pa.returncode, 0, pa.stdout + pa.stderr)
        pb = self.sweep(*args, "--jobs", "2", "--out", b, "--plot", python=self.plot_python())
        self.assertEqual(pb.returncode, 0, pb.stdout + pb.stderr)
        rows = read_csv(os.path.join(a, "sweep.csv"))
        expected = [(l, i, s) for l in ("0.3", "0.9") for i in ("1", "2") for s in ("1", "2")]
        self.assertEqual([(r["traffic.load"], r["switch.scheduler.iterations"], r["seed"])
                          for r in rows], expected)
        for r in rows:
            self.assertEqual(r["point"], f"traffic.load={r['traffic.load']},"
                             f"switch.scheduler.iterations={r['switch.scheduler.iterations']},"
                             f"seed={r['seed']}")
            with open(os.path.join(a, r["point"], "summary.json")) as f:
                s = json.load(f)
            self.assertEqual(s["config"]["switch"]["scheduler"]["iterations"],
                             int(r["switch.scheduler.iterations"]))
        with open(os.path.join(a, "sweep.csv")) as f:
            text_a = f.read()
        with open(os.path.join(b, "sweep.csv")) as f:
            text_b = f.read()
        # identical except the measured wall-clock time of each run
        self.assertEqual(without_column(text_a, "wall_s"), without_column(text_b, "wall_s"))
        self.assert_png(os.path.join(b, "sweep.png"), min_bytes=20000)
        self.assertFalse(os.path.exists(os.path.join(a, "sweep.png")))

    def test_runs_sharing_the_cpus_go_without_helper_threads(self):
        cpus = len(os.sched_getaffinity(0))

        def threads(name, *args):
            out = os.path.join(self.tmp, name)
            p = self.sweep("--vary", "traffic.load=0.3,0.5", *args, "--out", out)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            result = set()
            for point in ("traffic.load=0.3", "traffic.load=0.5"):
                with open(os.path.join(out, point, "summary.json")) as f:
                    result.add(json.load(f)["config"]["sim"]["traffic_thread"])
            self.assertEqual(len(result), 1)
            return result.pop()
        # one run per CPU: they share the CPUs, the sweep turns the helper threads off
        self.assertFalse(threads("shared", "--jobs", str(cpus)))
        # ... unless it is told otherwise
        self.assertTrue(threads("told", "--jobs", str(cpus), "--set", "sim.traffic_thread=true"))
        if cpus >= 2:  # one run at a time on two CPUs keeps them
            self.assertTrue(threads("alone", "--jobs", "1"))

    def test_failing_points_are_recorded_and_fail_the_sweep(self):
        out = os.path.join(self.tmp, "sw")
        p = self.sweep("--vary", "traffic.load=0.5,1.5,0.7", "--seeds", "1", "--out", out)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("traffic.load=1.5,seed=1", p.stderr)
        self.assertIn("1 run(s) failed", p.stderr)
        rows = read_csv(os.path.join(out, "sweep.csv"))
        self.assertEqual([r["traffic.load"] for r in rows], ["0.5", "1.5", "0.7"])
        bad = rows[1]
        self.assertEqual((bad["exit_code"], bad["status"]), ("2", "failed"))
        self.assertIn("traffic.load", bad["error"])
        self.assertIn("out of range", bad["error"])
        self.assertEqual(bad["accepted_load"], "")
        self.assertEqual(bad["invariants_ok"], "")
        for good in (rows[0], rows[2]):  # the other points still ran
            self.assertEqual((good["exit_code"], good["status"]), ("0", "ok"))
            self.assertGreater(float(good["accepted_load"]), 0.4)
        with open(os.path.join(out, "sweep.json")) as f:
            objs = json.load(f)
        self.assertEqual(objs[1]["exit_code"], 2)
        self.assertIsNone(objs[1]["accepted_load"])
        self.assertIn("out of range", objs[1]["error"])
        # a stale result from an earlier successful sweep is never picked up for a failed point
        p = self.sweep("--vary", "traffic.load=0.5", "--seeds", "1", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        shutil.rmtree(os.path.join(out, "traffic.load=1.5,seed=1"))
        os.rename(os.path.join(out, "traffic.load=0.5,seed=1"),
                  os.path.join(out, "traffic.load=1.5,seed=1"))
        p = self.sweep("--vary", "traffic.load=1.5", "--seeds", "1", "--out", out)
        self.assertEqual(p.returncode, 1)
        row, = read_csv(os.path.join(out, "sweep.csv"))
        self.assertEqual((row["exit_code"], row["accepted_load"]), ("2", ""))

    def test_runs_of_two_result_schemas_are_not_tabulated(self):
        # A run of an older build reused beside new ones: its names differ (docs/results.md),
        # so the sweep refuses, one line naming both, and writes no table.
        out = os.path.join(self.tmp, "schemas")
        p = self.sweep("--vary", "traffic.load=0.3,0.5", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        old = sorted(d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)))[0]
        path = os.path.join(out, old, "summary.json")
        with open(path) as f:
            s = json.load(f)
        self.assertEqual(s["schema_version"], 3)
        s["schema_version"] = 2
        with open(path, "w") as f:
            json.dump(s, f)
        os.remove(os.path.join(out, "sweep.csv"))
        p = self.sweep("--vary", "traffic.load=0.3,0.5", "--out", out)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("2 of 2 runs already done", p.stderr)
        err = [ln for ln in p.stderr.splitlines() if "error" in ln]
        self.assertEqual(len(err), 1, p.stderr)
        self.assertIn("refusing to compare results of two schemas: run ", err[0])
        self.assertIn(f"run {old} is summary.json schema_version 2", err[0])
        self.assertFalse(os.path.exists(os.path.join(out, "sweep.csv")))

    def test_bad_arguments_exit_2_with_a_message(self):
        out = os.path.join(self.tmp, "never")
        load = ["--vary", "traffic.load=0.5"]
        cases = [
            (["--vary", "traffic.load"], "--vary traffic.load"),
            (["--vary", "traffic.load="], "empty value"),
            (["--vary", "traffic.load=0.1,,0.3"], "empty value"),
            (["--vary", "=0.1"], "not a configuration key"),
            (["--vary", "traffic load=0.1"], "not a configuration key"),
            (["--vary", "traffic.load=0.1,0.1"], "listed twice"),
            (["--vary", "traffic.sizes=[64B,1500B"], "unbalanced"),
            (load + ["--vary", "traffic.load=0.7"], "already varied"),
            (load + ["--set", "noequals"], "--set noequals"),
            (load + ["--set", "traffic.load=0.2"], "also given to --vary"),
            (load + ["--seeds", "1,x"], "--seeds 1,x"),
            (load + ["--seeds", "1", "--set", "sim.seed=3"], "sim.seed"),
            (load + ["--jobs", "0"], "--jobs"),
            ([], "nothing to sweep"),
            (["--seeds", "1,2", "--plot"], "--plot needs"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                p = self.sweep(*args, "--out", out)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(needle, p.stderr)
                self.assertFalse(os.path.exists(out), "nothing may be run or written")
        p = subprocess.run([sys.executable, SWEEP, SLOTTED, *load, "--out", out, "--fabricsim",
                            os.path.join(self.tmp, "no-such-fabricsim")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no-such-fabricsim", p.stderr)
        p = subprocess.run([sys.executable, SWEEP, os.path.join(self.tmp, "missing.yaml"), *load,
                            "--out", out, "--fabricsim", FABRICSIM], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("missing.yaml", p.stderr)

    def test_unwritable_out_exits_2_before_running(self):
        blocker = os.path.join(self.tmp, "file")
        open(blocker, "w").close()
        p = self.sweep("--vary", "traffic.load=0.5", "--out", os.path.join(blocker, "sub"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("--out", p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_terminating_the_sweep_stops_its_simulations(self):
        # A signal to the sweep alone (not to its process group, as a terminal's Ctrl-C is) is
        # passed on: the long runs stop and keep their partial results, and the tables are written.
        out = os.path.join(self.tmp, "sw")
        proc = subprocess.Popen([sys.executable, SWEEP, SLOTTED, "--set", "sim.duration=100000us",
                                 "--set", "switch.ports=16", "--vary", "traffic.load=0.3,0.4",
                                 "--jobs", "2", "--fabricsim", FABRICSIM, "--out", out],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, stdout + stderr)
        rows = read_csv(os.path.join(out, "sweep.csv"))
        self.assertEqual(len(rows), 2)
        for row in rows:
            self.assertEqual(row["exit_code"], "1", row)  # interrupted, partial results written
            with open(os.path.join(out, row["point"], "summary.json")) as f:
                self.assertTrue(json.load(f)["interrupted"])

    def test_point_names_are_deterministic_and_filesystem_safe(self):
        sweep, runs = load_sweep_module("sweep"), load_sweep_module("sweep_runs")
        self.assertEqual(runs.point_name([("traffic.load", "0.5"),
                                          ("switch.scheduler.iterations", "2")], 1),
                         "traffic.load=0.5,switch.scheduler.iterations=2,seed=1")
        self.assertEqual(runs.point_name([("traffic.load", "0.5")]), "traffic.load=0.5")
        odd = [("traffic.trace.file", "../t races/a,b=c.trace"), ("traffic.sizes", "[64B, 1KiB]")]
        name = runs.point_name(odd, 7)
        self.assertEqual(name, runs.point_name(odd, 7))
        for ch in "/ []\\\n":
            self.assertNotIn(ch, name)
        self.assertEqual(name.count(","), 2)  # commas inside values are encoded
        self.assertNotEqual(name, runs.point_name([("traffic.trace.file", "../t_races/a,b=c.trace"),
                                                   odd[1]], 7))
        long_name = runs.point_name([("traffic.trace.file", "x" * 400)], 1)
        self.assertLessEqual(len(long_name.encode()), 200)
        self.assertNotEqual(long_name, runs.point_name([("traffic.trace.file", "x" * 401)], 1))
        self.assertEqual(sweep.split_values("[64B,1500B],[4KiB], 9KiB"),
                         ["[64B,1500B]", "[4KiB]", "9KiB"])
        pts = runs.make_points([("a.x", ["1", "2"]), ("b.y", ["p", "q"])], [3, 4])
        self.assertEqual([p["name"] for p in pts][:3], ["a.x=1,b.y=p,seed=3", "a.x=1,b.y=p,seed=4",
                                                        "a.x=1,b.y=q,seed=3"])
        self.assertEqual(len(pts), 8)


class PlotResults(ScriptsTestCase):
    def test_writes_png_files(self):
        run = self.simulate("run", "--set", "stats.occupancy_interval=50ns")
        with open(os.path.join(run, "occupancy.csv")) as f:
            self.assertGreater(len(f.read().splitlines()), 50)
        p = self.plot(run)
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in ("occupancy.png", "ports.png"):
            self.assert_png(os.path.join(run, name), min_bytes=20000)
            self.assertIn(os.path.join(run, name), p.stdout)
        combined = os.path.join(self.tmp, "plots", "run.png")
        p = self.plot(run, "--out", combined, "--top", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assert_png(combined, min_bytes=40000)

    def test_run_without_occupancy_samples_still_plots(self):
        run = self.simulate("run")  # slotted.yaml has stats.occupancy_interval = 0
        with open(os.path.join(run, "occupancy.csv")) as f:
            self.assertEqual(len(f.read().splitlines()), 1)
        other = os.path.join(self.tmp, "elsewhere")
        p = self.plot(run, "--out", other)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(os.listdir(other)), ["occupancy.png", "ports.png"])
        self.assert_png(os.path.join(other, "ports.png"))
        self.assert_png(os.path.join(other, "occupancy.png"))

    def test_fabric_figures_say_what_they_sum_and_where_hosts_are(self):
        # A leaf-spine of 3 switches: occupancy.csv's total is the sum over 3 chips, and host h
        # is not port h of one switch. The labels read from the drawn figures (--labels).
        out = os.path.join(self.tmp, "fabric")
        p = subprocess.run(
            [FABRICSIM, "run", os.path.join(ROOT, "configs", "switch_51t2.yaml"), "--out", out,
             "--set", "topology.kind=leaf_spine", "--set", "topology.leaves=2",
             "--set", "topology.spines=1", "--set", "topology.hosts_per_leaf=2",
             "--set", "sim.duration=3us", "--set", "sim.warmup=1us",
             "--set", "stats.occupancy_interval=50ns"],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        labels = os.path.join(self.tmp, "labels.json")
        p = self.plot(out, "--out", os.path.join(self.tmp, "fabric.png"), "--labels", labels)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(labels) as f:
            (fig,) = json.load(f)
        every = [fig["suptitle"]] + [t for ax in fig["axes"] for t in
                                     [ax["title"], ax["xlabel"], *ax["legend"], *ax["texts"]]]
        for text in every:
            self.assertNotIn("single switch", text)
            self.assertNotIn("(total)", text)
        self.assertNotIn("total", [t for ax in fig["axes"] for t in ax["legend"]])
        titles = [ax["title"] for ax in fig["axes"]]
        self.assertIn("shared buffer occupancy (sum over 3 switches)", titles)
        total = next(ax for ax in fig["axes"] if ax["title"].startswith("shared buffer"))
        self.assertIn("sum over 3 switches", total["legend"])
        self.assertTrue(any("egress ports on 3 switches" in t for t in titles), titles)
        xlabels = [ax["xlabel"] for ax in fig["axes"] if ax["xlabel"].startswith("host")]
        self.assertEqual(len(xlabels), 2, fig["axes"])
        for x in xlabels:
            self.assertEqual(x, "host (4 hosts on 2 of 3 switches, each at its own switch's port)")
        self.assertIn("the fullest of 3 switches", fig["suptitle"])
        # A single switch keeps its words: the total is the chip's, host h is on port h.
        run = self.simulate("one", "--set", "stats.occupancy_interval=50ns")
        p = self.plot(run, "--labels", labels)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(labels) as f:
            occ, ports = json.load(f)
        self.assertEqual(occ["axes"][0]["title"], "shared buffer occupancy (total)")
        self.assertIn("total", occ["axes"][0]["legend"])
        self.assertEqual(ports["axes"][0]["xlabel"], "host (= port of the switch)")
        self.assertNotIn("switches", occ["suptitle"])

    def test_missing_input_exits_2_naming_it(self):
        env = self.no_matplotlib_env()  # input errors are found before matplotlib is needed
        missing = os.path.join(self.tmp, "no-such-run")
        p = self.plot(missing, python=sys.executable, env=env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("no-such-run", p.stderr)
        run = self.simulate("run")
        for name in ("summary.json", "ports.csv", "occupancy.csv"):
            with self.subTest(name=name):
                partial = os.path.join(self.tmp, "partial-" + name)
                shutil.copytree(run, partial)
                os.remove(os.path.join(partial, name))
                p = self.plot(partial, python=sys.executable, env=env)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(os.path.join(partial, name), p.stderr)
                self.assertIn("missing", p.stderr)
        with open(os.path.join(run, "ports.csv"), "a") as f:
            f.write("4,x\n")
        p = self.plot(run, python=sys.executable, env=env)
        self.assertEqual(p.returncode, 2)
        self.assertIn("ports.csv:6", p.stderr)


SCRIPTS = ["sweep.py", "plot_results.py", "timeline.py", "phase_report.py", "plot_busbw.py",
           "make_workload.py", "make_chakra_examples.py", "doc_figures.py", "make_training.py",
           "compare.py"]


def script(name):
    return os.path.join(ROOT, "scripts", name)


def hidden_modules_env(tmp, *modules):
    """An environment in which `import M` fails for each module as if it were not installed: a
    package of that name first on the path raising ModuleNotFoundError (a dotted name's parents
    shadowed too, so that a namespace package such as Debian's google.protobuf is hidden)."""
    root = os.path.join(tmp, "hidden")
    for module in modules:
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            pkg = os.path.join(root, *parts[:i])
            os.makedirs(pkg, exist_ok=True)
            with open(os.path.join(pkg, "__init__.py"), "w") as f:
                if i == len(parts):
                    f.write(f"raise ModuleNotFoundError(\"No module named '{module}'\", "
                            f"name={module!r})\n")
    return dict(os.environ, PYTHONPATH=root)


def options_of(path):
    """[(option strings, has a default worth showing)] of the script's add_argument calls."""
    with open(path) as f:
        tree = ast.parse(f.read())
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        names = [a.value for a in node.args if isinstance(a, ast.Constant)
                 and isinstance(a.value, str) and a.value.startswith("-")]
        kw = {k.arg: k.value for k in node.keywords}
        if not names or (isinstance(kw.get("help"), ast.Attribute)
                         and kw["help"].attr == "SUPPRESS"):
            continue
        d = kw.get("default")
        shown = d is not None and not (isinstance(d, ast.Constant) and d.value in (None, False)) \
            and not (isinstance(d, ast.List) and not d.elts)
        out.append((names, shown))
    return out


def help_entry(text, option):
    """The lines of an option's entry in --help output, or None."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"  (\S.*?, )?{re.escape(option)}(?=[ ,=]|$)", line):
            entry = [line]
            for more in lines[i + 1:]:
                if not more.startswith("   ") or re.match(r"  -", more):
                    break
                entry.append(more)
            return "\n".join(entry)
    return None


def synthetic_workload_run(folder, switches=3, peak=1234567890):
    """A workload run's folder as fabricsim writes it, small and with chosen numbers: three
    switches whose buffers sum to `peak` bytes during the first call."""
    os.makedirs(folder)
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump({"window": {"start_ns": 0.0, "end_ns": 1000.0, "sim_end_ns": 300000.0},
                   "switches": [{"name": f"sw{i}"} for i in range(switches)]}, f)
    with open(os.path.join(folder, "collectives.csv"), "w") as f:
        f.write("name,algorithm,ranks,bytes,start_ns,end_ns,time_ns,algbw_GBps,busbw_GBps,"
                "slowest_rank,state,first_node,last_node\n"
                "grads#0,allreduce_ring,8,4194304,0.000,100000.000,100000.000,41.943,73.400,7,"
                "finished,0,2\n"
                "grads#1,allreduce_ring,8,8388608,150000.000,250000.000,100000.000,83.886,"
                "146.801,3,finished,2,4\n")
    with open(os.path.join(folder, "occupancy.csv"), "w") as f:
        f.write("time_ns,total_bytes,sw0.port0_bytes,sw1.port0_bytes\n")
        for t, total in ((0, 0), (50000, peak), (90000, peak // 2), (200000, 4096)):
            f.write(f"{t},{total},{total // 2},{total - total // 2}\n")
    with open(os.path.join(folder, "fct.csv"), "w") as f:
        f.write("id,src,dst,bytes,verb,qp,tc,start_ns,first_byte_out_ns,last_byte_delivered_ns,"
                "completion_ns,fct_ns,ideal_fct_ns,slowdown,state\n")
        for i in range(4):
            f.write(f"{i},0,1,1024,write,0,3,0,1,2,3,3,1,{1.5 + i},completed\n")
    return folder


class Scripts(ScriptsTestCase):
    """What every script owes its user: a complete --help, a missing module named with its Debian
    package, bad input refused in one line naming the file and the line (exit 2)."""

    def run_script(self, name, *args, env=None, python=None):
        return subprocess.run([python or sys.executable, script(name), *args],
                              capture_output=True, text=True, env=env, timeout=120)

    def assert_refused(self, p, *needles, code=2):
        self.assertEqual(p.returncode, code, p.stdout + p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        for needle in needles:
            self.assertIn(needle, p.stderr)

    def test_help_is_complete_with_defaults(self):
        # --help needs neither matplotlib nor protobuf; it shows the whole docstring (never cut),
        # every option, and each option's default.
        env = hidden_modules_env(self.tmp, "matplotlib", "google.protobuf")
        for name in SCRIPTS:
            with self.subTest(script=name):
                p = self.run_script(name, "--help", env=env)
                self.assertEqual(p.returncode, 0, p.stderr)
                text = p.stdout
                if name == "make_workload.py":  # each job's options are in its own --help
                    for job in ("dp", "tp", "moe"):
                        self.assertIn(f"    {job} ", text)
                        q = self.run_script(name, job, "--help", env=env)
                        self.assertEqual(q.returncode, 0, q.stderr)
                        text += "\n" + q.stdout
                with open(script(name)) as f:
                    doc = ast.get_docstring(ast.parse(f.read()))
                self.assertIn(" ".join(doc.split()), " ".join(p.stdout.split()))
                opts = options_of(script(name))
                self.assertTrue(opts)
                for names, has_default in opts:
                    entry = help_entry(text, names[0])
                    self.assertIsNotNone(entry, f"{names[0]} missing from {name} --help")
                    if has_default:
                        self.assertIn("default", entry, f"{name} {names[0]}: default not shown")

    def test_nightly_refuses_bad_arguments(self):
        nightly = os.path.join(os.path.dirname(script("sweep.py")), "nightly.sh")
        for args, needle in ((["--fuzz-seconds", "an hour"], "--fuzz-seconds 'an hour'"),
                             (["--fuzz-seconds", "0"], "expected a whole number of seconds"),
                             (["--tonight"], "unknown argument '--tonight'")):
            p = subprocess.run(["bash", nightly, *args, "--out", os.path.join(self.tmp, "n")],
                               capture_output=True, text=True, timeout=60)
            self.assert_refused(p, needle)
        p = subprocess.run(["bash", nightly, "--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0)
        self.assertIn("--fuzz-seconds N", p.stdout)

    def test_missing_modules_name_the_debian_package(self):
        no_mpl = hidden_modules_env(self.tmp, "matplotlib")
        run = self.simulate("run")
        p = self.run_script("plot_results.py", run, env=no_mpl)
        self.assert_refused(p, "matplotlib", "apt install python3-matplotlib")
        wl = synthetic_workload_run(os.path.join(self.tmp, "wl"))
        p = self.run_script("plot_busbw.py", os.path.join(wl, "collectives.csv"), "--out",
                            os.path.join(self.tmp, "b.png"), env=no_mpl)
        self.assert_refused(p, "matplotlib", "apt install python3-matplotlib")
        self.assertIn("4MiB", p.stdout)  # the tables need no matplotlib
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "b.png")))
        out = os.path.join(self.tmp, "chakra")
        p = self.run_script("make_chakra_examples.py", "--out", out,
                            env=hidden_modules_env(self.tmp, "google.protobuf"))
        self.assert_refused(p, "google.protobuf", "apt install python3-protobuf")
        self.assertFalse(os.path.exists(out))
        # protoc missing: its Debian package, wherever python3-protobuf is installed
        for py in (sys.executable, "/usr/bin/python3"):
            if subprocess.run([py, "-c", "import google.protobuf"],
                              capture_output=True).returncode == 0:
                p = self.run_script("make_chakra_examples.py", "--out", out, python=py,
                                    env=dict(os.environ, PATH=self.tmp))
                self.assert_refused(p, "protoc", "apt install protobuf-compiler")
                break

    def test_phase_report_prints_the_buffer_sum_labelled_in_plain_units(self):
        wl = synthetic_workload_run(os.path.join(self.tmp, "wl"))
        table = os.path.join(self.tmp, "phases.csv")
        p = self.run_script("phase_report.py", wl, "--csv", table)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("buffer: the sum over the 3 switches of their shared-buffer occupancy",
                      p.stdout)
        self.assertIn("in MB (10^6 bytes)", p.stdout)
        self.assertNotRegex(p.stdout, r"[0-9]e[+-][0-9]")  # no scientific notation anywhere
        head, first, second = p.stdout.splitlines()[1:4]
        self.assertIn("buffer peak MB", head)
        self.assertIn("busbw GB/s", head)
        self.assertIn("1,234.568", first)  # 1,234,567,890 B
        self.assertIn("146.80", second)
        with open(table) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(rows[0]["buffer_peak_bytes"], "1234567890")  # --csv: bytes, exact
        self.assertEqual([r["messages"] for r in rows], ["2", "2"])
        # one switch: its own buffer, no sum
        one = synthetic_workload_run(os.path.join(self.tmp, "one"), switches=1)
        p = self.run_script("phase_report.py", one)
        self.assertIn("buffer: the switch's shared-buffer occupancy", p.stdout)

    def test_plot_busbw_refuses_runs_of_two_schemas(self):
        # schema 2 named GB/s columns busbw_gbps: its file beside a schema-3 one is not compared.
        new = synthetic_workload_run(os.path.join(self.tmp, "v3"))
        old = synthetic_workload_run(os.path.join(self.tmp, "v2"))
        for folder, v in ((new, 3), (old, 2)):
            with open(os.path.join(folder, "summary.json")) as f:
                s = json.load(f)
            s["schema_version"] = v
            with open(os.path.join(folder, "summary.json"), "w") as f:
                json.dump(s, f)
        path = os.path.join(old, "collectives.csv")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace("_GBps", "_gbps"))
        a, b = os.path.join(new, "collectives.csv"), path
        p = self.run_script("plot_busbw.py", a, b, "--out", os.path.join(self.tmp, "x.png"))
        self.assert_refused(p, "refusing to compare results of two schemas",
                            f"{a} is of schema_version 3, {b} of 2")
        # Without a summary.json beside them, the columns tell.
        for folder in (new, old):
            os.remove(os.path.join(folder, "summary.json"))
        p = self.run_script("plot_busbw.py", a, b, "--out", os.path.join(self.tmp, "x.png"))
        self.assert_refused(p, f"{a} is of schema_version 3, {b} of 2")
        # One schema: compared (the table printed before the plot is drawn).
        env = hidden_modules_env(self.tmp, "matplotlib")
        p = self.run_script("plot_busbw.py", a, a, "--out", os.path.join(self.tmp, "x.png"),
                            env=env)
        self.assertNotIn("two schemas", p.stderr)
        self.assertIn("busbw (GB/s)", p.stdout)
        # report.py reads one schema: a run of another is refused in one line.
        run = self.simulate("r2")
        with open(os.path.join(run, "summary.json")) as f:
            s = json.load(f)
        s["schema_version"] = 2
        with open(os.path.join(run, "summary.json"), "w") as f:
            json.dump(s, f)
        q = self.run_script("report.py", run)
        self.assert_refused(q, "summary.json: schema_version 2, this report reads 3")

    def test_bad_workload_folders_and_tables_exit_2_naming_file_and_line(self):
        def corrupt(name, edit):
            folder = os.path.join(self.tmp, f"bad{len(os.listdir(self.tmp))}")
            synthetic_workload_run(folder)
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                data = f.read()
            with open(path, "wb") as f:
                f.write(edit(data))
            return folder, path

        cases = [
            ("collectives.csv", lambda d: d.replace(b"grads#1", b"grads\xff1"),
             ":3:6: not UTF-8 text (byte 0xff)"),
            ("collectives.csv", lambda d: d.replace(b",first_node", b",first"),
             ":1: no column 'first_node'"),
            ("collectives.csv", lambda d: d.replace(b"150000.000", b"soon"), ":3: non-numeric"),
            ("collectives.csv", lambda d: d.replace(b"finished,2,4", b"finished,2.5,4"),
             ":3: 'first_node' is not a whole number"),
            ("occupancy.csv", lambda d: d + b"1," + b"9" * 131073 + b",1,1\n",
             ":6: field larger than field limit (131072)"),
            ("fct.csv", lambda d: d.replace(b"write,0,3,0,1,2,3,3,1,2.5", b"write,0"),
             ":3: 7 fields, header has 15"),
            ("summary.json", lambda d: d[:-1], ":1:", "not valid JSON"),
            ("summary.json", lambda d: b"[]", ": not a JSON object"),
            ("summary.json", lambda d: d.replace(b"sim_end_ns", b"sim_end"),
             ": no number at 'window.sim_end_ns'"),
        ]
        for name, edit, *needles in cases:
            with self.subTest(file=name, needles=needles):
                folder, path = corrupt(name, edit)
                p = self.run_script("phase_report.py", folder)
                self.assert_refused(p, path + needles[0], *needles[1:])
        p = self.run_script("phase_report.py", os.path.join(self.tmp, "none"))
        self.assert_refused(p, "none: no such directory")
        # plot_busbw.py: the same readers, and its own arguments
        folder, path = corrupt("collectives.csv", lambda d: d.replace(b"busbw_GBps", b"bus"))
        no_mpl = self.no_matplotlib_env()  # input errors come before matplotlib is needed
        self.assert_refused(self.run_script("plot_busbw.py", path, env=no_mpl),
                            path + ":1: no algbw or busbw column")
        folder, path = corrupt("collectives.csv", lambda d: d.replace(b"8388608", b"8MiB"))
        self.assert_refused(self.run_script("plot_busbw.py", path, env=no_mpl),
                            path + ":3: non-numeric")
        self.assert_refused(self.run_script("plot_busbw.py", os.path.join(self.tmp, "no.csv"),
                                            env=no_mpl), "no.csv: no such file")
        self.assert_refused(self.run_script("plot_busbw.py", path, path, "--labels", "a",
                                            env=no_mpl), "--labels: 1 label(s) for 2 file(s)")

    def test_bad_run_folders_exit_2_naming_file_and_line(self):
        # plot_results.py and timeline.py share the readers: a run's files damaged one at a time
        run = self.simulate("run", "--set", "stats.occupancy_interval=500ns")
        no_mpl = self.no_matplotlib_env()
        cases = [
            ("ports.csv", lambda d: d.replace(b"\n", b"\n\xc3(", 2).replace(b"\n\xc3(", b"\n", 1),
             ":3:1: not UTF-8 text (byte 0xc3)"),
            ("occupancy.csv", lambda d: d + b"1," + b"9" * 131073 + b"\n", ":",
             ": field larger than field limit (131072)"),
            ("summary.json", lambda d: d[:40], ":", "not valid JSON"),
            ("summary.json", lambda d: b"17", ": not a JSON object"),
            ("ports.csv", lambda d: d.replace(b"\nswitch,0,", b"\nswitch,,", 1),
             ":2: 'port' is not a whole number"),
        ]
        for name, edit, *needles in cases:
            folder = os.path.join(self.tmp, f"bad{len(os.listdir(self.tmp))}")
            shutil.copytree(run, folder)
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                data = f.read()
            with open(path, "wb") as f:
                f.write(edit(data))
            for tool in ("plot_results.py", "timeline.py"):
                with self.subTest(tool=tool, file=name, needles=needles):
                    p = self.run_script(tool, folder, env=no_mpl)
                    self.assert_refused(p, path + needles[0], *needles[1:])

    def test_make_workload_refuses_bad_arguments_and_regenerates_the_shipped_files(self):
        for job in ("dp_8", "tp_8", "moe_8"):  # the files' first line is their command
            with self.subTest(job=job):
                with open(os.path.join(ROOT, "traces", "workloads", f"{job}.txt")) as f:
                    shipped = f.read()
                args = shipped.splitlines()[0].split()[2:]
                p = self.run_script("make_workload.py", *args)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stdout, shipped)
        cases = [(["tp", "--ranks", "6"], "--tp 4 does not divide --ranks 6"),
                 (["moe", "--ep", "0"], "argument --ep: '0' is not a whole number >= 1"),
                 (["dp", "--grad-bytes", "64M"], "argument --grad-bytes: '64M' is not a size"),
                 (["dp", "--fwd", "100"], "argument --fwd: '100' is not a time"),
                 (["moe", "--skew", "nan"], "argument --skew"),
                 (["dp", "--ranks", "1"], "argument --ranks")]
        for args, needle in cases:
            with self.subTest(args=args):
                p = self.run_script("make_workload.py", *args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertNotIn("Traceback", p.stderr)
                self.assertIn(needle, p.stderr)
                self.assertEqual(p.stdout, "")
        out = os.path.join(self.tmp, "no-dir", "w.txt")
        self.assert_refused(self.run_script("make_workload.py", "dp", "--out", out),
                            f"cannot write {out}", code=1)
        p = self.run_script("make_workload.py", "dp", "--ranks", "4", "--out",
                            os.path.join(self.tmp, "w.txt"))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(self.tmp, "w.txt")) as f:
            self.assertEqual(f.readline(), "# scripts/make_workload.py dp --ranks 4\n")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
