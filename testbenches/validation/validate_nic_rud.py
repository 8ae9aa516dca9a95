"""Validation of the UEC-style RUD transport, entropy spraying and packet trimming (issue #17), on
configs/nic_800g.yaml with message files the cases write. validate.py adds them to its CASES:
nic_spray, nic_trim, nic_rud_loss.
"""
import csv
import os
import random

from validation_common import band, row
from validate_nic_transport import (NIC_800G, corrupted_messages, run_tolerating_violations,
                                    write_messages, write_wire_bytes)

LINE_GBPS = 800
ENTROPY = "switch.routing.hash_fields=src,dst,entropy"


def fct_rows(out):
    with open(os.path.join(out, "fct.csv")) as f:
        return list(csv.DictReader(f))


def run_file(r, name, messages, extra):
    path = os.path.join(r.workdir, name)
    write_messages(path, messages)
    s = r.run(NIC_800G, ["traffic.pattern=messages", f"traffic.messages.file={path}",
                         "sim.warmup=0ns", "sim.duration=1us", "nic.cc=none",
                         "stats.occupancy_interval=100us"] + extra)
    return s, fct_rows(r.last_out)


def goodput_gbps(x):
    """A message's goodput: its bytes over first byte out .. last byte delivered."""
    return int(x["bytes"]) * 8 / (float(x["last_byte_delivered_ns"]) -
                                  float(x["first_byte_out_ns"]))


# --- 1. Spraying: permutation on a fat tree --------------------------------------------------------

SPRAY_SIZE = 8 << 20


def derangement(n, seed):
    rnd = random.Random(seed)
    while True:
        p = list(range(n))
        rnd.shuffle(p)
        if all(p[i] != i for i in range(n)):
            return p


def case_nic_spray(r):
    """Permutation traffic on a k = 4 fat tree (16 hosts, 4 core paths between pods; the 800G
    config with its PFC): every host posts one 8 MiB RDMA WRITE at t = 0 to its partner of a
    random derangement (two seeds). Ideal per flow (full bisection): S / (S_wire / B + L), L the
    latency of a lone message from first byte out to last byte delivered, measured alone on the
    same fabric (S_wire / B the closed form of validate_nic_transport). RUD with the switches
    hashing entropy (a new entropy per packet): the mean flow within 10% of the ideal. RC
    (go-back-N) with flow hashing (src, dst): flows that share a link share its rate, so the mean
    is well below (< 80% of the ideal)."""
    rows = []
    base = ["topology.kind=fat_tree", "topology.k=4"]
    lone_s, lone = run_file(r, "spray_lone.txt", [(0, 0, 13, SPRAY_SIZE)], base)
    wire_ns = write_wire_bytes(SPRAY_SIZE) * 8 / LINE_GBPS
    latency = float(lone[0]["last_byte_delivered_ns"]) - float(lone[0]["first_byte_out_ns"]) \
        - wire_ns
    ideal = SPRAY_SIZE * 8 / (wire_ns + latency)
    for seed in (3, 5):
        p = derangement(16, seed)
        msgs = [(0, i, p[i], SPRAY_SIZE) for i in range(16)]
        got = {}
        for label, extra in (("rud", ["nic.transport=rud", ENTROPY]),
                             ("rc", ["nic.transport=go_back_n"])):
            s, rows_ = run_file(r, f"spray_{seed}.txt", msgs, base + extra)
            assert all(x["state"] == "completed" for x in rows_) and len(rows_) == 16
            g = [goodput_gbps(x) for x in rows_]
            t = s["transport"]
            got[label] = (sum(g) / len(g), min(g), t)
        rud, rc = got["rud"], got["rc"]
        rows.append(band("NIC spraying, k=4 fat tree permutation: RUD mean flow / ideal",
                         f"seed={seed}, 16 x 8 MiB", 0.90, 1.0 + 1e-6, rud[0] / ideal,
                         f"RUD + entropy mean {rud[0]:.1f} Gb/s (min {rud[1]:.1f}), ideal "
                         f"{ideal:.1f} (lone latency {latency:.0f} ns); out of order "
                         f"{rud[2]['out_of_order_packets']}, resent "
                         f"{rud[2]['retransmitted_packets']}, timeouts {rud[2]['timeouts']}"))
        rows.append(band("NIC spraying, k=4 fat tree permutation: RC flow-hash mean / ideal",
                         f"seed={seed}, 16 x 8 MiB", 0.0, 0.80, rc[0] / ideal,
                         f"RC (go-back-N) + src,dst hash mean {rc[0]:.1f} Gb/s (min "
                         f"{rc[1]:.1f}): ECMP collisions"))
    return rows


# --- 2. Trimming: incast on lossy ports ----------------------------------------------------------

TRIM_N, TRIM_SIZE = 15, 1 << 20


