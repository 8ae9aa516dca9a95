// Configuration of a PCIe link between a device (the RDMA NIC) and its host's root complex, and of
// the host memory behind it.
//
// What matters for a NIC's DMA: the link's TLP byte rate (generation -> transfer rate and line
// encoding, times lanes), the bytes every TLP carries besides its payload (header, framing, LCRC;
// in Gen6 FLIT mode the per-TLP framing is gone and the flit's own overhead is in the rate), the
// largest write payload (max_payload) and read request (max_read_request) the TLPs may carry, the
// link's one-way latency and the root complex's time to turn a read request into its first
// completion. Gen5 x16: 32 GT/s x 16 x 128/130 = 63.0 GB/s per direction [I: hardware-facts.md];
// with 256 B payloads and 24 B per TLP, 57.6 GB/s of data.
#pragma once

#include <cstdint>
#include <string>

#include "models/common/units.h"
#include "models/config/config.h"

namespace fabricsim::tlm_host {

struct PcieConfig : config::Configurable {
  int64_t generation = 5;
  int64_t lanes = 16;
  Bytes max_payload;       // MPS: the largest payload of a write TLP or a read completion
  Bytes max_read_request;  // MRRS: the largest read request
  // Read completions in pieces of this many bytes, aligned to it (a root complex's read
  // completion boundary, RCB: 64 or 128 B); 0: in max_payload pieces.
  Bytes read_completion;
  int64_t header_bytes = 16;
  bool ecrc = false;
  Time latency;                // one way, device to root complex (controllers, PHY, flight)
  Time completer_latency;      // root complex: a read request's arrival to its memory access
  std::string link_overheads;  // "pcie_bench": ACK/FC DLLPs and SKP ordered sets; "none"

  void visit(config::Visitor& v) override;
  void validate(const config::Checker& c) const override;

  // Transfer rate of the whole link in bits/s (GT/s x lanes), before encoding.
  uint64_t raw_bps() const;
  // Line encoding as bytes of TLP stream per byte on the wire: 8b/10b (Gen1-2), 128b/130b
  // (Gen3-5), and for Gen6's FLIT mode the 236 TLP bytes of a 256 B flit (the rest: 6 B of data
  // link layer, 8 B CRC, 6 B FEC). Gen6's often-quoted ~121 GB/s counts the 6 data-link bytes.
  uint64_t encoding_num() const;
  uint64_t encoding_den() const;
  // Bytes a TLP takes on the link besides its payload: header (+ ECRC) and, before Gen6, the
  // framing token with its sequence number (4 B) and the LCRC (4 B).
  uint64_t tlp_overhead() const;
  // The share of the link's TLP-stream bytes left for TLPs after the data link layer's ACK and
  // flow-control DLLPs (8 B each, at the rates PCIe Base Spec 5.0 recommends for the width and
  // MPS: Tables 2-46..48, 3-7..9) and the SKP ordered sets (4 symbols in 1,538), as pcie-bench's
  // model charges them: 1 - 8/A - 8/F - 4/1538 as num / den. 1 for Gen6 (FLIT mode: DLLPs ride
  // in the flit's own bytes, already out of the rate) and with link_overheads none.
  uint64_t link_share_num() const;
  uint64_t link_share_den() const;
  // TLP bytes per second per direction after encoding and the link layer's share (56.9 GB/s for
  // Gen5 x16, MPS 256; 63.0 before the DLLPs and SKPs).
  double tlp_bytes_per_s() const;
};

struct HostMemoryConfig : config::Configurable {
  double bandwidth_gbytes = 0;  // GB/s (10^9 B/s), all accesses together
  Time latency;                 // an access's first byte after it starts

  void visit(config::Visitor& v) override;
};

}  // namespace fabricsim::tlm_host
