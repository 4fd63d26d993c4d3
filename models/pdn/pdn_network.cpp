#include "pdn/pdn_network.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>

#include <fmt/format.h>
#include <Eigen/Eigenvalues>
#include <unsupported/Eigen/MatrixFunctions>

#include "common/error.hpp"

namespace gpusc::pdn {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kMilli = 1e-3, kPico = 1e-12;

// The elements of one resonance, from its design frequency and peak impedance.
struct Stage {
  double l = 0, c = 0, r = 0, esr = 0, z0 = 0;
};

Stage deriveStage(double hz, double zPeak, double q, double seriesOhm) {
  Stage s;
  s.z0 = zPeak / q;
  s.l = s.z0 / (2 * kPi * hz);
  s.c = 1.0 / (2 * kPi * hz * s.z0);
  s.r = seriesOhm;
  s.esr = s.z0 / q - seriesOhm;
  return s;
}

// The links of the on-die grid between neighbouring nodes (the first rows x cols of c's nodes).
void addGridLinks(const PdnGridConfig& g, PdnCircuit& c) {
  const double lr = g.link_resistance_mohm * kMilli, ll = g.link_inductance_ph * kPico;
  for (uint32_t row = 0; row < g.rows; ++row)
    for (uint32_t col = 0; col < g.cols; ++col) {
      const int32_t k = int32_t(row * g.cols + col);
      if (col + 1 < g.cols) c.branches.push_back({k, k + 1, lr, ll});
      if (row + 1 < g.rows) c.branches.push_back({k, k + int32_t(g.cols), lr, ll});
    }
}

// The GPU's network: package stage, one bump branch per grid node, grid links.
PdnCircuit gridCircuit(const PdnGridConfig& g, const Stage& first, const Stage& second,
                       const std::vector<uint32_t>& smNodes, const std::vector<double>& uncore) {
  PdnCircuit c;
  c.rows = g.rows;
  c.cols = g.cols;
  const uint32_t n = g.rows * g.cols;
  const int32_t pkg = int32_t(n);  // the package node follows the die nodes
  for (uint32_t k = 0; k < n; ++k) c.nodes.push_back({first.c / n, first.esr * n});
  c.nodes.push_back({second.c, second.esr});
  c.branches.push_back({-1, pkg, second.r, second.l});
  for (uint32_t k = 0; k < n; ++k)
    c.branches.push_back({pkg, int32_t(k), first.r * n, first.l * n});
  addGridLinks(g, c);
  c.smNodes = smNodes;
  c.uncoreShare = uncore;
  if (!c.uncoreShare.empty()) c.uncoreShare.push_back(0.0);  // none at the package node
  return c;
}

// The network by its elements (PdnElementsConfig), scaled and with the package variant applied:
// a variant that doubles a resonance's impedance doubles the R and L and halves the C of the
// elements that ring in it (first order: bumps, package decap's ESL, die decap; second order:
// package series path and decap), which keeps its frequency.
PdnCircuit elementsCircuit(const PdnGridConfig& g, const PdnElementsConfig& e, double first,
                           double second, const std::vector<uint32_t>& smNodes,
                           const std::vector<double>& uncore) {
  const double s = e.scale;
  const double r = kMilli / s, l = kPico / s, uf = 1e-6 * s, nf = 1e-9 * s;
  PdnCircuit c;
  c.rows = g.rows;
  c.cols = g.cols;
  const uint32_t n = g.rows * g.cols;
  // Nodes: the die's n, then the board, the package node and the package decap's inner node.
  const auto board = int32_t(n), pkg = int32_t(n + 1), decap = int32_t(n + 2);
  for (uint32_t k = 0; k < n; ++k)
    c.nodes.push_back({e.die_capacitance_nf * nf / first / n, e.die_esr_mohm * r * first * n});
  c.nodes.push_back({e.board_capacitance_uf * uf, e.board_esr_mohm * r});
  c.nodes.push_back({e.package_plane_capacitance_nf * nf, 0.0});
  c.nodes.push_back({e.package_capacitance_uf * uf / second, 0.0});
  c.branches.push_back({-1, board, e.board_resistance_mohm * r, e.board_inductance_ph * l});
  c.branches.push_back(
      {board, pkg, e.package_resistance_mohm * r * second, e.package_inductance_ph * l * second});
  c.branches.push_back({pkg, decap, e.package_esr_mohm * r * second, e.package_esl_ph * l * first});
  for (uint32_t k = 0; k < n; ++k)
    c.branches.push_back({pkg, int32_t(k), e.bump_resistance_mohm * r * first * n,
                          e.bump_inductance_ph * l * first * n});
  addGridLinks(g, c);
  c.smNodes = smNodes;
  c.uncoreShare = uncore;
  if (!c.uncoreShare.empty()) c.uncoreShare.insert(c.uncoreShare.end(), 3, 0.0);
  return c;
}

// The regulator of pdn.regulator on circuit `c`, whose package node is `pkg`: the sense weights
// (the package node, or every SM's node evenly) and the loop's bandwidth; none leaves the ideal
// source.
nlohmann::json regulatorJson(const PdnRegulatorConfig& r) {
  nlohmann::json j{{"sense", r.sense}};
  if (r.sense != "none") j["bandwidth_khz"] = r.bandwidth_khz;
  return j;
}

void applyRegulator(const PdnRegulatorConfig& r, int32_t pkg, PdnCircuit& c) {
  if (r.sense == "none") return;
  c.regulatorHz = r.bandwidth_khz * 1e3;
  c.sense.assign(c.nodes.size(), 0.0);
  if (r.sense == "package") {
    c.sense[size_t(pkg)] = 1.0;
  } else {
    for (uint32_t v : c.smNodes) c.sense[v] += 1.0 / double(c.smNodes.size());
  }
}

}  // namespace

// Continuous model in energy-scaled coordinates (x = [sqrt(C) e; sqrt(L) i]): the lossless part
// of A is then skew-symmetric, which keeps the matrix exponential and the solves well conditioned.
struct PdnNetwork::Model {
  Eigen::MatrixXd A, B, Cn, Dn;
};

