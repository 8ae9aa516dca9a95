#!/usr/bin/env python3
"""Writes text workloads (docs/trace-format.md, "Text workloads") for typical training jobs, to run
with `traffic.pattern: workload`, `workload.format: text`, `workload.file: <the file>`.

  scripts/make_workload.py dp  --ranks 16 --layers 4 --grad-bytes 64MiB --fwd 100us --bwd 200us
      data parallel: per iteration, forward then backward layer by layer; each layer's gradients
      (grad-bytes a layer, bf16) all-reduced over every rank as soon as its backward is done,
      overlapping the next layer's backward (as PyTorch DDP's buckets do); the step waits for all.
  scripts/make_workload.py tp  --ranks 16 --tp 4 --layers 4 --act-bytes 8MiB --grad-bytes 16MiB
      tensor parallel in groups of --tp consecutive ranks (Megatron-LM: two all-reduces of the
      activations per layer forward, two backward), data parallel across the groups (gradients
      all-reduced per layer, overlapped).
  scripts/make_workload.py moe --ranks 16 --ep 8 --layers 4 --token-bytes 16MiB --skew 1.2
      expert parallel in groups of --ep ranks: per layer an all-to-allv dispatch and combine of
      token-bytes per rank, skewed by Zipf weights (hot experts), around the experts' compute.

Common options: --iterations, --fwd, --bwd (per layer), --expert (moe: per layer), --channels,
--out FILE (default: stdout). Sizes take B, KiB, MiB, GiB; times ns, us, ms.
"""
import argparse
import sys


def header(a, comms):
    args = [x for x in sys.argv[1:] if x != "--out" and x != a.out]
    lines = [f"# scripts/make_workload.py {' '.join(args)}", f"ranks {a.ranks}"]
    lines += [f"communicator {name} size {size} stride {stride}" for name, size, stride in comms]
    lines.append(f"iterations {a.iterations}")
    return lines


def ch(a):
    return f" channels {a.channels}" if a.channels > 1 else ""


def dp(a):
    out = header(a, [])
    out += [f"compute {a.fwd}  # layer {i} forward" for i in range(a.layers)]
    for i in reversed(range(a.layers)):
        out.append(f"compute {a.bwd}  # layer {i} backward")
        out.append(f"collective allreduce_ring world {a.grad_bytes} async name grads_l{i}{ch(a)}")
    out.append("wait  # the optimizer step needs every gradient")
    return out


def tp(a):
    if a.ranks % a.tp:
        sys.exit(f"--tp {a.tp} does not divide --ranks {a.ranks}")
    dp_size = a.ranks // a.tp
    comms = [("tp", a.tp, 1)] + ([("dp", dp_size, a.tp)] if dp_size > 1 else [])
    out = header(a, comms)
    for i in range(a.layers):
        for part in ("attn", "mlp"):
            out.append(f"compute {a.fwd}  # layer {i} {part} forward (half)")
            out.append(f"collective allreduce_ring tp {a.act_bytes} name fwd_{part}_l{i}{ch(a)}")
    for i in reversed(range(a.layers)):
        for part in ("mlp", "attn"):
            out.append(f"compute {a.bwd}  # layer {i} {part} backward (half)")
            out.append(f"collective allreduce_ring tp {a.act_bytes} name bwd_{part}_l{i}{ch(a)}")
        if dp_size > 1:
            out.append(f"collective allreduce_ring dp {a.grad_bytes} async name grads_l{i}{ch(a)}")
    out.append("wait")
    return out


def moe(a):
    if a.ranks % a.ep:
        sys.exit(f"--ep {a.ep} does not divide --ranks {a.ranks}")
    out = header(a, [("ep", a.ep, 1)])
    for i in range(a.layers):
        out.append(f"compute {a.fwd}  # layer {i} attention and router")
        out.append(f"alltoallv ep {a.token_bytes} skew {a.skew} name dispatch_l{i}{ch(a)}")
        out.append(f"compute {a.expert}  # layer {i} experts")
        out.append(f"alltoallv ep {a.token_bytes} skew {a.skew} name combine_l{i}{ch(a)}")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="job", required=True)
    for name in ("dp", "tp", "moe"):
        s = sub.add_parser(name)
        s.add_argument("--ranks", type=int, default=16)
        s.add_argument("--layers", type=int, default=4)
        s.add_argument("--iterations", type=int, default=1)
        s.add_argument("--fwd", default="100us")
        s.add_argument("--bwd", default="200us")
        s.add_argument("--channels", type=int, default=1)
        s.add_argument("--out")
        if name in ("dp", "tp"):
            s.add_argument("--grad-bytes", default="64MiB")
        if name == "tp":
            s.add_argument("--tp", type=int, default=4)
            s.add_argument("--act-bytes", default="8MiB")
        if name == "moe":
            s.add_argument("--ep", type=int, default=8)
            s.add_argument("--token-bytes", default="16MiB")
            s.add_argument("--skew", type=float, default=1.2)
            s.add_argument("--expert", default="150us")
    a = p.parse_args()
    lines = {"dp": dp, "tp": tp, "moe": moe}[a.job](a)
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
