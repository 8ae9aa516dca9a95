#!/usr/bin/env python3
"""scripts/make_training.py against the closed forms, without the simulator: the workload it writes
is read back by an interpreter of the text format written here (each rank's program under `on`,
the bytes each algorithm makes a rank send: ring all-reduce 2 (n-1)/n S, ring reduce-scatter and
all-gather (n-1)/n S, direct all-to-all (n-1)/n S, a send its bytes), and its totals per rank and
parallelism must equal the formulas of the papers, written out here independently of the
generator: Narayanan et al. 2021 (SC'21) for the FLOPs (72 B s l h^2 (1 + s/6h + V/12lh), with
recomputation their equation (3), 96 B s l h^2 (1 + s/6h + V/16lh)) and Megatron's TP and PP
volumes, Rajbhandari et al. 2020 (ZeRO) for DP: 2 Psi (D-1)/D for DDP and ZeRO 1/2, 3 Psi (D-1)/D
for ZeRO 3 at one micro-batch. Also: the 1F1B order (stage j's warm-up forwards), bad arguments
exit 2 naming the option.

  training_volumes_test.py [unittest options]"""
import json
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(ROOT, "scripts", "make_training.py")


def gen(*args):
    p = subprocess.run([sys.executable, GEN, *map(str, args)], capture_output=True, text=True)
    if p.returncode:
        raise AssertionError(f"make_training.py {' '.join(map(str, args))}: {p.stderr}")
    return p.stdout


def interpret(text):
    """Per rank: bytes sent per communicator tag, compute seconds, and its program's statements."""
    comms, ranks = {}, 0
    sent, compute, order = None, None, None
    for line in text.splitlines():
        f = line.split("#")[0].split()
        if not f:
            continue
        if f[0] == "ranks":
            ranks = int(f[1])
            sent = [{} for _ in range(ranks)]
            compute = [0.0] * ranks
            order = [[] for _ in range(ranks)]
            comms["world"] = (ranks, 1, "")
            continue
        if f[0] == "communicator":
            comms[f[1]] = (int(f[3]), int(f[5]), f[7] if len(f) > 7 else "")
            continue
        if f[0] == "iterations":
            continue
        on = None
        if f[0] == "on":
            on = (f[1], int(f[2]))
            f = f[3:]

        def place(r, c):
            size, stride, _ = comms[c]
            return (r % (size * stride)) // stride

        who = [r for r in range(ranks) if on is None or place(r, on[0]) == on[1]]
        if f[0] == "compute":
            t = float(re.match(r"[0-9.]+", f[1]).group()) * 1e-9
            assert f[1].endswith("ns"), f[1]
            for r in who:
                compute[r] += t
                order[r].append("compute")
            continue
        if f[0] == "wait":
            continue
        c = f[2] if f[0] == "collective" else f[1]
        nbytes = int((f[3] if f[0] == "collective" else f[2])[:-1])
        n, stride, tag = comms[c]
        if f[0] == "collective":
            share = {"allreduce_ring": 2 * (n - 1) / n, "reducescatter_ring": (n - 1) / n,
                     "allgather_ring": (n - 1) / n, "alltoall_direct": (n - 1) / n}[f[1]]
            for r in who:
                sent[r][tag] = sent[r].get(tag, 0) + share * nbytes
        elif f[0] in ("send", "recv"):
            for r in who:
                j = place(r, c) + (1 if f[3] == "next" else -1)
                if 0 <= j < n:
                    order[r].append(f"{f[0]} {f[3]}")
                    if f[0] == "send":
                        sent[r][tag] = sent[r].get(tag, 0) + nbytes
        else:
            raise AssertionError(f"unexpected statement {line}")
    return sent, compute, order


def dense_params(l, h, V, stages, stage):
    p = l // stages * (12 * h * h + 13 * h)
    return p + V * h * ((stage == 0) + (stage == stages - 1))


