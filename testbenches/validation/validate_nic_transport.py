"""Validation of the RDMA NIC's transport (issue #17): DCQCN fairness, incast completion time and
loss recovery, each against a closed form or published behaviour, on configs/nic_800g.yaml or
configs/nic_400g.yaml with message files the cases write (docs/trace-format.md, message
workloads). validate.py adds them to its CASES: nic_dcqcn, nic_incast, nic_loss.
"""
import csv
import json
import os
import re

from validation_common import ROOT, band, row

NIC_800G = os.path.join(ROOT, "configs", "nic_800g.yaml")
NIC_400G = os.path.join(ROOT, "configs", "nic_400g.yaml")

MTU = 4096          # nic.packet.mtu of both configs
HEADERS = 62        # RoCEv2 over IPv4: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4
RETH = 16           # on an RDMA WRITE's first (or only) packet
FRAMING = 20        # Ethernet: 8 B preamble + SFD, 12 B inter-frame gap
LOSSLESS_TC = 3     # the configs' lossless priority (PFC and ECN)


def write_wire_bytes(size):
    """Wire bytes of an RDMA WRITE of `size` bytes: ceil(size / MTU) frames of payload + 62 B
    headers + 20 B framing, 16 B of RETH on the first."""
    packets = -(-size // MTU)
    return size + packets * (HEADERS + FRAMING) + RETH


def write_messages(path, messages):
    """messages: (start_ns, src, dst, bytes) in time order, as RDMA WRITEs on the lossless TC."""
    with open(path, "w") as f:
        f.write("# start src dst bytes verb\n")
        for start, src, dst, size in messages:
            f.write(f"{start}ns {src} {dst} {size} write tc={LOSSLESS_TC}\n")


def fct_rows(r):
    with open(os.path.join(r.last_out, "fct.csv")) as f:
        return list(csv.DictReader(f))


def run_messages(r, config, name, messages, extra, horizon=False):
    path = os.path.join(r.workdir, name)
    write_messages(path, messages)
    s = r.run(config, ["traffic.pattern=messages", f"traffic.messages.file={path}",
                       "sim.warmup=0ns"] + extra, horizon=horizon)
    return s, fct_rows(r)


def delivered_at(points, t):
    """Bytes delivered by time t, linear between message deliveries: points are (time, cumulative
    bytes) in time order, starting at (first byte out, 0)."""
    if t <= points[0][0]:
        return 0.0
    for (t0, b0), (t1, b1) in zip(points, points[1:]):
        if t <= t1:
            return b0 + (b1 - b0) * (t - t0) / (t1 - t0)
    return float(points[-1][1])


def jain(x):
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x))


# --- 1. DCQCN: two flows on one bottleneck converge to equal shares ------------------------------

DCQCN_MSG = 1 << 20  # 1 MiB messages, posted back to back: a flow's delivery curve in 1 MiB steps


def flow_curves(rows):
    """Per (src, dst, qp): [(time ns, cumulative bytes delivered)], from the first byte out."""
    flows = {}
    for x in rows:
        if not x["last_byte_delivered_ns"]:
            continue
        key = (int(x["src"]), int(x["dst"]), int(x["qp"]))
        flows.setdefault(key, []).append(
            (float(x["first_byte_out_ns"]), float(x["last_byte_delivered_ns"]), int(x["bytes"])))
    curves = {}
    for key, ms in flows.items():
        ms.sort(key=lambda m: m[1])
        pts, total = [(ms[0][0], 0)], 0
        for _, t, b in ms:
            total += b
            pts.append((t, total))
        curves[key] = pts
    return curves


def rates_gbps(curves, keys, t0, t1):
    return [(delivered_at(curves[k], t1) - delivered_at(curves[k], t0)) * 8 / (t1 - t0)
            for k in keys]


