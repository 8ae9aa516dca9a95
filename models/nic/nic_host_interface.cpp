#include "models/nic/nic_host_interface.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "models/common/packet_port.h"

namespace fabricsim::nic {

NicHostInterface::NicHostInterface(sc_core::sc_module_name name, const WqeFetchConfig& cfg)
    : sc_core::sc_module(name), bar("bar"), dma("dma"), cfg_(cfg), fetcher_(cfg) {
  bar.register_b_transport(this, &NicHostInterface::bar_transport);
  SC_THREAD(fetch_loop);
  SC_THREAD(cqe_loop);
}

void NicHostInterface::bar_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const uint64_t a = p.get_address();
  const unsigned n = p.get_data_length();
  if (!p.is_write() || a % kDoorbellStride != 0 || (n != 4 && n != 8) ||
      p.get_byte_enable_ptr() != nullptr) {
    ++bar_errors_;
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  uint32_t producer = 0;
  for (unsigned i = 0; i < 4; ++i)
    producer |= static_cast<uint32_t>(p.get_data_ptr()[i]) << (8 * i);
  const Doorbell d{from_sc(sc_core::sc_time_stamp() + delay) + cfg_.doorbell_latency,
                   static_cast<uint32_t>(a / kDoorbellStride), producer};
  // In order of effect (calls from one link arrive in order; others are placed).
  auto it = doorbells_.end();
  while (it != doorbells_.begin() && std::prev(it)->at > d.at) --it;
  doorbells_.insert(it, d);
  work_.notify(sc_core::SC_ZERO_TIME);
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

void NicHostInterface::fetch_loop() {
  for (;;) {
    const Time now = sim_now(*this);
    while (!doorbells_.empty() && doorbells_.front().at <= now) {
      fetcher_.doorbell(doorbells_.front().qpn, doorbells_.front().producer);
      doorbells_.pop_front();
    }
    // Reads whose data has arrived, in the order they arrived.
    std::stable_sort(in_flight_.begin(), in_flight_.end(),
                     [](const InFlight& x, const InFlight& y) { return x.done < y.done; });
    size_t done = 0;
    for (; done < in_flight_.size() && in_flight_[done].done <= now; ++done) {
      InFlight& r = in_flight_[done];
      wqes_.clear();
      bad_.clear();
      fetcher_.fetched(r.f, r.bytes.data(), wqes_, bad_);
      for (const Wqe& w : wqes_)
        if (handler_) handler_(w, now);
      for (uint32_t index : bad_) {
        Cqe c;
        c.wr_id = index;  // the driver's wr_id is unreadable: the ring index instead
        c.qpn = r.f.qpn;
        c.status = Cqe::kBadWqe;
        complete(c);
      }
    }
    in_flight_.erase(in_flight_.begin(), in_flight_.begin() + static_cast<long>(done));
    while (const auto f = fetcher_.next_fetch()) {
      InFlight r;
      r.f = *f;
      r.bytes.assign(f->bytes(), 0);
      tlm::tlm_generic_payload p;
      p.set_command(tlm::TLM_READ_COMMAND);
      p.set_address(f->address);
      p.set_data_ptr(r.bytes.data());
      p.set_data_length(f->bytes());
      p.set_streaming_width(f->bytes());
      p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      dma->b_transport(p, d);
      if (!p.is_response_ok()) {
        ++dma_errors_;
        std::fill(r.bytes.begin(), r.bytes.end(), 0xff);  // decodes as bad WQEs
      }
      r.done = now + from_sc(d);
      in_flight_.push_back(std::move(r));
    }
    Time next = Time::max();
    if (!doorbells_.empty()) next = doorbells_.front().at;
    for (const InFlight& r : in_flight_) next = std::min(next, r.done);
    if (next == Time::max())
      wait(work_);
    else
      wait(to_sc(next - now), work_);
  }
}

void NicHostInterface::complete(const Cqe& c) {
  cqes_.push_back(c);
  cqe_work_.notify(sc_core::SC_ZERO_TIME);
}

void NicHostInterface::cqe_loop() {
  uint8_t buf[Cqe::kBytes];
  for (;;) {
    while (cqes_.empty()) wait(cqe_work_);
    Cqe c = cqes_.front();
    cqes_.pop_front();
    const WqeFetcher::CqSlot s = fetcher_.next_cqe(c.qpn);
    c.owner = s.owner;
    c.encode(buf);
    tlm::tlm_generic_payload p;
    p.set_command(tlm::TLM_WRITE_COMMAND);
    p.set_address(s.address);
    p.set_data_ptr(buf);
    p.set_data_length(Cqe::kBytes);
    p.set_streaming_width(Cqe::kBytes);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    dma->b_transport(p, d);
    if (!p.is_response_ok()) ++dma_errors_;
    wait(d);  // posted: the next CQE follows once this one has left
  }
}

std::vector<std::string> NicHostInterface::check_idle() const {
  std::vector<std::string> v;
  if (fetcher_.pending() > 0 || !doorbells_.empty())
    v.push_back(fmt::format("{}: {} WQEs rung for and not fetched ({} doorbells pending)", name(),
                            fetcher_.pending(), doorbells_.size()));
  if (!in_flight_.empty())
    v.push_back(fmt::format("{}: {} WQE reads in flight", name(), in_flight_.size()));
  if (!cqes_.empty()) v.push_back(fmt::format("{}: {} CQEs not written", name(), cqes_.size()));
  return v;
}

}  // namespace fabricsim::nic