PdnNetwork::Model PdnNetwork::buildModel(const PdnCircuit& c) {
  const int n = int(c.nodes.size()), b = int(c.branches.size()), s = int(c.smNodes.size());
  if (n == 0 || s == 0) throw InputError("pdn circuit: needs at least one node and one SM");
  for (int k = 0; k < n; ++k)
    if (!(c.nodes[k].c > 0) || !(c.nodes[k].esr >= 0))
      throw InputError(
          fmt::format("pdn circuit: node {} needs C > 0 and ESR >= 0 (C = {}, ESR = {})", k,
                      c.nodes[k].c, c.nodes[k].esr));
  // Every node needs a DC path to the regulator, or the operating point is not defined.
  std::vector<int> parent(size_t(n) + 1);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int v) {
    while (parent[size_t(v)] != v) v = parent[size_t(v)] = parent[size_t(parent[size_t(v)])];
    return v;
  };
  for (int j = 0; j < b; ++j) {
    const auto& br = c.branches[size_t(j)];
    if (br.from < -1 || br.from >= n || br.to < 0 || br.to >= n || br.from == br.to)
      throw InputError(fmt::format("pdn circuit: branch {} connects {} to {}", j, br.from, br.to));
    if (!(br.l > 0) || !(br.r >= 0))
      throw InputError(fmt::format("pdn circuit: branch {} needs L > 0 and R >= 0", j));
    parent[size_t(find(br.from < 0 ? n : br.from))] = find(br.to);
  }
  for (int k = 0; k < n; ++k)
    if (find(k) != find(n))
      throw InputError(fmt::format("pdn circuit: node {} has no path to the regulator", k));
  for (uint32_t sm : c.smNodes)
    if (sm >= uint32_t(n)) throw InputError(fmt::format("pdn circuit: SM at node {}", sm));
  if (!c.uncoreShare.empty() && c.uncoreShare.size() != size_t(n))
    throw InputError("pdn circuit: uncoreShare needs one value per node");
  if (c.rows * c.cols > uint32_t(n)) throw InputError("pdn circuit: rows x cols exceeds the nodes");

  const bool regulated = c.regulatorHz > 0;
  if (regulated && c.sense.size() != size_t(n))
    throw InputError("pdn circuit: a regulator needs one sense weight per node");
  const int ny = regulated ? 1 : 0;  // the regulator's state y follows the branch currents
  const int nu = s + 1;
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n, b), M = Eigen::MatrixXd::Zero(n, nu);
  for (int j = 0; j < b; ++j) {
    if (c.branches[size_t(j)].from >= 0) K(c.branches[size_t(j)].from, j) += 1.0;
    K(c.branches[size_t(j)].to, j) -= 1.0;
  }
  for (int k = 0; k < s; ++k) M(c.smNodes[size_t(k)], k) += 1.0;
  for (size_t k = 0; k < c.uncoreShare.size(); ++k) M(Eigen::Index(k), s) = c.uncoreShare[k];
  Eigen::VectorXd esr(n), sc(n), sl(b), rb(b);
  for (int k = 0; k < n; ++k) {
    esr(k) = c.nodes[size_t(k)].esr;
    sc(k) = std::sqrt(c.nodes[size_t(k)].c);
  }
  for (int j = 0; j < b; ++j) {
    sl(j) = std::sqrt(c.branches[size_t(j)].l);
    rb(j) = c.branches[size_t(j)].r;
  }
  // Physical coordinates (e: decap drops, i: branch currents, q = M u + K i: current into the
  // decaps):  C de/dt = q;  d = e + ESR q;  L di/dt = d_to - d_from - R i = -K^T d - R i.
  // Scaled: xe = sqrt(C) e, xi = sqrt(L) i.
  const Eigen::MatrixXd Ks = sc.cwiseInverse().asDiagonal() * K * sl.cwiseInverse().asDiagonal();
  const Eigen::MatrixXd EK = esr.asDiagonal() * K;
  Model m;
  m.A = Eigen::MatrixXd::Zero(n + b + ny, n + b + ny);
  m.B = Eigen::MatrixXd::Zero(n + b + ny, nu);
  m.A.block(0, n, n, b) = Ks;
  m.A.block(n, 0, b, n) = -Ks.transpose();
  Eigen::MatrixXd rtot = K.transpose() * EK;
  rtot.diagonal() += rb;
  m.A.block(n, n, b, b) = -(sl.cwiseInverse().asDiagonal() * rtot * sl.cwiseInverse().asDiagonal());
  m.B.topRows(n) = sc.cwiseInverse().asDiagonal() * M;
  m.B.middleRows(n, b) = -(sl.cwiseInverse().asDiagonal() * K.transpose() * esr.asDiagonal() * M);
  m.Cn = Eigen::MatrixXd::Zero(n, n + b + ny);
  m.Cn.leftCols(n) = sc.cwiseInverse().asDiagonal();
  m.Cn.middleCols(n, b) = EK * sl.cwiseInverse().asDiagonal();
  m.Dn = esr.asDiagonal() * M;
  if (regulated) {
    // The regulator raises its output by y (a drop of -y at the source), which drives every
    // branch from it: L di/dt = y + d_to - R i. It integrates the sensed drop:
    // dy/dt = 2 pi f (w' d), d = Cn x + Dn u.
    for (int j = 0; j < b; ++j)
      if (c.branches[size_t(j)].from < 0) m.A(n + j, n + b) = 1.0 / sl(j);
    const Eigen::Map<const Eigen::VectorXd> w(c.sense.data(), n);
    const double gain = 2 * kPi * c.regulatorHz;
    m.A.row(n + b) = gain * (w.transpose() * m.Cn);
    m.B.row(n + b) = gain * (w.transpose() * m.Dn);
    const Eigen::VectorXcd poles = m.A.eigenvalues();
    for (Eigen::Index k = 0; k < poles.size(); ++k)
      if (!(poles(k).real() < 0))
        throw InputError(fmt::format(
            "pdn.regulator.bandwidth_khz: a {} kHz regulator loop is unstable on this network (a "
            "mode at {:.4g} MHz grows); lower the bandwidth well below the second-order "
            "resonance",
            c.regulatorHz / 1e3, std::abs(poles(k).imag()) / (2 * kPi) / 1e6));
  }
  return m;
}

std::complex<double> PdnNetwork::response(const Model& m, double hz, const Eigen::VectorXcd& u,
                                          const Eigen::VectorXcd& w) {
  Eigen::MatrixXcd sA = -m.A.cast<std::complex<double>>();
  sA.diagonal().array() += std::complex<double>(0.0, 2 * kPi * hz);
  const Eigen::VectorXcd bu = m.B.cast<std::complex<double>>() * u;
  const Eigen::VectorXcd x = sA.partialPivLu().solve(bu);
  const Eigen::VectorXcd d =
      m.Cn.cast<std::complex<double>>() * x + m.Dn.cast<std::complex<double>>() * u;
  return w.dot(d);  // w is real: dot() conjugates it harmlessly
}

