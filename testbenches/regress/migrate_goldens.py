#!/usr/bin/env python3
"""Carries regression goldens across a summary.json schema_version bump that only renamed keys.

  migrate_goldens.py GOLDENS.json [GOLDENS.json ...]   rewrites each file in place
  migrate_goldens.py --check GOLDENS.json ...          exit 1 if any file would change

A golden records a case's metrics by their summary.json key path and the schema_version of the
summary it came from; `fabricsim regress` refuses to compare a golden of another version. When a
bump renames keys and changes no value (RENAMES below says which), the goldens need no re-run:
this renames the metric keys of every case at the old version and sets the new version. Nothing
else changes (values, configurations, instruction counts and speed references cpu_mref/wall_mref
stay byte for byte), and the file is written as fabricsim writes it (2-space indent, keys
sorted), so a migrated file equals one --update-goldens would write apart from what a re-run
would change. A suite's YAML names its metrics too: rename them there by hand (the regress
command refuses a metric its goldens lack).

Exit status: 0 done (or nothing to do), 1 --check found a file to migrate, 2 bad input.
"""
import argparse
import json
import sys

# from-version -> (to-version, {old key path prefix: new key path prefix}). A prefix renames the
# key and every key below it (workload.busbw_gbps renames workload.busbw_gbps.mean).
RENAMES = {
    2: (3, {"workload.busbw_gbps": "workload.busbw_GBps"}),
}


def renamed(key, table):
    for old, new in table.items():
        if key == old or key.startswith(old + ".") or key.startswith(old + "["):
            return new + key[len(old):]
    return key


def migrate(goldens):
    """The goldens with every case brought to the newest version RENAMES reaches; cases moved."""
    moved = 0
    for case in goldens.get("cases", {}).values():
        v = case.get("summary_schema_version")
        if v not in RENAMES:
            continue
        while v in RENAMES:
            to, table = RENAMES[v]
            case["metrics"] = {renamed(k, table): x for k, x in case.get("metrics", {}).items()}
            v = to
        case["summary_schema_version"] = v
        moved += 1
    return goldens, moved


def main(argv=None):
    ap = argparse.ArgumentParser(prog="migrate_goldens.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("goldens", nargs="+", metavar="GOLDENS.json",
                    help="a suite's goldens file (testbenches/regress/*.goldens.json)")
    ap.add_argument("--check", action="store_true",
                    help="change nothing; exit 1 if a file holds cases to migrate")
    a = ap.parse_args(argv)
    pending = 0
    for path in a.goldens:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            g = json.loads(text)
        except OSError as e:
            print(f"migrate_goldens.py: error: {path}: {e.strerror}", file=sys.stderr)
            return 2
        except json.JSONDecodeError as e:
            print(f"migrate_goldens.py: error: {path}:{e.lineno}: not JSON: {e.msg}", file=sys.stderr)
            return 2
        if not isinstance(g, dict) or not isinstance(g.get("cases"), dict):
            print(f"migrate_goldens.py: error: {path}: not a goldens file (no 'cases' object)",
                  file=sys.stderr)
            return 2
        g, moved = migrate(g)
        pending += moved
        print(f"{path}: {moved} case{'' if moved == 1 else 's'} to migrate" if a.check else
              f"{path}: {moved} case{'' if moved == 1 else 's'} migrated")
        if moved and not a.check:
            with open(path, "w", encoding="utf-8") as f:
                f.write(json.dumps(g, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return 1 if a.check and pending else 0


if __name__ == "__main__":
    sys.exit(main())
