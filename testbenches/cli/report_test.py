#!/usr/bin/env python3
"""Tests of scripts/report.py (one self-contained HTML page per run or sweep), on small simulations: a 4-port
single switch, a RoCE leaf-spine with PFC (6 switches) and a 2-point sweep.

  report_test.py BUILD/fabricsim [unittest options]

The report needs matplotlib: it runs under the first of $PLOT_PYTHON, this interpreter and
/usr/bin/python3 that can import it (the test fails if none can)."""
import base64
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

FABRICSIM = os.environ.get("FABRICSIM", "")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "scripts", "report.py")
SWEEP = os.path.join(ROOT, "scripts", "sweep.py")
SLOTTED = os.path.join(ROOT, "configs", "validation", "slotted.yaml")
ROCE = os.path.join(ROOT, "configs", "examples", "leaf_spine_roce.yaml")
SINGLE = ["--set", "sim.duration=3us", "--set", "sim.warmup=1us", "--set", "switch.ports=4",
          "--set", "stats.occupancy_interval=20ns"]
# The leaf-spine's burst into host 63 pauses links within a few microseconds.
MULTI = ["--set", "sim.duration=6us", "--set", "sim.warmup=1us", "--set", "sim.drain_limit=100us",
         "--set", "stats.occupancy_interval=50ns"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def plot_python():
    for cand in (os.environ.get("PLOT_PYTHON"), sys.executable, "/usr/bin/python3"):
        if cand and os.path.exists(cand) and subprocess.run(
                [cand, "-c", "import matplotlib"], capture_output=True).returncode == 0:
            return cand
    return None


def fabricsim_run(config, args, out):
    p = subprocess.run([FABRICSIM, "run", config, *args, "--out", out], capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError(f"fabricsim run failed ({p.returncode}): {p.stderr}")


def page_images(page):
    """The decoded PNGs of the page's <img> elements (all must be data: URIs)."""
    return [base64.b64decode(m) for m in
            re.findall(r'<img class="plot"[^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)]


def external_refs(page):
    """Anything the page would fetch: src/href/url() that is not a data: URI or a fragment."""
    refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page) + re.findall(r"url\(([^)]*)\)", page)
    return [r for r in refs if not r.startswith("data:") and not r.startswith("#")]


RUNS = {}


def setUpModule():
    RUNS["tmp"] = tempfile.mkdtemp(prefix="report_test_")
    RUNS["single"] = os.path.join(RUNS["tmp"], "single")
    fabricsim_run(SLOTTED, SINGLE, RUNS["single"])
    RUNS["multi"] = os.path.join(RUNS["tmp"], "multi")
    fabricsim_run(ROCE, MULTI, RUNS["multi"])


def tearDownModule():
    shutil.rmtree(RUNS["tmp"], ignore_errors=True)


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(dir=RUNS["tmp"])
        cls.py = plot_python()
        cls.single, cls.multi = RUNS["single"], RUNS["multi"]

    def setUp(self):
        if not self.py:
            self.fail(f"matplotlib is importable neither by {sys.executable} nor by "
                      "/usr/bin/python3: install python3-matplotlib (scripts/setup.sh does)")

    def script(self, path, *args):
        return subprocess.run([self.py, path, *args], capture_output=True, text=True, timeout=300)


class Report(Base):
    def report(self, out_dir):
        p = self.script(REPORT, out_dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        path = os.path.join(out_dir, "report.html")
        self.assertEqual(p.stdout.strip(), path)
        with open(path, encoding="utf-8") as f:
            return f.read()

    def check_page(self, page, images):
        self.assertEqual(external_refs(page), [])
        pngs = page_images(page)
        self.assertEqual(len(pngs), images)
        for png in pngs:
            self.assertTrue(png.startswith(PNG_SIGNATURE))
            self.assertGreater(len(png), 5000)  # a drawn figure, not an empty canvas

    def test_single_switch(self):
        page = self.report(self.single)
        with open(os.path.join(self.single, "summary.json")) as f:
            s = json.load(f)
        # latency, occupancy; no flow control on the slotted switch, said in words
        self.check_page(page, 2)
        self.assertIn("No pause or credit-stall time in this run (flow_control.mode = none)", page)
        self.assertIn('<span class="ok">ok</span>', page)
        # The configuration: every resolved key, with its value.
        self.assertIn("<td>switch.ports</td><td>4</td>", page)
        self.assertIn("<td>sim.duration</td>", page)
        # Summary figures, as summary.json has them.
        self.assertIn(f"{s['packets']['delivered']:,}", page)
        self.assertIn(f"{s['latency_ns']['p99']:.6g}", page)

    def test_leaf_spine_with_pfc(self):
        page = self.report(self.multi)
        with open(os.path.join(self.multi, "summary.json")) as f:
            s = json.load(f)
        self.assertGreater(s["flow_control"]["switches"]["leaf3"]["pause_frames_sent"], 0)
        # latency, occupancy (total + one panel per switch), pause per port + per priority
        self.check_page(page, 3)
        for sw in s["switches"]:
            self.assertIn(f"<td>{sw['name']}</td>", page)
        self.assertIn("<h3>Flow control (pfc)</h3>", page)
        self.assertIn("<td>flow_control.mode</td><td>pfc</td>", page)

    def test_violation_shown(self):
        bad = os.path.join(self.tmp, "violated")
        shutil.copytree(self.single, bad)
        path = os.path.join(bad, "summary.json")
        with open(path) as f:
            s = json.load(f)
        s["invariants"] = {"ok": False, "violations": ["injected 10 != delivered 9 + ..."]}
        s["window"]["drained"] = False
        with open(path, "w") as f:
            json.dump(s, f)
        page = self.report(bad)
        self.assertIn('<span class="bad">VIOLATED</span>', page)
        self.assertIn("injected 10 != delivered 9 + ...", page)
        self.assertIn("NOT drained", page)
        self.assertNotIn('<span class="ok">ok</span>', page)

    def test_sweep(self):
        out = os.path.join(self.tmp, "sweep")
        p = subprocess.run([self.py, SWEEP, SLOTTED, "--vary", "traffic.load=0.3,0.6",
                            *SINGLE, "--jobs", "2", "--out", out, "--fabricsim", FABRICSIM],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = self.report(out)
        self.check_page(page, 1)
        self.assertIn("FabricSim sweep: sweep", page)
        for load in ("0.3", "0.6"):
            self.assertIn(f"<td>{load}</td>", page)
        self.assertIn('<span class="ok">2 of 2</span>', page)

    def test_bad_input(self):
        p = self.script(REPORT, os.path.join(self.tmp, "nowhere"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("nowhere: no such directory", p.stderr)
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty, exist_ok=True)
        p = self.script(REPORT, empty)
        self.assertEqual(p.returncode, 2)
        self.assertIn("summary.json: missing", p.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: report_test.py BUILD/fabricsim [unittest options]")
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main()
