"""Validation of the PAT all-gather and reduce-scatter (models/workload/coll_allgather_pat.cpp,
NCCL 2.23+'s NCCL_ALGO_PAT) against their closed form, unchunked (full aggregation).

On the ideal single chip: ceil(log2 n) messages in series, the one at dimension d carrying m_d
blocks of S/n (m_d the odd multiples of 2^d below n):

  T = sum_d (alpha(b_d) + w(b_d)) + tail(b_last),   b_d = m_d S/n          (1%)

with alpha(b) and tail(b) measured as validate_workload.py does (a 2-rank ring on the same NIC
and chip) at each message's own size b (under one MTU a message's alpha is up to ~90 ns shorter:
its PCIe read is one packet's) and w(b) a b-byte WRITE with immediate on the wire. At 4 MiB and
8 KiB, 16 and 64 ranks: log2(n) latencies where the ring takes n - 1.

On a k = 8 fat tree (64 ranks placed in order: 4 a leaf, 16 a pod; links ideal, no flow control
or CC) a message from rank i to rank j also crosses h(i, j) = 0, 2 or 4 more switches (same leaf,
same pod, other pod), each delta ns one way. delta comes from the ring all-gather on the same tree
(its fct.csv: a WRITE's completion time is a round trip, so the FCTs of its pod-crossing and
its same-leaf messages differ by 8 delta). PAT's time is then the longest path of its dependency
graph (each message leaves when the blocks it forwards have arrived, as the model's schedule
says, and arrives alpha(b) + w(b) + h delta later) plus the tail, the last acknowledgement also
crossing its h switches back (h delta), 2%: a schedule of the ring's 63 steps would be ~10x off,
a wrong dimension order tens of percent.
"""
import csv
import math
import os

from validate_workload import NIC_800G, alpha_tail, collective, wire_ns
from validation_common import row


def steps(n):
    """Blocks per step, dimension top down: the odd multiples of 2^d below n."""
    top = math.ceil(math.log2(n))
    return [len(range(1 << d, n, 2 << d)) for d in range(top - 1, -1, -1)]


class Alphas:
    """alpha(b) and tail(b) measured once per message size."""

    def __init__(self, r):
        self.r, self.cache = r, {}

    def __call__(self, b):
        if b not in self.cache:
            self.cache[b] = alpha_tail(self.r, b=b)
        return self.cache[b]


