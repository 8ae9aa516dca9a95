#!/usr/bin/env python3
"""Threads (sim.threads: P, docs/architecture.md "Threads") are a speed setting only: every
result file is the same with 1, 2, 3 and 4 threads (and 8, and one worker per switch, on fat
trees and a dragonfly), over a chip with its hosts, fat trees with occupancy sampling, PFC
incasts whose flow-events log overflows its limit (the switches' spans are put in place window by
window, merged from every side), IB credits (also between switches on different threads), a
dragonfly, wires whose frames stall mid-frame (which shrink the windows), and RDMA NICs: an
all-to-all under PFC and DCQCN with frames lost to bit errors (go-back-N and UEC-style RUD
retransmitting), HPCC's INT stacks crossing the threads, and a collective workload on a fat
tree; and the same with switch.model packet (a fat tree, a PFC incast, the collective). The
threads take the windows' switches as they are free (sim.rebalance true, the default for NIC hosts
on packet-model switches: the main thread too, once it has run the hosts), and with
sim.rebalance false (the default otherwise) each runs its side's: the same files either way. A
fabric with fewer switches than P - 1 runs with one worker per switch (a warning). Runs that
cannot have threads are refused with exit 2 and the reason: ideal links (no latency, so no
windows), switch kinds on different clocks, more than 64."""
import json
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


LEAF_SPINE = ["topology.kind=leaf_spine", "topology.leaves=4", "topology.spines=2",
              "topology.hosts_per_leaf=8"]
NIC_A2A = ["traffic.pattern=all_to_all", "traffic.load=0.8", "traffic.message_size=64KiB",
           "sim.duration=8us", "sim.warmup=1us", "sim.drain_limit=5ms",
           # Losses on every link (~1% of frames), recovered within the drain: a 100 us timer
           # (the shipped 4.29 s one would leave the tails in flight). At 2e-3 most frames were
           # lost and QPs failed their messages, which a run now reports (exit 3).
           "link.phy.pre_fec_ber=1e-3", "nic.rc.timeout=100us"]
CASES = {
    "single_chip": (cfg("switch_51t2.yaml"), ["traffic.load=0.9", "sim.duration=6us"]),
    "fat_tree": (cfg("switch_51t2.yaml"), ["topology.kind=fat_tree", "topology.k=4",
                                          "traffic.load=0.6", "sim.duration=12us",
                                          "stats.occupancy_interval=50ns"]),
    # PFC: an incast through the spines pauses the uplinks and the hosts (~150 spans of
    # switches and hosts interleaved), 40 flow events at most.
    "pfc_incast": (cfg("switch_51t2_roce.yaml"), LEAF_SPINE + [
        "traffic.pattern=incast", "traffic.incast.sources=24", "traffic.load=0.95",
        "sim.duration=30us", "stats.flow_events=40"]),
    "ib_credits": (cfg("examples/two_switch_ib.yaml"), ["sim.duration=12us"]),
    # IB credits between switches on different threads (a leaf and a spine on the main thread):
    # the receiver takes a frame's credit blocks at hand-over, here at the window's end.
    "ib_leaf_spine": (cfg("switch_51t2_ib.yaml"), LEAF_SPINE + [
        "traffic.pattern=incast", "traffic.incast.sources=24", "traffic.load=0.95",
        "sim.duration=20us"]),
    "dragonfly": (cfg("examples/dragonfly.yaml"), ["sim.duration=10us"]),
    "stalls": (cfg("switch_51t2.yaml"), LEAF_SPINE + [
        "switch.egress.start=first_cell", "traffic.load=0.8", "sim.duration=10us",
        "traffic.sizes=[64,1500,9000]", "traffic.size_weights=[1,1,1]"]),
    "nic_go_back_n": (cfg("nic_800g.yaml"), NIC_A2A),
    "nic_rud": (cfg("nic_800g.yaml"), NIC_A2A + ["nic.transport=rud"]),
    # HPCC: INT stacks cross the threads with their frames (the mailboxes keep a copy).
    "nic_hpcc_fat_tree": (cfg("nic_400g.yaml"), [
        "topology.kind=fat_tree", "topology.k=4", "nic.cc=hpcc", "traffic.pattern=uniform",
        "traffic.load=0.7", "traffic.message_size=256KiB", "sim.duration=20us",
        "sim.warmup=2us"]),
    # switch.model packet: the packet-level switches, woken at packet events only.
    "packet_fat_tree": (cfg("switch_51t2.yaml"), ["switch.model=packet", "topology.kind=fat_tree",
                                                 "topology.k=4", "traffic.load=0.6",
                                                 "sim.duration=12us",
                                                 "stats.occupancy_interval=50ns"]),
    "packet_pfc_incast": (cfg("switch_51t2_roce.yaml"), LEAF_SPINE + [
        "switch.model=packet", "traffic.pattern=incast", "traffic.incast.sources=24",
        "traffic.load=0.95", "sim.duration=30us"]),
    "nic_workload_fat_tree": (cfg("nic_800g.yaml"), [
        "traffic.pattern=workload", "workload.tc=3", "topology.kind=fat_tree", "topology.k=4",
        "workload.collective=alltoall_direct", "workload.bytes=2MiB", "sim.duration=10us",
        "sim.warmup=0ns", "sim.drain_limit=2ms", "stats.occupancy_interval=1us"]),
}
# The NICs' collective over packet-model switches (whose NIC hosts weigh more in the split).
CASES["packet_nic_workload_fat_tree"] = (
    CASES["nic_workload_fat_tree"][0], CASES["nic_workload_fat_tree"][1] + ["switch.model=packet"])

