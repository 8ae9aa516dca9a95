#!/usr/bin/env python3
"""The output folder of `fabricsim run` under faults: a run owns its --out while it runs (a second
run into it is refused, exit 2, naming the pid that holds it), and its files are published as one
set (written into a private folder beside --out and swapped in at the end), so a reader never sees
files of two runs together and a write that fails part-way leaves the previous set as it was.
Errors writing standard output are reported with a non-zero exit."""
import csv
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import unittest

FABRICSIM = os.environ.get("FABRICSIM", "")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHIP = os.path.join(ROOT, "configs", "switch_51t2.yaml")
SLOTTED = os.path.join(ROOT, "configs", "validation", "slotted.yaml")
QUICK = ["--set", "sim.duration=3us", "--set", "sim.warmup=1us"]
RESULTS = ["energy.csv", "flow_events.csv", "links.csv", "occupancy.csv", "perf.json", "ports.csv", "summary.json"]
# A run that goes on until it is stopped (about 1 s of wall time per simulated 10 us or so).
LONG = [SLOTTED, "--set", "switch.ports=64", "--set", "sim.duration=100000us"]


def run(*args, **kw):
    return subprocess.run([FABRICSIM, *args], capture_output=True, text=True, **kw)


def read_set(out):
    files = {}
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name), "rb") as f:
            files[name] = f.read()
    return files