namespace {

// A response w' (C (sI - A)^-1 B + D) u in modal form, sum_k coef_k / (s - lambda_k) + d: one
// eigendecomposition, then O(states) per frequency (the peak search evaluates hundreds).
struct Modal {
  Eigen::VectorXcd lambda, coef;
  std::complex<double> d;
  std::complex<double> at(double hz) const {
    const std::complex<double> s(0.0, 2 * kPi * hz);
    std::complex<double> z = d;
    for (Eigen::Index k = 0; k < lambda.size(); ++k) z += coef(k) / (s - lambda(k));
    return z;
  }
};

Modal modal(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const Eigen::MatrixXd& C,
            const Eigen::MatrixXd& D, const Eigen::VectorXcd& u, const Eigen::VectorXcd& w) {
  using Cd = std::complex<double>;
  const Eigen::EigenSolver<Eigen::MatrixXd> es(A);
  if (es.info() != Eigen::Success) throw InternalError("PdnNetwork: eigendecomposition failed");
  const Eigen::MatrixXcd V = es.eigenvectors();
  const Eigen::VectorXcd r = V.partialPivLu().solve(B.cast<Cd>() * u);
  const Eigen::RowVectorXcd l = w.transpose() * C.cast<Cd>() * V;
  Modal m;
  m.lambda = es.eigenvalues();
  m.coef = l.transpose().cwiseProduct(r);
  m.d = (w.transpose() * (D.cast<Cd>() * u))(0);
  return m;
}

// Golden-section search for the maximum of f over [lo, hi] (log-frequency axis).
template <class F>
double goldenMax(F f, double lo, double hi, double tol) {
  const double g = 0.5 * (std::sqrt(5.0) - 1.0);
  double a = lo, bb = hi;
  double c = bb - g * (bb - a), d = a + g * (bb - a);
  double fc = f(c), fd = f(d);
  while (bb - a > tol) {
    if (fc > fd) {
      bb = d;
      d = c;
      fd = fc;
      c = bb - g * (bb - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (bb - a);
      fd = f(d);
    }
  }
  return 0.5 * (a + bb);
}

struct DieProbe {
  Eigen::VectorXcd u, w;
};

DieProbe dieProbe(const PdnCircuit& c) {
  const size_t s = c.smNodes.size();
  DieProbe p;
  p.u = Eigen::VectorXcd::Zero(Eigen::Index(s + 1));
  p.w = Eigen::VectorXcd::Zero(Eigen::Index(c.nodes.size()));
  for (size_t k = 0; k < s; ++k) {
    p.u(Eigen::Index(k)) = 1.0 / double(s);
    p.w(Eigen::Index(c.smNodes[k])) += 1.0 / double(s);
  }
  return p;
}

}  // namespace

PdnNetwork::PdnNetwork(const PdnCircuit& circuit, double coreClockHz)
    : circuit_(circuit), clockHz_(coreClockHz) {
  if (!(coreClockHz > 0)) throw InputError("pdn: the core clock must be positive");
  discretise(buildModel(circuit_));
  elements_ = nlohmann::json::object();
  elements_["nodes"] = circuit_.nodes.size();
  elements_["branches"] = circuit_.branches.size();
  elements_["states"] = nx_;
}

PdnNetwork::PdnNetwork(const PdnConfig& cfg, double coreClockHz, uint32_t numSms)
    : clockHz_(coreClockHz) {
  if (!(coreClockHz > 0)) throw InputError("pdn: the core clock must be positive");
  if (numSms == 0) throw InputError("pdn: the network needs at least one SM");
  PdnGridConfig g = cfg.grid;
  std::tie(g.rows, g.cols) = g.resolvedShape(numSms);
  const uint32_t nodes = g.rows * g.cols;
  if (numSms > nodes)
    throw InputError(
        fmt::format("pdn.grid: {} SMs do not fit the {}x{} grid ({} nodes); raise pdn.grid.rows or "
                    "pdn.grid.cols",
                    numSms, g.rows, g.cols, nodes));
  std::vector<uint32_t> smNodes;
  if (g.sm_nodes.empty()) {
    for (uint32_t k = 0; k < numSms; ++k) smNodes.push_back(k);
  } else {
    if (g.sm_nodes.size() != numSms)
      throw InputError(
          fmt::format("pdn.grid.sm_nodes: lists {} nodes for {} SMs", g.sm_nodes.size(), numSms));
    std::vector<bool> used(nodes, false);
    for (size_t k = 0; k < numSms; ++k) {
      const uint32_t v = g.sm_nodes[k];
      if (v >= nodes)
        throw InputError(fmt::format("pdn.grid.sm_nodes[{}]: {} is not a node of the {}x{} grid", k,
                                     v, g.rows, g.cols));
      if (used[v])
        throw InputError(fmt::format("pdn.grid.sm_nodes[{}]: node {} already holds an SM", k, v));
      used[v] = true;
    }
    smNodes = g.sm_nodes;
  }
  std::vector<double> uncore;
  if (cfg.uncore_rail == "shared") {
    std::vector<bool> hasSm(nodes, false);
    for (uint32_t v : smNodes) hasSm[v] = true;
    const auto free = uint32_t(std::count(hasSm.begin(), hasSm.end(), false));
    uncore.assign(nodes, 0.0);
    for (uint32_t k = 0; k < nodes; ++k)
      if (free == 0 || !hasSm[k]) uncore[k] = 1.0 / double(free == 0 ? nodes : free);
  }

  if (cfg.network == "elements") {
    circuit_ =
        elementsCircuit(g, cfg.elements, cfg.firstOrderScale() * cfg.elements.first_order_scale,
                        cfg.secondOrderScale(), smNodes, uncore);
    applyRegulator(cfg.regulator, int32_t(nodes + 1), circuit_);
    discretise(buildModel(circuit_));
    const PdnElementsConfig& e = cfg.elements;
    nlohmann::json j;
    j["network"] = "elements";
    j["package"] = cfg.package;
    j["uncore_rail"] = cfg.uncore_rail;
    j["regulator"] = regulatorJson(cfg.regulator);
    j["clock_mhz"] = clockHz_ / 1e6;
    j["states"] = nx_;
    j["scale"] = e.scale;
    nlohmann::json peaks = nlohmann::json::array();
    for (const auto& [f, z] : impedancePeaks(1e4, 1e9))
      peaks.push_back({{"frequency_mhz", f / 1e6}, {"impedance_mohm", z / kMilli}});
    j["impedance_peaks"] = std::move(peaks);
    j["dc_resistance_mohm"] =
        (e.board_resistance_mohm + e.package_resistance_mohm * cfg.secondOrderScale() +
         e.bump_resistance_mohm * cfg.firstOrderScale() * e.first_order_scale) /
        e.scale;
    j["grid"] = {{"rows", g.rows},
                 {"cols", g.cols},
                 {"sm_nodes", smNodes},
                 {"link_resistance_mohm", g.link_resistance_mohm},
                 {"link_inductance_ph", g.link_inductance_ph}};
    elements_ = std::move(j);
    return;
  }

  // Targets, in hertz and ohm.
  const double f1 = cfg.first_order.frequency_mhz * 1e6, f2 = cfg.second_order.frequency_mhz * 1e6;
  const double z1 = cfg.first_order.impedance_mohm * kMilli * cfg.firstOrderScale();
  const double z2 = cfg.second_order.impedance_mohm * kMilli * cfg.secondOrderScale();
  const double q1 = cfg.first_order.q, q2 = cfg.second_order.q;
  const double r1 = cfg.first_order.dc_resistance_mohm * kMilli;
  const double r2 = cfg.second_order.dc_resistance_mohm * kMilli;
  if (!(f1 > f2)) throw InputError("pdn.first_order.frequency_mhz: must exceed the second order's");
  const double split = std::sqrt(f1 * f2);

  // Fixed-point iteration on the design frequencies and impedances until the exact die
  // impedance peaks where the targets say.
  double fd1 = f1, zd1 = z1, fd2 = f2, zd2 = z2;
  double fm1 = 0, zm1 = 0, fm2 = 0, zm2 = 0;
  Stage s1, s2;
  const DieProbe probe = [&] {
    PdnCircuit c;
    c.nodes.resize(nodes + 1);
    c.smNodes = smNodes;
    return dieProbe(c);
  }();
  bool met = false;
  for (int iter = 0; iter < 40 && !met; ++iter) {
    s1 = deriveStage(fd1, zd1, q1, r1);
    s2 = deriveStage(fd2, zd2, q2, r2);
    // From the second iteration on, each stage's targets are corrected by where the whole
    // network's peaks landed, so both stages' keys shape a stage that cannot be damped.
    const auto undamped = [&](const char* stage, const char* other, double resistance, double q,
                              const Stage& st, double z) {
      const std::string keys =
          fmt::format("pdn.{0}.dc_resistance_mohm, pdn.{0}.q, pdn.{0}.impedance_mohm", stage);
      return InputError(fmt::format(
          "{}{}: {} mohm exceeds the damping q = {} leaves for the decap ({:.4g} mohm = Z / q^2 at "
          "Z = {} mohm); lower q or the resistance, or raise the impedance{}",
          keys,
          iter == 0 ? std::string()
                    : fmt::format(", pdn.{0}.dc_resistance_mohm, pdn.{0}.q, pdn.{0}.impedance_mohm",
                                  other),
          resistance, q, st.z0 / q / kMilli, z / kMilli,
          iter == 0 ? "" : fmt::format(" (the {} stage's peak moved its target)", other)));
    };
    if (s1.esr < 0)
      throw undamped("first_order", "second_order", cfg.first_order.dc_resistance_mohm, q1, s1, z1);
    if (s2.esr < 0)
      throw undamped("second_order", "first_order", cfg.second_order.dc_resistance_mohm, q2, s2,
                     z2);
    const PdnCircuit c = gridCircuit(g, s1, s2, smNodes, uncore);
    const Model m = buildModel(c);
    const Modal z = modal(m.A, m.B, m.Cn, m.Dn, probe.u, probe.w);
    auto mag = [&](double logHz) { return std::abs(z.at(std::exp(logHz))); };
    auto peak = [&](double lo, double hi, double& f, double& z) {
      // After the first iteration a peak moves little: search near where it was (and the whole
      // range again if it is not found there). Coarse log grid, then golden section around the
      // best point.
      if (iter > 0 && std::isfinite(f) && f > 0) {
        const double nlo = std::max(lo, f / 1.25), nhi = std::min(hi, f * 1.25);
        const int pts = 8;
        const double a = std::log(nlo), step = (std::log(nhi) - a) / pts;
        int best = 0;
        double bestZ = -1;
        for (int i = 0; i <= pts; ++i) {
          const double v = mag(a + i * step);
          if (v > bestZ) bestZ = v, best = i;
        }
        if (best > 0 && best < pts) {
          const double lf = goldenMax(mag, a + (best - 1) * step, a + (best + 1) * step, 1e-6);
          f = std::exp(lf);
          z = mag(lf);
          return;
        }
      }
      const int pts = std::max(8, int(std::ceil(24 * std::log10(hi / lo))));
      const double a = std::log(lo), step = (std::log(hi) - a) / pts;
      int best = 0;
      double bestZ = -1;
      for (int i = 0; i <= pts; ++i) {
        const double v = mag(a + i * step);
        if (v > bestZ) bestZ = v, best = i;
      }
      if (best == 0 || best == pts) {
        f = std::numeric_limits<double>::quiet_NaN();
        return;
      }
      const double lf = goldenMax(mag, a + (best - 1) * step, a + (best + 1) * step, 1e-6);
      f = std::exp(lf);
      z = mag(lf);
    };
    peak(f2 / 8, split, fm2, zm2);
    peak(split, f1 * 8, fm1, zm1);
    if (std::isnan(fm1) || std::isnan(fm2))
      throw InputError(fmt::format(
          "pdn.first_order.frequency_mhz, pdn.first_order.impedance_mohm, pdn.first_order.q, "
          "pdn.second_order.frequency_mhz, pdn.second_order.impedance_mohm, pdn.second_order.q, "
          "pdn.grid.rows, pdn.grid.cols: the die impedance has no {} peak near {} MHz (targets: "
          "first order {} MHz {} mohm q {}, second order {} MHz {} mohm q {}, on a {}x{} grid); "
          "the package cannot be fitted to them",
          std::isnan(fm1) ? "first-order" : "second-order", (std::isnan(fm1) ? f1 : f2) / 1e6,
          f1 / 1e6, z1 / kMilli, q1, f2 / 1e6, z2 / kMilli, q2, g.rows, g.cols));
    const double tol = 5e-4;
    met = std::abs(fm1 / f1 - 1) < tol && std::abs(zm1 / z1 - 1) < tol &&
          std::abs(fm2 / f2 - 1) < tol && std::abs(zm2 / z2 - 1) < tol;
    if (!met) {
      fd1 *= f1 / fm1;
      zd1 *= z1 / zm1;
      fd2 *= f2 / fm2;
      zd2 *= z2 / zm2;
    }
  }
  if (std::abs(fm1 / f1 - 1) > 0.02 || std::abs(zm1 / z1 - 1) > 0.02 ||
      std::abs(fm2 / f2 - 1) > 0.02 || std::abs(zm2 / z2 - 1) > 0.02)
    throw InputError(fmt::format(
        "pdn.first_order.frequency_mhz, pdn.first_order.impedance_mohm, "
        "pdn.second_order.frequency_mhz, pdn.second_order.impedance_mohm: cannot place the "
        "impedance peaks at the targets (first order {} MHz {} mohm, "
        "reached {:.4g} MHz {:.4g} mohm; second order {} MHz {} mohm, reached {:.4g} MHz {:.4g} "
        "mohm); the grid links (pdn.grid.link_resistance_mohm, pdn.grid.link_inductance_ph) or "
        "the stages' q and dc_resistance_mohm do not allow it",
        f1 / 1e6, z1 / kMilli, fm1 / 1e6, zm1 / kMilli, f2 / 1e6, z2 / kMilli, fm2 / 1e6,
        zm2 / kMilli));

  // The peaks are fitted with an ideal source; a regulator's loop, far below them, is added after.
  circuit_ = gridCircuit(g, s1, s2, smNodes, uncore);
  applyRegulator(cfg.regulator, int32_t(nodes), circuit_);
  discretise(buildModel(circuit_));

  auto stageJson = [](double fT, double zT, double q, double fM, double zM, const Stage& s) {
    return nlohmann::json{{"target_frequency_mhz", fT / 1e6},
                          {"target_impedance_mohm", zT / kMilli},
                          {"q", q},
                          {"frequency_mhz", fM / 1e6},
                          {"impedance_mohm", zM / kMilli},
                          {"characteristic_impedance_mohm", s.z0 / kMilli},
                          {"inductance_ph", s.l / kPico},
                          {"capacitance_nf", s.c * 1e9},
                          {"series_resistance_mohm", s.r / kMilli},
                          {"esr_mohm", s.esr / kMilli}};
  };
  nlohmann::json j;
  j["package"] = cfg.package;
  j["uncore_rail"] = cfg.uncore_rail;
  j["regulator"] = regulatorJson(cfg.regulator);
  j["clock_mhz"] = clockHz_ / 1e6;
  j["states"] = nx_;
  j["first_order"] = stageJson(f1, z1, q1, fm1, zm1, s1);
  j["first_order"]["note"] =
      "die decap (capacitance, esr) against bumps and package (inductance, "
      "series_resistance), totals over the grid";
  j["second_order"] = stageJson(f2, z2, q2, fm2, zm2, s2);
  j["second_order"]["note"] =
      "package decap (capacitance, esr) against board and package "
      "(inductance, series_resistance)";
  j["dc_resistance_mohm"] = (r1 + r2) / kMilli;
  j["grid"] = {{"rows", g.rows},
               {"cols", g.cols},
               {"sm_nodes", smNodes},
               {"node_capacitance_nf", s1.c / nodes * 1e9},
               {"node_esr_mohm", s1.esr * nodes / kMilli},
               {"bump_inductance_ph", s1.l * nodes / kPico},
               {"bump_resistance_mohm", s1.r * nodes / kMilli},
               {"link_resistance_mohm", g.link_resistance_mohm},
               {"link_inductance_ph", g.link_inductance_ph}};
  elements_ = std::move(j);
}

void PdnNetwork::discretise(const Model& m) {
  A_ = m.A;
  B_ = m.B;
  Cn_ = m.Cn;
  Dn_ = m.Dn;
  nx_ = uint32_t(A_.rows());
  nu_ = uint32_t(B_.cols());
  ns_ = uint32_t(circuit_.smNodes.size());
  const double T = 1.0 / clockHz_;
  const Eigen::Index nx = nx_, nu = nu_, ns = ns_;
  Eigen::MatrixXd aug = Eigen::MatrixXd::Zero(nx + nu, nx + nu);
  aug.topLeftCorner(nx, nx) = A_ * T;
  aug.topRightCorner(nx, nu) = B_ * T;
  const Eigen::MatrixXd E = aug.exp();
  const Eigen::MatrixXd Ad = E.topLeftCorner(nx, nx), Bd = E.topRightCorner(nx, nu);
  Eigen::MatrixXd Cs(ns, nx), Ds(ns, nu);
  for (Eigen::Index k = 0; k < ns; ++k) {
    Cs.row(k) = Cn_.row(circuit_.smNodes[size_t(k)]);
    Ds.row(k) = Dn_.row(circuit_.smNodes[size_t(k)]);
  }
  G_.resize(nx + ns, nx + nu);
  G_.topLeftCorner(nx, nx) = Ad;
  G_.topRightCorner(nx, nu) = Bd;
  G_.bottomLeftCorner(ns, nx) = Cs * Ad;
  G_.bottomRightCorner(ns, nu) = Cs * Bd + Ds;
  Xdc_ = -A_.partialPivLu().solve(B_);
  diagonalise(Ad, Bd, Cs, Ds);
}

namespace detail {

// One modal step after the inputs' part: the inputs that changed since the last step update it,
// the modes advance, and the drops are Ds u plus the product of the modal outputs with the state.
struct ModalStep {
  const double* smAmps;
  double uncoreAmps;
  uint32_t ns, nm, nr, nz, ld;  // SMs, modes (the first nr real), state entries, padded rows
  uint32_t block;               // columns summed apart before they are added to the drops
  bool incremental;             // update w and direct from the inputs that changed
  double* u;                    // the last inputs
  uint32_t* updates;
  double* w;                // Bq u
  double* direct;           // Ds u
  const double* modeIn;     // Bq, column-major nz x (ns + 1)
  const double* directIn;   // Ds, column-major ns x (ns + 1)
  double* q;                // the modal state
  const double *lRe, *lIm;  // the modes' eigenvalues
  const double* out;        // the modal outputs, column-major ld x nz (rows past ns zero)
  double* acc;              // ld entries of scratch
  double* smDrop;           // the result, ns entries
};

}  // namespace detail

namespace {

using detail::ModalStep;

// Four doubles, element by element (GCC's vector extension: AVX registers in the AVX clone,
// pairs of SSE2 registers otherwise; a multiply and an add stay two roundings).
using Double4 = double __attribute__((vector_size(32)));

// (By reference: a vector returned by value would change the baseline clone's ABI.)
inline __attribute__((always_inline)) void load4(Double4& v, const double* p) {
  std::memcpy(&v, p, sizeof v);
}

// res[r0, r0 + 4K) += the products of rows [r0, r0 + 4K) of m with q over columns [j0, end),
// summed from zero in column order. The sums stay in registers over the columns.
template <uint32_t K>
inline __attribute__((always_inline)) void rowTile(const double* __restrict m,
                                                   const double* __restrict q, uint32_t j0,
                                                   uint32_t end, uint32_t ld, uint32_t r0,
                                                   double* __restrict res) {
  Double4 acc[K] = {};
  for (uint32_t j = j0; j < end; ++j) {
    const Double4 b = {q[j], q[j], q[j], q[j]};
    const double* c = m + size_t(j) * ld + r0;
    for (uint32_t k = 0; k < K; ++k) {
      Double4 v;
      load4(v, c + 4 * k);
      acc[k] += v * b;
    }
  }
  for (uint32_t k = 0; k < K; ++k) {
    Double4 r;
    load4(r, res + r0 + 4 * k);
    r += acc[k];
    std::memcpy(res + r0 + 4 * k, &r, sizeof r);
  }
}

// res[0, ld) = direct + m q, m column-major with ld rows (a multiple of 4) and nz columns, the
// columns summed in blocks of `block`: each block's products from zero in column order, then
// added to res (block = nz: one sum). Each row's sum is its own, so the rows go in tiles.
inline __attribute__((always_inline)) void product(const double* __restrict m,
                                                   const double* __restrict q, uint32_t nz,
                                                   uint32_t ld, uint32_t block,
                                                   const double* __restrict direct, uint32_t ns,
                                                   double* __restrict res) {
  std::copy(direct, direct + ns, res);
  std::fill(res + ns, res + ld, 0.0);
  for (uint32_t j0 = 0; j0 < nz; j0 += block) {
    const uint32_t end = std::min(nz, j0 + block);
    uint32_t r0 = 0;
    for (; r0 + 16 <= ld; r0 += 16) rowTile<4>(m, q, j0, end, ld, r0, res);
    for (; r0 < ld; r0 += 4) rowTile<1>(m, q, j0, end, ld, r0, res);
  }
}

// The arithmetic is Eigen's (3.4), which these loops replaced, to the last bit: an input update
// is w + col * du per element; the drops are Ds u plus, block by block, each block's column
// products summed in order from zero, each rounded on its own (no fused multiply-add), with
// Eigen's matrix-vector product's column blocks (all the columns when there are fewer than 128;
// else 16, or 4 for tall matrices). The loops vectorise over elements and rows only, which
// changes no rounding. The pieces of the modal step follow, then modalStep itself.

// The modes' step, q' = lambda q + w: in place (step()), or from qIn into a distinct qOut
// (stepCycles(), each cycle's state kept for the product). The same arithmetic; both vectorise.
// Two loops on purpose: in place, input and output alias, and one loop written for both (without
// __restrict between them) left the complex modes' update scalar.
inline __attribute__((always_inline)) void modalModesInPlace(const ModalStep& a) {
  double* __restrict q = a.q;
  const double* __restrict w = a.w;
  const double* __restrict lRe = a.lRe;
  const double* __restrict lIm = a.lIm;
  const uint32_t nr = a.nr, nm = a.nm, nc = nm - nr;
  for (uint32_t j = 0; j < nr; ++j) q[j] = lRe[j] * q[j] + w[j];
  // The complex modes: real parts at q[nr, nm), imaginary parts at q[nm, nm + nc).
  double* __restrict re = q + nr;
  double* __restrict im = q + nm;
  const double* __restrict wRe = w + nr;
  const double* __restrict wIm = w + nm;
  const double* __restrict cRe = lRe + nr;
  const double* __restrict cIm = lIm + nr;
  for (uint32_t j = 0; j < nc; ++j) {
    const double r = cRe[j] * re[j] - cIm[j] * im[j] + wRe[j];
    const double i = cRe[j] * im[j] + cIm[j] * re[j] + wIm[j];
    re[j] = r;
    im[j] = i;
  }
}

inline __attribute__((always_inline)) void modalModesInto(const ModalStep& a,
                                                          const double* __restrict qIn,
                                                          double* __restrict qOut) {
  const double* __restrict w = a.w;
  const double* __restrict lRe = a.lRe;
  const double* __restrict lIm = a.lIm;
  const uint32_t nr = a.nr, nm = a.nm, nc = nm - nr;
  for (uint32_t j = 0; j < nr; ++j) qOut[j] = lRe[j] * qIn[j] + w[j];
  const double* __restrict re = qIn + nr;
  const double* __restrict im = qIn + nm;
  double* __restrict reOut = qOut + nr;
  double* __restrict imOut = qOut + nm;
  const double* __restrict wRe = w + nr;
  const double* __restrict wIm = w + nm;
  const double* __restrict cRe = lRe + nr;
  const double* __restrict cIm = lIm + nr;
  for (uint32_t j = 0; j < nc; ++j) {
    reOut[j] = cRe[j] * re[j] - cIm[j] * im[j] + wRe[j];
    imOut[j] = cRe[j] * im[j] + cIm[j] * re[j] + wIm[j];
  }
}

// Which of four inputs differ from the last ones, as the low 4 bits (lane i: bit i). Compared
// as one vector (!= is unordered-or-not-equal, as for scalars: a NaN differs); a branch-free
// scalar loop took about 16 instructions per input.
inline __attribute__((always_inline)) uint64_t differ4(const double* x, const double* y) {
  using Long4 = int64_t __attribute__((vector_size(32)));
  Double4 a, b;
  load4(a, x);
  load4(b, y);
  const Long4 ne = a != b;
  return (uint64_t(ne[0]) & 1) | (uint64_t(ne[1]) & 2) | (uint64_t(ne[2]) & 4) |
         (uint64_t(ne[3]) & 8);
}

// The inputs' part of the step: w and direct follow the inputs that changed, in input order.
// Which inputs changed is found first, 64 at a time, without a branch per input: whether an SM's
// current changed is close to a coin toss in a busy kernel, and the branch mispredicted.
inline __attribute__((always_inline)) void modalInputs(const ModalStep& a) {
  if (!a.incremental) return;
  const uint32_t nu = a.ns + 1;
  for (uint32_t k0 = 0; k0 < nu; k0 += 64) {
    const uint32_t n = std::min(nu - k0, 64u);
    uint64_t changed = 0;
    uint32_t b = 0;
    for (; b + 4 <= n && k0 + b + 4 <= a.ns; b += 4)
      changed |= differ4(a.smAmps + k0 + b, a.u + k0 + b) << b;
    for (; b < n; ++b) {
      const uint32_t k = k0 + b;
      const double u = k < a.ns ? a.smAmps[k] : a.uncoreAmps;
      changed |= uint64_t(u != a.u[k]) << b;  // != is exactly not ==, NaN included
    }
    for (; changed != 0; changed &= changed - 1) {
      const uint32_t k = k0 + uint32_t(__builtin_ctzll(changed));
      const double u = k < a.ns ? a.smAmps[k] : a.uncoreAmps;
      const double du = u - a.u[k];
      const double* __restrict in = a.modeIn + size_t(k) * a.nz;
      double* __restrict w = a.w;
      for (uint32_t z = 0; z < a.nz; ++z) w[z] += in[z] * du;
      const double* __restrict d = a.directIn + size_t(k) * a.ns;
      double* __restrict dir = a.direct;
      for (uint32_t i = 0; i < a.ns; ++i) dir[i] += d[i] * du;
      a.u[k] = u;
      *a.updates += 1;
    }
  }
}

inline __attribute__((always_inline)) void modalStep(const ModalStep& a) {
  modalInputs(a);
  modalModesInPlace(a);
  double* res = a.acc;
  product(a.out, a.q, a.nz, a.ld, a.block, a.direct, a.ns, res);
  std::copy(res, res + a.ns, a.smDrop);
}

// One cycle of stepCycles(): the inputs' part, the state from qIn into qOut, and res (ld rows)
// set to the cycle's direct part, zeros past ns.
inline __attribute__((always_inline)) void cycleUpdate(const ModalStep& a, const double* qIn,
                                                       double* qOut, double* __restrict res) {
  modalInputs(a);
  modalModesInto(a, qIn, qOut);
  for (uint32_t i = 0; i < a.ns; ++i) res[i] = a.direct[i];
  for (uint32_t i = a.ns; i < a.ld; ++i) res[i] = 0.0;
}

// Several cycles' drops at once: the products of rows [r0, r0 + 4R) of m with the states of M
// cycles (q + i * nz) over columns [j0, end), each cycle's sums from zero in column order as in
// rowTile, added to that cycle's res (res + i * ld). Each column of m is loaded once for the M
// cycles, and the M x R sums are independent chains (one cycle's R sums wait on each other's
// additions: the product of a single cycle is bound by the adds' latency).
template <uint32_t M, uint32_t R>
inline __attribute__((always_inline)) void cyclesTile(const double* __restrict m,
                                                      const double* __restrict q, uint32_t nz,
                                                      uint32_t j0, uint32_t end, uint32_t ld,
                                                      uint32_t r0, double* __restrict res) {
  Double4 acc[M][R] = {};
  for (uint32_t j = j0; j < end; ++j) {
    const double* c = m + size_t(j) * ld + r0;
    Double4 v[R];
    for (uint32_t k = 0; k < R; ++k) load4(v[k], c + 4 * k);
    for (uint32_t i = 0; i < M; ++i) {
      const double x = q[size_t(i) * nz + j];
      const Double4 b = {x, x, x, x};
      for (uint32_t k = 0; k < R; ++k) acc[i][k] += v[k] * b;
    }
  }
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t k = 0; k < R; ++k) {
      double* out = res + size_t(i) * ld + r0 + 4 * k;
      Double4 r;
      load4(r, out);
      r += acc[i][k];
      std::memcpy(out, &r, sizeof r);
    }
}

// product() for M cycles: res + i * ld holds cycle i's direct part (zeros past ns) and gets its
// drops, to the last bit what product() gives for that cycle alone.
template <uint32_t M>
inline __attribute__((always_inline)) void cyclesProduct(const double* __restrict m,
                                                         const double* __restrict q, uint32_t nz,
                                                         uint32_t ld, uint32_t block,
                                                         double* __restrict res) {
  for (uint32_t j0 = 0; j0 < nz; j0 += block) {
    const uint32_t end = std::min(nz, j0 + block);
    uint32_t r0 = 0;
    for (; r0 + 8 <= ld; r0 += 8) cyclesTile<M, 2>(m, q, nz, j0, end, ld, r0, res);
    for (; r0 < ld; r0 += 4) cyclesTile<M, 1>(m, q, nz, j0, end, ld, r0, res);
  }
}

// The drops of `cycles` (1 to 4) cycles whose states are at q + i * nz and direct parts at
// res + i * ld, into drops + i * ns.
inline __attribute__((always_inline)) void cyclesProductOf(uint32_t cycles, const double* m,
                                                           const double* q, uint32_t nz,
                                                           uint32_t ld, uint32_t block, double* res,
                                                           uint32_t ns, double* __restrict drops) {
  switch (cycles) {
    case 1:
      cyclesProduct<1>(m, q, nz, ld, block, res);
      break;
    case 2:
      cyclesProduct<2>(m, q, nz, ld, block, res);
      break;
    case 3:
      cyclesProduct<3>(m, q, nz, ld, block, res);
      break;
    default:
      cyclesProduct<4>(m, q, nz, ld, block, res);
      break;
  }
  for (uint32_t i = 0; i < cycles; ++i)
    for (uint32_t k = 0; k < ns; ++k) drops[size_t(i) * ns + k] = res[size_t(i) * ld + k];
}

// The same step compiled for processors with AVX (four doubles per instruction; AVX has no
// fused multiply-add, so the rounding is the same), chosen at run time: the build targets the
// baseline x86-64 instruction set.
#if defined(__x86_64__)
__attribute__((target("avx")))
#endif
void modalStepAvx(const ModalStep& a) {
  modalStep(a);
}

void modalStepBase(const ModalStep& a) { modalStep(a); }

#if defined(__x86_64__)
__attribute__((target("avx")))
#endif
void cycleUpdateAvx(const ModalStep& a, const double* qIn, double* qOut, double* res) {
  cycleUpdate(a, qIn, qOut, res);
}

void cycleUpdateBase(const ModalStep& a, const double* qIn, double* qOut, double* res) {
  cycleUpdate(a, qIn, qOut, res);
}

#if defined(__x86_64__)
__attribute__((target("avx")))
#endif
void cyclesProductAvx(uint32_t cycles, const double* m, const double* q, uint32_t nz, uint32_t ld,
                      uint32_t block, double* res, uint32_t ns, double* drops) {
  cyclesProductOf(cycles, m, q, nz, ld, block, res, ns, drops);
}

void cyclesProductBase(uint32_t cycles, const double* m, const double* q, uint32_t nz, uint32_t ld,
                       uint32_t block, double* res, uint32_t ns, double* drops) {
  cyclesProductOf(cycles, m, q, nz, ld, block, res, ns, drops);
}

bool hasAvx() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx");
#else
  return false;
#endif
}

}  // namespace

