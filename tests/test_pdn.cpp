// The power-delivery network (seed 001): the state-space model against an independent nodal
// analysis of the same circuit, the exact discretisation against the closed-form step response
// of a lumped RLC, superposition, the DC operating point, the impedance peaks of the default and
// the package variants, the calibration targets of the GTX480 defaults, and layout errors.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <random>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "pdn/pdn.hpp"
#include "pdn/pdn_network.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;
using namespace gpusc::pdn;

namespace {

constexpr double kPi = 3.14159265358979323846;

// The PDN of a built-in platform (with `sets` applied; numSms 0: the platform's SM count, else
// the platform with that many SMs).
PdnNetwork networkOf(const std::string& platform, std::vector<std::string> sets = {},
                     uint32_t numSms = 0) {
  if (numSms) sets.insert(sets.begin(), fmt::format("gpu.num_sms={}", numSms));
  const PlatformConfig c = loadPlatform(platform, sets);
  return PdnNetwork(c.pdn, c.gpu.clocks.core_mhz * 1e6, numSms ? numSms : c.gpu.num_sms);
}

PdnNetwork gtx480(const std::vector<std::string>& sets = {}, uint32_t numSms = 0) {
  return networkOf("gtx480", sets, numSms);
}

// Node drops for the node injections `inj` at `hz`, by nodal analysis of the circuit (the
// regulator is a short in drop coordinates; at 0 Hz the decaps are open).
Eigen::VectorXcd nodal(const PdnCircuit& c, double hz, const Eigen::VectorXcd& inj) {
  using cd = std::complex<double>;
  const Eigen::Index n = Eigen::Index(c.nodes.size());
  const cd jw(0.0, 2 * kPi * hz);
  Eigen::MatrixXcd Y = Eigen::MatrixXcd::Zero(n, n);
  for (Eigen::Index k = 0; k < n; ++k)
    if (hz > 0) Y(k, k) += 1.0 / (c.nodes[size_t(k)].esr + 1.0 / (jw * c.nodes[size_t(k)].c));
  for (const auto& b : c.branches) {
    const cd y = 1.0 / (b.r + jw * b.l);
    Y(b.to, b.to) += y;
    if (b.from >= 0) {
      Y(b.from, b.from) += y;
      Y(b.from, b.to) -= y;
      Y(b.to, b.from) -= y;
    }
  }
  return Y.fullPivLu().solve(inj);
}

// Worst drop at each SM node over `cycles` cycles of constant currents from the zero state.
std::vector<double> worstStepDrops(const PdnNetwork& n, const std::vector<double>& amps,
                                   uint64_t cycles) {
  PdnState s = n.zeroState();
  std::vector<double> d(n.numSms()), worst(n.numSms(), 0.0);
  for (uint64_t c = 0; c < cycles; ++c) {
    n.step(s, amps.data(), 0.0, d.data());
    for (size_t k = 0; k < d.size(); ++k) worst[k] = std::max(worst[k], d[k]);
  }
  return worst;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(PdnNetwork, Gtx480PlatformStatesTheDefaults) {
  // The calibration figures in platforms/gtx480.yaml and the code defaults describe one network.
  const PdnConfig defaults;
  EXPECT_EQ(config::toJson(loadPlatform("gtx480").pdn), config::toJson(defaults));
}

TEST(PdnNetwork, ModelMatchesNodalAnalysis) {
  for (const char* rail : {"separate", "shared"}) {
    const PdnNetwork n = gtx480({fmt::format("pdn.uncore_rail={}", rail)});
    EXPECT_EQ(n.numNodes(), 17u);  // 16 grid nodes and the package node
    EXPECT_EQ(n.numStates(), 17u + 1u + 16u + 24u);
    const PdnCircuit& c = n.circuit();
    for (double hz : {3e5, 1e6, 1.7e7, 1e8, 4e8}) {
      for (uint32_t from : {0u, 5u, 14u}) {
        Eigen::VectorXcd inj = Eigen::VectorXcd::Zero(n.numNodes());
        inj(n.nodeOfSm(from)) = 1.0;
        const Eigen::VectorXcd d = nodal(c, hz, inj);
        for (uint32_t at = 0; at < n.numSms(); ++at) {
          const std::complex<double> z = n.transferImpedance(from, at, hz);
          EXPECT_NEAR(std::abs(z - d(n.nodeOfSm(at))), 0.0, 1e-9 * std::abs(d(n.nodeOfSm(at))))
              << rail << " " << hz << " Hz, SM " << from << " -> SM " << at;
        }
      }
      // Die impedance: equal shares on every SM, mean over the SM nodes.
      Eigen::VectorXcd inj = Eigen::VectorXcd::Zero(n.numNodes());
      for (uint32_t s = 0; s < n.numSms(); ++s) inj(n.nodeOfSm(s)) = 1.0 / n.numSms();
      const Eigen::VectorXcd d = nodal(c, hz, inj);
      std::complex<double> mean = 0;
      for (uint32_t s = 0; s < n.numSms(); ++s) mean += d(n.nodeOfSm(s)) / double(n.numSms());
      EXPECT_NEAR(std::abs(n.dieImpedance(hz) - mean), 0.0, 1e-9 * std::abs(mean));
    }
  }
}

// A series R + L from the regulator into one decap C with ESR r: a second-order system whose
// step response is known in closed form. The discretisation (zero-order hold, matrix
// exponential) is exact for a current held constant, so the stepped drop must match to rounding.
TEST(PdnNetwork, LumpedRlcStepMatchesClosedForm) {
  const double R = 0.1e-3, L = 50e-12, C = 1e-6, I = 3.0, clock = 700e6;
  for (double r : {0.0, 0.3e-3, 2e-3}) {
    PdnCircuit c;
    c.nodes.push_back({C, r});
    c.branches.push_back({-1, 0, R, L});
    c.smNodes = {0};
    const PdnNetwork n(c, clock);
    ASSERT_EQ(n.numStates(), 2u);
    const double a = (R + r) / (2 * L), w0 = 1 / std::sqrt(L * C);
    const double wd = std::sqrt(w0 * w0 - a * a);
    auto drop = [&](double t) {  // drop = L di/dt + R i, with i(0) = 0, L di/dt(0) = r I
      const double e = std::exp(-a * t), s = std::sin(wd * t), co = std::cos(wd * t);
      const double i = I * (1 - e * (co + a / wd * s)) + r * I / (L * wd) * e * s;
      const double di = I * e * w0 * w0 / wd * s + r * I / (L * wd) * e * (wd * co - a * s);
      return L * di + R * i;
    };
    PdnState s = n.zeroState();
    double d = 0, worstErr = 0, peak = 0;
    const double amps[1] = {I};
    for (int k = 1; k <= 40000; ++k) {  // until e^(-a t) < 1e-12
      n.step(s, amps, 0.0, &d);
      const double want = drop(k / clock);
      worstErr = std::max(worstErr, std::abs(d - want));
      peak = std::max(peak, std::abs(want));
    }
    EXPECT_LT(worstErr, 1e-9 * peak) << "ESR " << r;
    fmt::print("lumped RLC, ESR {} mohm: worst error {:.2e} of the peak drop\n", r * 1e3,
               worstErr / peak);
    EXPECT_NEAR(d, I * R, 1e-9 * I * R);  // settled to the IR drop
  }
}

TEST(PdnNetwork, SuperpositionOfPerSmResponses) {
  for (const char* rail : {"separate", "shared"}) {
    const PdnNetwork n = gtx480({fmt::format("pdn.uncore_rail={}", rail)});
    const uint32_t ns = n.numSms();
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> amp(3.0, 9.0), unc(5.0, 15.0);
    PdnState full = n.zeroState();
    std::vector<PdnState> parts(ns + 1, n.zeroState());
    std::vector<double> amps(ns), one(ns), d(ns), dp(ns), sum(ns);
    double worstErr = 0, peak = 0;
    for (int c = 0; c < 3000; ++c) {
      for (auto& x : amps) x = amp(rng);
      const double uncore = unc(rng);
      n.step(full, amps.data(), uncore, d.data());
      std::fill(sum.begin(), sum.end(), 0.0);
      for (uint32_t src = 0; src <= ns; ++src) {
        std::fill(one.begin(), one.end(), 0.0);
        if (src < ns) one[src] = amps[src];
        n.step(parts[src], one.data(), src == ns ? uncore : 0.0, dp.data());
        for (uint32_t k = 0; k < ns; ++k) sum[k] += dp[k];
      }
      for (uint32_t k = 0; k < ns; ++k) {
        worstErr = std::max(worstErr, std::abs(sum[k] - d[k]));
        peak = std::max(peak, std::abs(d[k]));
      }
    }
    EXPECT_LT(worstErr, 1e-9 * peak) << rail;
  }
}

TEST(PdnNetwork, SteadyStateIsTheLimitOfAConstantLoad) {
  const PdnNetwork n = gtx480({"pdn.uncore_rail=shared"});
  const uint32_t ns = n.numSms();
  std::vector<double> amps(ns), d(ns), dss(ns), nodes(n.numNodes());
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> amp(3.0, 9.0);
  for (auto& x : amps) x = amp(rng);
  const double uncore = 12.0;
  const PdnState ss = n.steadyState(amps.data(), uncore);
  // The steady state is a fixed point of the step.
  PdnState s = ss;
  n.step(s, amps.data(), uncore, dss.data());
  EXPECT_LT((s.x - ss.x).norm(), 1e-9 * ss.x.norm());
  // Stepping the constant load from rest converges to it.
  s = n.zeroState();
  const uint64_t cycles = n.settlingCycles(1e-12);
  EXPECT_GT(cycles, 1000u);  // the 1 MHz resonance takes microseconds to settle
  for (uint64_t c = 0; c < cycles; ++c) n.step(s, amps.data(), uncore, d.data());
  for (uint32_t k = 0; k < ns; ++k) EXPECT_NEAR(d[k], dss[k], 1e-9 * dss[k]) << "SM " << k;
  // At DC the drops are those of the resistive network alone (decaps open).
  Eigen::VectorXcd inj = Eigen::VectorXcd::Zero(n.numNodes());
  for (uint32_t k = 0; k < ns; ++k) inj(n.nodeOfSm(k)) += amps[k];
  inj(15) += uncore;  // the one grid node without an SM takes all of the uncore current
  const Eigen::VectorXcd want = nodal(n.circuit(), 0.0, inj);
  n.nodeDrops(ss, amps.data(), uncore, nodes.data());
  for (uint32_t v = 0; v < n.numNodes(); ++v)
    EXPECT_NEAR(nodes[v], want(v).real(), 1e-9 * std::abs(want(v))) << "node " << v;
}

TEST(PdnNetwork, DcDropIsCurrentTimesSeriesResistance) {
  const PdnConfig def;
  const double rdc =
      (def.first_order.dc_resistance_mohm + def.second_order.dc_resistance_mohm) * 1e-3;
  // One node: the drop is I (R1 + R2).
  {
    const PdnNetwork n = gtx480({"pdn.grid.rows=1", "pdn.grid.cols=1"}, 1);
    const double amps[1] = {40.0};
    double d = 0;
    PdnState s = n.steadyState(amps, 0.0);
    n.step(s, amps, 0.0, &d);
    EXPECT_NEAR(d, 40.0 * rdc, 1e-9 * 40.0 * rdc);
  }
  // Sixteen SMs, equal currents: by symmetry no current flows in the grid links, and every node
  // drops I_total (R1 + R2), R1 being the bumps in parallel.
  {
    const PdnNetwork n = gtx480({}, 16);
    std::vector<double> amps(16, 4.0), d(16);
    PdnState s = n.steadyState(amps.data(), 0.0);
    n.step(s, amps.data(), 0.0, d.data());
    for (double x : d) EXPECT_NEAR(x, 64.0 * rdc, 1e-9 * 64.0 * rdc);
  }
}

TEST(PdnNetwork, ImpedancePeaksAtTheTargetsForEveryPackage) {
  const PdnConfig def;
  const double f1 = def.first_order.frequency_mhz * 1e6, f2 = def.second_order.frequency_mhz * 1e6;
  const double z1 = def.first_order.impedance_mohm * 1e-3,
               z2 = def.second_order.impedance_mohm * 1e-3;
  struct Variant {
    const char* name;
    double s1, s2;  // expected peak scale, first and second order
  };
  for (const Variant& v :
       {Variant{"default", 1, 1}, Variant{"I", 2, 2}, Variant{"II", 1, 2}, Variant{"III", 2, 1}}) {
    const PdnNetwork n = gtx480({fmt::format("pdn.package={}", v.name)});
    const auto peaks = n.impedancePeaks(1e4, 1e10);
    ASSERT_GE(peaks.size(), 2u) << v.name;
    auto near = [&](double f) {  // the highest peak within a factor 3 of f
      std::pair<double, double> best{0, 0};
      for (const auto& p : peaks)
        if (p.first > f / 3 && p.first < f * 3 && p.second > best.second) best = p;
      return best;
    };
    const auto p1 = near(f1), p2 = near(f2);
    EXPECT_NEAR(p1.first / f1, 1.0, 0.10) << v.name;
    EXPECT_NEAR(p2.first / f2, 1.0, 0.10) << v.name;
    EXPECT_NEAR(p1.second / z1, v.s1, 0.10 * v.s1) << v.name;
    EXPECT_NEAR(p2.second / z2, v.s2, 0.10 * v.s2) << v.name;
    // The two resonances are the network's largest impedance over the band.
    for (const auto& p : peaks) EXPECT_LE(p.second, std::max(p1.second, p2.second) * 1.0001);
    // The element values describe the circuit.
    const nlohmann::json e = n.elements();
    EXPECT_NEAR(e["grid"]["node_capacitance_nf"].get<double>() * 16,
                e["first_order"]["capacitance_nf"].get<double>(), 1e-9);
    EXPECT_DOUBLE_EQ(n.circuit().nodes[0].c * 1e9, e["grid"]["node_capacitance_nf"].get<double>());
    EXPECT_DOUBLE_EQ(n.circuit().nodes[16].c * 1e9,
                     e["second_order"]["capacitance_nf"].get<double>());
  }
}

// Seed 001's network (pdn.network: elements, Gupta et al.'s Pentium 4 values scaled 2x): its
// impedance seen from the die peaks where the ladder of its R, L and C puts the peaks, computed
// here from the element values without the model (and without the package planes' 1 nF, which
// the lumped model has not: it may move a peak by 0.1 %). 16 SMs on the 4x4 grid draw evenly, so
// the grid links carry nothing and the die is one node.
TEST(PdnNetwork, ElementsNetworkPeaksWhereItsValuesPutThem) {
  for (const std::string package : {"default", "I", "II", "III"}) {
    const PlatformConfig cfg = loadPlatform(
        "gtx480", {"gpu.num_sms=16", "pdn.network=elements", "pdn.package=" + package});
    const PdnNetwork n(cfg.pdn, cfg.gpu.clocks.core_mhz * 1e6, 16);
    const PdnElementsConfig& e = cfg.pdn.elements;
    const double k1 = cfg.pdn.firstOrderScale() * e.first_order_scale,
                 k2 = cfg.pdn.secondOrderScale();
    const double s = e.scale, r = 1e-3 / s, l = 1e-12 / s;
    using Cd = std::complex<double>;
    const auto par = [](Cd a, Cd b) { return a * b / (a + b); };
    const auto ladder = [&](double hz) {
      const Cd jw(0.0, 2 * kPi * hz);
      const Cd board = par(e.board_resistance_mohm * r + jw * e.board_inductance_ph * l,
                           e.board_esr_mohm * r + 1.0 / (jw * e.board_capacitance_uf * 1e-6 * s));
      const Cd decap = e.package_esr_mohm * r * k2 + jw * e.package_esl_ph * l * k1 +
                       1.0 / (jw * e.package_capacitance_uf * 1e-6 * s / k2);
      const Cd pkg =
          par(board + e.package_resistance_mohm * r * k2 + jw * e.package_inductance_ph * l * k2,
              decap);
      const Cd die = e.die_esr_mohm * r * k1 + 1.0 / (jw * e.die_capacitance_nf * 1e-9 * s / k1);
      return std::abs(
          par(pkg + e.bump_resistance_mohm * r * k1 + jw * e.bump_inductance_ph * l * k1, die));
    };
    // The ladder's local maxima on a fine log grid.
    std::vector<std::pair<double, double>> expected;
    const int pts = 20000;
    std::vector<double> z(pts + 1);
    for (int i = 0; i <= pts; ++i) z[size_t(i)] = ladder(1e4 * std::pow(1e5, double(i) / pts));
    for (int i = 1; i < pts; ++i)
      if (z[size_t(i)] > z[size_t(i - 1)] && z[size_t(i)] > z[size_t(i + 1)])
        expected.emplace_back(1e4 * std::pow(1e5, double(i) / pts), z[size_t(i)]);
    const auto peaks = n.impedancePeaks(1e4, 1e9);
    ASSERT_EQ(expected.size(), 2u) << package;
    ASSERT_EQ(peaks.size(), 2u) << package;
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_NEAR(peaks[k].first / expected[k].first, 1.0, 0.003) << package << " peak " << k;
      EXPECT_NEAR(peaks[k].second / expected[k].second, 1.0, 0.003) << package << " peak " << k;
    }
    // The first-order peak is the die decap against the bumps and the package decap's ESL; the
    // second-order one the package decap against the package's series inductance.
    const double f1 = 1 / (2 * kPi *
                           std::sqrt((e.bump_inductance_ph + e.package_esl_ph) * l * k1 *
                                     e.die_capacitance_nf * 1e-9 * s / k1));
    const double f2 = 1 / (2 * kPi *
                           std::sqrt((e.package_inductance_ph + e.package_esl_ph) * l * k2 *
                                     e.package_capacitance_uf * 1e-6 * s / k2));
    EXPECT_NEAR(peaks[1].first / f1, 1.0, 0.05) << package;
    EXPECT_NEAR(peaks[0].first / f2, 1.0, 0.25) << package;  // the board's L and C pull it
    // DC: the series resistances.
    EXPECT_NEAR(
        std::abs(n.dieImpedance(1e-3)),
        (e.board_resistance_mohm + e.package_resistance_mohm * k2 + e.bump_resistance_mohm * k1) *
            r,
        1e-9);
    if (package == "default") {  // seed 001's peaks: ~100 MHz and ~1 MHz (Fig. 3c)
      EXPECT_GT(peaks[1].first, 80e6);
      EXPECT_LT(peaks[1].first, 150e6);
      EXPECT_GT(peaks[0].first, 0.5e6);
      EXPECT_LT(peaks[0].first, 5e6);
    }
  }
}

// The calibration targets of the GTX480 defaults (platforms/gtx480.yaml), at 1.0 V.
// A regulator with remote sense (pdn.regulator): the sensed drop is regulated away at DC, the
// loop high-passes it below its bandwidth, and the network's resonances far above it ring as
// with an ideal source.
TEST(PdnNetwork, RegulatorRegulatesTheSensedDropAway) {
  const std::vector<std::string> base = {"pdn.network=elements"};
  const PdnNetwork ideal = gtx480(base, 16);
  const PlatformConfig cfg = loadPlatform("gtx480", {"gpu.num_sms=16", "pdn.network=elements"});
  const PdnElementsConfig& e = cfg.pdn.elements;
  for (const std::string sense : {"package", "die"}) {
    const PdnNetwork n = gtx480({"pdn.network=elements", "pdn.regulator.sense=" + sense}, 16);
    EXPECT_EQ(n.numStates(), ideal.numStates() + 1) << sense;
    const double fbw = cfg.pdn.regulator.bandwidth_khz * 1e3;
    // DC, equal currents on all 16 nodes (no grid current): with the package sensed, the die
    // drops only over the bumps (all in parallel); with the die sensed, not at all.
    const double rBumps = e.bump_resistance_mohm * 1e-3 / e.scale;
    const double dc = std::abs(n.dieImpedance(1e-3));
    if (sense == "package")
      EXPECT_NEAR(dc / rBumps, 1.0, 1e-6);
    else
      EXPECT_LT(dc, 1e-6 * rBumps);
    // A constant, uneven load: the steady state holds the sensed drop at zero.
    std::vector<double> amps(16), nodes(n.numNodes());
    for (uint32_t k = 0; k < 16; ++k) amps[k] = 2.0 + 0.5 * k;
    const PdnState ss = n.steadyState(amps.data(), 0.0);
    n.nodeDrops(ss, amps.data(), 0.0, nodes.data());
    double sensed = 0;
    if (sense == "package") {
      sensed = nodes[16 + 1];  // the die's 16 nodes, the board, then the package node
    } else {
      for (uint32_t k = 0; k < 16; ++k) sensed += nodes[n.nodeOfSm(k)] / 16;
    }
    EXPECT_LT(std::abs(sensed), 1e-9) << sense;
    // Far below the loop's bandwidth the die-sensed drop is high-passed, |f / (f + j fbw)|; far
    // above it (the first-order resonance) the impedance is the ideal source's.
    if (sense == "die") {
      const double f = fbw / 100;
      EXPECT_NEAR(std::abs(n.dieImpedance(f)) / std::abs(ideal.dieImpedance(f)),
                  f / std::hypot(f, fbw), 0.01 * f / fbw);
    }
    const auto peaks = ideal.impedancePeaks(1e4, 1e9);
    ASSERT_EQ(peaks.size(), 2u);
    EXPECT_NEAR(std::abs(n.dieImpedance(peaks[1].first)) / peaks[1].second, 1.0, 1e-3) << sense;
  }
  // A loop as fast as the network's resonances is unstable: refused, naming the key.
  try {
    gtx480({"pdn.network=elements", "pdn.regulator.sense=die", "pdn.regulator.bandwidth_khz=5000"},
           16);
    ADD_FAILURE() << "a 5 MHz regulator loop was accepted";
  } catch (const InputError& ex) {
    EXPECT_NE(std::string(ex.what()).find("pdn.regulator.bandwidth_khz"), std::string::npos)
        << ex.what();
  }
}

TEST(PdnNetwork, Gtx480CalibrationTargets) {
  const PdnNetwork n = gtx480();
  const uint32_t ns = n.numSms();
  // A 3 A step on one SM: 2-5 % at its own node, under 40 % of that at the farthest SM.
  for (uint32_t sm = 0; sm < ns; ++sm) {
    std::vector<double> amps(ns, 0.0);
    amps[sm] = 3.0;
    const std::vector<double> w = worstStepDrops(n, amps, 3000);
    EXPECT_GE(w[sm], 0.02) << "SM " << sm;
    EXPECT_LE(w[sm], 0.05) << "SM " << sm;
    uint32_t far = sm;
    int farDist = -1;
    for (uint32_t k = 0; k < ns; ++k) {
      const int r = int(n.nodeOfSm(k) / n.cols()) - int(n.nodeOfSm(sm) / n.cols());
      const int c = int(n.nodeOfSm(k) % n.cols()) - int(n.nodeOfSm(sm) % n.cols());
      if (std::abs(r) + std::abs(c) > farDist) farDist = std::abs(r) + std::abs(c), far = k;
    }
    EXPECT_LT(w[far], 0.4 * w[sm]) << "SM " << sm << ", farthest SM " << far;
  }
  // A 3 A step on every SM (45 A): 8-12 %.
  const std::vector<double> all = worstStepDrops(n, std::vector<double>(ns, 3.0), 3000);
  const double worstAll = *std::max_element(all.begin(), all.end());
  EXPECT_GE(worstAll, 0.08);
  EXPECT_LE(worstAll, 0.12);
  // DC drop at 65 A (SGEMM's average): at most 2.5 %.
  std::vector<double> amps(ns, 65.0 / ns), d(ns);
  PdnState s = n.steadyState(amps.data(), 0.0);
  n.step(s, amps.data(), 0.0, d.data());
  EXPECT_LE(*std::max_element(d.begin(), d.end()), 0.025);
  EXPECT_GT(*std::min_element(d.begin(), d.end()), 0.0);
}

// Seed 001 Fig. 9: the first-order droop needs every SM aligned to the cycle, the second-order
// droop tolerates tens of cycles of misalignment.
TEST(PdnNetwork, AlignmentSensitivity) {
  const PdnNetwork n = gtx480();
  const PdnConfig def;
  const double f1 = def.first_order.frequency_mhz * 1e6, f2 = def.second_order.frequency_mhz * 1e6;
  const double a0 = alignmentDroopPct(n, f1, 0, 5.0, 2.0, 1.0, 2100);
  const double a1 = alignmentDroopPct(n, f1, 1, 5.0, 2.0, 1.0, 2100);
  EXPECT_GE(a0, 2.5 * a1) << a0 << " % aligned, " << a1 << " % with one cycle of skew";
  const double b0 = alignmentDroopPct(n, f2, 0, 5.0, 2.0, 1.0, 2100);
  const double b20 = alignmentDroopPct(n, f2, 20, 5.0, 2.0, 1.0, 2100);
  const double b50 = alignmentDroopPct(n, f2, 50, 5.0, 2.0, 1.0, 2100);
  EXPECT_GE(b20, 0.8 * b0) << b0 << " % aligned, " << b20 << " % with 20 cycles of skew";
  EXPECT_LT(b50, 0.6 * b0) << b0 << " % aligned, " << b50 << " % with 50 cycles of skew";
  // The first-order frequency resonates harder than the second (seed 001: Z1 > Z2).
  EXPECT_GT(a0, b0);
  fmt::print(
      "alignment: 100 MHz {:.2f} % aligned, {:.2f} % skew 1; 1 MHz {:.2f} % aligned, "
      "{:.2f} % skew 20, {:.2f} % skew 50\n",
      a0, a1, b0, b20, b50);
}

TEST(PdnNetwork, SharedUncoreRail) {
  // Separate: the uncore current does not reach the SMs' network.
  {
    const PdnNetwork n = gtx480();
    std::vector<double> amps(n.numSms(), 0.0), d(n.numSms());
    PdnState s = n.steadyState(amps.data(), 50.0);
    n.step(s, amps.data(), 50.0, d.data());
    for (double x : d) EXPECT_EQ(x, 0.0);
  }
  // Shared, every node holding an SM: the uncore current is split over all of them.
  {
    const PdnNetwork n = gtx480({"pdn.uncore_rail=shared"}, 16);
    std::vector<double> zero(16, 0.0), share(16, 2.0), d1(16), d2(16);
    PdnState s1 = n.zeroState(), s2 = n.zeroState();
    for (int c = 0; c < 500; ++c) {
      n.step(s1, zero.data(), 32.0, d1.data());
      n.step(s2, share.data(), 0.0, d2.data());
      for (int k = 0; k < 16; ++k) ASSERT_NEAR(d1[size_t(k)], d2[size_t(k)], 1e-12);
    }
  }
  // Shared, 15 SMs: drawn at node 15, it drops the voltage most at its neighbours, SMs 11 and 14,
  // equally (the grid is symmetric about its diagonal).
  {
    const PdnNetwork n = gtx480({"pdn.uncore_rail=shared"});
    std::vector<double> zero(n.numSms(), 0.0);
    const std::vector<double> w = [&] {
      PdnState s = n.zeroState();
      std::vector<double> d(n.numSms()), worst(n.numSms(), 0.0);
      for (int c = 0; c < 2000; ++c) {
        n.step(s, zero.data(), 10.0, d.data());
        for (size_t k = 0; k < d.size(); ++k) worst[k] = std::max(worst[k], d[k]);
      }
      return worst;
    }();
    EXPECT_NEAR(w[11], w[14], 1e-9 * w[14]);
    for (uint32_t k = 0; k < n.numSms(); ++k)
      if (k != 11 && k != 14) {
        EXPECT_LT(w[k], w[14]) << "SM " << k;
      }
  }
}

TEST(PdnNetwork, LayoutErrorsNameTheGridKeys) {
  EXPECT_NE(errorOf([] {
              gtx480({"pdn.grid.rows=2", "pdn.grid.cols=4"});
            }).find("pdn.grid.rows, pdn.grid.cols, gpu.num_sms: 15 SMs do not fit the 2x4 grid"),
            std::string::npos);
  // A given row count alone: the columns follow (15 SMs in 2 rows of 8).
  EXPECT_EQ(gtx480({"pdn.grid.rows=2"}).numSms(), 15u);
  EXPECT_NE(errorOf([] {
              gtx480({"pdn.grid.sm_nodes=[0,1,2]"});
            }).find("pdn.grid.sm_nodes, gpu.num_sms: 3 nodes listed for 15 SMs"),
            std::string::npos);
  const std::string dup = errorOf(
      [] { loadPlatform("gtx480", {"pdn.grid.sm_nodes=[0,1,2,3,4,5,6,7,8,9,10,11,12,13,13]"}); });
  EXPECT_NE(dup.find("pdn.grid.sm_nodes"), std::string::npos) << dup;
  EXPECT_NE(dup.find("already holds an SM"), std::string::npos) << dup;
  const std::string range = errorOf(
      [] { loadPlatform("gtx480", {"pdn.grid.sm_nodes=[0,1,2,3,4,5,6,7,8,9,10,11,12,13,16]"}); });
  EXPECT_NE(range.find("pdn.grid.sm_nodes"), std::string::npos) << range;
  EXPECT_NE(range.find("is not a node of the 4x4 grid"), std::string::npos) << range;
  // A custom placement is honoured.
  const PdnNetwork n = gtx480({"pdn.grid.sm_nodes=[15,1,2,3,4,5,6,7,8,9,10,11,12,13,14]"});
  EXPECT_EQ(n.nodeOfSm(0), 15u);
  const std::string freq =
      errorOf([] { loadPlatform("gtx480", {"pdn.first_order.frequency_mhz=3"}); });
  EXPECT_NE(freq.find("pdn.first_order"), std::string::npos) << freq;
  const std::string pkg = errorOf([] { loadPlatform("gtx480", {"pdn.package=IV"}); });
  EXPECT_NE(pkg.find("pdn.package"), std::string::npos) << pkg;
  const std::string rail = errorOf([] { loadPlatform("gtx480", {"pdn.uncore_rail=split"}); });
  EXPECT_NE(rail.find("pdn.uncore_rail"), std::string::npos) << rail;
  // More series resistance than the damping q allows.
  const std::string dc = errorOf([] { gtx480({"pdn.second_order.dc_resistance_mohm=5"}); });
  EXPECT_NE(dc.find("pdn.second_order.dc_resistance_mohm"), std::string::npos) << dc;
}

// step()'s plain loops (AVX where the processor has it) give Eigen's arithmetic to the last bit,
// on a network with fewer than 128 state entries (gtx480: one sum per drop) and on the mesh
// platforms' larger ones (Eigen sums 16 columns at a time there).
TEST(PdnNetwork, ModalStepIsEigensArithmeticToTheBit) {
  std::vector<std::pair<std::string, PdnNetwork>> nets;
  for (const char* name : {"gtx480", "stream-8x8", "stream-11x11"})
    nets.emplace_back(name, networkOf(name));
  for (const auto& [name, n] : nets) {
    ASSERT_TRUE(n.usesModalForm()) << name;
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> amps(0.5, 8.0);
    std::vector<double> u(n.numSms(), 2.0), a(n.numSms()), b(n.numSms());
    PdnState x = n.steadyState(u.data(), 1.0), y = x;
    for (int c = 0; c < 6000; ++c) {  // past one refresh of the inputs' part (4096 updates)
      for (auto& v : u)
        if (rng() % 4 == 0) v = amps(rng);
      const double uncore = c % 50 < 25 ? 1.0 : 3.0;
      n.step(x, u.data(), uncore, a.data());
      n.stepModalEigen(y, u.data(), uncore, b.data());
      ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(double)))
          << name << ", cycle " << c;
    }
  }
}

