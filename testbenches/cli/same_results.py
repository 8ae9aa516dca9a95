"""The result files of a run, for the tests that check a speed setting changes no result."""
import json
import os


def result_files(out, setting):
    """Every result file in `out` as text, but perf.json (wall-clock figures), with the sim
    `setting` taken out of summary.json's configuration echo (the one thing that may differ);
    and perf.json parsed."""
    files = {}
    for f in sorted(os.listdir(out)):
        if f == "perf.json" or f.startswith("."):
            continue
        with open(os.path.join(out, f)) as fh:
            text = fh.read()
        if f == "summary.json":
            s = json.loads(text)
            s["config"]["sim"].pop(setting)
            text = json.dumps(s, sort_keys=True)
        files[f] = text
    with open(os.path.join(out, "perf.json")) as fh:
        perf = json.load(fh)
    return files, perf
