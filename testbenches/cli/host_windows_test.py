#!/usr/bin/env python3
"""Host windows (sim.host_windows, docs/architecture.md "Host windows") are a speed setting only:
every result file of a NIC run is the same with them on and off, and with 1, 2 and 3 threads:
an all-to-all under PFC and DCQCN with frames lost to bit errors (go-back-N, and UEC-style RUD
retransmitting), HPCC's INT stacks, a collective on a fat tree (cycle and packet switches), an
incast that pauses its senders with the flow-events log past its limit, selective repeat under
losses, RDMA READs, messages that fail (exit 3), and a DGX pair (boxes); and they are in effect
where they should be (perf.json's host_windows), and not where they cannot be: with a rate trace
(every QP sampled at one instant) or traffic generators."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from same_results import result_files
# The threads test's NIC runs (its definitions, not copies): losses under go-back-N and RUD,
# HPCC's INT stacks, the collective on cycle and packet fat trees.
from threads_test import CASES as THREADS_CASES, cfg

FABRICSIM = ""
NICRUN = ["sim.traffic_thread=false", "stats.occupancy_interval=0ns", "sim.duration=1us",
          "sim.warmup=0ns"]
MESSAGES = ["traffic.pattern=messages", "traffic.messages.file={file}"]
# name: (config, --set list, message file lines or None, expected exit)
CASES = {
    # 15 senders into one host: PFC pauses them (host spans in the log), 40 records at most.
    "pfc_incast": (cfg("nic_400g.yaml"), NICRUN + MESSAGES + [
        "switch.ports=16", "switch.buffer.size=10MB", "switch.buffer.reserved_per_port=0B",
        "stats.flow_events=40"],
        [f"0 {s} 0 512KiB write tc=3\n" for s in range(1, 16)], 0),
    "selective_repeat_loss": (cfg("nic_400g.yaml"), NICRUN + MESSAGES + [
        "switch.ports=8", "nic.transport=selective_repeat", "link.phy.pre_fec_ber=1e-3",
        "nic.rc.timeout=20us", "sim.drain_limit=5ms"],
        [f"0 {s} {(s + 3) % 8} 256KiB write tc=3\n" for s in range(8)], 0),
    "reads": (cfg("nic_400g.yaml"), NICRUN + MESSAGES + ["switch.ports=8"],
              [f"0 {s} {(s + 1) % 8} 192KiB read tc=3\n" for s in range(8)] +
              [f"0 {s} {(s + 2) % 8} 128KiB write tc=3\n" for s in range(8)], 0),
    "gbn_fail": (cfg("nic_400g.yaml"), NICRUN + MESSAGES + [
        "switch.ports=8", "link.phy.pre_fec_ber=2e-3", "nic.rc.timeout=2us",
        "nic.rc.retry_count=1"],
        [f"0 {s} {(s + 5) % 8} 256KiB write tc=3\n" for s in range(8)], 3),
    "dgx_pair": (cfg("examples/dgx_h100_2node.yaml"), [], None, 0),
}
for _name in ("nic_go_back_n", "nic_rud", "nic_hpcc_fat_tree", "nic_workload_fat_tree",
              "packet_nic_workload_fat_tree"):
    CASES[_name] = THREADS_CASES[_name] + (None, 0)
THREADS = {"packet_nic_workload_fat_tree": (1, 2, 3)}
# The windows a run has at least (the DGX pair's training step posts as it goes: its last few).
MIN_WINDOWS = {"dgx_pair": 1}
# Not compared: where host windows must not run.
CASES_OFF = {"generators": (cfg("switch_51t2.yaml"), [
    "topology.kind=fat_tree", "topology.k=4", "traffic.load=0.6", "sim.duration=3us",
    "sim.warmup=1us"], None, 0)}


def run(tmp, name, threads, windows, extra=()):
    config, sets, lines, _ = CASES[name] if name in CASES else CASES_OFF[name]
    out = os.path.join(tmp, f"{name}_{threads}_{int(windows)}_{len(extra)}")
    files = {}
    if lines:
        files["file"] = os.path.join(tmp, f"{name}.txt")
        with open(files["file"], "w") as f:
            f.writelines(lines)
    cmd = [FABRICSIM, "run", config, "--out", out, "--set", f"sim.threads={threads}",
           "--set", f"sim.host_windows={'true' if windows else 'false'}"]
    for s in list(sets) + list(extra):
        cmd += ["--set", s.format(**files)]
    return subprocess.run(cmd, capture_output=True, text=True), out


def results(out):
    """The result files (summary.json without the two settings that differ) and perf.json."""
    files, perf = result_files(out, "host_windows")
    s = json.loads(files["summary.json"])
    s["config"]["sim"].pop("threads")
    files["summary.json"] = json.dumps(s, sort_keys=True)
    return files, perf


class HostWindows(unittest.TestCase):
    def test_results_are_the_same_with_and_without_host_windows(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, (_, _, _, code) in CASES.items():
                with self.subTest(name):
                    p, out = run(tmp, name, 1, False)
                    self.assertEqual(p.returncode, code, f"{name}: {p.stdout}{p.stderr}")
                    off, perf_off = results(out)
                    self.assertEqual(perf_off["host_windows"], 0, name)
                    for t in THREADS.get(name, (1, 2)):
                        p, out = run(tmp, name, t, True)
                        self.assertEqual(p.returncode, code, f"{name}: {p.stdout}{p.stderr}")
                        on, perf = results(out)
                        self.assertGreaterEqual(perf["host_windows"], MIN_WINDOWS.get(name, 10),
                                                f"{name} threads={t}")
                        self.assertEqual(sorted(on), sorted(off))
                        for f in on:
                            self.assertTrue(on[f] == off[f],
                                            f"{name}: {f} differs with host windows, {t} threads")
                    if name == "pfc_incast":  # host spans past the log's limit
                        s = json.loads(off["summary.json"])
                        self.assertGreater(s["flow_events"]["not_recorded"], 0)
                        self.assertGreater(s["flow_control"]["hosts"]["paused_ns"], 0)
                        self.assertEqual(off["flow_events.csv"].count("\n"), 41)  # header + 40
                    if name in ("nic_go_back_n", "nic_rud", "selective_repeat_loss"):
                        s = json.loads(off["summary.json"])
                        self.assertGreater(s["transport"]["retransmitted_packets"], 0, name)

    def test_not_used_where_hosts_meet_at_an_instant(self):
        with tempfile.TemporaryDirectory() as tmp:
            # A rate trace samples every QP at one instant: the hosts run event by event.
            p, out = run(tmp, "nic_workload_fat_tree", 1, True, ["nic.rate_trace_interval=1us"])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(results(out)[1]["host_windows"], 0)
            # Traffic generators (no NICs): their source injects at its own instants.
            p, out = run(tmp, "generators", 1, True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(results(out)[1]["host_windows"], 0)


if __name__ == "__main__":
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