def dcqcn_run(r, flows, horizon_us, extra):
    """flows: (src, start_ns, messages) to host 2, each a stream of 1 MiB WRITEs posted at its
    start, interleaved; the run stops at the horizon (messages still in flight are not used).
    Four ports: the other 60 of the chip would carry nothing."""
    msgs = sorted((start, k, src, 2, DCQCN_MSG) for src, start, n in flows for k in range(n))
    s, rows = run_messages(r, NIC_800G, "dcqcn.txt", [m[:1] + m[2:] for m in msgs],
                           ["switch.ports=4", "nic.cc=dcqcn", f"sim.duration={horizon_us}us",
                            "sim.drain_limit=0us", "stats.occupancy_interval=100us"] + extra,
                           horizon=True)
    return s, flow_curves(rows)


def case_nic_dcqcn(r):
    """Hosts 0 and 1 each stream 1 MiB RDMA WRITEs (1,200 posted at t=0, more than 10 ms can
    carry) to host 2 on the 800G config under DCQCN with the configs' ECN (kmin 800 KB): their
    shares of host 2's link, from the delivery times of their messages (fct.csv), over [1 ms,
    the end of the 10 ms run]: Jain index >= 0.99 (DCQCN paper: flows on a bottleneck converge to
    equal shares). Four seeds (the ECN marks are random, so the first cuts differ)."""
    rows = []
    skip, horizon_us, window = 1e6, 10000, 500e3
    for seed in (1, 2, 3, 4):
        s, curves = dcqcn_run(r, [(0, 0, 1200), (1, 0, 1200)], horizon_us, [f"sim.seed={seed}"])
        keys = sorted(curves)
        assert len(keys) == 2, keys
        end = min(curves[k][-1][0] for k in keys)  # both backlogged up to here
        x = rates_gbps(curves, keys, skip, end)
        # Convergence: the first 500 us window from which every later one has Jain >= 0.99.
        per_window, t = [], 0.0
        while t + window <= end:
            per_window.append((t, jain(rates_gbps(curves, keys, t, t + window))))
            t += window
        since = None
        for t, j in per_window:
            if j < 0.99:
                since = None
            elif since is None:
                since = t
        conv = f"{since / 1e6:.1f} ms" if since is not None else "never"
        rows.append(band("NIC DCQCN, 2 flows on one 800G link: Jain index after 1 ms",
                         f"seed={seed}, 1-{end / 1e6:.1f} ms", 0.99, 1.0, jain(x),
                         f"{x[0]:.1f} / {x[1]:.1f} Gb/s (sum {sum(x):.1f}); all later 500 us "
                         f"windows >= 0.99 from: {conv}; CNPs {s['transport']['cnps_sent']}"))
    return rows


# --- 2. Incast: N-to-1 of equal messages in N S / B + one round trip -----------------------------

def incast_last_completion(r, config, senders, size, cc, extra):
    """Hosts 1..senders each post one RDMA WRITE of `size` to host 0 at t=0: the last message's
    completion (its send CQE), in ns."""
    msgs = [(0, src, 0, size) for src in range(1, senders + 1)]
    s, rows = run_messages(r, config, f"incast_{senders}.txt", msgs,
                           [f"nic.cc={cc}", "sim.duration=1us"] + extra)
    t = s["transport"]
    assert t["messages_completed"] == senders == len(rows), t
    assert all(x["state"] == "completed" for x in rows)
    return max(float(x["completion_ns"]) for x in rows), s


