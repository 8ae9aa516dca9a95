#!/usr/bin/env python3
"""The shipped chips as a datasheet states them (issue #20, docs/hardware-facts.md):

- at zero load, each shipped chip's latency equals the closed form of its configured pipeline
  (exactly: every packet within 1e-6 ns), and its port-to-port latency (first bit in to first bit
  out, plus the FEC the model charges to the link) lies in the published range for 51.2T-class
  Ethernet switch chips, 250-600 ns;
- at load, the shipped egress never stalls a frame mid-wire (egress.start no_underrun: 0 underruns)
  where the old setting (first_cell) stalls frames (more than 0.5 underruns per frame)."""
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import unittest
from fractions import Fraction

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHIPS = ["switch_51t2.yaml", "switch_51t2_roce.yaml", "switch_51t2_ib.yaml", "switch_102t4.yaml"]
PUBLISHED_NS = (250.0, 600.0)  # docs/hardware-facts.md#port-to-port-latency
TOLERANCE_NS = 1e-6            # the closed form is exact; summary.json prints ns as doubles


def run(config, out, *sets):
    args = [FABRICSIM, "run", os.path.join(ROOT, "configs", config), "--out", out,
            "--set", "sim.traffic_thread=false"]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"{config} {sets}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def number(text, units):
    """'1.35GHz' -> 1.35e9 with units {'GHz': 1e9, ...}."""
    m = re.fullmatch(r"([0-9.]+)\s*([A-Za-z]*)", str(text).strip())
    return float(m.group(1)) * units[m.group(2)]


def chip(summary):
    """The resolved switch section's numbers the closed form needs."""
    sw = summary["config"]["switch"]
    clock = number(sw["core_clock"], {"GHz": 1e9, "MHz": 1e6})
    rate = number(sw["port_speed"], {"Gbps": 1e9, "Tbps": 1e12})
    return {
        "P": round(1e15 / clock),                 # cycle in fs, as the model rounds it
        "fs_per_byte": round(8e15 / rate),        # 800G: 10000, 1.6T: 5000
        "cell": int(number(sw["cell_size"], {"B": 1})),
        "ingress": int(sw["pipeline"]["ingress_cycles"]),
        "after": int(sw["pipeline"]["crossbar_cycles"]) + int(sw["pipeline"]["egress_cycles"]),
        "start": sw["egress"]["start"],
        "speedup": Fraction(str(sw["crossbar"]["speedup"])),
        # A matching's cycles (iterations x cycles_per_iteration): every cell crosses that much
        # later, alone in the switch (docs/architecture.md, "What each cycle of the core does").
        # (shared_memory: no crossbar, no matching)
        "matching": None if sw["architecture"] == "shared_memory" else
        int(sw["scheduler"]["iterations"]) * int(sw["scheduler"]["cycles_per_iteration"]),
        "pipelined": bool(sw["scheduler"]["pipelined"]),
        "forwarding": sw["forwarding"],
    }


