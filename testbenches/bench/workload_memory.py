#!/usr/bin/env python3
"""Memory per graph node of the two workload readers (issue #38): the text workload and Chakra.

Each reader is given a job of N and 2N graph nodes (2 ranks, a chain of compute nodes each), run
with sim.duration=1us and sim.drain_limit=1ns (the run reads, builds its graph and engine, and
stops), and its peak RSS taken (os.wait4). Bytes per node = (RSS(2N) - RSS(N)) / N. Chakra twice:
lean nodes (a name of ~10 B, one attribute) and fat ones (a 4 KiB name, 16 other attributes of
256 B, inputs and outputs of 1 KiB): what a trace attaches beyond what is read must not cost a
node more than its clipped name (1 KiB kept; docs/trace-format.md, "Limits of the input files").
A Chakra rank's file is read whole while it is parsed, so its size adds to the peak (the fat
files are ~100 MB at 2N): reported apart, as file MB.

  testbenches/bench/workload_memory.py [build/fabricsim] [--nodes 20000]

Needs protoc and python3-protobuf (as scripts/make_chakra_examples.py, whose schema loader it
uses). Exit 0, or 2 for a missing tool."""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from make_chakra_examples import Missing, load_schema, write  # noqa: E402

COMMON = ["--set", "switch.ports=16", "--set", "traffic.pattern=workload", "--set",
          "sim.duration=1us", "--set", "sim.warmup=0ns", "--set", "sim.drain_limit=1ns"]


def peak_rss(cmd):
    """Peak RSS in bytes of one child run (its exit status is not judged: an unfinished job)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 3):
        sys.exit(f"workload_memory.py: {' '.join(cmd)} exited {code}: {err[-300:]}")
    return ru.ru_maxrss * 1024


def chakra_job(pb, folder, n, fat):
    for r in range(2):
        nodes = []
        for i in range(n // 2):
            name = (f"k{i}" if not fat else "void kernel<" + "x" * 4096 + f">{i}")
            x = pb.Node(id=i + 1, name=name, type=pb.COMP_NODE, duration_micros=1)
            if i:
                x.data_deps.append(i)
            x.attr.append(pb.AttributeProto(name="is_cpu_op", bool_val=False))
            if fat:
                for a in range(16):
                    x.attr.append(pb.AttributeProto(name=f"junk{a}", string_val="j" * 256))
                x.inputs.values = "i" * 1024
                x.outputs.values = "o" * 1024
            nodes.append(x)
        write(os.path.join(folder, f"t.{r}.et"), pb, nodes)
    return sum(os.path.getsize(os.path.join(folder, f"t.{r}.et")) for r in range(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fabricsim", nargs="?", default=os.path.join(ROOT, "build", "fabricsim"))
    ap.add_argument("--nodes", type=int, default=20000, help="N (default 20000)")
    a = ap.parse_args()
    cfg = os.path.join(ROOT, "configs", "nic_800g.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            pb = load_schema(tmp)
        except Missing as e:
            print(f"workload_memory.py: error: {e}", file=sys.stderr)
            return 2
        rows = []
        for kind in ("text", "chakra lean", "chakra fat"):
            rss, mb = [], []
            for n in (a.nodes, 2 * a.nodes):
                d = os.path.join(tmp, f"{kind.replace(' ', '_')}_{n}")
                os.makedirs(d)
                if kind == "text":
                    f = os.path.join(d, "w.txt")
                    with open(f, "w") as out:
                        out.write(f"ranks 2\niterations {n // 2}\ncompute 1us\n")
                    mb.append(os.path.getsize(f) / 1e6)
                    extra = ["--set", "workload.format=text", "--set", f"workload.file={f}"]
                else:
                    mb.append(chakra_job(pb, d, n, kind.endswith("fat")) / 1e6)
                    extra = ["--set", "workload.format=chakra", "--set",
                             f"workload.file={os.path.join(d, 't')}"]
                rss.append(peak_rss([a.fabricsim, "run", cfg, *COMMON, *extra,
                                     "--out", os.path.join(d, "out")]))
            per = (rss[1] - rss[0]) / a.nodes
            rows.append((kind, rss[0] / 1e6, rss[1] / 1e6, mb[1], per))
        print(f"{'reader':<12} {'RSS N (MB)':>11} {'RSS 2N (MB)':>12} {'file 2N (MB)':>13} "
              f"{'B/node':>8}   (N = {a.nodes})")
        for k, r1, r2, mb2, per in rows:
            print(f"{k:<12} {r1:>11.1f} {r2:>12.1f} {mb2:>13.1f} {per:>8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
