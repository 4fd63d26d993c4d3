#include "noc/crossbar.hpp"

namespace gpusc::noc {

namespace {

std::vector<uint16_t> portPerNode(uint32_t nodes) {
  std::vector<uint16_t> route(nodes);
  for (uint32_t n = 0; n < nodes; ++n) route[n] = static_cast<uint16_t>(n);
  return route;
}

}  // namespace

Crossbar::Crossbar(const sc_core::sc_module_name& name, const PlatformConfig& cfg)
    : Interconnect(name, cfg, "crossbar") {
  switch_ =
      std::make_unique<Router>(kSwitchName, fabric(), nodeCount(), portPerNode(nodeCount()), noc());
  addRouter(*switch_);
  const uint32_t delay = Router::outputDelay(noc());
  for (uint32_t n = 0; n < nodeCount(); ++n) {
    NetworkInterface& nif = ni(n);
    connect(nif.injection(), switch_->input(n), 0);  // as in the mesh: the NI writes the buffer
    nif.injection().from = nodeName(n);
    nif.injection().to = kSwitchName;
    connect(switch_->output(n), nif.ejection(), delay);
    switch_->output(n).from = kSwitchName;
    switch_->output(n).to = nodeName(n);
  }
}

Crossbar::~Crossbar() = default;

}  // namespace gpusc::noc
