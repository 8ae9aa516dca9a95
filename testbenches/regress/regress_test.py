#!/usr/bin/env python3
"""`fabricsim regress` end to end (docs/regressions.md): goldens written and matched, a tolerance
breach, a missing golden, an incompatible schema version refused, exact figures compared exactly,
configurations that no longer resolve, JUnit XML, speed ratios, suite-file errors.

  regress_test.py BUILD/fabricsim
"""
import copy
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FABRICSIM = None

# Two short cases: the 51.2T chip (a band tolerance, an exact counter) and the slotted switch
# (an exact floating-point figure).
SUITE = f"""\
description: regress_test.py's suite
root: {ROOT}
defaults:
  seed: 1
cases:
  - name: uni
    config: configs/switch_51t2.yaml
    set: [sim.duration=4us, sim.warmup=1us, traffic.load=0.5]
    metrics:
      latency_ns.mean: {{rel: 0.01}}
      packets.delivered: exact
      throughput.accepted_load: {{abs: 0.001}}
  - name: slot
    config: configs/validation/slotted.yaml
    set: [switch.ports=8, sim.duration=10us, sim.warmup=1us]
    metrics:
      latency_ns.mean: exact
      throughput.accepted_load: {{abs: 0.01}}
"""
ROWS = 5  # metrics over both cases


def regress(*args, **env_over):
    # Runs of failing suites are kept in a temporary directory: this test's own.
    env = dict(os.environ, TMPDIR=Regress._tmp.name, **env_over)
    return subprocess.run([FABRICSIM, "regress", *args], capture_output=True, text=True, env=env)


def junit(path):
    """(tests, failures, {(classname, name): failure element or None}) of a JUnit file."""
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites", root.tag
    suites = root.findall("testsuite")
    assert len(suites) == 1
    cases = {}
    for tc in suites[0].findall("testcase"):
        cases[(tc.get("classname"), tc.get("name"))] = tc.find("failure")
    return int(suites[0].get("tests")), int(suites[0].get("failures")), cases


