#!/usr/bin/env python3
"""Incremental CPU time per packet-hop of one build against another (a benchmark: prints figures,
asserts nothing): (cpu(D2) - cpu(D1)) / (hops(D2) - hops(D1)), the median of R runs alternating
between the builds, for a single 51.2T chip at load 0.9, a 12-chip leaf-spine at 0.25 and a k = 8
fat tree at 0.5 (docs/performance.md, "Fabrics").

  testbenches/bench/perhop_cpu.py OLD_FABRICSIM,NEW_FABRICSIM [single,leafspine,fattree8]
  (environment: R=3 runs, D1=10 and D2=40 microseconds; D1=100 D2=400 for the steady state: in
  the first tens of microseconds the single chip's cell ids still come in order from a fresh
  free list, which makes its hops cheaper than in any longer run, docs/performance.md;
  THREADS=1,2 runs every build with each sim.threads in turn, as if they were builds, and then
  prints each thread count against the first: CPU per hop as a ratio, wall time as a speed-up,
  medians of the per-repetition ratios; issue #40's target on the k = 8 fat tree is CPU within
  1.15x and a wall speed-up of at least 1.7 with THREADS=1,2 on two cores;
  MODELS=cycle,packet likewise runs each switch.model in turn (every switch of the fabric) and
  prints each model against the first: issue #40's target for the packet model on the k = 8 fat
  tree is CPU per hop at most 0.2x the cycle model's)

Each line gives CPU and wall time per packet-hop (the wall figures are what threads change).
"""
import json, os, resource, statistics, subprocess, sys, tempfile, time
os.chdir(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
threads = [t for t in os.environ.get('THREADS', '').split(',') if t]
models = [m for m in os.environ.get('MODELS', '').split(',') if m]
bins = [(os.path.abspath(b), t, m) for b in sys.argv[1].split(',') for t in (threads or [None])
        for m in (models or [None])]
R = int(os.environ.get('R', '3'))
scen = {
 'single': ['--set', 'traffic.load=0.9'],
 'single50': ['--set', 'traffic.load=0.5'],
 'single25': ['--set', 'traffic.load=0.25'],
 'leafspine': ['--set', 'topology.kind=leaf_spine', '--set', 'topology.leaves=8', '--set', 'topology.spines=4', '--set', 'topology.hosts_per_leaf=16', '--set', 'traffic.load=0.25'],
 'fattree8': ['--set', 'topology.kind=fat_tree', '--set', 'topology.k=8', '--set', 'traffic.load=0.5'],
}
d1, d2 = int(os.environ.get('D1', '10')), int(os.environ.get('D2', '40'))
names = sys.argv[2].split(',') if len(sys.argv) > 2 else list(scen)
def run(bt, args, d):
    b, t, m = bt
    out = tempfile.mkdtemp()
    args = args + (['--set', f'sim.threads={t}'] if t else [])
    # The model of every switch: switch: and each switch kind's (none in these scenarios).
    args = args + (['--set', f'switch.model={m}'] if m else [])
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.monotonic()
    p = subprocess.run([b, 'run', 'configs/switch_51t2.yaml', '--set', 'sim.traffic_thread=false', '--set', 'sim.warmup=2us', '--set', f'sim.duration={d}us', '--set', 'stats.occupancy_interval=0ns'] + args + ['--out', out], capture_output=True); p.returncode and sys.exit(p.stderr.decode())
    wall = time.monotonic() - w0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    s = json.load(open(os.path.join(out, 'summary.json')))
    return (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, wall), sum(x['packets']['departed'] for x in s['switches'])
# Alternating: in each repetition every scenario on every build (builds in turn), so that the
# machine's drift over the session (a shared host) falls on all of them alike; the ratio to the
# single chip is taken within each repetition, then the median.
res = {b: {n: [] for n in names} for b in bins}
wres = {b: {n: [] for n in names} for b in bins}
hops = {}
for k in range(R):
    for n in names:
        for b in (bins if k % 2 == 0 else bins[::-1]):
            c1, h1 = run(b, scen[n], d1); c2, h2 = run(b, scen[n], d2)
            res[b][n].append((c2[0] - c1[0]) / (h2 - h1) * 1e9)
            wres[b][n].append((c2[1] - c1[1]) / (h2 - h1) * 1e9)
            hops[n] = h2 - h1
for n in names:
    for b in bins:
        tag = b[0] + (f' threads={b[1]}' if b[1] else '') + (f' model={b[2]}' if b[2] else '')
        line = (f"{n:10s} {tag:40s} {statistics.median(res[b][n]):8.0f} ns CPU, "
                f"{statistics.median(wres[b][n]):8.0f} ns wall per packet-hop ({hops[n]} hops, "
                f"{d1}->{d2} us, median of {R})")
        if n != 'single' and 'single' in names:
            r = statistics.median(x / y for x, y in zip(res[b][n], res[b]['single']))
            rw = statistics.median(x / y for x, y in zip(wres[b][n], wres[b]['single']))
            line += f"  {r:.2f}x CPU, {rw:.2f}x wall the single chip (medians of per-repetition ratios)"
        print(line, flush=True)
def against_first(values, slot, label):
    """Each build/thread count/model against the first value of `slot` (1: threads, 2: models)."""
    if len(values) < 2:
        return
    for n in names:
        for b in bins:
            if b[slot] == values[0]:
                continue
            base = tuple(values[0] if i == slot else x for i, x in enumerate(b))
            r = statistics.median(x / y for x, y in zip(res[b][n], res[base][n]))
            rw = statistics.median(y / x for x, y in zip(wres[b][n], wres[base][n]))
            print(f"{n:10s} {b[0]} {label}={b[slot]} against {label}={values[0]}: {r:.2f}x CPU "
                  f"per hop, {rw:.2f}x wall speed-up (medians of per-repetition ratios)",
                  flush=True)


against_first(threads, 1, "threads")
against_first(models, 2, "model")
