// The voltage monitor's droop analysis on synthetic voltage traces: event counting per threshold
// and emergencies, the first-/second-order split of seed 001 (a 2nd-order Butterworth low-pass
// at 10 MHz run forward and backward, so |H|^2 = 1 / (1 + (f/fc)^4)), the spatial clusters on a
// 4x4 grid of 15 SMs, attribution shares, the histogram, the worst-droop window and the trace.
//
// Expected splits follow from the filter: a symmetric dip d(t) much shorter than the filter's
// response keeps about area(d) x h(0) of low-passed drop at its peak, with h(0) = pi/sqrt(2) x
// fc/fs = 0.0317 per cycle at 10 MHz and 700 MHz; a dip much slower than 10 MHz passes whole.
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/monitor_config.hpp"
#include "pdn/droop_analyzer.hpp"

using namespace gpusc;
using pdn::DroopAnalyzer;
using pdn::DroopClass;
using pdn::DroopEvent;
using pdn::GridLayout;

namespace {

constexpr uint32_t kSms = 15;
constexpr double kSupply = 1.0;
constexpr double kClock = 700e6;
constexpr double kPi = 3.14159265358979323846;

GridLayout grid() { return GridLayout{4, 4, {}}; }  // SM s at row s / 4, column s % 4

// Droop fraction of SM s at cycle c.
using DroopFn = std::function<double(uint64_t c, uint32_t s)>;

// Samples cycles [from, to) with V = supply (1 - droop) and I = c + 1000 s.
void run(DroopAnalyzer& a, uint64_t from, uint64_t to, const DroopFn& droop) {
  std::vector<double> v(kSms), i(kSms);
  for (uint64_t c = from; c < to; ++c) {
    for (uint32_t s = 0; s < kSms; ++s) {
      v[s] = kSupply * (1.0 - droop(c, s));
      i[s] = double(c) + 1000.0 * s;
    }
    a.sample(c, v.data(), i.data());
  }
}

// A fast dip (~90 MHz): A cos^2(pi x / 8) for |x| <= 4 around `centre`, peak A at the centre.
double fast(uint64_t c, uint64_t centre, double a) {
  const double x = double(c) - double(centre);
  if (std::abs(x) > 4.0) return 0.0;
  const double k = std::cos(kPi * x / 8.0);
  return a * k * k;
}

// A slow dip (1 MHz at 700 MHz): A cos^2(pi x / 700) for |x| <= 350.
double slow(uint64_t c, uint64_t centre, double a) {
  const double x = double(c) - double(centre);
  if (std::abs(x) > 350.0) return 0.0;
  const double k = std::cos(kPi * x / 700.0);
  return a * k * k;
}

// A rectangular dip of depth A over [from, from + len).
double rect(uint64_t c, uint64_t from, uint64_t len, double a) {
  return c >= from && c < from + len ? a : 0.0;
}

// A triangular dip, depth A at `centre`, zero `half` cycles away.
double tri(uint64_t c, uint64_t centre, double half, double a) {
  const double x = std::abs(double(c) - double(centre));
  return x >= half ? 0.0 : a * (1.0 - x / half);
}

DroopAnalyzer make(const VoltageMonitorConfig& cfg = VoltageMonitorConfig{}) {
  return DroopAnalyzer(cfg, kSms, kSupply, kClock, grid());
}

// The only event of a run (fails the test otherwise).
DroopEvent only(const DroopAnalyzer& a) {
  EXPECT_EQ(a.events().size(), 1u);
  return a.events().empty() ? DroopEvent{} : a.events().front();
}

}  // namespace

// ---- configuration ------------------------------------------------------------------------------

