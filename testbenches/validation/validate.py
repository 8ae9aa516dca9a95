#!/usr/bin/env python3
"""Validation of the switch model against queueing theory and closed-form timing.

Each case runs the real simulator (`fabricsim run`) on configs/validation/slotted.yaml (or a chip
config) with --set overrides and compares summary.json with the theory, within a stated tolerance.

  validate.py --fabricsim BUILD/fabricsim --case hol      run one case group (CTest does this)
  validate.py --fabricsim BUILD/fabricsim --all --write docs/validation.md
                                                          run all and regenerate the table

Exit status: 0 if every comparison passes, 1 otherwise.
"""
import argparse
import math
import os
import random
import re
from fractions import Fraction
import sys
import tempfile

from validation_common import ROOT, Runner, band, row  # noqa: F401 (the case groups use them)
SLOTTED = os.path.join(ROOT, "configs", "validation", "slotted.yaml")
CHIP = os.path.join(ROOT, "configs", "switch_51t2.yaml")
DRAGONFLY = os.path.join(ROOT, "configs", "examples", "dragonfly.yaml")
FAT_TREE = os.path.join(ROOT, "configs", "examples", "fat_tree_k4.yaml")

# Karol, Hluchyj & Morgan, "Input versus output queueing on a space-division packet switch",
# IEEE Trans. Commun. 35(12), 1987, Table I: saturation throughput of FIFO input queueing with
# random selection among contending head-of-line cells.
KAROL_TABLE = {2: 0.7500, 3: 0.6825, 4: 0.6553, 5: 0.6399, 6: 0.6302, 7: 0.6234, 8: 0.6184}
KAROL_LIMIT = 2 - math.sqrt(2)


def case_hol(r):
    """input_fifo, saturated uniform Bernoulli: head-of-line blocking throughput (Karol 1987)."""
    rows = []
    for n, value in sorted(KAROL_TABLE.items()):
        s = r.run(SLOTTED, [f"switch.ports={n}", "switch.architecture=input_fifo",
                            "switch.scheduler.algorithm=pim", "traffic.load=1.0"])
        rows.append(row("HOL saturation (input_fifo)", f"N={n}", value,
                        s["throughput"]["accepted_load"], 0.01, "Karol et al. 1987, Table I"))
    for n in (16, 32, 64):
        # Finite-N values approach 2 - sqrt(2) from above roughly as 0.26/N (Table I: N=8 is
        # 0.0326 above the limit); allow that excess plus 0.005.
        s = r.run(SLOTTED, [f"switch.ports={n}", "switch.architecture=input_fifo",
                            "switch.scheduler.algorithm=pim", "traffic.load=1.0"])
        excess = 0.26 / n
        rows.append(row("HOL saturation (input_fifo)", f"N={n}", KAROL_LIMIT + excess / 2,
                        s["throughput"]["accepted_load"], excess / 2 + 0.005,
                        "2 - sqrt(2) < x < 2 - sqrt(2) + 0.26/N"))
    return rows


def case_pim(r):
    """voq + pim, one iteration, saturated: 1 - (1 - 1/N)^N."""
    rows = []
    for n in (4, 16, 64):
        s = r.run(SLOTTED, [f"switch.ports={n}", "switch.scheduler.algorithm=pim",
                            "switch.scheduler.iterations=1", "traffic.load=1.0"])
        rows.append(row("PIM-1 saturation (voq)", f"N={n}", 1 - (1 - 1 / n) ** n,
                        s["throughput"]["accepted_load"], 0.01,
                        "Anderson et al. 1993; McKeown 1999"))
    return rows


def case_islip(r):
    """voq + islip, one iteration, uniform Bernoulli: ~100% throughput (McKeown 1999)."""
    rows = []
    for n in (16, 64):
        for load in (0.9, 0.95):
            s = r.run(SLOTTED, [f"switch.ports={n}", "switch.scheduler.algorithm=islip",
                                "switch.scheduler.iterations=1", f"traffic.load={load}"])
            t = s["throughput"]
            rows.append(row("iSLIP-1 throughput (voq)", f"N={n} load={load}", t["offered_load"],
                            t["accepted_load"], 0.01, "accepted = offered (McKeown 1999)"))
    return rows


def case_oq(r):
    """output_queued, uniform Bernoulli load p: mean wait (N-1)/N * p / (2(1-p)) cell times."""
    rows = []
    for n in (8, 32):
        for p in (0.5, 0.8, 0.9):
            s = r.run(SLOTTED, [f"switch.ports={n}", "switch.architecture=output_queued",
                                f"traffic.load={p}"])
            # Latency = 1 cell time to receive + wait + 1 cell time to transmit (1 ns cells).
            wait = s["latency_ns"]["mean"] - 2.0
            w = (n - 1) / n * p / (2 * (1 - p))
            rows.append(row("Output-queued mean wait (cells)", f"N={n} p={p}", w, wait,
                            0.03 * w + 0.02, "Karol et al. 1987 / M/D/1-like discrete queue"))
    return rows


def chip_cycles(key):
    """A pipeline's cycles as configs/switch_51t2.yaml states them (switch.pipeline.<key>)."""
    with open(CHIP) as f:
        m = re.search(rf"^\s+{key}: (\d+)", f.read(), re.M)
    return int(m.group(1))


