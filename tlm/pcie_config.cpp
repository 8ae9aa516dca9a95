#include "tlm/pcie_config.h"

#include <string>

namespace fabricsim::tlm_host {

namespace {
bool power_of_two(uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}
}  // namespace

void PcieConfig::visit(config::Visitor& v) {
  v.param("generation", generation, 5, 1, 6, "",
          "PCIe generation: 1-2 (2.5, 5 GT/s, 8b/10b), 3-5 (8, 16, 32 GT/s, 128b/130b), 6 (64 "
          "GT/s PAM4, FLIT mode). ConnectX-7: Gen5 x16; 800G NICs: Gen6 x16 [V2].");
  v.param("lanes", lanes, 16, 1, 32, "lanes", "Link width (x1, x2, x4, x8, x16, x32).");
  v.param("max_payload", max_payload, Bytes(256), Bytes(128), Bytes(4096),
          "Max payload size (MPS) of a write TLP or a read completion: 128-4096 B, a power of two "
          "(256 B is the usual server setting [S]).");
  v.param("max_read_request", max_read_request, Bytes(4096), Bytes(128), Bytes(4096),
          "Max read request size (MRRS): a DMA read is split into requests of at most this many "
          "bytes, a power of two [S].");
  v.param("read_completion", read_completion, Bytes(0), Bytes(0), Bytes(4096),
          "Size of the root complex's read completions: 0 for max_payload pieces (what current "
          "server chipsets return [S]); 64 or 128 B for completions cut at the read completion "
          "boundary (RCB), as pcie-bench notes on several older chipsets [V]: at Gen5 x16 and "
          "MPS 256, 49.2 GB/s of read data at 128 B and 43.3 GB/s at 64 B, below a 400G NIC's "
          "need (docs/hardware-facts.md).");
  v.param("header_bytes", header_bytes, 16, 12, 16, "B",
          "TLP header: 12 (3 DW, 32-bit addresses) or 16 (4 DW, 64-bit addresses).");
  v.param("ecrc", ecrc, false, "End-to-end CRC: 4 B more per TLP.");
  v.param("latency", latency, Time::ns(100), Time(), Time::us(100),
          "One-way latency device <-> root complex (both controllers, PHYs, flight); not "
          "published per product, sweep it [S].");
  v.param("completer_latency", completer_latency, Time::ns(200), Time(), Time::us(100),
          "Root complex: from a read request's arrival to the start of its memory access "
          "(address translation, coherence) [S]. Read round trips of 0.5-1 us are typical.");
  v.choice("link_overheads", link_overheads, "pcie_bench", {"pcie_bench", "none"},
           "The data link layer's share of the link: pcie_bench (default: ACK and flow-control "
           "DLLPs of 8 B at the rates PCIe Base Spec 5.0 recommends for the width and MPS, and "
           "a 4-symbol SKP ordered set every 1,538, as pcie-bench's model charges them: Gen5 "
           "x16 at MPS 256 keeps 90.2%, 56.9 of 63.0 GB/s; nothing more in Gen6's FLIT mode) "
           "[V]; none (TLPs only, as before 2026-11-29).");
}

void PcieConfig::validate(const config::Checker& c) const {
  c.require(power_of_two(static_cast<uint64_t>(lanes)), "lanes",
            std::to_string(lanes) + " is not a PCIe link width (1, 2, 4, 8, 16 or 32)");
  c.require(power_of_two(max_payload.count()), "max_payload",
            max_payload.str() + " is not a power of two");
  c.require(power_of_two(max_read_request.count()), "max_read_request",
            max_read_request.str() + " is not a power of two");
  c.require(read_completion.count() == 0 || (power_of_two(read_completion.count()) &&
                                             read_completion.count() >= 64 &&
                                             read_completion <= max_payload),
            "read_completion",
            read_completion.str() + " is not 0 or a power of two from 64 B to max_payload");
  c.require(header_bytes == 12 || header_bytes == 16, "header_bytes",
            std::to_string(header_bytes) + " is neither 12 (3 DW) nor 16 (4 DW)");
}

uint64_t PcieConfig::raw_bps() const {
  static constexpr uint64_t kMtps[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};
  return kMtps[generation] * 1000000ull * static_cast<uint64_t>(lanes);
}

uint64_t PcieConfig::encoding_num() const {
  return generation <= 2 ? 8 : generation <= 5 ? 128 : 236;
}
uint64_t PcieConfig::encoding_den() const {
  return generation <= 2 ? 10 : generation <= 5 ? 130 : 256;
}

namespace {

// The spec's recommended ACK latency limit and flow-control update interval, in symbol times,
// by generation group (Gen1, Gen2, Gen3-5), width (x1..x32) and MPS (128..4096 B): PCIe Base Spec
// 5.0 Tables 3-7..9 and 2-46..48, as pcie-bench's model/pcie.py lists them. The two tables agree
// but for two Gen1/Gen2 x32 entries.
constexpr uint16_t kAckLimit[3][6][6] = {{{237, 416, 559, 1071, 2095, 4143},
                                          {128, 217, 289, 545, 1057, 2081},
                                          {73, 118, 154, 282, 538, 1050},
                                          {67, 107, 86, 150, 278, 534},
                                          {48, 72, 86, 150, 278, 534},
                                          {33, 45, 52, 84, 148, 276}},
                                         {{288, 467, 610, 1122, 2146, 4194},
                                          {179, 268, 340, 596, 1108, 2132},
                                          {124, 169, 205, 333, 589, 1101},
                                          {118, 158, 137, 201, 329, 585},
                                          {99, 123, 137, 201, 329, 585},
                                          {84, 96, 103, 135, 199, 237}},
                                         {{333, 512, 655, 1167, 2191, 4239},
                                          {224, 313, 385, 641, 1153, 2177},
                                          {169, 214, 250, 378, 634, 1146},
                                          {163, 203, 182, 246, 374, 630},
                                          {144, 168, 182, 246, 374, 630},
                                          {129, 141, 148, 180, 244, 372}}};

uint64_t log2_index(uint64_t v, uint64_t first) {
  uint64_t i = 0;
  while ((first << i) < v) ++i;
  return i;
}

struct LinkShare {
  uint64_t num, den;
};

LinkShare link_share(const PcieConfig& c) {
  if (c.link_overheads == "none" || c.generation >= 6) return {1, 1};
  const uint64_t g = c.generation <= 1 ? 0 : c.generation == 2 ? 1 : 2;
  const uint64_t w = log2_index(static_cast<uint64_t>(c.lanes), 1);
  const uint64_t m = log2_index(c.max_payload.count(), 128);
  const uint64_t ack = kAckLimit[g][w][m];
  uint64_t fc = ack;  // the flow-control table's two entries that differ
  if (g == 0 && w == 5 && m == 4) fc = 248;
  if (g == 1 && w == 5 && m == 5) fc = 327;
  constexpr uint64_t kDllp = 8, kSkp = 4, kSkpInterval = 1538;
  const uint64_t den = ack * fc * kSkpInterval;
  return {den - kDllp * fc * kSkpInterval - kDllp * ack * kSkpInterval - kSkp * ack * fc, den};
}

}  // namespace

uint64_t PcieConfig::link_share_num() const {
  return link_share(*this).num;
}
uint64_t PcieConfig::link_share_den() const {
  return link_share(*this).den;
}

uint64_t PcieConfig::tlp_overhead() const {
  return static_cast<uint64_t>(header_bytes) + (ecrc ? 4 : 0) + (generation <= 5 ? 8 : 0);
}

double PcieConfig::tlp_bytes_per_s() const {
  return static_cast<double>(raw_bps()) * static_cast<double>(encoding_num()) /
         static_cast<double>(encoding_den()) / 8.0 * static_cast<double>(link_share_num()) /
         static_cast<double>(link_share_den());
}

void HostMemoryConfig::visit(config::Visitor& v) {
  v.param("bandwidth", bandwidth_gbytes, 300.0, 0.001, 1e6, "GB/s",
          "Bandwidth of host memory for the device's accesses (8 channels of DDR5-4800: 307 GB/s "
          "peak [I]).");
  v.param("latency", latency, Time::ns(100), Time(), Time::us(100),
          "From an access's start to its first byte (DRAM, loaded) [S].");
}

}  // namespace fabricsim::tlm_host