TEST(MonitorConfig, DefaultsAndValidation) {
  VoltageMonitorConfig d = config::load<VoltageMonitorConfig>("", "m.yaml", {});
  EXPECT_EQ(d.thresholds_pct, (std::vector<double>{4.0, 5.0, 8.0}));
  EXPECT_DOUBLE_EQ(d.dominance, 0.6);
  EXPECT_EQ(d.window_before, 1024u);

  auto bad = [](const std::string& yaml, const std::string& key) {
    try {
      config::load<VoltageMonitorConfig>(yaml, "m.yaml", {});
      ADD_FAILURE() << yaml << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  bad("thresholds_pct: [5, 4]\n", "thresholds_pct");
  bad("thresholds_pct: []\n", "thresholds_pct");
  bad("thresholds_pct: [4, 4]\n", "thresholds_pct");
  bad("thresholds_pct: [-1]\n", "thresholds_pct");
  bad("hysteresis_pct: 4\n", "hysteresis_pct");
  bad("dominance: 0.4\n", "dominance");
  bad("see_fraction: 1.5\n", "see_fraction");
  bad("histogram_bin_pct: 0\n", "histogram_bin_pct");
  bad("lowpass_mhz: 0\n", "lowpass_mhz");
  bad("window_befor: 3\n", "window_befor");
}

TEST(DroopAnalyzer, RejectsBadSetup) {
  VoltageMonitorConfig cfg;
  cfg.lowpass_mhz = 400.0;  // above the 350 MHz Nyquist limit of a 700 MHz clock
  EXPECT_THROW(make(cfg), InputError);
  cfg = VoltageMonitorConfig{};
  cfg.thresholds_pct = {8.0, 5.0};  // a configuration built in code is checked too
  EXPECT_THROW(make(cfg), InputError);
  EXPECT_THROW(DroopAnalyzer(VoltageMonitorConfig{}, kSms, kSupply, kClock, GridLayout{3, 4, {}}),
               InputError);  // 15 SMs on 12 nodes
  GridLayout l{4, 4, std::vector<uint32_t>(kSms, 0)};
  l.nodeOfSm[3] = 16;
  EXPECT_THROW(DroopAnalyzer(VoltageMonitorConfig{}, kSms, kSupply, kClock, l), InputError);

  DroopAnalyzer a = make();
  std::vector<double> v(kSms, kSupply), i(kSms, 0.0);
  a.sample(5, v.data(), i.data());
  EXPECT_THROW(a.sample(7, v.data(), i.data()), InternalError);  // cycles must be consecutive
  a.finish();
  EXPECT_THROW(a.sample(6, v.data(), i.data()), InternalError);
}

// ---- temporal classification
// ---------------------------------------------------------------------

TEST(DroopAnalyzer, FastDipIsFirstOrder) {
  DroopAnalyzer a = make();
  run(a, 0, 5000, [](uint64_t c, uint32_t s) { return s == 3 ? fast(c, 2000, 0.06) : 0.0; });
  a.finish();
  const DroopEvent e = only(a);
  EXPECT_EQ(e.worstCycle, 2000u);
  EXPECT_EQ(e.worstSm, 3u);
  EXPECT_NEAR(e.droopPct, 6.0, 1e-9);
  EXPECT_NEAR(e.firstOrderPct + e.secondOrderPct, e.droopPct, 1e-12);
  // area 4 A cycles x h(0) 0.0317 = 0.127 A low-passed: the first-order part is ~87 %.
  EXPECT_NEAR(e.secondOrderPct / e.droopPct, 0.127, 0.03);
  EXPECT_EQ(e.cls, DroopClass::FirstOrder);
  EXPECT_FALSE(e.truncated);
}

TEST(DroopAnalyzer, SlowDipIsSecondOrder) {
  DroopAnalyzer a = make();
  run(a, 0, 5000, [](uint64_t c, uint32_t) { return slow(c, 2000, 0.06); });
  a.finish();
  const DroopEvent e = only(a);
  EXPECT_EQ(e.worstCycle, 2000u);
  EXPECT_NEAR(e.droopPct, 6.0, 1e-9);
  // A 1 MHz dip passes a 10 MHz low-pass whole: (1 MHz / 10 MHz)^4 = 1e-4.
  EXPECT_GT(e.secondOrderPct / e.droopPct, 0.98);
  EXPECT_EQ(e.cls, DroopClass::SecondOrder);
}

TEST(DroopAnalyzer, FastOnSlowOfSimilarSizeIsBalanced) {
  DroopAnalyzer a = make();
  run(a, 0, 5000, [](uint64_t c, uint32_t s) {
    return s == 7 ? slow(c, 2000, 0.03) + fast(c, 2000, 0.03) : slow(c, 2000, 0.03);
  });
  a.finish();
  const DroopEvent e = only(a);
  EXPECT_NEAR(e.droopPct, 6.0, 1e-9);
  EXPECT_EQ(e.worstSm, 7u);
  // first-order part ~ 0.87 x 3 % of 6 %.
  EXPECT_NEAR(e.firstOrderPct / e.droopPct, 0.87 * 0.5, 0.04);
  EXPECT_EQ(e.cls, DroopClass::Balanced);
}

TEST(DroopAnalyzer, StaticIrDropIsSecondOrder) {
  // A constant 5 % drop for the whole run: one event that never ends; the low-pass passes DC.
  DroopAnalyzer a = make();
  run(a, 0, 3000, [](uint64_t c, uint32_t) { return 0.05 + (c == 1500 ? 1e-4 : 0.0); });
  a.finish();
  const DroopEvent e = only(a);
  EXPECT_EQ(e.start, 0u);
  EXPECT_EQ(e.end, 2999u);
  EXPECT_EQ(e.worstCycle, 1500u);
  EXPECT_NEAR(e.secondOrderPct, 5.0, 0.01);
  EXPECT_EQ(e.cls, DroopClass::SecondOrder);
}

// ---- counting
// ------------------------------------------------------------------------------------

TEST(DroopAnalyzer, CountsEventsPerThresholdAndEmergencies) {
  DroopAnalyzer a = make();  // thresholds 4, 5, 8 %; emergency below 92 %
  run(a, 0, 12000, [](uint64_t c, uint32_t s) {
    if (s != 0) return 0.0;
    return rect(c, 1000, 50, 0.045) + rect(c, 4000, 50, 0.055) + rect(c, 7000, 50, 0.09);
  });
  a.finish();
  EXPECT_EQ(a.eventCount(), 3u);
  EXPECT_EQ(a.eventsAbove(0), 3u);
  EXPECT_EQ(a.eventsAbove(1), 2u);
  EXPECT_EQ(a.eventsAbove(2), 1u);
  EXPECT_EQ(a.cyclesAbove(0), 150u);
  EXPECT_EQ(a.cyclesAbove(1), 100u);
  EXPECT_EQ(a.cyclesAbove(2), 50u);
  EXPECT_EQ(a.emergencies(), 1u);
  EXPECT_EQ(a.emergencyCycles(), 50u);
  EXPECT_EQ(a.largeCount(), 1u);
  ASSERT_EQ(a.events().size(), 3u);
  EXPECT_EQ(a.events()[1].start, 4000u);
  EXPECT_EQ(a.events()[1].end, 4049u);
  EXPECT_EQ(a.events()[1].worstCycle, 4000u);  // the first cycle of the flat bottom
  EXPECT_NEAR(a.worstDroopPct(), 9.0, 1e-9);
  EXPECT_NEAR(a.minVoltage(), 0.91, 1e-12);
  EXPECT_EQ(a.worstCycle(), 7000u);
  EXPECT_EQ(a.worstSm(), 0u);
  // Every event above a threshold has exactly one class.
  for (size_t k = 0; k < 3; ++k)
    EXPECT_EQ(a.classCount(k, DroopClass::FirstOrder) + a.classCount(k, DroopClass::SecondOrder) +
                  a.classCount(k, DroopClass::Balanced),
              a.eventsAbove(k));

  const nlohmann::json j = a.summary();
  EXPECT_EQ(j["events"], 3);
  EXPECT_EQ(j["thresholds"][2]["events"], 1);
  EXPECT_EQ(j["thresholds"][0]["cycles_above"], 150);
  EXPECT_EQ(j["emergencies"]["events"], 1);
  EXPECT_EQ(j["large"]["events"], 1);
}

TEST(DroopAnalyzer, HysteresisKeepsOneEventAndEmergenciesAreExcursions) {
  DroopAnalyzer a = make();
  run(a, 0, 4000, [](uint64_t c, uint32_t s) {
    if (s != 2) return 0.0;
    if (c >= 500 && c < 600) return c % 2 ? 0.041 : 0.039;  // around 4 %, never below 3.75 %
    // one event with two separate trips below 92 %
    return rect(c, 2000, 20, 0.09) + rect(c, 2020, 20, 0.06) + rect(c, 2040, 20, 0.09);
  });
  a.finish();
  EXPECT_EQ(a.eventCount(), 2u);
  ASSERT_EQ(a.events().size(), 2u);
  EXPECT_EQ(a.events()[0].start, 501u);
  EXPECT_EQ(a.events()[0].end, 599u);
  EXPECT_EQ(a.events()[1].start, 2000u);
  EXPECT_EQ(a.events()[1].end, 2059u);
  EXPECT_EQ(a.emergencies(), 2u);
  EXPECT_EQ(a.emergencyCycles(), 40u);
}

TEST(DroopAnalyzer, HistogramBins) {
  DroopAnalyzer a = make();  // 0.25 % bins
  const double depth[] = {0.041, 0.043, 0.044, 0.056};
  run(a, 0, 10000, [&](uint64_t c, uint32_t s) {
    double d = 0.0;
    for (int k = 0; k < 4; ++k) d += rect(c, 1000 + 2000 * uint64_t(k), 30, depth[k]);
    return s == 1 ? d : 0.0;
  });
  a.finish();
  const auto& h = a.histogram();
  uint64_t total = 0;
  for (uint64_t n : h) total += n;
  EXPECT_EQ(total, 4u);
  EXPECT_EQ(h.at(16), 1u);  // [4.00, 4.25)
  EXPECT_EQ(h.at(17), 2u);  // [4.25, 4.50)
  EXPECT_EQ(h.at(22), 1u);  // [5.50, 5.75)

  std::ostringstream os;
  a.writeHistogramCsv(os);
  EXPECT_EQ(os.str().substr(0, os.str().find('\n')), "lo_pct,hi_pct,count");
  EXPECT_NE(os.str().find("\n4.25,4.5,2\n"), std::string::npos) << os.str();
  EXPECT_EQ(a.summary()["histogram"]["bins"].size(), 3u);
}

TEST(DroopAnalyzer, MaxEventsLimitsTheListNotTheCounts) {
  VoltageMonitorConfig cfg;
  cfg.max_events = 2;
  DroopAnalyzer a = make(cfg);
  run(a, 0, 2000, [](uint64_t c, uint32_t s) {
    return s == 0 && c % 200 >= 100 && c % 200 < 110 ? 0.05 : 0.0;
  });
  a.finish();
  EXPECT_EQ(a.eventCount(), 10u);
  EXPECT_EQ(a.events().size(), 2u);
  EXPECT_EQ(a.summary()["events_listed"], 2);
}

// ---- spatial
// -------------------------------------------------------------------------------------

TEST(DroopAnalyzer, DipOnOneSmIsLocalClusterOne) {
  DroopAnalyzer a = make();
  // SM 6 reaches 0.7 x the worst: below the 0.75 see fraction.
  run(a, 0, 3000, [](uint64_t c, uint32_t s) {
    return s == 5 ? tri(c, 1000, 20, 0.06) : s == 6 ? tri(c, 1000, 20, 0.042) : 0.0;
  });
  a.finish();
  const DroopEvent e = only(a);
  EXPECT_EQ(e.worstSm, 5u);
  EXPECT_EQ(e.smsSeeing, 1u);
  EXPECT_EQ(e.cluster, 1u);
  EXPECT_TRUE(e.local);
  EXPECT_EQ(a.localCount(0), 1u);
}

TEST(DroopAnalyzer, DipOnTwoByTwoBlockIsLocalClusterFour) {
  DroopAnalyzer a = make();
  // SMs 5, 6, 9, 10: rows 1-2, columns 1-2 (a block not aligned to even rows and columns).
  run(a, 0, 3000, [](uint64_t c, uint32_t s) {
    if (s == 10) return tri(c, 1000, 20, 0.06);
    if (s == 5 || s == 6 || s == 9) return tri(c, 1000, 20, 0.05);
    return s == 0 ? tri(c, 1000, 20, 0.02) : 0.0;  // SM 0 does not see it
  });
  a.finish();
  const DroopEvent e = only(a);
  EXPECT_EQ(e.worstSm, 10u);
  EXPECT_EQ(e.smsSeeing, 4u);
  EXPECT_EQ(e.cluster, 4u);
  EXPECT_TRUE(e.local);
}

TEST(DroopAnalyzer, DipOnEverySmIsGlobal) {
  DroopAnalyzer a = make();
  run(a, 0, 3000, [](uint64_t c, uint32_t s) { return tri(c, 1000, 200, 0.06 - 0.001 * s); });
  a.finish();
  const DroopEvent e = only(a);
  EXPECT_EQ(e.worstSm, 0u);
  EXPECT_EQ(e.smsSeeing, kSms);
  EXPECT_EQ(e.cluster, 0u);
  EXPECT_FALSE(e.local);
  EXPECT_EQ(a.localCount(0), 0u);
  EXPECT_EQ(a.summary()["thresholds"][0]["global"], 1);
}

TEST(DroopAnalyzer, DipOnTwoDistantSmsIsGlobal) {
  DroopAnalyzer a = make();
  run(a, 0, 3000, [](uint64_t c, uint32_t s) {
    return s == 0 || s == 10 ? tri(c, 1000, 20, 0.06) : 0.0;  // (0,0) and (2,2)
  });
  a.finish();
  const DroopEvent e = only(a);
  EXPECT_EQ(e.smsSeeing, 2u);
  EXPECT_EQ(e.cluster, 0u);
  EXPECT_FALSE(e.local);
}

TEST(DroopAnalyzer, AttributionSharesAtTheWorstCycle) {
  DroopAnalyzer a = make();
  // SM 5 (row 1, column 1) dips to 9 % at cycle 1000. At the worst cycle its drop comes 50 % from
  // itself, 10 % each from SMs 6, 9, 10 (block rows 1-2, columns 1-2), 5 % from SM 0 and 1.5 %
  // from each of the 10 other SMs; at every other cycle all of it from itself.
  std::vector<double> v(kSms), i(kSms, 1.0), contrib(kSms * kSms);
  uint64_t wanted = 0;
  for (uint64_t c = 0; c < 3000; ++c) {
    for (uint32_t s = 0; s < kSms; ++s)
      v[s] = kSupply * (1.0 - (s == 5 ? tri(c, 1000, 20, 0.09) : 0.0));
    a.sample(c, v.data(), i.data());
    wanted += a.wantsAttribution();
    const double drop = kSupply - v[5];
    std::fill(contrib.begin(), contrib.end(), 0.0);
    for (uint32_t src = 0; src < kSms; ++src) {
      double share = src == 5 ? 1.0 : 0.0;
      if (c == 1000) {
        share = src == 5                              ? 0.5
                : (src == 6 || src == 9 || src == 10) ? 0.1
                : src == 0                            ? 0.05
                                                      : 0.015;
      }
      contrib[src * kSms + 5] = share * drop;
      if (src != 5) contrib[src * kSms + src] += 0.01;  // drops at nodes other than SM 5's
    }
    a.attribute(contrib.data());
  }
  a.finish();
  EXPECT_EQ(wanted, 12u);  // cycles 989..1000 (droop > 4 %): each a new worst of the event
  const DroopEvent e = only(a);
  EXPECT_EQ(e.worstCycle, 1000u);
  ASSERT_TRUE(e.attributed);
  EXPECT_NEAR(e.shareSelf, 0.5, 1e-9);
  EXPECT_NEAR(e.shareCluster, 0.8, 1e-9);
  EXPECT_NEAR(e.shareAll, 1.0, 1e-9);
  const nlohmann::json j = a.summary()["large"]["classes"][pdn::toString(e.cls)];
  EXPECT_EQ(j["attributed"], 1);
  EXPECT_NEAR(j["mean_share_cluster"].get<double>(), 0.8, 1e-9);
}

// ---- traces
// --------------------------------------------------------------------------------------

TEST(DroopAnalyzer, WorstWindowIsCentredOnTheWorstDroop) {
  VoltageMonitorConfig cfg;
  cfg.window_before = 64;
  cfg.window_after = 32;
  DroopAnalyzer a = make(cfg);
  run(a, 0, 1000, [](uint64_t c, uint32_t s) {
    return s == 4 ? tri(c, 300, 10, 0.05) : s == 8 ? tri(c, 600, 10, 0.07) : 0.0;
  });
  // Complete once 32 cycles after the worst have arrived, before finish().
  const auto& w = a.worstWindow();
  ASSERT_EQ(w.length, 97u);
  EXPECT_EQ(w.firstCycle, 600u - 64u);
  for (uint32_t t = 0; t < w.length; ++t) {
    const uint64_t c = w.firstCycle + t;
    EXPECT_NEAR(w.volts[t * kSms + 8], kSupply * (1.0 - tri(c, 600, 10, 0.07)), 1e-12);
    EXPECT_DOUBLE_EQ(w.amps[t * kSms + 8], double(c) + 8000.0);
  }
  a.finish();
  std::ostringstream os;
  a.writeWorstWindowCsv(os);
  std::istringstream in(os.str());
  std::string line;
  int rows = -1;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 97);
  EXPECT_NE(os.str().find("\n600,0,"), std::string::npos);
}

TEST(DroopAnalyzer, WorstWindowCutByTheEndOfTheRun) {
  VoltageMonitorConfig cfg;
  cfg.window_before = 64;
  cfg.window_after = 64;
  DroopAnalyzer a = make(cfg);
  run(a, 10, 1000, [](uint64_t c, uint32_t s) { return s == 1 ? tri(c, 980, 10, 0.07) : 0.0; });
  a.finish();
  const auto& w = a.worstWindow();
  EXPECT_EQ(w.firstCycle, 980u - 64u);
  EXPECT_EQ(w.length, 64u + 20u);  // up to cycle 999
  EXPECT_NEAR(w.volts[64 * kSms + 1], 0.93, 1e-12);
}

TEST(DroopAnalyzer, TraceRowsHoldBinMinima) {
  VoltageMonitorConfig cfg;
  cfg.trace_every = 10;
  DroopAnalyzer a = make(cfg);
  auto d = [](uint64_t c, uint32_t s) { return 0.001 * double((c * 7 + s * 3) % 11); };
  run(a, 5, 48, d);  // bins [0,10) partly, ..., [40,50) partly
  a.finish();
  ASSERT_EQ(a.traceStart().size(), 5u);
  for (size_t r = 0; r < 5; ++r) {
    const uint64_t lo = std::max<uint64_t>(5, 10 * r), hi = std::min<uint64_t>(48, 10 * r + 10);
    EXPECT_EQ(a.traceStart()[r], 10 * r);
    EXPECT_EQ(a.traceCycles()[r], hi - lo);
    for (uint32_t s = 0; s < kSms; ++s) {
      double m = std::numeric_limits<double>::infinity();
      for (uint64_t c = lo; c < hi; ++c) m = std::min(m, kSupply * (1.0 - d(c, s)));
      EXPECT_DOUBLE_EQ(a.traceMinVolts()[r * kSms + s], m) << "row " << r << " SM " << s;
    }
  }
  std::ostringstream os;
  a.writeTraceCsv(os);
  EXPECT_EQ(os.str().substr(0, 30), "start_cycle,cycles,min_v,sm0_v");

  VoltageMonitorConfig none;
  none.trace_every = 0;
  DroopAnalyzer b = make(none);
  run(b, 0, 100, d);
  b.finish();
  EXPECT_TRUE(b.traceStart().empty());
}

// ---- run edges
// -----------------------------------------------------------------------------------

TEST(DroopAnalyzer, DroopsAtTheStartAndEndOfTheRun) {
  DroopAnalyzer a = make();
  // Starts inside a slow dip (worst at cycle 10), ends 20 cycles after a fast dip's worst and
  // inside a second fast dip whose worst is the last cycle.
  run(a, 0, 3000, [](uint64_t c, uint32_t s) {
    if (s != 0) return 0.0;
    return slow(c, 10, 0.06) + fast(c, 2979, 0.07) + (c >= 2996 ? 0.015 * double(c - 2995) : 0.0);
  });
  // Nothing classified before finish: the last events' windows are still open.
  EXPECT_EQ(a.eventCount(), 1u);
  a.finish();
  ASSERT_EQ(a.eventCount(), 3u);
  const auto& ev = a.events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].start, 0u);
  EXPECT_EQ(ev[0].worstCycle, 10u);
  EXPECT_TRUE(ev[0].truncated);
  EXPECT_EQ(ev[0].cls, DroopClass::SecondOrder);
  EXPECT_EQ(ev[1].worstCycle, 2979u);
  EXPECT_TRUE(ev[1].truncated);
  EXPECT_EQ(ev[1].cls, DroopClass::FirstOrder);
  EXPECT_EQ(ev[2].worstCycle, 2999u);
  EXPECT_EQ(ev[2].end, 2999u);
  EXPECT_TRUE(ev[2].truncated);
  EXPECT_NEAR(ev[2].droopPct, 6.0, 1e-9);
  for (const DroopEvent& e : ev) {
    EXPECT_NEAR(e.firstOrderPct + e.secondOrderPct, e.droopPct, 1e-12);
    EXPECT_GE(e.secondOrderPct, 0.0);
  }
  std::ostringstream os;
  a.writeEventsCsv(os);
  EXPECT_EQ(os.str().substr(0, os.str().find('\n')),
            "start,end,worst_cycle,worst_sm,droop_pct,first_order_pct,second_order_pct,class,"
            "sms_seeing,cluster,scope,share_self,share_cluster,share_all,truncated,rise2_w,"
            "rise3_w,rise4_w");
  // No power estimates were given: the predictor features are 0.
  EXPECT_NE(os.str().find(",second-order,1,1,local,,,,1,0,0,0\n"), std::string::npos) << os.str();
}

