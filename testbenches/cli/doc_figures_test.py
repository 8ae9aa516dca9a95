#!/usr/bin/env python3
"""scripts/doc_figures.py: the README's and docs' figures that come from runs match those runs
(the whole check, as CI runs it), and the check itself fails on a stale figure and refuses
malformed blocks."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "doc_figures.py")
FABRICSIM = None


def figures(*args):
    return subprocess.run([sys.executable, SCRIPT, "--fabricsim", FABRICSIM, *args],
                          capture_output=True, text=True, timeout=900)


class DocFigures(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="doc-figures-test-")
        shutil.copy(os.path.join(ROOT, "README.md"), self.tmp)
        self.readme = os.path.join(self.tmp, "README.md")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def edit(self, old, new):
        with open(self.readme) as f:
            text = f.read()
        self.assertIn(old, text)
        with open(self.readme, "w") as f:
            f.write(text.replace(old, new, 1))

    def test_committed_figures_match_their_runs(self):
        p = figures("--check")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"\d+ figures match their runs")

    def test_a_stale_figure_fails_and_write_mends_it(self):
        self.edit("  invariants    ok\n", "  invariants    ok (edited)\n")
        p = figures("--check", "--only", "first_run", "--docs-root", self.tmp)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("README.md: figure first_run differs from its runs", p.stdout)
        self.assertIn("-  invariants    ok (edited)", p.stdout)
        p = figures("--write", "--only", "first_run", "--docs-root", self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.readme) as f, open(os.path.join(ROOT, "README.md")) as g:
            self.assertEqual(f.read(), g.read())

    def test_malformed_blocks_are_refused(self):
        self.edit("<!-- end figure first_run -->\n", "")
        p = figures("--check", "--only", "first_run", "--docs-root", self.tmp)
        self.assertEqual(p.returncode, 2)
        self.assertRegex(p.stderr, r"README\.md:\d+: figure islip_duration begins inside "
                                   r"figure first_run")
        shutil.copy(os.path.join(ROOT, "README.md"), self.tmp)
        self.edit("<!-- figure first_run:", "<!-- figure no_such_thing:")
        p = figures("--check", "--only", "first_run", "--docs-root", self.tmp)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no figure named no_such_thing", p.stderr)


if __name__ == "__main__":
    FABRICSIM = sys.argv.pop(1)
    unittest.main()