def closed_form_fs(c, t0, size):
    """Zero-load latency (first bit in at t0 to last bit out, ideal links: no preamble) of a
    cut-through chip whose egress starts a frame once it cannot underrun (docs/architecture.md):
    cell k's matching starts in the cycle it is eligible, edge(t0 + its bytes) + ingress, unless
    the crossbar matched the cell before less than a slot (ser(cell) / speedup) earlier (then on
    the first edge at or after that slot), it crosses `matching` cycles later and is at the
    egress `after` cycles after that; the first bit is the latest over the cells of (arrival - wire
    time of the k cells before it), and not before the cycle holding the last crossing and the
    first arrival."""
    P, fpb, cell = c["P"], c["fs_per_byte"], c["cell"]
    slot = Fraction(cell * fpb) / c["speedup"]  # the crossbar matches at most once a slot
    xs, match = [], None
    for k in range(-(-size // cell)):
        eligible = -(-(t0 + min((k + 1) * cell, size) * fpb) // P) + c["ingress"]
        if match is None or c["matching"] is None:
            match = Fraction(eligible * P)  # (shared memory: no crossbar slots either)
        elif c["pipelined"]:
            # A matching a slot: a slot that passed less than a cycle ago still counts (the
            # next one follows it), an older one is idle time (the next starts at once).
            match += slot
            if match + P <= eligible * P:
                match = Fraction(eligible * P)
        else:
            match = max(Fraction(eligible * P), match + slot)
        # On the first clock edge at or after the slot, and not before the cell is eligible.
        xs.append(max(eligible, -(-match // P)) + (c["matching"] or 0))
    ready = max((x + c["after"]) * P - k * cell * fpb for k, x in enumerate(xs))
    first_bit = max(ready, max(xs[0] + c["after"], xs[-1]) * P)
    return first_bit + size * fpb - t0


class ZeroLoad(unittest.TestCase):
    def test_each_chip_matches_its_pipeline_and_the_published_range(self):
        rng = random.Random(20)
        with tempfile.TemporaryDirectory() as tmp:
            for config in CHIPS:
                with self.subTest(chip=config):
                    shipped = run(config, os.path.join(tmp, config + ".shipped"),
                                  "sim.duration=2us", "sim.warmup=1us")
                    c = chip(shipped)
                    self.assertEqual(c["start"], "no_underrun")
                    self.assertEqual(c["forwarding"], "cut_through")
                    fec_ns = number(shipped["config"]["link"]["phy"]["fec_latency"],
                                    {"ns": 1.0, "us": 1e3})
                    # Isolated packets, 2 us apart at random clock phases, 64 B and 4096 B.
                    trace = os.path.join(tmp, config + ".trace")
                    packets = []
                    t = 1_000_000_000
                    with open(trace, "w") as f:
                        for k in range(40):
                            t += 2_000_000_000 + rng.randrange(c["P"])
                            size = 64 if k % 2 == 0 else 4096
                            src = rng.randrange(64)
                            dst = (src + 1 + rng.randrange(63)) % 64
                            packets.append((t, size))
                            f.write(f"{t}fs {src} {dst} {size}\n")
                    # Ideal links (no preamble, cable or FEC) and no flow control (nothing to
                    # pause at zero load; PFC headroom is sized from real links): the chip alone.
                    s = run(config, os.path.join(tmp, config + ".zero"), "link.model=ideal",
                            "flow_control.mode=none",
                            "traffic.pattern=trace", f"traffic.trace.file={trace}",
                            "sim.warmup=0ns", f"sim.duration={t // 1_000_000_000 + 2}us")
                    m = s["latency_ns"]
                    self.assertEqual(m["count"], len(packets))
                    lat = [closed_form_fs(c, t0, size) / 1e6 for t0, size in packets]
                    for stat, exp in (("min", min(lat)), ("mean", sum(lat) / len(lat)),
                                      ("max", max(lat))):
                        self.assertAlmostEqual(m[stat], exp, delta=TOLERANCE_NS, msg=stat)
                    self.assertEqual(s["switches"][0]["egress_underruns"], 0)
                    # Port to port: first bit in to first bit out (the datasheet's cut-through
                    # figure), plus the FEC decode and encode the box does and the model charges
                    # to the link (link.phy.fec_latency).
                    p2p = [x - size * c["fs_per_byte"] / 1e6 for x, (_, size) in zip(lat, packets)]
                    box = [x + fec_ns for x in p2p]
                    print(f"{config}: chip port to port {min(p2p):.2f}-{max(p2p):.2f} ns, "
                          f"with the link's FEC {min(box):.2f}-{max(box):.2f} ns "
                          f"(published {PUBLISHED_NS[0]:.0f}-{PUBLISHED_NS[1]:.0f} ns)")
                    self.assertGreaterEqual(min(box), PUBLISHED_NS[0])
                    self.assertLessEqual(max(box), PUBLISHED_NS[1])
                    # Cut-through: a 4096 B frame leaves as soon after its first bit as a 64 B
                    # one, but for its first cell's longer arrival and the clock's phase.
                    by_size = {64: [], 4096: []}
                    for x, (_, size) in zip(p2p, packets):
                        by_size[size].append(x)
                    slack = (c["cell"] - 64) * c["fs_per_byte"] / 1e6 + 2 * c["P"] / 1e6
                    self.assertLessEqual(max(by_size[4096]) - min(by_size[64]), slack)


class Underruns(unittest.TestCase):
    def test_shipped_egress_never_stalls_a_frame_at_load(self):
        # The shipped chips at their own load (0.7, 4096 B uniform), shortened: the old start
        # rule stalls about two frames' worth of cells per frame, the shipped one none.
        with tempfile.TemporaryDirectory() as tmp:
            for config in ("switch_51t2.yaml", "switch_102t4.yaml"):
                counts = {}
                for start in ("no_underrun", "first_cell"):
                    out = os.path.join(tmp, f"{config}.{start}")
                    # (As a crossbar: the shipped shared-memory chips interleave nothing.)
                    sets = ["sim.duration=10us", "sim.warmup=2us", "switch.architecture=voq"]
                    if start != "no_underrun":
                        sets.append(f"switch.egress.start={start}")
                    s = run(config, out, *sets)
                    self.assertTrue(s["invariants"]["ok"])
                    sw = s["switches"][0]
                    counts[start] = (sw["egress_underruns"], s["packets"]["delivered"],
                                     s["latency_ns"]["mean"])
                print(f"{config}: underruns/delivered/mean latency ns: {counts}")
                self.assertEqual(counts["no_underrun"][0], 0, config)
                self.assertGreater(counts["first_cell"][0], 0.5 * counts["first_cell"][1], config)


if __name__ == "__main__":
    FABRICSIM = sys.argv.pop(1)
    unittest.main(verbosity=2)
