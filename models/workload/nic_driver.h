// The ranks' programs on the NICs: a WorkloadEngine (workload_engine.h) posting its messages to
// the fabric's RDMA NICs (models/nic/nic_array.h) as a MessageDriver.
//
// Not hardware: the software side of each NIC (NCCL's proxy posting work requests, polling
// completions). Rank r runs on host `host_of[r]`; a send node becomes a message of its bytes on
// QP `channel` between the two hosts, with the configured verb and class; its send completion
// finishes the send node, its delivery (the receive CQE of a write_imm or send; the last byte of
// a write) finishes the matched receive node.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/nic/nic_array.h"
#include "models/workload/exec_graph.h"
#include "models/workload/workload_engine.h"

namespace fabricsim::workload {

class NicDriver : public nic::MessageDriver, public MessageNetwork {
 public:
  NicDriver(ExecGraph graph, std::vector<int> host_of, nic::Verb verb, int tc,
            std::vector<double> slowdown = {});

  // nic::MessageDriver
  void start(nic::NicArray& nics, Time now) override;
  void completed(uint64_t id, Time t) override { engine_.on_sent(static_cast<uint32_t>(id), t); }
  void delivered(uint64_t id, Time t) override {
    engine_.on_delivered(static_cast<uint32_t>(id), t);
  }
  Time run(Time now) override {
    engine_.run(now);
    return engine_.next_event();
  }
  uint64_t total() const override { return sends_; }
  uint64_t left() const override { return engine_.unfinished(); }

  // MessageNetwork
  void post(uint32_t token, int src, int dst, uint64_t bytes, int channel, Time now) override;

  const ExecGraph& graph() const { return graph_; }
  const WorkloadEngine& engine() const { return engine_; }

 private:
  ExecGraph graph_;
  std::vector<int> host_of_;
  nic::Verb verb_;
  int tc_;
  WorkloadEngine engine_;
  nic::NicArray* nics_ = nullptr;
  uint64_t sends_ = 0;
};

}  // namespace fabricsim::workload