void PdnNetwork::diagonalise(const Eigen::MatrixXd& Ad, const Eigen::MatrixXd& Bd,
                             const Eigen::MatrixXd& Cs, const Eigen::MatrixXd& Ds) {
  // The dense step costs (nx + ns) x (nx + nu) multiply-adds per cycle (73 x 74 on gtx480). In
  // modal coordinates the state update is one complex multiply per mode, and since the state is
  // real only one mode of each conjugate pair needs stepping; with the inputs' part updated
  // only for the currents that changed, a cycle takes about a fifth of the dense product's
  // multiply-adds when few currents change (half the time, as measured: docs/pdn.md).
  // The eigen-decomposition is exact in exact arithmetic; in floating point it is used only
  // when it reproduces the dense step (below), which holds for the networks PdnConfig builds
  // (their modes are distinct); a circuit whose modes are not (a defective or nearly defective
  // Ad) keeps the dense step.
  const Eigen::Index nx = nx_, nu = nu_, ns = ns_;
  nm_ = 0;
  Eigen::EigenSolver<Eigen::MatrixXd> es(Ad);
  if (es.info() != Eigen::Success) return;
  const Eigen::MatrixXcd V = es.eigenvectors();
  const Eigen::VectorXcd lambda = es.eigenvalues();
  const Eigen::FullPivLU<Eigen::MatrixXcd> lu(V);
  if (!lu.isInvertible()) return;
  const Eigen::MatrixXcd Vi = lu.inverse();
  // Kept: the real modes first, then one of each conjugate pair (its partner's contribution is
  // the conjugate of its own, so the pair's is twice its real part).
  std::vector<Eigen::Index> kept;
  std::vector<double> weight;
  for (Eigen::Index k = 0; k < nx; ++k)
    if (lambda(k).imag() == 0) {
      kept.push_back(k);
      weight.push_back(1.0);
    }
  nr_ = uint32_t(kept.size());
  for (Eigen::Index k = 0; k < nx; ++k)
    if (lambda(k).imag() > 0) {
      kept.push_back(k);
      weight.push_back(2.0);
    }
  const Eigen::Index nm = Eigen::Index(kept.size());
  modeToState_.resize(nx, nm);
  stateToMode_.resize(nm, nx);
  for (Eigen::Index j = 0; j < nm; ++j) {
    modeToState_.col(j) = V.col(kept[size_t(j)]) * weight[size_t(j)];
    stateToMode_.row(j) = Vi.row(kept[size_t(j)]);
  }
  const Eigen::MatrixXcd Bq = stateToMode_ * Bd.cast<std::complex<double>>();
  const Eigen::MatrixXcd Cq = Cs.cast<std::complex<double>>() * modeToState_;
  nm_ = uint32_t(nm);
  std::vector<double> lRe(static_cast<size_t>(nm)), lIm(static_cast<size_t>(nm));
  const Eigen::Index nz = 2 * nm - nr_;  // real parts, then the complex modes' imaginary parts
  modeIn_.setZero(nz, nu);
  modeOut_.setZero(ns, nz);
  for (Eigen::Index j = 0; j < nm; ++j) {
    lRe[size_t(j)] = lambda(kept[size_t(j)]).real();
    lIm[size_t(j)] = lambda(kept[size_t(j)]).imag();
    modeIn_.row(j) = Bq.row(j).real();
    modeOut_.col(j) = Cq.col(j).real();
    if (j >= Eigen::Index(nr_)) {
      modeIn_.row(nm + j - nr_) = Bq.row(j).imag();
      modeOut_.col(nm + j - nr_) = -Cq.col(j).imag();
    }
  }
  direct_ = Ds;
  outLd_ = (ns_ + 3) / 4 * 4;
  // Eigen 3.4's column blocks for a matrix-vector product (GeneralMatrixVector.h), which step()
  // reproduces: all the columns below 128, else 16 (4 for matrices of more than 4,000 rows).
  outBlock_ = uint32_t(nz < 128 ? nz : (ns_ * sizeof(double) < 32000 ? 16 : 4));
  avx_ = hasAvx();
  outPadded_.assign(size_t(outLd_) * size_t(nz), 0.0);
  for (Eigen::Index j = 0; j < nz; ++j)
    for (uint32_t i = 0; i < ns_; ++i) outPadded_[size_t(j) * outLd_ + i] = modeOut_(i, j);
  modeLambdaRe_ = std::move(lRe);
  modeLambdaIm_ = std::move(lIm);

  // Check: both forms from the same state under the same varying currents (each SM switching
  // between idle and busy on its own pattern) agree to 1e-9 of the largest drop.
  std::vector<double> amps(ns_, 0.0), dModal(ns_), dDense(ns_);
  PdnState a = steadyState(amps.data(), 0.0), b = a;
  double worst = 0, scale = 0;
  for (uint32_t c = 0; c < 512; ++c) {
    for (uint32_t k = 0; k < ns_; ++k) amps[k] = ((c * (2 * k + 3) + k) % 7 < 3) ? 1.0 : 0.1;
    step(a, amps.data(), 0.5, dModal.data());
    stepDense(b, amps.data(), 0.5, dDense.data());
    for (uint32_t k = 0; k < ns_; ++k) {
      worst = std::max(worst, std::abs(dModal[k] - dDense[k]));
      scale = std::max(scale, std::abs(dDense[k]));
    }
  }
  if (!(worst <= 1e-9 * scale)) nm_ = 0;  // keep the dense step
}

