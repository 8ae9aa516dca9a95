#!/usr/bin/env python3
"""Speed and memory of collective workloads over the RDMA NICs (issue #18, section 5).

  1. allreduce: 64 ranks on one 51.2T switch (configs/nic_800g.yaml: 64 x 800G, PFC + ECN,
     DCQCN), ring all-reduce of 64 MB with the full NIC model. Target: under 60 s of wall time.
  2. alltoall: 1,024 ranks on a k = 16 fat tree of the same chips, direct all-to-all of 1 MiB per
     pair (S = 1 GiB a rank, 1,047,552 messages) with NCCL's QP timeout: wall time and peak
     memory; must run in 8 GB.
     --a2a-limit caps the simulated time (sim.drain_limit): the run then stops with the calls
     unfinished (the liveness check says so: expected) and the figures are for what it did.
     --a2a-algorithm pairwise runs MPI's pairwise exchange instead (step k: rank r sends to
     r + k and receives from r - k, one peer at a time: the order of NCCL's peer schedule).
     Under the shipped ECMP and go-back-N, the direct call to its end (--a2a-limit 100ms,
     --set switch.model=packet, --threads 2) took 28.2 min and 4.75 GB on 2026-11-30's sixth
     session (28.7 the session before, 39.8 the one before that; docs/performance.md, "tenth
     pass"); the pairwise one reached step 724 of
     1,023, 28 ms, in 100 min and 3.1 GB on the host of 2026-11-28's seventh session (cycle-model
     switches); the pairwise call with --set nic.transport=rud --set
     switch.routing.hash_fields=src,dst,entropy (per-packet spraying) ran to its end in 2 h 07
     min and 3.7 GB (docs/performance.md, "The 1,024-rank all-to-all to its end").

Per scenario: simulated time, wall and CPU seconds (user + system), slowdowns, messages, the
collective's time and busbw when it finished, and peak RSS (perf.json). With --baseline the runs
alternate between an older build and this one, --repeat times; medians last (the machine is
shared: compare within one session).

  testbenches/bench/workload_speed.py [build/fabricsim] [--baseline OLD] [--repeat 1]
      [--only allreduce|alltoall] [--a2a-limit 200us] [--a2a-algorithm direct|pairwise]
      [--threads 1,2] [--set KEY=VALUE ...]

--set adds an override to every run (e.g. --set switch.routing.mode=spray --set
nic.transport=selective_repeat: the pairwise call on a sprayed fabric).
"""
import argparse
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# (One runner for both benchmarks.)
from nic_speed import alternate, builds, print_paired, timed_run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def scenarios(a2a_limit, a2a_algorithm):
    common = ["sim.traffic_thread=false", "stats.occupancy_interval=0ns", "sim.duration=1us",
              "sim.warmup=0ns", "traffic.pattern=workload", "workload.tc=3"]
    return {
        "allreduce": ("64 ranks, 51.2T, ring all-reduce of 64 MB",
                      # Unpipelined (one message per step: 8,064), as its timings in
                      # docs/performance.md were taken before workload.chunk's default was 512 KiB.
                      ["workload.ranks=64", "workload.bytes=64MB", "sim.drain_limit=100ms",
                       "workload.chunk=0"] + common),
        "alltoall": (f"1,024 ranks, fat tree k=16, {a2a_algorithm} all-to-all of 1 MiB per pair",
                     ["topology.kind=fat_tree", "topology.k=16",
                      f"workload.collective=alltoall_{a2a_algorithm}",
                      "workload.bytes=1GiB", f"sim.drain_limit={a2a_limit}",
                      # NCCL's QP timeout (NCCL_IB_TIMEOUT 18: 4.096 us x 2^18), not the shipped
                      # 100 us: a NIC round-robins 1,023 QPs, so a QP's ACK (every 16 packets)
                      # comes ~690 us after its first packet and 100 us would fire spuriously.
                      "nic.rc.timeout=1073741824ns"] + common),
    }


def run(binary, sets, out):
    wall, cpu, perf, s = timed_run(binary, sets, out, ok=(0, 3))  # 3: the capped call unfinished
    with open(os.path.join(out, "collectives.csv")) as f:
        calls = list(csv.DictReader(f))
    sim_s = s["window"]["sim_end_ns"] * 1e-9
    done = calls and calls[0]["state"] == "finished"
    return {"wall": wall, "cpu": cpu, "sim_us": sim_s * 1e6, "slow_wall": wall / sim_s,
            "slow_cpu": cpu / sim_s, "rss_mb": perf["peak_rss_mb"],
            "messages": s["transport"]["messages_completed"],
            "posted": s["transport"]["messages_posted"],
            "call": (f"call {float(calls[0]['time_ns']) / 1e3:.1f} us, busbw "
                     f"{float(calls[0]['busbw_GBps']):.1f} GB/s" if done else "call unfinished")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("fabricsim", nargs="?", default=os.path.join(ROOT, "build", "fabricsim"))
    ap.add_argument("--baseline", help="an older fabricsim to alternate with")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", choices=["allreduce", "alltoall"])
    ap.add_argument("--a2a-limit", default="200us")
    ap.add_argument("--a2a-algorithm", choices=["direct", "pairwise"], default="direct")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="an override for every run (repeatable)")
    ap.add_argument("--threads", default="",
                    help="sim.threads values to take turns with, e.g. 1,2 (default: the config's)")
    a = ap.parse_args()
    bins = builds(a.baseline, a.fabricsim, a.threads)
    results = alternate(
        {k: (title, sets + a.set) for k, (title, sets) in
         scenarios(a.a2a_limit, a.a2a_algorithm).items()}, bins, a.repeat, a.only, run,
        lambda title, tag, r: (
            f"{title} [{tag}]: simulated {r['sim_us']:.1f} us, wall {r['wall']:.2f} s, "
            f"CPU {r['cpu']:.2f} s, slowdown {r['slow_wall']:,.0f}x wall / {r['slow_cpu']:,.0f}x "
            f"CPU, {r['messages']:,}/{r['posted']:,} messages, {r['call']}, peak RSS "
            f"{r['rss_mb']:.0f} MB"))
    print("\nmedians:")
    for (name, tag), rs in results.items():
        med = lambda k: statistics.median(r[k] for r in rs)
        print(f"  {name} [{tag}]: wall {med('wall'):.1f} s, CPU {med('cpu'):.1f} s, slowdown "
              f"{med('slow_cpu'):,.0f}x CPU, peak RSS {med('rss_mb'):.0f} MB ({len(rs)} runs)")
    print_paired(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
