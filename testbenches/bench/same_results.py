#!/usr/bin/env python3
"""Byte-for-byte comparison of two fabricsim builds over a breadth of runs (a check for changes
meant to give the same results: speed work, restructuring).

  same_results.py OLD_FABRICSIM NEW_FABRICSIM [--only NAME,...] [--list] [--keep DIR]

Runs every scenario below with both binaries (one thread each unless the scenario says otherwise)
and compares every output file but perf.json (wall times, memory) byte for byte. Prints one line
per scenario, `same` or `DIFF` with the files that differ, and exits 1 if any differs or either
run failed in a different way from the other (an exit code is compared too). The scenarios cover
the switch models (cycle, packet), schedulers, flow control (PFC with pauses, IB credits, lossy),
ECN and congestion control, the NIC's transports (go-back-N, selective repeat, RUD with trimming),
losses and failed messages, READs and SENDs, collectives, boxes, threads and the example configs.
"""
import argparse
import filecmp
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MSGS = os.path.join(ROOT, "traces", "example_messages.txt")
SHORT = ["sim.duration=4us", "sim.warmup=1us"]
NICRUN = ["sim.traffic_thread=false", "stats.occupancy_interval=0ns", "sim.duration=1us",
          "sim.warmup=0ns"]
FT8 = ["topology.kind=fat_tree", "topology.k=8"]
COLL = NICRUN + ["traffic.pattern=workload", "workload.tc=3"]

# name: (config, [--set ...])
SCENARIOS = {
    "chip51": ("configs/switch_51t2.yaml", []),
    "chip102": ("configs/switch_102t4.yaml", SHORT),
    "chip51_ib": ("configs/switch_51t2_ib.yaml", SHORT),
    "chip51_roce": ("configs/switch_51t2_roce.yaml", SHORT),
    "slotted_islip": ("configs/validation/slotted.yaml", []),
    "dwrr4": ("configs/switch_51t2.yaml", SHORT + [
        "switch.traffic_classes=4", "switch.egress.scheduler=dwrr",
        "switch.egress.dwrr_weights=[1,2,3,4]", "traffic.load=0.9"]),
    "ib_credits4": ("configs/switch_51t2_ib.yaml", SHORT + [
        "switch.traffic_classes=4", "traffic.load=0.95"]),
    "trace_incast": ("configs/examples/trace_incast.yaml", []),
    "pfc_incast_cycle": ("configs/nic_400g.yaml", NICRUN + [
        "traffic.pattern=messages", "traffic.messages.file={incast}", "switch.ports=16",
        "switch.buffer.size=10MB", "switch.buffer.reserved_per_port=0B"]),
    "pfc_incast_ft8_packet": ("configs/nic_400g.yaml", NICRUN + FT8 + [
        "traffic.pattern=messages", "traffic.messages.file={incast}", "switch.ports=16",
        "switch.buffer.size=10MB", "switch.buffer.reserved_per_port=0B", "switch.model=packet"]),
    "fat_tree_k4": ("configs/examples/fat_tree_k4.yaml", []),
    "fat_tree_k4_t2": ("configs/examples/fat_tree_k4.yaml", ["sim.threads=2"]),
    "dragonfly": ("configs/examples/dragonfly.yaml", []),
    "leaf_spine_roce": ("configs/examples/leaf_spine_roce.yaml", []),
    "leaf_spine_innet": ("configs/examples/leaf_spine_innet.yaml", []),
    "leaf_spine_kinds": ("configs/examples/leaf_spine_kinds.yaml", []),
    "rail_only": ("configs/examples/rail_only.yaml", []),
    "rail_optimized": ("configs/examples/rail_optimized.yaml", []),
    "two_switch_ib": ("configs/examples/two_switch_ib.yaml", []),
    "box_102t4": ("configs/examples/box_102t4.yaml", []),
    "dgx_pair": ("configs/examples/dgx_h100_2node.yaml", []),
    "nic400": ("configs/nic_400g.yaml", []),
    "nic800": ("configs/nic_800g.yaml", []),
    "messages_ft8_packet": ("configs/nic_400g.yaml", NICRUN + FT8 + [
        "traffic.pattern=messages", f"traffic.messages.file={MSGS}", "nic.qps_per_pair=2", "switch.model=packet"]),
    "messages_ft8_cycle_t2": ("configs/nic_400g.yaml", NICRUN + FT8 + [
        "traffic.pattern=messages", f"traffic.messages.file={MSGS}", "nic.qps_per_pair=2", "sim.threads=2"]),
    "perm_ft8_packet": ("configs/nic_400g.yaml", NICRUN + FT8 + [
        "traffic.pattern=messages", "traffic.messages.file={perm}", "nic.cc=none",
        "switch.model=packet"]),
    "occupancy_ft4_packet": ("configs/nic_400g.yaml", [
        "sim.traffic_thread=false", "sim.duration=20us", "sim.warmup=2us",
        "stats.occupancy_interval=50ns", "stats.per_port_counters=all", "topology.kind=fat_tree",
        "topology.k=4", "traffic.pattern=messages", "traffic.messages.file={incast}",
        "switch.model=packet"]),
    "a2a_ft8_dcqcn_packet": ("configs/nic_800g.yaml", COLL + FT8 + [
        "workload.collective=alltoall_direct", "workload.bytes=1MiB", "switch.model=packet"]),
    "ring_selective_loss": ("configs/nic_400g.yaml", COLL + FT8 + [
        "workload.collective=allreduce_ring", "workload.bytes=256KiB",
        "nic.transport=selective_repeat", "link.phy.pre_fec_ber=1e-3", "nic.rc.timeout=20us", "switch.model=packet"]),
    "rud_trim_nscc_incast": ("configs/nic_400g.yaml", NICRUN + FT8 + [
        "traffic.pattern=messages", "traffic.messages.file={incast}", "nic.transport=rud", "nic.cc=nscc", "flow_control.mode=none", "switch.buffer.size=4MB",
        "switch.buffer.reserved_per_port=0B",
        "switch.trimming.enabled=true", "switch.routing.hash_fields=src,dst,entropy"]),
    "gbn_fail": ("configs/nic_400g.yaml", NICRUN + FT8 + [
        "traffic.pattern=messages", f"traffic.messages.file={MSGS}", "nic.qps_per_pair=2", "link.phy.pre_fec_ber=2e-3", "nic.rc.timeout=2us",
        "nic.rc.retry_count=1", "switch.model=packet"]),
}
# The exit code a scenario must end with (0 unless named here): gbn_fail's messages fail.
EXPECT = {"gbn_fail": 3}


