"""Congestion-control dynamics on one bottleneck (validate.py's cases nic_cc_*): long flows
sharing a 400G port, a flow that starts late, with the shipped DCQCN profile (nic.dcqcn.profile
hpcc: the HPCC work's scripts and rdma-hw.cc rules, its switch marking ECN at dequeue).

What the DCQCN paper (Zhu et al., SIGCOMM 2015) and its fluid model (Zhu et al., "ECN or Delay",
CoNEXT 2016) predict for N long flows on one bottleneck: a unique fixed point with equal rates
C / N and the link busy; a flow that joins converges to its share. The rows measure the link's
utilisation (ports.csv: the bottleneck's egress over the window), Jain's index of the flows'
delivered rates (fct.csv: each flow's delivery curve) and the newcomer's share.
"""
import csv
import math
import os

from validation_common import band, row
from validate_nic_transport import NIC_400G, flow_curves, jain, rates_gbps, run_messages

LINE_GBPS = 400
MSG = 1 << 20  # 1 MiB WRITEs, back to back per flow: a delivery curve in 1 MiB steps


def long_flows(r, name, flows, horizon_us, warmup_us, extra=()):
    """flows: (src, start_ns, messages) to host 0; the run stops at the horizon (messages still in
    flight are the point: long flows). Returns summary, curves, bottleneck utilisation."""
    msgs = sorted((start, k, src, 0, MSG) for src, start, n in flows for k in range(n))
    s, rows = run_messages(
        r, NIC_400G, f"{name}.txt", [m[:1] + m[2:] for m in msgs],
        ["switch.ports=16", f"sim.duration={horizon_us}us", f"sim.warmup={warmup_us}us",
         "sim.drain_limit=0us", "stats.occupancy_interval=0ns"] + list(extra), horizon=True)
    with open(os.path.join(r.last_out, "ports.csv")) as f:
        port0 = next(p for p in csv.DictReader(f) if p["port"] == "0")
    return s, flow_curves(rows), float(port0["accepted_load_out"])


def case_nic_cc_long_flows(r):
    """N = 2, 4, 8 flows of back-to-back 1 MiB WRITEs into one 400G port from t = 0, 5 ms: over
    [1, 5] ms the bottleneck is busy (utilisation >= 0.85: the profile's 300 us rate timer leaves
    gaps after its cuts; 0.80 when the switch marks at enqueue, the mark then waiting behind the
    queue it reports) and the flows share it fairly (Jain >= 0.95)."""
    rows = []
    for n in (2, 4, 8):
        per_flow = int(5e-3 * LINE_GBPS * 1e9 / 8 / n / MSG) + 4
        s, curves, util = long_flows(r, f"long{n}", [(src, 0, per_flow)
                                                      for src in range(1, n + 1)], 5000, 1000)
        keys = sorted(curves)
        x = rates_gbps(curves, keys, 1e6, 5e6)
        note = (f"{len(keys)} flows: {' / '.join(f'{v:.0f}' for v in x)} Gb/s; CNPs "
                f"{s['transport']['cnps_sent']}, pauses "
                f"{s['flow_control']['hosts']['pause_frames_received']}")
        rows.append(band("NIC DCQCN (hpcc), N long flows into one 400G port: utilisation",
                         f"N={n}, 1-5 ms", 0.85, 1.0, util, note))
        rows.append(band("NIC DCQCN (hpcc), N long flows into one 400G port: Jain index",
                         f"N={n}, 1-5 ms", 0.95, 1.0, jain(x), note))
    return rows


