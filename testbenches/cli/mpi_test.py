#!/usr/bin/env python3
"""MPI ranks (docs/architecture.md "MPI"): `mpirun -np N fabricsim run CONFIG` runs the sides of
sim.threads as processes, each with its own copy of the fabric, rank 0 with the kernel and the
hosts. Like threads they are a speed setting only: every result file is the same with 2 and 4
ranks as in one process, on localhost, over a fat tree of generators with occupancy sampling
(samples taken by the other ranks), PFC incasts whose flow-events log overflows its limit (spans
merged from every rank), IB credits between switches of different ranks, RDMA NICs under DCQCN
with frames lost to bit errors (go-back-N retransmitting), HPCC's INT stacks crossing ranks, and
a collective workload on a fat tree. Bad use is refused with exit 2: more ranks than switches +
1, sim.threads above 1 under mpirun, a command other than run; a failure on one rank ends all."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from same_results import result_files

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MPIRUN = shutil.which("mpirun")


def cfg(name):
    return os.path.join(ROOT, "configs", name)


def no_mpi_leak_check(env):
    """Under the sanitizer tree (ASAN_OPTIONS set): no leak check in MPI processes. OpenMPI keeps
    its components' allocations to the end and unloads their libraries at MPI_Finalize, so
    LeakSanitizer reports them in frames it cannot name or suppress; the address and UB checks
    stay on, and the one-process runs these are compared with keep the leak check."""
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] = env["ASAN_OPTIONS"] + ":detect_leaks=0"
    return env


def mpi_env():
    env = dict(os.environ)
    no_mpi_leak_check(env)
    if os.geteuid() == 0:  # CI's containers: OpenMPI refuses root without these
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


LEAF_SPINE = ["topology.kind=leaf_spine", "topology.leaves=4", "topology.spines=2",
              "topology.hosts_per_leaf=8"]
CASES = {
    "fat_tree": (cfg("switch_51t2.yaml"), ["topology.kind=fat_tree", "topology.k=4",
                                          "traffic.load=0.6", "sim.duration=12us",
                                          "stats.occupancy_interval=50ns"]),
    "pfc_incast": (cfg("switch_51t2_roce.yaml"), LEAF_SPINE + [
        "traffic.pattern=incast", "traffic.incast.sources=24", "traffic.load=0.95",
        "sim.duration=30us", "stats.flow_events=40"]),
    "ib_leaf_spine": (cfg("switch_51t2_ib.yaml"), LEAF_SPINE + [
        "traffic.pattern=incast", "traffic.incast.sources=24", "traffic.load=0.95",
        "sim.duration=20us"]),
    "nic_go_back_n": (cfg("nic_800g.yaml"), [
        "traffic.pattern=all_to_all", "traffic.load=0.8", "traffic.message_size=64KiB",
        "sim.duration=8us", "sim.warmup=1us", "sim.drain_limit=5ms",
        "link.phy.pre_fec_ber=1e-3", "nic.rc.timeout=100us", "topology.kind=fat_tree",
        "topology.k=4"]),
    "nic_hpcc_fat_tree": (cfg("nic_400g.yaml"), [
        "topology.kind=fat_tree", "topology.k=4", "nic.cc=hpcc", "traffic.pattern=uniform",
        "traffic.load=0.7", "traffic.message_size=256KiB", "sim.duration=20us",
        "sim.warmup=2us"]),
    "nic_workload_fat_tree": (cfg("nic_800g.yaml"), [
        "traffic.pattern=workload", "workload.tc=3", "topology.kind=fat_tree", "topology.k=4",
        "workload.collective=alltoall_direct", "workload.bytes=2MiB", "sim.duration=10us",
        "sim.warmup=0ns", "sim.drain_limit=2ms", "stats.occupancy_interval=1us"]),
}


def run(tmp, name, config, sets, ranks, extra=()):
    out = os.path.join(tmp, f"{name}_{ranks}")
    cmd = [FABRICSIM, "run", config, "--out", out]
    for s in list(sets) + list(extra):
        cmd += ["--set", s]
    if ranks > 1:
        cmd = [MPIRUN, "--oversubscribe", "-np", str(ranks)] + cmd
    env = mpi_env() if ranks > 1 else dict(os.environ)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600), out


def results(name, p, out):
    if p.returncode != 0:
        raise AssertionError(f"{name}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return result_files(out, "threads")


@unittest.skipUnless(MPIRUN, "mpirun not installed")
class Mpi(unittest.TestCase):
    def test_results_are_the_same_with_2_and_4_ranks(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, (config, sets) in CASES.items():
                with self.subTest(name):
                    one, perf1 = results(name, *run(tmp, name, config, sets, 1))
                    self.assertEqual(perf1["mpi_ranks"], 1)
                    for n in (2, 4):
                        many, perf = results(name, *run(tmp, name, config, sets, n))
                        self.assertEqual(perf["mpi_ranks"], n, name)
                        sides = perf["side_switches"]
                        self.assertEqual(len(sides), n, name)
                        self.assertTrue(all(k > 0 for k in sides[1:]), f"{name}: {sides}")
                        # The ranks did exchange windows, and frames crossed between them.
                        self.assertGreater(perf["worker_windows"], 20, name)
                        self.assertGreater(perf["cross_side_calls"], 100, name)
                        self.assertGreater(perf["mpi_exchanges"], 2 * perf["worker_windows"])
                        self.assertEqual(sorted(one), sorted(many))
                        for f in one:
                            self.assertTrue(one[f] == many[f], f"{name}: {f} differs with {n} ranks")
                    if name == "pfc_incast":  # the limit was reached: spans merged across ranks
                        s = json.loads(one["summary.json"])
                        self.assertGreater(s["flow_events"]["not_recorded"], 0)
                    if name == "nic_go_back_n":
                        s = json.loads(one["summary.json"])
                        self.assertGreater(s["transport"]["retransmitted_packets"], 0, name)

    def test_bad_use_is_refused(self):
        short = ["sim.duration=2us", "sim.warmup=1us"]
        with tempfile.TemporaryDirectory() as tmp:
            # A chip alone: rank 0 and one rank with the chip at most.
            p, _ = run(tmp, "chip", cfg("switch_51t2.yaml"), short, 3)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("MPI with 3 ranks: this fabric has 1 switch: at most 2 ranks", p.stderr)
            self.assertEqual(p.stderr.count("fabricsim: error"), 1, p.stderr)
            p, _ = run(tmp, "threads", cfg("switch_51t2.yaml"), short, 2, ["sim.threads=2"])
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("sim.threads: 2 under MPI (2 ranks)", p.stderr)
            p, _ = run(tmp, "ideal", cfg("switch_51t2.yaml"), short + ["link.model=ideal"], 2)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("MPI with 2 ranks needs the switches' run-ahead", p.stderr)
            p = subprocess.run([MPIRUN, "--oversubscribe", "-np", "2", FABRICSIM, "check",
                                cfg("switch_51t2.yaml")], capture_output=True, text=True,
                               env=mpi_env(), timeout=120)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("only `fabricsim run` runs as MPI ranks", p.stderr)

    def test_a_failure_on_one_rank_ends_every_rank(self):
        # A packet sent to an unconnected port is a model error (exit 1); here rank 1 hits it
        # in its switch, rank 0 waits for that rank's window: the job must end, not hang.
        with tempfile.TemporaryDirectory() as tmp:
            env = mpi_env()
            env["FABRICSIM_MPI_FAIL_RANK"] = "1"
            cmd = [MPIRUN, "--oversubscribe", "-np", "2", FABRICSIM, "run",
                   cfg("switch_51t2.yaml"), "--out", os.path.join(tmp, "f"), "--set",
                   "topology.kind=fat_tree", "--set", "topology.k=4", "--set",
                   "sim.duration=12us"]
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
            self.assertNotEqual(p.returncode, 0, p.stderr)
            self.assertIn("fabricsim: rank 1 of 2: ", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "f", "summary.json")))


if __name__ == "__main__":
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