def case_nic_incast(r):
    """N-to-1 incast of equal messages at t=0: the last completes N S_wire / B plus one round trip
    after the start, B the receiver's line rate, S_wire a message's wire bytes (the UEC htsim
    incast checks, 15-to-1 and 127-to-1, compare the same way). The round trip (everything of a
    lone message's FCT but its serialisation: doorbell, WQE fetch, payload read, the switch, the
    ACK and the CQE) is measured from one message alone on the same fabric."""
    rows = []
    for label, config, line_gbps, ports, n, size in (
            ("800G", NIC_800G, 800, 16, 15, 1 << 20),
            ("400G", NIC_400G, 400, 128, 127, 256 << 10)):
        extra = [f"switch.ports={ports}", "sim.drain_limit=10000us",
                 "stats.occupancy_interval=10us"]
        wire_ns = write_wire_bytes(size) * 8 / line_gbps
        # HPCC holds the receiver's link at eta = 0.95: N S / (eta B) and its first round trip
        # (1.04-1.15x); at 127-to-1 its one-packet floors overfill a 1.5 us pipe (a note).
        for cc in ("none", "dcqcn", "hpcc") if n < 100 else ("none", "dcqcn"):
            lo, hi = (1.04, 1.15) if cc == "hpcc" else (1.0 - 1e-5, 1.10)
            lone, _ = incast_last_completion(r, config, 1, size, cc, extra)
            rtt = lone - wire_ns
            last, s = incast_last_completion(r, config, n, size, cc, extra)
            expected = n * wire_ns + rtt
            t = s["transport"]
            # Lower end (none, dcqcn): N S_wire / B + RTT is a bound up to the switch clock's
            # phase (a fraction of a cycle, < 1 ns in 163 us) that differs between the lone
            # message and the incast's last.
            rows.append(band("NIC incast: last completion / (N S_wire / B + RTT)",
                             f"{label} {n}-to-1 S={size >> 10}KiB cc={cc}", lo, hi,
                             last / expected,
                             f"{last / 1000:.2f} us vs {expected / 1000:.2f} us "
                             f"(RTT {rtt:.0f} ns); CNPs {t['cnps_sent']}, timeouts "
                             f"{t['timeouts']}, resent {t['retransmitted_packets']}, pauses "
                             f"{s['flow_control']['hosts']['pause_frames_received']}, "
                             f"switch buffer peak {s['buffer']['peak_bytes_run'] / 1e6:.1f} MB"))
    return rows


def slowdown_rows(r, label, config, messages, extra, exact):
    """Messages posted far apart (each finds the fabric idle): fct.csv's ideal_fct_ns (the
    replay alone on the idle fabric, models/sim/idle_fabric.h) against the FCT the run measured,
    to the ps when `exact` (every message of a kind of its own: replayed at its own start),
    else within 1 ns (a message of a kind seen before reuses its time: the chips' clock phase)."""
    s, rows = run_messages(r, config, f"slowdown_{r.count}.txt", messages,
                           ["sim.duration=1us", "sim.drain_limit=10000us"] + extra)
    assert len(rows) == len(messages) and all(x["state"] == "completed" for x in rows), rows
    worst = max(abs(float(x["fct_ns"]) - float(x["ideal_fct_ns"])) for x in rows)
    sd = s["transport"]["slowdown"]
    assert sd["exact"], sd
    return [row("NIC slowdown: an idle-fabric message's FCT - its replay alone (ns)",
                f"{label}, {len(rows)} messages" + ("" if exact else ", kinds repeated"),
                0.0, worst, 0.0 if exact else 1.0,
                f"slowdown p50 {sd['p50']:.6f} max {sd['max']:.6f}")]