def case_nic_trim(r):
    """15-to-1 incast of 1 MiB RDMA WRITEs at t = 0 with RUD on lossy ports (flow_control.mode
    none, no congestion control) and a 4 MB buffer (the incast needs 15 MiB): with
    switch.trimming every message completes with no timeout, the last within 1.5x of
    N S_wire / B + RTT (RTT from a lone message, as nic_incast); the trimmed headers share the
    bottleneck with the data (each costs 84 B of wire), which is where the rest goes. Without
    trimming the drops of the message tails leave nothing behind them to reveal the hole: timeouts
    occur."""
    rows = []
    base = ["switch.ports=16", "nic.transport=rud", "flow_control.mode=none",
            "switch.buffer.size=4MB", "sim.drain_limit=10000us",
            "nic.rc.timeout=100us"]  # a lossy fabric's timer (the shipped 4.29 s: seconds idle)
    wire_ns = write_wire_bytes(TRIM_SIZE) * 8 / LINE_GBPS
    _, lone = run_file(r, "trim_lone.txt", [(0, 1, 0, TRIM_SIZE)], base)
    rtt = float(lone[0]["completion_ns"]) - wire_ns
    expected = TRIM_N * wire_ns + rtt
    msgs = [(0, s, 0, TRIM_SIZE) for s in range(1, TRIM_N + 1)]
    res = {}
    for trim in (True, False):
        s, rows_ = run_file(r, "trim.txt", msgs,
                            base + [f"switch.trimming.enabled={'true' if trim else 'false'}"])
        assert all(x["state"] == "completed" for x in rows_) and len(rows_) == TRIM_N, rows_
        last = max(float(x["completion_ns"]) for x in rows_)
        res[trim] = (last, s)
    last, s = res[True]
    t = s["transport"]
    trimmed = s["counters"]["switch"]["trimmed_packets"]
    rows.append(row("NIC trimming, 15-to-1 incast, lossy: timeouts", "RUD, trimming on",
                    0, t["timeouts"], 0,
                    f"{trimmed} packets trimmed, {t['naks_sent']} NACKs, "
                    f"{t['retransmitted_packets']} resent, dropped {s['packets']['dropped']}"))
    rows.append(band("NIC trimming, 15-to-1 incast: last completion / (N S_wire / B + RTT)",
                     "RUD, trimming on", 1.0 - 1e-5, 1.5, last / expected,
                     f"{last / 1000:.1f} us vs {expected / 1000:.1f} us (RTT {rtt:.0f} ns); "
                     f"header bytes on the bottleneck {trimmed * 84 / 1e6:.1f} MB beside "
                     f"{TRIM_N * TRIM_SIZE / 1e6:.1f} MB of data"))
    last_d, sd = res[False]
    td = sd["transport"]
    rows.append(band("NIC trimming, 15-to-1 incast, lossy: timeouts without trimming",
                     "RUD, trimming off", 1, 1e9, td["timeouts"],
                     f"{sd['packets']['dropped']} dropped, {td['retransmitted_packets']} resent, "
                     f"last completion {last_d / 1000:.1f} us"))
    return rows


# --- 3. A lossy link: every message intact --------------------------------------------------------

def case_nic_rud_loss(r):
    """nic_loss's workload (uniform 1 MiB WRITEs at load 0.5 for 100 us, pre-FEC BER 1e-3,
    drained) with RUD, seeds 1-4: every message completes intact (the NIC's end-of-run check)."""
    posted = intact = bad = timeouts = retx = 0
    for seed in (1, 2, 3, 4):
        s = run_tolerating_violations(
            r, NIC_800G, [f"sim.seed={seed}", "nic.transport=rud", "link.phy.pre_fec_ber=1e-3",
                          "nic.rc.timeout=100us",
                          "sim.duration=100us", "sim.warmup=0ns", "sim.drain_limit=10000us",
                          "stats.occupancy_interval=100us"])
        t = s["transport"]
        b = corrupted_messages(s)
        posted += t["messages_posted"]
        intact += t["messages_completed"] - b
        bad += b
        timeouts += t["timeouts"]
        retx += t["retransmitted_packets"]
        lost = s["packets"]["lost_on_links"]
    return [row("NIC loss recovery (BER 1e-3): messages completed intact", "rud, seeds 1-4",
                posted, intact, 0,
                f"{posted} posted, {bad} corrupted; {retx} resent, {timeouts} timeouts "
                f"(seed 4: {lost} frames lost on links)")]


CASES = {"nic_spray": case_nic_spray, "nic_trim": case_nic_trim, "nic_rud_loss": case_nic_rud_loss}

NOTES = [
    "- NIC spraying (`validate_nic_rud.py`): a k = 4 fat tree of the 800G chip, permutation of",
    "  16 x 8 MiB WRITEs at t = 0 (random derangements, seeds 3 and 5), cc none, PFC as the",
    "  config ships. Ideal per flow S / (S_wire / B + L), L a lone message's latency (first byte",
    "  out to last byte delivered, less its serialisation). RUD with `switch.routing.hash_fields`",
    "  src,dst,entropy sprays each flow over the 4 core paths (a new entropy per packet, cycling);",
    "  RC with the (src, dst) hash keeps each flow on one path, and flows that collide share it.",
    "- NIC trimming: 15-to-1 incast, 1 MiB WRITEs, RUD, lossy ports, 4 MB buffer, cc none. With",
    "  trimming the senders resend on each NACK at line rate, so the bottleneck also carries the",
    "  trimmed headers (84 B of wire each): the incast takes about (data + headers) / B, within",
    "  1.5x of N S_wire / B + RTT; no timeouts. Without trimming, timeouts recover the tails.",
    "- NIC RUD loss: nic_loss's workload with nic.transport rud: every message intact.",
]