class Volumes(unittest.TestCase):
    def check(self, sent, want, rank):
        for tag, v in want.items():
            self.assertAlmostEqual(sent[rank].get(tag, 0) / max(v, 1), v / max(v, 1), delta=1e-4,
                                   msg=f"rank {rank} {tag}: {sent[rank].get(tag, 0)} != {v}")

    def test_tp_pp_dp_megatron_and_ddp(self):
        l, h, a, s, V, b, m, T, P, D = 8, 1024, 16, 2048, 32000, 2, 6, 4, 2, 4
        args = ["--layers", l, "--hidden", h, "--heads", a, "--seq", s, "--vocab", V,
                "--micro-batch", b, "--micro-batches", m, "--tp", T, "--pp", P, "--dp", D,
                "--peak-tflops", 500, "--efficiency", 0.5]
        sent, compute, order = interpret(gen(*args))
        A = b * s * h * 2
        for stage in range(P):
            r = stage * T * D + 1  # a rank of this stage
            ends = (stage > 0) + (stage < P - 1)
            want = {"tp": 4 * (l // P) * m * 2 * (T - 1) / T * A,  # 2 AR fwd + 2 bwd a layer
                    "pp": ends * m * A,
                    "dp": 2 * (D - 1) / D * dense_params(l, h, V, P, stage) / T * 2}
            self.check(sent, want, r)
        # FLOPs: every rank's compute time x peak x efficiency, summed, is Narayanan's formula.
        B = b * m * D
        flops = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))
        got = sum(compute) * 500e12 * 0.5
        self.assertAlmostEqual(got / flops, 1.0, delta=1e-4)
        vol = json.loads(gen(*args, "--volumes"))
        self.assertAlmostEqual(vol["step_flops"] / flops, 1.0, delta=1e-12)
        self.assertAlmostEqual(vol["sent_bytes_by_stage"][0]["dp"] / sent[0]["dp"], 1, delta=1e-6)
        # 1F1B: stage j runs P - j - 1 warm-up forwards, then a forward and a backward at a time:
        # P - j forwards (sends to the next stage) before its first backward (a receive from
        # the next); the last stage alternates from the start.
        first = order[0]
        self.assertEqual([x for x in first if x != "compute"][:3],
                         ["send next", "send next", "recv next"])
        last = order[(P - 1) * T * D]
        self.assertEqual([x for x in last if x != "compute"][:3],
                         ["recv prev", "send prev", "recv prev"])

    def test_recompute_is_equation_3(self):
        l, h, s, V, b, m, D = 4, 512, 1024, 50000, 1, 2, 2
        args = ["--layers", l, "--hidden", h, "--heads", 8, "--seq", s, "--vocab", V,
                "--micro-batch", b, "--micro-batches", m, "--dp", D, "--tp", 2, "--recompute",
                "--peak-tflops", 100, "--efficiency", 1]
        sent, compute, _ = interpret(gen(*args))
        B = b * m * D
        flops = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
        self.assertAlmostEqual(sum(compute) * 100e12 / flops, 1.0, delta=1e-4)
        # Recomputation repeats the forward's two TP all-reduces: 6 a layer.
        self.check(sent, {"tp": 6 * l * m * 2 * (2 - 1) / 2 * b * s * h * 2}, 0)

    def test_zero_stages(self):
        l, h, V, D = 4, 512, 1000, 8
        base = ["--layers", l, "--hidden", h, "--heads", 8, "--seq", 256, "--vocab", V,
                "--dp", D]
        psi = dense_params(l, h, V, 1, 0) * 2  # bf16 bytes
        for zero, m, factor in ((0, 1, 2), (1, 3, 2), (2, 1, 2), (3, 1, 3), (3, 2, 5)):
            sent, _, _ = interpret(gen(*base, "--zero", zero, "--micro-batches", m))
            with self.subTest(zero=zero, m=m):
                self.check(sent, {"dp": factor * (D - 1) / D * psi}, 5)
        # Recomputation gathers the parameters again for the second forward: 3m + 1.
        sent, _, _ = interpret(gen(*base, "--zero", 3, "--micro-batches", 2, "--recompute"))
        self.check(sent, {"dp": 7 * (D - 1) / D * psi}, 5)
        vol = json.loads(gen(*base, "--zero", 3, "--micro-batches", 2, "--recompute", "--volumes"))
        self.assertAlmostEqual(vol["sent_bytes_by_stage"][0]["dp"] / sent[5]["dp"], 1, delta=1e-6)
        # ZeRO 1 reduce-scatters the gradients and all-gathers the parameters, no all-reduce.
        text = gen(*base, "--zero", 1)
        self.assertNotIn("allreduce_ring dp", text)
        self.assertIn("reducescatter_ring dp", text)
        self.assertIn("allgather_ring dp", text)

    def test_sequence_parallel_same_bytes(self):
        args = ["--layers", 2, "--hidden", 512, "--heads", 8, "--seq", 512, "--tp", 4]
        a, _, _ = interpret(gen(*args))
        b, _, _ = interpret(gen(*args, "--sequence-parallel"))
        self.assertAlmostEqual(a[0]["tp"], b[0]["tp"], delta=1)
        self.assertIn("reducescatter_ring tp", gen(*args, "--sequence-parallel"))

    def test_moe_all_to_all(self):
        l, h, s, b, m, D, E, e, k = 2, 512, 512, 1, 2, 4, 8, 4, 2
        args = ["--layers", l, "--hidden", h, "--heads", 8, "--seq", s, "--micro-batches", m,
                "--dp", D, "--experts", E, "--ep", e, "--top-k", k]
        sent, _, _ = interpret(gen(*args))
        # dispatch + combine forward and again backward, b s k h bf16 each, (e-1)/e leaving.
        self.check(sent, {"ep": 4 * l * m * (e - 1) / e * b * s * k * h * 2}, 3)

    def test_shipped_workloads_are_the_generators_output(self):
        # traces/workloads/train_*.txt (configs/examples/train_*.yaml): their first line is the
        # command that wrote them; it must write them again, byte for byte.
        folder = os.path.join(ROOT, "traces", "workloads")
        names = sorted(n for n in os.listdir(folder) if n.startswith("train_"))
        self.assertEqual(names, ["train_70b_512.txt", "train_7b_64.txt"])
        for n in names:
            with open(os.path.join(folder, n)) as f:
                text = f.read()
            cmd = text.splitlines()[0].split()
            self.assertEqual(cmd[:2], ["#", "scripts/make_training.py"])
            self.assertEqual(gen(*cmd[2:]), text, n)

    def test_bad_arguments_exit_2_naming_the_option(self):
        for args, needle in ((["--tp", "0"], "--tp"), (["--pp", "3"], "--pp 3"),
                             (["--efficiency", "1.5"], "--efficiency"),
                             (["--zero", "3", "--pp", "2", "--layers", "4"], "--zero 3"),
                             (["--ep", "2"], "--ep 2"), (["--heads", "3"], "--heads 3"),
                             (["--peak-tflops", "fast"], "--peak-tflops")):
            p = subprocess.run([sys.executable, GEN, *args], capture_output=True, text=True)
            with self.subTest(args=args):
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(needle, p.stderr)
                self.assertEqual(p.stdout, "")


if __name__ == "__main__":
    unittest.main()
