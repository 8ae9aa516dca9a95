#!/usr/bin/env python3
"""Tests of scripts/report.py (one self-contained HTML page per run or sweep) and
scripts/timeline.py (a run as Chrome/Perfetto trace JSON), on small simulations: a 4-port
single switch, a RoCE leaf-spine with PFC (6 switches), a 2-point sweep, and for the report's
transport and collectives sections a NIC run and an all-reduce workload, each also cut short by
sim.drain_limit (messages in flight, calls unfinished).

  report_test.py BUILD/fabricsim [unittest options]

The report needs matplotlib: it runs under the first of $PLOT_PYTHON, this interpreter and
/usr/bin/python3 that can import it (the test fails if none can)."""
import base64
import csv
import html
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
NIC = os.path.join(ROOT, "configs", "nic_400g.yaml")
# 128 RDMA NICs, DCQCN: a few QPs are slowed (qp_rates.csv) and every message completes.
NIC_RUN = ["--set", "sim.duration=30us", "--set", "sim.warmup=5us",
           "--set", "nic.rate_trace_interval=1us"]
# Three all-reduce calls of 256 KiB, 512 KiB, 1 MiB: a busbw each, all different.
WORKLOAD = ["--set", "traffic.pattern=workload", "--set", "workload.collective=allreduce_ring",
            "--set", "workload.ranks=8", "--set", "workload.bytes=256KiB",
            "--set", "workload.sweep_to=1MiB", "--set", "workload.tc=3"]
# Cut short: the drain ends before the work does (exit 3, results written).
NIC_CUT = ["--set", "sim.duration=30us", "--set", "sim.warmup=5us", "--set", "sim.drain_limit=2us"]
WORKLOAD_CUT = WORKLOAD + ["--set", "sim.duration=60us", "--set", "sim.warmup=5us",
                           "--set", "sim.drain_limit=1us"]


def plot_python():
    for cand in (os.environ.get("PLOT_PYTHON"), sys.executable, "/usr/bin/python3"):
        if cand and os.path.exists(cand) and subprocess.run(
                [cand, "-c", "import matplotlib"], capture_output=True).returncode == 0:
            return cand
    return None


def fabricsim_run(config, args, out, code=0):
    p = subprocess.run([FABRICSIM, "run", config, *args, "--out", out], capture_output=True,
                       text=True, timeout=600)
    if p.returncode != code:
        raise AssertionError(f"fabricsim run: exit {p.returncode}, not {code}: {p.stderr}")


def html_table(page, cls):
    """The rows of the page's <table class=cls> as dicts by header, cells as plain text."""
    m = re.search(rf'<table class="{cls}">(.*?)</table>', page, re.S)
    if not m:
        raise AssertionError(f'no <table class="{cls}"> in the page')
    rows = [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in
             re.findall(r"<t[dh]>(.*?)</t[dh]>", r, re.S)]
            for r in re.findall(r"<tr>(.*?)</tr>", m.group(1), re.S)]
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def cell_number(text):
    return float(text.replace(",", ""))


