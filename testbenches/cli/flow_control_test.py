#!/usr/bin/env python3
"""Link-level flow control end to end (issue #3, section 5): a 63-to-1 incast on the 51.2T chip
loses packets without flow control and none with IB credits or with PFC at the sized headroom
(and loses some when the headroom is too small); back-pressure crosses two switches and lets go
when the congestion ends; multi-device runs with flow control are deterministic; ECN marks follow
the configured curve against queue depth."""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHIP = os.path.join(ROOT, "configs", "switch_51t2.yaml")
# Links and PFC parameters spelled out, so that the headroom can be computed here independently.
LINK = ["link.model=phy", "link.length_m=3", "link.ns_per_m=5", "link.phy.fec_latency=100ns",
        "link.phy.pcs_latency=0ns", "flow_control.pfc.response_delay=2017ns",
        "flow_control.pfc.mtu=9216B", "flow_control.pfc.lossless_mask=1"]
INCAST = ["traffic.pattern=incast", "traffic.incast.target=0", "traffic.incast.sources=63",
          "traffic.load=1.0", "traffic.size=4096B", "sim.duration=20us", "sim.warmup=2us"]


def headroom_bytes(mtu=9216, cable_m=3, ns_per_m=5, phy_ns=100, response_ns=2017, gbps=800):
    """802.1Qbb-style bound (docs/link-layer.md): a frame in progress at each end plus the PFC
    frame, and line-rate data for two cable + PHY crossings and the response time."""
    per_ns = gbps / 8  # bytes per ns
    return 2 * (mtu + 20) + (64 + 20) + per_ns * (2 * (cable_m * ns_per_m + phy_ns) + response_ns)


