#!/usr/bin/env python3
"""Co-simulation tests through the `fabricsim` command line (CTest label cosim).

  cosim_test.py FABRICSIM block BLOCK CYCLES   standard run: exit 0, the verdict line, every
                                                coverage bin hit
  cosim_test.py FABRICSIM mutant BLOCK CYCLES [VARIANT]
                                                the block's mutant RTL (variant 1 by default):
                                                exit 1, mismatches reported with
                                                cycle/signal/expected/got/seed, a window FST
  cosim_test.py FABRICSIM inloop CONFIG DURATION [--key IMPL_KEY] [--set K=V]... [--nonzero P]...
                [--same FILE]...                `fabricsim run` with IMPL_KEY (default
                                                switch.scheduler.impl) = model and = rtl, same
                                                seed: summary.json identical except the echoed impl;
                                                each summary figure P (a.b.c) must be > 0 and each
                                                output FILE byte-identical
  cosim_test.py FABRICSIM badinput             impl: rtl misuse and unknown blocks exit 2
"""
import json
import os
import re
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(cmd, cwd=None):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def coverage_bins(out):
    """{bin: count} from the coverage block of a cosim report."""
    bins = {}
    inside = False
    for line in out.splitlines():
        if line.startswith("coverage ("):
            inside = True
            continue
        if inside:
            m = re.match(r"^  (.*?)\s+(\d+)(  <- MISSED)?$", line)
            if not m:
                break
            bins[m.group(1)] = int(m.group(2))
    return bins


def test_block(fabricsim, block, cycles):
    rc, out, err = run([fabricsim, "cosim", block, "--cycles", cycles, "--seed", "1"])
    print(out[-3000:], err)
    check(rc == 0, f"{block}: exit code 0 (got {rc})")
    m = re.search(r"^co-simulation matched (\d+) cycles \((\d+) transactions\)$", out, re.M)
    check(m is not None, f"{block}: verdict line present")
    if m:
        check(int(m.group(1)) >= int(cycles), f"{block}: at least {cycles} cycles compared")
        check(int(m.group(2)) > 0, f"{block}: transactions > 0")
    bins = coverage_bins(out)
    check(len(bins) >= 8, f"{block}: coverage report has bins ({len(bins)})")
    missed = [b for b, n in bins.items() if n == 0]
    check(not missed, f"{block}: every coverage bin hit (missed: {missed})")
    check("MISMATCH" not in out, f"{block}: no mismatch lines")


def test_mutant(fabricsim, block, cycles, variant="1"):
    with tempfile.TemporaryDirectory() as tmp:
        rc, out, err = run([fabricsim, "cosim", block, "--mutant", "--variant", variant,
                            "--cycles", cycles, "--seed", "3"], cwd=tmp)
        print(out[-3000:], err)
        check(rc == 1, f"{block} mutant: exit code 1 (got {rc})")
        m = re.search(r"^co-simulation FAILED: (\d+) mismatches in (\d+) cycles "
                      r"\(first at cycle (\d+)\)$", out, re.M)
        check(m is not None and int(m.group(1)) > 0, f"{block} mutant: FAILED verdict")
        lines = re.findall(r"^MISMATCH cycle (\d+) signal (\S+) expected 0x[0-9a-f]+ "
                           r"got 0x[0-9a-f]+ \(seed 3\)$", out, re.M)
        check(len(lines) > 0, f"{block} mutant: mismatch lines with cycle/signal/values/seed")
        if m and lines:
            check(int(lines[0][0]) == int(m.group(3)), f"{block} mutant: first line = first cycle")
            check(len(lines) <= 20, f"{block} mutant: at most 20 mismatches printed verbatim")
            if int(m.group(1)) > 20:
                check("more mismatches not shown" in out, f"{block} mutant: the rest counted")
        fst = os.path.join(tmp, f"cosim-{block}-seed3-mismatch.fst")
        check(os.path.exists(fst) and os.path.getsize(fst) > 100,
              f"{block} mutant: window waveform written ({fst})")


