"""Validation of the RDMA NIC's timing (issue #17) against closed forms written here from the
documented parameters, independently of models/nic/ and tlm/:

- case_nic_timing: one RDMA WRITE of S bytes on an idle single-switch fabric
  (configs/nic_400g.yaml and nic_800g.yaml, host 0 -> host 1) completes at the hand-computed
  time, and its first byte leaves and its last byte reaches host 1's memory at the hand-computed
  times, to the picosecond (fct.csv prints ps), for several S and MTUs;
- case_nic_goodput: a long flow's goodput is line rate x the header efficiency of its MTU and
  header stack (RoCEv2 over IPv4 and IPv6, with a VLAN tag, InfiniBand), the PCIe read rate of
  its completions when the PCIe link is narrower than the port, and max_reads x MTU per read
  round trip when the reads in flight do not cover it;
- case_nic_read_timing: one RDMA READ of S bytes (host 0 reads host 1's memory) likewise:
  request out, last byte in host 0's memory, completion, to the picosecond (read_timeline);
- case_nic_read_goodput: a long READ flow's goodput is line rate x its responses' header
  efficiency, or the PCIe rate of a narrow link, or the responder's reads in flight.

Registered in validate.py's CASES; run with validate.py --case nic_timing / nic_goodput /
nic_read_timing / nic_read_goodput.

The model of the path, as the headers state it (pcie_link.h, pcie_config.h, host_memory.h,
direct_dma.h, nic.h, packetizer.h, wire_format.h, mac.h) and docs/architecture.md for the switch:
  PCIe: a TLP of p payload bytes takes ceil((p + overhead) x 8 x enc_den / (enc_num x GT/s x
    lanes)) fs on its direction, which serves TLPs in booking order, and arrives `latency` after
    its last byte left. Overhead = header (16) + ECRC (0/4) + framing and LCRC (8, Gen1-5).
    A read: requests of at most MRRS (header-only TLPs, back to back), each reaching memory
    `completer_latency` after it arrived; its data comes back in completions of at most MPS.
    A posted write: TLPs of at most MPS; done (in host memory) `latency` after its last TLP left.
  Host memory: one bandwidth, accesses in the order they start: an access of b bytes starting
    at s (after the previous transfer) is done at s + latency + ceil(b / bandwidth).
  NIC send: doorbell (an 8 B MMIO write, to the device) + doorbell_latency -> WQE fetch (a 64 B
    read) -> one payload read per packet, max_reads of them ahead of the wire -> the MAC, which
    puts a packet's frame on the wire when its payload has arrived and the previous frame's gap
    has passed. NIC receive: at the frame's last bit, a payload DMA write (the message is
    delivered when its last packet's write is in memory) and, for the message's last packet
    (AckReq), an ACK at once (ACKs go before data). The ACK's last bit at the sender completes
    the message: a 32 B CQE write.
  Wire: a frame of F bytes takes max(F, min_frame) + preamble + IFG bytes at the MAC rate; its
    first bit follows its preamble; a link adds length x ns_per_m + fec_latency + pcs_latency.
  Switch: the chip's zero-load closed form of testbenches/cli/chip_latency_test.py (cell
    arrivals on clock edges, pipeline, matching, egress start without underrun), a frame's
    preamble starting at that first-bit time or when the port's previous frame and gap end.
"""
import csv
import math
import os
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from validation_common import ROOT, row  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "testbenches", "cli"))
from chip_latency_test import chip, closed_form_fs  # noqa: E402

NIC_400G = os.path.join(ROOT, "configs", "nic_400g.yaml")
NIC_800G = os.path.join(ROOT, "configs", "nic_800g.yaml")

FS = {"fs": 1, "ps": 10**3, "ns": 10**6, "us": 10**9, "ms": 10**12, "s": 10**15}
BYTES = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20,
         "GiB": 2**30}
BPS = {"bps": 1, "kbps": 10**3, "Mbps": 10**6, "Gbps": 10**9, "Tbps": 10**12}


def quantity(text, units):
    """'100ns' -> 100 x 10^6 with units FS, exactly (a Fraction rounded to an int)."""
    s = str(text).strip()
    i = len(s)
    while i > 0 and s[i - 1].isalpha():
        i -= 1
    value = Fraction(s[:i]) * units[s[i:]] if s[i:] else Fraction(s[:i])
    assert value.denominator == 1, text
    return int(value)