def case_nic_slowdown(r):
    """fct.csv's slowdown: a message alone on an idle fabric has slowdown 1 (its measured FCT
    equals the replay's), on one switch and across 1, 3 and 5 switches of a k = 4 fat tree, at
    400G and 800G, on the shared-memory chip as shipped; and the last of an N-to-1 incast's
    slowdown follows N S_wire / B + RTT over S_wire / B + RTT (the nic_incast closed form)."""
    rows = []
    gap = 60000  # ns: each message finds the fabric idle
    sizes = (256, 4096, 65536, 300000, 1 << 20)
    # Distinct sizes (each its own kind), starts at odd nanoseconds (assorted clock phases).
    one = [(i * gap + 1 + i * 7, 0, 1 + i % 3, s) for i, s in enumerate(sizes)]
    for label, config in (("400G single switch", NIC_400G), ("800G single switch", NIC_800G)):
        rows += slowdown_rows(r, label, config, one, [], True)
    fat = ["topology.kind=fat_tree", "topology.k=4", "switch.ports=4"]
    # k = 4: hosts 0, 1 share an edge switch; 2, 3 the pod's other; 4.. other pods.
    hops = [(i * gap + 3 + i * 11, 0, dst, s) for i, (dst, s) in
            enumerate(((1, 4096), (3, 65536), (15, 1 << 20), (5, 300000), (2, 256)))]
    rows += slowdown_rows(r, "400G fat tree k=4 (1, 3, 5 switches)", NIC_400G, hops, fat, True)
    # The same kind again at other phases: the cached time, within a fraction of a cycle.
    again = [(i * gap + 5 + i * 13, 0, 15, 65536) for i in range(6)]
    rows += slowdown_rows(r, "400G fat tree k=4, 5 switches", NIC_400G, again, fat, False)
    # Incast: 15 x 1 MiB to host 0 at 800G (as nic_incast): the replay of a lone message is
    # the lone message's measured FCT, and the last message's slowdown is (N S_wire / B + RTT)
    # / (S_wire / B + RTT) within nic_incast's band.
    n, size, line_gbps = 15, 1 << 20, 800
    extra = ["switch.ports=16", "sim.drain_limit=10000us"]
    lone, _ = incast_last_completion(r, NIC_800G, 1, size, "none", extra)
    _, s = incast_last_completion(r, NIC_800G, n, size, "none", extra)
    fct = fct_rows(r)
    ideal = {float(x["ideal_fct_ns"]) for x in fct}
    assert len(ideal) == 1, ideal
    rows.append(row("NIC slowdown: incast message's replay - the lone message's FCT (ns)",
                    f"800G {n}-to-1 S=1MiB", 0.0, ideal.pop() - lone, 0.0))
    wire_ns = write_wire_bytes(size) * 8 / line_gbps
    rtt = lone - wire_ns
    expected = (n * wire_ns + rtt) / (wire_ns + rtt)
    worst = s["transport"]["slowdown"]["max"]
    rows.append(band("NIC slowdown: incast's last / ((N S_wire/B + RTT) / (S_wire/B + RTT))",
                     f"800G {n}-to-1 S=1MiB", 1.0 - 1e-5, 1.10, worst / expected,
                     f"max slowdown {worst:.3f}, closed form {expected:.3f}"))
    return rows


# --- 3. Loss recovery: every message intact; go-back-N resends more than selective repeat --------

ACK_FRAME = HEADERS + 4  # an ACK or NAK: the header stack and its AETH


def run_tolerating_violations(r, config, sets):
    """r.run, but a run whose end-of-run checks fail (exit 3) returns its summary too, so that a
    row can count what failed instead of the case stopping."""
    try:
        return r.run(config, sets)
    except RuntimeError:
        out = os.path.join(r.workdir, f"run{r.count}")
        path = os.path.join(out, "summary.json")
        if not os.path.exists(path):
            raise
        r.last_out = out
        with open(path) as f:
            return json.load(f)


def corrupted_messages(s):
    """Messages the NIC check found lost, duplicated or misplaced; other violations stop the case."""
    n, other = 0, []
    for v in s["invariants"]["violations"]:
        m = re.match(r"nic: (\d+) more messages failed the check", v)
        if m:
            n += int(m.group(1))
        elif v.startswith("nic: message "):
            n += 1
        else:
            other.append(v)
    if other:
        raise RuntimeError(f"invariants violated: {other}")
    return n


