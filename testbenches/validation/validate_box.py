"""Validation of multi-chip boxes (switch_kinds[].box; models/topology/box.h) against closed
forms: a box's zero-load latency is its chips' zero-load closed forms (case zero_load) chained
by its internal links, exactly: one chip for two front ports on one leaf chip, leaf + internal
link + spine + internal link + leaf across (a mesh: leaf + internal link + leaf); its throughput under adversarial traffic (every front
port of leaf chip A to one of leaf chip B) is the internal capacity over the offered load, and
under uniform traffic the local share plus the internal capacity over the offered.

Case group: box (the 51.2T chip of switch_51t2.yaml, whose zero-load form case zero_load
validates, four of them as 2 leaves + 2 spines: the 4-chip box of docs/boxes.md at 800G)."""
import os
import random

from validate import CHIP, chip_cycles, crossing_cycles
from validation_common import row

BOX = ["switch_kinds[0].name=box", "switch_kinds[0].box.chip=switch",
       "switch_kinds[0].box.leaves=2", "switch_kinds[0].box.spines=2",
       "topology.kind=single", "topology.kinds.switch=box"]
FS_PER_BYTE, CELL = 10000, 254  # 800 Gb/s; the chip's cell
LINK = ["link.model=phy", "link.length_m=2", "link.ns_per_m=5", "link.phy.fec_latency=100ns",
        "link.phy.pcs_latency=0ns", "switch_kinds[0].box.internal_link.length_m=0.5"]
INTERNAL_FS = (round(0.5 * 5 * 1e6) + 100 * 1_000_000)  # 0.5 m x 5 ns/m + FEC, one way


def chip_start(t0, size, P, ingress, after):
    """When the frame's first bit leaves a shared-memory chip (no_underrun egress), first bit in
    at t0: the zero-load closed form of case zero_load."""
    xs = crossing_cycles(t0, size, CELL, FS_PER_BYTE, P, ingress, 1e9, 0)
    ready = max((x + after) * P - k * CELL * FS_PER_BYTE for k, x in enumerate(xs))
    return max(ready, max(xs[0] + after, xs[-1]) * P) + 8 * FS_PER_BYTE  # + preamble


def zero_load_rows(r, spines, what, note):
    """200 isolated frames through a box of 51.2T chips with `spines` spines (0: a mesh of 2
    leaves), each timed by chaining the chip's closed form over the chips it crosses."""
    rows = []
    rng = random.Random(11)
    P = round(1e15 / 1.35e9)
    ingress = chip_cycles("ingress_cycles")
    after = chip_cycles("crossbar_cycles") + chip_cycles("egress_cycles")
    trace = os.path.join(r.workdir, f"box_zero_load_{spines}.trace")
    pk, t = [], 1_000_000_000
    with open(trace, "w") as f:
        for _ in range(200):
            size = rng.randint(64, 9216)
            src, dst = rng.randrange(64), rng.randrange(64)
            while dst == src:
                dst = rng.randrange(64)
            t += 3_000_000_000 + rng.randrange(P)
            pk.append((t, size, src // 32 == dst // 32))
            f.write(f"{t}fs {src} {dst} {size}\n")
    across = 3 if spines else 2  # leaf, spine, leaf; or leaf, leaf
    lat = {True: [], False: []}
    for t, size, local in pk:
        t0 = t + 8 * FS_PER_BYTE + (2 * 5 + 100) * 1_000_000  # first bit into the leaf chip
        x = t0
        for _ in range(1 if local else across):
            start = chip_start(x, size, P, ingress, after)
            x = start + INTERNAL_FS  # first bit into the next chip
        lat[local].append((start + size * FS_PER_BYTE - t0) / 1e6)
    box = [b for b in BOX if "spines" not in b] + [f"switch_kinds[0].box.spines={spines}"]
    s = r.run(CHIP, box + LINK + ["traffic.pattern=trace", f"traffic.trace.file={trace}",
                                  "sim.warmup=0ns", f"sim.duration={t // 1_000_000_000 + 3}us"])
    every = lat[True] + lat[False]
    m = s["latency_ns"]
    assert m["count"] == len(pk), m
    for stat, exp in (("min", min(every)), ("mean", sum(every) / len(every)), ("max", max(every))):
        rows.append(row("Box zero-load latency (ns)", f"{what}, {stat}", exp, m[stat], 1e-6, note))
    return rows


def case_box_latency(r):
    return (zero_load_rows(r, 2, "4 x 51.2T, 2+2 chips",
                           "1 chip on a leaf; leaf + link + spine + link + leaf across (chip form "
                           "of case zero_load, internal link 102.5 ns)") +
            zero_load_rows(r, 0, "2 x 51.2T, mesh of 2 leaves",
                           "1 chip on a leaf; two chip hops + the internal link across (chip "
                           "form of case zero_load, internal link 102.5 ns)"))


def adversarial_trace(path, hosts_per_leaf, size, until_fs):
    """Every front port of leaf chip 0 sends back to back at line rate to its twin on leaf 1."""
    gap = (size + 20) * FS_PER_BYTE  # frame + preamble + IFG at 800G
    with open(path, "w") as f:
        t = 0
        while t < until_fs:
            for h in range(hosts_per_leaf):
                f.write(f"{t}fs {h} {h + hosts_per_leaf} {size}\n")
            t += gap


def case_box_throughput(r):
    rows = []
    m = 8  # links per leaf-spine pair: 48 front + 16 internal ports a leaf, 3:1
    f, up = 64 - 2 * m, 2 * m
    sets = BOX + [f"switch_kinds[0].box.links_per_pair={m}", "switch.routing.mode=spray",
                  "sim.warmup=2us", "sim.duration=8us"]
    trace = os.path.join(r.workdir, "box_adversarial.trace")
    adversarial_trace(trace, f, 4096, 8_000_000_000)
    s = r.run(CHIP, sets + ["traffic.pattern=trace", f"traffic.trace.file={trace}"])
    tp = s["throughput"]
    rows.append(row("Box throughput / offered, adversarial", f"leaf A -> leaf B, {f}:{up} ports",
                    up / f, tp["accepted_load"] / tp["offered_load"], 0.02,
                    "internal capacity / offered = 16 / 48"))
    n = 2 * f
    s = r.run(CHIP, sets + ["traffic.pattern=uniform", "traffic.load=1.0", "traffic.size=4096B"])
    tp = s["throughput"]
    cross = f / (n - 1)  # share of a host's destinations on the other leaf
    expect = (1 - cross) + cross * min(1.0, up / (f * cross))
    rows.append(row("Box throughput / offered, uniform", f"{n} front ports, load 1, {f}:{up}",
                    expect, tp["accepted_load"] / tp["offered_load"], 0.02,
                    "local share + internal capacity / offered"))
    return rows


CASES = {"box_latency": case_box_latency, "box_throughput": case_box_throughput}
NOTES = [
    "- Box rows (validate_box.py) run four 51.2T chips (switch_51t2.yaml) as a 2+2 box, and two",
    "  as a mesh (spines 0: the leaves joined directly). Zero load: 200 isolated frames, each timed",
    "  by chaining the chip's closed form (case zero_load) over its path, exact (a mesh: two chip",
    "  hops plus the internal link). Throughput: the 3:1 box (48 front, 16 internal ports a leaf)",
    "  with per-packet spraying; its front ports at line rate from leaf A to leaf B, then uniform.",
]
