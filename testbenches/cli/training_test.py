#!/usr/bin/env python3
"""Training steps end to end (issue #41 part 3): a small TP x PP x DP step that
scripts/make_training.py writes runs to the end over the 800G NICs, and summary.json's
workload.by_tag is consistent: each tag's exposed communication sums to the ranks' exposed time,
the bytes each rank sent per tag are the generator's closed forms, the step is no shorter than any
rank's compute nor than the critical path's compute, and the critical path's parts sum to its
length; collectives.csv carries the tag. scripts/compare.py reports what moved between two runs
(a slower GPU: the step and the compute move by the figures of summary.json). scripts/timeline.py
leaves no two slices of a track partially overlapping (Perfetto nests them or draws them on
separate lanes) for an incast over the NICs and for this text workload, where the inputs do
overlap. Bad arguments exit 2 naming the option.

  training_test.py BUILD/fabricsim [unittest options]"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NIC800 = os.path.join(ROOT, "configs", "nic_800g.yaml")
GEN = os.path.join(ROOT, "scripts", "make_training.py")
COMPARE = os.path.join(ROOT, "scripts", "compare.py")
TIMELINE = os.path.join(ROOT, "scripts", "timeline.py")
BASE = ["traffic.pattern=workload", "switch.ports=16", "sim.duration=1us", "sim.warmup=0ns",
        "sim.drain_limit=50ms", "sim.traffic_thread=false", "workload.tc=3",
        "workload.format=text"]
MODEL = ["--layers", "4", "--hidden", "512", "--heads", "8", "--seq", "512", "--vocab", "8000",
         "--micro-batches", "4", "--tp", "2", "--pp", "2", "--dp", "4"]


def run(out, workload, *sets):
    cmd = [FABRICSIM, "run", NIC800, "--out", out]
    for s in BASE + [f"workload.file={workload}"] + list(sets):
        cmd += ["--set", s]
    return subprocess.run(cmd, capture_output=True, text=True)


def generate(path, *extra):
    subprocess.run([sys.executable, GEN, *MODEL, *extra, "--out", path], check=True)
    p = subprocess.run([sys.executable, GEN, *MODEL, *extra, "--volumes"], check=True,
                       capture_output=True, text=True)
    return json.loads(p.stdout)


def partial_overlaps(events):
    """Slices ("X") on one track that start inside another and end after it (the test's own
    count, not the script's)."""
    tracks = {}
    for e in events:
        if e.get("ph") == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    bad = 0
    for spans in tracks.values():
        spans.sort(key=lambda x: (x[0], -x[1]))
        for i, (a, b) in enumerate(spans):
            for c, d in spans[i + 1:]:
                if c >= b:
                    break
                if d > b and c > a:
                    bad += 1
    return bad


class Training(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.tmp = cls._tmp.name
        cls.wl = os.path.join(cls.tmp, "step.txt")
        cls.vol = generate(cls.wl)
        cls.out = os.path.join(cls.tmp, "a")
        p = run(cls.out, cls.wl)
        if p.returncode:
            raise AssertionError(p.stderr)
        with open(os.path.join(cls.out, "summary.json")) as f:
            cls.s = json.load(f)["workload"]

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_step_runs_to_the_end(self):
        self.assertEqual(self.s["nodes_unfinished"], 0)
        self.assertEqual(self.s["collectives"], self.s["collectives_finished"])
        self.assertEqual(self.s["ranks"], self.vol["ranks"])

    def test_exposed_parts_sum_to_the_whole(self):
        parts = self.s["by_tag"]["exposed"]
        self.assertEqual(sorted(parts), ["dp", "pp", "tp", "untagged"])
        total = sum(p["exposed_mean_ns"] for p in parts.values())
        self.assertAlmostEqual(total / self.s["exposed_comm_ns"]["mean"], 1.0, delta=1e-9)
        for t in ("tp", "pp"):  # blocking TP calls and the pipeline's bubble are exposed
            self.assertGreater(parts[t]["exposed_mean_ns"], 0, t)

    def test_every_new_key_says_its_unit(self):
        # docs/results.md#units-in-names, as stats_test.py checks it for an untagged run.
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from stats_test import UNITS, unit_problem
        bad = []

        def walk(node, path, unit):
            for k, v in node.items():
                if isinstance(v, dict):
                    walk(v, f"{path}.{k}", unit or k.endswith(UNITS))
                elif unit_problem(k, unit):
                    bad.append(f"{path}.{k}: {unit_problem(k, unit)}")
        walk(self.s["by_tag"], "workload.by_tag", False)
        self.assertEqual(bad, [])
        self.assertIsNotNone(unit_problem("exposed_ns_mean"))  # the check can fail

    def test_sent_bytes_are_the_closed_forms(self):
        parts = self.s["by_tag"]["exposed"]
        for t in ("tp", "pp", "dp"):
            want = max(st[t] for st in self.vol["sent_bytes_by_stage"])
            self.assertAlmostEqual(parts[t]["sent_max_bytes"] / want, 1.0, delta=1e-6, msg=t)

    def test_step_and_critical_path(self):
        step = self.s["iteration_time_ns"]["max"]
        cp = self.s["by_tag"]["critical_path"]
        self.assertGreaterEqual(step, self.s["compute_ns"]["max"])
        # Each rank's compute is the closed form's: FLOPs / (peak x efficiency).
        want = max(self.vol["rank_compute_s_by_stage"]) * 1e9
        self.assertAlmostEqual(self.s["compute_ns"]["max"] / want, 1.0, delta=1e-3)
        self.assertGreaterEqual(step + 1e-3, cp["compute_ns"])
        self.assertGreater(cp["compute_ns"], 0)
        parts = cp["compute_ns"] + cp["gap_ns"] + sum(cp["comm_ns"].values())
        self.assertAlmostEqual(parts / cp["length_ns"], 1.0, delta=1e-9)
        self.assertAlmostEqual(cp["length_ns"] / step, 1.0, delta=1e-6)

    def test_collectives_csv_carries_the_tag(self):
        with open(os.path.join(self.out, "collectives.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        tags = {r["name"].split("_")[0]: r["tag"] for r in rows}
        self.assertEqual(tags["attn"], "tp")
        self.assertEqual(tags["grads"], "dp")
        # The scripts that read collectives.csv take its text column.
        for script in ("phase_report.py", "report.py"):
            p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script), self.out],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, f"{script}: {p.stderr}")

    def test_compare_reports_what_moved(self):
        wl = os.path.join(self.tmp, "slow.txt")
        generate(wl, "--efficiency", "0.2")  # half the default 0.4: compute takes twice as long
        out = os.path.join(self.tmp, "b")
        p = run(out, wl)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            b = json.load(f)["workload"]
        j = os.path.join(self.tmp, "cmp.json")
        p = subprocess.run([sys.executable, COMPARE, self.out, out, "--json", j],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(j) as f:
            r = json.load(f)
        head = {h["key"]: h for h in r["headline"]}
        c = head["workload.compute_ns.mean"]
        self.assertAlmostEqual(c["ratio"], 2.0, delta=1e-3)
        st = head["workload.iteration_time_ns.mean"]
        self.assertAlmostEqual(st["delta"], b["iteration_time_ns"]["mean"] -
                               self.s["iteration_time_ns"]["mean"], delta=1e-6)
        self.assertIn("workload.by_tag.exposed.tp.exposed_mean_ns", head)
        self.assertIn("| step time, mean (ns) |", p.stdout)
        self.assertEqual(r["collectives"]["only_a"], 0)
        groups = r["collectives"]["by_group"]
        self.assertEqual(sorted(groups), ["dp allreduce_ring", "tp allreduce_ring"])
        self.assertEqual(sum(g["calls"] for g in groups.values()), r["collectives"]["matched"])
        with open(os.path.join(out, "collectives.csv"), newline="") as f:
            tp_b = sum(float(x["time_ns"]) for x in csv.DictReader(f) if x["tag"] == "tp")
        self.assertAlmostEqual(groups["tp allreduce_ring"]["b_ns"], tp_b, delta=1e-3)
        # A run against itself: nothing moved.
        p = subprocess.run([sys.executable, COMPARE, self.out, self.out, "--json", j],
                           capture_output=True, text=True)
        with open(j) as f:
            self.assertEqual(json.load(f)["moved_total"], 0)
        for args, needle in (([self.out, os.path.join(self.tmp, "none")], "none: not a dir"),
                             ([self.out, out, "--top", "0"], "--top '0'"),
                             ([self.out, out, "--threshold", "x"], "--threshold 'x'")):
            p = subprocess.run([sys.executable, COMPARE, *args], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(needle, p.stderr)

    def timeline(self, out):
        j = os.path.join(out, "tl.json")
        p = subprocess.run([sys.executable, TIMELINE, out, "--out", j], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(j) as f:
            return json.load(f)["traceEvents"]

    def test_timeline_text_workload_nests(self):
        # The input overlaps: a rank's async DP calls run beside its TP calls.
        with open(os.path.join(self.out, "ranks.csv"), newline="") as f:
            raw = [{"ph": "X", "pid": r["rank"], "tid": r["kind"], "ts": float(r["start_ns"]),
                    "dur": float(r["end_ns"]) - float(r["start_ns"])} for r in csv.DictReader(f)]
        self.assertGreater(partial_overlaps(raw), 0)
        ev = self.timeline(self.out)
        self.assertEqual(partial_overlaps(ev), 0)
        spans = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "collective"]
        self.assertEqual(len(spans), len([r for r in raw if r["tid"] == "collective"]))
        lanes = [e for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"
                 and e["args"]["name"].startswith("collectives (")]
        self.assertTrue(lanes)
        self.assertEqual(ev, self.timeline(self.out))  # deterministic

    def test_timeline_incast_nests(self):
        out = os.path.join(self.tmp, "incast")
        p = subprocess.run([FABRICSIM, "run", NIC800, "--out", out, "--set", "switch.ports=16",
                            "--set", "traffic.pattern=incast", "--set", "sim.duration=20us",
                            "--set", "sim.warmup=2us", "--set", "traffic.incast.sources=8",
                            "--set", "traffic.load=0.9", "--set", "traffic.message_size=16KiB"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        ev = self.timeline(out)
        msgs = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "message"]
        self.assertGreater(len(msgs), 100)
        raw = [dict(e, tid=e["tid"] & ((1 << 24) - 1)) for e in msgs]
        self.assertGreater(partial_overlaps(raw), 0)  # without the lanes they would overlap
        self.assertEqual(partial_overlaps(ev), 0)

    def test_bad_workload_statements_exit_2(self):
        bad = os.path.join(self.tmp, "bad.txt")
        for text, needle in (
                ("ranks 4\ncommunicator pp size 2 stride 2 tag\n", "`tag` needs a value"),
                ("ranks 4\ncommunicator pp size 2 stride 2 tag a/b\n", "tag 'a/b'"),
                ("ranks 4\ncommunicator pp size 2 stride 2\non pp 2 compute 1us\n",
                 "'2' is not a whole number in [0, 1]"),
                ("ranks 4\ncommunicator pp size 2 stride 2\non pp 0 sendrecv pp 1KiB next\n",
                 "`sendrecv` cannot follow `on`"),
                ("ranks 4\ncommunicator pp size 2 stride 2\non pp 0 send pp 1KiB next\n",
                 "no receive matches"),
                ("ranks 4\ncommunicator pp size 2 stride 2\n"
                 "on pp 0 collective allreduce_ring world 1KiB\n", "inside and outside")):
            with open(bad, "w") as f:
                f.write(text)
            p = run(os.path.join(self.tmp, "bad"), bad)
            with self.subTest(text=text):
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(needle, p.stderr)
                self.assertIn("bad.txt", p.stderr)


if __name__ == "__main__":
    FABRICSIM = sys.argv.pop(1)
    unittest.main()
