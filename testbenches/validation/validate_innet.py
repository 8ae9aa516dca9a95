"""Validation of in-network all-reduce (issue #41 part 2: switch.aggregation, allreduce_innet)
against closed forms on an ideal fabric (link.model ideal, no flow control, no congestion
control): a leaf-spine of L leaves of H hosts, one spine, every switch with an aggregation unit;
a host's link at line rate B.

  busbw gain over the ring   In-network all-reduce moves S up and S down each host's link (at
                             once, the two directions), the ring 2(n-1)/n S each way, so with
                             the units keeping up T_innet = S/B + 2d (alpha + w(c)) + tail and
                             T_ring = 2(n-1)/n S/B + ...: for large S the busbw ratio tends to
                             2(n-1)/n (n = L H ranks, d the tree's depth of units, c the chunk).
                             Row: busbw_innet / busbw_ring = 2(n-1)/n within 8% (the pipeline's
                             fill, 2d chunks of m, and the ring's own).
  oversubscribed unit        A unit whose throughput U (its port's rate) is below its children's
                             k B takes their chunks in one after another, and its parent's result
                             too: a leaf unit's port carries (k + 1) S each way, T = (k+1) S / U.
                             U = B, k = H children at every leaf: busbw falls to 1/(H+1) of the
                             units-keep-up figure, within 10%.
  buffer-bound               A buffer of W chunks: a host's chunk j + W waits for chunk j's
                             result, so in steady state a chunk takes R / W, R one chunk's round
                             trip up the tree and back: throughput = W c / R. Rows: the steady
                             state's time a chunk, (T(32 chunks) - T(16)) / 16, for W = 1 within
                             [0.90, 1.0] of a one-chunk call's time (R plus that call's ACKs and
                             completion), and for W = 2 half that for W = 1 within 3%.

The units' endpoints are the run's NIC model (nic.pcie included): the rows use a host interface
fast enough (PCIe 6.0 x32) that a unit's DMA keeps up with its children (PCIe would otherwise
bound a unit at ~1.9 Tb/s). Registered in validate.py's CASES: validate.py --case innet_busbw,
innet_buffer.
"""
import csv
import os

from validation_common import ROOT, band, row

NIC_800G = os.path.join(ROOT, "configs", "nic_800g.yaml")
B_GBPS = 200  # ports at 200G: a leaf unit's 4 children (800G) fit PCIe 6.0 x32
FABRIC = ["link.model=ideal", "flow_control.mode=none", "flow_control.ecn.enabled=false",
          "nic.cc=none", "switch.ports=8", f"switch.port_speed={B_GBPS}Gbps", "sim.duration=1us",
          "sim.warmup=0ns", "sim.drain_limit=50ms", "workload.tc=3", "traffic.pattern=workload",
          "topology.kind=leaf_spine", "topology.leaves=2", "topology.spines=1",
          "topology.hosts_per_leaf=4", "nic.pcie.generation=6", "nic.pcie.lanes=32",
          "nic.pcie.latency=10ns", "nic.pcie.completer_latency=10ns"]
UNITS = ["switch.aggregation.enabled=true"]


def call(r, algo, size, chunk, extra=()):
    s = r.run(NIC_800G, FABRIC + list(extra) + [
        f"workload.collective={algo}", f"workload.bytes={size}B", f"workload.chunk={chunk}B"])
    assert s["workload"]["nodes_unfinished"] == 0, s["workload"]
    with open(os.path.join(r.last_out, "collectives.csv")) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1 and rows[0]["state"] == "finished", rows
    return float(rows[0]["time_ns"]), float(rows[0]["busbw_GBps"])


def case_innet_busbw(r):
    n, hosts = 8, 4
    size, chunk = 16 << 20, 128 << 10
    _, ring = call(r, "allreduce_ring", size, chunk)
    _, innet = call(r, "allreduce_innet", size, chunk, UNITS)
    _, slow = call(r, "allreduce_innet", size, chunk,
                   UNITS + [f"switch.aggregation.throughput={B_GBPS}Gbps"])
    case = "In-network all-reduce: busbw against closed forms (ideal leaf-spine, 2 x 4 hosts)"
    return [
        row(case, f"innet / ring busbw, n={n} S=16MiB c=128KiB", 2 * (n - 1) / n, innet / ring,
            0.08 * 2 * (n - 1) / n, f"ring {ring:.2f} GB/s, innet {innet:.2f} GB/s"),
        row(case, f"unit at port rate / keeping up, k={hosts}", 1 / (hosts + 1), slow / innet,
            0.1 / (hosts + 1), f"{slow:.2f} vs {innet:.2f} GB/s"),
    ]


def case_innet_buffer(r):
    chunk = 64 << 10
    case = "In-network all-reduce: buffer-bound throughput = buffer / round trip"
    one, _ = call(r, "allreduce_innet", chunk, chunk, UNITS + [f"switch.aggregation.buffer={chunk}B"])
    slope = {}
    for w in (1, 2):
        t = [call(r, "allreduce_innet", m * chunk, chunk,
                  UNITS + [f"switch.aggregation.buffer={w * chunk}B"])[0] for m in (16, 32)]
        slope[w] = (t[1] - t[0]) / 16  # ns a chunk in steady state
    return [
        band(case, "W=1: a chunk's time / one chunk's call (64KiB)", 0.90, 1.0, slope[1] / one,
             f"{slope[1]:.0f} ns a chunk vs {one:.0f} ns for a call of one chunk (its ACKs and "
             "completion, after its result, are not in the steady state's round)"),
        row(case, "W=2 / W=1: a chunk's time", 0.5, slope[2] / slope[1], 0.03,
            f"{slope[2]:.0f} vs {slope[1]:.0f} ns: throughput W c / R"),
    ]


CASES = {"innet_busbw": case_innet_busbw, "innet_buffer": case_innet_buffer}
NOTES = []
