"""Validation of the scale-up domains (scale_up:, models/workload/scale_up.h) and the hierarchical
all-reduce (models/workload/coll_allreduce_hierarchical.cpp) against closed forms, and of the
intra-node ring all-reduce against NCCL's published H100 figure.

  ring all-reduce in one domain      2(G-1) (L + S/(G B_up))            (exact: no NIC, no tail)
  hierarchical all-reduce            2(G-1) (L + S/(G B_up))                 (in the domains)
                                     + 2(N-1) (alpha + w(S/(G N))/R) + tail  (across, per rail)

G GPUs a domain at B_up each way with latency L (the h100_nvlink4 preset: 450 GB/s, 1872.5 ns),
N domains, R the NIC's line rate, w(b) a b-byte WRITE with immediate on the wire and alpha, tail
measured as validate_workload.py does (a 2-rank ring all-reduce on the same NIC and chip). The
NIC phase ends on its sends' completions (the ACKs: the tail) before the all-gather in the
domains starts. Unpipelined (workload.chunk 0). Registered in validate.py's CASES.

The NVLS all-reduce (models/workload/coll_allreduce_nvls.cpp, scale_up.reduce: true):

  unchunked                          2 (S/B_up + L)        (reductions, then multicasts; exact)
  chunked (512 KiB)                  (1 + 1/G) S/B_up + 2 L   (the two overlap; within 8%)

and its busbw at NCCL's effective NVLink rate (370 GB/s) against nccl-tests' ~480 GB/s NVLS
busbw on 8 H100 (nccl-tests #212): the model's port traffic alone predicts 2(G-1)/(G+1) x 370.

The hierarchical NVLS all-reduce (allreduce_nvls_hierarchical: NVLS reductions in each domain, a
ring of S/G per rail across the N domains, NVLS multicasts), unchunked:

  2 (S/B_up + L) + 2(N-1) (alpha + w(S/(G N))/R) + tail        (1%)

chunked (512 KiB: the buffer's pieces pipelined through the three phases, as NCCL's are), the
slower of a GPU's NVLink port and its NIC:

  max((1 + 1/G) S/B_up, 2(N-1)/N w(S/G)/R) x (1 + the pipeline's fill)   (1.04 +- 0.04)

and its busbw on 2 DGX H100 against NCCL's NVLS on 2 nodes (~430 GB/s, NCCL 2.19, 8 x 400G
RoCE a node: NVIDIA/nccl issue #1221), the ports at NCCL's effective 370 GB/s.

The ring all-reduce over the rails (models/workload/coll_allreduce_ring_rails.cpp: one ring over
all n ranks per channel, the channels' rings rotated so that each NIC carries one channel),
pipelined in m slices of c bytes, C = G channels:

  NIC-bound (400G)                   2(n-1) m w(c)/R + alpha + tail                 (1%)
  NVLink-bound (800G)                (G-1)/G 2(n-1)/n S/B_up + L                    (0.1%)

and on configs/examples/dgx_h100_2node.yaml with 400G NICs its busbw against nccl-tests' two-node
8-rail H100 figure, 46-48 GB/s per NIC (nccl-tests #290): 6%.
"""
import csv
import os

from validate_workload import FAST_HOST, IDEAL, NIC_400G, NIC_800G, alpha_tail, collective, wire_ns
from validation_common import ROOT, row

B_UP = 450e9           # bytes/s each way (h100_nvlink4)
L_UP_NS = 1872.5
NCCL_RING_GBPS = 370.0  # nccl-tests #212: 8 H100, NCCL_ALGO=RING, effective NVLink bandwidth


def up_ns(g, size):
    return 2 * (g - 1) * (L_UP_NS + size / g / B_UP * 1e9)


def case_scale_up(r):
    """One domain of 8 GPUs (16 hosts on the chip, 2 domains; the job's 8 ranks in the first):
    the ring all-reduce's time against its closed form; at 1 GiB its busbw against nccl-tests'
    ~370 GB/s for 8 H100 over NVLink (the model moves line rate, 450 GB/s: NCCL's ~20% protocol
    overhead is not modelled, so the ratio is 450/370 within 2%)."""
    rows = []
    up = ["scale_up.preset=h100_nvlink4"]
    for size in (16 << 20, 256 << 20, 1 << 30):
        t, busbw = collective(r, "allreduce_ring", 8, size, extra=up)
        expected = up_ns(8, size)
        rows.append(row("Scale-up: ring all-reduce in one NVLink domain, time / closed form",
                        f"G=8 S={size >> 20}MiB", 1.0, t / expected, 1e-4,
                        f"{t / 1000:.2f} us vs {expected / 1000:.2f} us; busbw {busbw:.1f} GB/s"))
    rows.append(row("Scale-up: 8-GPU ring all-reduce busbw / nccl-tests H100 (NCCL_ALGO=RING)",
                    "S=1GiB, h100_nvlink4 line rate", B_UP / 1e9 / NCCL_RING_GBPS,
                    busbw / NCCL_RING_GBPS, 0.02,
                    f"{busbw:.1f} GB/s vs ~{NCCL_RING_GBPS:.0f} measured (nccl-tests #212); "
                    "the gap is NCCL's protocol overhead, which the model leaves out"))
    return rows


