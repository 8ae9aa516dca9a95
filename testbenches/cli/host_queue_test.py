#!/usr/bin/env python3
"""The hosts' bounded transmit queues and trace replay end to end (issues #20 and #21): a host's
class queue holds at most host.queue_limit packets, a synthetic packet that finds it full is
refused and counted (offered, never injected) with the conservation law still holding; a trace is
streamed into the queues as they drain, with the same results as unbounded queues; a trace longer
than sim.duration is replayed whole, and one the drain limit cuts short fails the run (exit 3)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROCE = os.path.join(ROOT, "configs", "switch_51t2_roce.yaml")
IB = os.path.join(ROOT, "configs", "switch_51t2_ib.yaml")
CHIP = os.path.join(ROOT, "configs", "switch_51t2.yaml")
# The README's 63-to-1 incast under PFC.
INCAST = ["traffic.pattern=incast", "traffic.incast.sources=63"]


def all_to_all_trace(path, hosts=16, rounds=256, size=2048, classes=1):
    """Every host sends `rounds` packets to every other host, all due at time zero (the file
    grouped by source, so that a host's lines are far from the others')."""
    with open(path, "w") as f:
        for src in range(hosts):
            for r in range(rounds):
                for k in range(1, hosts):
                    tc = f" {r % classes}" if classes > 1 else ""
                    f.write(f"0 {src} {(src + k) % hosts} {size}{tc}\n")
    return hosts * rounds * (hosts - 1)


class HostQueues(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def run_sim(self, name, config, sets, expect_rc=0):
        out = os.path.join(self.tmp, name)
        cmd = [FABRICSIM, "run", config, "--out", out]
        for s in sets:
            cmd += ["--set", s]
        p = subprocess.run(cmd, capture_output=True, text=True)
        self.assertEqual(p.returncode, expect_rc, p.stdout + p.stderr)
        with open(os.path.join(out, "summary.json"), "rb") as f:
            raw = f.read()
        return raw, json.loads(raw), p.stdout

    def assert_conserved(self, s):
        pk = s["packets"]
        self.assertEqual(pk["injected"], pk["delivered"] + pk["dropped"] + pk["in_flight"])
        self.assertTrue(s["invariants"]["ok"], s["invariants"]["violations"])

    def test_full_queue_refuses_and_counts_what_it_refused(self):
        _, s, text = self.run_sim("limit", ROCE, INCAST + ["host.queue_limit=64"])
        hq = s["host_queues"]
        refused = hq["refused_packets"]
        self.assertGreater(refused, 1000)
        # Every sender's queue is full at the end: at most the limit each, and the refusals are
        # each host's own counter.
        self.assertLessEqual(hq["backlog_at_end"], 63 * 64)
        self.assertGreater(hq["backlog_at_end"], 60 * 64)
        per_host = sum(v.get("refused_packets", 0) for k, v in s["counters"].items()
                       if k.startswith("host"))
        self.assertEqual(per_host, refused)
        self.assertNotIn("refused_packets", s["counters"]["host0"])  # the target sends nothing
        self.assert_conserved(s)
        self.assertIn(f"{refused} packets refused", text)
        # The bottleneck is the target's port: what it delivers does not depend on the limit.
        _, u, _ = self.run_sim("unbounded", ROCE, INCAST + ["host.queue_limit=0"])
        self.assertNotIn("refused_packets", u["host_queues"])
        self.assertEqual(u["throughput"]["accepted_load"], s["throughput"]["accepted_load"])

    def test_a_limit_never_reached_changes_no_result(self):
        for config, sets in [(CHIP, []), (ROCE, ["traffic.load=0.9"]), (IB, [])]:
            raw_a, a, _ = self.run_sim("a", config, sets + ["host.queue_limit=0"])
            raw_b, b, _ = self.run_sim("b", config, sets)
            self.assertEqual(b["config"]["host"]["queue_limit"], 8192)
            a["config"]["host"] = b["config"]["host"]
            self.assertEqual(a, b, config)

    def test_trace_streamed_into_small_queues_gives_the_unbounded_results(self):
        trace = os.path.join(self.tmp, "a2a.trace")
        all_to_all_trace(trace, rounds=16, size=1024, classes=2)
        base = ["switch.ports=16", "traffic.pattern=trace", f"traffic.trace.file={trace}",
                "flow_control.pfc.lossless_mask=3", "traffic.tc_weights=[1,1]"]
        _, a, _ = self.run_sim("a", ROCE, base + ["host.queue_limit=0"])
        _, b, _ = self.run_sim("b", ROCE, base + ["host.queue_limit=3"])
        self.assertEqual(b["packets"]["injected"], 16 * 16 * 15)
        a["config"]["host"] = b["config"]["host"]
        self.assertEqual(a, b)
        self.assert_conserved(b)

    def test_waiting_trace_packets_need_a_writable_temporary_folder(self):
        # The packets of a full class wait in a file in TMPDIR: a folder that cannot take it
        # stops the run with a message naming it and what to change (not a crash, no results).
        trace = os.path.join(self.tmp, "a2a.trace")
        all_to_all_trace(trace)
        out = os.path.join(self.tmp, "notmp")
        bad = os.path.join(self.tmp, "no-such-folder")
        p = subprocess.run([FABRICSIM, "run", IB, "--out", out, "--set", "switch.ports=16",
                            "--set", "traffic.pattern=trace", "--set",
                            f"traffic.trace.file={trace}", "--set", "host.queue_limit=4"],
                           capture_output=True, text=True, env={**os.environ, "TMPDIR": bad})
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn(bad, p.stderr)
        self.assertIn("TMPDIR", p.stderr)
        self.assertIn("host.queue_limit", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "summary.json")))
        # The same run with its default folder replays the whole trace.
        _, s, _ = self.run_sim("tmp", IB, ["switch.ports=16", "traffic.pattern=trace",
                                           f"traffic.trace.file={trace}", "host.queue_limit=4"])
        self.assertEqual(s["packets"]["injected"], 61440)

    def test_trace_longer_than_the_run_is_sent_whole(self):
        # 61,440 packets of 2 KiB from 16 hosts take ~80 us of line rate: beyond sim.duration
        # (20 us), within its drain limit. The run used to stop with most of them unsent.
        trace = os.path.join(self.tmp, "a2a.trace")
        n = all_to_all_trace(trace)
        self.assertEqual(n, 61440)
        _, s, _ = self.run_sim("ib", IB, ["switch.ports=16", "traffic.pattern=trace",
                                          f"traffic.trace.file={trace}"])
        self.assertEqual(s["packets"]["injected"], n)
        self.assertEqual(s["host_queues"]["backlog_at_end"], 0)
        self.assertTrue(s["window"]["drained"])
        self.assert_conserved(s)

    def test_trace_cut_short_by_the_drain_limit_fails_the_run(self):
        trace = os.path.join(self.tmp, "a2a.trace")
        n = all_to_all_trace(trace, size=4096)  # ~160 us of line rate
        _, s, text = self.run_sim("cut", IB, ["switch.ports=16", "traffic.pattern=trace",
                                              f"traffic.trace.file={trace}",
                                              "sim.drain_limit=1us"], expect_rc=3)
        left = n - s["packets"]["injected"]
        self.assertGreater(left, 0)
        self.assertFalse(s["invariants"]["ok"])
        self.assertIn(f"{left} of the trace's {n} packets were never sent", text)
        # Conservation itself still holds: only the liveness check fails.
        pk = s["packets"]
        self.assertEqual(pk["injected"], pk["delivered"] + pk["dropped"] + pk["in_flight"])

    def test_bad_limit_is_refused_naming_the_key(self):
        p = subprocess.run([FABRICSIM, "check", CHIP, "--set", "host.queue_limit=-1"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("host.queue_limit", p.stderr)


if __name__ == "__main__":
    FABRICSIM = sys.argv.pop(1)
    unittest.main()