def cell_expansion(cell=254, mtu=9216):
    """Worst buffer bytes per wire byte over all frame sizes: the switch charges PFC in cells."""
    return max(-(-max(f, 64) // cell) * cell / (max(f, 64) + 20) for f in range(1, mtu + 1))


class FlowControl(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def simulate(self, name, sets, rc=0):
        out = os.path.join(self.tmp, name)
        cmd = [FABRICSIM, "run", CHIP, "--out", out]
        for s in sets:
            cmd += ["--set", s]
        p = subprocess.run(cmd, capture_output=True, text=True)
        self.assertEqual(p.returncode, rc, p.stdout + p.stderr)
        with open(os.path.join(out, "summary.json"), "rb") as f:
            raw = f.read()
        with open(os.path.join(out, "ports.csv")) as f:
            self.ports = list(csv.DictReader(f))
        return raw, json.loads(raw)

    def test_incast_63_to_1_loses_packets_only_without_flow_control(self):
        _, none = self.simulate("none", LINK + INCAST + ["flow_control.mode=none"])
        self.assertGreater(none["packets"]["dropped"], 1000)

        for mode in ("pfc", "credit"):
            _, s = self.simulate(mode, LINK + INCAST + [f"flow_control.mode={mode}"])
            self.assertTrue(s["invariants"]["ok"], s["invariants"])
            self.assertEqual(s["packets"]["dropped"], 0, mode)
            self.assertLessEqual(s["buffer"]["peak_bytes"], s["buffer"]["capacity_bytes"])
            sw, hosts = s["flow_control"]["switches"]["switch"], s["flow_control"]["hosts"]
            # The congested port still runs at line rate (4096 B frames + 20 B of framing): flow
            # control throttles the senders, not the bottleneck.
            port0 = next(r for r in self.ports if r["switch"] == "switch" and r["port"] == "0")
            self.assertGreater(float(port0["accepted_load_out"]), 0.97 * 4096 / 4116, mode)
            if mode == "pfc":
                self.assertGreater(sw["pause_frames_sent"], 0)
                self.assertGreater(hosts["pause_frames_received"], 0)
                self.assertGreater(hosts["paused_ns"], 0)
                self.assertEqual(sw["lossless_drops"], 0)
                self.assertGreater(sw["headroom_peak_bytes"], 0)
                self.assertLessEqual(sw["headroom_peak_bytes"], headroom_bytes() * cell_expansion())
            else:
                self.assertGreater(sw["fc_packets_sent"], 0)
                self.assertGreater(hosts["credit_stall_ns"], 0)

    def test_pfc_is_lossless_for_minimum_size_frames_too(self):
        # 64 B frames cost 254 B of buffer each (one cell) but only 84 B of wire: the headroom is
        # sized for the worst expansion, so the lossless class still loses nothing.
        _, s = self.simulate("pfc64", LINK + INCAST + ["flow_control.mode=pfc",
                                                       "traffic.size=64B"])
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        sw = s["flow_control"]["switches"]["switch"]
        self.assertEqual(s["packets"]["dropped"], 0)
        self.assertGreater(sw["pause_frames_sent"], 0)
        self.assertLessEqual(sw["headroom_peak_bytes"], headroom_bytes() * cell_expansion())

    def test_pfc_on_ideal_links_sizes_headroom_for_zero_latency(self):
        # An ideal link takes no time and adds no framing: the headroom is two frames, the PFC
        # frame and the response time's data, expanded for cells from 64 B frames up (PFC is
        # Ethernet's). It used to take the cable keys' latency and 1 B frames (x254): 61 MB per
        # priority, which left the NIC configuration no shared pool.
        ideal = ["link.model=ideal", "flow_control.pfc.response_delay=2017ns",
                 "flow_control.pfc.mtu=9216B", "flow_control.pfc.lossless_mask=1"]
        _, s = self.simulate("ideal", ideal + INCAST + ["flow_control.mode=pfc"])
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        sw = s["flow_control"]["switches"]["switch"]
        self.assertEqual(s["packets"]["dropped"], 0)
        self.assertGreater(sw["pause_frames_sent"], 0)
        bound = (2 * (9216 + 20) + (64 + 20) + 800 / 8 * 2017) * max(
            -(-f // 254) * 254 / f for f in range(64, 9217))
        self.assertGreater(sw["headroom_peak_bytes"], 0)
        self.assertLessEqual(sw["headroom_peak_bytes"], bound)
        # The shipped NIC configuration (PFC, 51.2T chip) runs on ideal links.
        out = os.path.join(self.tmp, "nic_ideal")
        p = subprocess.run([FABRICSIM, "run", os.path.join(ROOT, "configs", "nic_800g.yaml"),
                            "--out", out, "--set", "link.model=ideal", "--set",
                            "sim.duration=5us", "--set", "sim.warmup=1us"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_a_lossy_class_still_drops_under_pfc(self):
        # PFC on priority 1 only; the incast runs on class 0, which is lossy: it tail-drops at the
        # threshold and never pauses anyone.
        _, s = self.simulate("lossy", LINK + INCAST + ["flow_control.mode=pfc",
                                                       "flow_control.pfc.lossless_mask=2"])
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        sw = s["flow_control"]["switches"]["switch"]
        self.assertGreater(s["packets"]["dropped"], 1000)
        self.assertEqual(sw["pause_frames_sent"], 0)
        self.assertEqual(sw["lossless_drops"], 0)

    def test_pfc_headroom_too_small_loses_lossless_packets(self):
        _, s = self.simulate("small", LINK + INCAST + [
            "flow_control.mode=pfc", "flow_control.pfc.headroom_formula=fixed",
            f"flow_control.pfc.headroom_fixed={int(headroom_bytes() / 8)}B"])
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        self.assertGreater(s["flow_control"]["switches"]["switch"]["lossless_drops"], 0)
        self.assertEqual(s["packets"]["dropped"],
                         s["flow_control"]["switches"]["switch"]["lossless_drops"])

    def burst_trace(self):
        # Two switches in a line, 63 hosts each: hosts 0-29 (on s0) and 64-73 (on s1) each send
        # 200 back-to-back 4 KB frames to host 68 (on s1) from t = 1 us: ~10 us of line rate per
        # sender, 40x what the one egress port can take. Then nothing.
        path = os.path.join(self.tmp, "burst.trace")
        lines = []
        for k in range(200):
            for src in list(range(30)) + list(range(64, 74)):
                lines.append((1000 + k * 42, src))
        lines.sort()
        with open(path, "w") as f:
            for t, src in lines:
                f.write(f"{t}ns {src} 68 4096\n")
        return path, 200 * 40

    def two_hop(self, name, mode):
        trace, packets = self.burst_trace()
        raw, s = self.simulate(name, LINK + [
            "topology.kind=line", f"flow_control.mode={mode}",
            "flow_control.pfc.threshold=static", "flow_control.pfc.xoff_static=100KB",
            "traffic.pattern=trace", f"traffic.trace.file={trace}", "sim.warmup=0ns",
            "sim.duration=400us"])
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        # Congestion ends: everything arrives, nothing was lost.
        self.assertEqual(s["packets"]["injected"], packets)
        self.assertEqual(s["packets"]["delivered"], packets)
        self.assertEqual(s["packets"]["dropped"], 0)
        self.assertEqual(s["host_queues"]["backlog_at_end"], 0)
        return raw, s

    def test_pause_propagates_two_hops_and_releases(self):
        _, s = self.two_hop("pfc2", "pfc")
        fc = s["flow_control"]
        s0, s1, hosts = fc["switches"]["s0"], fc["switches"]["s1"], fc["hosts"]
        self.assertGreater(s1["pause_frames_sent"], 0)      # s1 pauses s0 (and its own hosts)
        self.assertGreater(s0["pause_frames_received"], 0)  # ... s0 obeys ...
        self.assertGreater(s0["pause_frames_sent"], 0)      # ... fills, and pauses its hosts
        self.assertGreater(hosts["paused_ns"], 0)
        self.assertGreater(s["host_queues"]["packets_waited"], 0)
        for who in (s0, s1, hosts):  # no stuck pause
            self.assertEqual(who["xoff_at_end"], 0)
            self.assertEqual(who["paused_at_end"], 0)
            self.assertEqual(who["lossless_drops"], 0)

    def test_credit_backpressure_propagates_two_hops_and_every_credit_returns(self):
        _, s = self.two_hop("cr2", "credit")
        fc = s["flow_control"]
        s0, s1, hosts = fc["switches"]["s0"], fc["switches"]["s1"], fc["hosts"]
        self.assertGreater(s0["credit_stall_ns"], 0)  # s0 waits for s1's credits ...
        self.assertGreater(hosts["credit_stall_ns"], 0)  # ... and its hosts for s0's
        self.assertGreater(s["host_queues"]["packets_waited"], 0)
        for who in (s0, s1, hosts):  # no lost credit: every sender has its full limit back
            self.assertEqual(who["credits_outstanding_at_end"], 0)

    def test_a_leaked_release_breaks_the_flow_control_accounts(self):
        # The test hook keeps one departing packet's cells (and its flow-control bytes or credit
        # blocks): the run-end conservation check must name the account and fail the run.
        env = dict(os.environ, FABRICSIM_FAULT="leak_cell")
        for mode, unit in (("pfc", "bytes"), ("credit", "blocks")):
            cmd = [FABRICSIM, "run", CHIP, "--out", os.path.join(self.tmp, "leak" + mode)]
            for kv in LINK + [f"flow_control.mode={mode}", "sim.duration=4us", "sim.warmup=1us"]:
                cmd += ["--set", kv]
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
            self.assertIn(f"flow control accounts", p.stdout)
            self.assertIn(unit, p.stdout)

    def test_a_paused_priority_does_not_hold_a_hosts_other_classes(self):
        # Hosts 0 and 5 flood host 1 on priority 3 (lossless): port 0's priority-3 group goes
        # XOFF and host 0 is paused on priority 3 for the rest of the run. From 3 us host 0 also
        # sends 20 class-0 packets to host 2 (spaced, 150 ns apart): each host has a queue per
        # class, like a NIC, so all 20 get through while priority 3 waits.
        path = os.path.join(self.tmp, "classes.trace")
        lines = [(1000 + k * 42, "0 1 4096 3") for k in range(100)]
        lines += [(1000 + k * 42, "5 1 4096 3") for k in range(150)]
        lines += [(3000 + k * 150, "0 2 4096 0") for k in range(20)]
        with open(path, "w") as f:
            for t, rest in sorted(lines, key=lambda x: x[0]):
                f.write(f"{t}ns {rest}\n")
        _, s = self.simulate("classes", LINK + [
            "flow_control.mode=pfc", "flow_control.pfc.lossless_mask=8",
            "flow_control.pfc.threshold=static", "flow_control.pfc.xoff_static=64KB",
            "traffic.pattern=trace", f"traffic.trace.file={path}", "sim.warmup=0ns",
            "sim.duration=8us", "sim.drain_limit=0ns"], rc=3)
        # Conservation holds; the only violation is liveness: the trace's priority-3 packets
        # still wait at host 0 when the run ends (exit 3).
        backlog = s["host_queues"]["backlog_at_end"]
        self.assertGreater(backlog, 50)  # priority 3 still waiting
        self.assertEqual(len(s["invariants"]["violations"]), 1, s["invariants"])
        self.assertIn(f"{backlog} of the trace's 270 packets were never sent",
                      s["invariants"]["violations"][0])
        self.assertGreater(s["flow_control"]["hosts"]["paused_ns_by_priority"][3], 3000)
        port2 = next(r for r in self.ports if r["switch"] == "switch" and r["port"] == "2")
        self.assertEqual(int(port2["out_packets_run"]), 20)

    def test_multi_device_runs_with_flow_control_are_deterministic(self):
        a, _ = self.two_hop("d1", "pfc")
        b, _ = self.two_hop("d2", "pfc")
        self.assertEqual(a, b)


class Ecn(unittest.TestCase):
    """RED-style marking of ECT packets at the egress queues follows p(q) = 0 below Kmin, Pmax x
    (q - Kmin) / (Kmax - Kmin) up to Kmax, 1 above (DCQCN), against the depth each packet saw."""

    KMIN, KMAX, PMAX = 10_000, 50_000, 0.3

    def marks(self, mark_on):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [FABRICSIM, "run", CHIP, "--out", tmp]
            for kv in ("traffic.ect=true", f"flow_control.ecn.kmin={self.KMIN}B",
                       f"flow_control.ecn.kmax={self.KMAX}B", f"flow_control.ecn.pmax={self.PMAX}",
                       f"flow_control.ecn.mark_on={mark_on}", "traffic.load=0.97",
                       "sim.duration=100us"):
                cmd += ["--set", kv]
            p = subprocess.run(cmd, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            with open(os.path.join(tmp, "summary.json")) as f:
                s = json.load(f)
        return s, s["flow_control"]["switches"]["switch"]["ecn"]

    def curve(self, q):
        if q < self.KMIN:
            return 0.0
        if q > self.KMAX:
            return 1.0
        return self.PMAX * (q - self.KMIN) / (self.KMAX - self.KMIN)

    def check(self, mark_on):
        s, e = self.marks(mark_on)
        self.assertTrue(s["invariants"]["ok"])
        w = e["bin_bytes"]
        tested = 0
        for k, (n, m) in enumerate(e["bins_packets_marked"][:-1]):
            lo, hi = k * w, (k + 1) * w  # depths in [lo, hi)
            if n == 0:
                continue
            if hi <= self.KMIN:
                self.assertEqual(m, 0, (mark_on, lo, hi))
            elif lo > self.KMAX:
                self.assertEqual(m, n, (mark_on, lo, hi))
            elif lo >= self.KMIN and hi <= self.KMAX and n >= 300:
                # Inside the ramp: the mean p over the bin lies between p(lo) and p(hi); allow
                # 4.5 binomial standard deviations on top.
                sd = math.sqrt(max(self.curve((lo + hi) / 2) * (1 - self.curve((lo + hi) / 2)),
                                   1e-9) / n)
                frac = m / n
                self.assertGreaterEqual(frac, self.curve(lo) - 4.5 * sd, (mark_on, lo, hi, n, m))
                self.assertLessEqual(frac, self.curve(hi) + 4.5 * sd, (mark_on, lo, hi, n, m))
                tested += 1
        self.assertGreaterEqual(tested, 4, "too few bins on the ramp to test the curve")
        # Marked packets reach the hosts as CE.
        self.assertGreater(s["packets"]["ce_marked_delivered"], 0)

    def test_marking_on_enqueue_follows_the_curve(self):
        self.check("enqueue")

    def test_marking_on_dequeue_follows_the_curve(self):
        self.check("dequeue")

    def test_no_marks_without_ect(self):
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([FABRICSIM, "run", CHIP, "--out", tmp, "--set", "traffic.load=0.97",
                                "--set", "sim.duration=20us"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(tmp, "summary.json")) as f:
                s = json.load(f)
        self.assertEqual(s["flow_control"]["switches"]["switch"]["ecn"]["marked"], 0)
        self.assertEqual(s["packets"]["ce_marked_delivered"], 0)


if __name__ == "__main__":
    FABRICSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
