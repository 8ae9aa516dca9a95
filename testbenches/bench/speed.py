#!/usr/bin/env python3
"""Whole-simulator speed benchmark (a benchmark, not a test: it prints figures, asserts nothing).

  speed.py [--fabricsim build/fabricsim] [--repeat 5] [--write docs/performance.md] [--json FILE]
           [--instructions]
  speed.py --headline docs/performance.md          # no runs: the instruction table from goldens
  speed.py --check-headline docs/performance.md    # no runs: exit 1 if the block is not current

Scenarios (issue #2, section 8):
  slotted64 - configs/validation/slotted.yaml, 64 ports, voq + islip (1 iteration), uniform
              Bernoulli load 0.6: simulated cell times per wall second (1 cell time = 1 cycle).
  chip51_uniform / chip51_a2a - configs/switch_51t2.yaml, 4096 B packets at load 0.9 with uniform
              random destinations / the all_to_all pattern: slowdown (wall / simulated time) and
              peak memory.
  incast_pfc / incast_credit - the RoCE-style and IB-style 51.2T configs under a 63-to-1 incast at
              line rate: slowdown and peak memory.
Figures are medians over --repeat runs. The machine reference benchmark (machine_ref_bench) is
probed before every run: on this shared VM the same build runs up to ~1.5x slower when other
tenants load the cores, and its parallel-ALU step says, roughly, how loaded they were.
The block that --write rewrites (between <!-- speed:begin --> and <!-- speed:end -->) ends with
the instruction counts of the nightly suite's `instructions:` cases, read from its goldens
(testbenches/regress/nightly.goldens.json, written by `fabricsim regress --update-goldens`, held to
a tight band by every nightly run): the figures that do not move with the hour. --headline rewrites
that part alone, without running anything, when the goldens change; --check-headline (a CTest)
fails when the block is missing, its timing table does not parse, or its instruction table is not
the goldens'.
Each run's CPU time (user + system of the fabricsim process, from getrusage of the waited child)
is recorded beside its wall time: a run whose wall time exceeds 1.2x its CPU time waited for a
CPU (other processes time-sliced it), so its wall-clock figures understate the build; those runs
are listed under the table and flagged in --json ("time_sliced").
"""
import argparse
import datetime
import json
import os
import platform
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCENARIOS = [
    ("slotted64", "configs/validation/slotted.yaml",
     ["switch.ports=64", "switch.scheduler.algorithm=islip", "switch.scheduler.iterations=1",
      "traffic.load=0.6", "sim.duration=104us", "sim.warmup=4us"]),
    ("chip51_uniform", "configs/switch_51t2.yaml",
     ["traffic.pattern=uniform", "traffic.load=0.9", "traffic.size=4096B", "sim.duration=200us",
      "sim.warmup=20us"]),
    ("chip51_a2a", "configs/switch_51t2.yaml",
     ["traffic.pattern=all_to_all", "traffic.load=0.9", "traffic.size=4096B",
      "sim.duration=200us", "sim.warmup=20us"]),
    # Issue #3: 63-to-1 incast at line rate with lossless flow control (PFC / IB credits).
    ("incast_pfc", "configs/switch_51t2_roce.yaml",
     ["traffic.pattern=incast", "traffic.incast.target=0", "traffic.incast.sources=63",
      "traffic.load=1.0", "traffic.size=4096B", "sim.duration=200us", "sim.warmup=20us"]),
    ("incast_credit", "configs/switch_51t2_ib.yaml",
     ["traffic.pattern=incast", "traffic.incast.target=0", "traffic.incast.sources=63",
      "traffic.load=1.0", "traffic.size=4096B", "sim.duration=200us", "sim.warmup=20us"]),
]


def run_command(fabricsim, config, sets, out):
    cmd = [fabricsim, "run", os.path.join(ROOT, config), "--out", out]
    for s in sets:
        cmd += ["--set", s]
    return cmd


# A run whose wall time exceeds its CPU time by more than this waited for a CPU.
TIME_SLICED_RATIO = 1.2


