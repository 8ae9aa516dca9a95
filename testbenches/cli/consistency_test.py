#!/usr/bin/env python3
"""Consistency checks of a chip's configuration (issue 20, section 1): the SerDes lanes must carry
the ports after FEC and PCS coding, by the link layer's arithmetic; the validation configuration
runs at 128 and 256 ports with the same behaviour as before at 16..64."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

FABRICSIM = os.environ.get("FABRICSIM", "")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHIP = os.path.join(ROOT, "configs", "switch_51t2.yaml")
CHIP_102T = os.path.join(ROOT, "configs", "switch_102t4.yaml")
SLOTTED = os.path.join(ROOT, "configs", "validation", "slotted.yaml")


def run(*args):
    return subprocess.run([FABRICSIM, *args], capture_output=True, text=True)


class SerdesLanes(unittest.TestCase):
    def test_raw_lane_rate_that_fec_leaves_short_is_refused(self):
        # 512 lanes / 64 ports = 8 x 100G = 800G raw, but RS(544,514) and 256b/257b transcoding
        # leave 8 x 100G x 514/544 x 256/257 = 752.94G for 800G ports.
        with tempfile.TemporaryDirectory() as tmp:
            refused = [run("check", CHIP, "--set", "switch.serdes.lane_rate=100Gbps"),
                       run("run", CHIP, "--set", "switch.serdes.lane_rate=100Gbps", "--out",
                           os.path.join(tmp, "o"), "--set", "sim.duration=2us", "--set",
                           "sim.warmup=1us")]
        for p in refused:
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            for needle in ("switch.serdes.lane_rate", "8 lanes x 100Gbps is below port_speed "
                           "800Gbps", "RS(544,514)", "752.94Gbps", "switch.serdes.lanes 512",
                           "switch.ports 64"):
                self.assertIn(needle, p.stderr)

    def test_fec_of_the_links_decides(self):
        # Without FEC (64b/66b only) 8 x 100G carry 775.76G: still short of 800G.
        p = run("check", CHIP, "--set", "switch.serdes.lane_rate=100Gbps", "--set",
                "link.phy.fec=none")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("775.76Gbps", p.stderr)
        self.assertIn("64b/66b", p.stderr)

    def test_shipped_chips_carry_their_ports_exactly(self):
        # 8 x 106.25G (51.2T) and 8 x 212.5G (102.4T) with RS(544,514) are 800G and 1.6T exactly.
        for cfg in (CHIP, CHIP_102T):
            p = run("check", cfg)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # One lane fewer per port is refused: 448 lanes over 64 ports give 7 x 106.25G.
        p = run("check", CHIP, "--set", "switch.serdes.lanes=448")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("7 lanes x 106.25Gbps is below port_speed 800Gbps", p.stderr)


class SlottedAtManyPorts(unittest.TestCase):
    """configs/validation/slotted.yaml reserves 2048 cells (128 KiB) per input in a 16 MiB buffer
    of 262,144 cells: at 128 ports that is the whole buffer, refused by the check that
    reservations leave a shared pool. switch.buffer.reserved_max_share: 0.5 caps them at half
    the buffer (1024 cells per input at 128, 512 at 256) and leaves 16..64 ports as they were."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def summary(self, name, *sets):
        out = os.path.join(self.tmp, name)
        args = ["run", SLOTTED, "--out", out]
        for s in sets:
            args += ["--set", s]
        p = run(*args)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "summary.json"), "rb") as f:
            return f.read()

    def test_runs_at_128_and_256_ports_without_drops(self):
        for n in (128, 256):
            self.assertEqual(run("check", SLOTTED, "--set", f"switch.ports={n}").returncode, 0)
            s = json.loads(self.summary(f"n{n}", f"switch.ports={n}", "sim.duration=12us",
                                        "sim.warmup=4us"))
            self.assertEqual(s["packets"]["dropped"], 0)
            self.assertTrue(s["invariants"]["ok"])
            self.assertAlmostEqual(s["throughput"]["accepted_load"], 0.8, delta=0.02)

    def test_uncapped_reservations_are_refused_naming_the_numbers(self):
        p = run("check", SLOTTED, "--set", "switch.ports=128", "--set",
                "switch.buffer.reserved_max_share=0")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        for needle in ("switch.buffer.reserved_per_port", "switch.ports 128 x 2048 cells = "
                       "262144 cells", "262144 cells of switch.buffer.size 16MiB",
                       "switch.buffer.reserved_max_share"):
            self.assertIn(needle, p.stderr)

    def test_cap_leaves_64_ports_as_they_were(self):
        # Saturated input FIFOs fill the buffer, so the reservation decides which arrivals are
        # dropped: the summary is the same with and without the cap (apart from the key's echo)
        # only if the cap leaves 2048 cells per input at 64 ports.
        quick = ["switch.ports=64", "switch.architecture=input_fifo", "traffic.load=1.0",
                 "sim.duration=14us", "sim.warmup=4us"]
        capped = json.loads(self.summary("capped", *quick))
        uncapped = json.loads(self.summary("uncapped", *quick,
                                           "switch.buffer.reserved_max_share=0"))
        self.assertGreater(capped["packets"]["dropped"], 0)  # the reservations were in play
        for s in (capped, uncapped):
            del s["config"]["switch"]["buffer"]["reserved_max_share"]
        self.assertEqual(json.dumps(capped, sort_keys=True), json.dumps(uncapped, sort_keys=True))
        # At 128 ports the cap binds: 1024 cells per input, and the run differs from one that
        # reserves 1024 cells by reserved_per_port only in the echo of the configuration.
        quick[0] = "switch.ports=128"
        capped = json.loads(self.summary("capped128", *quick))
        explicit = json.loads(self.summary("explicit128", *quick,
                                           "switch.buffer.reserved_per_port=64KiB",
                                           "switch.buffer.reserved_max_share=0"))
        self.assertGreater(capped["packets"]["dropped"], 0)
        for s in (capped, explicit):
            del s["config"]
        self.assertEqual(json.dumps(capped, sort_keys=True), json.dumps(explicit, sort_keys=True))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main()
