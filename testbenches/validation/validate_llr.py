"""Validation of link-level retry (link.llr; models/link/llr.h) against its closed forms: at a
pre-FEC BER that destroys ~1e-3 of the frames, the link replays every one (none is lost to the
layers above), each replay costs a fixed, computable delay, and the replay buffer holds what the
link carries over a frame's round trip, plus a replay.

Case group: llr (the 51.2T chip, 64 host links of 800G, 4 KiB frames at load 0.5 for 50 us)."""
import math

from validate import CHIP
from validation_common import band, row, walk

PKT, CELL = 4096, 640  # frame bytes; RS(544,514)'s codeword carries 640 MAC bytes (514 x 10 bits)
BER = 1e-3
RATE = 800e9
LATENCY_NS = 100 + 3 * 5.0  # link.phy.fec_latency + link.length_m x link.ns_per_m (chip config)
RESPONSE_NS, ACK_WIRE = 100.0, 64 + 20  # link.llr.response, an ACK's wire bytes (+ preamble, IFG)


def p_codeword(ber, n=544, t=15):
    """RS(544,514) over 10-bit symbols: P(more than t of n symbols wrong)."""
    ps = 1 - (1 - ber) ** 10
    total = 0.0
    for i in range(t + 1, n + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) +
                          i * math.log(ps) + (n - i) * math.log1p(-ps))
    return total


def p_frame(ber, exposed):
    """A frame of `exposed` bytes at a uniformly random offset in the codeword grid overlaps
    c = floor((o + L - 1) / 640) + 1 codewords; lost if any is uncorrectable."""
    pc = p_codeword(ber)
    return sum(1 - (1 - pc) ** ((o + exposed - 1) // CELL + 1) for o in range(CELL)) / CELL


def case_llr(r):
    rows = []
    base = ["traffic.load=0.5", "sim.duration=50us", f"link.phy.pre_fec_ber={BER}"]
    exposed = PKT + 8  # frame + preamble/SFD: what bit errors can hit (not the IFG)
    pf = p_frame(BER, exposed)
    for llr in (False, True):
        s = r.run(CHIP, base + [f"link.llr.enabled={'true' if llr else 'false'}"])
        c = dict(walk(s["counters"]))
        frames = sum(v for k, v in c.items() if k.endswith(".frames"))
        lost = sum(v for k, v in c.items() if k.endswith(".lost"))
        replays = sum(v for k, v in c.items() if k.endswith(".llr_replays"))
        expect, sd = pf * frames, math.sqrt(pf * frames)
        what = "with LLR" if llr else "without LLR"
        if not llr:
            rows.append(band("LLR: frames lost to bit errors", f"{what}, {frames} frames",
                             expect - 4 * sd, expect + 4 * sd, lost,
                             f"P_frame {pf:.3e} at BER {BER} (RS(544,514), 4 KiB)"))
            continue
        rows.append(row("LLR: frames lost to bit errors", f"{what}, {frames} frames", 0, lost, 0,
                        "every destroyed frame replayed by the link"))
        rows.append(row("LLR: packets delivered + in flight = injected", what,
                        s["packets"]["injected"],
                        s["packets"]["delivered"] + s["packets"]["in_flight"], 0,
                        "none dropped"))
        rows.append(band("LLR: replays", f"{frames} frames", expect - 4 * sd, expect + 4 * sd,
                         replays, "as many as frames destroyed (a replay lost again: 1e-3 of them)"))
        wire_ns = (PKT + 20) * 8 / RATE * 1e9
        ack_ns = ACK_WIRE * 8 / RATE * 1e9
        delay = RESPONSE_NS + ack_ns + 2 * LATENCY_NS + wire_ns
        dmin = min(v for k, v in c.items() if k.endswith(".llr_delay_min_ns") and v > 0)
        rows.append(row("LLR: a replayed frame's delay (ns)", "min over the links", delay, dmin,
                        0.01, "response + NACK wire + 2 link latencies + the frame's wire"))
        # The buffer holds a frame from its first bit out until its ACK is back; a replay holds
        # the frames sent meanwhile for its delay too.
        hold = wire_ns + LATENCY_NS + RESPONSE_NS + ack_ns + LATENCY_NS
        peak = max(v for k, v in c.items() if k.endswith(".llr_buffer_peak_bytes"))
        per_ns = RATE / 8e9 * PKT / (PKT + 20)  # frame bytes a ns at line rate
        rows.append(band("LLR: replay buffer peak (KB)", "max over the links",
                         0.5 * hold * per_ns / 1e3, ((hold + delay) * per_ns + PKT) / 1e3,
                         peak / 1e3, "load 0.5 x round trip .. line rate x (round trip + replay)"))
    return rows


CASES = {"llr": case_llr}
NOTES = [
    "- LLR rows (validate_llr.py) run the 51.2T chip with every host link at a pre-FEC BER of",
    "  1e-3 (RS(544,514) then destroys ~1.1e-3 of 4 KiB frames, computed from the codeword",
    "  error probability over the 7-8 codewords a frame overlaps) with `link.llr` off and on. Off,",
    "  the links lose that share (within 4 binomial sigmas); on, they lose none: each destroyed",
    "  frame is replayed, response (100 ns [S]) + the NACK's wire time + 2 link latencies + its",
    "  own wire time late (exact), and the frames behind it wait their turn. The replay buffer",
    "  must hold a round trip of line rate, and a replay's worth more: the band's ends.",
]
