#!/usr/bin/env python3
"""Random design points through the command line: whatever an architect combines with --set, a
run ends in exit 0 with its conservation laws holding, or in exit 2 with a message that names the
key; never a crash, a hang or a violated invariant. `fabricsim check` must agree with `run` on
which points are bad input (it makes every check `run` makes, before simulating).

  design_space_test.py FABRICSIM [--points N] [--seed S]

The points are drawn from a fixed seed, so a failure repeats; the failing command is printed.
With a larger --points (and another --seed) it is a fuzzer for longer sessions."""
import argparse
import csv
import json
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = ["configs/switch_51t2.yaml", "configs/validation/slotted.yaml",
           "configs/switch_51t2_roce.yaml", "configs/switch_51t2_ib.yaml",
           "configs/switch_102t4.yaml"]
# Values on both sides of the legal ranges and of the consistency rules (clock vs cell time,
# reservations vs buffer, class counts vs weights), so that both outcomes are exercised.
CHOICES = {
    "switch.ports": ["2", "3", "5", "8", "16", "33", "64"],
    "switch.architecture": ["voq", "input_fifo", "output_queued"],
    "switch.forwarding": ["cut_through", "store_and_forward"],
    "switch.traffic_classes": ["1", "2", "4", "8"],
    "switch.crossbar.speedup": ["1", "1.333", "1.5", "2"],
    "switch.scheduler.algorithm": ["islip", "pim", "rr", "wavefront"],
    "switch.scheduler.iterations": ["1", "2", "4"],
    "switch.buffer.size": ["16KiB", "64KiB", "1MiB", "165MB"],
    "switch.buffer.alpha": ["0.125", "1", "8"],
    "switch.buffer.reserved_per_port": ["0B", "1KiB", "4KiB"],
    "switch.egress.scheduler": ["strict_priority", "dwrr"],
    "switch.egress.dwrr_weights": ["[1,2]", "[1,2,3,4,5,6,7,8]"],
    "switch.egress.start": ["first_cell", "all_cells", "no_underrun"],
    "switch.pipeline.ingress_cycles": ["0", "3", "50"],
    "switch.pipeline.crossbar_cycles": ["0", "2"],
    "switch.pipeline.egress_cycles": ["0", "7"],
    "switch.cell_size": ["64B", "254B", "256B"],
    "switch.core_clock": ["1GHz", "2GHz", "3GHz"],
    "switch.port_speed": ["200Gbps", "400Gbps", "800Gbps"],
    "traffic.pattern": ["uniform", "permutation", "hotspot", "incast", "all_to_all"],
    "traffic.load": ["0.01", "0.3", "0.7", "0.95", "1"],
    "traffic.arrival": ["bernoulli", "onoff"],
    "traffic.burst_packets": ["1", "30"],
    "traffic.size": ["64B", "65B", "1500B", "4096B", "9000B"],
    "traffic.sizes": ["[64,1500,9000]", "[100,4000]"],
    "traffic.size_weights": ["[1,1,1]", "[3,1]"],
    "traffic.tc_weights": ["[1,1]", "[1,0,3]", "[0,0,0,1]"],
    "traffic.hotspot.fraction": ["0", "0.3", "1"],
    "traffic.incast.sources": ["1", "3", "7"],
    "traffic.ect": ["true", "false"],
    "link.model": ["ideal", "phy"],
    "link.length_m": ["0", "3", "100"],
    "link.phy.breakout": ["1", "2"],
    # RS(544,514) corrects up to 15 symbols a codeword: at 1e-5 and 1e-4 no frame is lost in a
    # short run, at 1e-3 about one 4 KiB frame in a thousand (the loss path: packets.lost_on_links).
    "link.phy.pre_fec_ber": ["0", "1e-5", "1e-4", "3e-4", "1e-3"],
    "flow_control.mode": ["none", "pfc", "credit"],
    "flow_control.pfc.lossless_mask": ["0", "8", "255"],
    "flow_control.ecn.mark_on": ["enqueue", "dequeue"],
    "topology.kind": ["single"] * 12 + ["line", "leaf_spine", "fat_tree", "rail_optimized",
                                        "rail_only", "dragonfly"] * 2 + ["torus"],
    # Routing modes on every kind (valiant and ugal: dragonfly with flow_control none only).
    "switch.routing.mode": ["ecmp", "spray", "flowlet", "adaptive", "valiant", "ugal", "random"],
    "switch.routing.hash_fields": ["src,dst", "dst", "src,dst,tc", "tc", "src,src", "port"],
    "switch.routing.hash_seed": ["0", "7", "4611686018427387904", "4611686018427387905"],
    "switch.routing.flowlet_gap": ["0ns", "1ps", "50ns", "2us"],
    "switch.routing.flowlet_table_size": ["1", "3", "64", "1048576", "2097152"],
    "switch.routing.ugal_threshold": ["0B", "254B", "64KiB", "2TiB"],
    "stats.per_port_counters": ["auto", "all", "none", "some"],
    # One more chip for a tier (topology.kinds.<tier>, drawn with it below): other port counts,
    # speeds, classes and clocks than switch:, and names the rules refuse.
    "switch_kinds[0]": ["{name: big, ports: 16}", "{name: big, ports: 16}", "{name: big, ports: 3}",
                        "{name: big, ports: 12, architecture: output_queued,"
                        " buffer: {size: 64KiB, reserved_per_port: 0B}}",
                        "{name: big, ports: 10, cell_size: 256B, forwarding: store_and_forward}",
                        "{name: big, ports: 8, scheduler: {algorithm: wavefront}}",
                        "{name: big, port_speed: 400Gbps}", "{name: big, traffic_classes: 2}",
                        "{name: big, core_clock: 100MHz}", "{name: big, ports: 600}",
                        "{name: switch, ports: 16}", "{ports: 16}", "{name: 'a b'}"],
    "sim.duration": ["3us", "10us"],
    "sim.warmup": ["0ns", "1us"],
    "sim.drain_limit": ["5us", "50us"],
    "stats.occupancy_interval": ["0ns", "50ns"],
}
# Each topology kind's own keys: a point of that kind draws some of them too (uniform drawing of
# a few keys out of all would seldom meet them). Sizes on both sides of each kind's rules (too few
# ports, an odd k, more groups than global links join, more rail leaves than a spine has ports),
# kept small: with the small switch.ports below a network has at most a few hundred hosts.
TOPOLOGY = {
    "single": {},
    "line": {"topology.switches": ["2", "3", "5", "65"],
             "topology.hosts_per_switch": ["0", "1", "3", "9"]},
    "leaf_spine": {"topology.leaves": ["1", "2", "5", "0"], "topology.spines": ["1", "2", "4"],
                   "topology.hosts_per_leaf": ["0", "1", "3", "9"],
                   "topology.links_per_pair": ["1", "2", "3"]},
    "fat_tree": {"topology.k": ["0", "2", "3", "4", "6", "10"],
                 "topology.links_per_pair": ["1", "2"]},
    "rail_optimized": {"topology.servers": ["1", "3", "8", "17"],
                       "topology.gpus_per_server": ["1", "2", "4", "8"],
                       "topology.hosts_per_leaf": ["0", "1", "2", "5"],
                       "topology.spines": ["1", "2", "3"]},
    "rail_only": {"topology.servers": ["1", "3", "4", "17"],
                  "topology.gpus_per_server": ["1", "1", "2", "4"],
                  # traffic that stays on one rail (permutation may or may not), and some that not
                  "traffic.pattern": ["incast", "permutation", "uniform"],
                  "traffic.incast.sources": ["1", "2", "3"]},
    "dragonfly": {"topology.routers_per_group": ["2", "3", "4", "1"],
                  "topology.hosts_per_router": ["1", "2", "3"],
                  "topology.global_links": ["1", "2"], "topology.groups": ["0", "2", "3", "10"],
                  "switch.routing.mode": ["ecmp", "valiant", "ugal", "ugal"],
                  "flow_control.mode": ["none", "none", "pfc"]},
    "torus": {},
}
# Keys a point of the kind always draws: rail_only refuses traffic between rails (the configs'
# uniform), valiant and ugal refuse the configs' pfc and credit flow control.
ALWAYS = {"rail_only": ["traffic.pattern"], "dragonfly": ["flow_control.mode"]}
TIERS = {"single": ["switch"], "line": ["switch"], "leaf_spine": ["leaf", "spine"],
         "fat_tree": ["edge", "agg", "core"], "rail_optimized": ["rail_leaf", "spine"],
         "rail_only": ["rail"], "dragonfly": ["router"], "torus": ["switch"]}
