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


if __name__ == "__main__":
    if len(sys.argv) > 1:
        FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main()
