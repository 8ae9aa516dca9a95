#!/usr/bin/env python3
"""scripts/sweep.py's Slurm backend on a real Slurm: a private one-node cluster on localhost
(slurm_cluster.py: its own munged, slurmctld and slurmd in a temporary directory, stopped at the
end whatever happens).

  slurm_test.py BUILD/fabricsim [unittest options]

Not skipped when Slurm is missing: it fails and says what to install (scripts/setup.sh installs
slurm-wlm and munge; CI runs it as root on a fresh Debian 12)."""
import atexit
import csv
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from slurm_cluster import SlurmCluster, SlurmUnavailable  # noqa: E402

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(HERE))
SWEEP = os.path.join(ROOT, "scripts", "sweep.py")
SLOTTED = os.path.join(ROOT, "configs", "validation", "slotted.yaml")
# 4 ports for 3 us: well under a second per run. The helper threads are set explicitly, so the
# local and the Slurm runs resolve to the same configuration (and write the same summary.json).
TINY = ["--set", "sim.duration=3us", "--set", "sim.warmup=1us", "--set", "switch.ports=4",
        "--set", "sim.traffic_thread=false"]
GRID = ["--vary", "traffic.load=0.3,0.8", "--seeds", "1,2"]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def without(csv_text, *columns):
    rows = list(csv.reader(io.StringIO(csv_text)))
    keep = [i for i, c in enumerate(rows[0]) if c not in columns]
    return [[r[i] for i in keep] for r in rows]