# Port counts of the chip in a network (a fat tree's k = 0 takes the largest k the ports allow;
# a dragonfly router of the defaults needs 7).
NETWORK_PORTS = ["3", "4", "6", "8", "8", "12"]
DRAGONFLY_PORTS = ["6", "8", "8", "12"]
# Short runs unless the point sets its own times.
DEFAULTS = {"sim.duration": "5us", "sim.warmup": "1us", "sim.drain_limit": "20us"}
ERROR = re.compile(r"^fabricsim: error: \S")


def draw(rng):
    config = rng.choice(CONFIGS)
    # Half the points are networks: their kind's keys and a few others (each drawn key may be
    # bad input, so fewer of them leaves runs that simulate).
    kind = rng.choice(CHOICES["topology.kind"])
    network = kind != "single"
    keys = [k for k in sorted(CHOICES) if k not in ("topology.kind", "switch_kinds[0]")]
    keys = rng.sample(keys, rng.randint(1, 5) if network else rng.randint(2, 9))
    if network or rng.random() < 0.2:
        keys.append("topology.kind")
    if rng.random() < (0.3 if network else 0.05):
        keys.append("switch_kinds[0]")
    # Lossy links now and then (drawn among all keys, the BER would seldom be): bit errors the FEC
    # cannot always correct.
    lossy = rng.random() < 0.25
    sets = {k: rng.choice(CHOICES[k]) for k in keys}
    if lossy:
        sets["link.phy.pre_fec_ber"] = rng.choice(["1e-4", "1e-3", "1e-3"])
    if "topology.kind" in sets:
        sets["topology.kind"] = kind
    if network:
        own = TOPOLOGY[kind]
        for k in sorted(set(rng.sample(sorted(own), rng.randint(0, len(own)))) |
                        set(ALWAYS.get(kind, []))):
            sets[k] = rng.choice(own[k])
        # Small chips, unless the point drew its own port count (a fat tree always: k grows
        # with the ports).
        if "switch.ports" not in sets or (kind == "fat_tree" and
                                          sets["switch.ports"] not in NETWORK_PORTS):
            sets["switch.ports"] = rng.choice(DRAGONFLY_PORTS if kind == "dragonfly" else
                                              NETWORK_PORTS)
    if "switch_kinds[0]" in sets:
        # The kind's tier, now and then one the topology does not have or a kind nobody defined.
        tier = rng.choice(TIERS[kind] * 3 + ["spine", "core"])
        sets[f"topology.kinds.{tier}"] = rng.choice(["big", "big", "big", "small"])
    for k, v in DEFAULTS.items():
        sets.setdefault(k, v)
    args = [os.path.join(ROOT, config)]
    for k, v in sets.items():
        args += ["--set", f"{k}={v}"]
    return args, ["--seed", str(rng.randint(0, 1000))]