TEST(DroopAnalyzer, FinishWithoutSamples) {
  DroopAnalyzer a = make();
  a.finish();
  a.finish();
  EXPECT_EQ(a.eventCount(), 0u);
  EXPECT_DOUBLE_EQ(a.minVoltage(), kSupply);
  EXPECT_DOUBLE_EQ(a.worstDroopPct(), 0.0);
  EXPECT_EQ(a.worstWindow().length, 0u);
  EXPECT_EQ(a.summary()["events"], 0);
}

TEST(DroopAnalyzer, LeadRisesAreTheLargestPredictorRisesBeforeTheWorstCycle) {
  // The worst SM's estimated power in the lead_cycles (10) before its worst cycle (2000):
  // rise over k cycles at c = E(c) - min(E(c-1) .. E(c-k+1)). The spikes at 1980 (before the
  // lead window) and at 2001 (after the worst cycle) must not count.
  DroopAnalyzer a = make();
  std::vector<double> v(kSms), i(kSms, 5.0), e(kSms, 1.0);
  const std::map<uint64_t, double> est = {{1980, 50.0}, {1994, 0.2}, {1995, 0.5}, {1996, 2.0},
                                          {1997, 7.0},  {1998, 7.0}, {2001, 20.0}};
  for (uint64_t c = 0; c < 5000; ++c) {
    for (uint32_t s = 0; s < kSms; ++s) v[s] = kSupply * (1.0 - (s == 3 ? fast(c, 2000, 0.06) : 0));
    const auto it = est.find(c);
    e[3] = it == est.end() ? 1.0 : it->second;
    a.sample(c, v.data(), i.data(), e.data());
  }
  a.finish();
  const DroopEvent ev = only(a);
  EXPECT_EQ(ev.worstSm, 3u);
  EXPECT_DOUBLE_EQ(ev.rise[0], 5.0);  // 7 - 2 at 1997
  EXPECT_DOUBLE_EQ(ev.rise[1], 6.5);  // 7 - min(2, 0.5) at 1997
  EXPECT_DOUBLE_EQ(ev.rise[2], 6.8);  // 7 - min(2, 0.5, 0.2) at 1997
}

