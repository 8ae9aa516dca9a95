#!/usr/bin/env python3
"""docs/configuration.md must be exactly what `fabricsim config-docs` generates from the code."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    fabricsim = sys.argv[1]
    generated = subprocess.run([fabricsim, "config-docs"], capture_output=True, text=True,
                               check=True).stdout
    path = os.path.join(ROOT, "docs", "configuration.md")
    with open(path) as f:
        committed = f.read()
    if generated != committed:
        print(f"FAIL: {path} is out of date; regenerate it with\n"
              f"  build/fabricsim config-docs --out docs/configuration.md")
        print("0 passed, 1 failed")
        return 1
    print("docs/configuration.md matches the code")
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