def problems(fabricsim, args, seed, out):
    """The run's exit code, what is wrong with this design point's run (empty: nothing), and the
    frames its links lost."""
    try:
        chk = subprocess.run([fabricsim, "check", *args], capture_output=True, text=True,
                             timeout=60)
        run = subprocess.run([fabricsim, "run", *args, *seed, "--out", out], capture_output=True,
                             text=True, timeout=300)
    except subprocess.TimeoutExpired as e:
        return None, [f"timed out after {e.timeout} s"], 0
    found = []
    if run.returncode not in (0, 2):
        found.append(f"run exited {run.returncode}: {run.stderr[-1500:]}")
    if run.returncode == 2 and not ERROR.match(run.stderr):
        found.append(f"exit 2 without an error message naming the problem: {run.stderr[-500:]}")
    if chk.returncode != run.returncode:
        found.append(f"check exited {chk.returncode} but run exited {run.returncode}: "
                     f"{(chk.stderr or run.stderr)[-500:]}")
    if run.returncode != 0:
        return run.returncode, found, 0
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    if not s["invariants"]["ok"]:
        found.append(f"invariants violated with exit 0: {s['invariants']['violations']}")
    p = s["packets"]
    # packets.dropped counts the frames lost on links too (lost_on_links is a part of it).
    if p["injected"] != p["delivered"] + p["dropped"] + p["in_flight"]:
        found.append(f"packets do not add up: {p}")
    if p["lost_on_links"] > p["dropped"]:
        found.append(f"more packets lost on links than dropped in all: {p}")
    w = p["window"]
    if w["injected"] != w["delivered"] + w["dropped"] + w["in_flight"]:
        found.append(f"window packets do not add up: {w}")
    # Throughput counts frame bytes on the wire inside the window: never above capacity, in total
    # or at any port, however short the window.
    for key in ("offered_load", "accepted_load"):
        if s["throughput"][key] > 1 + 1e-9:
            found.append(f"{key} {s['throughput'][key]} above capacity")
    with open(os.path.join(out, "ports.csv")) as f:
        for row in csv.DictReader(f):
            for key in ("offered_load_in", "accepted_load_out"):
                if float(row[key]) > 1 + 1e-6:  # ports.csv has 6 decimals
                    found.append(f"{row['switch']} port {row['port']} {key} {row[key]} above "
                                 "capacity")
    lat = s["latency_ns"]
    if w["delivered"] and not (0 < lat["p50"] <= lat["p99"] <= lat["p999"] <= lat["max"] * 1.04):
        found.append(f"latency percentiles out of order: {lat}")
    return 0, found, p["lost_on_links"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fabricsim")
    ap.add_argument("--points", type=int, default=150)
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    passed = failed = 0
    outcomes = {0: 0, 2: 0}  # runs that simulated, and bad input
    lossy = 0  # runs whose links lost frames
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.points):
            args, seed = draw(rng)
            code, found, lost = problems(a.fabricsim, args, seed, os.path.join(tmp, str(i)))
            if code in outcomes:
                outcomes[code] += 1
            lossy += lost > 0
            if found:
                failed += 1
                print(f"FAIL point {i}: fabricsim run {' '.join(args + seed)}")
                for f in found:
                    print(f"  {f}")
            else:
                passed += 1
    print(f"design points: {outcomes[0]} simulated ({lossy} losing frames on links), "
          f"{outcomes[2]} refused as bad input")
    # A drawing that only ever produced bad input (or only good) would test half the contract.
    for code, n in outcomes.items():
        if a.points >= 20 and n < a.points // 10:
            print(f"FAIL: only {n} of {a.points} points ended with exit {code}")
            failed += 1
    # The loss path (a frame destroyed on a link, counted in packets.dropped) must be covered.
    if a.points >= 100 and lossy == 0:
        print(f"FAIL: none of {a.points} points lost a frame on a link")
        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