// The modal form (what step() uses) against the dense discretised step, on every built-in
// package variant, the shared rail, and the 110-SM grid of stream-11x11, under currents that
// change every cycle and stretches where they stay constant (the modal step's cached inputs).
TEST(PdnNetwork, ModalStepMatchesDenseStep) {
  std::vector<std::pair<std::string, PdnNetwork>> nets;
  for (const char* pkg : {"default", "I", "II", "III"})
    nets.emplace_back(pkg, gtx480({fmt::format("pdn.package={}", pkg)}));
  nets.emplace_back("shared rail", gtx480({"pdn.uncore_rail=shared"}));
  nets.emplace_back("stream-11x11", networkOf("stream-11x11"));
  for (const auto& [name, n] : nets) {
    ASSERT_TRUE(n.usesModalForm()) << name;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> amps01(0.5, 8.0);
    std::vector<double> amps(n.numSms(), 2.0), dm(n.numSms()), dd(n.numSms());
    PdnState a = n.steadyState(amps.data(), 1.0), b = a;
    double worst = 0, peak = 0;
    for (int c = 0; c < 20000; ++c) {
      if ((c / 500) % 2 == 0)  // 500 cycles of changing currents, then 500 constant
        for (auto& x : amps) x = amps01(rng);
      n.step(a, amps.data(), 1.0, dm.data());
      n.stepDense(b, amps.data(), 1.0, dd.data());
      for (size_t k = 0; k < dm.size(); ++k) {
        worst = std::max(worst, std::abs(dm[k] - dd[k]));
        peak = std::max(peak, std::abs(dd[k]));
      }
    }
    EXPECT_LT(worst, 1e-9 * peak) << name;
    fmt::print("{}: modal against dense step, worst difference {:.2e} V of a {:.2e} V peak\n", name,
               worst, peak);
  }
}