def flatten(d, prefix=""):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from flatten(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def lost_data_frames(s):
    """Data frames the links destroyed: packets lost (every link direction's `lost`) less the ACKs
    and NAKs among them, told apart by their bytes (data 4,158 B or 4,174 B, ACK 66 B; every
    message here is a whole number of 4 KiB packets)."""
    c = dict(flatten(s["counters"]))
    frames = sum(v for k, v in c.items() if k.endswith(".lost"))
    size = sum(v for k, v in c.items() if k.endswith(".lost_bytes"))
    assert frames == s["packets"]["lost_on_links"], (frames, s["packets"]["lost_on_links"])
    data = (size - frames * ACK_FRAME) / (MTU + HEADERS - ACK_FRAME)
    return frames, round(data)


def case_nic_loss(r):
    """The 800G config's uniform 1 MiB WRITEs at load 0.5 for 100 us with a pre-FEC BER of 1e-3
    (a few hundred frames lost), drained: go-back-N and selective repeat on the same seeds and
    workload. Every message completes intact (the NIC's end-of-run check: each message's
    checksum over its packets' CRCs as placed); selective repeat resends each lost data frame once
    (a resend lost again is a lost frame too), plus, after a timeout, the packets delivered but
    not yet acknowledged (ACKs coalesce 16 packets); go-back-N resends everything sent after the
    loss. Lost ACKs need no resend. As the configs ship (window 0: go-back-N's PSN space,
    selective repeat's 256 tracked packets) and with the requester's window within the
    responder's 64-PSN placement range (window 64). A lossy link's experiment sets its timer:
    100 us (the shipped 4.29 s, IBA's n = 20, would leave a lost tail in flight for seconds)."""
    rows = []
    for window in (0, 64):
        retx, lost, completed = {}, {}, {}
        for tr in ("go_back_n", "selective_repeat"):
            retx[tr] = lost[tr] = 0
            for seed in (1, 2, 3, 4):
                s = run_tolerating_violations(
                    r, NIC_800G, [f"sim.seed={seed}", f"nic.transport={tr}",
                                  f"nic.rc.window={window}", "link.phy.pre_fec_ber=1e-3",
                                  "nic.rc.timeout=100us",
                                  "sim.duration=100us", "sim.warmup=0ns",
                                  "sim.drain_limit=10000us", "stats.occupancy_interval=100us"])
                t = s["transport"]
                bad = corrupted_messages(s)
                key = (tr, seed)
                completed[key] = (t["messages_posted"], t["messages_completed"] - bad, bad,
                                  t["timeouts"])
                _, data = lost_data_frames(s)
                lost[tr] += data
                retx[tr] += t["retransmitted_packets"]
            posted = sum(completed[(tr, k)][0] for k in (1, 2, 3, 4))
            intact = sum(completed[(tr, k)][1] for k in (1, 2, 3, 4))
            bad = sum(completed[(tr, k)][2] for k in (1, 2, 3, 4))
            timeouts = sum(completed[(tr, k)][3] for k in (1, 2, 3, 4))
            rows.append(row("NIC loss recovery (BER 1e-3): messages completed intact",
                            f"{tr} window={window}, seeds 1-4", posted, intact, 0,
                            f"{posted} posted, {bad} corrupted; {lost[tr]} data frames lost, "
                            f"{retx[tr]} resent, {timeouts} timeouts"))
        g, sr = retx["go_back_n"], retx["selective_repeat"]
        # Go-back-N resends at most what it sent after the loss: a window, or with no window
        # (0) what it sent before the NAK came back, which a 1 MiB message (256 packets) bounds
        # here (an RTT at 800G is ~120 packets, and at load 0.5 a QP seldom has two messages out).
        most = window or 256
        rows.append(band("NIC loss recovery: resent go-back-N / selective repeat",
                         f"window={window}, seeds 1-4", 1.0, most, g / sr,
                         f"go-back-N {g} packets for {lost['go_back_n']} lost data frames, "
                         f"selective repeat {sr} for {lost['selective_repeat']} (go-back-N: at "
                         f"most {most} per loss)"))
        rows.append(band("NIC loss recovery: selective repeat resent / data frames lost",
                         f"window={window}, seeds 1-4", 1.0, 1.1, sr / lost["selective_repeat"],
                         f"{sr} resent, {lost['selective_repeat']} lost"))
    return rows


CASES = {"nic_dcqcn": case_nic_dcqcn, "nic_incast": case_nic_incast, "nic_loss": case_nic_loss,
         "nic_slowdown": case_nic_slowdown}

# For docs/validation.md (validate.py's markdown() appends them to its notes).
NOTES = [
    "- NIC rows (`validate_nic_transport.py`) run `configs/nic_800g.yaml` or `configs/nic_400g.yaml`",
    "  (RoCEv2 on the lossless priority 3, PFC, and ECN marked at dequeue with the HPCC scripts'",
    "  Kmin/Kmax, 100/400 KB per 25G) with message files the cases",
    "  write (RDMA WRITEs, `tc=3`) and read fct.csv and summary.json.",
    "- NIC incast: N senders post one message of S each to host 0 at t=0; the row is the last",
    "  completion (send CQE) over N S_wire / B + RTT: S_wire = S + 82 B per 4 KiB packet (62 B",
    "  RoCEv2 headers, 20 B preamble and gap) + 16 B RETH, B the receiver's line rate, RTT the",
    "  FCT of one message alone less its serialisation (doorbell, WQE fetch, payload read, switch,",
    "  ACK, CQE: 2,660 ns at 800G, 2,702 ns at 400G). The switch buffer (165 MB) takes the whole",
    "  incast, so PFC never pauses; short messages are sent before DCQCN's cuts take hold, so",
    "  dcqcn ends as none does. 127-to-1 at 400G: with the 100 us RC timeout of before (shorter",
    "  than the queueing delay, up to 680 us) every QP timed out 4 times (508 timeouts, 20,320",
    "  packets resent, 84-91 MB of buffer); IBA's n = 20 (4.29 s) fires none: 34.8 MB.",
    "- NIC slowdown: fct.csv's `ideal_fct_ns` replays each kind of message (size, verb, QP, class,",
    "  chips on the way) alone on the idle fabric: its two NICs fresh, the switches by their",
    "  zero-load closed form (models/switch/zero_load.h). A message that met nothing in the run",
    "  must have measured FCT = replay to the ps (slowdown 1); a repeated kind at another clock",
    "  phase reuses the first one's time (within 1 ns). The incast rows check the replay against",
    "  the lone message's measured FCT, and the last message's slowdown against nic_incast's form.",
    "- NIC loss recovery: uniform 1 MiB WRITEs at load 0.5 for 100 us with pre-FEC BER 1e-3,",
    "  drained, seeds 1-4, the same workload for both transports (the losses differ with the",
    "  traffic). Lost data frames are the links' lost packets less the ACKs among them, told apart",
    "  by their bytes. Selective repeat must resend each lost data frame at least once (ratio >= 1)",
    "  plus, after a timeout, packets delivered but not yet acknowledged (ACKs every 16): <= 1.1.",
    "  A 64-slot placement ring once let the expected PSN overwrite expected + 64 (198 of 1,237",
    "  messages corrupted, caught by the NIC's end-of-run check) and packets more than 64 ahead",
    "  were dropped (23x the losses resent); the responder now places a whole window ahead and a",
    "  SACK names any PSN of the window (rc_selective.h).",
    "- NIC DCQCN: hosts 0 and 1 stream 1 MiB WRITEs to host 2 (800G, 4 ports) for 10 ms; each",
    "  flow's delivered bytes are interpolated between its messages' delivery times; Jain index",
    "  over [1 ms, end]. The configs run nic.dcqcn.profile hpcc (alpha updated every 1 us, a 300 us",
    "  rate timer, AI/HAI 5/50 Mb/s per 25G of line rate): every seed splits evenly. With",
    "  the ns-3 code's alpha period (55 us), a 50 us timer and 5 Mb/s AI at 800G, seed 1 did not",
    "  converge (0.966, 452 / 308 Gb/s; 0.944 after 60 ms): both flows were cut in each congestion",
    "  episode by about half (alpha near 1), each recovering to its own rate before additive",
    "  increase could run. PFC-only (cc none) shares the link exactly (392.1 / 392.1 Gb/s).",
    "- DCQCN's rate rules are checked exactly in `testbenches/unit/nic_congestion_control_test.cpp`.",
]