def time_sliced(wall_s, cpu_s):
    """Whether a single-threaded run spent noticeably longer on the clock than on a CPU: it
    was descheduled (other processes on its cores), so its speed figures are the machine's."""
    return wall_s > TIME_SLICED_RATIO * cpu_s


def timed_run(cmd):
    """Runs cmd to its end: (CompletedProcess, wall seconds, CPU seconds). The CPU time is the
    child's user + system time, from the rusage of the children this process waited for (the
    difference around the run: children run one at a time here)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p, wall, cpu


def run_once(fabricsim, config, sets, out):
    """perf.json of one run, with the process's wall and CPU time (whole process, start-up and
    file writing included) and whether it was time-sliced."""
    cmd = run_command(fabricsim, config, sets, out)
    p, wall, cpu = timed_run(cmd)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    with open(os.path.join(out, "perf.json")) as f:
        perf = json.load(f)
    perf.update(process_wall_s=wall, process_cpu_s=cpu, time_sliced=time_sliced(wall, cpu))
    return perf


def probe(path, benchmark, cpus):
    """The machine reference's step in ns for one of its benchmarks: a 0.1 s run pinned to each
    of cpus at once, averaged; None if the reference is not built."""
    if not os.path.exists(path):
        return None
    cmd = [path, f"--benchmark_filter={benchmark}", "--benchmark_min_time=0.1",
           "--benchmark_format=json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=lambda c=c: os.sched_setaffinity(0, {c}))
             for c in cpus]
    steps = []
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            sys.exit(f"{path} failed ({p.returncode}):\n{err}")
        steps.append(1e9 / json.loads(out)["benchmarks"][0]["items_per_second"])
    return statistics.mean(steps)


def machine_ref(path):
    """The parallel-ALU step on every core at once (the simulation's threads may be on any of
    them): it rises when other tenants share the cores."""
    return probe(path, "BM_Parallel", sorted(os.sched_getaffinity(0)))


def host():
    """The CPU model and clock as the kernel reports them: the hosts behind this VM have
    changed between days, and the figures with them."""
    model, mhz = platform.processor() or platform.machine(), None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "cpu MHz" and mhz is None:
                    mhz = float(value)
    except OSError:
        pass
    return model, mhz


# The instruction count: callgrind on a short slotted run, on one thread (the helper threads' wait
# loops would add a varying count). The same for the same binary whatever the machine is doing,
# so it compares builds across hours.
INSTRUCTION_RUN = ("configs/validation/slotted.yaml",
                   ["switch.ports=64", "switch.scheduler.algorithm=islip",
                    "switch.scheduler.iterations=1", "traffic.load=0.6", "sim.duration=6us",
                    "sim.warmup=1us", "sim.traffic_thread=false"])


def count_instructions(fabricsim, out):
    """(instructions, packets injected) of INSTRUCTION_RUN under callgrind."""
    if shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind (Debian package valgrind)")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/callgrind.out",
           *run_command(fabricsim, *INSTRUCTION_RUN, out)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    with open(os.path.join(out, "summary.json")) as f:
        return int(m.group(1)), json.load(f)["packets"]["injected"]


# ---- the headline block of docs/performance.md ------------------------------------------------

BEGIN, END = "<!-- speed:begin -->", "<!-- speed:end -->"
GOLDENS = os.path.join(ROOT, "testbenches", "regress", "nightly.goldens.json")
# The instruction part of the block starts with this line (so did the older one-line figure).
INSTRUCTIONS_HEAD = "Instructions (callgrind"
TIMING_HEADER = re.compile(r"^\| scenario \| figure \| median of (\d+) \| range \| target \|$")


class HeadlineError(Exception):
    pass


def instruction_table(goldens_path=GOLDENS):
    """The instruction part of the headline block: one row per nightly case with an instruction
    golden, as the goldens hold it (so regenerating it runs nothing)."""
    with open(goldens_path) as f:
        cases = json.load(f)["cases"]
    rel = os.path.relpath(goldens_path, ROOT)
    counted = [(name, c) for name, c in sorted(cases.items()) if "instructions" in c]
    if not counted:
        raise HeadlineError(f"{rel} holds no instruction counts (cases with instructions:)")
    first = counted[0][1]["instructions"]
    lines = [
        f"{INSTRUCTIONS_HEAD}, one thread: `{' '.join(first['set'])}`), as the nightly suite "
        f"holds them (`{rel}`, its `instructions:` cases; docs/regressions.md), counted by "
        f"valgrind {first['valgrind']} on a build of {first['compiler'].split(' (')[0]}:",
        "",
        "| nightly case | run | instructions | delivered packets | per packet |",
        "|---|---|---|---|---|",
    ]
    for name, c in counted:
        i, cfg = c["instructions"], c["config"]
        run = f"`{cfg['file']}` with `{' '.join(cfg['set'])}`"
        lines.append(f"| `{name}` | {run} | {i['total'] / 1e6:,.1f} M | "
                     f"{i['packets_delivered']:,} | {i['per_packet']:,.0f} |")
    return "\n".join(lines)


def split_block(doc, path="docs/performance.md"):
    """(head, block, tail) of the doc around the markers; the block must be the first table under
    '## Whole simulator'."""
    if doc.count(BEGIN) != 1 or doc.count(END) != 1 or doc.index(BEGIN) > doc.index(END):
        raise HeadlineError(f"{path}: expected one {BEGIN} ... {END} block")
    head, rest = doc.split(BEGIN, 1)
    block, tail = rest.split(END, 1)
    section = head.rfind("\n## ")
    if section < 0 or not head[section:].startswith("\n## Whole simulator"):
        raise HeadlineError(f"{path}: the {BEGIN} block is not under '## Whole simulator'")
    if re.search(r"^\|", head[section:], re.M):
        raise HeadlineError(f"{path}: a table precedes the {BEGIN} block under "
                            "'## Whole simulator': the headline table must be inside it")
    return head, block.strip("\n"), tail


def timing_part(block, path="docs/performance.md"):
    """The block without its instruction part, after checking that its timing table parses:
    the header speed.py writes, and rows of five cells whose median and range are figures."""
    lines = block.split("\n")
    cut = next((k for k, l in enumerate(lines) if l.startswith(INSTRUCTIONS_HEAD)), len(lines))
    timing = lines[:cut]
    while timing and not timing[-1].strip():
        timing.pop()
    if not timing or not TIMING_HEADER.match(timing[0]) or timing[1:2] != ["|---|---|---|---|---|"]:
        raise HeadlineError(f"{path}: the headline block does not open with speed.py's table "
                            "header (| scenario | figure | median of N | range | target |)")
    rows = 0
    for l in timing[2:]:
        if not l.startswith("|"):
            break
        cells = [c.strip() for c in l.strip().strip("|").split("|")]
        figure = re.compile(r"^[0-9][0-9,.]*( ?x| MB)?$")
        ends = cells[3].split(" - ") if len(cells) == 5 else []
        if len(cells) != 5 or not figure.match(cells[2]) or len(ends) != 2 or \
                not all(figure.match(e) for e in ends):
            raise HeadlineError(f"{path}: headline row does not parse: {l}")
        rows += 1
    if rows == 0:
        raise HeadlineError(f"{path}: the headline table has no rows")
    return "\n".join(timing)


def render_block(timing, goldens_path=GOLDENS):
    return f"{BEGIN}\n{timing}\n\n{instruction_table(goldens_path)}\n{END}"


def write_headline(path, timing=None, goldens_path=GOLDENS):
    """Rewrites the block: the given timing part (a timed run's), or the one the doc has."""
    with open(path) as f:
        doc = f.read()
    head, block, tail = split_block(doc, path)
    if timing is None:
        timing = timing_part(block, path)
    with open(path, "w") as f:
        f.write(head + render_block(timing, goldens_path) + tail)


def check_headline(path, goldens_path=GOLDENS):
    """Problems of the doc's block (empty: it is what the script writes)."""
    try:
        with open(path) as f:
            doc = f.read()
        _, block, _ = split_block(doc, path)
        timing = timing_part(block, path)
        want = render_block(timing, goldens_path)
    except (HeadlineError, OSError, KeyError, ValueError) as e:
        return [str(e)]
    if f"{BEGIN}\n{block}\n{END}" != want:
        return [f"{path}: the instruction table is not the nightly goldens' "
                f"({os.path.relpath(goldens_path, ROOT)}): regenerate it with "
                f"testbenches/bench/speed.py --headline {path} (never by hand)"]
    return []


def cpu_note(results):
    """One line on the runs' CPU time against their wall time: which runs were time-sliced."""
    sliced = [f"{name} #{k + 1} (wall {w:.2f} s, CPU {c:.2f} s)"
              for name, r in results.items()
              for k, (w, c, t) in enumerate(zip(r["process_wall_s"], r["process_cpu_s"],
                                                r["time_sliced"])) if t]
    total = sum(len(r["time_sliced"]) for r in results.values())
    if not sliced:
        return (f"CPU time: every run's wall time within {TIME_SLICED_RATIO}x its CPU time "
                f"({total} runs): none waited for a CPU.")
    return (f"CPU time: {len(sliced)} of {total} runs time-sliced (wall > {TIME_SLICED_RATIO}x "
            f"CPU: other processes had their CPU; their figures understate the build): "
            + "; ".join(sliced) + ".")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--fabricsim", default=os.path.join(ROOT, "build", "fabricsim"))
    ap.add_argument("--machine-ref",
                    default=os.path.join(ROOT, "build", "testbenches", "bench", "machine_ref_bench"),
                    help="the machine reference benchmark, probed before every run")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--write", help="also write the table into this Markdown file")
    ap.add_argument("--json", help="also write every run's figures and probe to this JSON file "
                    "(for scripts and nightly records)")
    ap.add_argument("--instructions", action="store_true",
                    help="also count this build's instructions of a 6 us slotted run with "
                         "callgrind (~20 s; needs valgrind), printed and in --json: the figure "
                         "that does not move with the hour (the doc's come from the goldens)")
    ap.add_argument("--headline", metavar="DOC",
                    help="run nothing: rewrite DOC's block with the instruction counts of the "
                         "nightly goldens, its timing table kept")
    ap.add_argument("--check-headline", metavar="DOC",
                    help="run nothing: exit 1 unless DOC's block is as --headline writes it")
    ap.add_argument("--goldens", default=GOLDENS,
                    help="the goldens with the instruction counts (default: %(default)s)")
    a = ap.parse_args()
    try:
        if a.check_headline:
            problems = check_headline(a.check_headline, a.goldens)
            for p in problems:
                print(p, file=sys.stderr)
            sys.exit(1 if problems else 0)
        if a.headline:
            write_headline(a.headline, goldens_path=a.goldens)
            return
    except (HeadlineError, OSError, KeyError, ValueError) as e:
        sys.exit(f"speed.py: {e}")
    # The dependent-chain step: the host's own single-thread speed, which other tenants barely
    # move (it tells a faster host from a quieter hour).
    chain_ns = probe(a.machine_ref, "BM_Chain", sorted(os.sched_getaffinity(0))[:1])
    results = {}
    with tempfile.TemporaryDirectory() as d:
        for name, config, sets in SCENARIOS:
            runs, probes = [], []  # probes: the machine reference just before each run
            for k in range(a.repeat):
                probes.append(machine_ref(a.machine_ref))
                runs.append(run_once(a.fabricsim, config, sets, os.path.join(d, f"{name}{k}")))
            results[name] = {k: [r[k] for r in runs]
                             for k in ("cycles_per_s", "slowdown", "packets_per_s", "peak_rss_mb",
                                       "process_wall_s", "process_cpu_s", "time_sliced")}
            results[name]["machine_ref_parallel_ns"] = probes

    def row(scenario, figure, values, fmt, target=""):
        # The median, and the spread of the runs: on a shared machine it is often wide.
        med = fmt.format(statistics.median(values))
        spread = f"{fmt.format(min(values))} - {fmt.format(max(values))}"
        return f"| {scenario} | {figure} | {med} | {spread} | {target} |"

    lines = [
        f"| scenario | figure | median of {a.repeat} | range | target |",
        "|---|---|---|---|---|",
        row("slotted 64-port voq + iSLIP-1, load 0.6", "cell times per wall second",
            results["slotted64"]["cycles_per_s"], "{:,.0f}", ">= 180,000"),
    ]
    for key, label in (("chip51_uniform", "uniform"), ("chip51_a2a", "all_to_all")):
        c, sc = results[key], f"51.2T chip, {label}, 4096 B, load 0.9"
        lines.append(row(sc, "slowdown (wall / simulated)", c["slowdown"], "{:,.0f}x", "< 5,000x"))
        lines.append(row(sc, "peak RSS", c["peak_rss_mb"], "{:.0f} MB"))
        lines.append(row(sc, "packets per wall second", c["packets_per_s"], "{:,.0f}"))
    for key, label in (("incast_pfc", "RoCE (PFC)"), ("incast_credit", "IB (credits)")):
        c, sc = results[key], f"51.2T {label}, 63-to-1 incast, 4096 B, line rate"
        lines.append(row(sc, "slowdown", c["slowdown"], "{:,.0f}x"))
        lines.append(row(sc, "peak RSS", c["peak_rss_mb"], "{:.0f} MB"))
    # When and from what: on a shared machine the hour matters as much as the build.
    try:
        rev = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        rev = "unknown"
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines.append("")
    lines.append(f"Measured {when}, source {rev}.")
    lines.append(cpu_note(results))
    model, mhz = host()
    clock = f" at {mhz:.0f} MHz" if mhz else ""
    lines.append(f"Host: {model}{clock}, {len(os.sched_getaffinity(0))} CPUs usable.")
    slot = results["slotted64"]["machine_ref_parallel_ns"]
    if chain_ns is not None and all(v is not None for v in slot):
        # How fast the host is, and how busy the cores' other tenants were: the figures above
        # move with both.
        every = [v for r in results.values() for v in r["machine_ref_parallel_ns"]]
        lines.append(
            f"Machine reference (`machine_ref_bench`): dependent-chain step {chain_ns:.2f} ns "
            f"(the host's speed); parallel step, probed on every core at once before each run, "
            f"{statistics.median(slot):.2f} ns before the slotted runs "
            f"({min(slot):.2f} - {max(slot):.2f}), {statistics.median(every):.2f} ns over all "
            f"(it rises when other tenants load the cores).")
    else:
        lines.append(f"(No machine reference: {a.machine_ref} is not built.)")
    instructions = None
    table = "\n".join(lines)
    print(table)
    if a.instructions:
        with tempfile.TemporaryDirectory() as d:
            instructions, packets = count_instructions(a.fabricsim, d)
        print(f"\nThis build's instructions (callgrind, `{INSTRUCTION_RUN[0]}` with "
              f"`{' '.join(INSTRUCTION_RUN[1])}`): {instructions / 1e6:,.1f} M for {packets:,} "
              f"packets.")
    print(f"\nmachine: {platform.machine()}, {os.cpu_count()} cpus; "
          f"command: testbenches/bench/speed.py {shlex.join(sys.argv[1:])}")
    if a.json:
        record = {"measured_utc": when, "source": rev, "repeat": a.repeat,
                  "host": {"model": model, "mhz": mhz},
                  "machine_ref_chain_ns": chain_ns, "instructions": instructions,
                  "scenarios": {name: {"config": config, "set": sets, **results[name]}
                                for name, config, sets in SCENARIOS}}
        with open(a.json, "w") as f:
            json.dump(record, f, indent=2)
            f.write("\n")
    if a.write:
        try:
            write_headline(a.write, timing=table, goldens_path=a.goldens)
        except (HeadlineError, OSError, KeyError, ValueError) as e:
            sys.exit(f"speed.py: {e}")


if __name__ == "__main__":
    main()