def pat_ns(n, size, at):
    sizes = [m * (size // n) for m in steps(n)]
    return sum(at(b)[0] + wire_ns(b) for b in sizes) + at(sizes[-1])[1]


def pat_messages(n, size):
    """The all-gather's messages (full aggregation) as (src, dst, bytes, deps), dimension top
    down: at dimension d rank r sends to r - 2^d the blocks t = s - 2^d it holds (s the odd
    multiples of 2^d); block t != 0 came to r at dimension lowbit(t) from r + 2^lowbit(t)."""
    top = math.ceil(math.log2(n))
    msgs, got = [], {}  # got[(rank, dim)]: the message that reached rank at dim
    for d in range(top - 1, -1, -1):
        blocks = list(range(1 << d, n, 2 << d))
        for r in range(n):
            deps = set()
            for s in blocks:
                t = s - (1 << d)
                if t:
                    deps.add(got[(r, (t & -t).bit_length() - 1)])
            msgs.append((r, (r - (1 << d)) % n, len(blocks) * (size // n), deps))
        for r in range(n):
            got[((r - (1 << d)) % n, d)] = len(msgs) - n + r
    return msgs


def longest_path(msgs, latency, back, reverse):
    """When the last message is acknowledged: each message leaves when those it depends on have
    arrived, arrives latency(src, dst, bytes) later and is acknowledged back(src, dst) after that
    (before the tail). The reduce-scatter is the all-gather's graph reversed (src and dst swapped,
    edges turned)."""
    if reverse:
        after = [set() for _ in msgs]
        for k, (_, _, _, deps) in enumerate(msgs):
            for j in deps:
                after[j].add(k)
        msgs = [(dst, src, b, after[k]) for k, (src, dst, b, _) in enumerate(msgs)]
        order = range(len(msgs) - 1, -1, -1)
    else:
        order = range(len(msgs))
    arrive, end = [0.0] * len(msgs), 0.0
    for k in order:
        src, dst, b, deps = msgs[k]
        arrive[k] = max((arrive[j] for j in deps), default=0.0) + latency(src, dst, b)
        end = max(end, arrive[k] + back(src, dst))
    return end


def case_pat(r):
    """All-gather and reduce-scatter, 16 and 64 ranks, 8 KiB and 4 MiB, on the ideal chip."""
    at = Alphas(r)
    rows = []
    for algo in ("allgather_pat", "reducescatter_pat"):
        for n, size in ((16, 4 << 20), (64, 8 << 10), (64, 4 << 20)):
            t, busbw = collective(r, algo, n, size, extra=[f"switch.ports={max(16, n)}"])
            expected = pat_ns(n, size, at)
            rows.append(row("PAT: time / closed form (log2 n steps, aggregated)",
                            f"{algo} n={n} S={size >> 10}KiB", 1.0, t / expected, 0.01,
                            f"{t / 1000:.2f} us vs {expected / 1000:.2f} us ({len(steps(n))} "
                            f"steps; alpha {at(size // n)[0]:.0f} ns at one block); busbw "
                            f"{busbw:.2f} GB/s"))
    return rows


FAT_TREE = ["topology.kind=fat_tree", "topology.k=8", "switch.ports=8", "sim.duration=1us",
            "sim.warmup=0ns", "sim.drain_limit=20ms", "workload.tc=3",
            "traffic.pattern=workload"]


def extra_hops(i, j):
    return 0 if i // 4 == j // 4 else 2 if i // 16 == j // 16 else 4


def case_pat_fat_tree(r):
    """64 ranks, 8 KiB, on a k = 8 fat tree: delta from the ring all-gather's completions, then
    PAT's longest dependency path, 2%."""
    n, size = 64, 8 << 10
    at = Alphas(r)
    ring, _ = collective(r, "allgather_ring", n, size, NIC_800G, extra=FAT_TREE)
    fct = {0: [], 4: []}
    with open(os.path.join(r.last_out, "fct.csv")) as f:
        for x in csv.DictReader(f):
            h = extra_hops(int(x["src"]), int(x["dst"]))
            if h in fct:
                fct[h].append(float(x["fct_ns"]))
    delta = (sum(fct[4]) / len(fct[4]) - sum(fct[0]) / len(fct[0])) / 8
    msgs = pat_messages(n, size)

    def latency(i, j, b):
        return at(b)[0] + wire_ns(b) + extra_hops(i, j) * delta

    def back(i, j):
        return extra_hops(i, j) * delta

    rows = []
    for algo, reverse in (("allgather_pat", False), ("reducescatter_pat", True)):
        t, _ = collective(r, algo, n, size, NIC_800G, extra=FAT_TREE)
        expected = longest_path(msgs, latency, back, reverse) + at(size // n)[1]
        rows.append(row("PAT on a k=8 fat tree: time / longest dependency path",
                        f"{algo} n={n} S=8KiB", 1.0, t / expected, 0.02,
                        f"{t / 1000:.2f} us vs {expected / 1000:.2f} us (delta {delta:.1f} ns a "
                        f"switch; the ring all-gather {ring / 1000:.2f} us: {ring / t:.1f}x PAT)"))
    return rows


CASES = {"pat": case_pat, "pat_fat_tree": case_pat_fat_tree}
NOTES = [
    "- PAT rows (validate_pat.py): NCCL 2.23+'s all-gather and reduce-scatter, unchunked (full",
    "  aggregation), against ceil(log2 n) aggregated steps on the ideal chip with each step's",
    "  alpha measured at its own message size (1%), and on a k=8 fat tree at 64 ranks and 8 KiB",
    "  against the longest path of its dependency graph with a switch's delta taken from the ring",
    "  all-gather's completions on the same tree (2%).",
]
