#!/usr/bin/env python3
"""Every `build/fabricsim run` example in the README runs to exit 0 as written.

The README is what a new user copies first: an example that exits 3 (its messages failed, its
collective unfinished at the drain limit) teaches them that the tool cannot be trusted. Each
command is taken from the README's sh blocks (continuation lines joined, comments dropped), run
with the binary under test and its results sent to a scratch folder (--out replaced or added:
it changes where the files go, nothing else), and must exit 0 with its invariants ok; a NIC run
must say that every message completed, and a workload run that every call finished.

Usage: readme_test.py FABRICSIM
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def readme_runs(text):
    """The README's `build/fabricsim run ...` commands, as argument lists."""
    runs = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        block = re.sub(r"\\\n\s*", " ", block)
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("build/fabricsim run "):
                runs.append(shlex.split(line.replace("$PWD", ROOT)))
    return runs


def with_out(args, out):
    """args with its results sent to `out`."""
    if "--out" in args:
        i = args.index("--out")
        return args[:i + 1] + [out] + args[i + 2:]
    return args + ["--out", out]


def main():
    fabricsim = os.path.abspath(sys.argv[1])
    with open(os.path.join(ROOT, "README.md")) as f:
        runs = readme_runs(f.read())
    passed = failed = 0
    # A README that lost its examples (a changed fence, a renamed binary) must not pass quietly.
    if len(runs) < 8:
        print(f"FAIL: found {len(runs)} `build/fabricsim run` examples in README.md, expected 8 "
              "or more")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        for i, args in enumerate(runs):
            cmd = [fabricsim] + with_out(args, os.path.join(tmp, str(i)))[1:]
            r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
            problems = []
            if r.returncode != 0:
                problems.append(f"exit {r.returncode}")
            if "  invariants    ok" not in r.stdout:
                problems.append("invariants not ok")
            if "nic_" in args[2] and not re.search(r"messages +completed (\d+) of \1  failed 0  "
                                                   r"in flight 0\n", r.stdout):
                problems.append("not every message completed")
            if "traffic.pattern=workload" in args and "** WORK NOT DONE **" in r.stdout:
                problems.append("a collective unfinished")
            if problems:
                failed += 1
                print(f"FAIL: {' '.join(args)}: {', '.join(problems)}\n{r.stdout[-1500:]}"
                      f"{r.stderr[-1500:]}")
            else:
                passed += 1
                print(f"ok: {' '.join(args)}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