def test_inloop(fabricsim, config, duration, sets, key="switch.scheduler.impl", nonzero=(),
                same=()):
    results = {}
    files = {}
    with tempfile.TemporaryDirectory() as tmp:
        for impl in ("model", "rtl"):
            out = os.path.join(tmp, impl)
            cmd = [fabricsim, "run", config, "--out", out, "--seed", "7",
                   "--set", f"sim.duration={duration}", "--set", f"{key}={impl}"]
            for s in sets:
                cmd += ["--set", s]
            rc, so, se = run(cmd)
            check(rc == 0, f"run {key}={impl} {' '.join(sets)}: exit 0 (got {rc}) {se.strip()}")
            with open(os.path.join(out, "summary.json")) as f:
                results[impl] = json.load(f)
            for name in same:
                with open(os.path.join(out, name), "rb") as f:
                    files[(impl, name)] = f.read()
    a, b = results["model"], results["rtl"]

    def pop(summary):
        node = summary["config"]
        *path, leaf = key.split(".")
        for k in path:
            node = node[k]
        return node.pop(leaf)

    check(pop(a) == "model", "model run echoes impl model")
    check(pop(b) == "rtl", "rtl run echoes impl rtl")
    check(a["packets"]["delivered"] > 0, f"packets delivered ({a['packets']['delivered']})")
    for path in nonzero:  # the block in the loop had work to do
        node = a
        for k in path.split("."):
            node = node[k]
        check(node > 0, f"{path} > 0 ({node})")
    for name in same:  # an output the summary does not reduce (qp_rates.csv: every QP's rate)
        m, r = files[("model", name)], files[("rtl", name)]
        check(len(m.splitlines()) > 1 and m == r,
              f"{name} byte-identical ({len(m.splitlines())} lines, {len(m)} B)")
    diff = [k for k in set(a) | set(b) if a.get(k) != b.get(k)]
    check(not diff, f"{os.path.basename(config)} {' '.join(sets)}: summary.json identical "
                    f"except impl (differs: {diff})")


def test_badinput(fabricsim, config):
    rc, out, err = run([fabricsim, "run", config, "--set", "switch.scheduler.impl=rtl",
                        "--set", "switch.scheduler.algorithm=pim", "--out", os.devnull])
    check(rc == 2 and "switch.scheduler.impl" in err, f"impl=rtl with pim: exit 2 naming the key ({rc}: {err.strip()})")
    rc, out, err = run([fabricsim, "check", config, "--set", "switch.scheduler.impl=rtl",
                        "--set", "switch.ports=200", "--set", "switch.buffer.reserved_per_port=0B"])
    check(rc == 2 and "switch.scheduler.impl" in err and "128" in err,
          f"impl=rtl with 200 ports: exit 2 naming the limit ({rc}: {err.strip()})")
    rc, out, err = run([fabricsim, "check", config, "--set", "switch.scheduler.impl=gates"])
    check(rc == 2, f"unknown impl: exit 2 ({rc})")
    nic = os.path.join(os.path.dirname(config), "..", "nic_400g.yaml")
    rc, out, err = run([fabricsim, "check", nic, "--set", "nic.dcqcn.impl=rtl"])
    check(rc == 2 and "nic.dcqcn.impl" in err and "arithmetic: fixed" in err,
          f"dcqcn impl=rtl without arithmetic fixed: exit 2 naming the key ({rc}: {err.strip()})")
    rc, out, err = run([fabricsim, "check", nic, "--set", "nic.dcqcn.arithmetic=fixed",
                        "--set", "nic.dcqcn.profile=custom"])
    check(rc == 2 and "nic.dcqcn.arithmetic" in err,
          f"dcqcn arithmetic=fixed with profile custom: exit 2 naming the key ({rc}: {err.strip()})")
    rc, out, err = run([fabricsim, "cosim", "dcqcn", "--mutant", "--variant", "5", "--cycles", "10"])
    check(rc == 2 and "1..4" in err, f"dcqcn mutant variant 5: exit 2 naming 1..4 ({rc})")
    rc, out, err = run([fabricsim, "cosim", "nosuchblock", "--cycles", "10"])
    check(rc == 2 and "islip" in err, f"unknown cosim block: exit 2 listing the blocks ({rc})")


def main():
    fabricsim, mode = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    if mode == "block":
        test_block(fabricsim, args[0], args[1])
    elif mode == "mutant":
        test_mutant(fabricsim, *args[:3])
    elif mode == "inloop":
        sets = [args[i + 1] for i in range(2, len(args) - 1, 2) if args[i] == "--set"]
        keys = [args[i + 1] for i in range(2, len(args) - 1, 2) if args[i] == "--key"]
        nonzero = [args[i + 1] for i in range(2, len(args) - 1, 2) if args[i] == "--nonzero"]
        same = [args[i + 1] for i in range(2, len(args) - 1, 2) if args[i] == "--same"]
        test_inloop(fabricsim, args[0], args[1], sets, *(keys[:1] or ["switch.scheduler.impl"]),
                    nonzero=nonzero, same=same)
    elif mode == "badinput":
        test_badinput(fabricsim, args[0])
    else:
        print("unknown mode " + mode)
        return 2
    print(f"{'FAILED' if failures else 'PASSED'}: {len(failures)} failed checks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