def case_nic_cc_late_starter(r):
    """Three flows from t = 0, a fourth from 2 ms, to 6 ms: over [3, 6] ms the newcomer is neither
    starved nor dominant (its rate over a quarter of the four's within 0.5-2; the configs of
    before held it at ~5% of the line), the four share the link (Jain >= 0.9) and it stays busy
    (>= 0.85 over [1, 6] ms). Measured, not validated: the newcomer keeps ~1.33x its fair share
    for the 4 ms it was followed (notes)."""
    n_old = int(6e-3 * LINE_GBPS * 1e9 / 8 / 3 / MSG) + 4
    n_new = int(4e-3 * LINE_GBPS * 1e9 / 8 / 4 / MSG) + 4
    flows = [(src, 0, n_old) for src in (1, 2, 3)] + [(4, 2_000_000, n_new)]
    s, curves, util = long_flows(r, "late", flows, 6000, 1000)
    keys = sorted(curves)
    x = rates_gbps(curves, keys, 3e6, 6e6)
    newcomer = x[keys.index(next(k for k in keys if k[0] == 4))]
    note = f"{' / '.join(f'{v:.0f}' for v in x)} Gb/s over 3-6 ms (host 4 from 2 ms)"
    return [
        band("NIC DCQCN (hpcc), a flow joining three: its share / fair share (no starvation)",
             "4th flow from 2 ms, 3-6 ms", 0.5, 2.0, newcomer / (sum(x) / 4), note),
        band("NIC DCQCN (hpcc), a flow joining three: Jain index", "3-6 ms", 0.9, 1.0, jain(x),
             note),
        band("NIC DCQCN (hpcc), a flow joining three: utilisation", "1-6 ms", 0.85, 1.0, util,
             note),
    ]


# --- DCQCN's fluid model: the fixed point of N flows (Zhu et al., "ECN or Delay", CoNEXT 2016) ---
#
# The model of the DCQCN paper's reaction point (the `custom` profile's rules): per flow the
# current rate R_C, the target R_T and alpha; the queue q; the marking probability p(q) of the
# RED curve (Kmin, Kmax, Pmax). With rates in packets a second, a = 1 - p, tau the CNP spacing,
# tau' the alpha period, T the rate timer, B the byte counter in packets, F the fast-recovery
# steps, R_AI the additive step:
#   dalpha/dt = g/tau' [(1 - a^(tau' R_C)) - alpha]
#   dR_T/dt   = -(R_T - R_C)/tau (1 - a^(tau R_C))
#               + R_AI R_C p [a^(F B) / (a^-B - 1) + a^(F T R_C) / (a^(-T R_C) - 1)]
#   dR_C/dt   = -R_C alpha / (2 tau) (1 - a^(tau R_C))
#               + (R_T - R_C)/2 R_C p [1 / (a^-B - 1) + 1 / (a^(-T R_C) - 1)]
#   dq/dt     = N R_C - C
# At the fixed point R_C = C / N, alpha = 1 - a^(tau' R_C), and eliminating R_T - R_C leaves one
# equation in p, solved here by bisection (its left side grows with p, its right side falls); the
# queue follows from the marking curve. The paper finds the fixed point unique for DCQCN.

DCQCN_PAPER = {"g": 1 / 256, "tau": 50e-6, "tau_alpha": 55e-6, "timer": 55e-6,
               "byte_counter": 10e6, "f": 5, "rai_bps": 40e6}  # the DCQCN paper's values [R]
FLUID_ECN = {"kmin": 50e3, "kmax": 2e6, "pmax": 0.01}  # the DCQCN paper's 40G 5/200 KB, Pmax 1%, x10
WIRE_PACKET = 4096 + 82  # a 4 KiB WRITE packet's wire bytes: RoCEv2 headers 62 B, preamble + gap 20 B


def dcqcn_fixed_point(n, line_bps=LINE_GBPS * 1e9, prm=DCQCN_PAPER, ecn=FLUID_ECN):
    """(p, queue bytes, alpha) at the fluid model's fixed point for n flows on one link."""
    c = line_bps / 8 / WIRE_PACKET
    r = c / n
    b = prm["byte_counter"] / WIRE_PACKET
    rai = prm["rai_bps"] / 8 / WIRE_PACKET
    tau, t = prm["tau"], prm["timer"]

    def gap(p):
        a = 1 - p
        x = 1 - a ** (tau * r)
        alpha = 1 - a ** (prm["tau_alpha"] * r)
        events = 1 / (a ** -b - 1) + 1 / (a ** (-t * r) - 1)
        lhs = alpha * x * x / (tau * tau * p * p * events)
        rhs = rai * r * (a ** (prm["f"] * b) / (a ** -b - 1)
                         + a ** (prm["f"] * t * r) / (a ** (-t * r) - 1))
        return lhs - rhs, alpha

    lo, hi = 1e-9, 0.5
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if gap(mid)[0] > 0:
            hi = mid
        else:
            lo = mid
    p = math.sqrt(lo * hi)
    q = ecn["kmin"] + p / ecn["pmax"] * (ecn["kmax"] - ecn["kmin"])
    return p, q, gap(p)[1]