def csv_dicts(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def nearest_rank(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]


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
    for name, args, code in (("nic", NIC_RUN + ["--set", "sim.drain_limit=10ms"], 0),
                             ("workload", WORKLOAD + ["--set", "sim.drain_limit=10ms"], 0),
                             ("nic_cut", NIC_CUT, 3), ("workload_cut", WORKLOAD_CUT, 3)):
        RUNS[name] = os.path.join(RUNS["tmp"], name)
        fabricsim_run(NIC, args, RUNS[name], code)


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
        self.assert_no_work_sections(page)

    def assert_no_work_sections(self, page):
        # A switch-only run has no fct.csv nor collectives.csv: no section at all, not an empty
        # one, and no verdict row about messages or calls.
        for absent in ('id="transport"', 'id="collectives"', "NIC messages", "collective calls",
                       "qp_rates", 'class="alert"'):
            self.assertNotIn(absent, page)

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
        self.assert_no_work_sections(page)

    def verdict_row(self, page, check):
        rows = {r["check"]: r["verdict"] for r in html_table(page, "verdicts")}
        self.assertIn(check, rows)
        ok = re.search(rf"<td>{re.escape(check)}</td><td><span class=\"(ok|bad)\">", page)
        return ok.group(1), rows[check]

    def test_transport_section(self):
        out = RUNS["nic"]
        page = self.report(out)
        fct = csv_dicts(os.path.join(out, "fct.csv"))
        with open(os.path.join(out, "summary.json")) as f:
            t = json.load(f)["transport"]
        self.assertIn('id="transport"', page)
        self.assertNotIn('id="collectives"', page)
        done = [r for r in fct if r["state"] == "completed"]
        self.assertEqual(len(done), len(fct))  # this run completes its work
        counts = {r["messages"]: r for r in html_table(page, "msg-counts")}
        self.assertEqual(cell_number(counts["completed"]["fct.csv"]), len(done))
        self.assertEqual(cell_number(counts["completed"]["summary.json transport"]),
                         t["messages_completed"])
        self.assertEqual(cell_number(counts["failed"]["fct.csv"]), 0)
        self.assertEqual(cell_number(counts["in flight"]["fct.csv"]), 0)
        self.assertEqual(self.verdict_row(page, "NIC messages (fct.csv)"),
                         ("ok", f"all {len(fct):,} completed"))
        self.assertNotIn('class="alert"', page)
        # FCT and slowdown percentiles: fct.csv's by nearest rank; the slowdowns also match the
        # summary's own (computed by the simulator from unrounded values).
        dist = {r["figure"]: r for r in html_table(page, "fct-dist")}
        fct_us = [float(r["fct_ns"]) / 1e3 for r in done]
        slow = [float(r["slowdown"]) for r in done]
        for col, q in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)):
            self.assertAlmostEqual(cell_number(dist["FCT (us)"][col]), nearest_rank(fct_us, q),
                                   delta=1e-4 * max(fct_us), msg=col)
            self.assertAlmostEqual(cell_number(dist["slowdown"][col]), t["slowdown"][col],
                                   delta=1e-4 * t["slowdown"][col], msg=col)
        self.assertEqual(cell_number(dist["slowdown"]["count"]), t["slowdown"]["count"])
        self.assertGreater(max(slow), 1.05)  # congestion: the distribution is not a point
        counters = {r["counter"]: r["value"] for r in html_table(page, "transport-counters")}
        for k in ("retransmitted_packets", "timeouts", "cnps_sent", "cnps_received"):
            self.assertEqual(cell_number(counters[k]), t[k], k)
        self.assertGreater(t["cnps_sent"], 0)
        # qp_rates.csv: one line per QP up to 12, the rest counted as omitted.
        qps = {(r["nic"], r["peer"], r["qp"]) for r in csv_dicts(os.path.join(out, "qp_rates.csv"))}
        self.assertGreater(len(qps), 12)
        self.assertIn(f"{len(qps):,} QPs in qp_rates.csv; drawn: the 12 whose rate fell lowest, "
                      f"{len(qps) - 12:,} omitted", page)
        for alt in ("FCT and slowdown distributions", "Per-QP pacer rate (qp_rates.csv)"):
            self.assertIn(f'alt="{alt}', page)
        self.check_page(page, len(page_images(page)))

    def test_collectives_section(self):
        out = RUNS["workload"]
        page = self.report(out)
        calls = csv_dicts(os.path.join(out, "collectives.csv"))
        steps = csv_dicts(os.path.join(out, "steps.csv"))
        self.assertEqual(len(calls), 3)
        self.assertEqual(len({c["busbw_GBps"] for c in calls}), 3)
        self.assertIn('id="collectives"', page)
        self.assertIn('id="transport"', page)  # its messages are NIC messages too
        self.assertEqual(self.verdict_row(page, "collective calls (collectives.csv, steps.csv)"),
                         ("ok", "all 3 finished"))
        rows = html_table(page, "coll-calls")
        self.assertEqual([r["call"] for r in rows], [c["name"] for c in calls])
        for r, c in zip(rows, calls):
            # The page's busbw and algbw are collectives.csv's, to the digit.
            self.assertEqual(r["busbw (GB/s)"], c["busbw_GBps"], c["name"])
            self.assertEqual(r["algbw (GB/s)"], c["algbw_GBps"], c["name"])
            self.assertAlmostEqual(cell_number(r["time (us)"]), float(c["time_ns"]) / 1e3,
                                   delta=1e-3)
            n = sum(1 for x in steps if x["name"] == c["name"])
            self.assertEqual(r["steps finished"], f"{n} of {n}")
            self.assertEqual(r["state"], "finished")
        self.assertIn('alt="Collective calls: busbw and time per call', page)
        self.assertIn("No qp_rates.csv", page)  # no rate trace asked for
        self.assertNotIn('class="alert"', page)
        self.check_page(page, len(page_images(page)))

    def test_messages_in_flight_flagged(self):
        # A real run cut short: most messages still in flight. The page says so at the top.
        out = RUNS["nic_cut"]
        page = self.report(out)
        fct = csv_dicts(os.path.join(out, "fct.csv"))
        left = [r for r in fct if r["state"] == "in_flight"]
        done = len(fct) - len(left)
        self.assertTrue(left)
        want = (f"WORK NOT DONE: {done:,} of {len(fct):,} completed, 0 failed, "
                f"{len(left):,} in flight at the end")
        self.assertEqual(self.verdict_row(page, "NIC messages (fct.csv)"), ("bad", want))
        self.assertIn(f'<p class="alert">{want}', page)
        counts = {r["messages"]: r for r in html_table(page, "msg-counts")}
        self.assertEqual(cell_number(counts["in flight"]["fct.csv"]), len(left))
        self.assertEqual(cell_number(counts["completed"]["fct.csv"]), done)
        listed = html_table(page, "msg-not-done")
        self.assertEqual([r["id"] for r in listed], [r["id"] for r in left[:20]])
        self.assertIn(f"{len(left) - 20:,} more not listed", page)
        dist = {r["figure"]: r for r in html_table(page, "fct-dist")}
        self.assertEqual(cell_number(dist["FCT (us)"]["count"]), done)

    def test_failed_messages_flagged(self):
        # No short run makes a QP run out of retries, so three messages are marked failed in a
        # copy, fct.csv and summary.json alike (as the simulator writes a failed message).
        bad = os.path.join(self.tmp, "failed")
        shutil.copytree(RUNS["nic"], bad)
        path = os.path.join(bad, "fct.csv")
        rows = csv_dicts(path)
        failed = [rows[i]["id"] for i in (3, 10, 40)]
        for i in (3, 10, 40):
            rows[i].update(completion_ns="", fct_ns="", ideal_fct_ns="", slowdown="",
                           state="failed")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        spath = os.path.join(bad, "summary.json")
        with open(spath) as f:
            s = json.load(f)
        s["transport"]["messages_completed"] -= 3
        s["transport"]["messages_failed"] = 3
        with open(spath, "w") as f:
            json.dump(s, f)
        page = self.report(bad)
        want = (f"WORK NOT DONE: {len(rows) - 3:,} of {len(rows):,} completed, 3 failed, "
                "0 in flight at the end")
        self.assertEqual(self.verdict_row(page, "NIC messages (fct.csv)"), ("bad", want))
        self.assertIn(f'<p class="alert">{want}', page)
        self.assertIn('<td>failed</td><td><span class="bad">3</span></td><td>3</td>', page)
        listed = html_table(page, "msg-not-done")
        self.assertEqual([(r["id"], r["state"]) for r in listed], [(i, "failed") for i in failed])
        dist = {r["figure"]: r for r in html_table(page, "fct-dist")}
        self.assertEqual(cell_number(dist["FCT (us)"]["count"]), len(rows) - 3)
        # fct.csv that disagrees with summary.json (files of two runs) is flagged, not trusted.
        with open(spath, "w") as f:
            s["transport"]["messages_failed"] = 0
            json.dump(s, f)
        page = self.report(bad)
        self.assertEqual(self.verdict_row(page, "NIC messages (fct.csv)"),
                         ("bad", want + "; fct.csv disagrees with summary.json on failed"))
        self.assertIn('<span class="bad">0 (differs from fct.csv)</span>', page)

    def test_unfinished_calls_flagged(self):
        out = RUNS["workload_cut"]
        page = self.report(out)
        calls = csv_dicts(os.path.join(out, "collectives.csv"))
        steps = csv_dicts(os.path.join(out, "steps.csv"))
        left = [c for c in calls if c["state"] == "unfinished"]
        steps_left = [x for x in steps if x["state"] == "unfinished"]
        self.assertTrue(left and steps_left and len(left) < len(calls))
        ok, text = self.verdict_row(page, "collective calls (collectives.csv, steps.csv)")
        self.assertEqual(ok, "bad")
        self.assertTrue(text.startswith(
            f"WORK NOT DONE: {len(calls) - len(left)} of {len(calls)} calls finished, "
            f"{len(steps_left)} steps and "), text)
        self.assertIn(f'<p class="alert">{text}', page)
        rows = {r["call"]: r for r in html_table(page, "coll-calls")}
        for c in calls:
            r = rows[c["name"]]
            self.assertEqual(r["state"], c["state"])
            if c["state"] == "unfinished":  # no bandwidth for a call that did not end
                self.assertEqual((r["time (us)"], r["busbw (GB/s)"]), ("-", "-"))
            else:
                self.assertEqual(r["busbw (GB/s)"], c["busbw_GBps"])
        listed = html_table(page, "steps-not-done")
        self.assertEqual([(r["call"], r["step"]) for r in listed],
                         [(x["name"], x["step"]) for x in steps_left[:20]])
        # The workload posted only some of its messages: fct.csv cannot count the rest.
        self.assertIn("messages it never posted are not in fct.csv", page)

    def test_many_calls(self):
        # 250 calls (copies of the run's first, renamed; the 231st unfinished): the table holds
        # the first 200 and every unfinished one past them, and says how many it left out.
        d = os.path.join(self.tmp, "many_calls")
        shutil.copytree(RUNS["workload"], d)
        path = os.path.join(d, "collectives.csv")
        calls = csv_dicts(path)
        rows = [dict(calls[0], name=f"allreduce_ring#{i}") for i in range(250)]
        rows[230].update(end_ns="", time_ns="", algbw_GBps="0.000", busbw_GBps="0.000",
                         state="unfinished")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(calls[0]))
            w.writeheader()
            w.writerows(rows)
        page = self.report(d)
        shown = [r["call"] for r in html_table(page, "coll-calls")]
        self.assertEqual(shown, [f"allreduce_ring#{i}" for i in list(range(200)) + [230]])
        self.assertIn("49 finished calls past the first 200 not listed", page)
        self.assertEqual(self.verdict_row(page, "collective calls (collectives.csv, steps.csv)")[0],
                         "bad")

    def test_bad_section_inputs(self):
        # Each: one line on stderr naming the file, exit 2, no traceback, no page.
        def broken(src, name, edit, msg):
            d = os.path.join(self.tmp, "broken")
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(src, d)
            path = os.path.join(d, name)
            if edit is None:
                os.remove(path)
            else:
                with open(path, "rb") as f:
                    data = f.read()
                with open(path, "wb") as f:
                    f.write(edit(data))
            p = self.script(REPORT, d)
            self.assertEqual(p.returncode, 2, (name, p.stderr))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(f"{path}", p.stderr)
            self.assertIn(msg, p.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "report.html")))
        nic, wl = RUNS["nic"], RUNS["workload"]
        broken(nic, "fct.csv", None, "missing (summary.json has a 'transport' section")
        broken(nic, "fct.csv", lambda b: b"", "empty file")
        broken(nic, "fct.csv", lambda b: b.replace(b",slowdown,", b",slow,", 1),
               "no column 'slowdown'")
        broken(nic, "fct.csv", lambda b: b.replace(b",completed\n", b",done\n", 1),
               ":2: state 'done' is not one of completed, failed, in_flight")
        broken(nic, "fct.csv", lambda b: b[:b.rindex(b",")], "14 fields, header has 15")  # cut
        broken(nic, "fct.csv", lambda b: b + b"\x89PNG\xff\xfe\n", "not UTF-8 text")
        broken(nic, "qp_rates.csv", lambda b: re.sub(rb"\n([^,]*),([^,]*),[^,]*,", rb"\n\1,\2,x,",
                                                     b, count=1), ":2: peer 'x' is not a number")
        broken(wl, "collectives.csv", None, "missing (summary.json has a 'workload' section")
        broken(wl, "collectives.csv", lambda b: b.replace(b",finished,", b",ok,", 1),
               "state 'ok' is not finished or unfinished")
        broken(wl, "steps.csv", None, "missing")
        broken(wl, "steps.csv", lambda b: b.replace(b"name,step", b"name,stp", 1),
               "no column 'step'")

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
                            "--vary", "switch.scheduler.iterations=1,2", "--set",
                            "traffic.size=512B", *SINGLE, "--jobs", "2", "--out", out,
                            "--fabricsim", FABRICSIM],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = self.report(out)
        self.check_page(page, 1)
        self.assertIn("FabricSim sweep: sweep", page)
        for load in ("0.3", "0.6"):
            self.assertIn(f"<td>{load}</td>", page)
        self.assertIn('<span class="ok">4 of 4</span>', page)
        # The setup every point shares: the base configuration and the fixed overrides.
        self.assertIn(f"<td>base configuration</td><td>{html.escape(SLOTTED)}</td>", page)
        self.assertIn("traffic.size=512B", page)
        self.assertIn("<td>varied: switch.scheduler.iterations</td><td>1, 2</td>", page)
        # sweep.py's own figure, which fits a 1,400 px page (a line style per series and readable
        # log ticks are sweep_test's business: the page draws the same figure).
        png = page_images(page)[0]
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        self.assertLessEqual(width, 1400)
        self.assertGreater(height, 600)
        # Without sweep_setup.json the page says the setup was not recorded.
        os.remove(os.path.join(out, "sweep_setup.json"))
        page = self.report(out)
        self.assertIn("the base configuration and the fixed overrides are not recorded", page)

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