// Several cycles at once give what as many single steps give, to the last bit: with the output
// rows in whole tiles (15 SMs: 16 rows) and a half tile (6 SMs: 8 rows, 7: 8), the product's
// column blocks (stream-11x11 has more than 128 state entries), runs of any length, currents that
// change every cycle (the inputs' part is computed afresh every 4,096 updates) or hold.
TEST(PdnNetwork, StepCyclesGivesTheStepsBitForBit) {
  std::vector<std::pair<std::string, PdnNetwork>> nets;
  nets.emplace_back("gtx480", gtx480());
  nets.emplace_back("gtx480, 6 SMs", gtx480({}, 6));
  nets.emplace_back("gtx480, 3 SMs, shared rail", gtx480({"pdn.uncore_rail=shared"}, 3));
  nets.emplace_back("stream-11x11", networkOf("stream-11x11"));
  for (const auto& [name, n] : nets) {
    ASSERT_TRUE(n.usesModalForm()) << name;
    const uint32_t ns = n.numSms();
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> amps01(0.5, 8.0);
    std::uniform_int_distribution<uint32_t> runLength(1, 11);
    std::vector<double> start(ns, 2.0);
    PdnState one = n.steadyState(start.data(), 1.0), many = one;
    uint64_t cycle = 0, compared = 0;
    while (cycle < 6000) {
      const uint32_t run = runLength(rng);
      std::vector<double> amps(size_t(run) * (ns + 3), 0.0);  // a stride past the SMs
      for (uint32_t i = 0; i < run; ++i) {
        const bool changing = (cycle + i) / 700 % 2 == 0;
        for (uint32_t s = 0; s < ns; ++s)
          amps[size_t(i) * (ns + 3) + s] =
              changing ? amps01(rng) : (i ? amps[size_t(i - 1) * (ns + 3) + s] : 3.0);
      }
      std::vector<double> dOne(size_t(run) * ns), dMany(size_t(run) * ns);
      for (uint32_t i = 0; i < run; ++i)
        n.step(one, &amps[size_t(i) * (ns + 3)], 1.0, &dOne[size_t(i) * ns]);
      n.stepCycles(many, run, amps.data(), ns + 3, 1.0, dMany.data());
      ASSERT_EQ(0, std::memcmp(dOne.data(), dMany.data(), dOne.size() * sizeof(double)))
          << name << ", cycles " << cycle << " to " << cycle + run;
      compared += run;
      cycle += run;
    }
    ASSERT_EQ(0, std::memcmp(one.q.data(), many.q.data(), size_t(one.q.size()) * sizeof(double)))
        << name;
    EXPECT_EQ(compared, cycle);
  }
}

