"""Validation of the run's energy report (summary.json `energy`; docs/results.md "Energy") and of
the cables' modules (link.optics) against hand calculation from the configuration alone: what the
chip switches at a load, what the modules draw and the latency a DSP's retiming adds.

Case groups: energy_chip (the 51.2T chip under uniform load), energy_optics (a k = 4 fat tree
with modules on its links)."""
import os

from validate import CHIP, FAT_TREE, PKT, write_trace
from validation_common import row

# The switch.energy defaults (models/switch/switch_energy.cpp) and the presets
# (models/link/optics.cpp) as docs/hardware-facts.md gives them.
IDLE_W_PER_TBPS, PJ_PER_BIT, PJ_PER_CELL = 5.86, 2.93, 990.0
CELL = 254
W_PER_800G = {"dsp": 15.0, "lpo": 8.5, "cpo": 5.5}
DSP_NS = 50.0  # one module's retiming, each way


def case_energy_chip(r):
    """The 51.2T chip (64 x 800G): every port sends 4 KiB frames to the next at load 0.5 of the
    wire, periodically, for 20 us (a trace: its frames are counted as written). Each frame is
    switched (8 x 4096 bits) once it has left its egress (the run ends with the last frames still
    on the wire: `packets.in_flight` of them) and stored in ceil(4096 / 254) = 17 cells, each
    written and read once (every frame has crossed the core by the end). The window's power: at load L of the wire, frame bits leave at
    L x 51.2 Tb/s x 4096 / 4116 (20 B of preamble and gap a frame)."""
    rows = []
    load = 0.5
    trace = os.path.join(r.workdir, "energy_chip.trace")
    frames = write_trace(trace, [(i, (i + 1) % 64) for i in range(64)], load, 20000, 7)
    s = r.run(CHIP, ["traffic.pattern=trace", f"traffic.trace.file={trace}",
                     "sim.duration=20us", "sim.warmup=2us"])
    e = s["energy"]
    bits = (frames - s["packets"]["in_flight"]) * PKT * 8
    cells = 2 * frames * -(-PKT // CELL)
    rows.append(row("Energy: 51.2T chip, switching (uJ)", f"{frames} frames of 4 KiB",
                    PJ_PER_BIT * bits * 1e-6, e["switches"]["switching_J"] * 1e6, 1e-6,
                    "pJ/bit x bits switched"))
    rows.append(row("Energy: 51.2T chip, buffer (uJ)", f"{frames} frames of 4 KiB",
                    PJ_PER_CELL * cells * 1e-6, e["switches"]["buffer_J"] * 1e6, 1e-6,
                    "17 cells a frame, written and read"))
    idle = IDLE_W_PER_TBPS * 51.2
    rows.append(row("Energy: 51.2T chip, idle (uJ)", f"the run's {e['span_ns']:.0f} ns",
                    idle * e["span_ns"] * 1e-9 * 1e6, e["switches"]["idle_J"] * 1e6, 1e-6,
                    "idle_w_per_tbps x 51.2 Tb/s x span"))
    bps = load * 51.2e12 * PKT / (PKT + 20)
    dynamic = (PJ_PER_BIT + PJ_PER_CELL * 2 * 17 / (PKT * 8)) * 1e-12 * bps
    # The window's 18 us hold ~137 frames a port: its edges cut one, 0.7% of the dynamic part.
    rows.append(row("Energy: 51.2T chip, power at the window's load (W)", f"load {load}",
                    idle + dynamic, e["window_power_W"], 0.01 * dynamic,
                    "idle + (pJ/bit + 2 x 17 pJ/cell / 32768 bits) x frame bit rate"))
    return rows


def case_energy_optics(r):
    """k = 4 fat tree (16 hosts, 16 host cables, 32 switch-to-switch cables, all 800G): each
    cable draws two modules. One flow from host 0 to host 15 (other pods: two host links and four
    switch-to-switch links, edge-agg-core-agg-edge) at load 0.05: its fastest packet met no
    queue, so a DSP module on every fabric link adds exactly 4 links x 2 x 50 ns."""
    rows = []
    trace = os.path.join(r.workdir, "energy_one_flow.trace")
    write_trace(trace, [(0, 15)], 0.05, 20000, 5)
    base = ["traffic.pattern=trace", f"traffic.trace.file={trace}", "sim.duration=20us"]
    plain = r.run(FAT_TREE, base)
    for host, fabric in (("lpo", "dsp"), ("cpo", "cpo")):
        s = r.run(FAT_TREE, base + [f"link.optics.host={host}", f"link.optics.fabric={fabric}"])
        links = s["energy"]["links"]
        for cls, module, cables in (("host", host, 16), ("fabric", fabric, 32)):
            w = 2 * cables * W_PER_800G[module]
            rows.append(row(f"Optics: k=4 fat tree, {cls} links' power (W)", f"{module}", w,
                            links[cls]["power_W"], 1e-9, f"{cables} cables x 2 modules"))
        added = 4 * 2 * (DSP_NS if fabric == "dsp" else 0.0)
        added += 2 * 2 * (DSP_NS if host == "dsp" else 0.0)
        rows.append(row("Optics: one cross-pod flow, min latency added (ns)",
                        f"host {host}, fabric {fabric}", added,
                        s["latency_ns"]["min"] - plain["latency_ns"]["min"], 1.0,
                        "retiming: 50 ns a module, 2 a link, 4 fabric links"))
    return rows


CASES = {"energy_chip": case_energy_chip, "energy_optics": case_energy_optics}
NOTES = [
    "- Energy rows (validate_energy.py) check the run's energy report against hand calculation",
    "  from the configuration: the 51.2T chip's switching and buffer energy for a trace of known",
    "  frames (exact: they count what crossed), its static energy over the run, and its power at",
    "  the window's load (1% of the load-dependent part: the window's edges). Optics rows check",
    "  the modules' power from the k = 4 fat tree's cable counts and the latency a DSP's retiming",
    "  adds to a cross-pod flow's fastest packet (4 switch-to-switch links x 2 modules x 50 ns).",
    "  The figures themselves (watts, pJ) are presets, mostly assumptions: docs/hardware-facts.md.",
]