Eigen::VectorXd PdnNetwork::stateOf(const PdnState& s) const {
  if (!usesModalForm()) return s.x;
  Eigen::VectorXcd q(nm_);
  for (uint32_t j = 0; j < nm_; ++j) q(j) = {s.q(j), j < nr_ ? 0.0 : s.q(nm_ + j - nr_)};
  return (modeToState_ * q).real();
}

Eigen::VectorXd PdnNetwork::inputs(const double* smAmps, double uncoreAmps) const {
  Eigen::VectorXd u(nu_);
  for (uint32_t k = 0; k < ns_; ++k) u(k) = smAmps[k];
  u(ns_) = uncoreAmps;
  return u;
}

PdnState PdnNetwork::zeroState() const {
  PdnState s;
  s.x = Eigen::VectorXd::Zero(nx_);
  s.z_ = Eigen::VectorXd::Zero(nx_ + nu_);
  s.out_ = Eigen::VectorXd::Zero(nx_ + ns_);
  const Eigen::Index nz = nm_ ? 2 * Eigen::Index(nm_) - nr_ : 0;
  s.q = Eigen::VectorXd::Zero(nz);
  s.w_ = Eigen::VectorXd::Zero(nz);
  s.direct_ = Eigen::VectorXd::Zero(ns_);
  s.u_.assign(nu_, 0.0);
  s.acc_.assign(size_t(outLd_), 0.0);
  s.cyclesQ_.assign(size_t(kStepCycles) * size_t(nz), 0.0);
  s.cyclesRes_.assign(size_t(kStepCycles) * outLd_, 0.0);
  return s;
}