def message_files(tmp):
    """{incast}: 15 hosts WRITE 512 KiB each into host 0. {perm}: 128 hosts WRITE 2 MiB each to a
    fixed permutation (htsim_side_by_side.py's scenario)."""
    files = {"incast": [f"0 {s} 0 512KiB write tc=3\n" for s in range(1, 16)],
             "perm": [f"0 {s} {(s * 37 + 11) % 128} 2MiB write tc=3\n" for s in range(128)]}
    paths = {}
    for name, lines in files.items():
        paths[name] = os.path.join(tmp, name + ".txt")
        with open(paths[name], "w") as f:
            f.writelines(lines)
    return paths


def run(exe, name, out, files):
    cfg, sets = SCENARIOS[name]
    cmd = [exe, "run", os.path.join(ROOT, cfg), "--out", out]
    for s in sets:
        cmd += ["--set", s.format(**files)]
    env = dict(os.environ, FABRICSIM_HUGE_PAGES="0")
    r = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    return r.returncode, r.stderr


def differing(a, b):
    names = set()
    for d in (a, b):
        for base, _, files in os.walk(d):
            names.update(os.path.relpath(os.path.join(base, f), d) for f in files)
    bad = []
    for n in sorted(names):
        if os.path.basename(n) == "perf.json":
            continue
        pa, pb = os.path.join(a, n), os.path.join(b, n)
        if not (os.path.exists(pa) and os.path.exists(pb)) or not filecmp.cmp(pa, pb, False):
            bad.append(n)
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", nargs="?")
    ap.add_argument("new", nargs="?")
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument("--list", action="store_true", help="list the scenarios and exit")
    ap.add_argument("--keep", default="", help="keep the outputs in this directory")
    a = ap.parse_args()
    if a.list:
        for n, (cfg, sets) in SCENARIOS.items():
            print(n, cfg, " ".join(sets))
        return 0
    if not a.old or not a.new:
        ap.error("OLD_FABRICSIM and NEW_FABRICSIM are required")
    names = [n for n in a.only.split(",") if n] or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        ap.error(f"unknown scenario(s): {', '.join(unknown)} (--list shows them)")
    tmp = a.keep or tempfile.mkdtemp(prefix="same_results.")
    files = message_files(tmp)
    failed = 0
    for n in names:
        oa, ob = os.path.join(tmp, n, "old"), os.path.join(tmp, n, "new")
        ra, ea = run(os.path.abspath(a.old), n, oa, files)
        rb, eb = run(os.path.abspath(a.new), n, ob, files)
        bad = differing(oa, ob)
        if ra != rb or ra != EXPECT.get(n, 0):
            bad.insert(0, f"exit {ra} vs {rb} (expected {EXPECT.get(n, 0)})")
        status = "same" if not bad else "DIFF " + " ".join(bad[:8])
        print(f"{n:24s} exit {ra}  {status}", flush=True)
        if bad:
            failed += 1
            if ra != rb:
                print("  old stderr:", ea.strip()[-300:], "\n  new stderr:", eb.strip()[-300:])
    print(f"{len(names) - failed} of {len(names)} the same")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
