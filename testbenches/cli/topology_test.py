#!/usr/bin/env python3
"""Multi-device runs through the command line: several switches wired by links, hosts numbered
across the topology, per-switch results, conservation across hops and determinism."""
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
QUICK = ["--set", "sim.duration=4us", "--set", "sim.warmup=1us"]
LEAF_SPINE = ["--set", "topology.kind=leaf_spine", "--set", "topology.leaves=4",
              "--set", "topology.spines=2", "--set", "topology.hosts_per_leaf=6",
              "--set", "traffic.load=0.3",  # uplinks at 6 x 0.3 x 3/4 / 2 = 68% load
              "--set", "sim.duration=12us"]


def run(*args, env=None):
    return subprocess.run([FABRICSIM, *args], capture_output=True, text=True, env=env)


class Topologies(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def simulate(self, name, *args):
        out = os.path.join(self.tmp, name)
        p = run("run", CHIP, "--out", out, *QUICK, *args)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "summary.json"), "rb") as f:
            raw = f.read()
        with open(os.path.join(out, "ports.csv")) as f:
            ports = list(csv.DictReader(f))
        return raw, json.loads(raw), ports

    def test_leaf_spine_is_deterministic_and_conserves_packets_across_hops(self):
        a, s, ports = self.simulate("a", *LEAF_SPINE, "--seed", "3")
        b, _, _ = self.simulate("b", *LEAF_SPINE, "--seed", "3")
        c, _, _ = self.simulate("c", *LEAF_SPINE, "--seed", "4")
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        self.assertEqual(s["hosts"], 24)
        names = [x["name"] for x in s["switches"]]
        self.assertEqual(names, ["leaf0", "leaf1", "leaf2", "leaf3", "spine0", "spine1"])
        pk = s["packets"]
        self.assertEqual(pk["injected"], pk["delivered"] + pk["dropped"] + pk["in_flight"])
        # What the switches forwarded to other switches is what the switches received from them.
        received = sum(x["packets"]["received"] for x in s["switches"])
        departed = sum(x["packets"]["departed"] for x in s["switches"])
        hops = received - pk["injected"]
        self.assertGreater(hops, 0)
        self.assertEqual(departed - pk["delivered"], hops)
        # The spines carry exactly the leaves' uplink traffic: per spine, packets in on port l =
        # packets out of leaf l's uplink to it.
        rows = {(r["switch"], int(r["port"])): r for r in ports}
        for sp in (0, 1):
            for leaf in range(4):
                up = rows[(f"leaf{leaf}", 6 + sp)]
                down = rows[(f"spine{sp}", leaf)]
                self.assertEqual(int(up["out_packets_run"]), int(down["in_packets_run"]))
                self.assertEqual(int(up["host"]), -1)
        # Uniform traffic over 4 leaves: 3/4 of it crosses the spines, split over both (less the
        # packets injected in the last ~0.5 us, still on their way up at the end).
        spine_rx = [x["packets"]["received"] for x in s["switches"][4:]]
        self.assertAlmostEqual(sum(spine_rx) / pk["injected"], 0.75, delta=0.05)
        self.assertAlmostEqual(spine_rx[0] / sum(spine_rx), 0.5, delta=0.1)

    def test_check_says_what_topology_it_builds(self):
        # 6 hosts a leaf against 2 uplinks: oversubscribed 3:1, which `check` must say (it used
        # to build it without a word); the summary is YAML comments above the configuration.
        p = run("check", CHIP, *LEAF_SPINE)
        self.assertEqual(p.returncode, 0, p.stderr)
        head = p.stdout.split("# Resolved configuration:\n")[0].splitlines()
        self.assertTrue(all(line.startswith("#") for line in head), head)
        self.assertIn("# topology: leaf_spine: 6 switches, 24 hosts, 8 switch-to-switch cables",
                      head)
        self.assertIn("#   leaf: 4 switches, 6 ports down and 2 up each, oversubscribed 3:1",
                      head)
        self.assertIn("#   spine: 2 switches, 4 ports down each (top tier)", head)
        self.assertIn("#   longest minimal path: 3 switches; routing ecmp (hash of src,dst)",
                      head)
        # Halving the 4 leaves cuts 2 leaves' 2 uplinks of 800 Gb/s: a third of 12 x 800 Gb/s.
        self.assertIn("#   bisection bandwidth: 3.2 Tb/s (0.333 of full: hosts/2 x line rate = "
                      "9.6 Tb/s; the minimum cut halving the hosts by host number)", head)
        # The summary matches what a run reports (summary.json's topology section).
        _, s, _ = self.simulate("ls", *LEAF_SPINE)
        tiers = {t["name"]: t for t in s["topology"]["tiers"]}
        self.assertEqual(tiers["leaf"]["oversubscription"], 3.0)

    def test_line_carries_incast_over_the_inter_switch_link(self):
        # Hosts 0-2 (on s0) send to host 70 (on s1, 63 hosts per switch): every packet crosses the
        # s0 -> s1 link (s0 port 63, s1 port 63).
        _, s, ports = self.simulate(
            "line", "--set", "topology.kind=line", "--set", "traffic.pattern=incast",
            "--set", "traffic.incast.target=70", "--set", "traffic.incast.sources=3",
            "--set", "traffic.load=0.2", "--set", "traffic.size=1024B")
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        self.assertEqual(s["hosts"], 126)
        rows = {(r["switch"], int(r["port"])): r for r in ports}
        link_out = int(rows[("s0", 63)]["out_packets_run"])
        self.assertEqual(link_out, int(rows[("s1", 63)]["in_packets_run"]))
        self.assertEqual(int(rows[("s1", 7)]["host"]), 70)
        s1 = s["switches"][1]["packets"]
        self.assertEqual(s1["received"], link_out)
        delivered = int(rows[("s1", 7)]["out_packets_run"])
        self.assertEqual(delivered + s1["in_flight"] + s1["dropped"], link_out)
        self.assertEqual(s["packets"]["delivered"], delivered)
        self.assertGreater(link_out, 100)

    def test_host_fifo_holds_frames_that_find_the_wire_busy(self):
        # Three 1000 B frames generated together at host 0: Ethernet framing at 800 Gb/s makes each
        # take (1000 + 8 + 12) B = 10.2 ns of wire, so the second waits 10.2 ns and the third 20.4.
        trace = os.path.join(self.tmp, "burst.trace")
        with open(trace, "w") as f:
            f.write("1us 0 5 1000\n1us 0 6 1000\n1us 0 7 1000\n")
        _, s, _ = self.simulate("fifo", "--set", "traffic.pattern=trace",
                                "--set", f"traffic.trace.file={trace}", "--set", "sim.warmup=0ns")
        q = s["host_queues"]
        self.assertEqual(q["packets_waited"], 2)
        self.assertAlmostEqual(q["wait_max_ns"], 20.4, places=6)
        self.assertAlmostEqual(q["wait_mean_ns"], 15.3, places=6)
        self.assertEqual(q["backlog_at_end"], 0)
        self.assertEqual(s["packets"]["delivered"], 3)

    def test_bit_errors_lose_frames_and_conservation_counts_them(self):
        # Pre-FEC BER 2e-3: a RS(544,514) codeword fails with p ~ 0.08, so a 4 KB frame (7-8
        # codewords) is lost on about half of its links' crossings.
        args = ("--set", "link.phy.pre_fec_ber=2e-3", "--set", "traffic.size=4096B")
        a, s, _ = self.simulate("ber", *args)
        b, _, _ = self.simulate("ber2", *args)
        self.assertEqual(a, b)
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        pk = s["packets"]
        self.assertGreater(pk["lost_on_links"], 0.3 * pk["injected"])
        self.assertEqual(pk["dropped"], pk["lost_on_links"])  # the switch itself drops nothing
        self.assertEqual(pk["injected"], pk["delivered"] + pk["dropped"] + pk["in_flight"])

    def test_saturated_link_goodput_matches_the_wire_efficiency(self):
        # Host 0 sends back to back to host 1 through an output-queued switch (the VOQ crossbar of
        # this config moves one 254 B cell per input per 1.69 ns slot, which caps minimum-size
        # frames at half the line rate: a property of the design point, not of the link). Closed
        # form for Ethernet framing
        # (MAC at 800 Gb/s after 256b/257b + RS(544,514) on 8 x 106.25G): a frame of S bytes
        # takes max(S, 64) + 8 + 12 bytes of wire; IB framing: S + 2.
        for framing, sizes, wire in (
                ("ethernet", (64, 256, 1500, 4096, 9216), lambda n: max(n, 64) + 20),
                ("infiniband", (256, 4096), lambda n: n + 2)):
            for size in sizes:
                _, s, ports = self.simulate(
                    f"g{framing}{size}", "--set", "traffic.pattern=incast",
                    "--set", "traffic.incast.target=1", "--set", "traffic.incast.sources=1",
                    "--set", "traffic.load=1.0", "--set", f"traffic.size={size}B",
                    "--set", f"link.phy.framing={framing}",
                    "--set", "switch.architecture=output_queued",
                    "--set", "sim.warmup=2us", "--set", "sim.duration=22us")
                self.assertTrue(s["invariants"]["ok"], s["invariants"])
                row = next(r for r in ports if r["switch"] == "switch" and r["port"] == "1")
                expect = size / wire(size)
                self.assertAlmostEqual(float(row["accepted_load_out"]), expect,
                                       delta=0.005 * expect, msg=f"{framing} {size} B")

    def test_lane_failure_halves_a_host_links_rate(self):
        # Host 0 sends to host 1 at line rate; at 10 us its link loses 4 of its 8 lanes. Closed
        # form: S-byte frames carry S of every max(S, 64) + 20 wire bytes, at 800 Gb/s before
        # and at 400 Gb/s after. The host keeps generating at the old rate, so its FIFO grows.
        # (64 B frames through the output-queued switch: see the goodput test.)
        def accepted(size, warmup, duration):
            _, s, ports = self.simulate(
                f"lf{size}{warmup}", "--set", "traffic.pattern=incast",
                "--set", "traffic.incast.target=1", "--set", "traffic.incast.sources=1",
                "--set", "traffic.load=1.0", "--set", f"traffic.size={size}B",
                "--set", "switch.architecture=output_queued",
                "--set", "link.phy.lane_failure.lanes_left=4",
                "--set", "link.phy.lane_failure.time=10us",
                "--set", "link.phy.lane_failure.host=0",
                "--set", f"sim.warmup={warmup}", "--set", f"sim.duration={duration}")
            self.assertTrue(s["invariants"]["ok"], s["invariants"])
            row = next(r for r in ports if r["switch"] == "switch" and r["port"] == "1")
            return float(row["accepted_load_out"]), s
        for size in (4096, 64):
            full = size / (max(size, 64) + 20)
            before, _ = accepted(size, "2us", "10us")
            after, s = accepted(size, "12us", "30us")
            self.assertAlmostEqual(before, full, delta=0.01 * full, msg=size)
            self.assertAlmostEqual(after, full / 2, delta=0.01 * full / 2, msg=size)
            self.assertGreater(s["host_queues"]["backlog_at_end"], 100)
        p = run("check", CHIP, "--set", "link.phy.lane_failure.lanes_left=4",
                "--set", "link.phy.lane_failure.host=64")
        self.assertEqual(p.returncode, 2, p.stderr)  # check knows the hosts, as run does
        self.assertIn("link.phy.lane_failure.host", p.stderr)
        p = run("run", CHIP, "--out", os.path.join(self.tmp, "bad"), *QUICK,
                "--set", "link.phy.lane_failure.lanes_left=4",
                "--set", "link.phy.lane_failure.host=64")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("link.phy.lane_failure.host", p.stderr)

    def test_breakout_runs_ports_at_their_own_rate(self):
        # An 800G port broken out as 2 x 400G: 65 ports, the first two with 4 lanes each (all
        # 512 lanes used). Every host offers 0.3 of its own link: the 400G hosts half the bytes.
        lanes = "[4,4," + ",".join(["8"] * 63) + "]"
        _, s, ports = self.simulate(
            "bo", "--set", "switch.ports=65", "--set", f"link.port_lanes={lanes}",
            "--set", "traffic.load=0.3", "--set", "sim.duration=60us")
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        rows = {int(r["port"]): r for r in ports}
        wire = 4096 / 4116  # Ethernet framing: load counts wire time, the figures frame bytes
        for p in (0, 1, 2, 40):
            self.assertAlmostEqual(float(rows[p]["offered_load_in"]), 0.3 * wire, delta=0.04, msg=p)
        # Uniform destinations: every port receives the same bytes, which fill a 400G port's
        # capacity twice as much as an 800G one's.
        def mean(col, ps):
            return sum(float(rows[p][col]) for p in ps) / len(ps)
        slow, quick = (0, 1), range(2, 65)
        self.assertAlmostEqual(mean("out_bytes_run", slow) / mean("out_bytes_run", quick), 1.0,
                               delta=0.1)
        self.assertAlmostEqual(mean("accepted_load_out", slow) / mean("accepted_load_out", quick),
                               2.0, delta=0.2)
        fast = sum(int(rows[p]["in_bytes_run"]) for p in range(2, 65)) / 63
        for p in (0, 1):
            self.assertAlmostEqual(int(rows[p]["in_bytes_run"]) / fast, 0.5, delta=0.08, msg=p)
        for bad, why in (("[4,4]", "one entry per switch port"), ("[3," + ",".join(["8"] * 63) + "]",
                         "dividing"), ("[8," + ",".join(["8"] * 64) + "]", "lanes but the chip")):
            ports_n = "65" if bad.count(",") == 64 else "64"
            p = run("check", CHIP, "--set", f"switch.ports={ports_n}", "--set",
                    f"link.port_lanes={bad}")
            self.assertEqual(p.returncode, 2, bad + p.stderr)
            self.assertIn("link.port_lanes", p.stderr)
            self.assertIn(why, p.stderr)

    def test_link_rate_must_match_the_port_speed(self):
        p = run("check", CHIP, "--set", "link.phy.lane_rate=53.125Gbps")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("link.phy.lane_rate", p.stderr)
        self.assertIn("switch.port_speed", p.stderr)

    def test_bad_topology_is_an_input_error(self):
        p = run("check", CHIP, "--set", "topology.kind=leaf_spine", "--set", "topology.spines=64")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("topology.spines", p.stderr)
        p = run("check", CHIP, "--set", "topology.kind=line", "--set",
                "topology.hosts_per_switch=64")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("topology.hosts_per_switch", p.stderr)
        p = run("check", CHIP, "--set", "topology.kind=ring")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("topology.kind", p.stderr)

    def run_example(self, name, *args):
        out = os.path.join(self.tmp, name)
        p = run("run", os.path.join(ROOT, "configs", "examples", name + ".yaml"), "--out", out,
                *args)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            return json.load(f)

    def assert_low_load_run(self, s, hosts, switches, names):
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        self.assertEqual(s["hosts"], hosts)
        self.assertEqual(len(s["switches"]), switches)
        got = [x["name"] for x in s["switches"]]
        for n in names:
            self.assertIn(n, got)
        pk = s["packets"]
        self.assertEqual(pk["injected"], pk["delivered"] + pk["dropped"] + pk["in_flight"])
        self.assertEqual(pk["dropped"], 0)  # every packet had a route
        tp = s["throughput"]
        # Low load, 26 us window: what is offered is carried.
        self.assertAlmostEqual(tp["accepted_load"], tp["offered_load"],
                               delta=0.03 * tp["offered_load"])
        # Packets cross switch-to-switch links (at least one hop beyond the first switch).
        received = sum(x["packets"]["received"] for x in s["switches"])
        self.assertGreater(received, pk["injected"])
        return received / pk["injected"]

    def test_fat_tree_dragonfly_and_rail_optimized_carry_low_load(self):
        # fat tree k=4: k^3/4 = 16 hosts, 5k^2/4 = 20 switches. Uniform traffic with self: a
        # packet visits 1 switch (same edge, 2/16 of destinations), 3 (same pod, 2/16) or 5
        # (another pod, 12/16): 4.25 switches per packet on average.
        s = self.run_example("fat_tree_k4")
        per_packet = self.assert_low_load_run(s, 16, 20, ["pod0_edge1", "pod3_agg1", "core3"])
        self.assertAlmostEqual(per_packet, (2 * 1 + 2 * 3 + 12 * 5) / 16, delta=0.15)
        # dragonfly a=4, p=2, h=2: g = 9 groups, 72 hosts, 36 routers.
        s = self.run_example("dragonfly")
        per_packet = self.assert_low_load_run(s, 72, 36, ["g0_r0", "g8_r3"])
        self.assertLessEqual(per_packet, 4.0)  # minimal paths: at most 4 routers
        self.assertGreater(per_packet, 3.0)    # 64/72 of destinations are in other groups
        # rail-optimized: 8 servers x 4 GPUs, 2 leaves per rail, 2 spines.
        s = self.run_example("rail_optimized")
        self.assert_low_load_run(s, 32, 10, ["rail0_leaf0", "rail3_leaf1", "spine1"])

    def test_links_per_pair_spreads_over_parallel_links(self):
        _, s, ports = self.simulate(
            "lpp", "--set", "switch.ports=8", "--set", "topology.kind=leaf_spine",
            "--set", "topology.leaves=2", "--set", "topology.spines=1",
            "--set", "topology.links_per_pair=2", "--set", "traffic.load=0.3",
            "--set", "sim.duration=12us")
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        self.assertEqual(s["hosts"], 12)  # 8 - 1 spine x 2 links = 6 per leaf
        rows = {(r["switch"], int(r["port"])): r for r in ports}
        # leaf0's two uplinks (ports 6, 7) both carry traffic, and each arrives at its own spine
        # port (0, 1).
        for port in (6, 7):
            up = int(rows[("leaf0", port)]["out_packets_run"])
            self.assertGreater(up, 20, port)
            self.assertEqual(up, int(rows[("spine0", port - 6)]["in_packets_run"]))

    def test_rail_only_refuses_cross_rail_traffic(self):
        rail_only = os.path.join(ROOT, "configs", "examples", "rail_only.yaml")
        for pattern in ("uniform", "all_to_all", "permutation"):
            p = run("run", rail_only, "--out", os.path.join(self.tmp, "ro"),
                    "--set", f"traffic.pattern={pattern}")
            self.assertEqual(p.returncode, 2, pattern + p.stdout + p.stderr)
            self.assertIn("traffic.pattern", p.stderr)
            self.assertRegex(p.stderr, r"sends from host \d+ to host \d+")
            self.assertIn("cross-rail traffic must go through a server", p.stderr)
        trace = os.path.join(self.tmp, "cross.trace")
        with open(trace, "w") as f:
            f.write("1us 0 4 1000\n2us 1 6 1000\n")  # 0 -> 4 on rail 0; 1 -> 6 crosses
        for cmd in ("check", "run"):
            extra = ["--out", os.path.join(self.tmp, "ro2")] if cmd == "run" else []
            p = run(cmd, rail_only, *extra, "--set", f"traffic.trace.file={trace}")
            self.assertEqual(p.returncode, 2, cmd + p.stdout + p.stderr)
            self.assertIn("packet 2 goes from host 1 to host 6", p.stderr)
        # The example's ring steps stay on their rails: all delivered, one switch each.
        s = self.run_example("rail_only")
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        self.assertEqual(s["hosts"], 32)
        pk = s["packets"]
        self.assertEqual(pk["injected"], 1024)
        self.assertEqual(pk["delivered"], 1024)
        self.assertEqual(sum(x["packets"]["received"] for x in s["switches"]), 1024)

    def test_topologies_the_chip_cannot_build_are_refused(self):
        cases = [
            (["topology.kind=fat_tree", "topology.k=6", "switch.ports=4"],
             "topology.k", "6 x 1 = 6 ports, but switch.ports is 4"),
            (["topology.kind=fat_tree", "topology.k=5"], "topology.k", "must be even"),
            (["topology.kind=fat_tree", "topology.k=4", "topology.links_per_pair=3",
              "switch.ports=8"], "topology.links_per_pair", "4 x 3 = 12 ports"),
            (["topology.kind=dragonfly", "topology.groups=10"], "topology.groups",
             "10 groups need 9 global links"),
            (["topology.kind=dragonfly", "topology.hosts_per_router=60"],
             "topology.hosts_per_router", "= 65 ports, but switch.ports is 64"),
            (["topology.kind=rail_optimized", "topology.servers=200", "switch.ports=16"],
             "topology.gpus_per_server", "= 120 leaves, but switch.ports is 16"),
            (["topology.kind=rail_optimized", "topology.hosts_per_leaf=63"],
             "topology.hosts_per_leaf", "plus 2 spine uplinks must fit in the 64 leaf ports"),
            (["topology.kind=rail_only", "topology.servers=65"], "topology.servers",
             "65 servers exceed switch.ports 64"),
            (["topology.kind=rail_only", "topology.gpus_per_server=0"],
             "topology.gpus_per_server", "out of range"),
            (["topology.kind=fat_tree", "topology.links_per_pair=0"],
             "topology.links_per_pair", "out of range"),
            (["topology.kind=fat_tree"], "topology.kind", "65536 hosts and 5120 switches"),
        ]
        for sets, key, why in cases:
            args = [x for kv in sets for x in ("--set", kv)]
            p = run("check", CHIP, *args)
            self.assertEqual(p.returncode, 2, " ".join(sets) + p.stderr)
            self.assertIn(key, p.stderr, sets)
            self.assertIn(why, p.stderr, sets)

    def test_broken_switch_in_a_topology_fails_the_run(self):
        env = dict(os.environ, FABRICSIM_FAULT="leak_cell")
        p = run("run", CHIP, "--out", os.path.join(self.tmp, "f"), *QUICK, *LEAF_SPINE, env=env)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("VIOLATED", p.stdout)


if __name__ == "__main__":
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
