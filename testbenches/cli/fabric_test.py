#!/usr/bin/env python3
"""The fabric's netlist in the results: links.csv (both directions of every cable), the peer of
every switch port in ports.csv, summary.json's load_balance and schema_version (class Netlist,
label integration); and leaf-spine uplink utilisation against its closed form (class Uplinks,
label validation)."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHIP = os.path.join(ROOT, "configs", "switch_51t2.yaml")


def leaf_spine(leaves, spines, hosts_per_leaf, load, duration_us):
    return ["--set", "topology.kind=leaf_spine", "--set", f"topology.leaves={leaves}",
            "--set", f"topology.spines={spines}", "--set", f"topology.hosts_per_leaf={hosts_per_leaf}",
            "--set", f"traffic.load={load}", "--set", f"sim.duration={duration_us}us",
            "--set", "sim.warmup=2us"]


class Run:
    def __init__(self, tmp, name, *args):
        self.out = os.path.join(tmp, name)
        p = subprocess.run([FABRICSIM, "run", CHIP, "--out", self.out, *args],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise AssertionError(p.stdout + p.stderr)
        with open(os.path.join(self.out, "summary.json")) as f:
            self.summary = json.load(f)
        self.ports = self.csv("ports.csv")
        self.links = self.csv("links.csv")

    def csv(self, name):
        with open(os.path.join(self.out, name)) as f:
            return list(csv.DictReader(f))


class Netlist(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.run_ = Run(cls._tmp.name, "ls", *leaf_spine(4, 2, 6, 0.3, 10))

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_summary_has_a_schema_version(self):
        self.assertEqual(self.run_.summary["schema_version"], 3)

    def test_summary_states_the_oversubscription(self):
        # 6 hosts and 2 uplinks per leaf: 3:1; the spines are the top tier.
        t = self.run_.summary["topology"]
        self.assertEqual(t["kind"], "leaf_spine")
        self.assertEqual(t["max_switch_hops"], 3)
        leaf, spine = t["tiers"]
        self.assertEqual((leaf["name"], leaf["switches"], leaf["down_ports"], leaf["up_ports"]),
                         ("leaf", 4, 6, 2))
        self.assertEqual(leaf["oversubscription"], 3.0)
        self.assertEqual((spine["name"], spine["switches"], spine["down_ports"]), ("spine", 2, 4))
        self.assertEqual(spine["oversubscription"], 0.0)

    def test_every_cable_has_two_rows(self):
        # 4 leaves x 6 hosts host links + 4 x 2 leaf-spine wires, each in two directions.
        links = self.run_.links
        self.assertEqual(len(links), 2 * (24 + 8))
        self.assertEqual(sorted({int(r["wire"]) for r in links}), list(range(32)))
        for r in links:
            self.assertIn(r["from"], {f"host{h}" for h in range(24)} |
                          {"leaf0", "leaf1", "leaf2", "leaf3", "spine0", "spine1"})
            self.assertAlmostEqual(float(r["rate_gbps"]), 800.0)
            self.assertLessEqual(float(r["utilisation"]), 1.0)

    def test_ports_know_their_peers_both_ways(self):
        rows = {(r["switch"], int(r["port"])): r for r in self.run_.ports}
        switches = {r["switch"] for r in self.run_.ports}
        wired = 0
        for (sw, port), r in rows.items():
            other, other_port = r["peer"], int(r["peer_port"])
            if other in switches:  # a switch-to-switch wire: the far port points back
                far = rows[(other, other_port)]
                self.assertEqual((far["peer"], int(far["peer_port"])), (sw, port))
                self.assertEqual(int(r["host"]), -1)
                wired += 1
            elif other.startswith("host"):
                self.assertEqual(int(r["host"]), int(other[4:]))
                self.assertEqual(other_port, 0)
            else:
                self.assertEqual((other, other_port), ("", -1))  # unconnected
        self.assertEqual(wired, 2 * 8)

    def test_links_add_up_with_the_ports_they_join(self):
        ports = {(r["switch"], int(r["port"])): r for r in self.run_.ports}
        injected = 0
        for r in self.run_.links:
            frames, lost = int(r["frames_run"]), int(r["lost_frames_run"])
            to = (r["to"], int(r["to_port"]))
            if r["from"].startswith("host"):
                injected += frames
                self.assertEqual(frames - lost, int(ports[to]["in_packets_run"]))
            else:
                sender = ports[(r["from"], int(r["from_port"]))]
                self.assertEqual(frames, int(sender["out_packets_run"]))
                self.assertAlmostEqual(float(r["utilisation"]), float(sender["accepted_load_out"]),
                                       places=5)
                if to in ports:
                    self.assertEqual(frames - lost, int(ports[to]["in_packets_run"]))
        self.assertEqual(injected, self.run_.summary["packets"]["injected"])

    def test_load_balance_summarises_switch_facing_ports(self):
        lb = {x["switch"]: x for x in self.run_.summary["load_balance"]}
        self.assertEqual(sorted(lb), ["leaf0", "leaf1", "leaf2", "leaf3", "spine0", "spine1"])
        for sw, x in lb.items():
            utils = [float(r["accepted_load_out"]) for r in self.run_.ports
                     if r["switch"] == sw and r["peer"] in lb]
            self.assertEqual(x["switch_ports"], len(utils))
            # (ports.csv has 6 decimals)
            self.assertAlmostEqual(x["mean_utilisation"], sum(utils) / len(utils), delta=1e-6)
            self.assertAlmostEqual(x["max_utilisation"], max(utils), delta=1e-6)


class Uplinks(unittest.TestCase):
    """Uniform traffic at load p on a leaf-spine of L leaves, H hosts per leaf and S spines. With
    traffic.self (the default, as in the queueing literature) a host sends to all H*L hosts
    alike, itself included, so (L-1)/L of its traffic leaves its leaf; without it, to the H*L - 1
    others, so H(L-1)/(HL-1). That traffic spreads over the leaf's S uplinks: the mean uplink (at
    the host links' rate) carries p * H * fraction / S, and so does the mean spine port towards
    a leaf. p is the measured offered load (the generator's randomness is not the model's error).
    ECMP hashes flows, so single uplinks differ; their mean is what the wiring fixes."""

    def check(self, leaves, spines, hosts, load, self_traffic):
        with tempfile.TemporaryDirectory() as tmp:
            r = Run(tmp, "u", *leaf_spine(leaves, spines, hosts, load, 60),
                    "--set", f"traffic.self={'true' if self_traffic else 'false'}")
            self.assertTrue(r.summary["invariants"]["ok"])
            p = r.summary["throughput"]["offered_load"]
            remote = ((leaves - 1) / leaves if self_traffic
                      else hosts * (leaves - 1) / (hosts * leaves - 1))
            expected = p * hosts * remote / spines
            lb = r.summary["load_balance"]
            for tier in ("leaf", "spine"):
                ports = [(x["mean_utilisation"], x["switch_ports"]) for x in lb
                         if x["switch"].startswith(tier)]
                mean = sum(u * n for u, n in ports) / sum(n for _, n in ports)
                print(f"L={leaves} S={spines} H={hosts} self={self_traffic} p={p:.4f}: {tier} "
                      f"ports {mean:.4f}, expected {expected:.4f}", file=sys.stderr)
                with self.subTest(tier=tier):
                    # 2%: the destinations' random spread over a 58 us window (> 5,000 packets).
                    self.assertAlmostEqual(mean / expected, 1.0, delta=0.02)

    def test_self_traffic_leaves_the_leaf_by_l_minus_1_over_l(self):
        self.check(4, 2, 2, 0.5, True)

    def test_without_self_traffic(self):
        self.check(4, 2, 2, 0.5, False)  # 0.5 * 2 * 6/7 / 2: 14% above the (L-1)/L figure

    def test_wider_leaves(self):
        self.check(3, 4, 8, 0.4, False)  # mean uplink 0.55: ECMP collisions stay below 1


if __name__ == "__main__":
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
