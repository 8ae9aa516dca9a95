#!/usr/bin/env python3
"""occupancy.csv end to end: streamed during the run (models/sim/occupancy_writer.h), so memory does
not grow with simulated time; one row per sample instant up to the end of the run; the steps the
runner cuts for the writer change nothing in the results; an interrupted run still leaves a whole
file."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest

from cpu_wait import wait_cpu

FABRICSIM = os.environ.get("FABRICSIM", "")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHIP = os.path.join(ROOT, "configs", "switch_51t2.yaml")
SLOTTED = os.path.join(ROOT, "configs", "validation", "slotted.yaml")
RESULT_FILES = ["energy.csv", "flow_events.csv", "links.csv", "occupancy.csv", "perf.json", "ports.csv", "summary.json"]


def run(out, *args, env=None):
    p = subprocess.run([FABRICSIM, "run", *args, "--out", out], capture_output=True, text=True,
                       env=env)
    return p


def read(path):
    with open(path) as f:
        return f.read()


class Occupancy(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def check_rows(self, out, interval_ns, columns):
        """One row per instant k x interval up to the end of the run, each with every column."""
        summary = json.loads(read(os.path.join(out, "summary.json")))
        lines = read(os.path.join(out, "occupancy.csv")).splitlines()
        header = lines[0].split(",")
        self.assertEqual(header[:2], ["time_ns", "total_bytes"])
        self.assertEqual(len(header), 2 + columns)
        end_ns = summary["window"]["sim_end_ns"]
        rows = lines[1:]
        self.assertEqual(len(rows), int(round(end_ns * 1000)) // int(round(interval_ns * 1000)) + 1)
        for k in (0, 1, len(rows) // 2, len(rows) - 1):
            cells = rows[k].split(",")
            self.assertEqual(len(cells), 2 + columns, rows[k])
            self.assertEqual(cells[0], f"{k * interval_ns:.3f}")
            self.assertEqual(int(cells[1]), sum(int(c) for c in cells[2:]))
        return summary, rows

    def test_memory_is_flat_over_simulated_time(self):
        # The same light run for 0.2 ms and 2 ms with a sample every 10 ns: 20,000 and 200,000 rows
        # of 64 ports. Kept in memory until the end (as before streaming) the longer run held
        # ~1.3 KB per sample more (the cores' samples, the report's copy, the CSV text): ~230 MB.
        # Streamed, it may use at most 8 MB more than the short run.
        rss = {}
        for duration in ("200us", "2ms"):
            out = os.path.join(self.tmp, duration)
            p = run(out, CHIP, "--set", f"sim.duration={duration}", "--set", "sim.warmup=10us",
                    "--set", "traffic.load=0.01", "--set", "stats.occupancy_interval=10ns")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.check_rows(out, 10.0, 64)
            rss[duration] = json.loads(read(os.path.join(out, "perf.json")))["peak_rss_mb"]
        self.assertLess(rss["2ms"] - rss["200us"], 8.0, rss)

    def test_steps_cut_for_the_writer_change_nothing(self):
        # A tiny batch makes the runner stop every 16 samples (16 ns here, its chunks are 100 ns):
        # every result file is byte-identical to the run stepped only at its chunks.
        outs = []
        for batch in (None, "100"):
            out = os.path.join(self.tmp, f"b{batch}")
            env = dict(os.environ)
            env.pop("FABRICSIM_OCCUPANCY_BATCH", None)
            if batch:
                env["FABRICSIM_OCCUPANCY_BATCH"] = batch
            p = run(out, CHIP, "--set", "traffic.load=0.5", "--set", "stats.occupancy_interval=1ns",
                    env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            outs.append(out)
        for name in ("summary.json", "ports.csv", "links.csv", "occupancy.csv"):
            self.assertTrue(read(os.path.join(outs[0], name)) == read(os.path.join(outs[1], name)),
                            name)
        _, rows = self.check_rows(outs[0], 1.0, 64)
        self.assertGreater(max(int(r.split(",")[1]) for r in rows), 0)  # the buffer was used

    def test_several_switches_sample_at_the_same_instants(self):
        out = os.path.join(self.tmp, "ls")
        p = run(out, CHIP, "--set", "switch.ports=8", "--set", "topology.kind=leaf_spine",
                "--set", "topology.leaves=2", "--set", "topology.spines=2",
                "--set", "topology.hosts_per_leaf=4", "--set", "stats.occupancy_interval=20ns",
                "--set", "sim.duration=10us", "--set", "sim.warmup=2us")
        self.assertEqual(p.returncode, 0, p.stderr)
        summary, rows = self.check_rows(out, 20.0, 4 * 8)
        header = read(os.path.join(out, "occupancy.csv")).splitlines()[0].split(",")
        names = [s["name"] for s in summary["switches"]]
        self.assertEqual(header[2:], [f"{n}.port{p}_bytes" for n in names for p in range(8)])
        # Every switch held something at some instant.
        for s in range(4):
            self.assertGreater(max(sum(int(c) for c in r.split(",")[2 + 8 * s:10 + 8 * s])
                                   for r in rows), 0, names[s])

    def test_interrupted_run_leaves_a_whole_file(self):
        out = os.path.join(self.tmp, "int")
        proc = subprocess.Popen([FABRICSIM, "run", SLOTTED, "--out", out, "--set",
                                 "switch.ports=64", "--set", "sim.duration=100000us", "--set",
                                 "stats.occupancy_interval=200ns"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_cpu(proc, 1.0)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 1, stdout + stderr)
        self.assertEqual(sorted(os.listdir(out)), RESULT_FILES)  # no occupancy.csv.part left
        summary, rows = self.check_rows(out, 200.0, 64)
        self.assertTrue(summary["interrupted"])
        self.assertGreater(len(rows), 10)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
