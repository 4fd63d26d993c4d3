#include "noc/mesh.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::noc {

namespace {

uint32_t ceilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

}  // namespace

MeshLayout meshLayout(const PlatformConfig& cfg) {
  const NocConfig& noc = cfg.noc;
  const uint32_t sms = cfg.gpu.num_sms,
                 slices = cfg.memory.partitions * cfg.l2.slices_per_partition;
  const uint32_t nodes = sms + slices;
  MeshLayout l;
  l.columns = noc.mesh_columns;
  l.rows = noc.mesh_rows;
  if (l.columns == 0 && l.rows == 0) {
    l.columns = 1;
    while (l.columns * l.columns < nodes) ++l.columns;
    l.rows = l.columns;
  } else if (l.columns == 0) {
    l.columns = ceilDiv(nodes, l.rows);
  } else if (l.rows == 0) {
    l.rows = ceilDiv(nodes, l.columns);
  }
  if (uint64_t(l.columns) * l.rows < nodes)
    throw InputError(fmt::format(
        "noc.mesh_columns: a {}x{} mesh (noc.mesh_columns x noc.mesh_rows) has {} routers for {} "
        "nodes ({} SMs and {} L2 slices)",
        l.columns, l.rows, l.columns * l.rows, nodes, sms, slices));

  const uint32_t routers = l.columns * l.rows;
  constexpr uint32_t kFree = ~0u;
  std::vector<uint32_t> owner(routers, kFree);  // node on each router
  l.x.assign(nodes, 0);
  l.y.assign(nodes, 0);
  auto keyOf = [&](uint32_t node) {
    return node < sms ? fmt::format("noc.sm_positions[{}]", node)
                      : fmt::format("noc.mc_positions[{}]", node - sms);
  };
  auto place = [&](const std::vector<MeshPosition>& positions, const char* key, uint32_t count,
                   const char* what, uint32_t firstNode) {
    if (positions.empty()) return;
    if (positions.size() != count)
      throw InputError(fmt::format("{}: {} positions for {} {}; give one per {} or none", key,
                                   positions.size(), count, what, what));
    for (uint32_t i = 0; i < count; ++i) {
      const MeshPosition& p = positions[i];
      const uint32_t node = firstNode + i;
      if (p.x >= l.columns || p.y >= l.rows)
        throw InputError(fmt::format(
            "{}: ({}, {}) is outside the {}x{} mesh (x < {}, y < {}; noc.mesh_columns and "
            "noc.mesh_rows give its size)",
            keyOf(node), p.x, p.y, l.columns, l.rows, l.columns, l.rows));
      uint32_t& o = owner[p.y * l.columns + p.x];
      if (o != kFree)
        throw InputError(
            fmt::format("{}: router ({}, {}) already holds {}", keyOf(node), p.x, p.y, keyOf(o)));
      o = node;
      l.x[node] = p.x;
      l.y[node] = p.y;
    }
  };
  place(noc.sm_positions, "noc.sm_positions", sms, "SMs", 0);
  place(noc.mc_positions, "noc.mc_positions", slices, "L2 slices", sms);

  auto put = [&](uint32_t node, uint32_t router) {
    owner[router] = node;
    l.x[node] = router % l.columns;
    l.y[node] = router / l.columns;
  };
  if (noc.mc_positions.empty()) {
    // Evenly spaced over the free squares of one checkerboard colour, then of the other.
    uint32_t next = 0;
    for (uint32_t colour = 1; colour <= 2 && next < slices; ++colour) {
      std::vector<uint32_t> squares;
      for (uint32_t r = 0; r < routers; ++r)
        if (owner[r] == kFree && (r % l.columns + r / l.columns) % 2 == colour % 2)
          squares.push_back(r);
      const uint32_t want = std::min<uint32_t>(slices - next, uint32_t(squares.size()));
      for (uint32_t i = 0; i < want; ++i)
        put(sms + next + i, squares[(uint64_t(2 * i + 1) * squares.size()) / (2 * want)]);
      next += want;
    }
  }
  if (noc.sm_positions.empty()) {
    uint32_t r = 0;
    for (uint32_t sm = 0; sm < sms; ++sm) {
      while (owner[r] != kFree) ++r;
      put(sm, r);
    }
  }
  return l;
}

Mesh::Mesh(const sc_core::sc_module_name& name, const PlatformConfig& cfg)
    : Interconnect(name, cfg, "mesh"), layout_(meshLayout(cfg)) {
  const uint32_t cols = layout_.columns, rows = layout_.rows;
  for (uint32_t y = 0; y < rows; ++y)
    for (uint32_t x = 0; x < cols; ++x) {
      routers_.push_back(std::make_unique<MeshRouter>(fmt::format("router_{}_{}", x, y).c_str(),
                                                      fabric(), x, y, layout_.x, layout_.y, noc()));
      addRouter(*routers_.back());
    }
  const uint32_t delay = Router::outputDelay(noc());
  auto at = [&](uint32_t x, uint32_t y) -> MeshRouter& { return *routers_[y * cols + x]; };
  auto link = [&](uint32_t x, uint32_t y, uint32_t port, uint32_t nx, uint32_t ny,
                  uint32_t inPort) {
    OutputChannel& out = at(x, y).output(port);
    connect(out, at(nx, ny).input(inPort), delay);
    out.from = routerName(x, y);
    out.to = routerName(nx, ny);
  };
  for (uint32_t y = 0; y < rows; ++y)
    for (uint32_t x = 0; x < cols; ++x) {
      if (y > 0) link(x, y, MeshRouter::kNorth, x, y - 1, MeshRouter::kSouth);
      if (x + 1 < cols) link(x, y, MeshRouter::kEast, x + 1, y, MeshRouter::kWest);
      if (y + 1 < rows) link(x, y, MeshRouter::kSouth, x, y + 1, MeshRouter::kNorth);
      if (x > 0) link(x, y, MeshRouter::kWest, x - 1, y, MeshRouter::kEast);
    }
  for (uint32_t n = 0; n < nodeCount(); ++n) {
    MeshRouter& r = at(layout_.x[n], layout_.y[n]);
    NetworkInterface& nif = ni(n);
    // The NI writes into the router's local input buffer: its flits are there the cycle they
    // leave (the packetisation cycle is the NI's fixed cost).
    connect(nif.injection(), r.input(MeshRouter::kLocal), 0);
    nif.injection().from = nodeName(n);
    nif.injection().to = routerName(r.x(), r.y());
    connect(r.output(MeshRouter::kLocal), nif.ejection(), delay);
    r.output(MeshRouter::kLocal).from = routerName(r.x(), r.y());
    r.output(MeshRouter::kLocal).to = nodeName(n);
  }
}

Mesh::~Mesh() = default;

std::string Mesh::routerName(uint32_t x, uint32_t y) { return fmt::format("router({},{})", x, y); }

}  // namespace gpusc::noc