class SlurmBackend(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.tmp = cls._tmp.name
        cls.cluster = SlurmCluster()
        # The cluster is stopped at exit whatever happens: tearDownClass, or a signal (a harness's
        # timeout, Ctrl-C) turned into an exit; its daemons die with this process in any case.
        atexit.register(cls.cluster.__exit__, None, None, None)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda s, f: sys.exit(128 + s))
        try:
            cls.cluster.__enter__()
        except SlurmUnavailable as e:
            cls._tmp.cleanup()
            raise AssertionError(f"cannot start the private Slurm cluster: {e}") from None

    @classmethod
    def tearDownClass(cls):
        cls.cluster.__exit__(None, None, None)
        cls._tmp.cleanup()

    def sweep(self, *args, backend="slurm", timeout=120):
        cmd = [sys.executable, SWEEP, SLOTTED, *TINY, "--fabricsim", FABRICSIM, *args]
        if backend == "slurm":
            cmd += ["--backend", "slurm", "--poll", "0.3"]
        return subprocess.run(cmd, capture_output=True, text=True, env=self.cluster.env,
                              timeout=timeout)

    def test_1_slurm_results_equal_local_and_resume_submits_only_missing_runs(self):
        slurm, local = os.path.join(self.tmp, "slurm"), os.path.join(self.tmp, "local")
        p = self.sweep(*GRID, "--out", slurm)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("submitted Slurm array job", p.stderr)
        self.assertIn("(4 runs)", p.stderr)
        job = p.stderr.split("submitted Slurm array job ")[1].split()[0]
        pl = self.sweep(*GRID, "--out", local, "--jobs", "2", backend="local")
        self.assertEqual(pl.returncode, 0, pl.stdout + pl.stderr)
        rows = read_csv(os.path.join(slurm, "sweep.csv"))
        self.assertEqual([(r["traffic.load"], r["seed"], r["status"]) for r in rows],
                         [(l, s, "ok") for l in ("0.3", "0.8") for s in ("1", "2")])
        for r in rows:
            # each run was an array task of that job: Slurm wrote its log, the task its outcome
            with open(os.path.join(slurm, r["point"], "outcome.json")) as f:
                self.assertEqual(json.load(f), {"exit_code": 0, "error": ""})
            with open(os.path.join(slurm, r["point"], "summary.json"), "rb") as f:
                a = f.read()
            with open(os.path.join(local, r["point"], "summary.json"), "rb") as f:
                b = f.read()
            self.assertEqual(a, b, f"{r['point']}: the Slurm run's summary.json differs")
        logs = sorted(os.listdir(os.path.join(slurm, ".slurm")))
        self.assertEqual([x for x in logs if x.endswith(".out")],
                         [f"{job}_{k}.out" for k in range(4)])
        with open(os.path.join(slurm, "sweep.csv")) as f:
            text_s = f.read()
        with open(os.path.join(local, "sweep.csv")) as f:
            text_l = f.read()
        self.assertEqual(without(text_s, "wall_s"), without(text_l, "wall_s"))
        with open(os.path.join(slurm, "sweep_points.csv")) as f:
            text_s = f.read()
        with open(os.path.join(local, "sweep_points.csv")) as f:
            self.assertEqual(text_s, f.read())

        # Resume: one run's results gone, one interrupted; plus a new value whose runs fail (bad
        # input, exit 2). Only those five are submitted; the two intact runs are reused.
        gone, cut = rows[0]["point"], rows[3]["point"]
        subprocess.run(["rm", "-r", os.path.join(slurm, gone)], check=True)
        path = os.path.join(slurm, cut, "summary.json")
        with open(path) as f:
            s = json.load(f)
        s["interrupted"] = True
        with open(path, "w") as f:
            json.dump(s, f)
        for r in rows[1:3]:  # a file the sweep does not write: survives only if not rerun
            open(os.path.join(slurm, r["point"], "keep.me"), "w").close()
        p = self.sweep("--vary", "traffic.load=0.3,0.8,1.5", "--seeds", "1,2", "--out", slurm)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("2 of 6 runs already done", p.stderr)
        self.assertIn("(4 runs)", p.stderr)
        rows2 = read_csv(os.path.join(slurm, "sweep.csv"))
        self.assertEqual([r["reused"] for r in rows2], ["false", "true", "true", "false",
                                                        "false", "false"])
        for r in rows2[1:3]:
            self.assertTrue(os.path.exists(os.path.join(slurm, r["point"], "keep.me")))
        for r in rows2[4:]:
            self.assertEqual((r["status"], r["exit_code"]), ("failed", "2"))
            self.assertIn("out of range", r["error"])
        for r in rows2[:4]:
            self.assertEqual(r["status"], "ok")
            with open(os.path.join(slurm, r["point"], "summary.json"), "rb") as f:
                a = f.read()
            with open(os.path.join(local, r["point"], "summary.json"), "rb") as f:
                self.assertEqual(a, f.read(), r["point"])

    def test_2_interrupting_the_sweep_cancels_the_array(self):
        out = os.path.join(self.tmp, "cancel")
        cmd = [sys.executable, SWEEP, SLOTTED, "--set", "switch.ports=16", "--set",
               "sim.duration=100000us", "--vary", "traffic.load=0.3,0.4,0.5", "--fabricsim",
               FABRICSIM, "--backend", "slurm", "--poll", "0.3", "--slurm-max-running", "2",
               "--timeout", "60",  # a bound for runs left behind should this test be killed
               "--out", out]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=self.cluster.env)
        # wait until the simulations run (their stdout.txt exists), then stop the sweep
        deadline = time.monotonic() + 30
        running = []
        while time.monotonic() < deadline and not running:
            time.sleep(0.3)
            running = [d for d in ("traffic.load=0.3", "traffic.load=0.4")
                       if os.path.exists(os.path.join(out, d, "stdout.txt"))]
        time.sleep(1)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
        self.assertTrue(running, stderr)
        self.assertEqual(proc.returncode, 130, stdout + stderr)
        self.assertIn("cancelling Slurm job", stderr)
        q = subprocess.run(["squeue", "-h"], capture_output=True, text=True, env=self.cluster.env)
        self.assertEqual(q.stdout.strip(), "", "the array is still in the queue")
        rows = read_csv(os.path.join(out, "sweep.csv"))
        self.assertEqual(len(rows), 3)
        self.assertEqual({r["status"] for r in rows}, {"failed"})
        for r in rows:
            if r["point"] in running or r["exit_code"]:
                # a run that had started: stopped by scancel's SIGTERM, partial results written
                self.assertEqual(r["exit_code"], "1", r)
                self.assertIn("interrupted (the Slurm task was cancelled)", r["error"])
                with open(os.path.join(out, r["point"], "summary.json")) as f:
                    self.assertTrue(json.load(f)["interrupted"])
            else:
                self.assertIn("not run", r["error"])
        self.assertIn("traffic.load=0.5", [r["point"] for r in rows if not r["exit_code"]],
                      "the third run waits for a slot (--slurm-max-running 2) and never starts")


    def test_3_a_refused_submission_exits_2_with_sbatchs_message(self):
        out = os.path.join(self.tmp, "refused")
        p = self.sweep("--vary", "traffic.load=0.3", "--slurm-partition", "nosuch", "--out", out)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("sbatch failed", p.stderr)
        self.assertIn("partition", p.stderr.lower())
        self.assertNotIn("Traceback", p.stderr)

    def test_4_an_mpi_job_through_srun_gives_the_one_process_results(self):
        # docs/architecture.md "MPI": srun starts the ranks through PMIx (Debian 12's Slurm 22.05
        # and Open MPI 4.1 both have it); the results are a one-process run's, file for file.
        sets = ["--set", "topology.kind=fat_tree", "--set", "topology.k=4", "--set",
                "sim.duration=6us", "--set", "sim.warmup=2us", "--set", "sim.traffic_thread=false"]
        config = os.path.join(ROOT, "configs", "switch_51t2.yaml")
        one, two = os.path.join(self.tmp, "mpi1"), os.path.join(self.tmp, "mpi2")
        p = subprocess.run([FABRICSIM, "run", config, "--out", one, *sets], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        env = dict(self.cluster.env, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        # Under the sanitizer tree: no leak check in the MPI ranks (OpenMPI's unloaded components
        # hold allocations LeakSanitizer can neither name nor suppress: testbenches/cli/mpi_test.py).
        if "ASAN_OPTIONS" in env:
            env["ASAN_OPTIONS"] += ":detect_leaks=0"
        p = subprocess.run(["srun", "-p", self.cluster.partition, "--mpi=pmix", "-n", "2",
                            FABRICSIM, "run", config, "--out", two, *sets],
                           capture_output=True, text=True, env=env, timeout=120)
        if "built without MPI support" in p.stderr:
            self.skipTest("fabricsim was built without MPI")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(two, "perf.json")) as f:
            self.assertEqual(json.load(f)["mpi_ranks"], 2)
        files = sorted(f for f in os.listdir(one) if f != "perf.json" and not f.startswith("."))
        self.assertEqual(files, sorted(f for f in os.listdir(two)
                                       if f != "perf.json" and not f.startswith(".")))
        for f in files:
            with open(os.path.join(one, f)) as a, open(os.path.join(two, f)) as b:
                self.assertTrue(a.read() == b.read(), f"{f} differs under srun -n 2")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: slurm_test.py BUILD/fabricsim [unittest options]")
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