// Not a check: the cost of one step on this machine, for the record.
TEST(PdnNetwork, StepTiming) {
  const PdnNetwork n = gtx480();
  const size_t ns = n.numSms();
  const int steps = 200000;
  // The best of five runs (other processes share the machine), in ns per cycle.
  const auto best = [&](const std::function<void()>& run) {
    double fastest = 1e300;
    for (int r = 0; r < 5; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      run();
      const auto t1 = std::chrono::steady_clock::now();
      fastest =
          std::min(fastest, std::chrono::duration<double, std::nano>(t1 - t0).count() / steps);
    }
    return fastest;
  };
  // Per step: the modal form with one SM's current changing every cycle, with every current
  // constant (an idle GPU), and the dense matrix.
  std::vector<double> amps(ns, 5.0), d(ns);
  const auto time = [&](bool changing, bool dense) {
    return best([&] {
      PdnState s = n.zeroState();
      for (int i = 0; i < steps; ++i) {
        if (changing) amps[size_t(i) % ns] = 3.0 + (i & 7);
        if (dense) {
          n.stepDense(s, amps.data(), 0.0, d.data());
        } else {
          n.step(s, amps.data(), 0.0, d.data());
        }
      }
    });
  };
  const double changing = time(true, false), constant = time(false, false),
               dense = time(true, true);
  // stepCycles() over runs of 16 cycles, with the same currents.
  std::vector<double> run(16 * ns, 5.0), drops(run.size());
  // changed: how many SMs' currents change per cycle (0, 1, or all of them: a busy kernel).
  const auto timeCycles = [&](size_t changed) {
    return best([&] {
      PdnState s = n.zeroState();
      for (int i = 0; i < steps; i += 16) {
        std::copy(run.end() - long(ns), run.end(), run.begin());
        for (size_t k = 0; k < 16; ++k) {
          if (k > 0) std::copy(&run[(k - 1) * ns], &run[k * ns], &run[k * ns]);
          for (size_t c = 0; c < changed; ++c)
            run[k * ns + (size_t(i) + k + c) % ns] = 3.0 + double((size_t(i) + k + c) & 7);
        }
        n.stepCycles(s, 16, run.data(), ns, 0.0, drops.data());
      }
    });
  };
  const double cyclesChanging = timeCycles(1), cyclesConstant = timeCycles(0),
               cyclesBusy = timeCycles(ns);
  fmt::print(
      "PdnNetwork::step: {:.0f} ns per step with changing currents, {:.0f} ns with constant "
      "ones, dense matrix {:.0f} ns; stepCycles: {:.0f} and {:.0f} ns per cycle, {:.0f} ns with "
      "every current changing ({} states, {} modes, {} SMs)\n",
      changing, constant, dense, cyclesChanging, cyclesConstant, cyclesBusy, n.numStates(),
      n.numModes(), ns);
  EXPECT_TRUE(std::isfinite(d[0]) && std::isfinite(drops[0]));
}

