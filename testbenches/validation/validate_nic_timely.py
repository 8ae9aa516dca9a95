"""TIMELY on one 400G bottleneck (validate.py's cases nic_timely_*): long flows of the shipped
profile (nic.timely.profile hpcc: the HPCC work's scripts, AI/HAI per 10G, an ACK per packet,
one update a round trip) sharing a port, and a flow that starts late.

What Zhu et al. ("ECN or Delay: Lessons Learnt from Analysis of DCQCN and TIMELY", CoNEXT 2016)
predict for TIMELY's law on one bottleneck: no unique fixed point. As written (an increase when
the gradient is <= 0) it has none and runs in limit cycles; with < it has infinitely many: any
split of the line with the queue between C t_low and C t_high. So the flows' shares are not
predictable (unfair sharing is allowed) but the link is used and no flow is driven out. The rows
check that: utilisation over the window, every flow's rate against its fair share (no
starvation), every 0.5 ms of the window busy (no collapse), the queue held below C t_high by the
cut above t_high (its percentiles in the note), a late starter's share; Jain's index is reported,
not demanded.
"""
import csv
import os

from validation_common import band
from validate_nic_cc import LINE_GBPS, MSG, long_flows
from validate_nic_transport import jain, rates_gbps

TIMELY = ["nic.cc=timely", "stats.occupancy_interval=1us"]  # profile hpcc: the shipped default
T_HIGH_BYTES = 500e-6 * LINE_GBPS * 1e9 / 8  # C t_high: 25 MB at 400G
SLICE = 0.5e6  # ns: the windows in which the link must stay busy


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def timely_run(r, tag, flows, horizon_us, t0_ns):
    """flows: (src, start_ns, messages). Returns keys, per-flow rates over [t0, horizon], the
    aggregate of each 0.5 ms slice, utilisation and the bottleneck's queue percentiles (bytes)."""
    s, curves, util = long_flows(r, tag, flows, horizon_us, t0_ns // 1000, TIMELY)
    t1 = horizon_us * 1000
    keys = sorted(curves)
    x = rates_gbps(curves, keys, t0_ns, t1)
    slices = [sum(rates_gbps(curves, keys, a, a + SLICE)) for a in range(t0_ns, t1, int(SLICE))]
    with open(os.path.join(r.last_out, "occupancy.csv")) as f:
        q = [float(v["port0_bytes"]) for v in csv.DictReader(f) if float(v["time_ns"]) >= t0_ns]
    qp = {p: percentile(q, p) for p in (0.5, 0.9, 0.99)}
    note = (f"{' / '.join(f'{v:.0f}' for v in x)} Gb/s, Jain {jain(x):.2f}; 0.5 ms slices "
            f"{min(slices):.0f}-{max(slices):.0f} Gb/s; queue p50 / p90 / p99 "
            f"{qp[0.5] / 1e6:.1f} / {qp[0.9] / 1e6:.1f} / {qp[0.99] / 1e6:.1f} MB; utilisation "
            f"{util:.3f}")
    return curves, keys, x, slices, util, qp, note


def case_nic_timely_long_flows(r):
    """N = 2, 4, 8 long flows into one 400G port from t = 0 for 5 ms, measured over [1, 5] ms.
    The rates saw-tooth (limit cycles: a ramp of 2 Gb/s a round trip while the RTT is below
    t_low = 50 us, then cuts by the gradient, often to the 1 Gb/s floor, as the queue passes
    C t_low = 2.5 MB), so the bounds are what that law leaves, not line rate: utilisation >= 0.7,
    every 0.5 ms slice >= 0.4 of the line (no collapse), every flow >= 0.25 of its fair share
    (none starved) and the queue's 99th percentile below C t_high (25 MB)."""
    rows = []
    for n in (2, 4, 8):
        per_flow = int(5e-3 * LINE_GBPS * 1e9 / 8 / n / MSG) + 4
        _, _, x, slices, util, qp, note = timely_run(
            r, f"timely{n}", [(src, 0, per_flow) for src in range(1, n + 1)], 5000, 1_000_000)
        label = "NIC TIMELY (hpcc), N long flows into one 400G port"
        rows.append(band(f"{label}: utilisation", f"N={n}, 1-5 ms", 0.7, 1.0, util, note))
        rows.append(band(f"{label}: slowest 0.5 ms slice / line (no collapse)", f"N={n}, 1-5 ms",
                         0.4, 1.0, min(slices) / LINE_GBPS, note))
        rows.append(band(f"{label}: slowest flow / fair share (none starved)", f"N={n}, 1-5 ms",
                         0.25, 1.0, min(x) / (sum(x) / n), note))
        rows.append(band(f"{label}: queue p99 / C t_high", f"N={n}, 1-5 ms", 0.0, 1.0,
                         qp[0.99] / T_HIGH_BYTES, note))
    return rows


def case_nic_timely_late_starter(r):
    """Three flows from t = 0 and a fourth from 2 ms, to 6 ms: within 0.5 ms the newcomer has a
    non-trivial share (its rate over [2.5, 6] ms >= 0.25 of a quarter of the four's; the law sets
    no fair share to converge to, so no upper bound but the line), the link stays busy (>= 0.7
    over [1, 6] ms) and no 0.5 ms slice collapses (>= 0.4 of the line)."""
    n_old = int(6e-3 * LINE_GBPS * 1e9 / 8 / 3 / MSG) + 4
    n_new = int(4e-3 * LINE_GBPS * 1e9 / 8 / 4 / MSG) + 4
    flows = [(src, 0, n_old) for src in (1, 2, 3)] + [(4, 2_000_000, n_new)]
    curves, keys, _, slices, util, _, note = timely_run(r, "timely_late", flows, 6000,
                                                         1_000_000)
    x = rates_gbps(curves, keys, 2.5e6, 6e6)  # the newcomer's from 0.5 ms after its start
    newcomer = x[keys.index(next(k for k in keys if k[0] == 4))]
    note = (f"2.5-6 ms: {' / '.join(f'{v:.0f}' for v in x)} Gb/s (host 4 from 2 ms), Jain "
            f"{jain(x):.2f}; 1-6 ms: " + note)
    label = "NIC TIMELY (hpcc), a flow joining three"
    return [
        band(f"{label}: its share / fair share 0.5 ms on", "4th flow from 2 ms, 2.5-6 ms", 0.25,
             4.0, newcomer / (sum(x) / 4), note),
        band(f"{label}: utilisation", "1-6 ms", 0.7, 1.0, util, note),
        band(f"{label}: slowest 0.5 ms slice / line (no collapse)", "1-6 ms", 0.4, 1.0,
             min(slices) / LINE_GBPS, note),
    ]


NOTES = [
    "- TIMELY (`nic_timely_*`, `nic.cc: timely`, profile hpcc as shipped): Zhu et al. (CoNEXT",
    "  2016) find no unique fixed point for TIMELY's law (limit cycles; infinitely many splits of",
    "  the line with < for <=), so the rows bound what matters, a busy link, no starved flow, no",
    "  collapsed 0.5 ms, the queue below C t_high, and report Jain's index without demanding it.",
]

CASES = {"nic_timely_long_flows": case_nic_timely_long_flows,
         "nic_timely_late_starter": case_nic_timely_late_starter}
