"""Waiting for a child run to make progress, for the tests that interrupt one."""
import os
import signal
import time


def catches_sigint(pid):
    """Whether process `pid` has a handler of its own for SIGINT (its SigCgt mask)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) >> (signal.SIGINT - 1) & 1)
    return False


def wait_cpu(proc, seconds, limit=120):
    """Waits until `proc` has used `seconds` of CPU time and catches SIGINT (or has ended, or
    `limit` seconds of wall time passed): a fixed sleep is not enough on a loaded machine, where
    the run may not have started simulating by then (and an interrupt test then sees no packets
    delivered), and CPU time alone is not enough for a sanitized build, whose runtime took 0.26 s
    of CPU before main() on a 2026-12-01 VM (a SIGINT then ends the process before the run can
    install its handler)."""
    tick = os.sysconf("SC_CLK_TCK")
    end = time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < end:
        try:
            with open(f"/proc/{proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if ((int(fields[11]) + int(fields[12])) / tick >= seconds  # utime + stime
                    and catches_sigint(proc.pid)):
                return
        except (OSError, IndexError, ValueError):
            pass
        time.sleep(0.05)