class Results(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def assert_nothing_beside(self, *names):
        """The parent of the output folders holds them and nothing else: no private folder, no
        lock file left behind."""
        self.assertEqual(sorted(os.listdir(self.tmp)), sorted(names))

    def start_long_run(self, out, *extra):
        proc = subprocess.Popen([FABRICSIM, "run", *LONG, "--out", out, *extra],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lock = os.path.join(os.path.dirname(out), "." + os.path.basename(out) + ".lock")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (os.path.exists(lock) and os.path.getsize(lock)):
            time.sleep(0.02)
        self.assertTrue(os.path.exists(lock), "the run did not take its lock")
        return proc

    def test_second_run_into_a_folder_in_use_is_refused(self):
        out = os.path.join(self.tmp, "o")
        first = self.start_long_run(out)
        try:
            second = run("run", CHIP, "--out", out, *QUICK)
            self.assertEqual(second.returncode, 2, second.stdout + second.stderr)
            self.assertIn("in use by another run", second.stderr)
            self.assertIn(f"pid {first.pid}", second.stderr)
            self.assertFalse(os.path.exists(out))  # nothing published while the first one runs
            time.sleep(1.0)
        finally:
            first.send_signal(signal.SIGINT)
            stdout, stderr = first.communicate(timeout=60)
        self.assertEqual(first.returncode, 1, stdout + stderr)
        # The first run's partial results, whole: its five files, all of one run.
        self.assertEqual(sorted(os.listdir(out)), RESULTS)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        self.assertTrue(s["interrupted"])
        self.assertEqual(s["config"]["switch"]["ports"], 64)
        with open(os.path.join(out, "ports.csv")) as f:
            self.assertEqual(len(list(csv.DictReader(f))), 64)
        self.assert_nothing_beside("o")
        # Released: the next run into the folder goes ahead.
        again = run("run", CHIP, "--out", out, *QUICK)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assert_nothing_beside("o")

    def test_concurrent_runs_never_mix_their_files(self):
        # Started together into one folder: whichever takes it first writes a whole set; the
        # other is refused (or runs after it), never both at once.
        out = os.path.join(self.tmp, "o")
        for trial in range(4):
            procs = [subprocess.Popen([FABRICSIM, "run", SLOTTED, "--out", out, "--set",
                                       f"switch.ports={ports}", "--set",
                                       "stats.occupancy_interval=1ns", *QUICK],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                     for ports in (16, 64)]
            codes = [p.wait(timeout=120) for p in procs]
            self.assertTrue(set(codes) <= {0, 2} and 0 in codes, codes)
            with open(os.path.join(out, "summary.json")) as f:
                ports = json.load(f)["config"]["switch"]["ports"]
            with open(os.path.join(out, "ports.csv")) as f:
                self.assertEqual(len(list(csv.DictReader(f))), ports, trial)
            with open(os.path.join(out, "occupancy.csv")) as f:
                self.assertEqual(len(f.readline().split(",")), ports + 2, trial)
            self.assertEqual(sorted(os.listdir(out)), RESULTS)

    def test_new_set_replaces_the_old_as_a_whole_and_keeps_other_files(self):
        out = os.path.join(self.tmp, "o")
        self.assertEqual(run("run", SLOTTED, "--out", out, "--set", "switch.ports=16",
                             *QUICK).returncode, 0)
        # What else the folder holds (a sweep's stdout.txt, notes) stays; stale .part files of an
        # older version go.
        for name, text in (("notes.txt", "mine\n"), ("summary.json.part", "{")):
            with open(os.path.join(out, name), "w") as f:
                f.write(text)
        p = run("run", SLOTTED, "--out", out, "--set", "switch.ports=64", *QUICK)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(os.listdir(out)), sorted(RESULTS + ["notes.txt"]))
        with open(os.path.join(out, "notes.txt")) as f:
            self.assertEqual(f.read(), "mine\n")
        with open(os.path.join(out, "occupancy.csv")) as f:
            self.assertEqual(len(f.readline().split(",")), 66)  # 64 ports, not the old 16
        self.assert_nothing_beside("o")

    def test_failed_write_leaves_the_previous_set_and_says_why(self):
        out = os.path.join(self.tmp, "o")
        self.assertEqual(run("run", SLOTTED, "--out", out, "--set", "switch.ports=16",
                             *QUICK).returncode, 0)
        before = read_set(out)

        # A file-size limit stands in for a full disk (a small file system needs root): the
        # 64-port occupancy.csv at 1 ns (about 400 KB) cannot be written.
        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        p = run("run", SLOTTED, "--out", out, "--set", "switch.ports=64",
                "--set", "stats.occupancy_interval=1ns", *QUICK, preexec_fn=limit)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertRegex(p.stderr, r"cannot write \S*/occupancy.csv: File too large")
        self.assertIn(f"{out} keeps the previous run's results", p.stderr)
        self.assertEqual(read_set(out), before)
        self.assert_nothing_beside("o")

        # Into a folder that did not exist: nothing appears.
        fresh = os.path.join(self.tmp, "fresh")
        p = run("run", SLOTTED, "--out", fresh, "--set", "switch.ports=64",
                "--set", "stats.occupancy_interval=1ns", *QUICK, preexec_fn=limit)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("File too large", p.stderr)
        self.assert_nothing_beside("o")

    def test_free_space_is_checked_before_simulating(self):
        # 100 us of 64 ports sampled every ns: occupancy.csv takes at least 13 MB.
        out = os.path.join(self.tmp, "o")
        env = dict(os.environ, FABRICSIM_TEST_FREE_BYTES="5000000")
        t0 = time.monotonic()
        p = run("run", SLOTTED, "--out", out, "--set", "switch.ports=64", "--set",
                "stats.occupancy_interval=1ns", "--set", "sim.duration=100us", env=env)
        self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("5.0 MB free", p.stderr)
        self.assertIn("occupancy.csv alone will take at least 13.", p.stderr)
        self.assert_nothing_beside()
        # With the space, the same check lets a run go.
        env["FABRICSIM_TEST_FREE_BYTES"] = "14000000"
        p = run("run", SLOTTED, "--out", out, "--set", "switch.ports=64", "--set",
                "stats.occupancy_interval=1ns", *QUICK, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_output_folder_must_be_a_folder_of_its_own(self):
        here = os.path.join(self.tmp, "a", "b")
        os.makedirs(here)
        for out in (".", here, os.path.dirname(here), ".."):
            with self.subTest(out=out):
                p = run("run", CHIP, "--out", out, *QUICK, cwd=here)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn("current directory or one above it", p.stderr)
        blocker = os.path.join(self.tmp, "file")
        with open(blocker, "w"):
            pass
        p = run("run", CHIP, "--out", blocker, *QUICK)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not a directory", p.stderr)

    def test_errors_on_standard_output_fail_the_command(self):
        for args in (["check", CHIP], ["config-docs"],
                     ["run", CHIP, "--out", os.path.join(self.tmp, "o"), *QUICK]):
            with self.subTest(args=args[0]):
                with open("/dev/full", "w") as full:
                    p = subprocess.run([FABRICSIM, *args], stdout=full, stderr=subprocess.PIPE,
                                       text=True)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn("cannot write standard output: No space left on device", p.stderr)


class HugePages(unittest.TestCase):
    """A run starts itself again with glibc's malloc on transparent huge pages
    (models/common/huge_pages.h): perf.json says so, FABRICSIM_HUGE_PAGES=0 turns it off, and
    every result file is the same either way."""

    def test_huge_pages_change_no_result(self):
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            mode = f.read()
        offered = "[always]" in mode or "[madvise]" in mode
        # (CI's sanitizer build, run with ASAN_OPTIONS set, keeps its own allocator.)
        expected = offered and "ASAN_OPTIONS" not in os.environ
        env = {k: v for k, v in os.environ.items()
               if k not in ("GLIBC_TUNABLES", "FABRICSIM_HUGE_PAGES")}
        with tempfile.TemporaryDirectory() as tmp:
            sets = {}
            for name, extra in (("on", {}), ("off", {"FABRICSIM_HUGE_PAGES": "0"})):
                out = os.path.join(tmp, name)
                p = subprocess.run([FABRICSIM, "run", CHIP, *QUICK, "--out", out],
                                   capture_output=True, text=True, env={**env, **extra})
                self.assertEqual(p.returncode, 0, p.stderr)
                sets[name] = read_set(out)
            on = json.loads(sets["on"].pop("perf.json"))
            off = json.loads(sets["off"].pop("perf.json"))
            self.assertIs(on["heap_huge_pages"], expected)
            self.assertIs(off["heap_huge_pages"], False)
            self.assertEqual(sets["on"], sets["off"])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
