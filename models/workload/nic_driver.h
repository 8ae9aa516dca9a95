// The ranks' programs on the NICs: a WorkloadEngine (workload_engine.h) posting its messages to
// the fabric's RDMA NICs (models/nic/nic_array.h) as a MessageDriver.
//
// Not hardware: the software side of each NIC (NCCL's proxy posting work requests, polling
// completions). Rank r runs on host `host_of[r]`; a send node becomes a message of its bytes on
// QP `channel` between the two hosts, with the configured verb and class; its send completion
// finishes the send node, its delivery (the receive CQE of a write_imm or send; the last byte of
// a write) finishes the matched receive node.
//
// With scale-up domains (scale_up.h), a message between two GPUs of one domain takes the domain's
// switch instead of the NICs: the driver runs that network at the times it asks for, beside the
// NICs' notices. Results split the messages, bytes and busy time by network.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/nic/nic_array.h"
#include "models/workload/exec_graph.h"
#include "models/workload/scale_up.h"
#include "models/workload/workload_engine.h"

namespace fabricsim::workload {

class NicDriver : public nic::MessageDriver, public MessageNetwork {
 public:
  // `up`: the scale-up domains over the hosts (null: none; every message takes the NICs).
  NicDriver(ExecGraph graph, std::vector<int> host_of, nic::Verb verb, int tc,
            std::vector<double> slowdown = {}, std::unique_ptr<ScaleUpNetwork> up = nullptr);

  // nic::MessageDriver
  void start(nic::NicArray& nics, Time now) override;
  void completed(uint64_t id, Time t) override;
  void delivered(uint64_t id, Time t) override {
    engine_.on_delivered(static_cast<uint32_t>(id), t);
  }
  Time run(Time now) override;
  // The messages the NICs carry (those between two scale-up domains, or all without them).
  uint64_t total() const override { return nic_sends_; }
  uint64_t left() const override { return engine_.unfinished(); }
  // A message's id is its send node's index (post).
  uint64_t first_unposted() const override {
    const uint32_t n = engine_.first_unstarted();
    return n == graph_.size() ? UINT64_MAX : n;
  }

  // MessageNetwork
  void post(uint32_t token, int src, int dst, uint64_t bytes, int channel, Time now) override;

  const ExecGraph& graph() const { return graph_; }
  const WorkloadEngine& engine() const { return engine_; }
  const ScaleUpNetwork* scale_up() const { return up_.get(); }
  // Whether rank a's and rank b's messages take the scale-up switch.
  bool scale_up_pair(int a, int b) const {
    return up_ && up_->same_domain(host_of_[a], host_of_[b]);
  }
  // The NICs' share, for results: messages and bytes posted, time with one in flight (from its
  // posting to its send completion).
  uint64_t nic_messages() const { return nic_posted_; }
  uint64_t nic_bytes() const { return nic_bytes_; }
  Time nic_active() const { return nic_active_; }

 private:
  ExecGraph graph_;
  std::vector<int> host_of_;
  nic::Verb verb_;
  int tc_;
  WorkloadEngine engine_;
  nic::NicArray* nics_ = nullptr;
  std::unique_ptr<ScaleUpNetwork> up_;
  uint64_t nic_sends_ = 0, nic_posted_ = 0, nic_bytes_ = 0, nic_in_flight_ = 0;
  Time nic_active_, nic_since_;
};

}  // namespace fabricsim::workload