def case_nic_dcqcn_fluid(r):
    """N = 2, 4, 8 long flows into one 400G port under the DCQCN paper's rules and values
    (nic.dcqcn.profile custom: g 1/256, alpha period and rate timer 55 us, byte counter 10 MB,
    F 5, AI 40 Mb/s; a CNP at most every 50 us per QP; RED marking Kmin 50 KB, Kmax 2 MB, Pmax
    1%) for 100 ms: the bottleneck's mean queue over [40, 100] ms against the fluid model's fixed
    point (within 30%: the model is a mean-field approximation of random marks and discrete
    rate steps; the queue could sit anywhere from 50 KB to 2 MB), the flows sharing equally
    (Jain >= 0.98) and the link busy (>= 0.97)."""
    rows = []
    for n in (2, 4, 8):
        p, q_star, alpha = dcqcn_fixed_point(n)
        per_flow = int(0.1 * LINE_GBPS * 1e9 / 8 / n / MSG) + 8
        s, curves, util = long_flows(
            r, f"fluid{n}", [(src, 0, per_flow) for src in range(1, n + 1)], 100000, 40000,
            ["nic.dcqcn.profile=custom", "nic.dcqcn.alpha_period=55us",
             "nic.dcqcn.rate_period=55us", "nic.dcqcn.ai=40Mbps", "nic.cnp.interval=50us",
             f"flow_control.ecn.kmin={FLUID_ECN['kmin']:.0f}B",
             f"flow_control.ecn.kmax={FLUID_ECN['kmax']:.0f}B",
             f"flow_control.ecn.pmax={FLUID_ECN['pmax']}", "stats.occupancy_interval=1us"])
        with open(os.path.join(r.last_out, "occupancy.csv")) as f:
            q = [float(x["port0_bytes"]) for x in csv.DictReader(f)
                 if float(x["time_ns"]) >= 40e6]
        mean_q = sum(q) / len(q)
        keys = sorted(curves)
        x = rates_gbps(curves, keys, 40e6, 100e6)
        note = (f"fixed point p {p:.2e}, alpha {alpha:.3f}; {' / '.join(f'{v:.0f}' for v in x)} "
                f"Gb/s; CNPs {s['transport']['cnps_sent']}")
        rows.append(row("NIC DCQCN (paper's rules), N flows: mean queue (KB) against the fluid "
                        "model's fixed point", f"N={n}, 40-100 ms", q_star / 1e3, mean_q / 1e3,
                        0.3 * q_star / 1e3, note))
        rows.append(band("NIC DCQCN (paper's rules), N flows: Jain index", f"N={n}, 40-100 ms",
                         0.98, 1.0, jain(x), note))
        rows.append(band("NIC DCQCN (paper's rules), N flows: utilisation", f"N={n}, 40-100 ms",
                         0.97, 1.0, util, note))
    return rows


# --- HPCC (Li et al., SIGCOMM 2019): in-band telemetry, the link held at eta ---------------
#
# The fixed point of HPCC's law on one bottleneck: W = Wc / (U / eta) + W_AI per flow, per round
# trip, with U the link's utilisation (its rate and standing queue over B T). With N flows in
# steady state U (W - W_AI) = eta W and N W = U B T (the bytes in flight fill the pipe and the
# queue), so U* = eta + N W_AI / (B T): the link at eta of its rate with no standing queue when
# W_AI is small (profile hpcc: 10 Mb/s per 25G, W_AI ~ 30 B here), above eta with a standing
# queue (U* - 1) B T when it is not (profile htsim: W_AI one 4 KiB packet). Multiplicative steps
# keep the flows' ratios and the additive one evens them out, so fairness comes at the pace of
# W_AI: fast with one packet, slow with the scripts' 30 B (the rows show both).

HPCC = ["nic.cc=hpcc"]
HPCC_HTSIM = HPCC + ["nic.hpcc.profile=htsim"]
BT = 73686  # B T here: 400G x the fabric's base RTT (1.47 us: a 4 KiB frame there, its ACK back)
IN_CHIP = 25e3  # bytes a 400G stream keeps inside the chip (~0.5 us zero-load latency x 50 GB/s)


