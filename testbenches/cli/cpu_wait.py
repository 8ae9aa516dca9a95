"""Waiting for a child run to make progress, for the tests that interrupt one."""
import os
import time


def wait_cpu(proc, seconds, limit=120):
    """Waits until `proc` has used `seconds` of CPU time (or has ended, or `limit` seconds of
    wall time passed): a fixed sleep is not enough on a loaded machine, where the run may not have
    started simulating by then (and an interrupt test then sees no packets delivered)."""
    tick = os.sysconf("SC_CLK_TCK")
    end = time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < end:
        try:
            with open(f"/proc/{proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if (int(fields[11]) + int(fields[12])) / tick >= seconds:  # utime + stime
                return
        except (OSError, IndexError, ValueError):
            pass
        time.sleep(0.05)
