#!/usr/bin/env python3
"""Speed and memory of fabric runs with RDMA NICs (issue #17, section 5).

  1. 64 NICs on the 51.2T chip (configs/nic_800g.yaml: 64 x 800G, PFC + ECN, DCQCN): all-to-all
     messages of 1 MiB (every NIC to every other, one round posted at time zero), run until every
     message has completed. Target: slowdown (wall / simulated) under 3,000x on this 2-core
     machine.
  2. 1,024 NICs on a k = 16 fat tree of the same chips, uniform 1 MiB messages at load 0.5 for
     --ft-duration: it must run, in under 8 GB.

Per scenario it prints simulated time, wall and CPU seconds (user + system of the run), the
slowdowns (wall and CPU over simulated time), packets, messages and peak RSS (perf.json's
getrusage). Runs alternate between --baseline (an older build) and this one when given, --repeat
times, and the medians are printed last, then (with a baseline) the median over rounds of this
build's time over the baseline's in the same round: the machine is shared and drifts, compare
within one session and by the paired ratio.

  testbenches/bench/nic_speed.py [build/fabricsim] [--baseline OLD] [--repeat 1]
      [--only a2a|fattree] [--ft-duration 50us] [--threads 1,2]

--threads 1,2 runs every build with one thread and with two (sim.threads) in turn.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NIC800 = os.path.join(ROOT, "configs", "nic_800g.yaml")


def scenarios(ft_duration):
    common = ["sim.traffic_thread=false", "stats.occupancy_interval=0ns", "sim.drain_limit=20ms"]
    return {
        "a2a": ("64 NICs, 51.2T, all-to-all 1 MiB, DCQCN + PFC",
                ["traffic.pattern=all_to_all", "traffic.load=0.8", "traffic.message_size=1MiB",
                 "sim.duration=100us", "sim.warmup=10us"] + common),
        "fattree": ("1,024 NICs, fat tree k=16, uniform 1 MiB at load 0.5",
                    ["topology.kind=fat_tree", "topology.k=16", "traffic.pattern=uniform",
                     "traffic.load=0.5", "traffic.message_size=1MiB",
                     f"sim.duration={ft_duration}", "sim.warmup=5us"] + common),
    }


def timed_run(binary, sets, out, ok=(0,)):
    """One `fabricsim run` of configs/nic_800g.yaml: (wall s, CPU s of the run, perf.json,
    summary.json). Exits naming the command unless its exit code is in `ok`."""
    cmd = [binary, "run", NIC800, "--out", out]
    for s in sets:
        cmd += ["--set", s]
    t0 = time.monotonic()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.monotonic() - t0
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode not in ok:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    with open(os.path.join(out, "perf.json")) as f:
        perf = json.load(f)
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return wall, cpu, perf, s


def run(binary, sets, out):
    wall, cpu, perf, s = timed_run(binary, sets, out)
    sim_s = s["window"]["sim_end_ns"] * 1e-9
    return {"wall": wall, "cpu": cpu, "sim_us": sim_s * 1e6, "slow_wall": wall / sim_s,
            "slow_cpu": cpu / sim_s, "rss_mb": perf["peak_rss_mb"],
            "packets": s["packets"]["injected"], "messages": s["transport"]["messages_completed"],
            "posted": s["transport"]["messages_posted"]}


def builds(baseline, fabricsim, threads):
    """The (tag, binary, extra sets) to take turns: the baseline build (if any) and this one, each
    with every thread count of `threads` ("1,2": sim.threads 1 and 2; "": the configs' own)."""
    bins = ([("baseline", baseline)] if baseline else []) + [("this", fabricsim)]
    counts = [t for t in threads.split(",") if t] if threads else []
    if not counts:
        return [(tag, b, []) for tag, b in bins]
    return [(f"{tag} t{t}", b, [f"sim.threads={t}"]) for tag, b in bins for t in counts]


def alternate(scenarios, bins, repeat, only, run, line):
    """Each scenario (name -> (title, sets)) `repeat` times, the builds `bins` ((tag, binary,
    extra sets), builds()) taking turns; prints line(title, tag, result) per run. Returns
    {(name, tag): [results]}."""
    results = {}
    with tempfile.TemporaryDirectory() as d:
        for name, (title, sets) in scenarios.items():
            if only and name != only:
                continue
            for i in range(repeat):
                for tag, b, extra in bins:
                    r = run(b, sets + extra, os.path.join(d, f"{name}_{tag.replace(' ', '_')}_{i}"))
                    results.setdefault((name, tag), []).append(r)
                    print(line(title, tag, r), flush=True)
    return results


def print_paired(results):
    """With a baseline: per scenario and thread count, the median over rounds of this build's
    wall and CPU time over the baseline's in the same round (runs next to each other), and how
    many rounds this build was faster. The host drifts by tens of percent within minutes, which
    the builds' own medians mix in; a round's two runs share its spell."""
    lines = []
    for (name, tag), rs in results.items():
        if not tag.startswith("this"):
            continue
        base = results.get((name, "baseline" + tag[len("this"):]))
        if not base:
            continue
        pairs = list(zip(base, rs))
        ratio = lambda k: statistics.median(t[k] / b[k] for b, t in pairs)
        faster = sum(t["wall"] < b["wall"] for b, t in pairs)
        lines.append(f"  {name} [{tag} / baseline]: wall {ratio('wall'):.3f}x, CPU "
                     f"{ratio('cpu'):.3f}x (median of {len(pairs)} rounds; faster in {faster})")
    if lines:
        print("\npaired (this / baseline, per round):")
        print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("fabricsim", nargs="?", default=os.path.join(ROOT, "build", "fabricsim"))
    ap.add_argument("--baseline", help="an older fabricsim to alternate with")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", choices=["a2a", "fattree"])
    ap.add_argument("--ft-duration", default="50us")
    ap.add_argument("--threads", default="",
                    help="sim.threads values to take turns with, e.g. 1,2 (default: the config's)")
    a = ap.parse_args()
    bins = builds(a.baseline, a.fabricsim, a.threads)
    results = alternate(
        scenarios(a.ft_duration), bins, a.repeat, a.only, run,
        lambda title, tag, r: (
            f"{title} [{tag}]: simulated {r['sim_us']:.1f} us, wall {r['wall']:.2f} s, "
            f"CPU {r['cpu']:.2f} s, slowdown {r['slow_wall']:,.0f}x wall / {r['slow_cpu']:,.0f}x "
            f"CPU, {r['packets']:,} packets, {r['messages']:,}/{r['posted']:,} messages, peak "
            f"RSS {r['rss_mb']:.0f} MB"))
    print("\nmedians:")
    for (name, tag), rs in results.items():
        med = lambda k: statistics.median(r[k] for r in rs)
        print(f"  {name} [{tag}]: slowdown {med('slow_wall'):,.0f}x wall, {med('slow_cpu'):,.0f}x "
              f"CPU, peak RSS {med('rss_mb'):.0f} MB ({len(rs)} runs)")
    print_paired(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
