#!/usr/bin/env python3
"""What a multi-chip box loses against one chip of the same front panel (issue #42 part 1;
docs/boxes.md): configs/switch_102t4.yaml as one 102.4T chip (64 x 1.6T) and as a 409.6T box of
four such chips in a 2+2 Clos (64 x 1.6T front ports: the same hosts), on the same workloads.

    testbenches/bench/box_vs_chip.py build/fabricsim

Prints a Markdown table: accepted load, latency mean / p99, buffer peak, switch power."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHIP = os.path.join(ROOT, "configs", "switch_102t4.yaml")
BOX = ["switch_kinds=[{name: box4, box: {chip: switch, leaves: 2, spines: 2}}]",
       "topology.kinds.switch=box4"]
WORKLOADS = [
    ("uniform, load 0.5", ["traffic.load=0.5"]),
    ("uniform, load 0.9", ["traffic.load=0.9"]),
    ("31-to-1 incast (senders on the other leaf), line rate",
     ["traffic.pattern=incast", "traffic.incast.sources=31", "traffic.incast.target=63",
      "traffic.load=1.0"]),
]


def run(fabricsim, out, sets):
    cmd = [fabricsim, "run", CHIP, "--out", out, "--set", "sim.traffic_thread=false"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, capture_output=True)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def main():
    fabricsim = sys.argv[1]
    print("| workload | build | accepted | latency mean / p99 (ns) | buffer peak (MB; box: sum of its chips') | "
          "switch power (W) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for name, sets in WORKLOADS:
            for build, extra in (("one 102.4T chip", []), ("box of 4 x 102.4T", BOX)):
                s = run(fabricsim, os.path.join(d, f"{len(os.listdir(d))}"), sets + extra)
                lat = s["latency_ns"]
                boxes = s.get("boxes") or []
                b = boxes[0]["buffer"] if boxes else None
                peak = (f"{b['peak_bytes_sum'] / 1e6:.2f} (largest chip {b['peak_bytes_chip'] / 1e6:.2f})"
                        if b else f"{s['buffer']['peak_bytes'] / 1e6:.2f}")
                both = f"{lat['mean']:.1f} / {lat['p99']:.1f}" if lat["count"] else "none delivered"
                print(f"| {name} | {build} | {s['throughput']['accepted_load']:.4f} | "
                      f"{both} | {peak} | "
                      f"{s['energy']['window_power_W']:.0f} |")


if __name__ == "__main__":
    main()