def hpcc_flows(r, tag, n, extra):
    per_flow = int(2e-3 * LINE_GBPS * 1e9 / 8 / n / MSG) + 4
    s, curves, util = long_flows(r, f"{tag}{n}", [(src, 0, per_flow) for src in range(1, n + 1)],
                                 2000, 500, extra)
    keys = sorted(curves)
    x = rates_gbps(curves, keys, 0.5e6, 2e6)
    queue = s["buffer"]["ports"][0]["mean_bytes"]
    note = (f"{len(keys)} flows: {' / '.join(f'{v:.0f}' for v in x)} Gb/s; the bottleneck's mean "
            f"buffer {queue / 1e3:.1f} KB (~{IN_CHIP / 1e3:.0f} KB of it crossing the chip), "
            f"pauses {s['flow_control']['hosts']['pause_frames_received']}")
    return util, jain(x), queue, note


def case_nic_hpcc_long_flows(r):
    """N = 2, 4, 8 long flows into one 400G port for 2 ms, measured over [0.5, 2] ms. Profile
    hpcc (the HPCC scripts', W_AI ~ 30 B): utilisation at eta = 0.95 (U* = eta + 0.003 N; within
    0.92-0.97, the frames' preamble and gap aside) and no standing queue (the mean buffer within
    what crosses the chip at that rate + 10 KB). Profile htsim (W_AI one packet): U* = 0.95 +
    0.056 N > 1, so the link is saturated (>= 0.97) with a standing queue of (U* - 1) B T, within
    a packet per flow (the window is whole packets) of it; the flows share fairly (Jain >= 0.95)."""
    rows = []
    for n in (2, 4, 8):
        util, j, queue, note = hpcc_flows(r, "hpcc", n, HPCC)
        rows.append(band("NIC HPCC (hpcc), N long flows into one 400G port: utilisation",
                         f"N={n}, 0.5-2 ms", 0.92, 0.97, util, note + f"; Jain {j:.3f}"))
        rows.append(band("NIC HPCC (hpcc), N long flows into one 400G port: standing queue (KB)",
                         f"N={n}, 0.5-2 ms", 0.0, 10.0, max(0.0, queue - IN_CHIP) / 1e3, note))
    for n in (2, 4, 8):
        util, j, queue, note = hpcc_flows(r, "hpcc_htsim", n, HPCC_HTSIM)
        q_star = max(0.0, 0.95 + n * 4096 / BT - 1) * BT
        rows.append(band("NIC HPCC (htsim), N long flows into one 400G port: utilisation",
                         f"N={n}, 0.5-2 ms", 0.97, 1.0, util, note))
        rows.append(band("NIC HPCC (htsim), N long flows into one 400G port: Jain index",
                         f"N={n}, 0.5-2 ms", 0.95, 1.0, j, note))
        rows.append(band("NIC HPCC (htsim), standing queue - the fixed point's (U* - 1) B T (KB)",
                         f"N={n}, 0.5-2 ms", -4.1, 4.1 * n,
                         (queue - IN_CHIP - q_star) / 1e3,
                         note + f"; fixed point {q_star / 1e3:.1f} KB"))
    return rows


def case_nic_hpcc_late_starter(r):
    """Three flows from t = 0 and a fourth from 1 ms (profile htsim): 0.1 ms later the newcomer
    has its fair share (its rate over [1.1, 2] ms over a quarter of the four's within 0.8-1.25:
    HPCC reacts within round trips, where DCQCN took milliseconds) and the four share the link
    (Jain >= 0.95). Profile hpcc's newcomer is in the note: with its 30 B W_AI it keeps the
    share it took at its start."""
    n_old = int(2e-3 * LINE_GBPS * 1e9 / 8 / 3 / MSG) + 4
    n_new = int(1e-3 * LINE_GBPS * 1e9 / 8 / 4 / MSG) + 4
    flows = [(src, 0, n_old) for src in (1, 2, 3)] + [(4, 1_000_000, n_new)]
    out = {}
    for tag, extra in (("hpcc", HPCC), ("htsim", HPCC_HTSIM)):
        s, curves, util = long_flows(r, f"hpcc_late_{tag}", flows, 2000, 500, extra)
        keys = sorted(curves)
        x = rates_gbps(curves, keys, 1.1e6, 2e6)
        newcomer = x[keys.index(next(k for k in keys if k[0] == 4))]
        out[tag] = (newcomer / (sum(x) / 4), jain(x), f"{' / '.join(f'{v:.0f}' for v in x)} Gb/s")
    note = (f"htsim: {out['htsim'][2]}; hpcc: {out['hpcc'][2]}, newcomer/fair "
            f"{out['hpcc'][0]:.2f}, Jain {out['hpcc'][1]:.3f} (1.1-2 ms, host 4 from 1 ms)")
    return [
        band("NIC HPCC (htsim), a flow joining three: its share / fair share 0.1 ms later",
             "4th flow from 1 ms, 1.1-2 ms", 0.8, 1.25, out["htsim"][0], note),
        band("NIC HPCC (htsim), a flow joining three: Jain index", "1.1-2 ms", 0.95, 1.0,
             out["htsim"][1], note),
    ]


