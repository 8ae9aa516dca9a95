#!/usr/bin/env python3
"""Switch kinds through the command line (issue #16): a leaf-spine whose spines are a 128-port
chip (a `switch_kinds` element) and whose leaves are the 64-port `switch:` chip. The network exists
only with the bigger spines; each switch is built from its own chip (ports, buffer), summary.json
names each switch's kind, ports.csv has each switch's own port count, and bad kinds are refused
with exit 2 naming the file or override, the key and the numbers."""
import collections
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KINDS = os.path.join(ROOT, "configs", "examples", "leaf_spine_kinds.yaml")
CHIP = os.path.join(ROOT, "configs", "switch_51t2.yaml")
QUICK = ["--set", "sim.duration=5us", "--set", "sim.warmup=1us"]


def run(*args):
    return subprocess.run([FABRICSIM, *args], capture_output=True, text=True)


class Kinds(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def simulate(self, config, name, *args):
        out = os.path.join(self.tmp, name)
        p = run("run", config, "--out", out, *QUICK, *args)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(out, "ports.csv")) as f:
            ports = list(csv.DictReader(f))
        return summary, ports

    def refused(self, *args, config=KINDS):
        p = run("check", config, *args)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("fabricsim: error:", p.stderr)
        return p.stderr

    def test_bigger_spines_carry_more_leaves(self):
        s, ports = self.simulate(KINDS, "kinds")
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        self.assertEqual(s["hosts"], 160)
        pk = s["packets"]
        self.assertGreater(pk["delivered"], 0)
        self.assertEqual(pk["injected"], pk["delivered"] + pk["dropped"] + pk["in_flight"])
        kinds = {x["name"]: x["kind"] for x in s["switches"]}
        self.assertEqual(len(kinds), 42)
        for name, kind in kinds.items():
            self.assertEqual(kind, "spine_102t4" if name.startswith("spine") else "switch", name)
        # Each switch is its own chip: the spines' buffer is the kind's 252 MB in 254 B cells,
        # the leaves' the switch: chip's.
        cap = {x["name"]: x["buffer"]["capacity_bytes"] for x in s["switches"]}
        self.assertEqual(cap["spine1"], 252000000 // 254 * 254)
        self.assertEqual(cap["leaf39"], 165660324)
        # ports.csv: 64 rows per leaf and 128 per spine; a spine's ports 0..79 lead to the
        # leaves (2 per leaf), the rest are unconnected. Traffic crossed the spines.
        rows = collections.defaultdict(list)
        for r in ports:
            rows[r["switch"]].append(r)
        self.assertEqual({n: len(r) for n, r in rows.items() if n.startswith("leaf")},
                         {f"leaf{i}": 64 for i in range(40)})
        self.assertEqual(len(rows["spine0"]), 128)
        self.assertEqual(len(rows["spine1"]), 128)
        for r in rows["spine0"]:
            p = int(r["port"])
            if p < 80:
                self.assertEqual(r["peer"], f"leaf{p // 2}", r)
            else:
                self.assertEqual((r["peer"], int(r["out_packets_run"])), ("", 0), r)
        self.assertGreater(sum(int(r["out_packets_run"]) for r in rows["spine1"]), 0)
        # The resolved configuration holds the kind with the switch: values it inherited.
        kind = s["config"]["switch_kinds"][0]
        self.assertEqual((kind["name"], kind["ports"], kind["port_speed"]),
                         ("spine_102t4", 128, "800Gbps"))
        self.assertEqual(kind["buffer"]["reserved_per_port"], "18796B")  # from switch:
        self.assertEqual(kind["pipeline"]["crossbar_cycles"], 20)  # from switch:
        self.assertEqual(kind["pipeline"]["ingress_cycles"], 335)  # its own
        self.assertEqual(kind["serdes"]["lane_rate"], "212.5Gbps")  # its own
        self.assertEqual(s["config"]["topology"]["kinds"]["spine"], "spine_102t4")

    def test_without_the_spine_kind_the_topology_is_refused(self):
        err = self.refused("--set", "topology.kinds.spine=")
        self.assertIn("leaf_spine_kinds.yaml:", err)
        self.assertIn("topology.leaves: a spine has 2 ports (topology.links_per_pair) per leaf: "
                      "40 leaves need 80 but switch.ports is 64", err)
        err = self.refused("--set", "switch_kinds[0].ports=72")
        self.assertIn("40 leaves need 80 but switch_kinds[0].ports (kind spine_102t4) is 72", err)
        p = run("check", KINDS)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_bad_kinds_are_refused_naming_key_and_numbers(self):
        cases = [
            (["--set", "switch_kinds[0].port_speed=400Gbps"],
             "switch_kinds[0].port_speed: links join tier leaf (switch.port_speed 800Gbps) and "
             "tier spine (switch_kinds[0].port_speed 400Gbps) of topology.kind leaf_spine, and a "
             "link joins ports of one speed"),
            (["--set", "topology.kinds.spine=spine_102t5"],
             "topology.kinds.spine: no switch kind 'spine_102t5' (switch_kinds[].name: "
             "spine_102t4); did you mean 'spine_102t4'?"),
            (["--set", "topology.kinds.core=spine_102t4"],
             "topology.kinds.core: topology.kind leaf_spine has no tier core (its tiers: leaf, "
             "spine)"),
            (["--set", "switch_kinds[0].prots=8"],
             "unknown key 'switch_kinds[0].prots'; did you mean 'switch_kinds[0].ports'?"),
            (["--set", "switch_kinds[0].ports=600"],
             "switch_kinds[0].ports: 600 is out of range [1, 512]"),
            (["--set", "switch_kinds[0].ports=many"],
             "switch_kinds[0].ports: expected an integer, got 'many'"),
            (["--set", "switch_kinds[1]={name: spine_102t4}"],
             "switch_kinds[1].name: 'spine_102t4' is already the name of switch_kinds[0]"),
            (["--set", "switch_kinds[1]={ports: 32}"],
             "switch_kinds[1].name: every switch kind needs a name"),
            (["--set", "switch_kinds[1]={name: switch}"],
             "switch_kinds[1].name: 'switch' names the switch: chip"),
            (["--set", "switch_kinds[3].name=x"],
             "'switch_kinds' has 1 element: 'switch_kinds[3]' is beyond its end "
             "('switch_kinds[1]' appends one)"),
            (["--set", "switch_kinds[0].traffic_classes=4"],
             "switch_kinds[0].traffic_classes: every chip carries the hosts' traffic classes: 4 "
             "here but switch.traffic_classes is 8"),
            # The kind's own chip checks, named as its keys: 128 ports x 2 lanes of 212.5G.
            (["--set", "switch_kinds[0].serdes.lanes=256"],
             "switch_kinds[0].serdes.lane_rate: 2 lanes x 212.5Gbps is below port_speed 800Gbps"),
            (["--set", "switch_kinds[0].buffer.size=100B"],
             "switch_kinds[0].buffer.size: 100B is smaller than one cell "
             "(switch_kinds[0].cell_size is 254B)"),
            (["--set", "link.port_lanes=[" + ",".join(["8"] * 64) + "]"],
             "link.port_lanes: a breakout list is per port of the switch: chip; it cannot be "
             "combined with switch kinds"),
            (["--set", "switch_kinds=3"],
             "switch_kinds: expected a list of sections (a sequence of mappings"),
        ]
        # Where the key the message names was given: the override, or the file's line.
        given_in_file = {"switch_kinds[0].serdes.lanes=256": "leaf_spine_kinds.yaml:44: "}
        for args, message in cases:
            with self.subTest(args=args):
                err = self.refused(*args)
                self.assertIn(message, err)
                self.assertIn(given_in_file.get(args[1], "error: --set " + args[1] + ": "), err)

    def test_errors_in_a_file_name_its_line_and_the_element(self):
        path = os.path.join(self.tmp, "bad.yaml")
        with open(path, "w") as f:
            f.write("switch_kinds:\n"
                    "  - name: big\n"
                    "    ports: 128\n"
                    "  - name: odd\n"
                    "    buffer:\n"
                    "      sise: 1MB\n")
        err = self.refused(config=path)
        self.assertIn(f"{path}:6: unknown key 'switch_kinds[1].buffer.sise'", err)
        self.assertIn("did you mean 'switch_kinds[1].buffer.size'?", err)
        with open(path, "w") as f:
            f.write("switch_kinds:\n"
                    "  - name: big\n"
                    "    ports: 128\n"
                    "topology:\n"
                    "  kind: leaf_spine\n"
                    "  kinds:\n"
                    "    spine: big\n")
        # 128 ports over the switch: chip's 512 lanes: 4 lanes x 106.25G, short of 800G; the
        # kind left `serdes` out, so the message points at the element.
        err = self.refused(config=path)
        self.assertIn(f"{path}:2: switch_kinds[0].serdes.lane_rate: 4 lanes x 106.25Gbps is "
                      "below port_speed 800Gbps", err)

    def test_appended_kind_for_the_leaves(self):
        # A second kind appended by --set, assigned to the leaves: 16-port leaves (default hosts
        # per leaf: what 4 uplinks leave free, 12) under the 128-port spines.
        s, ports = self.simulate(KINDS, "leaves", "--set", "switch_kinds[1]={name: leaf16, ports: 16}",
                                 "--set", "topology.kinds.leaf=leaf16",
                                 "--set", "topology.hosts_per_leaf=0", "--set", "traffic.load=0.2")
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        self.assertEqual(s["hosts"], 40 * 12)
        count = collections.Counter(r["switch"] for r in ports)
        self.assertEqual(count["leaf0"], 16)
        self.assertEqual(count["spine0"], 128)
        self.assertEqual({x["kind"] for x in s["switches"]}, {"leaf16", "spine_102t4"})

    def test_default_runs_state_no_kind(self):
        s, _ = self.simulate(CHIP, "default")
        self.assertNotIn("kind", s["switches"][0])
        self.assertEqual(s["config"]["switch_kinds"], [])
        self.assertTrue(all(v == "" for v in s["config"]["topology"]["kinds"].values()))


if __name__ == "__main__":
    FABRICSIM = sys.argv.pop(1)
    unittest.main()