class Regress(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.base = os.path.join(cls._tmp.name, "base")
        os.makedirs(cls.base)
        cls.suite = os.path.join(cls.base, "t.yaml")
        with open(cls.suite, "w") as f:
            f.write(SUITE)
        p = regress(cls.suite, "--update-goldens")
        assert p.returncode == 0, p.stdout + p.stderr
        cls.update_out = p.stdout
        with open(os.path.join(cls.base, "t.goldens.json")) as f:
            cls.goldens = json.load(f)
        cls.count = 0

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def fresh(self, suite_text=SUITE, goldens=None):
        """A copy of the suite in a directory of its own, with `goldens` (default: the ones
        written in setUpClass; False: none). Returns (suite path, goldens path)."""
        type(self).count += 1
        d = os.path.join(self._tmp.name, f"c{self.count}")
        os.makedirs(d)
        suite = os.path.join(d, "t.yaml")
        with open(suite, "w") as f:
            f.write(suite_text)
        gpath = os.path.join(d, "t.goldens.json")
        if goldens is not False:
            with open(gpath, "w") as f:
                json.dump(self.goldens if goldens is None else goldens, f, indent=2)
        return suite, gpath

    @staticmethod
    def read_json(path):
        with open(path) as f:
            return json.load(f)

    def edited(self, edit):
        g = copy.deepcopy(self.goldens)
        edit(g)
        return g

    # --- goldens written, then matched -------------------------------------------------------
    def test_update_writes_a_record_of_config_and_versions(self):
        g = self.goldens
        self.assertEqual(g["format"], 1)
        self.assertEqual(sorted(g["cases"]), ["slot", "uni"])
        version = subprocess.run([FABRICSIM, "--version"], capture_output=True,
                                 text=True).stdout.split()[-1]
        uni = g["cases"]["uni"]
        self.assertEqual(uni["fabricsim_version"], version)
        self.assertEqual(uni["summary_schema_version"], 3)
        self.assertEqual(uni["config"]["file"], "configs/switch_51t2.yaml")
        self.assertEqual(uni["config"]["set"],
                         ["sim.duration=4us", "sim.warmup=1us", "traffic.load=0.5"])
        self.assertEqual(uni["config"]["seed"], 1)
        self.assertRegex(uni["config"]["fnv1a64"], r"^[0-9a-f]{16}$")
        resolved = "\n".join(uni["config"]["resolved"])
        self.assertIn("duration: 4us", resolved)
        self.assertIn("load: 0.5", resolved)
        # The figures are summary.json's own.
        self.assertEqual(set(uni["metrics"]),
                         {"latency_ns.mean", "packets.delivered", "throughput.accepted_load"})
        self.assertIsInstance(uni["metrics"]["packets.delivered"], int)
        self.assertGreater(uni["metrics"]["packets.delivered"], 100)
        self.assertIn("written", self.update_out)

    def test_rerun_passes_and_junit_counts(self):
        suite, _ = self.fresh()
        xml = os.path.join(os.path.dirname(suite), "j.xml")
        p = regress(suite, "--junit", xml)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        header = p.stdout.splitlines()[1]
        self.assertEqual(header.split(), ["case", "metric", "golden", "now", "delta", "verdict"])
        self.assertIn("5 of 5 checks passed, 0 failed", p.stdout)
        tests, failures, cases = junit(xml)
        self.assertEqual((tests, failures), (ROWS, 0))
        self.assertIn(("regress.t.uni", "latency_ns.mean"), cases)
        self.assertIn(("regress.t.slot", "latency_ns.mean"), cases)
        self.assertTrue(all(f is None for f in cases.values()))

    def test_update_of_one_case_keeps_the_others(self):
        suite, gpath = self.fresh()
        p = regress(suite, "--update-goldens", "--case", "slot")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(gpath) as f:
            g = json.load(f)
        self.assertEqual(g, self.goldens)  # deterministic runs: the same figures, same record

    # --- breaches ------------------------------------------------------------------------------
    def test_a_tolerance_breach_fails_with_a_junit_failure(self):
        suite, _ = self.fresh()
        xml = os.path.join(os.path.dirname(suite), "j.xml")
        p = regress(suite, "--case", "uni", "--set", "traffic.load=0.8", "--junit", xml)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn(f"{suite}: case 'uni': latency_ns.mean: golden", p.stderr)
        self.assertIn("REGRESSION", p.stdout)
        # The note says what differs from the golden's configuration.
        self.assertIn("traffic.load: 0.5 -> 0.8", p.stdout)
        tests, failures, cases = junit(xml)
        self.assertEqual(tests, 3)  # only uni ran
        f = cases[("regress.t.uni", "latency_ns.mean")]
        self.assertIsNotNone(f)
        self.assertEqual(f.get("type"), "regression")
        self.assertIn("rel 1%", f.get("message"))
        self.assertEqual(failures, sum(1 for x in cases.values() if x is not None))
        self.assertGreaterEqual(failures, 2)  # the latency and the delivered count moved

    def test_relative_band_edges(self):
        base = self.goldens["cases"]["uni"]["metrics"]["latency_ns.mean"]
        for factor, rc in ((1.009, 0), (0.991, 0), (1.011, 1), (0.989, 1)):
            g = self.edited(lambda g: g["cases"]["uni"]["metrics"].update(
                {"latency_ns.mean": base * factor}))
            suite, _ = self.fresh(goldens=g)
            p = regress(suite, "--case", "uni")
            self.assertEqual(p.returncode, rc, f"factor {factor}:\n{p.stdout}{p.stderr}")

    def test_exact_figures_compare_exactly(self):
        v = self.goldens["cases"]["slot"]["metrics"]["latency_ns.mean"]
        self.assertIsInstance(v, float)
        g = self.edited(lambda g: g["cases"]["slot"]["metrics"].update(
            {"latency_ns.mean": math.nextafter(v, math.inf)}))  # one unit in the last place
        suite, _ = self.fresh(goldens=g)
        p = regress(suite, "--case", "slot")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("case 'slot': latency_ns.mean", p.stderr)
        self.assertIn("differs (exact)", p.stderr)
        n = self.goldens["cases"]["uni"]["metrics"]["packets.delivered"]
        g = self.edited(lambda g: g["cases"]["uni"]["metrics"].update(
            {"packets.delivered": n + 1}))
        suite, _ = self.fresh(goldens=g)
        p = regress(suite, "--case", "uni")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertRegex(p.stderr, r"case 'uni': packets.delivered: golden \d+, now \d+, delta -1")

    # --- goldens that cannot be compared -------------------------------------------------------
    def test_missing_goldens_file_fails(self):
        suite, gpath = self.fresh(goldens=False)
        xml = os.path.join(os.path.dirname(suite), "j.xml")
        p = regress(suite, "--junit", xml)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn(f"{suite}: case 'uni': latency_ns.mean: missing golden: no goldens file "
                      f"{gpath}", p.stderr)
        tests, failures, cases = junit(xml)
        self.assertEqual((tests, failures), (ROWS, ROWS))
        self.assertTrue(all(f.get("type") == "missing_golden" for f in cases.values()))

    def test_missing_case_or_metric_golden_fails(self):
        g = self.edited(lambda g: g["cases"].pop("slot"))
        suite, _ = self.fresh(goldens=g)
        p = regress(suite)
        self.assertEqual(p.returncode, 1)
        self.assertIn("case 'slot': latency_ns.mean: missing golden", p.stderr)
        self.assertNotIn("case 'uni'", p.stderr)
        g = self.edited(lambda g: g["cases"]["uni"]["metrics"].pop("packets.delivered"))
        suite, _ = self.fresh(goldens=g)
        p = regress(suite)
        self.assertEqual(p.returncode, 1)
        self.assertIn("case 'uni': packets.delivered: missing golden", p.stderr)
        self.assertIn("4 of 5 checks passed", p.stdout)

    def test_incompatible_schema_version_is_refused(self):
        g = self.edited(lambda g: g["cases"]["uni"].update({"summary_schema_version": 1}))
        suite, _ = self.fresh(goldens=g)
        xml = os.path.join(os.path.dirname(suite), "j.xml")
        p = regress(suite, "--junit", xml)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("case 'uni': latency_ns.mean: refusing to compare: the golden was written "
                      "from summary.json schema_version 1, this build writes 3", p.stderr)
        self.assertIn("REFUSED", p.stdout)
        _, failures, cases = junit(xml)
        self.assertEqual(failures, 3)
        self.assertEqual(cases[("regress.t.uni", "packets.delivered")].get("type"), "schema")
        # A goldens file of another layout is refused whole.
        g = self.edited(lambda g: g.update({"format": 99}))
        suite, _ = self.fresh(goldens=g)
        p = regress(suite)
        self.assertEqual(p.returncode, 1)
        self.assertIn("has goldens format 99, this fabricsim reads format 1", p.stderr)

    def test_goldens_of_another_shape_are_refused_naming_the_file(self):
        # The JSON library's type_error.306 / .302 leaked, naming no file.
        for g, what in (([1, 2], "the document is not a JSON object"),
                        ({"format": 1, "cases": []}, '"cases" is not an object'),
                        ({"format": 1, "cases": {"uni": {"config": {"fnv1a64": 5}}}},
                         "case 'uni': config \"fnv1a64\" is not a string"),
                        ({"format": 1, "cases": {"uni": {"metrics": {}}}},
                         "case 'uni': \"config\" is not an object")):
            with self.subTest(goldens=g):
                suite, gpath = self.fresh(goldens=g)
                for args in ((), ("--check-configs",)):
                    p = regress(suite, *args)
                    self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                    self.assertEqual(p.stderr, f"fabricsim: error: {gpath}: {what} (goldens are "
                                               "written by --update-goldens)\n")
        suite, gpath = self.fresh(goldens=False)
        with open(gpath, "w") as f:
            f.write('{"format": 1, "cases": \x01}')
        p = regress(suite)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(f"{gpath}: not valid JSON: parse error at line 1", p.stderr)
        self.assertNotIn("json.exception", p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)

    def test_a_set_that_is_not_utf8_still_writes_the_json_report(self):
        # type_error.316 when the report held the set's bytes: no report, a library error.
        suite, _ = self.fresh()
        with open(suite, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(SUITE.replace("traffic.load=0.5", '"traffic.load=0.\udcff5"'))
        report = os.path.join(os.path.dirname(suite), "r.json")
        env = dict(os.environ, TMPDIR=Regress._tmp.name)
        p = subprocess.run([FABRICSIM, "regress", suite, "--json", report], capture_output=True,
                           env=env)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertNotIn(b"type_error", p.stderr)
        with open(report, encoding="utf-8") as f:
            rows = json.load(f)["rows"]
        self.assertIn("configuration no longer resolves", rows[0]["message"])
        self.assertIn("\ufffd", rows[0]["message"])

    def test_a_config_that_no_longer_resolves_fails(self):
        # The suite's override names a key the model does not have (renamed, say).
        suite, _ = self.fresh(SUITE.replace("traffic.load=0.5", "traffic.lod=0.5"))
        p = regress(suite)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn(f"{suite}: case 'uni': latency_ns.mean: configuration no longer resolves",
                      p.stderr)
        self.assertIn("traffic.lod", p.stderr)
        self.assertIn("CONFIG", p.stdout)
        self.assertNotIn("case 'slot'", p.stderr)
        # The golden's own record holds a key the model no longer knows.
        def rename(g):
            lines = g["cases"]["slot"]["config"]["resolved"]
            g["cases"]["slot"]["config"]["resolved"] = [
                l.replace("iterations:", "rounds:") for l in lines]
        suite, _ = self.fresh(goldens=self.edited(rename))
        p = regress(suite)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("case 'slot': latency_ns.mean: the golden's configuration no longer "
                      "resolves", p.stderr)
        self.assertIn("switch.scheduler.rounds", p.stderr)

    def test_check_configs_runs_nothing_and_names_what_changed(self):
        suite, _ = self.fresh()
        p = regress(suite, "--check-configs")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("2 of 2 cases' configurations match their goldens", p.stdout)
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(suite), "uni")))
        # A default that moved (here: the suite's own override), key by key; the other case not.
        suite, _ = self.fresh(SUITE.replace("traffic.load=0.5", "traffic.load=0.6"))
        p = regress(suite, "--check-configs")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("case 'uni': the resolved configuration differs", p.stderr)
        self.assertIn("traffic.load: 0.5 -> 0.6", p.stderr)
        self.assertNotIn("case 'slot'", p.stderr)
        # --update-configs rewrites that record alone (runs nothing, keeps the figures): the
        # configurations then match, and the figures are still compared on the next run.
        with open(os.path.splitext(suite)[0] + ".goldens.json") as f:
            before = json.load(f)
        p = regress(suite, "--update-configs")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("case 'uni': configuration record rewritten, figures kept", p.stdout)
        self.assertIn("(1 records rewritten)", p.stdout)
        with open(os.path.splitext(suite)[0] + ".goldens.json") as f:
            after = json.load(f)
        self.assertEqual(after["cases"]["uni"]["metrics"], before["cases"]["uni"]["metrics"])
        self.assertNotEqual(after["cases"]["uni"]["config"], before["cases"]["uni"]["config"])
        self.assertEqual(after["cases"]["slot"], before["cases"]["slot"])
        self.assertEqual(regress(suite, "--check-configs").returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(suite), "uni")))
        self.assertEqual(regress(suite, "--update-configs", "--update-goldens").returncode, 2)
        # No goldens, or a case they lack: fails too.
        suite, _ = self.fresh(goldens=False)
        self.assertEqual(regress(suite, "--check-configs").returncode, 1)
        suite, _ = self.fresh(goldens=self.edited(lambda g: g["cases"].pop("slot")))
        p = regress(suite, "--check-configs")
        self.assertEqual(p.returncode, 1)
        self.assertIn("case 'slot': missing golden", p.stderr)
        # A case that sets a key that cannot act (a crossbar's on a shared-memory chip) is
        # refused as `check --strict` would, in --check-configs and in a run alike.
        suite, _ = self.fresh(SUITE.replace("traffic.load=0.5",
                                            "traffic.load=0.5, switch.scheduler.iterations=3"))
        for args in (("--check-configs",), ()):
            p = regress(suite, *args)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn("case 'uni'", p.stderr)
            self.assertIn("switch.scheduler.iterations: cannot act here", p.stderr)

    def test_a_failed_run_is_reported(self):
        suite, _ = self.fresh(SUITE.replace("traffic.load=0.5", "traffic.load=0.5, "
                                            "traffic.pattern=trace, traffic.trace.file=/nonexistent"))
        p = regress(suite, "--case", "uni")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertRegex(p.stderr, r"case 'uni': latency_ns.mean: (the run exited 2|configuration)")
        self.assertIn("/nonexistent", p.stderr)

    def test_unknown_metric_fails(self):
        suite, _ = self.fresh(SUITE.replace("packets.delivered: exact",
                                            "packets.delivered: exact\n      packets.nope: exact"))
        p = regress(suite, "--case", "uni")
        self.assertEqual(p.returncode, 1)
        self.assertIn("case 'uni': packets.nope: not in summary.json", p.stderr)

    # --- bad suite files and options: exit 2 ---------------------------------------------------
    def test_unknown_suite_key_is_bad_input(self):
        suite, _ = self.fresh(SUITE.replace("    metrics:\n      latency_ns.mean: exact",
                                            "    metric:\n      latency_ns.mean: exact"))
        p = regress(suite)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertRegex(p.stderr, re.escape(suite) + r":\d+: unknown key 'cases\[1\]\.metric'; "
                         r"did you mean 'cases\[1\]\.metrics'\?")
        suite, _ = self.fresh(SUITE.replace("{abs: 0.001}", "{absolute: 0.001}"))
        p = regress(suite)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown key 'cases[0].metrics['throughput.accepted_load'].absolute'",
                      p.stderr)
        p = regress(suite + ".missing")
        self.assertEqual(p.returncode, 2)
        self.assertIn("cannot open suite", p.stderr)
        p = regress(self.suite, "--case", "unii")
        self.assertEqual(p.returncode, 2)
        self.assertIn("has no case 'unii'; did you mean 'uni'?", p.stderr)

    # --- speed -----------------------------------------------------------------------------------
    def test_speed_is_a_ratio_against_the_machine_reference(self):
        text = SUITE + """\
  - name: fast
    config: configs/validation/slotted.yaml
    set: [switch.ports=8, sim.duration=20us, sim.warmup=1us]
    metrics:
      packets.delivered: exact
    speed: {repeats: 3, max_ratio: 100}
"""
        suite, gpath = self.fresh(text, goldens=False)
        p = regress(suite, "--update-goldens", "--case", "fast")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(gpath) as f:
            speed = json.load(f)["cases"]["fast"]["speed"]
        self.assertEqual(speed["repeats"], 3)
        self.assertEqual(speed["perf_schema_version"], 1)
        self.assertGreater(speed["wall_mref"], 0)
        self.assertGreater(speed["cpu_mref"], 0)  # CPU time recorded beside wall time
        record = os.path.join(os.path.dirname(suite), "r.json")
        p = regress(suite, "--case", "fast", "--json", record)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        line = next(l for l in p.stdout.splitlines()
                    if l.startswith("fast ") and " speed (wall) " in l)
        m = re.search(r"ok \(x([0-9.]+) <= x100\.00; cpu x([0-9.]+); median of 3\)", line)
        self.assertIsNotNone(m, line)
        # The same run on the same machine: the ratio is near 1, whatever the load.
        # (A loose bound: the test shares a loaded machine with other tests.)
        self.assertLess(abs(math.log(float(m.group(1)))), math.log(10), line)
        self.assertNotRegex(line, r"\d\s*(s|ms|us)\b")  # a ratio, never a raw time
        with open(record) as f:
            runs = json.load(f)["runs"]["fast"]
        self.assertEqual(len(runs), 3)
        for r in runs:
            self.assertGreater(r["wall_s"], 0)
            self.assertGreater(r["cpu_s"], 0)
            self.assertGreater(r["machine_ref_wall_ns"], 0)
            self.assertGreater(r["machine_ref_cpu_ns"], 0)
        # A threshold below the ratio fails the speed check, and says by how much (here judged
        # on the CPU clock).
        suite2, _ = self.fresh(text.replace("max_ratio: 100", "max_ratio: 0.01, judge: cpu"),
                               goldens=self.read_json(gpath))
        xml = os.path.join(os.path.dirname(suite2), "j.xml")
        p = regress(suite2, "--case", "fast", "--junit", xml)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("SLOWER", p.stdout)
        self.assertRegex(p.stderr, r"case 'fast': speed \(cpu\): x[0-9.]+ the golden's CPU time "
                         r"per machine-reference step \(median of 3\), above the threshold "
                         r"x0\.01; wall x[0-9.]+")
        _, failures, cases = junit(xml)
        self.assertEqual(failures, 1)
        self.assertEqual(cases[("regress.t.fast", "speed (cpu)")].get("type"), "regression")
        self.assertIsNone(cases[("regress.t.fast", "packets.delivered")])

    # --- instruction counts (callgrind) ----------------------------------------------------------
    # A 1 us run of an 8-port slotted switch: seconds under callgrind.
    COUNTED = SUITE + """\
  - name: counted
    config: configs/validation/slotted.yaml
    set: [switch.ports=8, sim.duration=1us, sim.warmup=0ns]
    metrics:
      packets.delivered: exact
    instructions: {rel: 0.02}
"""
    ROW = "instructions per packet"

    def test_instruction_counts_are_recorded_and_held_to_their_band(self):
        if shutil.which("valgrind") is None:
            self.skipTest("valgrind is not installed (Debian package valgrind)")
        if os.environ.get("FABRICSIM_SANITIZED"):
            self.skipTest("valgrind cannot run an AddressSanitizer build (FABRICSIM_SANITIZE)")
        suite, gpath = self.fresh(self.COUNTED, goldens=False)
        p = regress(suite, "--update-goldens", "--case", "counted")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        g = self.read_json(gpath)
        counted = g["cases"]["counted"]
        ins = counted["instructions"]
        self.assertGreater(ins["total"], 1_000_000)
        self.assertEqual(ins["packets_delivered"], counted["metrics"]["packets.delivered"])
        self.assertAlmostEqual(ins["per_packet"], ins["total"] / ins["packets_delivered"])
        self.assertEqual(ins["set"], ["sim.traffic_thread=false", "sim.threads=1"])
        self.assertTrue(ins["optimized"])
        self.assertRegex(ins["valgrind"], r"^\d+\.\d+")
        self.assertNotIn("instructions", g["cases"].get("uni", {}))
        # The same binary and input count the same (to a few instructions: the band is tight).
        xml = os.path.join(os.path.dirname(suite), "j.xml")
        p = regress(suite, "--case", "counted", "--junit", xml)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        line = next(l for l in p.stdout.splitlines() if self.ROW in l)
        self.assertRegex(line, r"ok \(rel 2%; [0-9.]+ M for \d+ packets\)")
        _, failures, cases = junit(xml)
        self.assertEqual(failures, 0)
        self.assertIn(("regress.t.counted", self.ROW), cases)

        def scaled(factor):
            return self.edited_from(g, lambda x: x["cases"]["counted"]["instructions"].update(
                {"per_packet": ins["per_packet"] * factor}))
        # Inside the band passes; 3% fewer in the golden (3% more work now) fails, exit 1.
        suite2, _ = self.fresh(self.COUNTED, goldens=scaled(1.015))
        p = regress(suite2, "--case", "counted")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        suite2, _ = self.fresh(self.COUNTED, goldens=scaled(1 / 1.03))
        xml = os.path.join(os.path.dirname(suite2), "j.xml")
        p = regress(suite2, "--case", "counted", "--junit", xml)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("MORE WORK", p.stdout)
        self.assertRegex(p.stderr, rf"{re.escape(suite2)}: case 'counted': {self.ROW}: golden "
                         r"[0-9.]+, now [0-9.]+ \([0-9.]+ M for \d+ packets\), delta \+[0-9.]+ "
                         r"\(\+3(\.0\d*)?%\): \|delta\| [0-9.]+ > [0-9.]+ allowed \(rel 2%\)")
        _, failures, cases = junit(xml)
        self.assertEqual(failures, 1)
        self.assertEqual(cases[("regress.t.counted", self.ROW)].get("type"), "regression")
        self.assertIsNone(cases[("regress.t.counted", "packets.delivered")])
        # A golden without a count, or counted on an unoptimised build, is not compared.
        suite2, _ = self.fresh(self.COUNTED, goldens=self.edited_from(
            g, lambda x: x["cases"]["counted"].pop("instructions")))
        p = regress(suite2, "--case", "counted")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn(f"case 'counted': {self.ROW}: missing golden", p.stderr)
        suite2, _ = self.fresh(self.COUNTED, goldens=self.edited_from(
            g, lambda x: x["cases"]["counted"]["instructions"].update({"optimized": False})))
        p = regress(suite2, "--case", "counted")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("REFUSED", p.stdout)
        self.assertIn("the golden was counted on an unoptimised build", p.stderr)

    def test_instruction_counts_need_valgrind_and_a_valid_band(self):
        # No valgrind on PATH: a setup error (exit 2) naming the case, before anything runs.
        suite, _ = self.fresh(self.COUNTED, goldens=False)
        empty = os.path.join(os.path.dirname(suite), "empty-path")
        os.makedirs(empty)
        p = regress(suite, "--update-goldens", PATH=empty)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("case 'counted' counts instructions (instructions:), which needs valgrind: "
                      "not found on PATH", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(os.path.dirname(suite), "t.goldens.json")))
        # The other cases need no valgrind.
        p = regress(suite, "--update-goldens", "--case", "uni", PATH=empty)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # A bad band: exit 2, naming the file, line and key.
        for band, msg in (("{rel: -0.02}", "cases[2].instructions.rel: expected a number >= 0"),
                          ("{tolerance: 0.02}", "unknown key 'cases[2].instructions.tolerance'")):
            suite, _ = self.fresh(self.COUNTED.replace("{rel: 0.02}", band))
            p = regress(suite)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertRegex(p.stderr, re.escape(suite) + r":\d+: ")
            self.assertIn(msg, p.stderr)

    @staticmethod
    def edited_from(g, edit):
        g = copy.deepcopy(g)
        edit(g)
        return g


if __name__ == "__main__":
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
