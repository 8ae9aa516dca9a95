#!/usr/bin/env python3
"""summary.json's `counters`: the statistics every block registers itself (switch ports, links,
hosts' flow control) under hierarchical names, equal to the ports.csv / links.csv columns they
duplicate; the per-port size rule (stats.per_port_counters); and docs/results.md documenting
every summary.json key and result-file column a run writes."""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHIP = os.path.join(ROOT, "configs", "switch_51t2.yaml")
ROCE = os.path.join(ROOT, "configs", "examples", "leaf_spine_roce.yaml")
IB = os.path.join(ROOT, "configs", "examples", "two_switch_ib.yaml")


class Run:
    def __init__(self, tmp, name, config, *args):
        self.out = os.path.join(tmp, name)
        p = subprocess.run([FABRICSIM, "run", config, "--out", self.out, *args],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise AssertionError(p.stdout + p.stderr)
        self.stdout = p.stdout
        with open(os.path.join(self.out, "summary.json")) as f:
            self.summary = json.load(f)
        with open(os.path.join(self.out, "perf.json")) as f:
            self.perf = json.load(f)
        self.ports = self.csv("ports.csv")
        self.links = self.csv("links.csv")
        self.counters = self.summary["counters"]

    def csv(self, name):
        with open(os.path.join(self.out, name)) as f:
            return list(csv.DictReader(f))

    def header(self, name):
        with open(os.path.join(self.out, name)) as f:
            return f.readline().strip().split(",")

    def link_name(self, row):
        """The link module of a links.csv row and the direction the row describes."""
        a, pa, b, pb = row["from"], row["from_port"], row["to"], row["to_port"]
        if a.startswith("host"):
            return f"link_{a}_{b}_p{pb}", "a_to_b"
        if b.startswith("host"):
            return f"link_{b}_{a}_p{pa}", "b_to_a"
        first = f"link_{a}_p{pa}_{b}_p{pb}"
        if first in self.counters:
            return first, "a_to_b"
        return f"link_{b}_p{pb}_{a}_p{pa}", "b_to_a"


class PfcCounters(unittest.TestCase):
    """The RoCE leaf-spine (PFC, ECN) with bit errors, from t = 0 so that the flow-control columns
    of ports.csv (from the window's start) cover the whole run as `counters` does."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.run_ = Run(cls._tmp.name, "roce", ROCE, "--set", "sim.warmup=0ns",
                       "--set", "sim.duration=12us", "--set", "link.phy.pre_fec_ber=1e-3")

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_every_switch_port_equals_its_ports_csv_row(self):
        c = self.run_.counters
        exact = {"rx_packets": "in_packets_run", "rx_bytes": "in_bytes_run",
                 "tx_packets": "out_packets_run", "tx_bytes": "out_bytes_run",
                 "drops": "drops_run", "underruns": "underruns_run",
                 "control_frames_sent": "control_frames_sent", "ecn_marked": "ecn_marked",
                 "pause_frames_sent": "pause_frames_sent",
                 "pause_frames_received": "pause_frames_received",
                 "headroom_peak_bytes": "headroom_peak_bytes", "lossless_drops": "lossless_drops"}
        timed = {"underrun_ns": "underrun_ns_run", "paused_ns": "paused_ns"}
        totals = dict.fromkeys(list(exact) + list(timed), 0)
        self.assertEqual(len(self.run_.ports), 6 * 64)
        for row in self.run_.ports:
            port = c[row["switch"]]["port" + row["port"]]
            self.assertEqual(set(port), set(exact) | set(timed) | {"drop_bytes"}, row)
            for key, col in exact.items():
                self.assertEqual(port[key], int(row[col]), (row["switch"], row["port"], key))
                totals[key] += port[key]
            for key, col in timed.items():
                self.assertAlmostEqual(port[key], float(row[col]), delta=6e-4)
                totals[key] += port[key]
            self.assertEqual(port["drop_bytes"] > 0, port["drops"] > 0)
        # The comparison means something: the run paused, marked and moved packets.
        for key in ("rx_packets", "tx_bytes", "pause_frames_sent", "pause_frames_received",
                    "paused_ns", "ecn_marked", "control_frames_sent", "headroom_peak_bytes"):
            self.assertGreater(totals[key], 0, key)
        # Per-switch sums agree with the documented per-switch keys.
        for sw in self.run_.summary["switches"]:
            ports = [v for k, v in c[sw["name"]].items() if k.startswith("port")]
            self.assertEqual(sum(p["rx_packets"] for p in ports), sw["packets"]["received"])
            self.assertEqual(sum(p["tx_packets"] for p in ports), sw["packets"]["departed"])
            self.assertEqual(sum(p["drops"] for p in ports), sw["packets"]["dropped"])
            self.assertEqual(sum(p["underruns"] for p in ports), sw["egress_underruns"])

    def test_every_link_direction_equals_its_links_csv_row(self):
        lost = 0
        self.assertEqual(len(self.run_.links), 2 * (64 + 8))
        for row in self.run_.links:
            name, direction = self.run_.link_name(row)
            d = self.run_.counters[name][direction]
            self.assertEqual(d["frames"], int(row["frames_run"]), (name, direction))
            self.assertEqual(d["lost"], int(row["lost_frames_run"]), (name, direction))
            self.assertLessEqual(d["lost_measured"], d["lost"])
            self.assertLessEqual(d["control_lost"], d["control_frames"])
            lost += d["lost"]
        self.assertEqual(lost, self.run_.summary["packets"]["lost_on_links"])
        self.assertGreater(lost, 0)

    def test_hosts_flow_control_equals_links_csv(self):
        # links.csv's paused_ns of a host's row is its transmitter's pause time.
        paused = 0.0
        for row in self.run_.links:
            if row["from"].startswith("host"):
                h = self.run_.counters[row["from"]]
                self.assertAlmostEqual(h["paused_ns"], float(row["paused_ns"]), delta=6e-4)
                paused += h["paused_ns"]
                self.assertEqual(h["pause_frames_sent"], 0)  # hosts consume at line rate
        self.assertGreater(paused, 0)
        self.assertGreater(sum(self.run_.counters[f"host{h}"]["pause_frames_received"]
                               for h in range(64)), 0)

    def test_documented_keys_keep_their_values(self):
        s = self.run_.summary
        self.assertEqual(s["schema_version"], 3)
        fc = s["flow_control"]["switches"]
        for sw in s["switches"]:
            ports = [v for k, v in s["counters"][sw["name"]].items() if k.startswith("port")]
            self.assertEqual(fc[sw["name"]]["pause_frames_sent"],
                             sum(p["pause_frames_sent"] for p in ports))
            self.assertEqual(fc[sw["name"]]["ecn"]["marked"], sum(p["ecn_marked"] for p in ports))
            # The counters that were there before the per-port ones are still there.
            for key in ("matchings", "cells"):
                self.assertIn(key, s["counters"][sw["name"]]["crossbar"])
            self.assertIn("late_arrivals", s["counters"][sw["name"]]["ingress"])


class Spans(unittest.TestCase):
    """Figures over the window and over the whole run, side by side (issue #20): the buffer's
    peak and the flow-control counts."""

    def test_buffer_peak_of_the_window_and_of_the_run(self):
        # A 4-to-1 incast at line rate: the target's queue grows all along, so after the window
        # (the drain, traffic still flowing) the buffer holds more than it ever did inside it.
        with tempfile.TemporaryDirectory() as tmp:
            r = Run(tmp, "incast", CHIP, "--set", "traffic.pattern=incast",
                    "--set", "traffic.incast.sources=4", "--set", "traffic.incast.target=0",
                    "--set", "traffic.load=1", "--set", "sim.warmup=2us",
                    "--set", "sim.duration=8us", "--set", "stats.occupancy_interval=20ns")
            occ = r.csv("occupancy.csv")
        s = r.summary
        win, buf, sw = s["window"], s["buffer"], s["switches"][0]["buffer"]
        self.assertGreater(win["sim_end_ns"], win["end_ns"])  # a drain after the window
        inside = [int(row["total_bytes"]) for row in occ
                  if win["start_ns"] <= float(row["time_ns"]) < win["end_ns"]]
        every = [int(row["total_bytes"]) for row in occ]
        port0 = [int(row["port0_bytes"]) for row in occ]
        # The window's peak as before; the run's covers the drain, where the samples are higher.
        self.assertLessEqual(max(inside), buf["peak_bytes"])
        self.assertGreater(max(every), buf["peak_bytes"])
        self.assertGreaterEqual(buf["peak_bytes_run"], max(every))
        # Samples every 20 ns miss at most what arrives in 20 ns (4 x 800G: 8 kB, a few cells).
        self.assertLess(buf["peak_bytes_run"] - max(every), 16_000)
        self.assertEqual(sw["peak_bytes_run"], buf["peak_bytes_run"])
        self.assertEqual(sw["peak_bytes"], buf["peak_bytes"])
        target = buf["ports"][0]
        self.assertGreater(target["peak_bytes_run"], target["peak_bytes"])
        self.assertGreaterEqual(target["peak_bytes_run"], max(port0))
        for p in buf["ports"]:
            self.assertGreaterEqual(p["peak_bytes_run"], p["peak_bytes"])
        # The console says both.
        self.assertIn(f"buffer (run)  peak {buf['peak_bytes_run']:.0f} B over the whole run",
                      r.stdout)

    def test_flow_control_over_the_window_and_over_the_run(self):
        # The RoCE leaf-spine paused before its window opened: the window's figures (from
        # sim.warmup) are smaller than the run's, which are the counters' sums.
        with tempfile.TemporaryDirectory() as tmp:
            r = Run(tmp, "roce", ROCE, "--set", "sim.warmup=8us", "--set", "sim.duration=12us")
        s, fc = r.summary, r.summary["flow_control"]
        keys = {"pause_frames_sent": "pause_frames_sent", "paused_ns": "paused_ns",
                "pause_frames_received": "pause_frames_received",
                "lossless_drops": "lossless_drops"}
        less = set()
        for sw in s["switches"]:
            f = fc["switches"][sw["name"]]
            ports = [v for k, v in r.counters[sw["name"]].items() if k.startswith("port")]
            for key, counter in keys.items():
                self.assertAlmostEqual(f[key + "_run"], sum(p[counter] for p in ports),
                                       delta=1e-3, msg=(sw["name"], key))
                self.assertLessEqual(f[key], f[key + "_run"] + 1e-6, (sw["name"], key))
                if f[key] < f[key + "_run"]:
                    less.add(key)
            self.assertEqual(f["fc_packets_sent_run"], 0)  # PFC, not credits
        hosts = [r.counters[f"host{h}"] for h in range(s["hosts"])]
        for key, counter in keys.items():
            self.assertAlmostEqual(fc["hosts"][key + "_run"], sum(h[counter] for h in hosts),
                                   delta=1e-3, msg=key)
        # The spans differ in this run: pauses were sent and paused time passed before 8 us.
        self.assertIn("pause_frames_sent", less)
        self.assertIn("paused_ns", less)


class CreditCounters(unittest.TestCase):
    def test_credit_counters_equal_ports_csv(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = Run(tmp, "ib", IB, "--set", "sim.warmup=0ns", "--set", "sim.duration=10us")
            fc_packets = stall = 0
            for row in r.ports:
                port = r.counters[row["switch"]]["port" + row["port"]]
                self.assertNotIn("pause_frames_sent", port)
                self.assertEqual(port["fc_packets_sent"], int(row["fc_packets_sent"]))
                self.assertAlmostEqual(port["credit_stall_ns"], float(row["credit_stall_ns"]),
                                       delta=6e-4)
                self.assertEqual(port["control_frames_sent"], int(row["control_frames_sent"]))
                fc_packets += port["fc_packets_sent"]
                stall += port["credit_stall_ns"]
            self.assertGreater(fc_packets, 0)
            for row in r.links:
                if row["from"].startswith("host"):
                    self.assertAlmostEqual(r.counters[row["from"]]["credit_stall_ns"],
                                           float(row["paused_ns"]), delta=6e-4)
            # No bit errors: the links lose nothing, their counts are the ports': no entries.
            self.assertFalse(any(k.startswith("link") for k in r.counters))


class PerPortRule(unittest.TestCase):
    """stats.per_port_counters: auto = all up to 1024 switch ports, none beyond."""

    QUICK = ["--set", "sim.duration=1us", "--set", "sim.warmup=0ns"]

    def counters(self, *args, config=CHIP):
        with tempfile.TemporaryDirectory() as tmp:
            return Run(tmp, "r", config, *self.QUICK, *args)

    def test_default_single_switch_has_every_port(self):
        r = self.counters()
        sw = r.summary["switches"][0]["name"]
        self.assertEqual(r.summary["config"]["stats"]["per_port_counters"], "auto")
        self.assertEqual(sorted(k for k in r.counters[sw] if k.startswith("port")),
                         sorted(f"port{p}" for p in range(64)))
        self.assertFalse(any(k.startswith("link") for k in r.counters))  # lossless links
        # No flow control in this design point: no per-host entries, no pause counters.
        self.assertFalse(any(k.startswith("host") for k in r.counters))
        self.assertNotIn("pause_frames_sent", r.counters[sw]["port0"])

    def test_none_keeps_the_switch_counters_only(self):
        r = self.counters("--set", "stats.per_port_counters=none")
        self.assertEqual(list(r.counters), [r.summary["switches"][0]["name"]])
        self.assertEqual(sorted(r.counters[r.summary["switches"][0]["name"]]),
                         ["buffer", "crossbar", "ingress"])
        full = self.counters()
        # Everything else in summary.json is the same.
        a = dict(r.summary, counters=None, config=None)
        b = dict(full.summary, counters=None, config=None)
        self.assertEqual(a, b)

    def test_auto_leaves_out_per_port_counters_beyond_1024_switch_ports(self):
        # 17 switches x 64 ports = 1088 switch ports.
        big = ["--set", "topology.kind=leaf_spine", "--set", "topology.leaves=16",
               "--set", "topology.spines=1", "--set", "topology.hosts_per_leaf=2",
               "--set", "sim.duration=200ns"]
        r = self.counters(*big)
        self.assertEqual(len(r.summary["switches"]), 17)
        self.assertFalse(any(k.startswith("link") for k in r.counters))
        self.assertFalse(any(k.startswith("port") for k in r.counters["leaf0"]))
        self.assertIn("crossbar", r.counters["leaf0"])
        r = self.counters(*big, "--set", "stats.per_port_counters=all")
        self.assertIn("port63", r.counters["spine0"])
        # 16 switches x 64 = 1024: still all under auto.
        r = self.counters(*big, "--set", "topology.leaves=15")
        self.assertIn("port0", r.counters["leaf0"])

    def test_bad_value_names_the_key(self):
        p = subprocess.run([FABRICSIM, "run", CHIP, "--set", "stats.per_port_counters=some"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("stats.per_port_counters", p.stderr)


class ResultsDoc(unittest.TestCase):
    """docs/results.md documents every summary.json key, perf.json key and CSV column."""

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(ROOT, "docs", "results.md")) as f:
            cls.doc = f.read()
        cls._tmp = tempfile.TemporaryDirectory()
        cls.run_ = Run(cls._tmp.name, "ls", ROCE, "--set", "sim.duration=3us")

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def documented(self, key, text=None):
        """`key` in backticks, alone or as the last part of a dotted name (`SWITCH.portN.key`)."""
        return re.search(r"`(?:[^`\s]*\.)?" + re.escape(key) + "`", text or self.doc) is not None

    def row(self, key):
        """The summary.json table's row of top-level key `key`."""
        m = re.search(r"^\| `" + re.escape(key) + r"` \|.*$", self.doc, re.M)
        return m.group(0) if m else ""

    def test_every_summary_key_is_documented(self):
        s = self.run_.summary
        missing = [k for k in s if not self.row(k)]
        # Their members, in their row (open-ended objects - the configuration, blocks by name -
        # aside).
        for k, v in s.items():
            if k in ("config", "counters"):
                continue
            members = v[0] if isinstance(v, list) and v and isinstance(v[0], dict) else v
            if not isinstance(members, dict):
                continue
            for sub, sv in members.items():
                if k == "flow_control" and sub == "switches":
                    sv = next(iter(sv.values()))
                if not self.documented(sub, self.row(k)):
                    missing.append(f"{k}.{sub}")
                inner = sv[0] if isinstance(sv, list) and sv and isinstance(sv[0], dict) else sv
                if isinstance(inner, dict):
                    missing += [f"{k}.{sub}.{x}" for x in inner
                                if not self.documented(x, self.row(k))]
        self.assertEqual(missing, [])

    def test_every_perf_key_and_csv_column_is_documented(self):
        missing = [k for k in self.run_.perf if not self.documented(k)]
        for name in ("ports.csv", "links.csv"):
            missing += [f"{name}:{c}" for c in self.run_.header(name) if not self.documented(c)]
        missing += [c for c in self.run_.header("occupancy.csv")[:2] if not self.documented(c)]
        self.assertEqual(missing, [])

    def test_every_registered_counter_name_is_documented(self):
        names = set()

        def walk(node):
            for k, v in node.items():
                if isinstance(v, dict):
                    walk(v)
                else:
                    names.add(k)
        walk(self.run_.counters)
        self.assertEqual(sorted(n for n in names if not self.documented(n)), [])

    def test_schema_version_rule_is_stated(self):
        self.assertIn("schema_version", self.doc)
        self.assertIn(str(self.run_.summary["schema_version"]), self.doc)


# The naming rule of docs/results.md#units-in-names. A quantity ends with its unit; what does not
# is a count of what its name says, a dimensionless ratio or a label.
UNITS = ("_ns", "_s", "_bytes", "_mb", "_bps", "_gbps", "_GBps", "_J", "_W", "pJ_per_bit")
SPANS = ("_run", "_out", "_in", "_at_end")  # which span a figure covers (docs/results.md#spans)
COUNTS = ("count", "packets", "frames", "messages", "drops", "marked", "underruns", "timeouts",
          "fetches", "sent", "received", "delivered", "injected", "dropped", "departed",
          "reordered", "in_flight", "finished", "unfinished", "ports", "switches", "hosts",
          "ranks", "nodes", "collectives", "hops", "iterations", "stage", "rank", "node",
          "not_recorded", "recorded", "waited", "backlog", "xoff", "paused", "outstanding",
          "lost_on_links", "cycles", "threads", "windows", "version", "seed", "bits", "cables")
RATIOS = ("offered_load", "accepted_load", "utilisation", "mean_utilisation", "max_utilisation",
          "max_over_mean", "oversubscription", "slowdown", "cpu_slowdown", "alpha", "u",
          "gradient", "mean", "min", "max", "p50", "p95", "p99", "p999", "cycles_per_s",
          "packets_per_s")
LABELS = ("switch", "port", "host", "peer", "peer_port", "wire", "from", "from_port", "to",
          "to_port", "kind", "device", "class", "id", "src", "dst", "verb", "qp", "tc", "state",
          "name", "algorithm", "nic", "slowest_rank", "first_node", "last_node", "step", "mode",
          "config_name", "fabricsim_version", "interrupted", "drained", "ok", "violations",
          "exact", "helper_threads", "bytes", "exposed_comm_worst_rank", "bins_packets_marked",
          "module")
# Names that say no unit and would hold a quantity: what the rule exists to catch.
AMBIGUOUS = re.compile(r"(^|_)(time|latency|rate|bw|algbw|busbw|size|delay|duration|wait|"
                       r"cwnd|window|lost|pause)$")


def unit_problem(name, parent_has_unit=False):
    """Why `name` breaks the rule (None when it keeps it)."""
    bare = re.sub(r"_by_[a-z]+$", "", name)  # paused_ns_by_priority: a list of paused_ns
    for s in SPANS:
        if bare.endswith(s) and bare != s[1:]:
            bare = bare[: -len(s)]
    if bare.endswith(UNITS):
        return None
    if AMBIGUOUS.search(bare):
        return "a quantity without its unit"
    if parent_has_unit or bare in LABELS or bare in RATIOS or bare.endswith(COUNTS):
        return None
    if bare.startswith(("bytes_", "messages_", "packets_", "nodes_", "collectives_", "bits_")):
        return None  # bytes_posted, messages_completed: the count's unit comes first
    return "neither a unit suffix nor a known count, ratio or label"


class UnitsInNames(unittest.TestCase):
    """Every column of a run's CSV files and every summary.json key says its unit, or is a count,
    a ratio or a label (docs/results.md#units-in-names): a NIC workload run with Swift's state
    traced writes every file."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        sets = ["traffic.pattern=workload", "switch.ports=16", "sim.duration=1us",
                "sim.warmup=0ns", "sim.drain_limit=20ms", "workload.tc=3", "workload.ranks=4",
                "workload.bytes=256KiB", "nic.cc=swift", "nic.rate_trace_interval=1us",
                "stats.occupancy_interval=1us"]
        cls.run_ = Run(cls._tmp.name, "w", os.path.join(ROOT, "configs", "nic_800g.yaml"),
                       *[x for s in sets for x in ("--set", s)])

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_the_rule_catches_a_name_without_its_unit(self):
        for bad in ("busbw", "latency", "rate", "time", "lost_run", "cwnd",
                    "latency_mean_out", "frobs"):
            self.assertIsNotNone(unit_problem(bad), bad)
        for good in ("busbw_GBps", "latency_mean_ns_out", "rate_gbps", "lost_frames_run",
                     "pause_frames_sent", "cwnd_packets", "paused_ns", "headroom_peak_bytes"):
            self.assertIsNone(unit_problem(good), good)

    def test_every_csv_column_says_its_unit(self):
        files = [f for f in sorted(os.listdir(self.run_.out)) if f.endswith(".csv")]
        for f in ("ports.csv", "links.csv", "occupancy.csv", "fct.csv", "qp_rates.csv",
                  "collectives.csv", "steps.csv", "ranks.csv", "flow_events.csv"):
            self.assertIn(f, files)
        bad = []
        for f in files:
            for c in self.run_.header(f):
                if f == "occupancy.csv" and re.fullmatch(r"(\S+\.)?port\d+_bytes", c):
                    c = "port_bytes"
                why = unit_problem(c)
                if why:
                    bad.append(f"{f}:{c}: {why}")
        self.assertEqual(bad, [])
        self.assertIn("cwnd_packets", self.run_.header("qp_rates.csv"))
        # The units are the ones named: GB/s is bytes per ns; Gb/s the 800G ports' 800.
        calls = self.run_.csv("collectives.csv")
        self.assertTrue(calls)
        for c in calls:
            self.assertAlmostEqual(float(c["algbw_GBps"]), int(c["bytes"]) / float(c["time_ns"]),
                                   delta=0.0006)
        self.assertEqual({float(r["rate_gbps"]) for r in self.run_.links}, {800.0})

    def test_every_summary_key_says_its_unit(self):
        bad = []

        def walk(node, path, parent_has_unit):
            items = node.items() if isinstance(node, dict) else (
                ((f"[{i}]", v) for i, v in enumerate(node)) if isinstance(node, list) else ())
            for k, v in items:
                if k.startswith("["):
                    walk(v, path + k, parent_has_unit)
                    continue
                section = isinstance(v, dict) or (isinstance(v, list) and (
                    not v or isinstance(v[0], dict)))  # an empty list: a section of none
                why = None if section else unit_problem(k, parent_has_unit)
                if why:
                    bad.append(f"{path}.{k}: {why}")
                walk(v, f"{path}.{k}", parent_has_unit or k.endswith(UNITS))

        s = self.run_.summary
        for k, v in s.items():
            if k in ("config", "counters"):  # keys of the configuration, blocks by their names
                continue
            if k == "flow_control":  # its switches by name
                v = dict(v, switches=next(iter(v["switches"].values())))
            walk({k: v}, "", False)
        self.assertIn("busbw_GBps", s["workload"])
        self.assertEqual(bad, [])


if __name__ == "__main__":
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