// pdn.step_cycles: the network steps once per N cycles with each SM's mean current. For currents
// held over each window the drop at a window's end is the every-cycle network's to rounding
// (both are exact for piecewise-constant currents), and the cycles inside a window get the
// drops interpolated linearly between the window ends. A launch's last, partial window is
// stepped with the idle current after its end.
TEST(PdnStepCycles, WindowEndsMatchTheEveryCycleNetworkAndTheCyclesBetweenAreInterpolated) {
  PlatformConfig cfg = test::platform();
  cfg.pdn.monitor.trace_every = 1;
  const uint32_t sms = cfg.gpu.num_sms, n = 4, cycles = 103;  // 25 whole windows and 3 cycles
  const double idle = 2.0;
  auto amps = [&](uint64_t c, uint32_t sm) {  // held over each window of n from cycle 1
    return idle + 1.5 * double(((c - 1) / n + sm) % 3);
  };
  // Each cycle's volts per SM (trace rows of one cycle).
  auto run = [&](uint32_t stepCycles) {
    cfg.pdn.step_cycles = stepCycles;
    // A context of its own: the Pdn is a module, and SystemC elaborates a context once.
    sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
    sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
    Pdn p("pdn", cfg, idle);
    p.beginLaunch(1, 0.0);
    for (uint64_t c = 1; c <= cycles; ++c)
      for (uint32_t sm = 0; sm < sms; ++sm) p.onSmCurrent(sm, c, 1, amps(c, sm));
    p.endLaunchAt(cycles + 1);
    const VoltageReport r = p.finishLaunch();
    EXPECT_EQ(p.lateReports(), 0u);
    EXPECT_EQ(r.traceStart.size(), size_t(cycles));
    return r.traceMinVolts;
  };
  const std::vector<double> every = run(1), stepped = run(n);
  ASSERT_EQ(every.size(), size_t(cycles) * sms);
  ASSERT_EQ(stepped.size(), every.size());
  const double supply = cfg.power.supply_voltage;
  // The steady state of the idle current, before the first cycle.
  PdnNetwork net(cfg.pdn, cfg.gpu.clocks.core_mhz * 1e6, sms);
  PdnState st = net.steadyState(std::vector<double>(sms, idle).data(), 0.0);
  std::vector<double> node(net.numNodes());
  net.nodeDrops(st, std::vector<double>(sms, idle).data(), 0.0, node.data());
  double moved = 0;
  for (uint32_t sm = 0; sm < sms; ++sm) {
    double before = supply - node[net.nodeOfSm(sm)];
    for (uint32_t w = 0; w < cycles / n; ++w) {
      const double after = every[size_t(w * n + n - 1) * sms + sm];
      EXPECT_NEAR(stepped[size_t(w * n + n - 1) * sms + sm], after, 1e-12)
          << "sm " << sm << " window " << w;
      for (uint32_t j = 0; j < n; ++j)
        EXPECT_NEAR(stepped[size_t(w * n + j) * sms + sm],
                    before + double(j + 1) / n * (after - before), 1e-12)
            << "sm " << sm << " cycle " << w * n + j + 1;
      moved = std::max(moved, std::abs(after - before));
      before = after;
    }
    // The partial window: its three cycles lie on the way to the drop of a window whose fourth
    // cycle draws the idle current; that differs from the every-cycle network's at cycle 103.
    const size_t last = size_t(cycles - 1) * sms + sm;
    EXPECT_NE(stepped[last], every[last]);
  }
  EXPECT_GT(moved, 1e-4);  // the currents do move the voltage between windows
}