# --- Swift (Kumar et al., SIGCOMM 2020): the delay held at its target ----------------------
#
# Per ACK a flow adds ai / cwnd below its target and, above it, cuts at most once per RTT in
# proportion to the excess: the bottleneck's queue is the controlled variable, held where the
# round trip equals the target. With N long flows of window w packets (frames of F bytes) the
# link is busy and N w F = C D (what is in flight fills the pipe and the queue), where the target
# is D = 20 us + h x 1 switch + fs(w) (profile htsim: counted from zero, h = 20 / 6.55 us, fs
# = clamp(alpha / sqrt(w) + beta, 0, 100 us) over 0.1-100 packets). Solving the two gives w* and
# D*, and the standing queue C (D* - rtt0), rtt0 the zero-load round trip the NIC measures (the
# fabric's 1.47 us and the receiving NIC's ACK turnaround). Equal targets at equal windows make
# the fair share the only fixed point; a newcomer with a smaller window has a higher target
# (flow scaling), so it grows (ai a round trip) while the others shrink.

SWIFT = ["nic.cc=swift"]
SWIFT_FRAME = 4096 + 70  # payload and the RoCE headers and FCS, roughly: only w's size depends on it
SWIFT_H = 20 / 6.55  # us per switch
C_BYTES = LINE_GBPS * 1e9 / 8
RTT0_US = BT / C_BYTES * 1e6  # 1.47 us: the fabric's zero-load round trip (set_nic_paths)


def swift_fs_us(w):
    alpha = 100 / (1 / math.sqrt(0.1) - 1 / math.sqrt(100))
    return min(100.0, max(0.0, alpha / math.sqrt(w) - alpha / 10))


def swift_fixed_point(n, hops=1):
    """(w* packets, D* us): N w F = C D with D = 20 + h hops + fs(w), by iteration (a
    contraction: D moves w a little and w moves fs less)."""
    d = 20 + SWIFT_H * hops
    for _ in range(100):
        w = C_BYTES * d * 1e-6 / (n * SWIFT_FRAME)
        d = 20 + SWIFT_H * hops + swift_fs_us(w)
    return w, d


def swift_flows(r, tag, flows, horizon_us, warmup_us, t0, t1):
    s, curves, util = long_flows(r, tag, flows, horizon_us, warmup_us, SWIFT)
    keys = sorted(curves)
    x = rates_gbps(curves, keys, t0, t1)
    queue = s["buffer"]["ports"][0]["mean_bytes"]
    note = (f"{' / '.join(f'{v:.0f}' for v in x)} Gb/s; the bottleneck's mean buffer "
            f"{queue / 1e3:.0f} KB; utilisation {util:.3f}; timeouts "
            f"{s['transport']['timeouts']}, pauses "
            f"{s['flow_control']['hosts']['pause_frames_received']}")
    return keys, x, util, queue, note


def swift_ramp_ms(n, w0, w1):
    """The time (ms) N flows take from w0 to w1 packets each at one packet a round trip, the
    round trip being what they have in flight over C (the queue never empty): N F / C x the sum
    of w, ~ N F (w1^2 - w0^2) / 2C."""
    return n * SWIFT_FRAME / C_BYTES * (w1 * w1 - w0 * w0) / 2 * 1e3