def case_scale_up_hierarchical(r):
    """Two and four domains of 8 GPUs on the 800G NIC and chip (ideal links, no CC): the
    hierarchical all-reduce of every rank against the two-level closed form, 1%."""
    alpha, tail = alpha_tail(r)
    rows = []
    for n_dom, size in ((2, 64 << 20), (4, 64 << 20)):
        n = 8 * n_dom
        t, busbw = collective(r, "allreduce_hierarchical", n, size,
                              extra=["scale_up.preset=h100_nvlink4", f"switch.ports={max(16, n)}"])
        nic = 2 * (n_dom - 1) * (alpha + wire_ns(size // 8 // n_dom)) + tail
        expected = up_ns(8, size) + nic
        rows.append(row("Scale-up: hierarchical all-reduce, time / closed form",
                        f"G=8 N={n_dom} S={size >> 20}MiB", 1.0, t / expected, 0.01,
                        f"{t / 1000:.2f} us vs {expected / 1000:.2f} us (NVLink "
                        f"{up_ns(8, size) / 1000:.2f} us, NICs {nic / 1000:.2f} us; alpha "
                        f"{alpha:.0f} ns, tail {tail:.0f} ns); busbw {busbw:.1f} GB/s"))
    return rows


NCCL_NVLS_GBPS = 480.0  # nccl-tests #212: 8 H100, NVLS all-reduce peak busbw


def case_scale_up_nvls(r):
    """One domain of 8 GPUs with the switch's reduction (h100_nvlink4, scale_up.reduce): the
    NVLS all-reduce unchunked against 2 (S/B + L) (1e-4), chunked at 512 KiB against
    (1 + 1/G) S/B + 2 L (within 8%: flows share ports per flow, not per byte, and a latency per
    window of chunks; measured 6.9% in the unit test), and
    at NCCL's effective 370 GB/s its busbw against nccl-tests' ~480 GB/s."""
    rows = []
    up = ["scale_up.preset=h100_nvlink4", "scale_up.reduce=true"]
    for size in (16 << 20, 256 << 20):
        t, busbw = collective(r, "allreduce_nvls", 8, size, extra=up)
        expected = 2 * (size / B_UP * 1e9 + L_UP_NS)
        rows.append(row("Scale-up: NVLS all-reduce unchunked, time / closed form",
                        f"G=8 S={size >> 20}MiB", 1.0, t / expected, 1e-4,
                        f"{t / 1000:.2f} us vs {expected / 1000:.2f} us; busbw {busbw:.1f} GB/s"))
    size = 1 << 30
    t, busbw = collective(r, "allreduce_nvls", 8, size, chunk=512 << 10, extra=up)
    expected = (1 + 1 / 8) * size / B_UP * 1e9 + 2 * L_UP_NS
    rows.append(row("Scale-up: NVLS all-reduce chunked, time / (1 + 1/G) S/B + 2L",
                    "G=8 S=1024MiB chunk=512KiB", 1.04, t / expected, 0.04,
                    f"{t / 1000:.2f} us vs {expected / 1000:.2f} us; busbw {busbw:.1f} GB/s "
                    f"(ring at line rate: 447.2)"))
    t, busbw = collective(r, "allreduce_nvls", 8, size, chunk=512 << 10,
                          extra=up + ["scale_up.bandwidth=2960Gbps"])
    predicted = 2 * 7 / 9 * NCCL_RING_GBPS
    rows.append(row("Scale-up: 8-GPU NVLS all-reduce busbw / nccl-tests H100 (NVLS)",
                    "S=1GiB chunk=512KiB, 370 GB/s ports", predicted / NCCL_NVLS_GBPS,
                    busbw / NCCL_NVLS_GBPS, 0.1,
                    f"{busbw:.1f} GB/s vs ~{NCCL_NVLS_GBPS:.0f} measured (nccl-tests #212) [S]: "
                    "port traffic alone gives 2(G-1)/(G+1) x 370; the switch's own reduction "
                    "and multicast costs are not modelled (scale_up.reduce_bandwidth, unsourced)"))
    return rows


NCCL_NVLS_2NODE_GBPS = 430.0  # NVIDIA/nccl #1221: 2 x 8 H100, 8 x 400G RoCE, NVLS on, ~430 GB/s


def nvls_hier_ns(g, n_dom, size, alpha, tail, line_bps=800e9):
    """The closed form: reductions, the ring per rail of S/G, multicasts, one after the other."""
    return (2 * (size / B_UP * 1e9 + L_UP_NS)
            + 2 * (n_dom - 1) * (alpha + wire_ns(size // g // n_dom, line_bps)) + tail)


def case_scale_up_nvls_hierarchical(r):
    """Two and four domains of 8 GPUs with the switch's reduction, the 800G NIC and chip (ideal
    links, no CC): allreduce_nvls_hierarchical unchunked against its closed form (1%; a phase
    dropped is 16% to 60% off); chunked at 400G NICs and 1 GiB against the slower of the NVLink
    port and the NIC (1.04 +- 0.04: the pipeline's fill); and on 2 domains with 370 GB/s ports
    its busbw against nccl-tests' ~430 GB/s for NVLS on 2 DGX H100 (nccl #1221), 0.1."""
    alpha, tail = alpha_tail(r)
    rows = []
    up = ["scale_up.preset=h100_nvlink4", "scale_up.reduce=true"]
    for n_dom, size in ((2, 64 << 20), (4, 64 << 20)):
        n = 8 * n_dom
        t, busbw = collective(r, "allreduce_nvls_hierarchical", n, size,
                              extra=up + [f"switch.ports={max(16, n)}"])
        expected = nvls_hier_ns(8, n_dom, size, alpha, tail)
        rows.append(row("Scale-up: hierarchical NVLS all-reduce, time / closed form",
                        f"G=8 N={n_dom} S={size >> 20}MiB", 1.0, t / expected, 0.01,
                        f"{t / 1000:.2f} us vs {expected / 1000:.2f} us (NVLS "
                        f"{2 * (size / B_UP * 1e9 + L_UP_NS) / 1000:.2f} us); "
                        f"busbw {busbw:.1f} GB/s"))
    # Pipelined (workload.chunk 512 KiB: NCCL's pieces through the three phases): the slower of
    # a GPU's NVLink port ((1 + 1/G) S, as the one-domain NVLS) and its NIC (2(N-1)/N S/G) sets
    # the time, plus the pipeline's fill (4-5% here, as the one-domain chunked row).
    size = 1 << 30
    for n_dom in (2, 4):
        t, busbw = collective(r, "allreduce_nvls_hierarchical", 8 * n_dom, size, NIC_400G,
                              chunk=512 << 10, extra=up + [f"switch.ports={max(16, 8 * n_dom)}"])
        port = (1 + 1 / 8) * size / B_UP * 1e9
        nic = 2 * (n_dom - 1) / n_dom * wire_ns(size // 8, 400e9)
        rows.append(row("Scale-up: hierarchical NVLS all-reduce chunked, time / max(NVLink port, "
                        "NIC)", f"G=8 N={n_dom} S=1GiB chunk=512KiB, 400G NICs", 1.04,
                        t / max(port, nic), 0.04,
                        f"{t / 1000:.2f} us vs {max(port, nic) / 1000:.2f} us (port "
                        f"{port / 1000:.0f} us, NIC {nic / 1000:.0f} us); busbw {busbw:.1f} GB/s"))
    # Against nccl #1221's ~430 GB/s for NVLS on 2 DGX H100 (8 x 400G each), with the ports at
    # NCCL's effective NVLink rate as the one-domain row: the bound's busbw / 430.
    t, busbw = collective(r, "allreduce_nvls_hierarchical", 16, size, NIC_400G, chunk=512 << 10,
                          extra=up + ["scale_up.bandwidth=2960Gbps"])
    bound = max((1 + 1 / 8) * size / (NCCL_RING_GBPS * 1e9) * 1e9, wire_ns(size // 8, 400e9))
    predicted = 2 * 15 / 16 * size / bound
    rows.append(row("Scale-up: 2-domain NVLS all-reduce busbw / nccl-tests 2 x DGX H100 (NVLS)",
                    "G=8 N=2 S=1GiB chunk=512KiB, 370 GB/s ports, 400G NICs",
                    predicted / NCCL_NVLS_2NODE_GBPS, busbw / NCCL_NVLS_2NODE_GBPS, 0.1,
                    f"{busbw:.1f} GB/s vs ~{NCCL_NVLS_2NODE_GBPS:.0f} measured (nccl #1221) [S]: "
                    "the model is 35% over, where the one-domain row is 15% over: the switch's "
                    "reduction and multicast costs and NCCL's network proxy are not modelled"))
    return rows


DGX = os.path.join(ROOT, "configs", "examples", "dgx_h100_2node.yaml")
# The same servers with 400G NICs (NDR / 400GbE, ConnectX-7 class) as nccl-tests #290's: the
# link, chip ports, PCIe and ECN thresholds of configs/nic_400g.yaml.
DGX_400G = ["switch.port_speed=400Gbps", "link.phy.lanes=4", "nic.pcie.generation=5",
            "flow_control.ecn.kmin=1600KB", "flow_control.ecn.kmax=6400KB"]
NCCL_290_GBPS = (368.0, 384.0)  # nccl-tests #290: 46-48 GB/s per 400G NIC x 8 NICs a node
RAILS = ["scale_up.preset=h100_nvlink4", "workload.channels=8", "nic.qps_per_pair=8"]


def case_scale_up_rails(r):
    """The ring all-reduce over the rails (coll_allreduce_ring_rails.cpp) on 2 domains of 8 GPUs,
    8 channels, pipelined. Ideal fabric (FAST_HOST, as the pipelined collective rows): at 400G
    the NICs limit, every exit GPU's NIC streams its channel's 2(n-1) m slices back to back:
    T = 2(n-1) m w(c) + alpha + tail, 1% (the reduce-scatter and the all-gather: n - 1 steps);
    at 800G the NVLink ports limit (7 channels each at 450 GB/s): T = (G-1)/G 2(n-1)/n S/B_up + L
    (the last message's latency), 0.1%. Then the DGX example (dgx_h100_2node.yaml: PHY links,
    PFC, DCQCN, rail-optimized leaves) with 400G NICs and NCCL's ring slices (1 MiB): busbw
    against nccl-tests' 368-384 GB/s (#290), 6%."""
    rows = []
    n, g, c = 16, 8, 512 << 10
    size = 256 << 20
    m = size // 8 // n // c
    alpha, tail = alpha_tail(r, NIC_400G, 400e9, extra=FAST_HOST)
    t, busbw = collective(r, "allreduce_ring_rails", n, size, NIC_400G, chunk=c,
                          extra=RAILS + FAST_HOST)
    expected = 2 * (n - 1) * m * wire_ns(c, 400e9) + alpha + tail
    rows.append(row("Scale-up: ring all-reduce over the rails, time / closed form (NIC-bound)",
                    f"G=8 N=2 C=8 400G S={size >> 20}MiB chunk={c >> 10}KiB", 1.0,
                    t / expected, 0.01,
                    f"{t / 1000:.2f} us vs {expected / 1000:.2f} us: 2(n-1) m w + alpha + tail, "
                    f"{2 * (n - 1)} steps x {m} slices (alpha {alpha:.0f} ns, tail {tail:.0f} "
                    f"ns); busbw {busbw:.1f} GB/s = 8 NICs x {busbw / 8:.2f}"))
    # The reduce-scatter and the all-gather: one pass of n - 1 steps, the same slices.
    for algo in ("reducescatter_ring_rails", "allgather_ring_rails"):
        t, busbw = collective(r, algo, n, size, NIC_400G, chunk=c, extra=RAILS + FAST_HOST)
        expected = (n - 1) * m * wire_ns(c, 400e9) + alpha + tail
        rows.append(row(f"Scale-up: {algo}, time / closed form (NIC-bound)",
                        f"G=8 N=2 C=8 400G S={size >> 20}MiB chunk={c >> 10}KiB", 1.0,
                        t / expected, 0.01,
                        f"{t / 1000:.2f} us vs {expected / 1000:.2f} us: (n-1) m w + alpha + "
                        f"tail; busbw {busbw:.1f} GB/s"))
    t, busbw = collective(r, "allreduce_ring_rails", n, size, chunk=c,
                          extra=RAILS + FAST_HOST)
    expected = (g - 1) / g * 2 * (n - 1) / n * size / B_UP * 1e9 + L_UP_NS
    rows.append(row("Scale-up: ring all-reduce over the rails, time / closed form (NVLink-bound)",
                    f"G=8 N=2 C=8 800G S={size >> 20}MiB chunk={c >> 10}KiB", 1.0,
                    t / expected, 0.001,
                    f"{t / 1000:.2f} us vs {expected / 1000:.2f} us: (G-1)/G 2(n-1)/n S/B_up + L, "
                    f"the ports' bytes at 450 GB/s; busbw {busbw:.1f} GB/s (bound "
                    f"8 x 450/7 = 514.3)"))
    size = 1 << 30
    dgx = {}  # the rails' ring and, for the note, the flat ring and the hierarchical all-reduce
    for algo in ("allreduce_ring_rails", "allreduce_ring", "allreduce_hierarchical"):
        s = r.run(DGX, DGX_400G + RAILS + [
            f"workload.collective={algo}", f"workload.bytes={size}B", "workload.chunk=1MiB"])
        assert s["workload"]["nodes_unfinished"] == 0, s["workload"]
        with open(os.path.join(r.last_out, "collectives.csv")) as f:
            dgx[algo] = float(list(csv.DictReader(f))[0]["busbw_GBps"])
    busbw = dgx["allreduce_ring_rails"]
    mid = sum(NCCL_290_GBPS) / 2
    rows.append(row("Scale-up: 2 x 8 H100 ring all-reduce busbw / nccl-tests (8 x 400G rails)",
                    f"dgx_h100_2node 400G, allreduce_ring_rails C=8 S=1GiB chunk=1MiB", 1.0,
                    busbw / mid, 0.06,
                    f"{busbw:.1f} GB/s vs {NCCL_290_GBPS[0]:.0f}-{NCCL_290_GBPS[1]:.0f} measured "
                    "(46-48 GB/s per NIC, nccl-tests #290, NCCL_ALGO=RING) [V2]; line rate "
                    "bound 400, the model's goodput bound 394 (RoCE headers); on the same "
                    f"run allreduce_ring (one ring order) {dgx['allreduce_ring']:.1f}, "
                    f"allreduce_hierarchical {dgx['allreduce_hierarchical']:.1f}"))
    return rows


CASES = {"scale_up": case_scale_up, "scale_up_hierarchical": case_scale_up_hierarchical,
         "scale_up_nvls": case_scale_up_nvls,
         "scale_up_nvls_hierarchical": case_scale_up_nvls_hierarchical,
         "scale_up_rails": case_scale_up_rails}
NOTES = [
    "- Scale-up rows (validate_scale_up.py): the NVLink domain's fluid switch against the ring",
    "  all-reduce's closed form (exact to 1e-4), the hierarchical all-reduce against the",
    "  two-level closed form (NVLink phases + the NIC ring per rail, alpha and tail measured), and",
    "  the 8-GPU ring busbw against nccl-tests' ~370 GB/s on H100 (the model runs at line rate).",
    "- NVLS rows (validate_scale_up.py, scale_up.reduce): the switch reduces each GPU's slice",
    "  from all G GPUs and multicasts it, so each port carries (1 + 1/G) S each way. Unchunked,",
    "  reductions then multicasts: 2 (S/B + L), exact; chunked, the two overlap: (1 + 1/G) S/B",
    "  + 2 L, 0 to 8% over. At NCCL's effective 370 GB/s the model gives 2(G-1)/(G+1) x 370 = 576",
    "  GB/s busbw where nccl-tests measures ~480 on 8 H100 [S]: NVSwitch's reduction and",
    "  multicast costs beyond the ports are not modelled (reduce_bandwidth is unsourced).",
    "- Hierarchical NVLS rows (validate_scale_up.py): NVLS reductions in each domain, a ring of",
    "  S/G per rail across domains, NVLS multicasts, against 2 (S/B + L) + the ring's closed form",
    "  unchunked (1%); chunked, its pieces pipelined through the phases, against the slower of the",
    "  NVLink port and the NIC (1.04 +- 0.04); its 2-node busbw against nccl #1221's ~430 GB/s.",
    "- Rails rows (validate_scale_up.py, allreduce_ring_rails): one ring over all 16 GPUs per",
    "  channel, rotated so that each of a node's 8 NICs carries one channel's hop to the other",
    "  node (on its own rail); busbw = G min(B_nic, B_up/(G-1)). Against nccl-tests' 368-384 GB/s",
    "  (#290) the model runs at the NICs' goodput (394 GB/s): NCCL's own overheads are not",
    "  modelled. With every channel on one rotation one GPU's NIC carries all 8 channels and",
    "  every rails row fails (measured: 49.0 GB/s on the DGX run, time x 8.0 and x 5.2 on the",
    "  ideal fabric). reducescatter_ring_rails and allgather_ring_rails: one pass of n - 1 steps",
    "  of the same slices, (n-1) m w + alpha + tail (1%).",
]
