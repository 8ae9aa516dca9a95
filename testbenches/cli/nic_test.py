#!/usr/bin/env python3
"""RDMA NICs in fabric runs end to end (issue #17): the shipped NIC configurations run with every
message completed and accounted for (fct.csv, summary.json's transport section, per-NIC
counters); runs are deterministic; a message file is posted whole, and one the drain limit cuts
short fails the run; RDMA READs run (from a file or a generator) with their data checked at the
requester; a NIC that loses data fails the run's integrity check (exit 3), for writes and reads;
bad input (messages to hosts that do not exist, zero-byte messages, unknown verbs, QPs out of
range, for reads too, CC and PCIe parameters out of range, packet traces with NICs) exits 2
naming the file and line or the key, and so do messages a rail-only topology cannot route. The
RUD transport runs with entropy spraying on a fat tree and with trimming on a lossy incast,
every message complete and the trimmed packets counted; its keys, trimming's and the entropy
hash field are checked (exit 2 naming the key)."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

FABRICSIM = ""
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NIC400 = os.path.join(ROOT, "configs", "nic_400g.yaml")
NIC800 = os.path.join(ROOT, "configs", "nic_800g.yaml")
SHORT = ["sim.duration=40us", "sim.warmup=5us", "sim.traffic_thread=false"]


def run(config, out, *sets, env=None):
    cmd = [FABRICSIM, "run", config, "--out", out]
    for s in sets:
        cmd += ["--set", s]
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


class Nics(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def results(self, out):
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        with open(os.path.join(out, "fct.csv")) as f:
            rows = list(csv.DictReader(f))
        return s, rows

    def test_shipped_configs_complete_every_message(self):
        for cfg in (NIC400, NIC800):
            with self.subTest(cfg=os.path.basename(cfg)):
                out = os.path.join(self.tmp, os.path.basename(cfg))
                p = run(cfg, out, *SHORT)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                s, rows = self.results(out)
                t = s["transport"]
                self.assertTrue(s["invariants"]["ok"])
                self.assertGreater(t["messages_posted"], 10)
                self.assertEqual(len(rows), t["messages_posted"])
                # The run drains until every message has finished: none left in flight.
                self.assertEqual(t["messages_completed"], t["messages_posted"])
                self.assertEqual(t["messages_in_flight"], 0)
                self.assertEqual(t["bytes_delivered"], t["bytes_posted"])
                self.assertTrue(all(r["state"] == "completed" for r in rows))
                self.assertEqual(t["fct_ns"]["count"], t["messages_completed"])
                for r in rows:
                    start, first, done = (float(r[k]) for k in
                                          ("start_ns", "first_byte_out_ns", "completion_ns"))
                    self.assertLess(start, first)
                    self.assertLess(first, done)
                    self.assertAlmostEqual(float(r["fct_ns"]), done - start, places=2)
                    # No message beats itself alone on the idle fabric (the replay reuses a
                    # kind's time: within a clock cycle per switch crossing of its own).
                    ideal = float(r["ideal_fct_ns"])
                    self.assertGreater(ideal, 0)
                    self.assertGreater(float(r["fct_ns"]), ideal - 1.0)
                    self.assertAlmostEqual(float(r["slowdown"]), float(r["fct_ns"]) / ideal,
                                           places=5)
                sd = t["slowdown"]
                self.assertEqual(sd["count"], t["messages_completed"])
                self.assertTrue(sd["exact"])
                self.assertLessEqual(sd["p50"], sd["p99"])
                self.assertLessEqual(sd["p99"], sd["max"])
                # Packets: every data packet and ACK is a packet the fabric carried.
                pk = s["packets"]
                self.assertEqual(pk["injected"], pk["delivered"] + pk["dropped"] + pk["in_flight"])
                self.assertGreaterEqual(pk["injected"], t["data_packets_sent"])

    def test_per_nic_counters_are_registered(self):
        out = os.path.join(self.tmp, "o")
        p = run(NIC800, out, *SHORT, "stats.per_port_counters=all")
        self.assertEqual(p.returncode, 0, p.stderr)
        s, rows = self.results(out)
        c = s["counters"]
        posted = sum(c[f"nic{h}"]["messages_posted"] for h in range(64))
        self.assertEqual(posted, s["transport"]["messages_posted"])
        self.assertGreater(c["nic0"]["pcie_to_device_busy_ns"], 0)

    def test_same_seed_same_bytes_other_seed_other_bytes(self):
        outs = [os.path.join(self.tmp, n) for n in ("a", "b", "c")]
        for out, seed in zip(outs, (1, 1, 2)):
            p = run(NIC800, out, *SHORT, f"sim.seed={seed}")
            self.assertEqual(p.returncode, 0, p.stderr)
        fct = []
        for o in outs:
            with open(os.path.join(o, "fct.csv")) as f:
                fct.append(f.read())
        self.assertEqual(fct[0], fct[1])
        self.assertNotEqual(fct[0], fct[2])

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_a_message_file_is_posted_whole(self):
        # The last message starts after sim.duration: the run drains to post and finish it.
        path = self.write("m.txt", "0 0 1 64KiB write\n5us 1 2 4096 send\n60us 2 0 1MiB write_imm\n")
        out = os.path.join(self.tmp, "o")
        p = run(NIC800, out, "sim.duration=20us", "sim.warmup=1us", "traffic.pattern=messages",
                f"traffic.messages.file={path}")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        s, rows = self.results(out)
        self.assertEqual([r["state"] for r in rows], ["completed"] * 3)
        self.assertEqual([r["verb"] for r in rows], ["write", "send", "write_imm"])
        self.assertEqual(s["transport"]["bytes_delivered"], 65536 + 4096 + 1048576)
        # Cut short by the drain limit: the run says so and fails.
        p = run(NIC800, os.path.join(self.tmp, "cut"), "sim.duration=20us", "sim.warmup=1us",
                "sim.drain_limit=10us", "traffic.pattern=messages",
                f"traffic.messages.file={path}")
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("never posted", p.stdout)

    def test_reads_run_and_their_data_is_checked(self):
        # Host 0 reads 1 MiB of host 1 and 5000 B of host 2; host 1 writes to host 0 meanwhile
        # and reads host 0 on the same QP pair; a generated all-to-all of reads.
        path = self.write("r.txt", "0 0 1 1MiB read\n0 1 0 64KiB write\n1us 1 0 30000 read\n"
                                   "2us 0 2 5000 read tc=1\n")
        out = os.path.join(self.tmp, "r")
        p = run(NIC400, out, "sim.duration=20us", "sim.warmup=1us", "traffic.pattern=messages",
                f"traffic.messages.file={path}")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        s, rows = self.results(out)
        t = s["transport"]
        self.assertTrue(s["invariants"]["ok"], s["invariants"])
        self.assertEqual([r["state"] for r in rows], ["completed"] * 4)
        self.assertEqual([r["verb"] for r in rows], ["read", "write", "read", "read"])
        self.assertEqual(t["bytes_delivered"], 1048576 + 65536 + 30000 + 5000)
        self.assertEqual(t["read_requests_sent"], 3)
        self.assertEqual(t["read_responses_sent"], 256 + 8 + 2)
        for r in rows:  # request out, last byte in the requester's memory, then its CQE
            self.assertLess(float(r["first_byte_out_ns"]), float(r["last_byte_delivered_ns"]))
            self.assertLess(float(r["last_byte_delivered_ns"]), float(r["completion_ns"]))
        c = s["counters"]
        self.assertEqual(c["nic0"]["read_requests_sent"] + c["nic1"]["read_requests_sent"], 3)
        self.assertEqual(c["nic1"]["read_responses_sent"], 256)  # host 0 reads 1 MiB of it
        self.assertEqual(c["nic2"]["read_responses_sent"], 2)  # and 5000 B of host 2
        self.assertEqual(c["nic0"]["read_responses_sent"], 8)  # host 1 reads 30000 B of host 0
        # The same READs with a NIC that miscounts what it places: the run fails (exit 3).
        env = dict(os.environ, FABRICSIM_FAULT="nic_payload")
        bad = os.path.join(self.tmp, "rf")
        reads = self.write("ro.txt", "0 0 1 1MiB read\n")
        p = run(NIC400, bad, "sim.duration=20us", "sim.warmup=1us", "traffic.pattern=messages",
                f"traffic.messages.file={reads}", env=env)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        s, _ = self.results(bad)
        self.assertTrue(any("checksum" in v for v in s["invariants"]["violations"]))
        # Generated READs under selective repeat.
        gen = os.path.join(self.tmp, "g")
        p = run(NIC800, gen, *SHORT, "traffic.message_verb=read", "nic.transport=selective_repeat")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        s, rows = self.results(gen)
        self.assertTrue(s["invariants"]["ok"])
        self.assertGreater(len(rows), 10)
        self.assertTrue(all(r["verb"] == "read" and r["state"] == "completed" for r in rows))

    def test_lost_data_fails_the_integrity_check(self):
        env = dict(os.environ, FABRICSIM_FAULT="nic_payload")
        out = os.path.join(self.tmp, "o")
        p = run(NIC800, out, *SHORT, env=env)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        s, _ = self.results(out)
        self.assertFalse(s["invariants"]["ok"])
        self.assertTrue(any("checksum" in v for v in s["invariants"]["violations"]))

    def test_failed_or_unfinished_messages_fail_the_run(self):
        # Failed: every link loses most frames and the QPs give up after one short retry.
        out = os.path.join(self.tmp, "failed")
        p = run(NIC800, out, *SHORT, "link.phy.pre_fec_ber=2e-3", "nic.rc.timeout=2us",
                "nic.rc.retry_count=1")
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        s, rows = self.results(out)
        failed = sum(r["state"] == "failed" for r in rows)
        self.assertGreater(failed, 0)
        self.assertEqual(s["transport"]["messages_failed"], failed)
        self.assertIn(f"failed {failed} ", p.stdout)
        self.assertIn("** WORK NOT DONE **", p.stdout)
        lowest = min(int(r["id"]) for r in rows if r["state"] == "failed")
        self.assertTrue(any(v.startswith(f"nic: {failed} of {len(rows)} messages failed")
                            and f"(ids {lowest}," in v for v in s["invariants"]["violations"]),
                        s["invariants"]["violations"])
        # Unfinished: the drain limit ends the run with messages still in flight.
        out = os.path.join(self.tmp, "cut")
        p = run(NIC800, out, *SHORT, "sim.drain_limit=1us")
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        s, rows = self.results(out)
        left = sum(r["state"] == "in_flight" for r in rows)
        self.assertGreater(left, 0)
        self.assertEqual(s["transport"]["messages_in_flight"], left)
        self.assertIn(f"in flight {left}  ** WORK NOT DONE **", p.stdout)
        self.assertTrue(any(f"{left} of {len(rows)} messages unfinished" in v
                            for v in s["invariants"]["violations"]))

    def test_an_incast_without_congestion_control_fills_the_buffer_until_pfc_pauses(self):
        # No hidden window: 15 senders of 8 MiB each against one 400G port, nic.cc=none. The
        # buffer fills until PFC pauses the senders (a 256-packet window per QP kept 15 MiB in
        # flight at most, and PFC never fired), and every message still completes (lossless).
        path = os.path.join(self.tmp, "incast.txt")
        with open(path, "w") as f:
            f.writelines(f"0 {h} 0 8MiB write tc=3\n" for h in range(1, 16))
        peak = {}
        for window in (0, 256):
            out = os.path.join(self.tmp, f"incast{window}")
            p = run(NIC400, out, "switch.ports=16", "traffic.pattern=messages",
                    f"traffic.messages.file={path}", "nic.cc=none", f"nic.rc.window={window}",
                    "sim.duration=1us", "sim.warmup=0ns", "sim.traffic_thread=false",
                    "stats.occupancy_interval=0ns")
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            s, rows = self.results(out)
            self.assertEqual(len(rows), 15)
            self.assertTrue(all(r["state"] == "completed" for r in rows))
            self.assertEqual(s["transport"]["timeouts"], 0)
            pauses = s["flow_control"]["hosts"]["pause_frames_received_run"]
            peak[window] = s["buffer"]["peak_bytes_run"]
            if window == 0:  # the shipped default: PFC pauses the senders
                self.assertGreater(pauses, 0)
                self.assertGreater(peak[window], 50e6)
            else:  # the old hidden window: 15 x 256 packets of 4 KiB at most, never a pause
                self.assertEqual(pauses, 0)
                self.assertLess(peak[window], 15 * 256 * 4300)

    def test_rud_sprays_and_recovers_trimmed_packets(self):
        ft = ["topology.kind=fat_tree", "topology.k=4", "nic.transport=rud",
              "switch.routing.hash_fields=src,dst,entropy"]
        trim = ["switch.ports=16", "nic.transport=rud", "flow_control.mode=none", "nic.cc=none",
                "switch.buffer.size=2MB", "traffic.pattern=incast", "traffic.load=0.9",
                "switch.trimming.enabled=true"]
        for name, sets in (("fat_tree", ft), ("trim", trim)):
            with self.subTest(name):
                out = os.path.join(self.tmp, name)
                p = run(NIC800, out, *SHORT, *sets, "stats.per_port_counters=all")
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                s, rows = self.results(out)
                t = s["transport"]
                self.assertTrue(s["invariants"]["ok"])
                self.assertGreater(t["messages_posted"], 10)
                self.assertEqual(t["messages_completed"], t["messages_posted"])
                self.assertEqual(t["bytes_delivered"], t["bytes_posted"])
                self.assertTrue(all(r["state"] == "completed" for r in rows))
                c = s["counters"]
                self.assertIn("rud_presumed_lost", c["nic0"])
                pk = s["packets"]
                self.assertEqual(pk["injected"], pk["delivered"] + pk["dropped"] + pk["in_flight"])
                if name == "fat_tree":
                    self.assertGreater(t["out_of_order_packets"], 0)  # sprayed
                else:
                    trimmed = c["switch"]["trimmed_packets"]
                    self.assertGreater(trimmed, 0)
                    # Every trimmed packet reached its receiver and was NACKed (no link loss).
                    self.assertEqual(t["naks_sent"], trimmed)
                    self.assertEqual(sum(c[f"nic{h}"]["trimmed_received"] for h in range(16)),
                                     trimmed)
        # Off by default: no trimming counter, the RUD counters only with rud.
        out = os.path.join(self.tmp, "plain")
        p = run(NIC800, out, *SHORT, "switch.ports=16", "stats.per_port_counters=all")
        self.assertEqual(p.returncode, 0, p.stderr)
        s, _ = self.results(out)
        self.assertNotIn("trimmed_packets", s["counters"]["switch"])
        self.assertNotIn("rud_presumed_lost", s["counters"]["nic0"])

    def test_bad_input_names_the_file_line_or_key(self):
        f = lambda text: self.write(f"bad{abs(hash(text))}.txt", text)
        msgs = lambda path: ["traffic.pattern=messages", f"traffic.messages.file={path}"]
        cases = [
            (msgs(f("0 0 1 4096 write\n1us 0 999 4096 write\n")), ":2:", "999"),
            (msgs(f("0 0 1 0 write\n")), ":1:", "at least 1 byte"),
            (msgs(f("0 0 1 4096 fly\n")), ":1:", "unknown verb"),
            (msgs(f("0 0 1 4096 write qp=3\n")), ":1:", "qp 3"),
            (msgs(f("0 0 1 3GiB write\n")), ":1:", "bytes"),
            (msgs(f("0 0 1 0 read\n")), ":1:", "at least 1 byte"),
            (msgs(f("0 0 999 4096 read\n")), ":1:", "999"),
            (msgs(f("0 0 1 4096 read qp=3\n")), ":1:", "qp 3"),
            (msgs(f("0 0 1 4096 reed\n")), ":1:", "unknown verb"),
            (["traffic.message_verb=reads"], "traffic.message_verb", "read"),
            (["nic.rc.max_reads_outstanding=0"], "nic.rc.max_reads_outstanding", "out of range"),
            (["nic.rc.max_reads_outstanding=256"], "nic.rc.max_reads_outstanding",
             "out of range"),
            (["nic.dcqcn.g=2"], "nic.dcqcn.g", "out of range"),
            (["nic.pcie.lanes=3"], "nic.pcie.lanes", "PCIe link width"),
            (["nic.packet.mtu=3000B"], "nic.packet.mtu", "RDMA MTU"),
            (["nic.cc=dcqnc"], "nic.cc", "did you mean"),
            (["nic.transport=uec"], "nic.transport", "rud"),
            (["nic.transport=rud", "nic.rc.window=2048"], "nic.rc.window", "1024"),
            (["nic.rud.reorder_threshold=0"], "nic.rud.reorder_threshold", "out of range"),
            (["nic.transport=rud", "traffic.message_verb=read"], "traffic.message_verb",
             "does not carry RDMA READ"),
            (["nic.transport=rud"] + msgs(f("0 0 1 4096 write\n1us 0 1 4096 read\n")),
             "message 1 (0 -> 1) is an RDMA READ", "rud does not carry"),
            (["switch.routing.hash_fields=src,entropy,entropy"], "switch.routing.hash_fields",
             "entropy"),
            (["switch.trimming.enabled=true"], "switch.trimming.enabled", "flow_control.mode"),
            (["switch.trimming.traffic_class=8"], "switch.trimming.traffic_class", "classes"),
            (["switch.trimming.bytes=0B"], "switch.trimming.bytes", "out of range"),
            (["traffic.pattern=trace",
              f"traffic.trace.file={os.path.join(ROOT, 'traces', 'example_incast.trace')}"],
             "traffic.pattern", "packet trace cannot drive NICs"),
            (["nic.enabled=false"] + msgs(f("0 0 1 4096 write\n")), "traffic.pattern",
             "nic.enabled"),
        ]
        rail_only = os.path.join(ROOT, "configs", "examples", "rail_only.yaml")
        cases.append((["nic.enabled=true"] + msgs(f("0 0 1 4096 write\n")),
                      "traffic.messages.file", "cannot route", rail_only))
        for case in cases:
            sets, where, what = case[:3]
            with self.subTest(sets=sets):
                p = run(case[3] if len(case) > 3 else NIC400, os.path.join(self.tmp, "x"), *sets)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(where, p.stderr)
                self.assertIn(what, p.stderr)


if __name__ == "__main__":
    FABRICSIM = sys.argv.pop(1)
    unittest.main()
