#!/usr/bin/env python3
"""The per-packet cost of HPCC's in-band telemetry, in instructions (callgrind: deterministic, so
one run per variant is the measurement; the machine's load does not move it).

One scenario, three variants, on configs/nic_400g.yaml (16 x 400G NICs on one chip, uniform
64 KiB WRITEs at load 0.5, 100 us):
  none     nic.cc=none: no telemetry, an ACK per 16 packets
  hpcc     nic.cc=hpcc: INT header on data and ACKs (42 B), stacks carried beside the packets
           through hosts, links and the switch, a hop stamped at each egress, an ACK per packet,
           HPCC's law per ACK
  int_off  nic.cc=hpcc with switch.int_telemetry=false: the same frames, stacks carried but not
           stamped (so HPCC sees no hop and stays at line rate)
For each: instructions, packets through the switch (data and control), and instructions per
packet. hpcc against int_off is the switch's stamping; int_off against none is carrying the
stacks and the per-packet ACKs.

  testbenches/bench/int_cost.py [build/fabricsim] [--duration 100us]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NIC400 = os.path.join(ROOT, "configs", "nic_400g.yaml")
VARIANTS = {"none": ["nic.cc=none"], "hpcc": ["nic.cc=hpcc"],
            "int_off": ["nic.cc=hpcc", "switch.int_telemetry=false"]}


def run(binary, duration, extra, tmp, name):
    out = os.path.join(tmp, name)
    cg = os.path.join(tmp, name + ".cg")
    sets = ["switch.ports=16", "traffic.pattern=uniform", "traffic.load=0.5",
            "traffic.message_size=64KiB", f"sim.duration={duration}", "sim.warmup=5us",
            "sim.traffic_thread=false", "stats.occupancy_interval=0ns"] + extra
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg}", binary, "run", NIC400,
           "--out", out] + [x for s in sets for x in ("--set", s)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    with open(cg) as f:
        ir = int(re.search(r"^summary: (\d+)", f.read(), re.M).group(1))
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return ir, s["packets"]["delivered"], s["transport"]  # every frame, data and control


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fabricsim", nargs="?", default=os.path.join(ROOT, "build", "fabricsim"))
    ap.add_argument("--duration", default="100us")
    a = ap.parse_args()
    if not os.access(a.fabricsim, os.X_OK):
        print(f"{a.fabricsim}: not an executable", file=sys.stderr)
        return 2
    print(f"{'variant':<9}{'instructions':>15}{'packets':>10}{'per packet':>12}"
          f"{'messages':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, extra in VARIANTS.items():
            ir, packets, t = run(a.fabricsim, a.duration, extra, tmp, name)
            print(f"{name:<9}{ir:>15,}{packets:>10,}{ir / packets:>12,.0f}"
                  f"{t['messages_completed']:>10,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
