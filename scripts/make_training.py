#!/usr/bin/env python3
"""Writes one training step of a transformer as a text workload (docs/trace-format.md, "Text
workloads"; docs/training.md): the ranks' programs for tensor (TP), pipeline (PP, 1F1B), data (DP,
with ZeRO stages) and expert (EP) parallelism, to run with `traffic.pattern: workload`,
`workload.format: text`.

  scripts/make_training.py --layers 32 --hidden 4096 --heads 32 --seq 4096 --vocab 32000 \\
      --micro-batch 1 --micro-batches 8 --tp 8 --dp 8 --peak-tflops 989 --efficiency 0.4 \\
      --out step.txt
  scripts/make_training.py ... --volumes      # the closed forms (JSON), no workload

Ranks: TP fastest (consecutive ranks, a server's GPUs), then DP, then PP: rank = t + T (d + D p)
(Megatron-LM's default order). Communicators `tp`, `dp`, `pp`, `ep` (and `edp`, the experts'
data-parallel group) are tagged with their parallelism, so summary.json splits the exposed
communication and the critical path by it.

What a rank runs and sends, per layer and micro-batch of b sequences of s tokens (A = b s h x
--dtype-bytes activation bytes):

- Compute (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU
  Clusters", SC'21, section 5.1): a layer's forward is 24 b s h^2 (1 + s / (6h)) FLOPs (8 b s h^2
  attention projections + 4 b s^2 h attention + 16 b s h^2 MLP with a 4h FFN; a MoE layer's MLP
  16 b s h^2 k for top-k routing), the logit layer 2 b s h V; backward is twice forward;
  --recompute adds a forward of the layers (full activation recomputation; the logit layer is
  not recomputed). Per step with B = b m DP sequences:
  72 B s l h^2 (1 + s/(6h) + V/(12 l h)) FLOPs, or with recomputation the paper's equation (3),
  96 B s l h^2 (1 + s/(6h) + V/(16 l h)). Each rank does 1/TP of its stage's FLOPs, in time
  FLOPs / (peak x efficiency).
- TP (Megatron-LM, Shoeybi et al. 2019; Narayanan et al. 2021 section 3.2): two all-reduces of A
  per layer forward (after attention, after the MLP) and two backward (ring: 2 (T-1)/T A sent
  each); --recompute repeats the forward two; --sequence-parallel makes each a reduce-scatter
  plus an all-gather of A (Korthikanti et al. 2022: the same bytes).
- PP: each micro-batch's activations A to the next stage forward and their gradients A back
  (every TP rank sends its full copy: no scatter/gather optimization), 1F1B schedule (Narayanan
  et al. 2021 section 2.2.1: stage j runs min(P - j - 1, m) warm-up forwards, then one forward one
  backward, then the rest of the backwards); receives block, sends are async.
- DP (Rajbhandari et al. 2020, "ZeRO", section 7): a stage's gradients Psi x --grad-bytes per
  rank (Psi = its parameters / TP; a dense layer 12 h^2 + 13 h, the embedding V h on the first
  stage and the last) cut per layer. ZeRO 0 (DDP): an all-reduce per layer as soon as its last
  backward is done, overlapping the earlier layers' backward: 2 (D-1)/D Psi sent. ZeRO 1 and 2: a
  reduce-scatter per layer the same way, then after the optimizer an all-gather of the updated
  parameters: 2 (D-1)/D Psi. ZeRO 3 (FSDP; --pp 1 only): an all-gather of each layer's parameters
  before its forward and before its backward per micro-batch, and a reduce-scatter of its
  gradients after the last: (2m + 1) (D-1)/D Psi (3 Psi for m = 1, the paper's figure; with
  --recompute the forward's gather again: (3m + 1)).
- EP (--experts E > 1, --ep e dividing --dp): every layer's MLP is E experts, E/e on each rank of
  an `ep` group (consecutive DP ranks); per layer an all-to-all dispatch and combine of
  b s k h x --dtype-bytes forward and again backward ((e-1)/e of it leaves the rank). The
  experts' gradients are all-reduced over `edp` (D/e ranks), the rest over `dp`.

Exit status: 0 ok, 2 bad arguments (the message names the option), 1 if --out cannot be written.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_workload as mw  # noqa: E402  (option types)


def positive_float(text):
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number > 0")
    return v


def fraction(text):
    v = positive_float(text)
    if v > 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not in (0, 1]")
    return v


class Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    pass


def build_parser():
    p = argparse.ArgumentParser(prog="make_training.py", description=__doc__,
                                formatter_class=Formatter)
    n = mw.at_least
    p.add_argument("--layers", type=n(1), default=32, help="transformer layers l")
    p.add_argument("--hidden", type=n(1), default=4096, help="hidden size h")
    p.add_argument("--heads", type=n(1), default=32, help="attention heads (divide --hidden, "
                   "divisible by --tp)")
    p.add_argument("--seq", type=n(1), default=4096, help="sequence length s")
    p.add_argument("--vocab", type=n(1), default=32000, help="vocabulary V")
    p.add_argument("--micro-batch", type=n(1), default=1, help="sequences per micro-batch b")
    p.add_argument("--micro-batches", type=n(1), default=1,
                   help="micro-batches per step m (per DP rank: the global batch is b m DP)")
    p.add_argument("--tp", type=n(1), default=1, help="tensor-parallel size")
    p.add_argument("--pp", type=n(1), default=1, help="pipeline stages (divide --layers)")
    p.add_argument("--dp", type=n(1), default=1, help="data-parallel size")
    p.add_argument("--experts", type=n(1), default=1, help="experts per MoE layer (1: dense)")
    p.add_argument("--ep", type=n(1), default=1, help="expert-parallel size (divides --dp)")
    p.add_argument("--top-k", type=n(1), default=1, help="experts per token")
    p.add_argument("--zero", type=int, choices=(0, 1, 2, 3), default=0,
                   help="ZeRO stage (0: DDP all-reduce; 3: FSDP)")
    p.add_argument("--sequence-parallel", action="store_true",
                   help="TP reduce-scatter + all-gather instead of all-reduce")
    p.add_argument("--recompute", action="store_true", help="full activation recomputation")
    p.add_argument("--dtype-bytes", type=n(1), default=2, help="bytes per activation (bf16: 2)")
    p.add_argument("--grad-bytes", type=n(1), default=2,
                   help="bytes per gradient and parameter communicated (bf16: 2; fp32: 4)")
    p.add_argument("--peak-tflops", type=positive_float, default=989.0,
                   help="GPU peak dense TFLOP/s (989: H100 SXM bf16, NVIDIA's datasheet)")
    p.add_argument("--efficiency", type=fraction, default=0.4,
                   help="fraction of peak the kernels reach (assumed)")
    p.add_argument("--channels", type=n(1), default=1, help="QPs per collective")
    p.add_argument("--out", metavar="FILE", default="-", help="where to write ('-': stdout)")
    p.add_argument("--volumes", action="store_true",
                   help="print the closed forms (FLOPs, bytes each rank sends per parallelism) "
                        "as JSON instead of the workload")
    return p


def check(p, a):
    if a.layers % a.pp:
        p.error(f"--pp {a.pp} does not divide --layers {a.layers}")
    if a.hidden % a.heads or a.heads % a.tp:
        p.error(f"--heads {a.heads} must divide --hidden {a.hidden} and be divisible by --tp "
                f"{a.tp}")
    if a.dp % a.ep:
        p.error(f"--ep {a.ep} does not divide --dp {a.dp}")
    if a.experts > 1 and (a.ep < 2 or a.experts % a.ep):
        p.error(f"--ep {a.ep}: with --experts {a.experts} it must be >= 2 and divide them")
    if a.experts == 1 and a.ep > 1:
        p.error(f"--ep {a.ep} needs --experts > 1")
    if a.top_k > a.experts:
        p.error(f"--top-k {a.top_k} exceeds --experts {a.experts}")
    if a.zero == 3 and a.pp > 1:
        p.error("--zero 3 (FSDP) is written for --pp 1 only")
    if a.tp * a.pp * a.dp < 2:
        p.error("--tp x --pp x --dp must be at least 2 ranks")


class Model:
    """The closed forms: FLOPs, parameters and per-rank bytes (the module docstring's)."""

    def __init__(self, a):
        self.a = a
        self.moe = a.experts > 1
        h, s, b = a.hidden, a.seq, a.micro_batch
        self.act = b * s * h * a.dtype_bytes  # A
        k = a.top_k if self.moe else 1
        # Per layer, one micro-batch, forward, whole layer (all TP ranks).
        self.layer_fwd = 8 * b * s * h * h + 4 * b * s * s * h + 16 * b * s * h * h * k
        self.logit_fwd = 2 * b * s * h * a.vocab
        self.lps = a.layers // a.pp  # layers per stage
        self.passes_fwd = 2 if a.recompute else 1  # forward passes (recomputation: another)
        self.tokens = b * s * k * h * a.dtype_bytes  # EP all-to-all bytes per rank and call
        # Parameters per layer: attention 4h^2 + 4h (biases), MLP 8h^2 + 5h, 2 layer norms 4h:
        # 12 h^2 + 13 h (Narayanan et al. 2021, section 5.1). MoE: E/ep experts of 8h^2 + 5h.
        self.attn_params = 4 * h * h + 8 * h
        self.mlp_params = 8 * h * h + 5 * h
        self.embed_params = a.vocab * h

    def compute_time_s(self, flops):
        return flops / (self.a.peak_tflops * 1e12 * self.a.efficiency)

    def step_flops(self):
        """All ranks, one step: B = b m DP sequences through every layer and the logits."""
        a = self.a
        # The logit layer is not recomputed (Megatron-LM; equation (3)'s V / (16 l h) term).
        per_mb = (2 + self.passes_fwd) * a.layers * self.layer_fwd + 3 * self.logit_fwd
        return per_mb * a.micro_batches * a.dp

    def dense_params(self, stage):
        """Parameters a rank of this stage holds and data-parallel reduces (one TP shard)."""
        a = self.a
        per_layer = self.attn_params + (0 if self.moe else self.mlp_params)
        p = self.lps * per_layer
        if stage == 0:
            p += self.embed_params
        if stage == a.pp - 1:
            p += self.embed_params  # the output layer (untied)
        return p / a.tp

    def expert_params(self):
        a = self.a
        return self.lps * (a.experts // a.ep) * self.mlp_params / a.tp if self.moe else 0.0

    def sent(self, stage):
        """Bytes one rank of `stage` sends per step, by parallelism (ring algorithms)."""
        a = self.a
        t, d, m = a.tp, a.dp, a.micro_batches
        out = {"tp": 0.0, "pp": 0.0, "dp": 0.0, "ep": 0.0}
        if t > 1:
            calls = (2 * self.passes_fwd + 2) * self.lps * m
            out["tp"] = calls * 2 * (t - 1) / t * self.act  # all-reduce, or RS + AG: the same
        if a.pp > 1:
            ends = (stage > 0) + (stage < a.pp - 1)
            out["pp"] = float(ends * m * self.act)
        if d > 1:
            psi = self.dense_params(stage) * a.grad_bytes
            # ZeRO 3: an all-gather before every forward pass (recomputation: two) and backward.
            factor = (self.passes_fwd + 1) * m + 1 if a.zero == 3 else 2
            out["dp"] = factor * (d - 1) / d * psi
            if self.moe and d // a.ep > 1:
                e = d // a.ep
                out["dp"] += 2 * (e - 1) / e * self.expert_params() * a.grad_bytes
        if self.moe:
            calls = (2 * self.passes_fwd + 2) * self.lps * m  # dispatch + combine each pass
            out["ep"] = calls * (a.ep - 1) / a.ep * self.tokens
        return out


def ns(seconds):
    return f"{max(1, round(seconds * 1e9))}ns"


class Writer:
    """One rank-group program per pipeline stage (`on pp J` when PP > 1)."""

    def __init__(self, a, model):
        self.a, self.m = a, model
        self.lines = []
        self.stage = 0
        self.lps0 = 0  # the stage's first layer

    def emit(self, text):
        pre = f"on pp {self.stage} " if self.a.pp > 1 else ""
        self.lines.append(pre + text)

    def coll(self, alg, comm, nbytes, name, asyn=False):
        ch = f" channels {self.a.channels}" if self.a.channels > 1 else ""
        self.emit(f"collective {alg} {comm} {int(nbytes)}B{' async' if asyn else ''}"
                  f" name {name}{ch}")

    def compute(self, flops, what):
        self.emit(f"compute {ns(self.m.compute_time_s(flops / self.a.tp))}  # {what}")

    def tp_reduce(self, name):
        a = self.a
        if a.tp == 1:
            return
        if a.sequence_parallel:
            self.coll("reducescatter_ring", "tp", self.m.act, name + "_rs")
            self.coll("allgather_ring", "tp", self.m.act, name + "_ag")
        else:
            self.coll("allreduce_ring", "tp", self.m.act, name)

    def layer(self, i, mb, backward):
        a, m = self.a, self.m
        d = "b" if backward else "f"
        tag = f"l{i}m{mb}{d}"
        scale = 2 if backward else 1
        attn = scale * (8 * a.micro_batch * a.seq * a.hidden ** 2
                        + 4 * a.micro_batch * a.seq ** 2 * a.hidden)
        mlp = scale * (m.layer_fwd - attn // scale)
        if a.zero == 3 and a.dp > 1:
            self.coll("allgather_ring", "dp", m.dense_params(0) / m.lps * a.grad_bytes,
                      f"ag_{tag}")
        parts = [("attn", attn), ("mlp", mlp)]
        if backward:
            parts.reverse()
        for part, flops in parts:
            if part == "mlp" and m.moe:
                self.coll("alltoall_direct", "ep", m.tokens, f"disp_{tag}")
                self.compute(flops, f"layer {i} experts {'backward' if backward else 'forward'}")
                self.coll("alltoall_direct", "ep", m.tokens, f"comb_{tag}")
            else:
                self.compute(flops, f"layer {i} {part} {'backward' if backward else 'forward'}")
            self.tp_reduce(f"{part}_{tag}")

    def forward(self, mb):
        a, m = self.a, self.m
        first, last = self.stage == 0, self.stage == a.pp - 1
        if not first:
            self.emit(f"recv pp {m.act}B prev  # micro-batch {mb} activations")
        for i in range(self.lps0, self.lps0 + m.lps):
            self.layer(i, mb, False)
        if last:
            self.compute(m.logit_fwd, "logits forward")
        else:
            self.emit(f"send pp {m.act}B next async  # micro-batch {mb} activations")

    def backward(self, mb, last_mb):
        a, m = self.a, self.m
        first, last = self.stage == 0, self.stage == a.pp - 1
        if last:
            self.compute(2 * m.logit_fwd, "logits backward")
        else:
            self.emit(f"recv pp {m.act}B next  # micro-batch {mb} gradients")
        if a.recompute:
            for i in range(self.lps0, self.lps0 + m.lps):
                self.layer(i, mb, False)
        for i in reversed(range(self.lps0, self.lps0 + m.lps)):
            self.layer(i, mb, True)
            if last_mb:
                self.grads(i)
        if not first:
            self.emit(f"send pp {m.act}B prev async  # micro-batch {mb} gradients")

    def grads(self, i):
        """Layer i's gradients, after its last backward: overlapping the layers before it."""
        a, m = self.a, self.m
        if a.dp == 1:
            return
        psi = (m.attn_params + (0 if m.moe else m.mlp_params)) / a.tp
        if i == self.lps0:
            psi += (m.dense_params(self.stage) * a.tp - m.lps * (m.attn_params + (
                0 if m.moe else m.mlp_params))) / a.tp  # the embedding(s) with the first layer
        alg = "allreduce_ring" if a.zero == 0 else "reducescatter_ring"
        self.coll(alg, "dp", psi * a.grad_bytes, f"grads_l{i}", asyn=True)
        if m.moe and a.dp // a.ep > 1:
            self.coll("allreduce_ring", "edp", m.expert_params() / m.lps * a.grad_bytes,
                      f"egrads_l{i}", asyn=True)

    def program(self, stage):
        a, m = self.a, self.m
        self.stage = stage
        self.lps0 = stage * m.lps
        warm = min(a.pp - stage - 1, a.micro_batches)
        fwd = bwd = 0
        for _ in range(warm):
            self.forward(fwd)
            fwd += 1
        while bwd < a.micro_batches:
            if fwd < a.micro_batches:
                self.forward(fwd)
                fwd += 1
            self.backward(bwd, bwd == a.micro_batches - 1)
            bwd += 1
        self.emit("wait  # every gradient reduced, every message sent")
        if a.zero in (1, 2) and a.dp > 1:
            for i in range(self.lps0, self.lps0 + m.lps):
                psi = (m.attn_params + (0 if m.moe else m.mlp_params)) / a.tp
                if i == self.lps0:
                    psi = m.dense_params(stage) - (m.lps - 1) * psi
                self.coll("allgather_ring", "dp", psi * a.grad_bytes, f"params_l{i}", asyn=True)
            self.emit("wait  # the updated parameters gathered")


def workload(a, argv):
    m = Model(a)
    w = Writer(a, m)
    t, d, p = a.tp, a.dp, a.pp
    lines = [f"# scripts/make_training.py {' '.join(argv)}", f"ranks {t * d * p}"]
    if t > 1:
        lines.append(f"communicator tp size {t} stride 1 tag tp")
    if d > 1:
        lines.append(f"communicator dp size {d} stride {t} tag dp")
    if p > 1:
        lines.append(f"communicator pp size {p} stride {t * d} tag pp")
    if m.moe:
        lines.append(f"communicator ep size {a.ep} stride {t} tag ep")
        if d // a.ep > 1:
            lines.append(f"communicator edp size {d // a.ep} stride {t * a.ep} tag dp")
    lines.append("iterations 1")
    for stage in range(p):
        w.program(stage)
    return lines + w.lines


def volumes(a):
    m = Model(a)
    per_rank_flops = [0.0] * a.pp
    for st in range(a.pp):
        f = (2 + m.passes_fwd) * m.lps * m.layer_fwd + (3 * m.logit_fwd if st == a.pp - 1 else 0)
        per_rank_flops[st] = f * a.micro_batches / a.tp
    return {"step_flops": m.step_flops(),
            "rank_flops_by_stage": per_rank_flops,
            "rank_compute_s_by_stage": [m.compute_time_s(f) for f in per_rank_flops],
            "sent_bytes_by_stage": [m.sent(st) for st in range(a.pp)],
            "ranks": a.tp * a.dp * a.pp}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = build_parser()
    a = p.parse_args(argv)
    check(p, a)
    if a.volumes:
        text = json.dumps(volumes(a), indent=1) + "\n"
    else:
        rec = [x for i, x in enumerate(argv) if x != "--out" and not x.startswith("--out=")
               and (i == 0 or argv[i - 1] != "--out")]
        text = "\n".join(workload(a, rec)) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
        return 0
    try:
        with open(a.out, "w") as f:
            f.write(text)
    except OSError as e:
        print(f"make_training.py: error: cannot write {a.out}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