def case_nic_swift_long_flows(r):
    """N = 2, 8, 15 long flows into one 400G port for 4 ms under the default profile (htsim),
    measured over [2, 4] ms: from 15 packets each, one packet a round trip brings them to w*
    within 1.6, 0.4 and 0.15 ms (swift_ramp_ms). The link is busy (>= 0.97: the flows' first
    windows already exceed the 1.5 us pipe, and a standing queue of ~1 MB never drains), the
    flows share it (Jain >= 0.95), and the bottleneck's mean buffer, less what crosses the chip
    (IN_CHIP), is the fixed point's C (D* - rtt0) within 10% (1.08, 1.18, 1.27 MB: D* 23.05,
    25.11, 26.84 us): 2.2-2.5 us of delay, below the hop term (3.05 us) and the flow term at
    N = 15 (3.8 us), so a target without either would fail the row."""
    rows = []
    for n in (2, 8, 15):
        per_flow = int(4e-3 * C_BYTES / n / MSG) + 4
        keys, x, util, queue, note = swift_flows(
            r, f"swift{n}", [(src, 0, per_flow) for src in range(1, n + 1)], 4000, 2000,
            2e6, 4e6)
        w, d = swift_fixed_point(n)
        q_star = C_BYTES * (d - RTT0_US) * 1e-6
        note += (f"; fixed point w* {w:.1f} packets, D* {d:.2f} us, queue {q_star / 1e3:.0f} KB, "
                 f"reached by {swift_ramp_ms(n, 15, w):.2f} ms")
        rows.append(band("NIC Swift (htsim), N long flows into one 400G port: utilisation",
                         f"N={n}, 2-4 ms", 0.97, 1.0, util, note))
        rows.append(band("NIC Swift (htsim), N long flows into one 400G port: Jain index",
                         f"N={n}, 2-4 ms", 0.95, 1.0, jain(x), note))
        rows.append(band("NIC Swift (htsim), mean queue / the fixed point's C (D* - rtt0)",
                         f"N={n}, 2-4 ms", 0.9, 1.1, max(0.0, queue - IN_CHIP) / q_star, note))
    return rows


def case_nic_swift_late_starter(r):
    """Three flows from t = 0 and a fourth from 1 ms (profile htsim), to 4 ms. The newcomer
    starts at 15 packets against the others' ~93 (w* for 3); its flow-scaled target is ~4.5 us
    above theirs, so it alone grows, ai = 1 packet a round trip (D* ~ 24 us), while they cut:
    it reaches the four's fair share w* ~ 71 within (71 - 15) x 24 us ~ 1.3 ms. Over [2.5, 4] ms
    its rate is its fair share within 0.8-1.25, the four share the link (Jain >= 0.95) and it
    stays busy (>= 0.97 over [0.5, 4] ms)."""
    n_old = int(4e-3 * C_BYTES / 3 / MSG) + 4
    n_new = int(3e-3 * C_BYTES / 4 / MSG) + 4
    flows = [(src, 0, n_old) for src in (1, 2, 3)] + [(4, 1_000_000, n_new)]
    keys, x, util, _, note = swift_flows(r, "swift_late", flows, 4000, 500, 2.5e6, 4e6)
    newcomer = x[keys.index(next(k for k in keys if k[0] == 4))]
    w4, d4 = swift_fixed_point(4)
    note += (f" over 2.5-4 ms (host 4 from 1 ms); w* {w4:.0f} packets, D* {d4:.1f} us: "
             f"{(w4 - 15) * d4 / 1e3:.2f} ms to close the gap at one packet a round trip")
    return [
        band("NIC Swift (htsim), a flow joining three: its share / fair share 1.5 ms later",
             "4th flow from 1 ms, 2.5-4 ms", 0.8, 1.25, newcomer / (sum(x) / 4), note),
        band("NIC Swift (htsim), a flow joining three: Jain index", "2.5-4 ms", 0.95, 1.0,
             jain(x), note),
        band("NIC Swift (htsim), a flow joining three: utilisation", "0.5-4 ms", 0.97, 1.0, util,
             note),
    ]


