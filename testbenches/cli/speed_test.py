#!/usr/bin/env python3
"""testbenches/bench/speed.py's CPU-time record: each run's CPU time is measured beside its wall
time, and a run that waited for a CPU (wall > 1.2x CPU) is flagged. Cheap: no simulation, only
children that sleep or burn a known amount of CPU time. And the headline block of
docs/performance.md: its instruction table written from the nightly goldens, checked without
runs."""
import importlib.util
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_speed():
    spec = importlib.util.spec_from_file_location(
        "speed", os.path.join(ROOT, "testbenches", "bench", "speed.py"))
    mod = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.dont_write_bytecode = saved
    return mod


speed = load_speed()

# Burns `s` seconds of its own CPU time, however long that takes on a busy machine.
BURN = ("import resource, sys\n"
        "s = float(sys.argv[1])\n"
        "while sum(resource.getrusage(resource.RUSAGE_SELF)[:2]) < s: pass\n")


class CpuTime(unittest.TestCase):
    def test_a_sleeping_run_is_flagged(self):
        # 0.6 s on the clock, almost nothing on a CPU: what a descheduled run looks like.
        p, wall, cpu = speed.timed_run([sys.executable, "-c", "import time; time.sleep(0.6)"])
        self.assertEqual(p.returncode, 0)
        self.assertGreaterEqual(wall, 0.6)
        self.assertLess(cpu, 0.4)
        self.assertTrue(speed.time_sliced(wall, cpu))

    def test_cpu_time_is_the_childs_own(self):
        # The child's CPU time is counted (not this process's, nor an earlier child's).
        speed.timed_run([sys.executable, "-c", BURN, "0.3"])
        p, wall, cpu = speed.timed_run([sys.executable, "-c", BURN, "0.4"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertGreaterEqual(cpu, 0.4)
        self.assertLess(cpu, 0.4 + 0.3)  # the interpreter's start-up, not the first child's 0.3
        self.assertGreaterEqual(wall, cpu * 0.9)

    def test_threshold_and_note(self):
        self.assertFalse(speed.time_sliced(1.2, 1.0))
        self.assertTrue(speed.time_sliced(1.21, 1.0))
        self.assertFalse(speed.time_sliced(0.6, 1.0))  # a helper thread: CPU above wall
        results = {"a": {"process_wall_s": [1.0, 3.0], "process_cpu_s": [1.0, 1.5],
                         "time_sliced": [False, True]},
                   "b": {"process_wall_s": [2.0], "process_cpu_s": [2.0],
                         "time_sliced": [False]}}
        note = speed.cpu_note(results)
        self.assertIn("1 of 3 runs time-sliced", note)
        self.assertIn("a #2 (wall 3.00 s, CPU 1.50 s)", note)
        self.assertNotIn("a #1", note)
        for r in results.values():
            r["time_sliced"] = [False] * len(r["time_sliced"])
        self.assertIn("none waited for a CPU", speed.cpu_note(results))


# The headline block as speed.py --write left it before the instruction table (one line).
DOC = """# Performance

## Whole simulator

```sh
testbenches/bench/speed.py --repeat 5 --write docs/performance.md
```

<!-- speed:begin -->
| scenario | figure | median of 5 | range | target |
|---|---|---|---|---|
| slotted 64-port voq + iSLIP-1, load 0.6 | cell times per wall second | 338,525 | 334,229 - 339,539 | >= 180,000 |
| 51.2T chip, uniform, 4096 B, load 0.9 | peak RSS | 20 MB | 20 MB - 20 MB |  |
| 51.2T chip, uniform, 4096 B, load 0.9 | slowdown (wall / simulated) | 1,076x | 1,065x - 1,084x | < 5,000x |

Measured 2026-11-25 09:50 UTC, source 6280b2d.
Instructions (callgrind, `configs/validation/slotted.yaml` with `x=1`): 349.8 M for 240,327 packets.
<!-- speed:end -->

## Next
"""

GOLDENS = {"format": 1, "cases": {
    "plain": {"config": {"file": "a.yaml", "set": ["x=1"]}, "metrics": {}},
    "instr_b": {"config": {"file": "configs/b.yaml", "set": ["sim.duration=6us", "y=2"]},
                "instructions": {"total": 429_200_000, "packets_delivered": 240_327,
                                 "per_packet": 429_200_000 / 240_327,
                                 "set": ["sim.traffic_thread=false", "sim.threads=1"],
                                 "valgrind": "3.19.0", "compiler": "Debian Clang 14.0.6",
                                 "optimized": True}}}}


class Headline(unittest.TestCase):
    """The headline block of docs/performance.md: written from the goldens, checked without runs."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.doc = os.path.join(self.tmp.name, "performance.md")
        self.goldens = os.path.join(self.tmp.name, "nightly.goldens.json")
        with open(self.doc, "w") as f:
            f.write(DOC)
        with open(self.goldens, "w") as f:
            json.dump(GOLDENS, f)

    def tearDown(self):
        self.tmp.cleanup()

    def read(self):
        with open(self.doc) as f:
            return f.read()

    def test_headline_writes_the_goldens_counts_and_keeps_the_timing_table(self):
        self.assertTrue(speed.check_headline(self.doc, self.goldens))  # the old line: stale
        speed.write_headline(self.doc, goldens_path=self.goldens)
        doc = self.read()
        self.assertEqual(speed.check_headline(self.doc, self.goldens), [])
        self.assertIn("| 51.2T chip, uniform, 4096 B, load 0.9 | peak RSS | 20 MB |", doc)
        self.assertIn("Measured 2026-11-25 09:50 UTC, source 6280b2d.\n\nInstructions (callgrind, "
                      "one thread: `sim.traffic_thread=false sim.threads=1`)", doc)
        self.assertIn("| `instr_b` | `configs/b.yaml` with `sim.duration=6us y=2` | 429.2 M | "
                      "240,327 | 1,786 |", doc)
        self.assertNotIn("349.8 M", doc)
        self.assertNotIn("`plain`", doc)  # no count, no row
        self.assertTrue(doc.endswith("<!-- speed:end -->\n\n## Next\n"))
        speed.write_headline(self.doc, goldens_path=self.goldens)  # idempotent
        self.assertEqual(self.read(), doc)

    def test_a_count_edited_by_hand_or_a_moved_golden_fails_the_check(self):
        speed.write_headline(self.doc, goldens_path=self.goldens)
        edited = self.read().replace("| 1,786 |", "| 1,700 |")
        with open(self.doc, "w") as f:
            f.write(edited)
        problems = speed.check_headline(self.doc, self.goldens)
        self.assertEqual(len(problems), 1)
        self.assertIn("is not the nightly goldens'", problems[0])
        self.assertIn("speed.py --headline", problems[0])
        speed.write_headline(self.doc, goldens_path=self.goldens)
        GOLDENS["cases"]["instr_b"]["instructions"]["total"] += 10_000_000
        try:
            with open(self.goldens, "w") as f:
                json.dump(GOLDENS, f)
        finally:
            GOLDENS["cases"]["instr_b"]["instructions"]["total"] -= 10_000_000
        self.assertTrue(speed.check_headline(self.doc, self.goldens))

    def test_a_block_that_does_not_parse_fails_the_check(self):
        speed.write_headline(self.doc, goldens_path=self.goldens)
        good = self.read()
        for broken, what in (
                (good.replace("<!-- speed:end -->", ""), "expected one"),
                (good.replace("## Whole simulator", "## Elsewhere"), "not under"),
                (good.replace("| median of 5 |", "| mean |"), "table header"),
                (good.replace("| 20 MB - 20 MB |", "| 20 MB |"), "does not parse"),
                (good.replace("| 338,525 |", "| fast |"), "does not parse")):
            with open(self.doc, "w") as f:
                f.write(broken)
            problems = speed.check_headline(self.doc, self.goldens)
            self.assertEqual(len(problems), 1, what)
            self.assertIn(what, problems[0])

    def test_the_shipped_doc_is_current(self):
        self.assertEqual(speed.check_headline(os.path.join(ROOT, "docs", "performance.md")), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
