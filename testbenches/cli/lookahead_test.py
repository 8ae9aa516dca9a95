#!/usr/bin/env python3
"""Run-ahead (sim.lookahead, models/common/device_scheduler.h) is a speed setting only: every
result file of a multi-switch run is the same with it on and off, over topologies, flow control
(PFC incast, IB credits), switch kinds of different port speeds, wires whose frames stall
mid-frame (which shrink the windows), and occupancy sampling; and it is in effect where it should
be (perf.json's lookahead_cycles: the link latency in core cycles), and off on ideal links, with
sim.lookahead=false. A single chip (hosts only) runs ahead of its hosts alike."""
import os
import subprocess
import sys
import tempfile
import unittest

from same_results import result_files

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cfg(name):
    return os.path.join(ROOT, "configs", name)


LEAF_SPINE = ["--set", "topology.kind=leaf_spine", "--set", "topology.leaves=4",
              "--set", "topology.spines=2", "--set", "topology.hosts_per_leaf=8"]
CASES = {
    "single_chip": (cfg("switch_51t2.yaml"), ["--set", "traffic.load=0.9", "--set", "sim.duration=6us"]),
    "fat_tree": (cfg("switch_51t2.yaml"), ["--set", "topology.kind=fat_tree", "--set", "topology.k=4",
                                          "--set", "traffic.load=0.6", "--set", "sim.duration=12us",
                                          "--set", "stats.occupancy_interval=50ns"]),
    # PFC: an incast through the spines pauses the uplinks (headroom, XOFF timing).
    "pfc_incast": (cfg("switch_51t2_roce.yaml"), LEAF_SPINE + [
        "--set", "traffic.pattern=incast", "--set", "traffic.incast.sources=16",
        "--set", "traffic.load=0.6", "--set", "sim.duration=15us"]),
    "ib_credits": (cfg("examples/two_switch_ib.yaml"), ["--set", "sim.duration=12us"]),
    "kinds": (cfg("examples/leaf_spine_kinds.yaml"), ["--set", "sim.duration=10us"]),
    "dragonfly": (cfg("examples/dragonfly.yaml"), ["--set", "sim.duration=10us"]),
    # Frames that stall mid-wire are handed over late: they bound the windows.
    "stalls": (cfg("switch_51t2.yaml"), LEAF_SPINE + [
        "--set", "switch.egress.start=first_cell", "--set", "traffic.load=0.8",
        "--set", "sim.duration=10us", "--set", "traffic.sizes=[64,1500,9000]",
        "--set", "traffic.size_weights=[1,1,1]"]),
}


def run(tmp, name, config, args, lookahead):
    out = os.path.join(tmp, f"{name}_{lookahead}")
    p = subprocess.run([FABRICSIM, "run", config, "--out", out, "--set",
                        f"sim.lookahead={'true' if lookahead else 'false'}", *args],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"{name}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return result_files(out, "lookahead")


class Lookahead(unittest.TestCase):
    def test_results_are_the_same_with_and_without_run_ahead(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, (config, args) in CASES.items():
                with self.subTest(name):
                    on, perf_on = run(tmp, name, config, args, True)
                    off, perf_off = run(tmp, name, config, args, False)
                    self.assertEqual(perf_off["lookahead_cycles"], 1)
                    # 3 m of cable (15 ns) and 100 ns of FEC at 1.35 GHz (dragonfly: its own).
                    self.assertGreater(perf_on["lookahead_cycles"], 50, name)
                    self.assertEqual(sorted(on), sorted(off))
                    for f in on:
                        self.assertTrue(on[f] == off[f], f"{name}: {f} differs with run-ahead")

    def test_window_is_the_link_latency_in_cycles(self):
        with tempfile.TemporaryDirectory() as tmp:
            args = ["--set", "topology.kind=fat_tree", "--set", "topology.k=4",
                    "--set", "sim.duration=3us", "--set", "sim.warmup=1us"]
            _, perf = run(tmp, "w", cfg("switch_51t2.yaml"), args + ["--set", "link.length_m=3",
                                                                     "--set", "link.ns_per_m=5"], True)
            # (15 ns + 100 ns FEC) x 1.35 GHz = 155.25 cycles: 155 whole ones.
            self.assertEqual(perf["lookahead_cycles"], 155)
            _, perf = run(tmp, "ideal", cfg("switch_51t2.yaml"),
                          args + ["--set", "link.model=ideal"], True)
            self.assertEqual(perf["lookahead_cycles"], 1)


if __name__ == "__main__":
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
