#!/usr/bin/env python3
"""testbenches/bench/speed.py's CPU-time record: each run's CPU time is measured beside its wall
time, and a run that waited for a CPU (wall > 1.2x CPU) is flagged. Cheap: no simulation, only
children that sleep or burn a known amount of CPU time."""
import importlib.util
import os
import sys
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


if __name__ == "__main__":
    unittest.main(verbosity=2)
