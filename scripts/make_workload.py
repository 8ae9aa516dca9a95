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
--out FILE (default: stdout). Sizes take B, KB, MB, GB, TB, KiB, MiB, GiB, TiB; times fs, ps, ns,
us, ms, s. Each job's options and their defaults: make_workload.py JOB --help.

Exit status: 0 ok, 2 bad arguments (the message names the option), 1 if --out cannot be written.
"""
import argparse
import math
import re
import sys

SIZE_RE = re.compile(r"[0-9]+(\.[0-9]+)?(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)")
TIME_RE = re.compile(r"[0-9]+(\.[0-9]+)?(fs|ps|ns|us|ms|s)")


def header(a, comms):
    lines = [f"# scripts/make_workload.py {' '.join(a.argv)}", f"ranks {a.ranks}"]
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
    out = header(a, [("ep", a.ep, 1)])
    for i in range(a.layers):
        out.append(f"compute {a.fwd}  # layer {i} attention and router")
        out.append(f"alltoallv ep {a.token_bytes} skew {a.skew} name dispatch_l{i}{ch(a)}")
        out.append(f"compute {a.expert}  # layer {i} experts")
        out.append(f"alltoallv ep {a.token_bytes} skew {a.skew} name combine_l{i}{ch(a)}")
    return out


# Option types: a bad value is refused here (exit 2, naming the option), not by the simulator
# when it reads the file.
def size(text):
    if not SIZE_RE.fullmatch(text) or float(re.match(r"[0-9.]+", text).group()) == 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size > 0 such as 64MiB "
                                         "(units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)")
    return text


def duration(text):
    if not TIME_RE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"'{text}' is not a time such as 100us "
                                         "(units fs, ps, ns, us, ms, s)")
    return text


def at_least(lo):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            v = None
        if v is None or v < lo:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number >= {lo}")
        return v
    return parse


def skew(text):
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and v >= 0):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number >= 0")
    return v


JOBS = {"dp": "data parallel: per-layer gradient all-reduces overlapping the backward pass",
        "tp": "tensor parallel in groups of --tp ranks, data parallel across the groups",
        "moe": "expert parallel: all-to-allv dispatch and combine in groups of --ep ranks"}


def build_parser():
    fmt = argparse.RawDescriptionHelpFormatter
    p = argparse.ArgumentParser(prog="make_workload.py", description=__doc__, formatter_class=fmt,
                                epilog="Each job's options: make_workload.py JOB --help.")
    sub = p.add_subparsers(dest="job", required=True, metavar="JOB", title="jobs")
    for name, what in JOBS.items():
        s = sub.add_parser(name, help=what, description=f"make_workload.py {name}: {what}.",
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
        s.add_argument("--ranks", type=at_least(2), default=16, help="ranks in the job")
        s.add_argument("--layers", type=at_least(1), default=4, help="layers of the model")
        s.add_argument("--iterations", type=at_least(1), default=1, help="training steps")
        s.add_argument("--fwd", type=duration, default="100us",
                       help="forward compute per layer" + (" (tp: per half layer)"
                                                           if name == "tp" else ""))
        s.add_argument("--bwd", type=duration, default="200us",
                       help="backward compute per layer" + (" (tp: per half layer)"
                                                            if name == "tp" else ""))
        s.add_argument("--channels", type=at_least(1), default=1,
                       help="parallel instances of each collective on as many QPs (at most "
                            "nic.qps_per_pair)")
        s.add_argument("--out", metavar="FILE", default="-",
                       help="where to write the workload ('-': standard output)")
        if name in ("dp", "tp"):
            s.add_argument("--grad-bytes", type=size, default="64MiB",
                           help="gradients per layer, all-reduced over the data-parallel ranks")
        if name == "tp":
            s.add_argument("--tp", type=at_least(1), default=4,
                           help="tensor-parallel group size (consecutive ranks; divides --ranks)")
            s.add_argument("--act-bytes", type=size, default="8MiB",
                           help="activations all-reduced in a group, twice per layer each way")
        if name == "moe":
            s.add_argument("--ep", type=at_least(1), default=8,
                           help="expert-parallel group size (divides --ranks)")
            s.add_argument("--token-bytes", type=size, default="16MiB",
                           help="tokens each rank dispatches (and gets back) per layer")
            s.add_argument("--skew", type=skew, default=1.2,
                           help="Zipf exponent of the experts' load (0: even)")
            s.add_argument("--expert", type=duration, default="150us",
                           help="the experts' compute per layer")
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = build_parser()
    a = p.parse_args(argv)
    group = {"tp": "tp", "moe": "ep"}.get(a.job)
    if group and a.ranks % getattr(a, group):
        p.error(f"--{group} {getattr(a, group)} does not divide --ranks {a.ranks}")
    # The file's first line records how it was made (less where it went).
    a.argv = [x for i, x in enumerate(argv) if x != "--out" and not x.startswith("--out=")
              and (i == 0 or argv[i - 1] != "--out")]
    text = "\n".join({"dp": dp, "tp": tp, "moe": moe}[a.job](a)) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
        return 0
    try:
        with open(a.out, "w") as f:
            f.write(text)
    except OSError as e:
        print(f"make_workload.py: error: cannot write {a.out}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