PdnState PdnNetwork::steadyState(const double* smAmps, double uncoreAmps) const {
  PdnState s = zeroState();
  s.x = Xdc_ * inputs(smAmps, uncoreAmps);
  if (nm_) {
    const Eigen::VectorXcd q = stateToMode_ * s.x.cast<std::complex<double>>();
    for (uint32_t j = 0; j < nm_; ++j) {
      s.q(j) = q(j).real();
      if (j >= nr_) s.q(nm_ + j - nr_) = q(j).imag();
    }
  }
  return s;
}

bool PdnNetwork::refreshInputs(PdnState& s, const double* smAmps, double uncoreAmps) const {
  // The inputs' part of the step, Bq u and Ds u, follows the inputs that changed since the last
  // cycle (an SM that idles or repeats its current costs nothing). Every kRefresh updates it is
  // computed afresh from the inputs, which bounds the rounding the updates accumulate.
  constexpr uint32_t kRefresh = 4096;
  if (s.haveInputs_ && s.updates_ < kRefresh) return false;
  std::copy(smAmps, smAmps + ns_, s.u_.begin());
  s.u_[ns_] = uncoreAmps;
  s.haveInputs_ = true;
  s.updates_ = 0;
  const Eigen::Map<const Eigen::VectorXd> u(s.u_.data(), nu_);
  s.w_.noalias() = modeIn_ * u;
  s.direct_.noalias() = direct_ * u;
  return true;
}

