#!/usr/bin/env python3
"""scripts/report.py's page in a real browser: Debian's chromium, headless.

  report_browser_test.py BUILD/fabricsim [unittest options]

Writes the report of a small RoCE leaf-spine run (PFC on, so every plot is there), opens it with
`chromium --headless --dump-dom` and `--screenshot`, and checks that the page loads without a
console error or a failed load, that every plot decoded as an image (the page's load handler
counts them into <body data-plots-decoded="k/n">), and that the screenshot is not blank (it shows
the plots' coloured lines). A page broken on purpose (a truncated image, a script error) must be
caught by the same checks. chromium missing is a failure, not a skip: scripts/setup.sh installs
it (Debian package `chromium`)."""
import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

FABRICSIM = os.environ.get("FABRICSIM", "")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "scripts", "report.py")
ROCE = os.path.join(ROOT, "configs", "examples", "leaf_spine_roce.yaml")
RUN = ["--set", "sim.duration=6us", "--set", "sim.warmup=1us", "--set", "sim.drain_limit=100us",
       "--set", "stats.occupancy_interval=50ns"]
WINDOW = (1300, 4000)


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def plot_python():
    for cand in (os.environ.get("PLOT_PYTHON"), sys.executable, "/usr/bin/python3"):
        if cand and os.path.exists(cand) and subprocess.run(
                [cand, "-c", "import matplotlib"], capture_output=True).returncode == 0:
            return cand
    return None


def browser(chromium, profile, *args):
    return subprocess.run([chromium, "--headless", "--disable-gpu", "--no-sandbox",
                           f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                           "--virtual-time-budget=10000", *args],
                          capture_output=True, text=True, timeout=180)


# Console messages and failed loads chromium logs on stderr with --enable-logging.
ERROR_RE = re.compile(r"INFO:CONSOLE.*|Uncaught .*|Failed to load resource.*|net::ERR_\w+|"
                      r"Not allowed to load local resource.*")


def page_problems(chromium, profile, html_path):
    """What is wrong with the page as the browser sees it (empty: nothing)."""
    problems = []
    p = browser(chromium, profile, "--dump-dom", "file://" + os.path.abspath(html_path))
    if p.returncode != 0:
        return [f"chromium --dump-dom exited {p.returncode}: {p.stderr[-2000:]}"]
    problems += [f"console: {m}" for m in ERROR_RE.findall(p.stderr)]
    dom = p.stdout
    imgs = re.findall(r'<img class="plot"[^>]*src="data:image/png;base64,([A-Za-z0-9+/=]*)"', dom)
    if len(imgs) < 1:
        problems.append("no plot <img> in the DOM")
    for i, data in enumerate(imgs):
        if len(data) < 10000:
            problems.append(f"plot {i}: only {len(data)} characters of image data")
    m = re.search(r'<body[^>]*data-plots-decoded="(\d+)/(\d+)"', dom)
    if not m:
        problems.append("the page's load handler did not run (no data-plots-decoded on <body>)")
    elif m.group(1) != m.group(2) or int(m.group(2)) != len(imgs):
        problems.append(f"plots decoded {m.group(1)} of {m.group(2)} ({len(imgs)} in the DOM)")
    return problems


class Browser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="report_browser_")
        cls.chromium = find_chromium()
        cls.py = plot_python()
        cls.run_dir = os.path.join(cls.tmp, "run")
        p = subprocess.run([FABRICSIM, "run", ROCE, *RUN, "--out", cls.run_dir],
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        cls.report_rc = None
        if cls.py:
            r = subprocess.run([cls.py, REPORT, cls.run_dir], capture_output=True, text=True,
                               timeout=300)
            cls.report_rc, cls.report_err = r.returncode, r.stderr
        cls.html = os.path.join(cls.run_dir, "report.html")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        if not self.chromium:
            self.fail("chromium is not installed: install Debian's `chromium` package "
                      "(scripts/setup.sh does); this check needs a real browser")
        if not self.py:
            self.fail("matplotlib is not importable: install python3-matplotlib")
        self.assertEqual(self.report_rc, 0, getattr(self, "report_err", ""))

    def test_loads_without_errors_and_shows_plots(self):
        profile = tempfile.mkdtemp(dir=self.tmp)
        self.assertEqual(page_problems(self.chromium, profile, self.html), [])

    def test_broken_page_is_caught(self):
        with open(self.html, encoding="utf-8") as f:
            page = f.read()
        # The first image's data not a PNG (it cannot decode), the second's cut short, and a
        # script that throws.
        imgs = list(re.finditer(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page))
        self.assertGreaterEqual(len(imgs), 2)
        a, b = imgs[0], imgs[1]
        broken = (page[:a.start(1)] + "A" * 12000 + page[a.end(1):b.start(1) + 200] +
                  page[b.end(1):])
        broken = broken.replace("</body>", "<script>no_such_function();</script></body>")
        path = os.path.join(self.tmp, "broken.html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(broken)
        profile = tempfile.mkdtemp(dir=self.tmp)
        problems = "\n".join(page_problems(self.chromium, profile, path))
        self.assertIn("no_such_function is not defined", problems)
        self.assertIn("only 200 characters of image data", problems)
        n = len(imgs)
        self.assertRegex(problems, rf"plots decoded [0-{n - 1}] of {n}")

    def test_screenshot_is_not_blank(self):
        shot = os.path.join(self.tmp, "shot.png")
        profile = tempfile.mkdtemp(dir=self.tmp)
        p = browser(self.chromium, profile, f"--screenshot={shot}",
                    f"--window-size={WINDOW[0]},{WINDOW[1]}", "--hide-scrollbars",
                    "file://" + os.path.abspath(self.html))
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertTrue(os.path.getsize(shot) > 0)
        # Pixel statistics by the plotting interpreter (numpy + matplotlib read the PNG).
        code = (
            "import sys, numpy as np, matplotlib.image as mi\n"
            "a = mi.imread(sys.argv[1])[:, :, :3]\n"
            "ink = (a.min(axis=2) < 0.9).mean()\n"
            "colour = ((a.max(axis=2) - a.min(axis=2)) > 0.25).sum()\n"
            "print(a.shape[1], a.shape[0], ink, colour)\n")
        r = subprocess.run([self.py, "-c", code, shot], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        w, h, ink, colour = r.stdout.split()
        self.assertEqual((int(w), int(h)), WINDOW)
        self.assertGreater(float(ink), 0.02)    # text, tables and axes: not a blank page
        self.assertGreater(int(colour), 5000)   # the plots' coloured lines and bars


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: report_browser_test.py BUILD/fabricsim [unittest options]")
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main()
