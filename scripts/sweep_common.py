"""What every part of scripts/sweep.py shares: the repository's root, the runs' result columns,
the usage error (exit 2) and the helpers that quote and read input for its messages."""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Result columns after the varied keys and the seed, in CSV order.
METRICS = [
    "offered_load", "accepted_load",
    "latency_mean_ns", "latency_p50_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns",
    "latency_count",
    "buffer_peak_bytes", "buffer_mean_bytes",
    "injected", "delivered", "dropped", "in_flight",  # whole run, as fabricsim prints them
    "window_injected", "window_dropped",             # packets injected in the measurement window
    "invariants_ok",
    # the measured packets split at the middle of the window (steady state: see sweep_points.csv)
    "latency_first_half_mean_ns", "latency_second_half_mean_ns",
    "latency_first_half_count", "latency_second_half_count",
    # NIC runs: messages' completion times (post to completion), the workload's end
    "fct_mean_ns", "fct_p99_ns", "workload_end_ns",
    # frames lost to bit errors on links, packets the NICs sent again (0 without NICs)
    "lost_on_links", "retransmitted_packets",
    # the run's energy (summary.json `energy`): joules, mean power over the run, power at the
    # window's load, energy per bit delivered to the hosts
    "energy_J", "mean_power_W", "window_power_W", "delivered_pJ_per_bit",
]
TRAILER = ["exit_code", "status", "wall_s", "error", "reused"]


class UsageError(Exception):
    """Bad command-line input: exit 2."""


def clip(text, limit=60):
    """A value as a message quotes it: printable and cut short, so that the message stays one
    readable line whatever the input holds."""
    s = text if text.isprintable() else text.encode("unicode_escape").decode("ascii")
    return s if len(s) <= limit else f"{s[:limit]}... ({len(text)} characters)"


def read_text(path, option, limit=None):
    """A UTF-8 text file's contents (a leading BOM dropped). UsageError naming the file and the
    line and column of the first byte that is not UTF-8, or a file over `limit` bytes."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageError(f"{option} {path}: not a regular file")  # a FIFO or /dev/zero would hang
    try:
        with open(path, "rb") as f:
            data = f.read() if limit is None else f.read(limit + 1)
    except OSError as e:
        raise UsageError(f"{option} {path}: cannot read: {e.strerror}") from None
    if limit is not None and len(data) > limit:
        raise UsageError(f"{option} {path}: larger than {limit >> 20} MiB")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")  # spreadsheets write a BOM
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - data.rfind(b"\n", 0, e.start)
        raise UsageError(f"{option} {path}:{line}:{col}: not UTF-8 text "
                         f"(byte 0x{data[e.start]:02x})") from None


def require_matplotlib(option):
    """matplotlib imported now, before any run: a sweep must not run for hours and then fail to
    draw. UsageError (exit 2) naming the Debian package otherwise."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise UsageError(f"{option}: the Python module matplotlib is missing for {sys.executable} "
                         f"({clip(str(e), 100)}): on Debian, apt install python3-matplotlib") \
            from None



def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