detail::ModalStep PdnNetwork::modalStepOf(PdnState& s, double uncoreAmps) const {
  return ModalStep{nullptr,
                   uncoreAmps,
                   ns_,
                   nm_,
                   nr_,
                   uint32_t(s.q.size()),
                   outLd_,
                   outBlock_,
                   false,
                   s.u_.data(),
                   &s.updates_,
                   s.w_.data(),
                   s.direct_.data(),
                   modeIn_.data(),
                   direct_.data(),
                   s.q.data(),
                   modeLambdaRe_.data(),
                   modeLambdaIm_.data(),
                   outPadded_.data(),
                   s.acc_.data(),
                   nullptr};
}

void PdnNetwork::step(PdnState& s, const double* smAmps, double uncoreAmps, double* smDrop) const {
  if (!usesModalForm()) {
    stepDense(s, smAmps, uncoreAmps, smDrop);
    return;
  }
  if (s.q.size() != modeIn_.rows() || s.u_.size() != nu_ || s.acc_.size() != size_t(outLd_))
    throw InternalError("PdnNetwork::step: the state was not made by this network");
  ModalStep a = modalStepOf(s, uncoreAmps);
  a.smAmps = smAmps;
  a.incremental = !refreshInputs(s, smAmps, uncoreAmps);
  a.smDrop = smDrop;
  if (avx_)
    modalStepAvx(a);
  else
    modalStepBase(a);
}