TEST(DroopAnalyzer, LeadRisesOfAnEventThatLastsLongerThanTheBuffers) {
  // SM 3 droops 5% from cycle 1500 to 9000 with a 7% spike at 2000: one event whose end comes
  // far more than window_before + window_after cycles after its worst cycle. Its features are
  // still the rises before cycle 2000.
  DroopAnalyzer a = make();
  std::vector<double> v(kSms), i(kSms, 5.0), e(kSms, 1.0);
  const std::map<uint64_t, double> est = {{1996, 2.0}, {1997, 7.0}, {5000, 40.0}};
  for (uint64_t c = 0; c < 12000; ++c) {
    for (uint32_t s = 0; s < kSms; ++s) {
      const double plateau = (s == 3 && c >= 1500 && c < 9000) ? 0.05 : 0.0;
      v[s] = kSupply * (1.0 - (s == 3 && c == 2000 ? 0.07 : plateau));
    }
    const auto it = est.find(c);
    e[3] = it == est.end() ? 1.0 : it->second;
    a.sample(c, v.data(), i.data(), e.data());
  }
  a.finish();
  const DroopEvent ev = only(a);
  EXPECT_EQ(ev.worstCycle, 2000u);
  EXPECT_EQ(ev.end, 8999u);
  EXPECT_DOUBLE_EQ(ev.rise[0], 5.0);  // 7 - 2 at 1997
  EXPECT_DOUBLE_EQ(ev.rise[1], 6.0);  // 7 - min(2, 1)
  EXPECT_DOUBLE_EQ(ev.rise[2], 6.0);
}