def crossing_cycles(t0, size, cell, fs_per_byte, P, ingress, speedup, matching=0):
    """The cycles in which an isolated cut-through packet's cells cross (first bit in at t0, in
    fs): cell k is eligible `ingress` cycles after the clock edge that follows its last byte, a
    matching for it may start at most once a slot (ser(cell) / speedup, kept exactly; at once
    when the crossbar was idle), on the first clock edge at or after its slot, and its cell
    crosses `matching` cycles later (a matching that fits in a slot delays every cell alike)."""
    slot = Fraction(cell * fs_per_byte) / Fraction(speedup).limit_denominator(1000)
    xs, match = [], None
    for k in range(-(-size // cell)):
        eligible = -(-(t0 + min((k + 1) * cell, size) * fs_per_byte) // P) + ingress
        match = eligible * P if match is None else max(Fraction(eligible * P), match + slot)
        xs.append(math.ceil(match / P) + matching)
    return xs


def case_zero_load(r):
    """Isolated packets on the 51.2T chip with Ethernet links: latency = clock-edge alignment +
    pipeline + preamble + serialisation, exactly (no queueing), for cut-through and
    store-and-forward with the egress starting on the first cell, and for cut-through with the
    egress starting when the frame cannot underrun (the chip's default, egress.start no_underrun)."""
    rows = []
    rng = random.Random(7)
    P = round(1e15 / 1.35e9)  # core clock period in fs (switch_51t2.yaml: 1.35 GHz)
    fs_per_byte = 10000       # 800 Gb/s
    cell = 254
    ingress = chip_cycles("ingress_cycles")
    after = chip_cycles("crossbar_cycles") + chip_cycles("egress_cycles")  # crossing to egress
    pipeline = ingress + after
    matching = 2 * 1  # switch.scheduler.iterations x cycles_per_iteration
    trace = os.path.join(r.workdir, "zero_load.trace")
    packets = []
    t = 1_000_000_000  # 1 us
    with open(trace, "w") as f:
        f.write("# isolated packets, random sizes and clock phases\n")
        for k in range(300):
            size = rng.randint(64, 9216)
            src, dst = rng.randrange(64), rng.randrange(64)
            t += 2_000_000_000 + rng.randrange(P)  # 2 us apart, random phase
            packets.append((t, size))
            f.write(f"{t}fs {src} {dst} {size}\n")
    duration_us = t // 1_000_000_000 + 2
    # Ethernet links: the host's frame starts after an 8 B preamble; its first bit reaches the
    # switch one link latency (2 m x 5 ns/m + 100 ns FEC) later, and the switch's egress sends a
    # preamble before the frame too. Latency runs from the first bit into the switch to the last
    # bit out of it.
    preamble = 8 * fs_per_byte
    link_fs = (2 * 5 + 100) * 1_000_000
    # As a crossbar chip (voq: a matching of 2 cycles, cells paced by the crossbar's slots), and
    # as shipped (shared_memory: no crossbar, each cell straight to its egress path).
    for arch, fwd, start_rule in (("voq", "cut_through", "first_cell"),
                                  ("voq", "store_and_forward", "first_cell"),
                                  ("voq", "cut_through", "no_underrun"),
                                  ("shared_memory", "cut_through", "no_underrun"),
                                  ("shared_memory", "cut_through", "first_cell")):
        xbar = arch == "voq"
        m_cycles = matching if xbar else 0
        lat = []
        for t, size in packets:
            t0 = t + preamble + link_fs  # first bit into the switch
            if start_rule == "first_cell":
                first = min(size, cell) if fwd == "cut_through" else size
                seen = -(-(t0 + first * fs_per_byte) // P)  # ceil to the next clock edge
                # (+1: the elastic cycle, in cut-through for a frame of several cells)
                elastic = 1 if fwd == "cut_through" and size > cell else 0
                start = (seen + pipeline + m_cycles + elastic) * P + preamble
            else:
                # Cell k crosses in the cycle it is eligible (alone, the crossbar is idle) unless
                # the previous cell was matched less than a slot (cell time / 1.5) before, and is
                # at the egress `after` cycles later; the frame's first bit may not come before
                # any cell's arrival minus the wire time of the k cells before it, nor before the
                # cycle in which its last cell has crossed and its first is at the egress.
                xs = crossing_cycles(t0, size, cell, fs_per_byte, P, ingress,
                                     1.5 if xbar else 1e9, m_cycles)
                ready = max((x + after) * P - k * cell * fs_per_byte for k, x in enumerate(xs))
                start = max(ready, max(xs[0] + after, xs[-1]) * P) + preamble
            lat.append((start + size * fs_per_byte - t0) / 1e6)
        s = r.run(CHIP, ["traffic.pattern=trace", f"traffic.trace.file={trace}",
                         f"switch.architecture={arch}",
                         f"switch.forwarding={fwd}", f"switch.egress.start={start_rule}",
                         "sim.warmup=0ns",
                         f"sim.duration={duration_us}us", "link.model=phy", "link.length_m=2",
                         "link.ns_per_m=5", "link.phy.fec_latency=100ns",
                         "link.phy.pcs_latency=0ns"])
        m = s["latency_ns"]
        assert m["count"] == len(packets), m
        for stat, exp in (("min", min(lat)), ("mean", sum(lat) / len(lat)), ("max", max(lat))):
            rows.append(row("Zero-load latency, 51.2T chip (ns)",
                            f"{arch} {fwd} {start_rule} {stat}",
                            exp, m[stat], 1e-6,
                            "edge + pipeline + matching + preambles + serialisation"))
        # Alone in the switch, a frame's cells cross faster than it is sent (speedup 1.5): the
        # egress, starting on the first cell, never waits for a late one.
        rows.append(row("Zero-load egress underruns, 51.2T chip", f"{arch} {fwd} {start_rule}", 0,
                        s["switches"][0]["egress_underruns"], 0,
                        "cells cross at 1.5x line rate"))
    return rows


def case_matching(r):
    """A matching that takes time (switch.scheduler.cycles_per_iteration c, iterations k): isolated
    one-cell packets on the slotted switch (1 cycle = 1 cell time = 1 ns, no pipeline) leave
    ceil-to-edge(first bit + 1 ns) + k c cycles + 1 ns after their first bit, exactly: the grant
    comes k c cycles after the request snapshot, one matching at a time or pipelined."""
    rows = []
    rng = random.Random(11)
    P = 1_000_000  # 1 ns in fs
    trace = os.path.join(r.workdir, "matching.trace")
    times = []
    t = P
    with open(trace, "w") as f:
        f.write("# isolated one-cell packets at random clock phases\n")
        for _ in range(400):
            src, dst = rng.randrange(16), rng.randrange(16)
            t += 50 * P + rng.randrange(P)  # 50 ns apart, random phase
            times.append(t)
            f.write(f"{t}fs {src} {dst} 64\n")
    duration_ns = t // P + 100
    for k, c, pipe in ((1, 0, "false"), (1, 1, "false"), (4, 1, "false"), (4, 1, "true"),
                       (2, 3, "false")):
        s = r.run(SLOTTED, ["traffic.pattern=trace", f"traffic.trace.file={trace}",
                            "sim.warmup=0ns", f"sim.duration={duration_ns}ns",
                            f"switch.scheduler.iterations={k}",
                            f"switch.scheduler.cycles_per_iteration={c}",
                            f"switch.scheduler.pipelined={pipe}"])
        m = s["latency_ns"]
        assert m["count"] == len(times), m
        lat = [((-(-(t0 + P) // P) + k * c) * P + P - t0) / 1e6 for t0 in times]
        mode = "pipelined" if pipe == "true" else "one at a time"
        for stat, exp in (("mean", sum(lat) / len(lat)), ("max", max(lat))):
            rows.append(row("Zero-load latency, k-cycle matching (ns)",
                            f"k={k} c={c} {mode} {stat}", exp, m[stat], 1e-6,
                            "edge + k x c cycles + 1 cell time"))
    return rows


# --- routing: dragonfly (Kim, Dally, Scott, Abts, ISCA 2008) and fat-tree load balancing -------

# configs/examples/dragonfly.yaml: a = 4 routers per group, p = 2 hosts per router, h = 2 global
# links per router, g = a h + 1 = 9 groups, 72 hosts, 800 Gb/s ports, 4096 B packets.
DF_A, DF_P, DF_H = 4, 2, 2
DF_G = DF_A * DF_H + 1
PKT = 4096
WIRE_EFF = PKT / (PKT + 20)  # frame bytes per wire byte (8 B preamble + 12 B gap)


class DragonflyWiring:
    """The dragonfly's wiring and minimal routes as docs/topologies.md states them, written here
    independently of models/topology/dragonfly.cpp: router R of group G is G*a + R; host
    (G*a + R)*p + i; link j = R*h + x of group G leads to group (G + j + 1) mod g."""

    def __init__(self, a, p, h, g):
        self.a, self.p, self.h, self.g = a, p, h, g

    def gateway(self, G, T):  # G's router holding G's global link to T
        return G * self.a + ((T - G - 1) % self.g) // self.h

    def to_group(self, s, T):  # router-to-router links from router s into group T, entry router
        G = s // self.a
        gw = self.gateway(G, T)
        return (0 if gw == s else 1) + 1, self.gateway(T, G)

    def minimal(self, s, d):  # links from router s to router d
        if s == d:
            return 0
        if s // self.a == d // self.a:
            return 1
        n, entry = self.to_group(s, d // self.a)
        return n + (0 if entry == d else 1)

    def valiant_mean(self, s, d):  # mean links over the intermediate groups (uniform)
        G, D = s // self.a, d // self.a
        if G == D or self.g < 3:
            return self.minimal(s, d)
        total = 0
        for i in range(self.g):
            if i in (G, D):
                continue
            n, entry = self.to_group(s, i)
            total += n + self.minimal(entry, d)
        return total / (self.g - 2)


def write_trace(path, pairs, load, duration_ns, seed):
    """Every (src, dst) in `pairs` sends PKT-byte packets at `load` of the 800 Gb/s wire,
    periodically from a random phase, until duration_ns."""
    rng = random.Random(seed)
    gap = (PKT + 20) * 8 / 800.0 / load  # ns between packet starts
    events = []
    for src, dst in pairs:
        t = rng.uniform(0, gap)
        while t < duration_ns:
            events.append((round(t * 1e6), src, dst))
            t += gap
    events.sort()
    with open(path, "w") as f:
        for t, src, dst in events:
            f.write(f"{t}fs {src} {dst} {PKT}\n")
    return len(events)


def case_dragonfly(r):
    """Dragonfly a=4 p=2 h=2, 9 groups. Group shift (host k -> k + a p: all of group G to G+1):
    saturation throughput of minimal, valiant and ugal routing against the channel-load bounds of
    the wiring; uniform traffic at low load: mean router-to-router links per packet against the
    wiring's closed form."""
    rows = []
    hosts = DF_G * DF_A * DF_P
    shift = [(k, (k + DF_A * DF_P) % hosts) for k in range(hosts)]
    trace = os.path.join(r.workdir, "group_shift.trace")

    def peak(mode, loads):
        best = 0.0
        for load in loads:
            write_trace(trace, shift, load, 30000, 11)
            s = r.run(DRAGONFLY, ["traffic.pattern=trace", f"traffic.trace.file={trace}",
                                  f"switch.routing.mode={mode}", "sim.duration=30us",
                                  "sim.drain_limit=1us"])
            print(f"  group shift {mode}: offered {s['throughput']['offered_load']:.4f} "
                  f"accepted {s['throughput']['accepted_load']:.4f}", flush=True)
            best = max(best, s["throughput"]["accepted_load"])
        return best

    # Minimal: group G's a p hosts share its one global link to G+1: 1/(a p) of a host's rate.
    minimal = WIRE_EFF / (DF_A * DF_P)
    m = peak("ecmp", (0.10, 0.125, 0.15, 0.25, 1.0))
    rows.append(row("Dragonfly group shift, minimal: peak accepted", "a=4 p=2 h=2 g=9", minimal,
                    m, 0.02 * minimal, "1/(a p): one global link per group pair (Kim 2008)"))
    # Valiant: 2 global hops per packet; the intermediate is never the source or destination
    # group, so G's link to G+1 idles and its other g-2 links each carry 2 a p / (g-2) x load:
    # saturation at (g-2) / (2 a p) = 7/16 (-> 1/2 for large g). Local links reach the same bound.
    valiant = WIRE_EFF * (DF_G - 2) / (2 * DF_A * DF_P)
    v = peak("valiant", (0.40, 0.42, 0.44, 0.46, 0.50, 1.0))
    rows.append(band("Dragonfly group shift, valiant: peak accepted", "a=4 p=2 h=2 g=9",
                     0.94 * valiant, 1.01 * valiant, v,
                     "(g-2)/(2 a p) channel bound, -6%/+1%"))
    # UGAL: at best the direct link carries 1/(a p) minimally and the rest goes Valiant:
    # 8 x load x (2 - m) <= g - 1 links with m a p load = 1: load <= (g - 1 + 1) / (2 a p) = 9/16.
    # It must reach at least what the better of minimal and Valiant does.
    ugal_bound = WIRE_EFF * DF_G / (2 * DF_A * DF_P)
    u = peak("ugal", (0.3, 0.5, 0.7, 0.8, 0.9, 1.0))
    rows.append(band("Dragonfly group shift, ugal: peak accepted", "a=4 p=2 h=2 g=9",
                     0.95 * max(m, v), ugal_bound, u,
                     "above 0.95 x the better of the two, below the 9/16 mixed bound"))

    # Uniform random pairs at load 0.2: a fixed trace that ends, so that the run drains and every
    # packet's receptions are in the switches' counters: links = receptions - 1 per packet.
    wiring = DragonflyWiring(DF_A, DF_P, DF_H, DF_G)
    rng = random.Random(5)
    pairs = []
    gap = (PKT + 20) * 8 / 800.0 / 0.2
    for src in range(hosts):
        t = rng.uniform(0, gap)
        while t < 20000:
            pairs.append((round(t * 1e6), src, rng.randrange(hosts)))
            t += gap
    pairs.sort()
    uniform = os.path.join(r.workdir, "dragonfly_uniform.trace")
    with open(uniform, "w") as f:
        for t, src, dst in pairs:
            f.write(f"{t}fs {src} {dst} {PKT}\n")
    for mode, fn, tol, note in (
            ("ecmp", wiring.minimal, 1e-9,
             "minimal routes of the wiring over the trace's pairs (exact)"),
            # Valiant draws the intermediate per packet: the mean of ~10,500 packets' links
            # (std ~0.7 each) is within 0.007 of its expectation; 0.03 is 4 std.
            ("valiant", wiring.valiant_mean, 0.03,
             "Valiant routes over uniform intermediates (expectation)")):
        s = r.run(DRAGONFLY, ["traffic.pattern=trace", f"traffic.trace.file={uniform}",
                              f"switch.routing.mode={mode}", "sim.warmup=1us",
                              "sim.duration=30us", "sim.drain_limit=100us"])
        pk = s["packets"]
        assert pk["in_flight"] == 0 and pk["dropped"] == 0 and pk["injected"] == len(pairs), pk
        received = sum(x["packets"]["received"] for x in s["switches"])
        expected = sum(fn(src // DF_P, dst // DF_P) for _, src, dst in pairs) / len(pairs)
        rows.append(row("Dragonfly uniform, mean links per packet", f"{mode} load=0.2",
                        expected, received / pk["delivered"] - 1, tol, note))
    return rows


def case_load_balance(r):
    """k=4 fat tree, a permutation whose every flow crosses pods (every pod sends 4 flows out and
    receives 4) at load 0.3: each flow uses 4 switch-to-switch links (edge-agg-core-agg-edge), 16
    flows on 64 directed links, so the mean link carries exactly the load. ecmp pins each flow to
    one path: a link carries load x (flows hashed onto it), an integer, some 0; spray splits every
    flow evenly over its up ports, so every link carries the load itself."""
    rows = []
    rng = random.Random(3)
    hosts, pod = 16, 4
    while True:
        dst = list(range(hosts))
        rng.shuffle(dst)
        if all(dst[h] // pod != h // pod for h in range(hosts)):
            break
    trace = os.path.join(r.workdir, "fat_tree_permutation.trace")
    write_trace(trace, list(enumerate(dst)), 0.3, 30000, 3)
    for mode in ("ecmp", "spray"):
        s = r.run(FAT_TREE, ["traffic.pattern=trace", f"traffic.trace.file={trace}",
                             f"switch.routing.mode={mode}", "sim.duration=30us"])
        load = s["throughput"]["offered_load"]
        u = [float(x["utilisation"]) / load for x in r.links()
             if not x["from"].startswith("host") and not x["to"].startswith("host")]
        assert len(u) == 64, len(u)
        mean = sum(u) / len(u)
        # The window holds ~190 packets per flow: its edges move a link by ~1 packet, 0.5%.
        rows.append(row("Fat tree k=4 permutation, mean switch link / load", mode, 1.0, mean,
                        0.01, "16 flows x 4 links on 64 links"))
        if mode == "ecmp":
            flows = [round(x) for x in u]
            rows.append(row("Fat tree k=4 permutation, link / load - nearest integer", mode, 0.0,
                            max(abs(x - n) for x, n in zip(u, flows)), 0.02,
                            "a flow keeps one path: whole flows per link"))
            rows.append(band("Fat tree k=4 permutation, max / mean link", mode, 1.5, 4.0,
                             max(u) / mean, f"{flows.count(0)} of 64 links idle, "
                             f"{sum(n >= 2 for n in flows)} carry 2+ flows"))
        else:
            # Round robin per destination: every up port gets every other packet, exact to one
            # packet of ~190 per flow per window.
            rows.append(row("Fat tree k=4 permutation, max / mean link", mode, 1.0, max(u) / mean,
                            0.02, "spray: each flow split evenly"))
    return rows


def case_structural(r):
    """The structural limits of the chip (switch.ingress, switch.datapath, switch.buffer.banks):
    each caps throughput where its own arithmetic says."""
    rows = []
    short = ["sim.duration=54us", "sim.warmup=4us", "sim.drain_limit=1us"]
    # Shared memory whose write bandwidth binds: B banks writing one cell per cycle take B cells
    # per cycle, N ports at load p bring N p (one cell per packet, one cell time = one cycle).
    n, banks = 16, 8
    for load in (0.4, 1.0):
        s = r.run(SLOTTED, short + [f"switch.ports={n}", "switch.architecture=shared_memory",
                                    f"switch.buffer.banks={banks}", "switch.buffer.bank_write_cells=1",
                                    f"traffic.load={load}"])
        t = s["throughput"]
        limit = banks / n
        rows.append(row("Shared memory, write bandwidth B x 1 cells/cycle",
                        f"N={n} B={banks} load={load}", min(t["offered_load"], limit),
                        t["accepted_load"], 0.01, "accepted = min(offered, B / N)"))
    # Reads: the same, B banks reading one cell per cycle (writes unlimited); below the limit
    # a conflict only delays a cell.
    for load in (0.4, 1.0):
        s = r.run(SLOTTED, short + [f"switch.ports={n}", "switch.architecture=shared_memory",
                                    f"switch.buffer.banks={banks}", "switch.buffer.bank_read_cells=1",
                                    f"traffic.load={load}"])
        t = s["throughput"]
        rows.append(row("Shared memory, read bandwidth B x 1 cells/cycle",
                        f"N={n} B={banks} load={load}", min(t["offered_load"], banks / n),
                        t["accepted_load"], 0.01, "accepted = min(offered, B / N)"))
    # Admissions: one pipeline admitting A packets per cycle serves N ports at load p up to A / N.
    for a in (4, 12):
        s = r.run(SLOTTED, short + [f"switch.ports={n}", "switch.ingress.pipelines=1",
                                    f"switch.ingress.admissions_per_cycle={a}", "traffic.load=1.0"])
        rows.append(row("Ingress admissions, one pipeline of A per cycle", f"N={n} A={a} load=1",
                        a / n, s["throughput"]["accepted_load"], 0.01, "accepted = A / N"))
    # The datapath through the crossbar: 64 B frames (84 B on the wire), permutation at line rate
    # on the 51.2T chip as a voq crossbar (254 B cells, speedup 1.5: a slot is 169.3 B of wire
    # time). One cell per matching caps a port at 64 B per slot; a 256 B/cycle datapath packs
    # several per matching and keeps up with line rate.
    chip = ["switch.architecture=voq", "traffic.load=1", "traffic.size=64B",
            "traffic.pattern=permutation", "sim.duration=10us", "sim.warmup=2us"]
    s = r.run(CHIP, chip + ["switch.datapath.bytes_per_cycle=0"])
    rows.append(row("64 B frames through the crossbar (voq), accepted load", "one cell per matching",
                    64 / (254 / 1.5), s["throughput"]["accepted_load"], 0.005,
                    "64 B per slot of 254/1.5 B"))
    # The datapath alone: with the buffer's 256 banks a voq chip falls behind over time at this
    # rate (bank conflicts: 0.760 of 0.762 at 10 us, 0.673 at 100 us; docs/architecture.md,
    # "Small packets"), so the datapath row is held over 100 us with banks that never conflict.
    s = r.run(CHIP, chip[:-2] + ["sim.duration=100us", "sim.warmup=10us",
                                 "switch.buffer.banks=4096"])
    t = s["throughput"]
    rows.append(row("64 B frames through the crossbar (voq), accepted load",
                    "datapath 256 B/cycle, 4096 banks, 100 us", t["offered_load"],
                    t["accepted_load"], 0.005, "accepted = offered (64/84 of line rate)"))
    # The chip as shipped (shared_memory, 256 banks of 1R1W: 256 cells/cycle each way against
    # the 56 that 64 B frames at line rate need).
    s = r.run(CHIP, chip[1:-2] + ["sim.duration=100us", "sim.warmup=10us"])
    t = s["throughput"]
    rows.append(row("64 B frames, 51.2T chip as shipped (shared_memory), accepted load",
                    "256 banks x 1R1W, 100 us", t["offered_load"], t["accepted_load"], 0.005,
                    "memory bandwidth 4.6x the demand: accepted = offered"))
    return rows


CASES = {"hol": case_hol, "pim": case_pim, "islip": case_islip, "oq": case_oq,
         "zero_load": case_zero_load, "matching": case_matching, "dragonfly": case_dragonfly,
         "load_balance": case_load_balance, "structural": case_structural}

# Case groups in files of their own (added to CASES in main()) import Runner, row and band from
# this module: run as a script, it is __main__, so it answers to `validate` too (one copy).
sys.modules.setdefault("validate", sys.modules[__name__])
NOTES = []  # their notes for docs/validation.md


def row_line(x):
    """A row of docs/validation.md's table."""
    if "lo" in x:
        exp, tol = f"{x['lo']:.4f} .. {x['hi']:.4f}", "band"
    else:
        exp, tol = f"{x['expected']:.4f}", f"±{x['tol']:.4g}"
    return (f"| {x['case']} | {x['params']} | {exp} | {x['measured']:.4f} "
            f"| {tol} | {'yes' if x['ok'] else '**NO**'} | {x['note']} |")


def check_doc(path, rows):
    """The rows this run measured, each exactly as docs/validation.md has it: the committed
    table is what the code gives today. Returns how many differ (each is printed)."""
    with open(path, encoding="utf-8") as f:
        committed = set(f.read().split("\n"))
    missing = [row_line(x) for x in rows if row_line(x) not in committed]
    for line in missing:
        print(f"STALE {path}: no row\n  {line}\n  (regenerate: validate.py --fabricsim "
              "build/fabricsim --all --write docs/validation.md --no-helper-threads)")
    return len(missing)


def markdown(rows):
    lines = [
        "# Validation against theory",
        "",
        "Generated by `testbenches/validation/validate.py --fabricsim build/fabricsim --all --write",
        "docs/validation.md`; do not edit by hand. Every row is a run of `fabricsim run` on `configs/validation/slotted.yaml`",
        "(one-cell packets, one cell time = 1 ns, 200,000 measured cell times) or on",
        "`configs/switch_51t2.yaml`, `configs/examples/` (dragonfly, fat tree) or the NIC configs (`configs/nic_400g.yaml`, `configs/nic_800g.yaml`), with `--set` overrides and the traces and message files the cases write. CTest runs the same cases",
        "(label `validation`) and fails if any row is outside its tolerance.",
        "",
        "| case | parameters | expected | measured | tolerance | ok | reference |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [row_line(x) for x in rows]
    lines += [
        "",
        "Notes:",
        "- HOL and PIM cases offer load 1.0 (every input receives a cell every cell time), so the",
        "  queues saturate. Each input has a 2,048-cell reservation (up to 64 ports; the config caps",
        "  all reservations at half the buffer, so 1,024 at 128 and 512 at 256), so every input stays backlogged",
        "  whatever order admissions happen in, and the dynamic threshold is effectively off",
        "  (alpha = 1024), so drops at a full buffer do not depend on the destination and the",
        "  saturated queues keep the i.i.d. uniform destinations the theory assumes.",
        "- For N >= 16 no exact finite-N value is published; the row's expected value is the middle",
        "  of the band 2 - sqrt(2) .. 2 - sqrt(2) + 0.26/N (the excess Table I shows at N = 8, scaled",
        "  as 1/N), and the tolerance covers the band plus 0.005.",
        "- iSLIP-1 at load 0.95 and N = 64 accepts slightly less than offered because its queues",
        "  (mean latency several hundred cell times) are still filling after the 4,000-cell-time",
        "  warm-up; the deficit shrinks with a longer warm-up.",
        "- Output-queued latency is first bit in to last bit out: one cell time to receive, the wait,",
        "  one cell time to transmit; the table compares the wait. The tolerance (3% + 0.02 cells) is",
        "  a fixed band, not a confidence interval: a single 200,000-cell-time run's mean wait has a",
        "  standard deviation that grows with the load and shrinks with N (about 0.05 cells at",
        "  N = 64, p = 0.95, but 0.145 cells, 1.9%, at N = 5, p = 0.95, measured over independent",
        "  runs). To check a small N at high load, use a longer sim.duration or several seeds.",
        "- Zero-load rows use 300 isolated packets of random size (64-9216 B) at random clock phases;",
        "  each packet's expected latency is ceil-to-core-clock(first bit + serialisation of the first",
        "  cell (cut-through) or of the packet (store-and-forward)) + the chip's 620 pipeline cycles",
        "  (+1 elastic cycle in cut-through for frames of more than one cell) + the egress preamble",
        "  + serialisation of the packet, minus the first bit time. As a crossbar (voq) the chip's",
        "  matching (2 iterations x 1 cycle, [S]) adds 2 cycles: it fits in a 2.29-cycle crossbar slot,",
        "  so every cell crosses exactly 2 cycles later; as shipped (shared_memory) there is no crossbar",
        "  and no matching. With `egress.start: no_underrun` (the chip's default) the frame's",
        "  first bit is the latest over its cells of (the cell's arrival at the egress - the wire time",
        "  of the cells before it), and not before the cycle in which its last cell has crossed, + the",
        "  preamble: docs/architecture.md.",
        "- k-cycle matching rows (`switch.scheduler.cycles_per_iteration` c, `iterations` k) run 400",
        "  isolated one-cell packets on the slotted switch at random clock phases: latency",
        "  ceil-to-edge(first bit + 1 ns) + k c cycles + 1 ns (transmit), exactly, one matching at a",
        "  time or pipelined (a pipelined matching hides the rate cost of k c > 1 slot, not the k c",
        "  cycles a cell waits for its grant; testbenches/cli/scheduler_timing_test.py checks the rest:",
        "  iSLIP-4 pays 3 ns more than iSLIP-1 at load 0.1 when pipelined, more than twice that one",
        "  matching at a time, and carries bursty load 0.9 that iSLIP-1 does not).",
        "- Dragonfly rows run `configs/examples/dragonfly.yaml` (a = 4, p = 2, h = 2, g = 9, 72 hosts,",
        "  800 Gb/s, 4096 B packets; frames are 4096/4116 of the wire, the factor e in the bounds) on",
        "  traces written by the case. Group shift: host k sends to host k + a p (every host of group",
        "  G to the same host of G + 1), periodically at the offered load from a random phase; the",
        "  row is the peak accepted load of a sweep (minimal 0.10-1.0, valiant 0.40-1.0, ugal",
        "  0.3-1.0; the sweep is printed by the case). Bounds: minimal e/(a p) = 0.1244 (the group's",
        "  one global link to G + 1); valiant e (g - 2)/(2 a p) = 0.4354 (two global hops a packet",
        "  over the g - 2 links whose far group is neither the source's nor the destination's: the",
        "  link to G + 1 idles; local links reach the same bound); ugal at most e g/(2 a p) = 0.5598",
        "  (the direct link used minimally at line rate, the rest Valiant). Measured sweep (accepted",
        "  at offered 1.0 in brackets): minimal peak 0.1244 (0.0955), valiant 0.4187 at 0.46",
        "  (0.2792), ugal 0.5347 at 0.70 (0.4715). Past its bound a lossy dragonfly loses",
        "  throughput: no link-level flow control throttles the hosts, and the routers' input-fair",
        "  arbiters give the injected packets' ports the same share of a global link as the ports",
        "  of packets already in transit (no transit priority, no virtual channels), so the",
        "  overloaded first hops starve the second: valiant keeps 4% under its fluid bound at the",
        "  knee (per-packet random intermediates load links unevenly over short spans) and falls",
        "  to two thirds of it at load 1.0. UGAL-L decides on the source router's own queues: a router",
        "  that does not hold the global link sees only its local link to the one that does, which",
        "  fills only once that local link itself is overloaded, so ugal accepts less than offered",
        "  from load 0.3 (0.29 of 0.30, 0.42 of 0.50) yet peaks above valiant by also using the",
        "  direct link. The minimal tolerance is 2% (one packet per link at the window's edges is",
        "  0.3%); valiant's band is -6%/+1% of its bound; ugal must reach 0.95 x the better of the",
        "  two peaks.",
        "- Dragonfly uniform rows: a fixed trace of uniform random (source, destination) pairs",
        "  (destination may equal source) at load 0.2 that ends before the run does, so every packet",
        "  is delivered and the switches' `received` counters sum to (links + 1) per packet. The",
        "  expected value is the mean over the trace's own pairs of the wiring's path lengths",
        "  (minimal: exact; valiant: the mean over its g - 2 equally likely intermediate groups),",
        "  computed by an independent Python model of docs/topologies.md's wiring (2.3056 and",
        "  3.9563 over all pairs). Minimal must match exactly; valiant's per-packet draw leaves a",
        "  standard error of ~0.007 on ~10,500 packets, tolerance 0.03.",
        "- Fat tree rows run `configs/examples/fat_tree_k4.yaml` on a trace of a random permutation",
        "  in which every flow leaves its pod (seeded; each pod also receives 4 flows) at load 0.3:",
        "  16 flows x 4 switch-to-switch links on 64 directed links (links.csv rows between two",
        "  switches), so the mean link carries the load exactly. ecmp keeps each flow on one path: a",
        "  link carries a whole number of flows (measured 0 on 21 links, 2 or 3 on 19), max / mean",
        "  3.00; spray splits every flow over its up ports round robin: every link carries the load,",
        "  max / mean 1.009 (the window's edges: ~190 packets per flow).",
        "- Structural rows (switch.ingress, switch.datapath, switch.buffer.banks; the slotted",
        "  configuration has them all off, explicitly) run 50,000 cell times. Shared memory: every",
        "  cell is written on arrival and read on its way to the egress; a bank writes (reads) one",
        "  cell per cycle and serves its requests in order, cell id c in bank c mod B, so B banks",
        "  take at most B cells per cycle and, once a backlog spreads over every bank, exactly B:",
        "  accepted = min(offered, B / N) cells per port per cycle, within 1%. Below the limit a",
        "  bank conflict only delays a cell. Ingress: one pipeline admitting A packets per cycle",
        "  (the rest wait, oldest first, never dropped for it) passes A / N of line rate under",
        "  saturation. 64 B frames through the 51.2T chip's crossbar (voq, permutation, load 1:",
        "  offered 64/84 of line rate): one cell per matching passes 64 B per slot (254 B / 1.5),",
        "  0.378; a 256 B/cycle datapath carries several frames per matching and all of the",
        "  offered load (with the chip's 256 banks of one read and one write per cycle); so does",
        "  the chip as shipped (shared_memory: 256 cells per cycle each way, 56 needed).",
        "- Leaf-spine uplink utilisation is checked by `testbenches/cli/fabric_test.py` (class",
        "  `Uplinks`, ctest `validation.uplinks`, label validation): uniform traffic at measured",
        "  offered load p on L leaves of H hosts and S spines; the mean uplink, and the mean spine",
        "  port towards a leaf, carry p H (L-1)/L / S of a host link with traffic.self (a host sends",
        "  to all H L hosts alike, itself included) and p H [H(L-1)/(HL-1)] / S without; within 2%",
        "  (the destinations' random spread over 58 us). L=4 S=2 H=2: 0.3676 vs 0.3680 with self",
        "  traffic, 0.4186 vs 0.4203 without (14% above the (L-1)/L figure); L=3 S=4 H=8 at load",
        "  0.4 without self traffic.",
    ] + NOTES + [
        "",
    ]
    return "\n".join(lines)


def main():
    import validate_nic_transport
    import validate_workload
    CASES.update(validate_nic_transport.CASES)
    NOTES.extend(validate_nic_transport.NOTES)
    import validate_nic_rud
    CASES.update(validate_nic_rud.CASES)
    NOTES.extend(validate_nic_rud.NOTES)
    import validate_nic_cc
    CASES.update(validate_nic_cc.CASES)
    NOTES.extend(validate_nic_cc.NOTES)
    import validate_nic_nscc
    CASES.update(validate_nic_nscc.CASES)
    NOTES.extend(validate_nic_nscc.NOTES)
    import validate_nic_timely
    CASES.update(validate_nic_timely.CASES)
    NOTES.extend(validate_nic_timely.NOTES)
    CASES.update(validate_workload.CASES)
    NOTES.extend(validate_workload.NOTES)
    import validate_llr
    CASES.update(validate_llr.CASES)
    NOTES.extend(validate_llr.NOTES)
    import validate_cbfc
    CASES.update(validate_cbfc.CASES)
    NOTES.extend(validate_cbfc.NOTES)
    import validate_box
    CASES.update(validate_box.CASES)
    NOTES.extend(validate_box.NOTES)
    import validate_scale_up
    CASES.update(validate_scale_up.CASES)
    NOTES.extend(validate_scale_up.NOTES)
    import validate_pat
    CASES.update(validate_pat.CASES)
    NOTES.extend(validate_pat.NOTES)
    import validate_energy
    CASES.update(validate_energy.CASES)
    NOTES.extend(validate_energy.NOTES)
    import validate_packet_model
    CASES.update(validate_packet_model.CASES)
    NOTES.extend(validate_packet_model.NOTES)
    import validate_innet
    CASES.update(validate_innet.CASES)
    from validate_nic_timing import (case_nic_goodput, case_nic_read_goodput,
                                     case_nic_read_timing, case_nic_timing)
    CASES.update(nic_timing=case_nic_timing, nic_goodput=case_nic_goodput,
                 nic_read_timing=case_nic_read_timing, nic_read_goodput=case_nic_read_goodput)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--fabricsim", required=True)
    ap.add_argument("--case", choices=sorted(CASES), action="append")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--write", help="write the Markdown table to this file")
    ap.add_argument("--check-doc", metavar="FILE",
                    help="fail unless every measured row is in FILE exactly (docs/validation.md "
                         "as committed is what the code gives)")
    ap.add_argument("--no-helper-threads", action="store_true",
                    help="run the simulations with sim.traffic_thread=false (faster when other "
                         "work shares the CPUs, e.g. under ctest -j; results are the same)")
    a = ap.parse_args()
    names = sorted(CASES) if a.all else (a.case or [])
    if not names:
        ap.error("give --case NAME or --all")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        r = Runner(a.fabricsim, d, helper_threads=not a.no_helper_threads)
        for name in names:
            for x in CASES[name](r):
                rows.append(x)
                exp = (f"{x['lo']:.4f}..{x['hi']:.4f}" if "lo" in x
                       else f"{x['expected']:.4f} (tol {x['tol']:.4g})")
                print(f"{'PASS' if x['ok'] else 'FAIL'} {x['case']} {x['params']}: expected "
                      f"{exp} measured {x['measured']:.4f}", flush=True)
    if a.write:
        with open(a.write, "w") as f:
            f.write(markdown(rows))
    failed = sum(not x["ok"] for x in rows)
    print(f"{len(rows) - failed} passed, {failed} failed")
    stale = check_doc(a.check_doc, rows) if a.check_doc else 0
    return 1 if failed or stale else 0


if __name__ == "__main__":
    sys.exit(main())
