#!/usr/bin/env python3
"""The ranks' collectives over the NICs end to end (issue #18): traffic.pattern workload runs
every registered collective on the shipped 800G NIC config to the end (collectives.csv, summary.json
workload, every message in fct.csv intact), iterations follow each other, a straggler's compute
delays the call after it, runs are deterministic, and bad workload settings exit 2 naming the
key. Chakra traces: the shipped examples (traces/chakra/) are scripts/make_chakra_examples.py's
output and run to the end, and a malformed trace exits 2 naming its file and node."""
import csv
import json
import os
import pty
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NIC800 = os.path.join(ROOT, "configs", "nic_800g.yaml")
CHAKRA = os.path.join(ROOT, "traces", "chakra")
BASE = ["traffic.pattern=workload", "switch.ports=16", "sim.duration=1us", "sim.warmup=0ns",
        "sim.drain_limit=20ms", "sim.traffic_thread=false", "workload.tc=3"]


def run(out, *sets):
    cmd = [FABRICSIM, "run", NIC800, "--out", out]
    for s in BASE + list(sets):
        cmd += ["--set", s]
    return subprocess.run(cmd, capture_output=True, text=True)


class Workload(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def results(self, out):
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        with open(os.path.join(out, "collectives.csv")) as f:
            c = list(csv.DictReader(f))
        with open(os.path.join(out, "fct.csv")) as f:
            m = list(csv.DictReader(f))
        return s, c, m

    def test_every_collective_runs_to_the_end(self):
        for algo in ("allreduce_ring", "allreduce_halving_doubling", "allreduce_tree",
                     "reducescatter_ring",
                     "allgather_ring", "broadcast_ring", "alltoall_direct", "alltoall_pairwise"):
            with self.subTest(algo=algo):
                out = os.path.join(self.tmp, algo)
                p = run(out, f"workload.collective={algo}", "workload.ranks=8",
                        "workload.bytes=2MiB", "workload.iterations=2", "workload.chunk=256KiB")
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                s, c, m = self.results(out)
                self.assertTrue(s["invariants"]["ok"])
                w = s["workload"]
                self.assertEqual(w["nodes_unfinished"], 0)
                self.assertEqual(w["collectives_finished"], 2)
                self.assertEqual([x["name"] for x in c], [f"{algo}#0", f"{algo}#1"])
                # The second call starts when the first rank finished the first.
                self.assertGreaterEqual(float(c[1]["start_ns"]), float(c[0]["start_ns"]))
                self.assertLessEqual(float(c[1]["start_ns"]), float(c[0]["end_ns"]))
                for x in c:
                    t = float(x["time_ns"])
                    self.assertAlmostEqual(float(x["algbw_GBps"]), 2 * 2**20 / t, places=2)
                    self.assertGreater(float(x["busbw_GBps"]), 0)
                    # No faster than the line (800G = 100 GB/s) allows.
                    self.assertLess(float(x["busbw_GBps"]), 100.0)
                # Per step of each call: the steps' messages add up to the call's, and each
                # step ends no later than the call.
                with open(os.path.join(out, "steps.csv")) as f:
                    steps = list(csv.DictReader(f))
                for x in c:
                    mine = [st for st in steps if st["name"] == x["name"]]
                    self.assertTrue(mine, x["name"])
                    self.assertEqual(sum(int(st["messages"]) for st in mine),
                                     sum(1 for r in m if int(x["first_node"]) <= int(r["id"])
                                         < int(x["last_node"])))
                    self.assertLessEqual(max(float(st["end_ns"]) for st in mine),
                                         float(x["end_ns"]) + 1e-3)
                # Every message of the program completed and arrived intact.
                self.assertTrue(all(x["state"] == "completed" for x in m))
                self.assertEqual(s["transport"]["messages_posted"], len(m))

    def test_a_straggler_delays_the_call_after_its_compute(self):
        times = {}
        for factor in ("1.0", "2.0"):
            out = os.path.join(self.tmp, factor)
            p = run(out, "workload.ranks=4", "workload.bytes=1MiB", "workload.compute=20us",
                    "workload.straggler_rank=2", f"workload.straggler_slowdown={factor}")
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            s, c, _ = self.results(out)
            times[factor] = (float(c[0]["start_ns"]), float(c[0]["end_ns"]), c[0]["slowest_rank"])
        # The other ranks reach the all-reduce at 20 us either way (its start), the straggler at
        # 40 us: every step's chain passes through it, so the call ends 20 us later (to 1%: its
        # first four steps, ready by then, leave back to back).
        self.assertAlmostEqual(times["1.0"][0], 20000, places=3)
        self.assertAlmostEqual(times["2.0"][0], 20000, places=3)
        self.assertGreaterEqual(times["2.0"][1] - times["1.0"][1], 20000)
        self.assertLess(times["2.0"][1] - times["1.0"][1], 20200)

    def test_check_reads_the_inputs_run_reads(self):
        # check exited 0 where run exits 2: it now reads message files, text workloads and
        # Chakra traces as run does, with the same message.
        bad_msgs = os.path.join(self.tmp, "bad_messages.txt")
        with open(bad_msgs, "w") as f:
            f.write("0 1 2 4096 write\noops\n")
        bad_text = os.path.join(self.tmp, "bad_workload.txt")
        with open(bad_text, "w") as f:
            f.write("ranks 8\nbogus line\n")
        cases = {
            "messages": ["traffic.pattern=messages", f"traffic.messages.file={bad_msgs}"],
            "text": ["workload.format=text", f"workload.file={bad_text}"],
            "chakra": ["workload.format=chakra",
                       f"workload.file={self.tmp}/missing.{{rank}}.et"],
        }
        for name, sets in cases.items():
            with self.subTest(name=name):
                base = BASE if name != "messages" else [b for b in BASE
                                                        if not b.startswith("traffic.pattern")]
                args = [x for s in base + sets for x in ("--set", s)]
                c = subprocess.run([FABRICSIM, "check", NIC800] + args, capture_output=True,
                                   text=True)
                r = subprocess.run([FABRICSIM, "run", NIC800, "--out",
                                    os.path.join(self.tmp, name)] + args, capture_output=True,
                                   text=True)
                self.assertEqual(c.returncode, 2, c.stdout + c.stderr)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertEqual(c.stderr, r.stderr)
        # A good one passes check.
        good = [x for s in BASE + ["workload.format=text",
                                   f"workload.file={ROOT}/traces/workloads/dp_8.txt"]
                for x in ("--set", s)]
        self.assertEqual(subprocess.run([FABRICSIM, "check", NIC800] + good,
                                        capture_output=True).returncode, 0)

    def test_progress_on_a_terminal_counts_the_jobs_calls(self):
        # A workload's sim.duration is a formality (1 us): the progress line counts calls done,
        # messages completed and payload arrived instead of an ETA against it. stderr on a
        # pseudo-terminal.
        out = os.path.join(self.tmp, "progress")
        cmd = [FABRICSIM, "run", NIC800, "--out", out]
        for s in BASE + ["workload.collective=allreduce_ring", "workload.bytes=4MiB",
                         "workload.ranks=8", "workload.iterations=3"]:
            cmd += ["--set", s]
        master, slave = pty.openpty()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        self.assertEqual(p.wait(), 0)
        lines = [l for l in seen.decode().replace("\r", "\n").splitlines() if "[fabricsim]" in l]
        self.assertTrue(lines, seen)
        calls = [re.search(r"calls (\d+)/(\d+)", l) for l in lines]
        self.assertTrue(all(calls), lines)
        self.assertTrue(all(int(m.group(2)) == 3 for m in calls), lines)
        self.assertTrue(all("ETA" not in l for l in lines), lines)
        # 8 ranks x 7 ring steps x 2 (reduce-scatter, all-gather) x 3 iterations = 336 messages
        # of 4 MiB / 8; all complete, and the payload arrived is at least what was posted.
        m = re.search(r"calls 3/3  messages (\d+)/(\d+)  ([0-9.]+) of ([0-9.]+) GB arrived",
                      lines[-1])
        self.assertTrue(m, lines[-1])
        self.assertEqual((int(m.group(1)), int(m.group(2))), (336, 336), lines[-1])
        self.assertGreaterEqual(float(m.group(3)), float(m.group(4)), lines[-1])
        self.assertAlmostEqual(float(m.group(4)), 336 * 4 * 2**20 / 8 * 1e-9, places=3)

    def test_text_workloads_run_with_iteration_and_exposed_times(self):
        for job in ("dp_8", "tp_8", "moe_8"):
            with self.subTest(job=job):
                out = os.path.join(self.tmp, job)
                p = run(out, "workload.format=text",
                        f"workload.file={ROOT}/traces/workloads/{job}.txt")
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                s, c, m = self.results(out)
                w = s["workload"]
                self.assertEqual(w["nodes_unfinished"], 0)
                self.assertEqual(w["collectives_finished"], w["collectives"])
                self.assertEqual(len(w["iterations"]), 1)
                it = w["iterations"][0]
                # A step takes at least its compute, and every rank's program ran as long as its
                # compute plus what it waited for (exposed communication).
                self.assertGreaterEqual(it["time_ns"], w["compute_ns"]["max"])
                self.assertGreater(w["exposed_comm_ns"]["max"], 0)
                self.assertLessEqual(w["exposed_comm_ns"]["max"] + w["compute_ns"]["min"],
                                     it["time_ns"] + 1e-3)
        # The timeline: each rank's compute and collective parts, each NIC's messages per QP.
        t = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "timeline.py"), out],
                           capture_output=True, text=True)
        self.assertEqual(t.returncode, 0, t.stdout + t.stderr)
        with open(os.path.join(out, "timeline.json")) as f:
            ev = json.load(f)["traceEvents"]
        procs = {e["args"]["name"] for e in ev if e.get("name") == "process_name"}
        self.assertTrue({f"rank {r}" for r in range(8)} <= procs, procs)
        self.assertIn("nic 0", procs)
        with open(os.path.join(out, "ranks.csv")) as f:
            ranks = list(csv.DictReader(f))
        self.assertEqual(sum(e.get("cat") in ("compute", "collective") for e in ev), len(ranks))
        self.assertEqual(sum(e.get("cat") == "message" for e in ev), len(m))
        # A rank's compute spans never overlap (one GPU).
        for r in range(8):
            spans = sorted((float(x["start_ns"]), float(x["end_ns"])) for x in ranks
                           if x["rank"] == str(r) and x["kind"] == "compute")
            for (a0, a1), (b0, _) in zip(spans, spans[1:]):
                self.assertLessEqual(a1, b0 + 1e-3)
        # Per call, what the fabric went through: every message belongs to exactly one call.
        csv_out = os.path.join(self.tmp, f"{job}_phases.csv")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "phase_report.py"),
                            out, "--csv", csv_out], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("hottest links", r.stdout)
        with open(csv_out) as f:
            phases = list(csv.DictReader(f))
        self.assertEqual(len(phases), len(c))
        self.assertEqual(sum(int(x["messages"]) for x in phases), len(m))
        self.assertTrue(all(float(x["buffer_peak_bytes"]) > 0 for x in phases))
        # A bad line: exit 2 naming the file and line.
        bad = os.path.join(self.tmp, "bad.txt")
        with open(bad, "w") as f:
            f.write("ranks 4\ncollective allreduce_ring tp 1MiB\n")
        p = run(os.path.join(self.tmp, "x"), "workload.format=text", f"workload.file={bad}")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("bad.txt:2: communicator 'tp' is not declared", p.stderr)

    def test_size_sweep_in_one_run_and_its_plot(self):
        out = os.path.join(self.tmp, "sweep")
        p = run(out, "workload.ranks=4", "workload.bytes=1KiB", "workload.sweep_to=1MiB",
                "workload.sweep_factor=4", "workload.iterations=2")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        _, c, _ = self.results(out)
        sizes = [1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20]
        self.assertEqual([int(x["bytes"]) for x in c], [b for b in sizes for _ in range(2)])
        self.assertEqual(c[2]["name"], "allreduce_ring@4096#0")
        # Larger messages amortise the per-step latency: busbw rises with the size.
        bus = [float(x["busbw_GBps"]) for x in c[::2]]
        self.assertEqual(bus, sorted(bus))
        png = os.path.join(self.tmp, "busbw.png")
        plot = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "plot_busbw.py"),
                               os.path.join(out, "collectives.csv"), "--labels", "ring",
                               "--out", png], capture_output=True, text=True)
        self.assertEqual(plot.returncode, 0, plot.stdout + plot.stderr)
        self.assertIn("1MiB", plot.stdout)
        self.assertTrue(os.path.getsize(png) > 1000)
        # A sweep must go up from workload.bytes.
        p = run(os.path.join(self.tmp, "x"), "workload.bytes=1MiB", "workload.sweep_to=1KiB")
        self.assertEqual(p.returncode, 2)
        self.assertIn("workload.sweep_to", p.stderr)

    def test_rail_placement_keeps_the_ring_on_the_rails(self):
        # 4 servers x 4 GPUs on a rail-optimized fabric (2 spines): with linear placement every
        # ring step goes from one rail to the next through a spine; with rail placement all but
        # one step a rail stay on their rail's leaf.
        bus = {}
        for place in ("linear", "rail"):
            out = os.path.join(self.tmp, place)
            p = run(out, "topology.kind=rail_optimized", "topology.servers=4",
                    "topology.gpus_per_server=4", "topology.spines=2", "switch.ports=8",
                    f"workload.placement={place}", "workload.bytes=4MiB")
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            _, c, m = self.results(out)
            bus[place] = float(c[0]["busbw_GBps"])
            hosts = {(int(x["src"]), int(x["dst"])) for x in m}
            if place == "rail":  # rank 1 (host 4: server 1, GPU 0) follows rank 0 (host 0)
                self.assertIn((0, 4), hosts)
        self.assertGreater(bus["rail"], 1.5 * bus["linear"])  # 51.9 against 30.9 GB/s
        p = run(os.path.join(self.tmp, "x"), "workload.placement=rail")
        self.assertEqual(p.returncode, 2)
        self.assertIn("workload.placement", p.stderr)

    def test_deterministic(self):
        outs = []
        for i in range(2):
            out = os.path.join(self.tmp, f"d{i}")
            self.assertEqual(run(out, "workload.ranks=8", "workload.bytes=4MiB").returncode, 0)
            with open(os.path.join(out, "collectives.csv")) as f:
                outs.append(f.read())
        self.assertEqual(outs[0], outs[1])

    def test_bad_settings_name_the_key(self):
        cases = [
            (["workload.channels=2"], "workload.channels", "nic.qps_per_pair is 1"),
            (["workload.ranks=17"], "workload.ranks", "17 ranks on 16 hosts"),
            (["workload.collective=allreduce_halving_doubling", "workload.ranks=6"],
             "workload", "6 ranks: halving-doubling needs a power of two"),
            (["workload.collective=allreduce_bogus"], "workload.collective", "allreduce_bogus"),
            (["workload.collective=alltoallv_direct"], "workload.collective", "per-pair sizes"),
            (["workload.ranks=4", "workload.bytes=2B"], "workload", "cannot be cut"),
            (["workload.root=9", "workload.ranks=8"], "workload.root", "not one of the job's 8"),
            (["workload.bogus=1"], "workload.bogus", "unknown"),
            (["nic.enabled=false"], "traffic.pattern", "drives RDMA NICs"),
        ]
        for sets, where, what in cases:
            with self.subTest(sets=sets):
                p = run(os.path.join(self.tmp, "x"), *sets)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(where, p.stderr)
                self.assertIn(what, p.stderr)


    def test_shipped_chakra_examples_are_the_scripts_output(self):
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_chakra_examples.py"),
                            "--check"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_shipped_chakra_examples_run(self):
        cases = {"allreduce": ["allreduce_8MiB"], "alltoall": ["alltoall_4MiB"],
                 "dp_step": ["allreduce_grad_layer2", "allreduce_grad_layer1"]}
        algos = {"allreduce": ["allreduce_ring"], "alltoall": ["alltoall_direct"],
                 "dp_step": ["allreduce_ring", "allreduce_ring"]}
        for name, calls in cases.items():
            with self.subTest(name=name):
                out = os.path.join(self.tmp, name)
                # Ranks counted from the files (workload.ranks 0).
                p = run(out, "workload.format=chakra",
                        f"workload.file={CHAKRA}/{name}.{{rank}}.et")
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                s, c, m = self.results(out)
                self.assertTrue(s["invariants"]["ok"])
                self.assertEqual(s["workload"]["ranks"], 8)
                self.assertEqual(s["workload"]["nodes_unfinished"], 0)
                self.assertEqual([x["name"] for x in c], calls)
                self.assertEqual([x["algorithm"] for x in c], algos[name])
                self.assertTrue(all(x["state"] == "finished" for x in c))
                self.assertTrue(all(x["state"] == "completed" for x in m))
        # The step: layer 1's all-reduce after layer 2's (one stream), both after 350 us of
        # forward and backward of layer 2.
        _, c, _ = self.results(os.path.join(self.tmp, "dp_step"))
        self.assertAlmostEqual(float(c[0]["start_ns"]), 350000, places=3)
        self.assertGreaterEqual(float(c[1]["start_ns"]), float(c[0]["start_ns"]) + 100000)

    def test_a_malformed_chakra_trace_exits_2_naming_file_and_node(self):
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        sys.dont_write_bytecode = True  # no __pycache__ in scripts/
        import make_chakra_examples as ex
        with tempfile.TemporaryDirectory() as schema:
            pb = ex.load_schema(schema)
            bad = ex.node(pb, 4, "bwd", pb.COMP_NODE, deps=[4], dur=10)  # depends on itself
            ex.write(os.path.join(self.tmp, "bad.0.et"), pb, [bad])
            ex.write(os.path.join(self.tmp, "bad.1.et"), pb, [])
        p = run(os.path.join(self.tmp, "x"), "workload.format=chakra",
                f"workload.file={self.tmp}/bad.{{rank}}.et")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(os.path.join(self.tmp, "bad.0.et") + ": node 4 (bwd): on a dependency cycle",
                      p.stderr)
        p = run(os.path.join(self.tmp, "x"), "workload.format=chakra",
                f"workload.file={self.tmp}/none.{{rank}}.et")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("no trace for rank 0", p.stderr)

    def test_a_cycle_across_ranks_exits_2_in_check_and_run(self):
        """Issue #38: each rank's send waits on its own receive. Every check passed, and the run
        deadlocked, advising a longer sim.drain_limit; check and run now refuse it alike."""
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        sys.dont_write_bytecode = True  # no __pycache__ in scripts/
        import make_chakra_examples as ex
        with tempfile.TemporaryDirectory() as schema:
            pb = ex.load_schema(schema)
            for r in range(2):
                ex.write(os.path.join(self.tmp, f"cyc.{r}.et"), pb, [
                    ex.node(pb, 1, f"recv{r}", pb.COMM_RECV_NODE, comm_src=1 - r, comm_size=4096),
                    ex.node(pb, 2, f"send{r}", pb.COMM_SEND_NODE, deps=[1], comm_dst=1 - r,
                            comm_size=4096)])
        args = [x for s in BASE + ["workload.format=chakra",
                                   f"workload.file={self.tmp}/cyc.{{rank}}.et"]
                for x in ("--set", s)]
        c = subprocess.run([FABRICSIM, "check", NIC800] + args, capture_output=True, text=True,
                           timeout=60)
        r = subprocess.run([FABRICSIM, "run", NIC800, "--out", os.path.join(self.tmp, "o")] + args,
                           capture_output=True, text=True, timeout=60)
        for p in (c, r):
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertEqual(p.stderr, c.stderr)
        zero = os.path.join(self.tmp, "cyc.0.et")
        one = os.path.join(self.tmp, "cyc.1.et")
        self.assertIn(f"{zero}: node 1 (recv0): on a dependency cycle across ranks", c.stderr)
        self.assertIn(f"it waits for {one} node 2 (send1), which waits for {one} node 1 (recv1), "
                      f"which waits for {zero} node 2 (send0), which waits for it", c.stderr)

    def test_an_interrupt_while_the_graph_is_built_ends_the_run_at_once(self):
        """Issue #38: a SIGINT during graph building took effect 15 s later, once the graph was
        whole. 16.6M nodes (just within the limit: seconds to build) interrupted as they are
        built: exit 1 within a second, no results."""
        text = os.path.join(self.tmp, "big.txt")
        with open(text, "w") as f:
            f.write("ranks 8\niterations 74000\ncollective allreduce_ring world 8MiB\n")
        out = os.path.join(self.tmp, "o")
        cmd = [FABRICSIM, "run", NIC800, "--out", out]
        for s in BASE + ["workload.format=text", f"workload.file={text}"]:
            cmd += ["--set", s]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from cpu_wait import wait_cpu
        wait_cpu(proc, 0.5)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            stdout, stderr = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            self.fail("SIGINT not honoured within 10 s")
        self.assertLess(time.monotonic() - t0, 1.0)
        self.assertEqual(proc.returncode, 1, stdout + stderr)
        self.assertIn("interrupted (signal 2) while building the workload's graph", stderr)
        self.assertFalse(os.path.exists(out))

    def test_names_with_commas_quotes_and_newlines_stay_one_csv_field(self):
        """Issue #38: a text workload's communicator and a Chakra node's name (a Kineto kernel's:
        commas, quotes, a newline) are quoted per RFC 4180 in collectives.csv, steps.csv and
        ranks.csv, and ranks.csv names a Chakra compute span by its node's name."""
        def rows(out, name):
            with open(os.path.join(out, name), newline="", encoding="utf-8") as f:
                r = list(csv.DictReader(f))
            for x in r:  # a shifted row has fields beyond the header (None) or too few
                self.assertNotIn(None, x, (name, x))
                self.assertNotIn(None, x.values(), (name, x))
            return r

        text = os.path.join(self.tmp, "w.txt")
        with open(text, "w") as f:
            f.write('ranks 4\ncommunicator a,"b" size 2 stride 1\ncompute 1us\n'
                    'collective allreduce_ring a,"b" 64KiB name x.y\n')
        out = os.path.join(self.tmp, "text")
        p = run(out, "workload.format=text", f"workload.file={text}")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        calls = ['x.y#0@a,"b"0', 'x.y#0@a,"b"1']
        self.assertEqual([x["name"] for x in rows(out, "collectives.csv")], calls)
        self.assertEqual(sorted({x["name"] for x in rows(out, "steps.csv")}), calls)
        ranks = rows(out, "ranks.csv")
        self.assertEqual(sorted({x["name"] for x in ranks if x["kind"] == "collective"}), calls)
        # Compute nodes of a text workload have no name: their graph index.
        self.assertTrue(all(x["name"].startswith("node") for x in ranks if x["kind"] == "compute"))

        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        sys.dont_write_bytecode = True  # no __pycache__ in scripts/
        import make_chakra_examples as ex
        kernel = 'void at::native::kernel<float, 4>("x",\ny)'
        call = 'allreduce, "grads"\nlayer 1'
        with tempfile.TemporaryDirectory() as schema:
            pb = ex.load_schema(schema)
            for r in range(2):
                ex.write(os.path.join(self.tmp, f"k.{r}.et"), pb,
                         [ex.node(pb, 1, kernel, pb.COMP_NODE, dur=3),
                          ex.coll(pb, 2, call, pb.ALL_REDUCE, 1 << 16, deps=[1])])
        out = os.path.join(self.tmp, "chakra")
        p = run(out, "workload.format=chakra", f"workload.file={self.tmp}/k.{{rank}}.et")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual([x["name"] for x in rows(out, "collectives.csv")], [call])
        self.assertEqual({x["name"] for x in rows(out, "steps.csv")}, {call})
        # The console lists the call on one line, its newline escaped.
        self.assertIn('\n    allreduce, "grads"\\x0alayer 1  2 ranks  65536 B  ', p.stdout)
        self.assertFalse(any(l.startswith("layer 1") for l in p.stdout.splitlines()), p.stdout)
        ranks = rows(out, "ranks.csv")
        self.assertEqual(sorted((x["rank"], x["kind"], x["name"]) for x in ranks),
                         [("0", "collective", call), ("0", "compute", kernel),
                          ("1", "collective", call), ("1", "compute", kernel)])
        # The scripts that read these files still do.
        for script, args in (("timeline.py", [out]),
                             ("phase_report.py", [out, "--csv", os.path.join(self.tmp, "ph.csv")])):
            r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script), *args],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, script + ": " + r.stdout + r.stderr)
        with open(os.path.join(out, "timeline.json")) as f:
            names = {e.get("name") for e in json.load(f)["traceEvents"]}
        self.assertTrue({kernel, call} <= names, names)


if __name__ == "__main__":
    FABRICSIM = sys.argv.pop(1)
    unittest.main()