void PdnNetwork::stepCycles(PdnState& s, uint32_t cycles, const double* smAmps, size_t ampsStride,
                            double uncoreAmps, double* smDrops) const {
  if (!usesModalForm()) {
    for (uint32_t i = 0; i < cycles; ++i)
      stepDense(s, smAmps + i * ampsStride, uncoreAmps, smDrops + size_t(i) * ns_);
    return;
  }
  const uint32_t nz = uint32_t(s.q.size()), ld = outLd_;
  if (nz != modeIn_.rows() || s.u_.size() != nu_ || s.acc_.size() != size_t(ld) ||
      s.cyclesQ_.size() != size_t(kStepCycles) * nz)
    throw InternalError("PdnNetwork::stepCycles: the state was not made by this network");
  ModalStep a = modalStepOf(s, uncoreAmps);
  for (uint32_t first = 0; first < cycles; first += kStepCycles) {
    const uint32_t m = std::min(cycles - first, kStepCycles);
    // Each cycle's state (from the one before) and direct part, in order (the updates are
    // step()'s), then the drops of the m cycles in one product.
    for (uint32_t i = 0; i < m; ++i) {
      a.smAmps = smAmps + size_t(first + i) * ampsStride;
      a.incremental = !refreshInputs(s, a.smAmps, uncoreAmps);
      const double* qIn = i ? &s.cyclesQ_[size_t(i - 1) * nz] : s.q.data();
      double* qOut = &s.cyclesQ_[size_t(i) * nz];
      double* res = &s.cyclesRes_[size_t(i) * ld];
      if (avx_)
        cycleUpdateAvx(a, qIn, qOut, res);
      else
        cycleUpdateBase(a, qIn, qOut, res);
    }
    std::copy(&s.cyclesQ_[size_t(m - 1) * nz], &s.cyclesQ_[size_t(m) * nz], s.q.data());
    double* drops = smDrops + size_t(first) * ns_;
    if (avx_)
      cyclesProductAvx(m, outPadded_.data(), s.cyclesQ_.data(), nz, ld, outBlock_,
                       s.cyclesRes_.data(), ns_, drops);
    else
      cyclesProductBase(m, outPadded_.data(), s.cyclesQ_.data(), nz, ld, outBlock_,
                        s.cyclesRes_.data(), ns_, drops);
  }
}

void PdnNetwork::stepModalEigen(PdnState& s, const double* smAmps, double uncoreAmps,
                                double* smDrop) const {
  if (!usesModalForm()) throw InternalError("PdnNetwork::stepModalEigen: no modal form");
  const uint32_t nm = nm_, nr = nr_, ns = ns_;
  if (!refreshInputs(s, smAmps, uncoreAmps)) {
    for (uint32_t k = 0; k <= ns; ++k) {
      const double u = k < ns ? smAmps[k] : uncoreAmps;
      if (u == s.u_[k]) continue;
      s.w_.noalias() += modeIn_.col(k) * (u - s.u_[k]);
      s.direct_.noalias() += direct_.col(k) * (u - s.u_[k]);
      s.u_[k] = u;
      s.updates_ += 1;
    }
  }
  double* q = s.q.data();
  const double* w = s.w_.data();
  for (uint32_t j = 0; j < nr; ++j) q[j] = modeLambdaRe_[j] * q[j] + w[j];
  for (uint32_t j = nr, i = nm; j < nm; ++j, ++i) {
    const double re = modeLambdaRe_[j] * q[j] - modeLambdaIm_[j] * q[i] + w[j];
    const double im = modeLambdaRe_[j] * q[i] + modeLambdaIm_[j] * q[j] + w[i];
    q[j] = re;
    q[i] = im;
  }
  Eigen::Map<Eigen::VectorXd> drop(smDrop, ns);
  drop = s.direct_;
  drop.noalias() += modeOut_ * s.q;
}

void PdnNetwork::stepDense(PdnState& s, const double* smAmps, double uncoreAmps,
                           double* smDrop) const {
  if (s.z_.size() != Eigen::Index(nx_ + nu_) || s.x.size() != Eigen::Index(nx_))
    throw InternalError("PdnNetwork::step: the state was not made by this network");
  s.z_.head(nx_) = s.x;
  for (uint32_t k = 0; k < ns_; ++k) s.z_(nx_ + k) = smAmps[k];
  s.z_(nx_ + ns_) = uncoreAmps;
  s.out_.noalias() = G_ * s.z_;
  s.x = s.out_.head(nx_);
  Eigen::Map<Eigen::VectorXd>(smDrop, ns_) = s.out_.tail(ns_);
}

void PdnNetwork::nodeDrops(const PdnState& s, const double* smAmps, double uncoreAmps,
                           double* nodeDrop) const {
  Eigen::Map<Eigen::VectorXd>(nodeDrop, numNodes()) =
      Cn_ * stateOf(s) + Dn_ * inputs(smAmps, uncoreAmps);
}

std::complex<double> PdnNetwork::dieImpedance(double hz) const {
  const DieProbe p = dieProbe(circuit_);
  return response(Model{A_, B_, Cn_, Dn_}, hz, p.u, p.w);
}

std::complex<double> PdnNetwork::transferImpedance(uint32_t from, uint32_t at, double hz) const {
  Eigen::VectorXcd u = Eigen::VectorXcd::Zero(nu_), w = Eigen::VectorXcd::Zero(numNodes());
  u(from) = 1.0;
  w(nodeOfSm(at)) = 1.0;
  return response(Model{A_, B_, Cn_, Dn_}, hz, u, w);
}

std::complex<double> PdnNetwork::smImpedance(uint32_t sm, double hz) const {
  return transferImpedance(sm, sm, hz);
}

std::vector<std::pair<double, double>> PdnNetwork::impedancePeaks(double fLo, double fHi) const {
  const DieProbe p = dieProbe(circuit_);
  const Model m{A_, B_, Cn_, Dn_};
  auto mag = [&](double logHz) { return std::abs(response(m, std::exp(logHz), p.u, p.w)); };
  const int pts = std::max(16, int(std::ceil(50 * std::log10(fHi / fLo))));
  const double a = std::log(fLo), step = (std::log(fHi) - a) / pts;
  std::vector<double> z(size_t(pts) + 1);
  for (int i = 0; i <= pts; ++i) z[size_t(i)] = mag(a + i * step);
  std::vector<std::pair<double, double>> peaks;
  for (int i = 1; i < pts; ++i)
    if (z[size_t(i)] > z[size_t(i - 1)] && z[size_t(i)] >= z[size_t(i + 1)]) {
      const double lf = goldenMax(mag, a + (i - 1) * step, a + (i + 1) * step, 1e-7);
      peaks.emplace_back(std::exp(lf), mag(lf));
    }
  return peaks;
}

uint64_t PdnNetwork::settlingCycles(double factor) const {
  const Eigen::VectorXcd ev = A_.eigenvalues();
  double slowest = -std::numeric_limits<double>::infinity();
  for (Eigen::Index k = 0; k < ev.size(); ++k) slowest = std::max(slowest, ev(k).real());
  if (!(slowest < 0)) throw InternalError("PdnNetwork: the network is not stable");
  return uint64_t(std::ceil(std::log(factor) / (slowest / clockHz_)));
}

nlohmann::json PdnNetwork::elements() const { return elements_; }

double alignmentDroopPct(const PdnNetwork& net, double hz, uint32_t skewCycles, double baseAmps,
                         double amplitudeAmps, double supplyV, uint64_t cycles) {
  const uint32_t n = net.numSms();
  std::vector<double> amps(n, baseAmps), drop(n, 0.0);
  PdnState s = net.steadyState(amps.data(), 0.0);
  const uint64_t warmup = net.settlingCycles(1e-6) + uint64_t(n) * skewCycles;
  const double w = 2 * kPi * hz / net.clockHz();
  double worst = 0;
  for (uint64_t c = 0; c < warmup + cycles; ++c) {
    for (uint32_t k = 0; k < n; ++k)
      amps[k] = baseAmps + amplitudeAmps * std::sin(w * (double(c) - double(k) * skewCycles));
    net.step(s, amps.data(), 0.0, drop.data());
    if (c >= warmup) worst = std::max(worst, *std::max_element(drop.begin(), drop.end()));
  }
  return 100.0 * worst / supplyV;
}

}  // namespace gpusc::pdn