NOTES = [
    "- NIC congestion-control dynamics (`validate_nic_cc.py`): `configs/nic_400g.yaml` (DCQCN,",
    "  `nic.dcqcn.profile: hpcc`, ECN Kmin/Kmax 1.6/6.4 MB marked at dequeue as the HPCC work's",
    "  switch does), flows of back-to-back 1 MiB WRITEs into host 0 on a 16-port chip, the run",
    "  stopped at its horizon. Utilisation is the bottleneck's egress (ports.csv) over the window;",
    "  per-flow rates come from each flow's delivery curve (fct.csv). The DCQCN paper and its",
    "  fluid model (Zhu et al., CoNEXT 2016) predict equal shares and a busy link at the fixed",
    "  point; with this profile the link runs at 0.89-0.95: after a burst of cuts (a CNP for",
    "  every marked packet, a cut every 4 us) the 300 us rate timer leaves it short until fast",
    "  recovery. Incasts of long messages finish at 1.1-1.6x their line-rate bound under this",
    "  profile (4 x 8 MiB: 1.56x; 31 x 8 MiB: 1.12x): the first cuts reach the 1 Gb/s floor.",
    "  A flow that joins three others gets its share at once, then keeps ~1.33x of it (126-131",
    "  against 75-100 Gb/s, 3-7 ms): recovery returns each flow to its own target rate, and the",
    "  additive steps that would even the targets out (80 Mb/s per 300 us) are far too slow at",
    "  400G; the paper's convergence is not reached within the run. These are findings about the",
    "  profile at 400G, not rows: no published figure at this speed to hold them against.",
    "- DCQCN's fluid model (`nic_dcqcn_fluid`): the fixed point of Zhu et al. (CoNEXT 2016) for",
    "  the DCQCN paper's rules and values (profile custom) against 100 ms runs: the simulated",
    "  mean queue sits 1.1-1.25x above the model's (93 / 156 / 305 KB against 83 / 130 / 244 KB",
    "  for 2 / 4 / 8 flows), the same ratio when the additive step is 4x (210 against 170 KB),",
    "  and independent of g as the model says (g only sets how fast it converges).",
    "- HPCC (`nic_hpcc_*`, `nic.cc: hpcc`): the switches stamp INT (`switch.int_telemetry`), the",
    "  queue an INT hop reports is the egress queue waiting for the wire (not the ~25 KB a 400G",
    "  stream keeps crossing the chip: counted, the senders saw a standing queue that was not",
    "  there and held the link at 0.76). Profile hpcc (the HPCC scripts' 30 B additive step)",
    "  shares slowly: 8 flows started together keep Jain 0.85 over 0.5-2 ms, and a newcomer keeps",
    "  the ~1.35x share it took at its start; profile htsim (one packet) is fair within 0.1 ms.",
    "  Incasts under profile hpcc finish above their bound: 15 x 1 MiB at 800G 1.12x (eta 0.95",
    "  and the first round trip), 127 x 256 KiB at 400G 1.51x (127 one-packet windows over a",
    "  1.5 us base RTT: the floor of one packet each is 3.4x the pipe).",
    "- Swift (`nic_swift_*`, `nic.cc: swift`, profile htsim): the bottleneck's queue is held where",
    "  the round trip meets the target (20 us + 3.05 us for the one switch + flow scaling): 1.14,",
    "  1.25 and 1.35 MB for 2, 8 and 15 flows, 3.5-4.6% above the fixed point's C (D* - rtt0)",
    "  (the decrease waits a round trip, the increase does not), with the link at 0.995 and Jain",
    "  1.000. From 15 packets, one packet a round trip takes 1.6 ms to reach two flows' 138",
    "  packets at 400G: windows are sampled after 2 ms. A flow joining three gets its share",
    "  (1.00x) within 1.5 ms, as flow scaling (its target ~4.5 us above theirs) predicts.",
]


CASES = {"nic_cc_long_flows": case_nic_cc_long_flows,
         "nic_cc_late_starter": case_nic_cc_late_starter,
         "nic_dcqcn_fluid": case_nic_dcqcn_fluid,
         "nic_hpcc_long_flows": case_nic_hpcc_long_flows,
         "nic_hpcc_late_starter": case_nic_hpcc_late_starter,
         "nic_swift_long_flows": case_nic_swift_long_flows,
         "nic_swift_late_starter": case_nic_swift_late_starter}

