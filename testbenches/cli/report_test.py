#!/usr/bin/env python3
"""Tests of scripts/report.py (one self-contained HTML page per run or sweep) and
scripts/timeline.py (a run as Chrome/Perfetto trace JSON), on small simulations: a 4-port
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
TIMELINE = os.path.join(ROOT, "scripts", "timeline.py")
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


def check_trace(test, trace):
    """The structure ui.perfetto.dev and chrome://tracing need: per event type its fields, and
    time stamps that never go back on any track. Returns the counter series per track."""
    test.assertIsInstance(trace, dict)
    test.assertIsInstance(trace.get("traceEvents"), list)
    last_ts, series = {}, {}
    for e in trace["traceEvents"]:
        test.assertIsInstance(e.get("name"), str, e)
        test.assertIn(e.get("ph"), ("M", "C", "X", "B", "E", "i"), e)
        test.assertIsInstance(e.get("pid"), int, e)
        test.assertIsInstance(e.get("tid"), int, e)
        if e["ph"] == "M":
            test.assertIn(e["name"], ("process_name", "thread_name", "process_sort_index",
                                      "thread_sort_index"), e)
            test.assertIsInstance(e.get("args"), dict, e)
            continue
        test.assertIsInstance(e.get("ts"), (int, float), e)
        test.assertGreaterEqual(e["ts"], 0, e)
        if e["ph"] == "C":
            test.assertTrue(e["args"], e)
            for v in e["args"].values():
                test.assertIsInstance(v, (int, float), e)
                test.assertFalse(math.isnan(v), e)
            track = (e["pid"], e["name"])
        elif e["ph"] == "X":
            test.assertIsInstance(e.get("dur"), (int, float), e)
            test.assertGreaterEqual(e["dur"], 0, e)
            track = (e["pid"], e["tid"], "slices")
        elif e["ph"] == "i":
            test.assertIn(e.get("s", "t"), ("g", "p", "t"), e)
            track = (e["pid"], e["tid"], "slices")
        else:
            track = (e["pid"], e["tid"], "slices")
        test.assertGreaterEqual(e["ts"], last_ts.get(track, -1.0), f"ts goes back on {track}: {e}")
        last_ts[track] = e["ts"]
        if e["ph"] == "C":
            series.setdefault(track, []).append((e["ts"], list(e["args"].values())[0]))
    # It is JSON that a strict parser reads back (no NaN/Infinity).
    json.loads(json.dumps(trace, allow_nan=False))
    return series


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

    def test_no_occupancy_samples(self):
        out = os.path.join(self.tmp, "unsampled")
        fabricsim_run(SLOTTED, SINGLE + ["--set", "stats.occupancy_interval=0ns"], out)
        page = self.report(out)
        self.check_page(page, 1)  # latency only
        self.assertIn("No occupancy samples in occupancy.csv (stats.occupancy_interval = 0", page)
        p = self.script(TIMELINE, out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "timeline.json")) as f:
            trace = json.load(f)
        self.assertEqual(check_trace(self, trace), {})
        self.assertIn("occupancy.csv has no samples", trace["otherData"]["notes"][0])
        self.assertEqual(len([e for e in trace["traceEvents"] if e["ph"] == "X"]), 3)

    def test_bad_input(self):
        p = self.script(REPORT, os.path.join(self.tmp, "nowhere"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("nowhere: no such directory", p.stderr)
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty, exist_ok=True)
        p = self.script(REPORT, empty)
        self.assertEqual(p.returncode, 2)
        self.assertIn("summary.json: missing", p.stderr)


class Timeline(Base):
    def timeline(self, out_dir, *args, name="timeline.json"):
        out = os.path.join(self.tmp, name)
        p = self.script(TIMELINE, out_dir, "--out", out, *args)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            return json.load(f)

    def occupancy(self, out_dir):
        with open(os.path.join(out_dir, "occupancy.csv"), newline="") as f:
            return list(csv.DictReader(f))

    def test_counters_follow_occupancy(self):
        trace = self.timeline(self.single)
        series = check_trace(self, trace)
        rows = self.occupancy(self.single)
        self.assertEqual(trace["otherData"]["capped"], False)
        self.assertEqual(len(series), 1 + 4)  # total + 4 ports
        # A counter is a step function: at every sample its last value is the file's value.
        for col, track in (("total_bytes", (1, "buffer total (bytes)")),
                           ("port2_bytes", (2, "port2 queue (bytes)"))):
            pts = series[track]
            self.assertGreater(len(set(v for _, v in pts)), 3)  # it moves
            j = 0
            for r in rows:
                t = float(r["time_ns"]) / 1e3
                while j + 1 < len(pts) and pts[j + 1][0] <= t + 1e-9:
                    j += 1
                self.assertEqual(pts[j][1], float(r[col]), f"{col} at {t} us")
        phases = [e["name"] for e in trace["traceEvents"] if e["ph"] == "X"]
        self.assertEqual(phases, ["warm-up", "measurement window", "drain"])

    def test_multi_switch_tracks_and_totals(self):
        trace = self.timeline(self.multi)
        series = check_trace(self, trace)
        with open(os.path.join(self.multi, "summary.json")) as f:
            s = json.load(f)
        names = {e["args"]["name"] for e in trace["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "process_name"}
        for sw in s["switches"]:
            self.assertIn(sw["name"], names)
        ports = sum(1 for _ in self.occupancy(self.multi)[0]) - 2
        self.assertEqual(len(series), 1 + ports)
        # Pause time per port as an instant at the end of the run, equal to ports.csv's value.
        with open(os.path.join(self.multi, "ports.csv"), newline="") as f:
            paused = {(r["switch"], int(r["port"])): float(r["paused_ns"])
                      for r in csv.DictReader(f) if float(r["paused_ns"]) > 0}
        self.assertTrue(paused)
        got = {}
        pid_name = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
                    if e["ph"] == "M" and e["name"] == "process_name"}
        for e in trace["traceEvents"]:
            if e["ph"] == "i" and "paused_ns" in e["args"]:
                got[(pid_name[e["pid"]], e["args"]["port"])] = e["args"]["paused_ns"]
                self.assertAlmostEqual(e["ts"], s["window"]["sim_end_ns"] / 1e3)
        self.assertEqual(got, paused)

    def test_window_interval_ports(self):
        trace = self.timeline(self.multi, "--window", "2us:4us", "--interval", "200ns",
                              "--ports", "2")
        series = check_trace(self, trace)
        with open(os.path.join(self.multi, "summary.json")) as f:
            nsw = len(json.load(f)["switches"])
        self.assertEqual(len(series), 1 + 2 * nsw)
        for pts in series.values():
            self.assertTrue(all(2.0 <= t <= 4.0 for t, _ in pts))
            gaps = [b[0] - a[0] for a, b in zip(pts, pts[1:])]
            self.assertTrue(all(g >= 0.2 - 1e-9 for g in gaps), gaps)
        for e in trace["traceEvents"]:
            if e["ph"] == "X":
                self.assertGreaterEqual(e["ts"], 2.0)
                self.assertLessEqual(e["ts"] + e["dur"], 4.0 + 1e-9)

    def test_capped(self):
        full = self.timeline(self.multi, name="full.json")
        n_full = len(full["traceEvents"])
        cap = n_full // 3
        trace = self.timeline(self.multi, "--max-events", str(cap), name="capped.json")
        check_trace(self, trace)
        self.assertLessEqual(len(trace["traceEvents"]), cap)
        o = trace["otherData"]
        self.assertTrue(o["capped"])
        self.assertGreater(o["stride"], 1)
        self.assertIn(f"capped at --max-events {cap}", o["notes"][0])
        self.assertTrue(any(e["ph"] == "i" and e["name"].startswith("capped") for e in
                            trace["traceEvents"]))

    def flow_rows(self, out_dir):
        with open(os.path.join(out_dir, "flow_events.csv"), newline="") as f:
            return list(csv.DictReader(f))

    def test_flow_control_spans_where_they_happened(self):
        # flow_events.csv: each port's paused spans add up to its whole-run pause time, and the
        # timeline draws each of them on that port's flow-control track, clipped to --window.
        rows = self.flow_rows(self.multi)
        with open(os.path.join(self.multi, "summary.json")) as f:
            s = json.load(f)
        paused = {}
        for r in rows:
            self.assertIn(r["kind"], ("xoff", "paused", "credit_stall", "drop"))
            self.assertLessEqual(float(r["start_ns"]), float(r["end_ns"]))
            if r["kind"] == "paused":
                k = (r["device"], int(r["port"]))
                paused[k] = paused.get(k, 0.0) + float(r["end_ns"]) - float(r["start_ns"])
        self.assertTrue(paused)
        self.assertTrue(any(r["kind"] == "xoff" for r in rows))
        for (dev, port), ns in paused.items():
            c = s["counters"][dev]
            run_total = (c if dev.startswith("host") else c[f"port{port}"])["paused_ns"]
            self.assertAlmostEqual(ns, run_total, delta=1e-3, msg=f"{dev} port{port}")
        starts = [float(r["start_ns"]) for r in rows]
        self.assertEqual(starts, sorted(starts))
        trace = self.timeline(self.multi, name="flow.json")
        check_trace(self, trace)
        spans = [e for e in trace["traceEvents"] if e["ph"] == "X" and e.get("cat") == "paused"]
        self.assertEqual(len(spans), sum(1 for r in rows if r["kind"] == "paused"))
        pid_name = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
                    if e["ph"] == "M" and e["name"] == "process_name"}
        got = {}
        for e in spans:
            dev = e["args"]["device"]
            self.assertEqual(pid_name[e["pid"]], "hosts" if dev.startswith("host") else dev)
            k = (dev, e["args"]["port"])
            self.assertTrue(e["name"].startswith("paused prio "))
            got[k] = got.get(k, 0.0) + e["dur"] * 1e3
        for k, ns in paused.items():
            self.assertAlmostEqual(got[k], ns, delta=1e-3)
        self.assertEqual(trace["otherData"]["flow_events"], len(rows))
        # A window clips the spans to it.
        trace = self.timeline(self.multi, "--window", "3us:4us", name="flow_w.json")
        for e in trace["traceEvents"]:
            if e["ph"] == "X" and e.get("cat") in ("paused", "xoff"):
                self.assertGreaterEqual(e["ts"], 3.0)
                self.assertLessEqual(e["ts"] + e["dur"], 4.0 + 1e-9)

    def test_flow_events_bounded_and_drops_counted(self):
        # Drops at admission are instants, one per packet (ports.csv drops_run); past
        # stats.flow_events the rest are counted in summary.json, not written.
        chip = os.path.join(ROOT, "configs", "switch_51t2.yaml")
        args = ["--set", "switch.buffer.size=300KB", "--set", "switch.buffer.reserved_per_port=0B",
                "--set", "traffic.pattern=incast",
                "--set", "traffic.incast.sources=8", "--set", "traffic.load=0.9",
                "--set", "sim.duration=4us", "--set", "sim.warmup=1us"]
        full = os.path.join(self.tmp, "drops")
        fabricsim_run(chip, args, full)
        rows = self.flow_rows(full)
        with open(os.path.join(full, "ports.csv"), newline="") as f:
            drops = sum(int(r["drops_run"]) for r in csv.DictReader(f))
        self.assertGreater(drops, 10)
        self.assertEqual(sum(1 for r in rows if r["kind"] == "drop"), drops)
        for r in rows:
            if r["kind"] == "drop":
                self.assertEqual(r["start_ns"], r["end_ns"])
        with open(os.path.join(full, "summary.json")) as f:
            self.assertNotIn("flow_events", json.load(f))
        capped = os.path.join(self.tmp, "drops_capped")
        fabricsim_run(chip, args + ["--set", "stats.flow_events=5"], capped)
        kept = self.flow_rows(capped)  # the first 5 recorded (spans are recorded as they end)
        self.assertEqual(len(kept), 5)
        for r in kept:
            self.assertIn(r, rows)
        with open(os.path.join(capped, "summary.json")) as f:
            self.assertEqual(json.load(f)["flow_events"],
                             {"recorded": 5, "not_recorded": len(rows) - 5})
        off = os.path.join(self.tmp, "drops_off")
        fabricsim_run(chip, args + ["--set", "stats.flow_events=0"], off)
        self.assertFalse(os.path.exists(os.path.join(off, "flow_events.csv")))
        trace = self.timeline(off, name="off.json")
        self.assertIn("stats.flow_events = 0", trace["otherData"]["not_included"])

    def test_bad_options(self):
        for args, msg in ((["--window", "5us"], "expected START:END"),
                          (["--window", "5us:2us"], "is not after the start"),
                          (["--interval", "100"], "--interval '100': expected a time with a unit"),
                          (["--max-events", "10"], "--max-events 10: must be at least 100")):
            p = self.script(TIMELINE, self.single, *args)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(msg, p.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: report_test.py BUILD/fabricsim [unittest options]")
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main()
