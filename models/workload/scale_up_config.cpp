#include "models/workload/scale_up_config.h"

namespace fabricsim::workload {

namespace {

struct Preset {
  const char* name;
  int64_t gpus;
  uint64_t gbps;       // per GPU, each way
  int64_t latency_ps;  // 2 x 936.25 ns
};
// docs/hardware-facts.md, "Scale-up domains": GPUs and bandwidth [V2] (NVIDIA's product pages:
// NVLink 4 900 GB/s, NVLink 5 1.8 TB/s per GPU, both directions together); the latency of every
// preset is an assumption [S] (ASTRA-sim's HGX-H100-validated network takes 936.25 ns a link,
// two links GPU to GPU through the switch).
constexpr Preset kPresets[] = {
    {"h100_nvlink4", 8, 3600, 1872500},  // 450 GB/s each way, 8 GPUs on NVSwitch 3 (HGX H100)
    {"b200_nvlink5", 8, 7200, 1872500},  // 900 GB/s each way, 8 GPUs (HGX B200)
    {"gb200_nvl72", 72, 7200, 1872500},  // 900 GB/s each way, 72 GPUs in one NVLink domain
};

const Preset* find(const std::string& name) {
  for (const Preset& p : kPresets)
    if (name == p.name) return &p;
  return nullptr;
}

}  // namespace

int64_t ScaleUpConfig::domain_gpus() const {
  const Preset* p = find(preset);
  return gpus > 0 ? gpus : p ? p->gpus : 0;
}

BitRate ScaleUpConfig::port_rate() const {
  const Preset* p = find(preset);
  return bandwidth.as_bps() > 0 ? bandwidth : p ? BitRate::gbps(p->gbps) : BitRate();
}

Time ScaleUpConfig::port_latency() const {
  const Preset* p = find(preset);
  return latency > Time() ? latency : p ? Time::ps(p->latency_ps) : Time();
}

void ScaleUpConfig::visit(config::Visitor& v) {
  v.choice("preset", preset, "none", {"none", "h100_nvlink4", "b200_nvlink5", "gb200_nvl72"},
           "A sourced scale-up system (docs/hardware-facts.md, \"Scale-up domains\"): "
           "h100_nvlink4 (8 GPUs, 450 GB/s = 3600Gbps per GPU each way), b200_nvlink5 (8 GPUs, "
           "900 GB/s = 7200Gbps), gb200_nvl72 (72 GPUs, 7200Gbps); each with latency 1872.5ns "
           "(assumed). none (default) with gpus 0: no scale-up domain, every GPU talks through "
           "its NIC.");
  v.param("gpus", gpus, 0, 0, 4096, "GPUs",
          "GPUs per domain (hosts h and h' share one when h / gpus = h' / gpus: whole servers "
          "of topology.gpus_per_server on rail topologies); 0: the preset's.");
  v.param("bandwidth", bandwidth, BitRate(), BitRate(), BitRate::gbps(100000),
          "Each GPU's scale-up port rate, each way (GPU to switch and switch to GPU); 0: the "
          "preset's. Bytes moved, not line coding: set it to what the GPUs achieve to model "
          "protocol overhead.");
  v.param("latency", latency, Time(), Time(), Time::us(1000),
          "From a message's last byte leaving its GPU to its delivery at the other GPU (ports, "
          "switch and the receiver's completion); 0: the preset's.");
  v.param("reduce", reduce, false,
          "Whether the scale-up switch reduces and multicasts (NVLink SHARP, NCCL's NVLS): "
          "collective allreduce_nvls then runs inside a domain, each GPU's port carrying "
          "(1 + 1/G) S each way instead of the ring's 2 (G - 1)/G S (docs/architecture.md, "
          "\"Scale-up domain\"). Off by default.");
  v.param("reduce_bandwidth", reduce_bandwidth, BitRate(), BitRate(), BitRate::gbps(1000000),
          "The switch's reduction engine: reduced bytes per second it produces, shared by the "
          "domain's reductions (an assumption to sweep: no public figure); 0: only the ports "
          "limit. Needs reduce.");
}

void ScaleUpConfig::validate(const config::Checker& c) const {
  c.require(!reduce || on(), "reduce", "no scale-up domain to reduce in: give a preset or gpus");
  c.require(reduce_bandwidth.as_bps() == 0 || reduce, "reduce_bandwidth",
            "the reduction engine's rate needs reduce: true");
  if (!on()) return;
  c.require(domain_gpus() >= 2, "gpus", "a scale-up domain needs 2 or more GPUs");
  c.require(port_rate().as_bps() > 0, "bandwidth",
            "no preset gives it: state each GPU's scale-up rate (e.g. 3600Gbps)");
  c.require(port_latency() > Time(), "latency",
            "no preset gives it: state the scale-up latency (e.g. 1us)");
}

}  // namespace fabricsim::workload