def ceil_div(a, b):
    return -(-a // b)


class Params:
    """The numbers the closed forms need, from a run's resolved configuration (summary.json)."""

    def __init__(self, summary):
        cfg = summary["config"]
        nic, link = cfg["nic"], cfg["link"]
        pcie, mem = nic["pcie"], nic["memory"]
        self.gen, self.lanes = int(pcie["generation"]), int(pcie["lanes"])
        self.mps = quantity(pcie["max_payload"], BYTES)
        self.mrrs = quantity(pcie["max_read_request"], BYTES)
        # Per TLP besides its payload: header (+ ECRC), and before Gen6 framing (STP token with
        # its sequence number, 4 B) and LCRC (4 B).
        self.tlp_overhead = (int(pcie["header_bytes"]) + (4 if pcie["ecrc"] else 0)
                             + (8 if self.gen <= 5 else 0))
        gts = {1: 2500, 2: 5000, 3: 8000, 4: 16000, 5: 32000, 6: 64000}[self.gen] * 10**6
        # Line encoding: 8b/10b, 128b/130b, Gen6 FLIT: 236 TLP bytes per 256 B flit.
        num, den = (8, 10) if self.gen <= 2 else (128, 130) if self.gen <= 5 else (236, 256)
        self.pcie_fs_per_byte = Fraction(8 * den * 10**15, num * gts * self.lanes)
        # The data link layer's share (pcie-bench's model): an 8 B ACK DLLP and an 8 B flow-
        # control update every A symbol times, PCIe Base Spec 5.0's recommended rate for a Gen3-5
        # x16 link at this MPS, and 4 SKP symbols in 1,538; none in Gen6's FLIT mode.
        if pcie["link_overheads"] == "pcie_bench" and self.gen <= 5:
            assert self.gen >= 3 and self.lanes in (4, 16), "the cases here run Gen3-5 x4, x16"
            a = {4: {128: 169, 256: 214, 512: 250, 1024: 378, 2048: 634, 4096: 1146},
                 16: {128: 144, 256: 168, 512: 182, 1024: 246, 2048: 374, 4096: 630}}[
                     self.lanes][self.mps]
            self.pcie_fs_per_byte /= 1 - Fraction(16, a) - Fraction(4, 1538)
        self.pcie_latency = quantity(pcie["latency"], FS)
        self.completer = quantity(pcie["completer_latency"], FS)
        self.mem_fs_per_byte = Fraction(10**6) / Fraction(str(mem["bandwidth"]))  # GB/s
        self.mem_latency = quantity(mem["latency"], FS)
        self.doorbell = quantity(nic["doorbell_latency"], FS)
        self.max_reads = int(nic["max_reads"])
        # 0: the transport's own limit (RcConfig::window_for): go-back-N's PSN space.
        self.window = int(nic["rc"]["window"]) or (
            (1 << 23) - 1 if nic["transport"] == "go_back_n" else 256)
        self.ack_every = int(nic["rc"]["ack_every"])
        self.mtu = quantity(nic["packet"]["mtu"], BYTES)
        self.headers = nic["packet"]["headers"]
        vlan, grh = bool(nic["packet"]["vlan"]), bool(nic["packet"]["grh"])
        # Header stacks (IBA / RFC 7348-style RoCEv2 annex; ib_pack.h): every packet's base.
        if self.headers == "infiniband":
            self.base = 8 + (40 if grh else 0) + 12 + 4 + 2  # LRH, GRH, BTH, ICRC, VCRC
        else:
            ip = 20 if self.headers == "roce_v2_ipv4" else 40
            # Ethernet (+ VLAN), IP, UDP, BTH, ICRC, FCS
            self.base = 14 + (4 if vlan else 0) + ip + 8 + 12 + 4 + 4
        phy = link["phy"]
        assert link["model"] == "phy", link["model"]
        self.framing = phy["framing"]
        if self.framing == "ethernet":
            self.min_frame, self.lead, self.gap = 64, 8, 12  # 802.3: preamble+SFD, IFG
        else:
            self.min_frame, self.lead, self.gap = 0, 1, 1  # IB: start and end delimiters
        # MAC rate: lanes x lane rate x FEC (k/n) x 256/257 transcoding, or 64/66 without FEC.
        lane = quantity(phy["lane_rate"], BPS)
        code = {"rs544": Fraction(514, 544) * Fraction(256, 257),
                "rs528": Fraction(514, 528) * Fraction(256, 257),
                "none": Fraction(64, 66)}[phy["fec"]]
        self.mac_bps = int(phy["lanes"]) * lane * code
        self.port_bps = quantity(cfg["switch"]["port_speed"], BPS)
        assert self.mac_bps == self.port_bps, (self.mac_bps, self.port_bps)
        self.fs_per_byte = Fraction(8 * 10**15) / self.mac_bps
        assert self.fs_per_byte.denominator == 1
        self.fs_per_byte = int(self.fs_per_byte)
        self.link_latency = (Fraction(str(link["length_m"])) * Fraction(str(link["ns_per_m"]))
                             * 10**6 + quantity(phy["fec_latency"], FS)
                             + quantity(phy["pcs_latency"], FS))
        assert self.link_latency.denominator == 1
        self.link_latency = int(self.link_latency)
        self.chip = chip(summary)
        assert self.chip["fs_per_byte"] == self.fs_per_byte

    # --- PCIe and memory -------------------------------------------------------------------
    def tlp(self, payload):
        return math.ceil((payload + self.tlp_overhead) * self.pcie_fs_per_byte)

    def xfer(self, n):
        return math.ceil(n * self.mem_fs_per_byte)

    # --- packets ---------------------------------------------------------------------------
    def packets(self, size):
        """(payload, frame bytes) of each packet of an RDMA WRITE of `size` bytes: FIRST and
        ONLY carry a RETH (16 B)."""
        n = max(1, ceil_div(size, self.mtu))
        out = []
        for i in range(n):
            p = min(self.mtu, size - i * self.mtu)
            out.append((p, p + self.base + (16 if i == 0 else 0)))
        return out

    def wire(self, frame):
        """Fs a frame occupies its wire for, its preamble and gap included."""
        return (max(frame, self.min_frame) + self.lead + self.gap) * self.fs_per_byte

    def switch_first_bit(self, t0, frame):
        """Alone in the switch: the time its egress may start the frame (its first bit on an
        ideal link, its preamble on a real one), for a frame whose first bit came in at t0."""
        return closed_form_fs(self.chip, t0, frame) + t0 - frame * self.fs_per_byte


class Link:
    """A PCIe link's two directions (0: to host, 1: to device), serving TLPs in booking order."""

    def __init__(self, p):
        self.p, self.free = p, [0, 0]

    def send(self, d, t, payload):
        start = max(t, self.free[d])
        self.free[d] = start + self.p.tlp(payload)
        return self.free[d], self.free[d] + self.p.pcie_latency


def split(addr, n, chunk):
    while n > 0:
        k = min(n, chunk - addr % chunk)
        yield addr, k
        addr, n = addr + k, n - k


class Host:
    """A host's PCIe link and memory as its NIC uses them."""

    def __init__(self, p):
        self.p, self.link, self.mem_free = p, Link(p), 0

    def read(self, t, addr, n):
        """A DMA read: when its last completion has arrived at the NIC."""
        last = t
        for a, k in split(addr, n, self.p.mrrs):
            _, arrived = self.link.send(0, t, 0)  # the request
            start = max(arrived + self.p.completer, self.mem_free)
            self.mem_free = start + self.p.xfer(k)
            ready = start + self.p.mem_latency + self.p.xfer(k)
            for _, m in split(a, k, self.p.mps):
                last = self.link.send(1, ready, m)[1]
        return last

    def write(self, t, addr, n):
        """A posted DMA write: in host memory a link latency after its last TLP left."""
        left = t
        for _, k in split(addr, n, self.p.mps):
            left = self.link.send(0, t, k)[0]
        return left + self.p.pcie_latency


WQE_ADDR, CQ_ADDR = 1 << 60, 2 << 60  # 64 B-aligned rings (only TLP splitting depends on them)


def write_timeline(p, start, size, msg=0):
    """The hand-computed times (fs) of an RDMA WRITE of `size` bytes posted at `start` on an idle
    fabric, host 0 -> host 1 through one switch. Returns a dict of first_out, delivered,
    completion, and the wire-bound flag (every packet after the first left when the previous
    frame's gap ended, not later for its payload read or the window)."""
    tx, rx = Host(p), Host(p)
    # Doorbell: an 8 B MMIO write to the device; the NIC handles it doorbell_latency later.
    _, arrived = tx.link.send(1, start, 8)
    ring = arrived + p.doorbell
    # WQE fetch: one 64 B read of the send ring.
    wqe = tx.read(ring, WQE_ADDR + 64 * msg, 64)
    pkts = p.packets(size)
    # Payload reads, one per packet, at most max_reads read and not yet sent; a read slot frees
    # when its packet first goes out, and the next packet's read is booked then.
    ready = []
    for i in range(min(len(pkts), p.max_reads)):
        ready.append(tx.read(wqe, (msg << 32) + i * p.mtu, pkts[i][0]))
    send, wire_bound = [], True
    free = 0  # the sender's MAC: the next preamble may start then
    for k, (payload, frame) in enumerate(pkts):
        t = max(ready[k], free)
        if k > 0 and ready[k] > free:
            wire_bound = False
        # (The window never binds: checked below.)
        send.append(t)
        free = t + p.wire(frame)
        j = k + p.max_reads
        if j < len(pkts):
            ready.append(tx.read(t, (msg << 32) + j * p.mtu, pkts[j][0]))
    # Through the switch: first bit in after the host's preamble and the link; the egress port
    # starts each frame when the closed form allows and its previous frame and gap are done.
    out_free, arrive = 0, []
    for (payload, frame), t in zip(pkts, send):
        t0 = t + p.lead * p.fs_per_byte + p.link_latency
        s = max(p.switch_first_bit(t0, frame), out_free)
        out_free = s + p.wire(frame)
        arrive.append(s + (p.lead + frame) * p.fs_per_byte + p.link_latency)  # last bit at host 1
    # Host 1: each packet's payload written as its last bit arrives.
    delivered = max(rx.write(a, CQ_ADDR, payload) for a, (payload, _) in zip(arrive, pkts))
    ack = p.base + 4  # BTH + AETH

    def ack_back(j):
        """The last bit at host 0 of the ACK host 1 sends for packet j, at once (ACKs go before
        data, and its MAC carries nothing else): back through the idle reverse path."""
        t0 = arrive[j] + p.lead * p.fs_per_byte + p.link_latency
        s = p.switch_first_bit(t0, ack)
        return s + (p.lead + max(ack, p.min_frame)) * p.fs_per_byte + p.link_latency

    # The window: packet k may go once packet k - window is acknowledged. Host 1 ACKs every
    # ack_every packets (and AckReq packets: the message's last, the one filling the window);
    # the ack_every ones alone must be back in time for the window never to bind.
    for k in range(p.window, len(pkts)):
        j = (k - p.window) // p.ack_every * p.ack_every + p.ack_every - 1
        assert j < len(pkts) and ack_back(j) <= send[k], "the window would bind"
    ack_in = ack_back(len(pkts) - 1)
    completion = tx.write(ack_in, CQ_ADDR, 32)  # the send CQE
    return {"first_out": send[0], "delivered": delivered, "completion": completion,
            "wire_bound": wire_bound, "packets": len(pkts), "ack_in": ack_in}


READ_ADDR = 3 << 60  # what READs read: a region per READ request (its RETH's index << 32)


def read_response_frames(p, size):
    """(payload, frame bytes) of each READ response of a READ of `size` bytes: FIRST, LAST and
    ONLY carry an AETH (4 B), MIDDLE none."""
    n = max(1, ceil_div(size, p.mtu))
    return [(min(p.mtu, size - i * p.mtu),
             min(p.mtu, size - i * p.mtu) + p.base + (4 if i in (0, n - 1) else 0))
            for i in range(n)]


def read_timeline(p, start, size, msg=0, reth=0):
    """The hand-computed times (fs) of an RDMA READ of `size` bytes posted at `start` at host 0
    on an idle fabric, reading host 1's memory through one switch. The request (BTH + RETH, 16 B
    after the base headers) leaves as soon as its WQE is fetched (nothing to read from host 0's
    memory); at its last bit host 1's NIC reads each response's payload over its own PCIe link
    (max_reads ahead of its wire, a read booked as an earlier response leaves, as the send
    side's); responses go back to back as their payload arrives; host 0 writes each one's
    payload at its last bit; the READ completes (CQE) when the last write is in host 0's
    memory. Returns first_out (the request leaving), delivered (last byte in host 0's memory),
    completion, wire_bound (responses back to back once the first left)."""
    req, resp = Host(p), Host(p)
    _, arrived = req.link.send(1, start, 8)  # doorbell
    wqe = req.read(arrived + p.doorbell, WQE_ADDR + 64 * msg, 64)
    send_req = wqe
    f_req = p.base + 16
    t0 = send_req + p.lead * p.fs_per_byte + p.link_latency
    s = p.switch_first_bit(t0, f_req)
    at_resp = s + (p.lead + f_req) * p.fs_per_byte + p.link_latency  # its last bit at host 1
    pkts = read_response_frames(p, size)
    base = READ_ADDR + (reth << 32)
    ready = [resp.read(at_resp, base + i * p.mtu, pkts[i][0])
             for i in range(min(len(pkts), p.max_reads))]
    send, free, wire_bound = [], 0, True
    for k, (payload, frame) in enumerate(pkts):
        t = max(ready[k], free)
        if k > 0 and ready[k] > free:
            wire_bound = False
        send.append(t)
        free = t + p.wire(frame)
        j = k + p.max_reads
        if j < len(pkts):
            ready.append(resp.read(t, base + j * p.mtu, pkts[j][0]))
    out_free, arrive = 0, []
    for (payload, frame), t in zip(pkts, send):
        t0 = t + p.lead * p.fs_per_byte + p.link_latency
        s = max(p.switch_first_bit(t0, frame), out_free)
        out_free = s + p.wire(frame)
        arrive.append(s + (p.lead + frame) * p.fs_per_byte + p.link_latency)
    delivered = max(req.write(a, CQ_ADDR, payload) for a, (payload, _) in zip(arrive, pkts))
    completion = req.write(max(delivered, arrive[-1]), CQ_ADDR, 32)  # the send CQE
    return {"first_out": send_req, "delivered": delivered, "completion": completion,
            "wire_bound": wire_bound, "packets": len(pkts), "request_at_responder": at_resp}


def read_fct(path):
    with open(os.path.join(path, "fct.csv")) as f:
        return list(csv.DictReader(f))


def read_round_trip(p):
    """A packet's payload read on idle links, in fs: the request TLP, the PCIe latency both ways,
    the completer and host memory, the MTU's transfer from memory and its completions."""
    return (p.tlp(0) + 2 * p.pcie_latency + p.completer + p.mem_latency + p.xfer(p.mtu)
            + sum(p.tlp(k) for _, k in split(0, p.mtu, p.mps)))


def message_file(r, name, lines, verb="write"):
    path = os.path.join(r.workdir, name)
    with open(path, "w") as f:
        f.write("# start src dst bytes verb [qp] tc\n")
        for start_fs, src, dst, size, *qp in lines:  # (start, src, dst, bytes[, qp])
            q = f" qp={qp[0]}" if qp else ""
            f.write(f"{start_fs}fs {src} {dst} {size} {verb}{q} tc=3\n")
    return path


def case_nic_timing(r):
    """One RDMA WRITE at a time, host 0 -> host 1, on an idle 400G (and 800G) single-switch
    fabric: its first byte out, last byte in host 1's memory and completion at the closed form's
    times, to 1 ps.

    On the chip as configs/nic_*.yaml have it (shared_memory: no crossbar) the default coalescing
    (an ACK every 16 packets, window 256) leaves the data's times exactly as the closed form
    says. On a voq crossbar only the message's last packet is acknowledged (rc.ack_every and
    rc.window above its packets): a coalesced ACK crossing the switch mid-message takes a
    crossbar matching, and the next matching (for a data cell of the other direction) may start
    only a slot after it (the crossbar's one matching per slot), which the isolated-packet closed
    form does not count (it moves the 64 KiB / MTU 1024 message by 2 ns)."""
    rows = []
    sizes = (256, 4096, 65536, 1 << 20)
    gap = 60 * 10**9  # 60 us between messages: each finds the fabric idle
    last_ack = ["nic.rc.ack_every=1048576", "nic.rc.window=4096"]
    runs = [(NIC_400G, mtu, "shared_memory, ACK every 16", sizes, [f"nic.packet.mtu={mtu}B"])
            for mtu in (1024, 4096)]
    runs.append((NIC_400G, 1024, "voq, last packet ACKed", (65536, 1 << 20),
                 ["nic.packet.mtu=1024B", "switch.architecture=voq"] + last_ack))
    # 800G on PCIe Gen6 x16 (FLIT mode: no per-TLP framing, 236 TLP bytes a 256 B flit).
    runs.append((NIC_800G, 4096, "shared_memory, ACK every 16", sizes, ["nic.packet.mtu=4096B"]))
    for config, mtu, label, sizes, sets in runs:
        # Random clock phases: the messages start at odd femtoseconds.
        msgs = [(10**9 + i * gap + 7919 * (i + 1) * (mtu // 256), 0, 1, s)
                for i, s in enumerate(sizes)]
        path = message_file(r, f"nic_timing_{r.count}.txt", msgs)
        s = r.run(config, ["traffic.pattern=messages", f"traffic.messages.file={path}",
                             "sim.warmup=0ns", f"sim.duration={msgs[-1][0] // 10**6 + 1000}ns"]
                  + sets)
        p = Params(s)
        fct = read_fct(r.last_out)
        assert len(fct) == len(msgs), fct
        for i, ((start, _, _, size), m) in enumerate(zip(msgs, fct)):
            e = write_timeline(p, start, size, i)
            if i + 1 < len(msgs):
                assert e["completion"] < msgs[i + 1][0], "messages overlap"
            assert m["state"] == "completed", m
            assert e["wire_bound"], "the closed form assumes reads ahead of the wire"
            several = e["packets"] > 1
            params = f"{p.port_bps // 10**9}G, S={size} MTU={mtu}, {label}"
            # Times after the post (fct.csv: absolute ns with 3 decimals; fct_ns is relative).
            t_post = start / 1e6
            for col, key, what, note in (
                    ("first_byte_out_ns", "first_out", "first byte out",
                     "doorbell + WQE fetch + first packet's payload read (PCIe, memory)"),
                    ("last_byte_delivered_ns", "delivered", "last byte in host 1's memory",
                     "first byte out + " + ("frames back to back (reads ahead) + "
                                            if several else "")
                     + "links + switch + DMA write"),
                    ("fct_ns", "completion", "FCT",
                     "last frame at host 1 + ACK through the switch + CQE write")):
                if col != "fct_ns" and label.startswith("voq"):
                    if col == "first_byte_out_ns":
                        continue  # (the same as the shared_memory rows')
                measured = float(m[col]) - (0 if col == "fct_ns" else t_post)
                rows.append(row(f"NIC RDMA WRITE, idle fabric: {what}, after the post (ns)",
                                params, (e[key] - start) / 1e6, measured, 0.001, note))
    return rows


def gbps(bytes_, fs):
    return bytes_ * 8 / fs * 1e6  # B/fs -> Gb/s


def case_nic_goodput(r):
    """A long flow, host 0 -> host 1 on the idle 400G (and 800G) fabric: N back-to-back 1 MiB RDMA
    WRITEs posted at once on one QP. Goodput = (N - 1) MiB / (last byte of message N-1 in host 1's
    memory - last byte of message 0 there): the steady state, every fixed latency cancelled.
    Expected: the wire's, S / (sum over the message's packets of their wire time), i.e. line rate
    x mtu / (mtu + headers + preamble + IFG) but for one 16 B RETH a message; or with the PCIe link
    narrower than the port, the completions' rate: MPS per TLP time of MPS + overhead bytes (the
    NIC's reads come back in MPS-sized completions, back to back on the to-device direction,
    which nothing else uses once the flow runs; host 1's writes are MPS-sized TLPs at the same
    rate); or, when max_reads x MTU bytes do not cover a read's round trip (small MTUs), that:
    max_reads x MTU per round trip. The default ACK coalescing (every 16 packets) and window."""
    rows = []
    size, n = 1 << 20, 4
    path = message_file(r, "nic_goodput.txt", [(10**6, 0, 1, size)] * n)
    base = ["traffic.pattern=messages", f"traffic.messages.file={path}", "sim.warmup=0ns",
            "sim.duration=2us"]
    # The tolerance: 0.01%, less than one byte a packet. The window's edges move by a few ns at
    # most (a switch clock cycle; a crossbar slot a mid-flow ACK took, case_nic_timing): 2e-5 of
    # it at most. The 0.5% would pass a MAC that forgot the 20 B of preamble and IFG at
    # MTU 4096 (0.48%).
    tol = 0.0001
    cases = (
        ("RoCEv2/IPv4, MTU 4096", ["nic.packet.mtu=4096B"], "wire"),
        # 256 B packets: 32 reads of 256 B in flight do not cover a read's round trip.
        ("RoCEv2/IPv4, MTU 256, max_reads 32", ["nic.packet.mtu=256B"], "reads"),
        ("RoCEv2/IPv4, MTU 256, max_reads 128", ["nic.packet.mtu=256B", "nic.max_reads=128"],
         "wire"),
        ("RoCEv2/IPv4, MTU 1024", ["nic.packet.mtu=1024B"], "wire"),
        ("RoCEv2/IPv6, MTU 4096", ["nic.packet.mtu=4096B", "nic.packet.headers=roce_v2_ipv6"],
         "wire"),
        ("RoCEv2/IPv4 + VLAN, MTU 2048", ["nic.packet.mtu=2048B", "nic.packet.vlan=true"],
         "wire"),
        # InfiniBand framing on the link (2 B of delimiters, no minimum frame or IFG) and no link
        # flow control (IB credits sized for 64 KiB per VL would cap a 400G flow).
        ("InfiniBand, MTU 4096", ["nic.packet.mtu=4096B", "nic.packet.headers=infiniband",
                                  "link.phy.framing=infiniband", "flow_control.mode=none"],
         "wire"),
        ("InfiniBand, MTU 2048", ["nic.packet.mtu=2048B", "nic.packet.headers=infiniband",
                                  "link.phy.framing=infiniband", "flow_control.mode=none"],
         "wire"),
        ("RoCEv2/IPv4, MTU 4096, PCIe Gen5 x4, MPS 256",
         ["nic.packet.mtu=4096B", "nic.pcie.lanes=4", "nic.pcie.max_payload=256B"], "pcie"),
        ("RoCEv2/IPv4, MTU 4096, PCIe Gen5 x4, MPS 512, MRRS 1024",
         ["nic.packet.mtu=4096B", "nic.pcie.lanes=4", "nic.pcie.max_payload=512B",
          "nic.pcie.max_read_request=1024B"], "pcie"),
    )
    cases = [(NIC_400G,) + c for c in cases] + [
        (NIC_800G, "RoCEv2/IPv4, MTU 4096", ["nic.packet.mtu=4096B"], "wire"),
        # Gen6 x4 in FLIT mode: 236 TLP bytes a 256 B flit, no per-TLP framing.
        (NIC_800G, "RoCEv2/IPv4, MTU 4096, PCIe Gen6 x4, MPS 256",
         ["nic.packet.mtu=4096B", "nic.pcie.lanes=4"], "pcie"),
    ]
    for config, label, sets, bound in cases:
        s = r.run(config, base + sets)
        p = Params(s)
        fct = read_fct(r.last_out)
        assert len(fct) == n and all(m["state"] == "completed" for m in fct), fct
        d = [float(m["last_byte_delivered_ns"]) * 1e6 for m in fct]
        measured = gbps((n - 1) * size, d[-1] - d[0])
        wire = gbps(size, sum(p.wire(f) for _, f in p.packets(size)))
        # PCIe: the to-device direction carries the payload in completions of at most MPS (split
        # at MPS-aligned addresses inside MRRS-aligned requests: all full for these sizes).
        pcie = gbps(p.mps, p.tlp(p.mps))
        # Reads in flight (Little): a packet's read is booked when the packet max_reads ahead of
        # it leaves, so at most max_reads x MTU bytes per read round trip (request, completer,
        # memory, completions; idle links).
        rtt = read_round_trip(p)
        reads = gbps(p.max_reads * p.mtu, rtt)
        bounds = {"wire": wire, "pcie": pcie, "reads": reads}
        exp = min(bounds.values())
        assert bounds[bound] == exp, (label, bounds)
        if bound == "wire":
            framing = (f"{p.lead} + {p.gap} B of delimiters" if p.min_frame == 0 else
                       f"{p.lead} B preamble + {p.gap} B IFG")
            note = (f"{p.port_bps / 1e9:.0f}G x {p.mtu} / ({p.mtu} + {p.base} B headers + "
                    f"{framing}), + a 16 B RETH a message; PCIe would allow {pcie:.1f}")
        elif bound == "reads":
            note = (f"{p.max_reads} reads x {p.mtu} B per read round trip of {rtt / 1e6:.3f} ns; "
                    f"the wire would allow {wire:.1f}")
        else:
            note = (f"PCIe Gen{p.gen} x{p.lanes} ({8e15 / float(p.pcie_fs_per_byte) / 1e9:.2f} "
                    f"Gb/s of TLPs): {p.mps} B per {p.mps + p.tlp_overhead} B completion; the "
                    f"wire would allow {wire:.1f}")
        rows.append(row("NIC long flow goodput (Gb/s)", f"{p.port_bps // 10**9}G, {label}", exp,
                        measured, tol * exp, note))
    # The NIC-wide limit (nic.max_reads_nic): 4 QPs to one peer, 4 messages of 1 MiB each, 32
    # reads ahead per QP. Without the limit they would fill the wire; with it every slot is busy
    # and Little's law gives max_reads_nic x MTU per read round trip, the same round trip as one
    # QP's (the reads' rate, hence the PCIe load, is the same). Measured from the QPs' first
    # messages' last bytes to their last ones' (44 MiB): the rounds' edges are ragged by about
    # the limit's worth of packets (8-16 KB), hence 0.05% here against 0.01% above.
    qps, per = 4, 12
    path = message_file(r, "nic_goodput_qps.txt",
                        [(10**6, 0, 1, size, i % qps) for i in range(qps * per)])
    for cap in (32, 64):
        s = r.run(NIC_400G, ["traffic.pattern=messages", f"traffic.messages.file={path}",
                             "sim.warmup=0ns", "sim.duration=2us", "sim.drain_limit=20ms",
                             "nic.packet.mtu=256B",
                             f"nic.qps_per_pair={qps}", f"nic.max_reads_nic={cap}"])
        p = Params(s)
        fct = read_fct(r.last_out)
        assert len(fct) == qps * per and all(m["state"] == "completed" for m in fct), fct
        d = [float(m["last_byte_delivered_ns"]) * 1e6 for m in fct]
        first, last = max(d[:qps]), max(d[-qps:])
        measured = gbps((per - 1) * qps * size, last - first)
        rtt = read_round_trip(p)
        exp = gbps(cap * p.mtu, rtt)
        wire = gbps(size, sum(p.wire(f) for _, f in p.packets(size)))
        assert exp < wire and exp < qps * gbps(p.max_reads * p.mtu, rtt), (exp, wire)
        rows.append(row("NIC long flow goodput (Gb/s)",
                        f"{p.port_bps // 10**9}G, MTU 256, {qps} QPs x max_reads {p.max_reads}, "
                        f"max_reads_nic {cap}", exp, measured, 0.0005 * exp,
                        f"{cap} reads x {p.mtu} B per read round trip of {rtt / 1e6:.3f} ns over "
                        f"all QPs; without the limit the wire's {wire:.1f}"))
    return rows


def case_nic_read_timing(r):
    """One RDMA READ at a time, host 0 reading host 1's memory, on an idle 400G (and 800G)
    single-switch fabric: the request leaving, the last byte in host 0's memory and the
    completion at read_timeline's times, to 1 ps, for several S and MTUs (fct.csv: first byte
    out = the request leaving, last byte delivered = the last response's payload in the
    requester's memory, fct = its CQE)."""
    rows = []
    sizes = (1, 4096, 65536, 1 << 20)
    gap = 60 * 10**9
    runs = [(NIC_400G, mtu, "shared_memory", sizes, [f"nic.packet.mtu={mtu}B"])
            for mtu in (1024, 4096)]
    runs.append((NIC_800G, 4096, "shared_memory", sizes, ["nic.packet.mtu=4096B"]))
    for config, mtu, label, sizes, sets in runs:
        msgs = [(10**9 + i * gap + 7919 * (i + 1) * (mtu // 256), 0, 1, sz)
                for i, sz in enumerate(sizes)]
        path = message_file(r, f"nic_read_timing_{r.count}.txt", msgs, "read")
        s = r.run(config, ["traffic.pattern=messages", f"traffic.messages.file={path}",
                             "sim.warmup=0ns", f"sim.duration={msgs[-1][0] // 10**6 + 1000}ns"]
                  + sets)
        p = Params(s)
        fct = read_fct(r.last_out)
        assert len(fct) == len(msgs), fct
        assert s["transport"]["read_requests_sent"] == len(msgs), s["transport"]
        for i, ((start, _, _, size), m) in enumerate(zip(msgs, fct)):
            e = read_timeline(p, start, size, i, i)
            if i + 1 < len(msgs):
                assert e["completion"] < msgs[i + 1][0], "messages overlap"
            assert m["state"] == "completed" and m["verb"] == "read", m
            assert e["wire_bound"], "the closed form assumes reads ahead of the wire"
            params = f"{p.port_bps // 10**9}G, S={size} MTU={mtu}, {label}"
            t_post = start / 1e6
            for col, key, what, note in (
                    ("first_byte_out_ns", "first_out", "request out",
                     "doorbell + WQE fetch (no payload to read)"),
                    ("last_byte_delivered_ns", "delivered", "last byte in host 0's memory",
                     "request (78 B) through the switch + responder's payload DMA read + "
                     + ("responses back to back + " if e["packets"] > 1 else "response + ")
                     + "switch + DMA write"),
                    ("fct_ns", "completion", "FCT", "last byte in memory + CQE write")):
                measured = float(m[col]) - (0 if col == "fct_ns" else t_post)
                rows.append(row(f"NIC RDMA READ, idle fabric: {what}, after the post (ns)",
                                params, (e[key] - start) / 1e6, measured, 0.001, note))
    return rows


def case_nic_read_goodput(r):
    """A long READ flow: host 0 posts N 1 MiB RDMA READs of host 1's memory at once on one QP
    (within the initiator depth, so all requests go at once). Goodput = (N - 1) MiB / (last byte
    of READ N-1 in host 0's memory - last byte of READ 0 there): line rate x the header
    efficiency of the responses (an AETH on the FIRST and LAST of each READ instead of a WRITE's
    one RETH); with a narrow PCIe link the payload's TLP rate, the requester's CQE TLPs counted
    (they share the direction of its writes); with small packets the responder's max_reads x
    MTU per read round trip (its reads run ahead of its wire as a sender's do)."""
    rows = []
    size, n = 1 << 20, 4
    path = message_file(r, "nic_read_goodput.txt", [(10**6, 0, 1, size)] * n, "read")
    base = ["traffic.pattern=messages", f"traffic.messages.file={path}", "sim.warmup=0ns",
            "sim.duration=2us"]
    tol = 0.0001
    cases = [
        (NIC_400G, "RoCEv2/IPv4, MTU 4096", ["nic.packet.mtu=4096B"], "wire"),
        (NIC_400G, "RoCEv2/IPv4, MTU 1024", ["nic.packet.mtu=1024B"], "wire"),
        (NIC_400G, "InfiniBand, MTU 4096", ["nic.packet.mtu=4096B", "nic.packet.headers=infiniband",
                                            "link.phy.framing=infiniband",
                                            "flow_control.mode=none"], "wire"),
        # The responder's reads: 32 of 256 B in flight do not cover a read's round trip, and a
        # narrow PCIe link at the responder caps the responses at its completion rate.
        (NIC_400G, "RoCEv2/IPv4, MTU 256, max_reads 32", ["nic.packet.mtu=256B"], "reads"),
        (NIC_400G, "RoCEv2/IPv4, MTU 4096, PCIe Gen5 x4, MPS 256",
         ["nic.packet.mtu=4096B", "nic.pcie.lanes=4", "nic.pcie.max_payload=256B"], "pcie"),
        (NIC_800G, "RoCEv2/IPv4, MTU 4096", ["nic.packet.mtu=4096B"], "wire"),
    ]
    for config, label, sets, bound in cases:
        s = r.run(config, base + sets)
        p = Params(s)
        fct = read_fct(r.last_out)
        assert len(fct) == n and all(m["state"] == "completed" for m in fct), fct
        d = [float(m["last_byte_delivered_ns"]) * 1e6 for m in fct]
        measured = gbps((n - 1) * size, d[-1] - d[0])
        wire = gbps(size, sum(p.wire(f) for _, f in read_response_frames(p, size)))
        # PCIe: the responder's completions and the requester's writes move the payload at the
        # same rate (MPS per TLP time of MPS + overhead); the requester's link also carries each
        # READ's CQE (one 32 B TLP) in the same direction as the writes, so it is the bottleneck:
        # per READ, size / MPS data TLPs and one CQE.
        pcie = gbps(size, size // p.mps * p.tlp(p.mps) + p.tlp(32))
        rtt = read_round_trip(p)
        reads = gbps(p.max_reads * p.mtu, rtt)
        bounds = {"wire": wire, "pcie": pcie, "reads": reads}
        exp = min(bounds.values())
        assert bounds[bound] == exp, (label, bounds)
        if bound == "wire":
            framing = (f"{p.lead} + {p.gap} B of delimiters" if p.min_frame == 0 else
                       f"{p.lead} B preamble + {p.gap} B IFG")
            note = (f"{p.port_bps / 1e9:.0f}G x {p.mtu} / ({p.mtu} + {p.base} B headers + "
                    f"{framing}) of the responses, + a 4 B AETH on a READ's first and last")
        elif bound == "reads":
            note = (f"the responder's {p.max_reads} reads x {p.mtu} B per read round trip of "
                    f"{rtt / 1e6:.3f} ns; the wire would allow {wire:.1f}")
        else:
            note = (f"PCIe Gen{p.gen} x{p.lanes}: {p.mps} B per {p.mps + p.tlp_overhead} B TLP "
                    f"(the responder's completions, the requester's writes), + the requester's "
                    f"32 B CQE TLP a READ; the wire would allow {wire:.1f}")
        rows.append(row("NIC long READ flow goodput (Gb/s)", f"{p.port_bps // 10**9}G, {label}",
                        exp, measured, tol * exp, note))
    return rows
