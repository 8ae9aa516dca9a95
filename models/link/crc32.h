// CRC-32 of the Ethernet frame check sequence (IEEE 802.3 clause 3.2.9): reflected polynomial
// 0xEDB88320 (0x04C11DB7 bit-reversed), register preset to 0xFFFFFFFF, result inverted. The FCS is
// sent least significant byte first, so a frame followed by its FCS has the constant residue
// crc32_update(0xFFFFFFFF, frame+fcs) == 0xDEBB20E3.
//
// Two models: the byte-at-a-time table functions (the reference), and Crc32Block, the per-cycle
// model of a W-bytes-per-cycle datapath (the RTL is rtl/crc32_stream.sv). Crc32Block ports, per
// tick() (one clock edge; outputs come from the state before the edge): in: valid, sof (the
// register restarts from all ones), eof, data[0..W-1] in wire order, nbytes (valid bytes on an eof
// beat, 1..W, from data[0]; other beats carry W); out: fcs_valid and fcs, registered, for the frame
// whose eof beat was the previous cycle (latency 1 cycle); state() is the running register.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/common/registry.h"

namespace fabricsim::link {

constexpr uint32_t kCrc32Poly = 0xEDB88320u;
constexpr uint32_t kCrc32Init = 0xFFFFFFFFu;
constexpr uint32_t kCrc32Residue = 0xDEBB20E3u;

// The register after n more bytes (no pre/post inversion).
uint32_t crc32_update(uint32_t reg, const uint8_t* data, size_t n);
// The FCS of n bytes: ~crc32_update(0xFFFFFFFF, data, n).
uint32_t crc32(const uint8_t* data, size_t n);

struct Crc32BeatIn {
  static constexpr int kMaxBytes = 64;
  bool valid = false;
  bool sof = false;
  bool eof = false;
  int nbytes = 0;  // valid bytes on an eof beat (1..W)
  uint8_t data[kMaxBytes] = {};
};

struct Crc32BeatOut {
  bool fcs_valid = false;
  uint32_t fcs = 0;
};

// The interface the model and the Verilated RTL share.
class Crc32BlockIf {
 public:
  virtual ~Crc32BlockIf() = default;
  virtual Crc32BeatOut tick(const Crc32BeatIn& in) = 0;
  virtual uint32_t state() const = 0;
  virtual int bytes_per_cycle() const = 0;
  virtual void reset() = 0;
};

class Crc32Block final : public Crc32BlockIf {
 public:
  // 1 <= bytes_per_cycle <= Crc32BeatIn::kMaxBytes (std::invalid_argument otherwise).
  explicit Crc32Block(int bytes_per_cycle);

  Crc32BeatOut tick(const Crc32BeatIn& in) override;
  uint32_t state() const override { return reg_; }
  int bytes_per_cycle() const override { return w_; }
  void reset() override;

 private:
  int w_;
  uint32_t reg_ = kCrc32Init;
  Crc32BeatOut out_;
};

// The CRC-32 datapaths a model may run its CRCs through (nic.crc_impl): "model" (Crc32Block,
// 8 bytes per cycle) and those registered at start-up (the RTL's: rtl::register_implementations).
struct Crc32Impl {
  std::function<std::unique_ptr<Crc32BlockIf>()> make;
  std::string doc;
};
class Crc32Registry {
 public:
  static constexpr const char* kModel = "model";
  Crc32Registry();
  static Crc32Registry& global();
  void add(const std::string& impl, Crc32Impl e) { impls_.add(impl, std::move(e)); }
  const Crc32Impl& at(const std::string& impl) const { return impls_.at(impl); }
  const std::vector<std::string>& names() const { return impls_.names(); }

 private:
  Registry<Crc32Impl> impls_{"CRC-32 datapath impl"};
};

// The FCS of n bytes through a datapath `b` (reset, then one beat per clock from a sof, and one
// idle clock for the registered FCS), as crc32() gives it.
uint32_t crc32_through(Crc32BlockIf& b, const uint8_t* data, size_t n);

}  // namespace fabricsim::link
