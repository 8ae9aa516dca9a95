"""Validation of UEC-style credit-based flow control (flow_control.mode: credit with
credit.protocol: uec_cbfc; models/link/ib_credit.h) on the Ethernet 51.2T chip against its closed
forms: an incast stays lossless at the bottleneck's line rate (as IB credits keep it on the IB
chip), and a flow whose receive buffer is smaller than its credit loop's bandwidth-delay product
sends exactly the packets its credits cover per loop: floor(credits / ceil(packet / unit)).

Case group: cbfc (configs/switch_51t2.yaml, 64 x 800G, RS(544) links of 3 m)."""
import csv
import os

from validate import CHIP
from validation_common import ROOT, band, row, walk

IB_CHIP = os.path.join(ROOT, "configs", "switch_51t2_ib.yaml")
CBFC = ["flow_control.mode=credit", "flow_control.credit.protocol=uec_cbfc"]
RATE_BPNS = 100.0  # 800 Gb/s in bytes per ns
ETH_OVERHEAD = 20  # preamble + SFD + inter-frame gap, bytes a frame
UPDATE_WIRE = 64 + ETH_OVERHEAD  # a credit update: a minimum Ethernet frame on the wire


def ports(r):
    with open(os.path.join(r.last_out, "ports.csv")) as f:
        return {int(x["port"]): x for x in csv.DictReader(f)}


def incast_rows(r, chip, sets, what, frame_overhead, update_wire):
    s = r.run(chip, sets + ["traffic.pattern=incast", "traffic.incast.sources=15",
                            "traffic.load=1.0", "sim.duration=60us", "sim.warmup=10us"])
    p = s["packets"]
    c = dict(walk(s["counters"]))
    overflow = sum(v for k, v in c.items() if k.endswith("lossless_drops"))
    rows = [row("CBFC: 15-to-1 incast, packets dropped", what, 0, p["dropped"] + overflow, 0,
                "credits: a frame is sent only into buffer that is free")]
    rows.append(row("CBFC: delivered + in flight = injected", what, p["injected"],
                    p["delivered"] + p["in_flight"], 0, "none lost"))
    # The bottleneck (switch port 0 to host 0) carries 4 KiB frames back to back, less the
    # switch's own credit updates for host 0's direction (periodic: data_vls per fc_period).
    pt = ports(r)[0]
    fc_share = 8 * update_wire / (4096.0 * RATE_BPNS)
    ideal = 4096.0 / (4096 + frame_overhead) * (1 - fc_share)
    rows.append(band("CBFC: incast bottleneck load", what, ideal * 0.999, ideal * 1.0005,
                     float(pt["accepted_load_out"]),
                     f"4096/{4096 + frame_overhead} of line rate less the periodic updates"))
    return rows, s


def loop_load(r, buffer, unit, size):
    """One flow (host 1 to host 0) limited by `buffer` of receive buffer per VC, credits of `unit`
    bytes returned once 4 KiB worth are freed: its share of the bottleneck's wire."""
    r.run(CHIP, CBFC + ["traffic.pattern=incast", "traffic.incast.sources=1", "traffic.load=1.0",
                        f"traffic.size={size}B", "sim.duration=210us", "sim.warmup=10us",
                        f"flow_control.credit.buffer_per_vl={buffer}",
                        f"flow_control.credit.unit={unit}B",
                        f"flow_control.credit.fc_release_blocks={4096 // unit}"])
    return float(ports(r)[0]["accepted_load_out"]) * (size + ETH_OVERHEAD) / size


def loop_rows(r):
    """The credit loop (a frame's credits leave the sender with it and come back in an update
    once the switch has forwarded it) does not depend on the buffer, so the loop measured with
    2 frames of credit predicts the load of every other buffer and credit size:
    frames a loop = floor(credits / ceil(frame / unit)), load = frames x wire(frame) / loop."""
    base = loop_load(r, "8KiB", 64, 4096)
    wire = (4096 + ETH_OVERHEAD) / RATE_BPNS
    loop = 2 * wire / base
    rows = [band("CBFC: credit loop (ns)", "one 4 KiB flow, 8 KiB a VC", 2 * 115 + wire,
                 2 * 115 + 2 * wire + 620 / 1.35 + 64, loop,
                 "2 link latencies + wire .. + the chip's pipeline and an update")]
    for buffer, unit, size in (("16KiB", 64, 4096), ("16KiB", 64, 4160), ("16KiB", 4096, 4160)):
        credits = {"8KiB": 8192, "16KiB": 16384}[buffer] // unit
        frames = credits // -(-size // unit)
        # The loop grows by the frame's extra wire time (the credits return after its last byte).
        loop_f = loop + (size - 4096) / RATE_BPNS
        expected = frames * (size + ETH_OVERHEAD) / RATE_BPNS / loop_f
        rows.append(row("CBFC: credit-limited load (wire share)",
                        f"{buffer} a VC, {unit} B credits, {size} B frames", expected,
                        loop_load(r, buffer, unit, size), 0.005 * expected,
                        f"{frames} frames a {loop_f:.1f} ns loop"))
    return rows, loop


def case_cbfc(r):
    rows, cbfc = incast_rows(r, CHIP, CBFC, "UEC CBFC, Ethernet", ETH_OVERHEAD, UPDATE_WIRE)
    rows += incast_rows(r, IB_CHIP, [], "IB credits, IB framing", 2, 8)[0]
    pfc = r.run(CHIP, ["flow_control.mode=pfc", "traffic.tc_weights=[0,0,0,1]",
                       "traffic.pattern=incast", "traffic.incast.sources=15", "traffic.load=1.0",
                       "sim.duration=60us", "sim.warmup=10us"])
    rows.append(row("CBFC: 15-to-1 incast, packets dropped", "PFC (for comparison)", 0,
                    pfc["packets"]["dropped"], 0, "PFC with headroom is lossless too"))
    loops, loop = loop_rows(r)
    # Credits bound the buffer: each sender at most 64 KiB of credit (16 frames of 4 KiB, 17
    # cells of 254 B each); in steady state all of it is held but for a credit loop of line
    # rate on its way back (freed, returned, not yet refilled).
    cell_bytes = 17 * 254
    bound = 15 * 16 * cell_bytes
    in_loop = loop * RATE_BPNS / (4096 + ETH_OVERHEAD) * cell_bytes
    rows.append(band("CBFC: incast buffer peak (KB)", "UEC CBFC, 64 KiB a VC, 15 senders",
                     (bound - in_loop) / 1e3, bound / 1e3, cbfc["buffer"]["peak_bytes"] / 1e3,
                     "15 x 16 frames of credit, less a loop's worth returning"))
    return rows + loops


CASES = {"cbfc": case_cbfc}
NOTES = [
    "- CBFC rows (validate_cbfc.py) run UEC-style credit-based flow control",
    "  (`flow_control.credit.protocol: uec_cbfc`: credits of `unit` bytes per virtual channel,",
    "  returned in minimum-size Ethernet frames; the update format and credit size are assumptions",
    "  [S], docs/hardware-facts.md) on the Ethernet 51.2T chip. A 15-to-1 incast at line rate loses",
    "  nothing and runs the bottleneck at 4096/4116 of line rate (less the periodic updates), as",
    "  IB credits do on the IB chip and PFC on the RoCE settings. One flow whose buffer is under",
    "  its loop's bandwidth-delay product sends floor(credits / ceil(frame / unit)) frames per",
    "  credit loop (the loop measured once, with 2 frames of credit, predicts every other buffer and",
    "  credit size): 4160 B frames fit 3 to a 16 KiB buffer of 64 B credits but 2 of 4096 B ones.",
]