# More threads than 2, 3, 4 (each run takes well under a second): up to a worker per switch.
MORE = {"fat_tree": (8, 21), "packet_fat_tree": (8, 21), "dragonfly": (8, 37), "nic_hpcc_fat_tree": (8,),
        "nic_workload_fat_tree": (21,), "packet_nic_workload_fat_tree": (21,)}


def run(tmp, name, config, sets, threads):
    out = os.path.join(tmp, f"{name}_{threads}")
    cmd = [FABRICSIM, "run", config, "--out", out, "--set", f"sim.threads={threads}"]
    for s in sets:
        cmd += ["--set", s]
    return subprocess.run(cmd, capture_output=True, text=True), out


def results(name, p, out, also=()):
    """The result files but the configuration echo's sim.threads (and the sim keys `also`)."""
    if p.returncode != 0:
        raise AssertionError(f"{name}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    files, perf = result_files(out, "threads")
    if also:
        s = json.loads(files["summary.json"])
        for key in also:
            s["config"]["sim"].pop(key)
        files["summary.json"] = json.dumps(s, sort_keys=True)
    return files, perf


class Threads(unittest.TestCase):
    def check_split(self, name, perf, threads):
        """The run had `threads` sides, each worker with switches, windows on the workers."""
        self.assertEqual(perf["threads"], threads, name)
        self.assertGreater(perf["worker_windows"], 20, name)
        sides = perf["side_switches"]
        self.assertEqual(len(sides), threads, name)
        self.assertEqual(sum(sides), perf["switches"], name)
        self.assertEqual(sides[0], perf["main_thread_switches"], name)
        self.assertTrue(all(n > 0 for n in sides[1:]), f"{name}: {sides}")
        # The balance: the main thread's wait at window ends and each worker's for its next
        # window are parts of the run's wall time (a worker waits at least while the main
        # thread runs the hosts between windows).
        waits = perf["worker_wait_s"]
        self.assertEqual(len(waits), threads - 1, name)
        self.assertTrue(0 <= perf["main_wait_s"] < perf["wall_s"], f"{name}: {perf}")
        self.assertTrue(all(0 <= w < perf["wall_s"] for w in waits), f"{name}: {waits}")
        # A worker's time without a job holds its wait at window ends (the same clock, read
        # at the same two instants or further apart).
        idle = perf["worker_idle_s"]
        self.assertEqual(len(idle), threads - 1, name)
        self.assertTrue(all(w <= i + 1e-3 and i < perf["wall_s"] for w, i in zip(waits, idle)),
                        f"{name}: waits {waits}, idle {idle}")

    def test_results_are_the_same_with_any_number_of_threads(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, (config, sets) in CASES.items():
                with self.subTest(name):
                    one, perf1 = results(name, *run(tmp, name, config, sets, 1),
                                         also=("rebalance",))
                    self.assertEqual((perf1["threads"], perf1["worker_windows"]), (1, 0))
                    self.assertEqual((perf1["main_wait_s"], perf1["worker_wait_s"]), (0, []))
                    self.assertEqual(perf1["worker_idle_s"], [])
                    self.assertEqual(perf1["side_switches"], [perf1["switches"]])
                    # Up to one worker per switch: more would only repeat the last split.
                    cap = perf1["switches"] + 1
                    counts = [t for t in (2, 3, 4) + MORE.get(name, ()) if t <= cap]
                    for t in counts:  # (taking switches: every case; each side its own below)
                        many, perf = results(name, *run(tmp, name, config,
                                                        sets + ["sim.rebalance=true"], t),
                                             also=("rebalance",))
                        self.check_split(f"{name} threads={t}", perf, t)
                        self.assertEqual(sorted(one), sorted(many))
                        for f in one:
                            self.assertTrue(one[f] == many[f],
                                            f"{name}: {f} differs with {t} threads")
                    if name == "pfc_incast":  # the limit was reached: splicing had to keep it
                        s = json.loads(one["summary.json"])
                        self.assertGreater(s["flow_events"]["not_recorded"], 0)
                        self.assertEqual(one["flow_events.csv"].count("\n"), 41)  # header + 40
                    if name in ("nic_go_back_n", "nic_rud"):
                        s = json.loads(one["summary.json"])
                        self.assertGreater(s["transport"]["retransmitted_packets"], 0, name)

    def test_each_thread_runs_its_own_side_with_the_same_results(self):
        # sim.rebalance false: no switch taken by another thread (each side's windows on its
        # own thread), and every file the one thread's. With rebalance (the other tests) the
        # main thread takes switches of the workers' sides too.
        with tempfile.TemporaryDirectory() as tmp:
            for name, (config, sets) in CASES.items():
                with self.subTest(name):
                    one, perf1 = results(name, *run(tmp, name, config, sets, 1),
                                         also=("rebalance",))
                    for t in (t for t in (2, 3) if t <= perf1["switches"] + 1):
                        many, perf = results(name, *run(tmp, f"{name}_fixed", config,
                                                        sets + ["sim.rebalance=false"], t),
                                             also=("rebalance",))
                        self.check_split(f"{name} fixed, threads={t}", perf, t)
                        self.assertEqual(sorted(one), sorted(many))
                        for f in one:
                            self.assertTrue(one[f] == many[f],
                                            f"{name}: {f} differs with {t} fixed threads")

    def test_the_threads_take_the_switches_as_they_are_free(self):
        # A collective of NICs on a packet fat tree, two threads: with sim.rebalance the worker
        # starts on the window's switches and the main thread, once it has run the hosts, takes
        # what is left (which thread takes which depends on timing: on a loaded machine the
        # main thread may take them all); with sim.rebalance false each runs its own side's.
        # The same switch windows either way.
        with tempfile.TemporaryDirectory() as tmp:
            config, sets = CASES["packet_nic_workload_fat_tree"]
            _, free = results("free", *run(tmp, "free", config, sets, 2))
            _, fixed = results("fixed", *run(tmp, "fixed", config,
                                             sets + ["sim.rebalance=false"], 2))
            self.assertEqual(len(free["side_runs"]), 2)
            self.assertEqual(sum(free["side_runs"]), sum(fixed["side_runs"]))
            self.assertTrue(all(n > 0 for n in fixed["side_runs"]), fixed["side_runs"])
            _, one = results("one", *run(tmp, "one", config, sets, 1))
            self.assertEqual(one["side_runs"], [])

    def test_the_main_thread_and_workers_split_a_fat_tree_by_pods(self):
        # k = 4: 16 pod switches (2 edges, 2 aggregations a pod) numbered pod by pod, then 4
        # cores, each with 4 connected ports (cost 4); 16 generator hosts (0.5 each): 88 in all,
        # 22 a side. The main thread: the hosts (8) and 3 switches (20; a fourth would make 24).
        # The workers: of the 68 left, 6 consecutive switches (24, nearest 22.7), 6 (24, of 44),
        # and the last 5 (two pods' switches each but at the ends, the cores last). That is the
        # split with sim.rebalance false; with it (the default) any thread runs any switch and
        # the split only says who delivers the calls to a side's switches: the switches' ports
        # alone, 20 a side, 5 switches each. The default (auto) for generator hosts: false.
        with tempfile.TemporaryDirectory() as tmp:
            config, sets = CASES["fat_tree"]
            short = sets[:-1] + ["sim.duration=2us", "sim.warmup=1us"]
            for rebalance, want in (("false", [3, 6, 6, 5]), ("auto", [3, 6, 6, 5]),
                                    ("true", [5, 5, 5, 5])):
                _, perf = results(rebalance, *run(tmp, rebalance, config,
                                                  short + [f"sim.rebalance={rebalance}"], 4))
                self.assertEqual(perf["side_switches"], want, rebalance)

    def test_a_split_by_hand_runs_as_given_with_the_same_results(self):
        # sim.partition: so many consecutive switches a side; any split gives the same files.
        with tempfile.TemporaryDirectory() as tmp:
            config, sets = CASES["fat_tree"]
            sets = sets[:-1] + ["sim.duration=4us", "sim.warmup=1us"]
            one, _ = results("one", *run(tmp, "one", config, sets, 1))
            many, perf = results("hand", *run(tmp, "hand", config,
                                              sets + ["sim.partition=[1,17,2]"], 3))
            self.assertEqual(perf["side_switches"], [1, 17, 2])
            for f in one:
                if f != "summary.json":
                    self.assertTrue(one[f] == many[f], f)
            strip = lambda t: {k: v for k, v in json.loads(t).items() if k != "config"}
            self.assertEqual(strip(one["summary.json"]), strip(many["summary.json"]))
            for bad in ("[1,17]", "[1,17,3]", "[1.5,16.5,2]"):
                p, _ = run(tmp, "bad", config, sets + [f"sim.partition={bad}"], 3)
                self.assertEqual(p.returncode, 2, bad)
                self.assertIn("sim.partition:", p.stderr, bad)

    def test_nic_hosts_weigh_more_beside_packet_model_switches(self):
        # k = 4 with NICs, 20 switches of 4 ports (80), two threads. Cycle-model switches: 16
        # NIC hosts at 1.2 (19.2) of 99.2, the main thread up to 49.6: the hosts and 7 switches
        # (47.2). Packet-model switches: a NIC host weighs 3.3 (52.8) of 132.8, up to 66.4: the
        # hosts and 3 switches (64.8). (With sim.rebalance false: with it, the switches' ports
        # alone, 10 switches a side. The default, auto, takes switches for NIC hosts on
        # packet-model switches only.)
        with tempfile.TemporaryDirectory() as tmp:
            config, sets = CASES["nic_workload_fat_tree"]
            for model, rebalance, want in (("cycle", "false", [7, 13]),
                                           ("cycle", "auto", [7, 13]),
                                           ("packet", "false", [3, 17]),
                                           ("packet", "true", [10, 10]),
                                           ("packet", "auto", [10, 10])):
                p, out = run(tmp, model, config, sets + ["sim.drain_limit=3us",
                                                         f"switch.model={model}",
                                                         f"sim.rebalance={rebalance}"], 2)
                self.assertIn(p.returncode, (0, 3), p.stderr)  # 3: the capped call unfinished
                with open(os.path.join(out, "perf.json")) as f:
                    self.assertEqual(json.load(f)["side_switches"], want, model)

    def test_more_threads_than_switches_run_with_a_worker_per_switch(self):
        with tempfile.TemporaryDirectory() as tmp:
            p, out = run(tmp, "chip", cfg("switch_51t2.yaml"),
                         ["sim.duration=2us", "sim.warmup=1us"], 4)
            _, perf = results("chip", p, out)
            self.assertIn("warning: sim.threads: 4 runs as 2: this fabric has 1 switch", p.stderr)
            self.assertEqual((perf["threads"], perf["side_switches"]), (2, [0, 1]))

    def test_runs_that_cannot_have_threads_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            p, _ = run(tmp, "ideal", cfg("switch_51t2.yaml"),
                       ["link.model=ideal", "sim.duration=2us", "sim.warmup=1us"], 3)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("sim.threads: 3 needs the switches' run-ahead", p.stderr)
            self.assertIn("link.model ideal", p.stderr)
            p, _ = run(tmp, "kinds", cfg("examples/leaf_spine_kinds.yaml"),
                       ["sim.duration=2us", "sim.warmup=1us"], 2)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("sim.threads: 2 needs every switch on one clock", p.stderr)
            p, _ = run(tmp, "many", cfg("switch_51t2.yaml"), ["sim.duration=2us", "sim.warmup=1us"],
                       65)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("sim.threads", p.stderr)
            self.assertIn("64", p.stderr)


if __name__ == "__main__":
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
