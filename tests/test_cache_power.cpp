// Drowsy and divided-word-line (DWL) cache lines (seed 000; models/cache/line_power.*,
// docs/cache-power.md). Expectations come from the configuration and the definitions:
//   - in isolation (an L1 or L2 between a scripted requester and a fixed-latency next level),
//     the line-cycles, drowsy line-cycles, wake-ups and histograms of a pseudo-random access
//     sequence equal a cycle-by-cycle reference computed here from the touches a LineObserver
//     saw (hits and fills, with their frames and cycles);
//   - crafted sequences land in the histogram buckets their definitions name;
//   - sub-word-lines enabled by half and whole warps, at the L1 and (through the demand mask)
//     at the L2;
//   - on a whole GPU, a pointer chase's per-load cycles grow by exactly the wake latency.
#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cache/cache_core.hpp"
#include "cache/l1_data_cache.hpp"
#include "cache/l2_slice.hpp"
#include "cache/line_power.hpp"
#include "common/address_map.hpp"
#include "common/error.hpp"
#include "common/protocol_checker.hpp"
#include "common/rng.hpp"
#include "common/strings.hpp"
#include "gpu/device.hpp"
#include "gpu/timing_engine.hpp"
#include "support/ptx_harness.hpp"
#include "support/tlm_harness.hpp"

using namespace gpusc;
using namespace gpusc::cache;
using namespace gpusc::test;

namespace {

constexpr uint32_t kNextLevel = 100;  // cycles the RecordingTarget takes to answer

PlatformConfig gtx480(const std::vector<std::string>& sets = {}) {
  return loadPlatform("gtx480", sets);
}

Request req(uint64_t cycle, uint64_t addr, AccessKind kind, uint32_t bytes) {
  Request r;
  r.cycle = cycle;
  r.addr = addr;
  r.kind = kind;
  r.bytes = bytes;
  return r;
}

// The bytes 4 x lane .. 4 x lane + 3 of every lane in `lanes` (a warp's 4-byte accesses to one
// 128-byte line).
ByteMask laneBytes(const std::vector<uint32_t>& lanes) {
  ByteMask m{};
  for (uint32_t l : lanes)
    for (uint32_t b = 4 * l; b < 4 * l + 4; ++b) m[b / 64] |= 1ull << (b % 64);
  return m;
}

// Touches (hits and fills) with their frame (set x ways + way) and cycle; store: a store hit.
struct Touch {
  size_t frame;
  uint64_t cycle;
  bool store = false;
};

class TouchRecorder : public LineObserver {
 public:
  explicit TouchRecorder(uint32_t ways) : ways_(ways) {}
  std::vector<Touch> touches;
  void onAccess(uint32_t set, uint32_t way, uint64_t cycle, const ByteMask&, bool isWrite,
                bool hit) override {
    if (hit) touches.push_back(Touch{size_t(set) * ways_ + way, cycle, isWrite});
  }
  void onFill(uint32_t set, uint32_t way, uint64_t cycle) override {
    touches.push_back(Touch{size_t(set) * ways_ + way, cycle});
  }
  void onEvict(uint32_t, uint32_t, uint64_t, bool) override {}

 private:
  uint32_t ways_;
};

// The histogram buckets, by their definitions (not the model's bit arithmetic).
size_t countBucket(uint64_t n) {  // 0; [1,2) -> 1; [2,4) -> 2; ...; [16384, inf) -> 15
  if (n == 0) return 0;
  size_t k = 1;
  while (k < 15 && n >= (uint64_t(1) << k)) ++k;
  return k;
}
size_t gapBucket(uint64_t g) {  // [0,2) -> 0; [2,4) -> 1; [4,8) -> 2; ...; [32768, inf) -> 15
  size_t k = 0;
  while (k < 15 && g >= (uint64_t(2) << k)) ++k;
  return k;
}

// What the policy implies over the window [from, to): every frame's state cycle by cycle (ON
// in the cycle of a touch and the onCycles - 1 after it, DROWSY otherwise, and DROWSY before
// its first touch), wake-ups (touches of a DROWSY frame) and the histograms.
struct Expected {
  uint64_t drowsy = 0, wakeups = 0, storeWakeups = 0, touches = 0;
  std::array<uint64_t, 16> counts{}, gaps{};
};

Expected reference(const std::vector<Touch>& touches, size_t frames, uint64_t onCycles,
                   uint64_t from, uint64_t to) {
  std::vector<std::vector<uint64_t>> per(frames);
  std::vector<std::vector<bool>> stores(frames);
  for (const Touch& t : touches) {
    per[t.frame].push_back(t.cycle);
    stores[t.frame].push_back(t.store);
  }
  Expected e;
  for (size_t f = 0; f < frames; ++f) {
    const std::vector<uint64_t>& v = per[f];
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    size_t seen = 0;  // touches at or before the cycle
    for (uint64_t c = from; c < to; ++c) {
      while (seen < v.size() && v[seen] <= c) ++seen;
      e.drowsy += (seen == 0 || c >= v[seen - 1] + onCycles) ? 1 : 0;
    }
    uint64_t inWindow = 0;
    for (size_t k = 0; k < v.size(); ++k) {
      if (v[k] < from || v[k] >= to) continue;
      ++inWindow;
      if (k == 0 || v[k] >= v[k - 1] + onCycles) {
        ++e.wakeups;
        e.storeWakeups += stores[f][k] ? 1 : 0;
      }
      if (k > 0) ++e.gaps[gapBucket(v[k] - v[k - 1])];
    }
    e.touches += inWindow;
    ++e.counts[countBucket(inWindow)];
  }
  return e;
}

// ---- benches -----------------------------------------------------------------------------------

struct L1Bench {
  PayloadPool pool;
  Clock clk;
  ScriptedInitiator sm;
  ProtocolChecker smSide;
  L1DataCache l1;
  ProtocolChecker memorySide;
  RecordingTarget memory;

  explicit L1Bench(const PlatformConfig& cfg)
      : clk(cfg.gpu.clocks.core_mhz),
        sm("sm", clk),
        smSide("sm_side"),
        l1("l1d", 0, cfg, pool),
        memorySide("memory_side"),
        memory("memory", clk, kNextLevel) {
    bindThrough(smSide, sm.socket, l1.sm_socket);
    bindThrough(memorySide, l1.memory_socket, memory.socket);
  }
  void run() {
    sc_core::sc_start();
    smSide.finish();
    memorySide.finish();
    EXPECT_TRUE(sm.allAnswered());
    EXPECT_TRUE(smSide.clean()) << join(smSide.violations(), "\n");
    EXPECT_TRUE(memorySide.clean()) << join(memorySide.violations(), "\n");
  }
};

struct L2Bench {
  PayloadPool pool;
  Clock clk;
  ScriptedInitiator noc;
  ProtocolChecker nocSide;
  L2Slice l2;
  ProtocolChecker dramSide;
  RecordingTarget dram;

  explicit L2Bench(const PlatformConfig& cfg)
      : clk(cfg.gpu.clocks.l2_mhz),
        noc("noc", clk),
        nocSide("noc_side"),
        l2("l2", 0, cfg, pool),
        dramSide("dram_side"),
        dram("dram", clk, kNextLevel) {
    bindThrough(nocSide, noc.socket, l2.noc_socket);
    bindThrough(dramSide, l2.dram_socket, dram.socket);
  }
  void run() {
    sc_core::sc_start();
    nocSide.finish();
    dramSide.finish();
    EXPECT_TRUE(noc.allAnswered());
    EXPECT_TRUE(nocSide.clean()) << join(nocSide.violations(), "\n");
    EXPECT_TRUE(dramSide.clean()) << join(dramSide.violations(), "\n");
  }
};

// Two phases of pseudo-random loads and stores over a few lines of two sets (more lines than
// ways: hits, misses, merges, evictions, write-evict invalidations and refills), with a quiet
// gap between them in which the window opens; the window closes after the last answer.
// writesData: store hits write the line and wait for it (the L2; the L1 here is write-evict and
// forwards stores at once).
template <class Bench, class Cache>
void checkAgainstReference(const CacheConfig& c, const CachePowerConfig& p, bool writesData,
                           Bench& b, Cache& cache, ScriptedInitiator& requester) {
  const uint64_t onCycles = p.drowsy.policy == "timeout" ? p.drowsy.timeout_cycles : 1;
  ASSERT_NE(p.drowsy.policy, "none");
  TouchRecorder rec(c.ways);
  cache.core().setObserver(&rec);
  Rng rng(11);
  std::vector<uint64_t> lines;
  for (uint64_t i = 0; i < 2 * (c.ways + 2); ++i)
    lines.push_back(((i / 2) * c.sets + 3 + 7 * (i % 2)) * c.line_bytes);
  constexpr uint64_t kPhase = 8000, kGap = 2000;
  for (uint64_t phase : {uint64_t(0), kPhase + kGap}) {
    uint64_t t = phase;
    while (t < phase + kPhase) {
      const uint64_t line = lines[rng.below(uint32_t(lines.size()))];
      const bool store = rng.below(5) == 0;
      requester.add(req(t, line, store ? AccessKind::Store : AccessKind::Load, c.line_bytes));
      t += rng.below(3) == 0 ? rng.below(4) : rng.below(300);
    }
  }
  const Clock& clk = cache.clock();
  const uint64_t from = kPhase + kGap / 2;  // nothing in flight
  sc_core::sc_start(clk.period() * double(from));
  ASSERT_EQ(clk.now(), from);
  ASSERT_TRUE(cache.idle());
  cache.resetStats();  // statistics start again: a new power window opens now
  EXPECT_EQ(cache.powerCounters().lookups, 0u);
  b.run();
  const uint64_t to = clk.now() + 1;
  cache.closePowerWindow(to);

  const CachePowerCounters& k = cache.powerCounters();
  const size_t frames = size_t(c.sets) * c.ways;
  const Expected e = reference(rec.touches, frames, onCycles, from, to);
  ASSERT_GT(e.touches, 60u);
  ASSERT_GT(e.drowsy, 0u);
  EXPECT_EQ(k.frames, frames);
  EXPECT_EQ(k.windowCycles, to - from);
  EXPECT_EQ(k.lineCycles, frames * (to - from));
  EXPECT_EQ(k.drowsyLineCycles, e.drowsy);
  EXPECT_EQ(k.wakeups, e.wakeups);
  EXPECT_EQ(k.wakeStallCycles,
            (e.wakeups - (writesData ? 0 : e.storeWakeups)) * p.drowsy.wake_latency);
  EXPECT_EQ(k.hiddenWakeups, 0u);
  EXPECT_EQ(k.accessCountHistogram, e.counts);
  EXPECT_EQ(k.interAccessHistogram, e.gaps);
  EXPECT_EQ(k.fillSubwords, k.fills * (c.line_bytes / p.subword_bytes));
  // Lookups, reads, writes and fills against the cache's own statistics.
  const nlohmann::json s = cache.statsJson();
  const auto stat = [&](const char* path) {
    return s[nlohmann::json::json_pointer(path)].template get<uint64_t>();
  };
  EXPECT_EQ(k.lookups, stat("/accesses"));
  EXPECT_EQ(k.fills, stat("/fills"));
  EXPECT_EQ(k.fills, e.touches - stat("/hits"));
  EXPECT_EQ(k.reads, stat("/by_kind/load/hits"));
  EXPECT_EQ(k.writes, writesData ? stat("/by_kind/store/hits") : 0u);
  ASSERT_GT(stat("/by_kind/store/hits"), 0u);
  // The JSON in the statistics carries the same counters.
  const nlohmann::json& j = s["power_states"];
  EXPECT_EQ(j["drowsy_line_cycles"].template get<uint64_t>(), e.drowsy);
  EXPECT_DOUBLE_EQ(j["drowsy_fraction"].template get<double>(),
                   double(e.drowsy) / double(frames * (to - from)));
}

}  // namespace

// ---- units
// ---------------------------------------------------------------------------------------

TEST(CachePowerUnits, EnabledSubwords) {
  const ByteMask none{}, all = firstBytes(128);
  for (uint32_t s : {1u, 2u, 4u, 8u, 32u, 64u, 128u}) {
    EXPECT_EQ(enabledSubwords(none, s), 0u) << s;
    EXPECT_EQ(enabledSubwords(all, s), 128u / s) << s;
  }
  // One byte in each of two 4-byte sub-words, and a 4-byte run straddling two of them.
  EXPECT_EQ(enabledSubwords(ByteMask{(1ull << 1) | (1ull << 62), 0, 0, 0}, 4), 2u);
  EXPECT_EQ(enabledSubwords(ByteMask{0xfull << 2, 0, 0, 0}, 4), 2u);
  EXPECT_EQ(enabledSubwords(ByteMask{0, 0, 1ull << 63, 0}, 128), 1u);
  EXPECT_EQ(enabledSubwords(ByteMask{1, 0, 1, 0}, 256), 1u);
  // Even lanes of a warp, 4 bytes each: half the 4-byte sub-words, every 8-byte one.
  std::vector<uint32_t> even;
  for (uint32_t l = 0; l < 32; l += 2) even.push_back(l);
  EXPECT_EQ(enabledSubwords(laneBytes(even), 4), 16u);
  EXPECT_EQ(enabledSubwords(laneBytes(even), 8), 16u);
  EXPECT_EQ(enabledSubwords(laneBytes(even), 16), 8u);
}

TEST(CachePowerUnits, BucketNamesFollowTheirBounds) {
  for (uint64_t n : {0ull, 1ull, 2ull, 3ull, 4ull, 7ull, 8ull, 16383ull, 16384ull, 1ull << 40})
    EXPECT_EQ(accessCountBucket(n), countBucket(n)) << n;
  for (uint64_t g : {0ull, 1ull, 2ull, 3ull, 4ull, 127ull, 128ull, 32767ull, 32768ull, 1ull << 40})
    EXPECT_EQ(interAccessBucket(g), gapBucket(g)) << g;
  EXPECT_EQ(accessCountBucketName(0), "A0");
  EXPECT_EQ(accessCountBucketName(1), "A1");
  EXPECT_EQ(accessCountBucketName(3), "A4");
  EXPECT_EQ(accessCountBucketName(15), "A16384");
  EXPECT_EQ(interAccessBucketName(0), "0-1");
  EXPECT_EQ(interAccessBucketName(1), "2-3");
  EXPECT_EQ(interAccessBucketName(14), "16384-32767");
  EXPECT_EQ(interAccessBucketName(15), "32768+");
}

TEST(CachePowerUnits, BadConfigurationNamesTheKey) {
  const PlatformConfig cfg =
      gtx480({"power.l2.drowsy.policy=timeout", "power.l2.drowsy.lookahead=true"});
  try {
    LinePower(cfg.power.l2, cfg.l2.slice, "power.l2", false);
    ADD_FAILURE() << "look-ahead on the L2 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("power.l2.drowsy.lookahead"), std::string::npos);
  }
  EXPECT_THROW(gtx480({"power.l1d.subword_bytes=256"}), InputError);  // refused on loading
  PlatformConfig wide = gtx480();
  wide.power.l1d.subword_bytes = 256;  // a configuration built in code
  try {
    LinePower(wide.power.l1d, wide.sm.l1d, "power.l1d", true);
    ADD_FAILURE() << "sub-words wider than the line accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("power.l1d.subword_bytes"), std::string::npos);
  }
}

// A unified L1's ways lent to shared memory hold live shared data: never drowsy while lent, so
// only the L1's own frames count drowsy cycles.
TEST(CachePowerUnits, WaysLentToSharedMemoryAreNeverDrowsy) {
  const PlatformConfig cfg =
      gtx480({"power.l1d.drowsy.policy=timeout", "power.l1d.drowsy.timeout_cycles=10"});
  const CacheConfig& c = cfg.sm.l1d;
  const uint64_t frames = uint64_t(c.sets) * c.ways;
  LinePower p(cfg.power.l1d, c, "power.l1d", true);
  p.setLentWaysFrom(c.ways - 1);  // the last way of every set lent
  p.closeWindow(100);
  EXPECT_EQ(p.counters().lineCycles, frames * 100);
  EXPECT_EQ(p.counters().drowsyLineCycles, (frames - c.sets) * 100);  // untouched: drowsy
  EXPECT_EQ(p.counters().lentLineCycles, uint64_t(c.sets) * 100);
  p.beginWindow(100);
  p.setLentWaysFrom(~0u);  // nothing lent
  p.closeWindow(200);
  EXPECT_EQ(p.counters().drowsyLineCycles, frames * 100);
  EXPECT_EQ(p.counters().lentLineCycles, 0u);
}

// A window that starts later clips older history, and line states outlive windows.
TEST(CachePowerUnits, WindowsClipHistoryAndKeepLineStates) {
  const PlatformConfig cfg =
      gtx480({"power.l1d.drowsy.policy=timeout", "power.l1d.drowsy.timeout_cycles=10",
              "power.l1d.drowsy.wake_latency=3"});
  const CacheConfig& c = cfg.sm.l1d;
  const uint64_t frames = uint64_t(c.sets) * c.ways, N = 10, w = 3;
  LinePower p(cfg.power.l1d, c, "power.l1d", true);
  const ByteMask all = firstBytes(c.line_bytes);
  EXPECT_EQ(p.fill(0, 0, 5), w);                                            // never touched: drowsy
  EXPECT_EQ(p.hit(0, 0, 5 + N - 1, all, LinePower::Data::Read, true), 0u);  // still ON
  p.closeWindow(100);
  // [0, 100): frame (0,0) ON in [5, 5 + N - 1 + N), every other frame drowsy throughout.
  EXPECT_EQ(p.counters().drowsyLineCycles, frames * 100 - (2 * N - 1));
  EXPECT_EQ(p.counters().wakeups, 1u);
  // A new window from 20: the frame's last touch (at 14) keeps it ON until 24.
  p.beginWindow(20);
  EXPECT_TRUE(p.counters().drowsyLineCycles == 0 && p.counters().wakeups == 0);
  EXPECT_FALSE(p.drowsyAt(0, 0, 23));
  EXPECT_TRUE(p.drowsyAt(0, 0, 24));
  EXPECT_EQ(p.hit(0, 0, 30, all, LinePower::Data::Read, true), w);
  p.closeWindow(40);
  EXPECT_EQ(p.counters().lineCycles, frames * 20);
  // Frame (0,0): drowsy [24, 30), ON [30, 40); the others drowsy for all 20 cycles.
  EXPECT_EQ(p.counters().drowsyLineCycles, (frames - 1) * 20 + 6);
  // Touches in a closed window change the line but count nothing.
  const CachePowerCounters before = p.counters();
  EXPECT_EQ(p.hit(1, 0, 50, all, LinePower::Data::Read, true), w);
  EXPECT_EQ(p.counters().wakeups, before.wakeups);
  EXPECT_FALSE(p.drowsyAt(1, 0, 50));
  // Power-on forgets every line.
  p.powerOn(60);
  EXPECT_TRUE(p.drowsyAt(1, 0, 60));
  EXPECT_EQ(p.hit(1, 0, 61, all, LinePower::Data::Read, true), w);
}

// ---- caches in isolation
// -------------------------------------------------------------------------

TEST(CachePowerL1, DrowsyAfterAccessMatchesTheReference) {
  newSimulation();
  const PlatformConfig cfg =
      gtx480({"power.l1d.drowsy.policy=drowsy-after-access", "power.l1d.drowsy.wake_latency=2"});
  L1Bench b(cfg);
  checkAgainstReference(cfg.sm.l1d, cfg.power.l1d, false, b, b.l1, b.sm);
}

TEST(CachePowerL1, TimeoutMatchesTheReference) {
  newSimulation();
  const PlatformConfig cfg =
      gtx480({"power.l1d.drowsy.policy=timeout", "power.l1d.drowsy.timeout_cycles=150"});
  L1Bench b(cfg);
  checkAgainstReference(cfg.sm.l1d, cfg.power.l1d, false, b, b.l1, b.sm);
}

TEST(CachePowerL2, DrowsyAfterAccessMatchesTheReference) {
  newSimulation();
  const PlatformConfig cfg =
      gtx480({"memory.partitions=1", "power.l2.drowsy.policy=drowsy-after-access",
              "power.l2.drowsy.wake_latency=3"});
  L2Bench b(cfg);
  checkAgainstReference(cfg.l2.slice, cfg.power.l2, true, b, b.l2, b.noc);
}

TEST(CachePowerL2, TimeoutMatchesTheReference) {
  newSimulation();
  const PlatformConfig cfg = gtx480({"memory.partitions=1", "power.l2.drowsy.policy=timeout",
                                     "power.l2.drowsy.timeout_cycles=90"});
  L2Bench b(cfg);
  checkAgainstReference(cfg.l2.slice, cfg.power.l2, true, b, b.l2, b.noc);
}

// One line: a miss (the fill at D), then hits 1, 3, 100 and 40000 cycles apart.
TEST(CachePowerL1, CraftedSequenceLandsInItsBuckets) {
  newSimulation();
  const PlatformConfig cfg = gtx480();
  const CacheConfig& c = cfg.sm.l1d;
  L1Bench b(cfg);
  const uint64_t a = 5 * c.line_bytes, first = 2 * kNextLevel;
  b.sm.add(req(0, a, AccessKind::Load, c.line_bytes));  // fill at kNextLevel
  for (uint64_t t : {first, first + 1, first + 4, first + 104, first + 40104})
    b.sm.add(req(t, a, AccessKind::Load, c.line_bytes));
  b.run();
  const nlohmann::json open = b.l1.statsJson()["power_states"];  // as if closed now
  b.l1.closePowerWindow(b.clk.now() + 1);
  const nlohmann::json j = b.l1.statsJson()["power_states"];
  EXPECT_EQ(open, j);
  const nlohmann::json& gaps = j["inter_access_histogram"];
  const nlohmann::json& counts = j["access_count_histogram"];
  // Gaps: fill -> first hit kNextLevel (64-127), then 1, 3, 100, 40000.
  ASSERT_GE(kNextLevel, 64u);
  ASSERT_LT(kNextLevel, 128u);
  EXPECT_EQ(gaps["0-1"], 1u);
  EXPECT_EQ(gaps["2-3"], 1u);
  EXPECT_EQ(gaps["64-127"], 2u);
  EXPECT_EQ(gaps["32768+"], 1u);
  uint64_t gapTotal = 0, frameTotal = 0;
  for (const auto& v : gaps) gapTotal += v.get<uint64_t>();
  for (const auto& v : counts) frameTotal += v.get<uint64_t>();
  EXPECT_EQ(gapTotal, 5u);
  // Six touches of one frame (A4: 4-7); every other frame untouched (A0).
  const uint64_t frames = uint64_t(c.sets) * c.ways;
  EXPECT_EQ(counts["A4"], 1u);
  EXPECT_EQ(counts["A0"], frames - 1);
  EXPECT_EQ(frameTotal, frames);
  EXPECT_EQ(j["lookups"], 6u);
  EXPECT_EQ(j["reads"], 5u);
  EXPECT_EQ(j["fills"], 1u);
  // Policy none: nothing drowsy, nothing woken.
  EXPECT_EQ(j["drowsy_line_cycles"], 0u);
  EXPECT_EQ(j["wakeups"], 0u);
  EXPECT_EQ(j["line_cycles"], frames * j["window_cycles"].get<uint64_t>());
}

// Latencies in isolation: a load hit of a drowsy line is answered wake_latency later (less the
// look-ahead), a fill's waiters too; a store is not delayed.
TEST(CachePowerL1, WakeLatencyInTheAnswers) {
  const uint32_t w = 3;
  for (uint32_t lookahead : {0u, 1u, 5u}) {
    newSimulation();
    std::vector<std::string> sets{"power.l1d.drowsy.policy=drowsy-after-access",
                                  "power.l1d.drowsy.wake_latency=" + std::to_string(w)};
    if (lookahead > 0) {
      sets.push_back("power.l1d.drowsy.lookahead=true");
      sets.push_back("power.l1d.drowsy.lookahead_cycles=" + std::to_string(lookahead));
    }
    const PlatformConfig cfg = gtx480(sets);
    const CacheConfig& c = cfg.sm.l1d;
    const uint32_t H = c.hit_latency, hitWait = lookahead >= w ? 0 : w - lookahead;
    L1Bench b(cfg);
    const uint64_t a = 9 * c.line_bytes, gap = H + kNextLevel + 2 * w + 10;
    b.sm.add(req(0, a, AccessKind::Load, c.line_bytes));         // miss, fill of a drowsy frame
    b.sm.add(req(gap, a, AccessKind::Load, c.line_bytes));       // hit, drowsy again
    b.sm.add(req(2 * gap, a, AccessKind::Store, c.line_bytes));  // store hit (write-evict)
    b.run();
    const auto& o = b.sm.outcomes();
    EXPECT_EQ(o[0].answered - o[0].sent, kNextLevel + w + H) << "look-ahead " << lookahead;
    EXPECT_EQ(o[1].answered - o[1].sent, H + hitWait) << "look-ahead " << lookahead;
    EXPECT_EQ(o[2].answered - o[2].sent, kNextLevel) << "look-ahead " << lookahead;
    const CachePowerCounters& k = b.l1.powerCounters();
    EXPECT_EQ(k.wakeups, 3u);  // the fill, the load hit, the store hit
    EXPECT_EQ(k.hiddenWakeups, lookahead > 0 ? 2u : 0u);
    EXPECT_EQ(k.wakeStallCycles, w + hitWait);  // the store did not wait
    EXPECT_EQ(k.writes, 0u);                    // write-evict writes no data
  }
}

// ---- divided word lines
// --------------------------------------------------------------------------

// A warp of 16 active lanes (4 bytes each) enables half the sub-word-lines of a full warp's; its
// line fetch carries its bytes as the demand mask, which the L2 counts.
TEST(CachePowerDwl, HalfAWarpEnablesHalfTheSubwordLines) {
  std::vector<uint32_t> full, half;
  for (uint32_t l = 0; l < 32; ++l) {
    full.push_back(l);
    if (l % 2 == 0) half.push_back(l);
  }
  for (const auto* lanes : {&full, &half}) {
    newSimulation();
    const PlatformConfig cfg = gtx480({"power.l1d.dwl=true"});
    const CacheConfig& c = cfg.sm.l1d;
    const uint32_t perLine = c.line_bytes / cfg.power.l1d.subword_bytes;
    std::set<uint32_t> subwords;
    for (uint32_t l : *lanes) subwords.insert(4 * l / cfg.power.l1d.subword_bytes);
    L1Bench b(cfg);
    Request r = req(0, 12 * c.line_bytes, AccessKind::Load, c.line_bytes);
    r.byteMask = laneBytes(*lanes);
    b.sm.add(r);  // a miss
    r.cycle = 2 * (kNextLevel + c.hit_latency);
    b.sm.add(r);  // a hit
    b.run();
    const CachePowerCounters& k = b.l1.powerCounters();
    EXPECT_EQ(k.reads, 1u);
    EXPECT_EQ(k.readSubwords, subwords.size());
    EXPECT_DOUBLE_EQ(k.blockUtilisation(), double(subwords.size()) / perLine);
    EXPECT_EQ(k.fillSubwords, perLine);  // a fill writes the whole line
    ASSERT_EQ(b.memory.received().size(), 1u);
    EXPECT_EQ(b.memory.received()[0].demandMask, r.byteMask);
    EXPECT_DOUBLE_EQ(b.l1.statsJson()["power_states"]["read_block_utilisation"].get<double>(),
                     lanes == &full ? 1.0 : 0.5);

    // The L2 sees the L1's whole-line fetch: its demand mask decides what it counts.
    newSimulation();
    const PlatformConfig l2cfg = gtx480({"memory.partitions=1"});
    const CacheConfig& l2c = l2cfg.l2.slice;
    ASSERT_EQ(l2c.line_bytes, c.line_bytes);
    L2Bench l2(l2cfg);
    Request f = req(0, 12 * l2c.line_bytes, AccessKind::Load, l2c.line_bytes);
    f.byteMask = firstBytes(l2c.line_bytes);
    f.demandMask = r.byteMask;
    l2.noc.add(f);
    f.cycle = 2 * (kNextLevel + l2c.hit_latency);
    l2.noc.add(f);  // a hit
    f.cycle *= 2;
    f.demandMask = ByteMask{};  // none: the byte mask counts
    l2.noc.add(f);
    l2.run();
    const CachePowerCounters& k2 = l2.l2.powerCounters();
    const uint32_t perL2Line = l2c.line_bytes / l2cfg.power.l2.subword_bytes;
    EXPECT_EQ(k2.reads, 2u);
    EXPECT_EQ(k2.readSubwords, subwords.size() + perL2Line);
    EXPECT_DOUBLE_EQ(k2.blockUtilisation(),
                     double(subwords.size() + perL2Line) / double(2 * perL2Line));
  }
}

// ---- a whole GPU
// ---------------------------------------------------------------------------------

namespace {

// The GTX480 platform with every clock at the core clock (L2 cycles are core cycles).
PlatformConfig sameClocks(std::vector<std::string> sets) {
  std::vector<std::string> all{"gpu.clocks.interconnect_mhz=700", "gpu.clocks.l2_mhz=700",
                               "gpu.clocks.dram_mhz=700"};
  all.insert(all.end(), sets.begin(), sets.end());
  return loadPlatform("gtx480", all);
}

struct Chase {
  double perLoad = 0;     // cycles of one dependent load
  uint64_t touches = 0;   // hits and fills of the last launch in the L1s (the L2s with `l2`)
  uint64_t loadHits = 0;  // of which load hits
  uint64_t wakeups = 0;   // of the last launch
  uint64_t hidden = 0;
};

// The tests above leave the current SystemC context with a running simulation and its time
// resolution set; the timing engine sets its own in the context current when the first one is
// made (it makes new contexts itself after that). Under ctest each test runs alone.
void contextForTheFirstDevice() {
  static bool done = false;
  if (done) return;
  done = true;
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
}

// A one-node pointer chase (every load reads the same 8 bytes) of K loads a loop, I loops: the
// per-load cycles [T(K2,I2) - T(K2,I1) - T(K1,I2) + T(K1,I1)] / ((I2 - I1)(K2 - K1)) cancel
// start-up, instruction fetch and the loop (tests/test_memory_system.cpp).
Chase chase(const PlatformConfig& cfg, bool l2) {
  contextForTheFirstDevice();
  Device dev(cfg, ExecMode::Timing);
  const DevPtr node = dev.malloc(256);
  dev.copyToDevice(node, &node, sizeof node);
  const DevPtr out = dev.malloc(8);
  constexpr int kK1 = 2, kK2 = 4;
  constexpr uint32_t kI1 = 2, kI2 = 4;
  const Kernel* kernels[2] = {
      &dev.loadModule(test::chaseKernel(kK1), "chase2.ptx").kernel("chase"),
      &dev.loadModule(test::chaseKernel(kK2), "chase4.ptx").kernel("chase")};
  auto T = [&](int k, uint32_t iters) {
    dev.launch(*kernels[k == kK2], {1}, {1}, 0, KernelArgs().ptr(node).u32(iters).ptr(out));
    return double(dev.launches().back().timing->cycles);
  };
  T(kK1, 1);  // warm-up: kernels, parameters and the node in the caches
  T(kK2, 1);
  const double t22 = T(kK2, kI2), t21 = T(kK2, kI1), t12 = T(kK1, kI2), t11 = T(kK1, kI1);
  Chase c;
  c.perLoad = (t22 - t21 - t12 + t11) / (double(kI2 - kI1) * double(kK2 - kK1));
  const nlohmann::json& totals = dev.launches().back().timing->memory[l2 ? "l2" : "l1d"]["totals"];
  c.touches = totals["hits"].get<uint64_t>() + totals["fills"].get<uint64_t>();
  c.loadHits = totals["by_kind"]["load"]["hits"].get<uint64_t>();
  c.wakeups = totals["power_states"]["wakeups"].get<uint64_t>();
  c.hidden = totals["power_states"]["hidden_wakeups"].get<uint64_t>();
  return c;
}

std::vector<std::string> drowsy(const std::string& cache, uint32_t w,
                                std::vector<std::string> more = {}) {
  more.push_back("power." + cache + ".drowsy.policy=drowsy-after-access");
  more.push_back("power." + cache + ".drowsy.wake_latency=" + std::to_string(w));
  return more;
}

}  // namespace

TEST(CachePowerGpu, WakeLatencyAddsToEveryL1HitOfAChase) {
  const PlatformConfig cfg = sameClocks({});
  const Chase base = chase(cfg, false);
  EXPECT_GE(base.perLoad, cfg.sm.l1d.hit_latency);  // every load hits the L1
  EXPECT_LT(base.perLoad, cfg.sm.l1d.hit_latency + cfg.l2.slice.hit_latency);
  EXPECT_EQ(base.wakeups, 0u);
  const Chase none = chase(sameClocks({"power.l1d.drowsy.policy=none"}), false);
  EXPECT_EQ(none.perLoad, base.perLoad);
  for (uint32_t w : {1u, 2u}) {
    const Chase d = chase(sameClocks(drowsy("l1d", w)), false);
    EXPECT_EQ(d.perLoad, base.perLoad + w) << "wake_latency " << w;
    // Every access finds its line drowsy since its previous one.
    EXPECT_GT(d.loadHits, 0u);
    EXPECT_EQ(d.wakeups, d.touches);
    EXPECT_EQ(d.hidden, 0u);
  }
  // The look-ahead hides what it reaches.
  const Chase hidden = chase(
      sameClocks(drowsy(
          "l1d", 2, {"power.l1d.drowsy.lookahead=true", "power.l1d.drowsy.lookahead_cycles=2"})),
      false);
  EXPECT_EQ(hidden.perLoad, base.perLoad);
  EXPECT_EQ(hidden.wakeups, hidden.touches);
  EXPECT_EQ(hidden.hidden, hidden.loadHits);
  const Chase partly = chase(
      sameClocks(drowsy(
          "l1d", 2, {"power.l1d.drowsy.lookahead=true", "power.l1d.drowsy.lookahead_cycles=1"})),
      false);
  EXPECT_EQ(partly.perLoad, base.perLoad + 1);
}

TEST(CachePowerGpu, WakeLatencyAddsToEveryL2HitOfAChase) {
  const PlatformConfig cfg = sameClocks({"sm.l1d.enabled=false"});
  const Chase base = chase(cfg, true);
  EXPECT_GE(base.perLoad, cfg.l2.slice.hit_latency);  // every load hits the L2
  EXPECT_LT(base.perLoad, cfg.l2.slice.hit_latency + cfg.memory.controller.latency);
  const Chase d = chase(sameClocks(drowsy("l2", 2, {"sm.l1d.enabled=false"})), true);
  EXPECT_EQ(d.perLoad, base.perLoad + 2);
  EXPECT_GT(d.loadHits, 0u);
  EXPECT_EQ(d.wakeups, d.touches);
  // A timeout longer than the loads' spacing keeps the node's line ON: no cost, and no load
  // wakes a line (other lines, touched once a launch, may).
  const Chase t = chase(
      sameClocks({"sm.l1d.enabled=false", "power.l2.drowsy.policy=timeout",
                  "power.l2.drowsy.wake_latency=2",
                  "power.l2.drowsy.timeout_cycles=" + std::to_string(uint64_t(base.perLoad) * 4)}),
      true);
  EXPECT_EQ(t.perLoad, base.perLoad);
  EXPECT_LE(t.wakeups, t.touches - t.loadHits);
}

// A warp of 16 threads on a whole GPU: A, then B (the same L1 set, one way: A leaves the L1),
// then A again (an L1 miss that hits the L2: its fetch's demand mask is what the L2 counts),
// then A once more (an L1 hit), each load's address depending on the previous load's value.
TEST(CachePowerGpu, HalfWarpsHalveTheSubwordLinesOfBothCaches) {
  const std::string ptx = test::module(R"(
.visible .entry dwl(.param .u64 a, .param .u64 b, .param .u64 out)
{
  .reg .b64 %rd<10>;
  .reg .b32 %r<6>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4];
  cvt.u64.u32 %rd5, %r2;
  add.u64 %rd6, %rd2, %rd3;
  add.u64 %rd6, %rd6, %rd5;
  ld.global.u32 %r3, [%rd6];
  cvt.u64.u32 %rd5, %r3;
  add.u64 %rd7, %rd4, %rd5;
  ld.global.u32 %r4, [%rd7];
  cvt.u64.u32 %rd5, %r4;
  add.u64 %rd7, %rd4, %rd5;
  ld.global.u32 %r5, [%rd7];
  ld.param.u64 %rd8, [out];
  add.u64 %rd8, %rd8, %rd3;
  st.global.u32 [%rd8], %r5;
  ret;
}
)");
  const PlatformConfig cfg = sameClocks({"sm.l1d.ways=1"});
  const CacheConfig& l1 = cfg.sm.l1d;
  const uint32_t perLine = l1.line_bytes / cfg.power.l1d.subword_bytes;
  ASSERT_EQ(cfg.l2.slice.line_bytes, l1.line_bytes);
  contextForTheFirstDevice();
  for (uint32_t threads : {32u, 16u}) {
    Device dev(cfg, ExecMode::Timing);
    const uint64_t span = uint64_t(l1.sets) * l1.line_bytes;  // B: A's L1 set
    const DevPtr region = dev.malloc(3 * span);
    const DevPtr a = (region + span - 1) / span * span, b = a + span;
    const std::vector<uint8_t> zeros(2 * span, 0);
    dev.copyToDevice(a, zeros.data(), zeros.size());
    const DevPtr out = dev.malloc(4 * 32);
    const Kernel& k = dev.loadModule(ptx, "dwl.ptx").kernel("dwl");
    dev.launch(k, {1}, {threads}, 0, KernelArgs().ptr(a).ptr(b).ptr(out));
    const nlohmann::json& mem = dev.launches().back().timing->memory;
    const uint32_t slice = AddressMap(cfg).slice(a);
    const nlohmann::json& p1 = mem["l1d"]["totals"]["power_states"];
    const nlohmann::json& p2 = mem["l2"]["totals"]["power_states"];
    const uint64_t enabled = threads * 4 / cfg.power.l1d.subword_bytes;
    // L1: one hit (the last load); L2: one read hit (the third load).
    EXPECT_EQ(p1["reads"], 1u) << threads;
    EXPECT_EQ(p1["read_subwords"], enabled) << threads;
    EXPECT_EQ(p2["reads"], 1u) << threads;
    EXPECT_EQ(p2["read_subwords"], enabled) << threads;
    const double utilisation = double(enabled) / perLine;  // 1 for 32 threads, 0.5 for 16
    gpu::Gpu& g = dev.timingEngine()->gpu();
    EXPECT_DOUBLE_EQ(g.l1(0).powerCounters().blockUtilisation(), utilisation) << threads;
    EXPECT_DOUBLE_EQ(g.l2(slice).powerCounters().blockUtilisation(), utilisation) << threads;
    EXPECT_DOUBLE_EQ(
        mem["l2"]["per_slice"][slice]["power_states"]["read_block_utilisation"].get<double>(),
        utilisation)
        << threads;
    // Seed 000 Table 1's utilisation: the active threads of the warps whose requests (loads,
    // the L1's fetches for them, the store) reach each cache.
    EXPECT_GT(p1["warp_requests"].get<uint64_t>(), 0u);
    EXPECT_GT(p2["warp_requests"].get<uint64_t>(), 0u);
    EXPECT_DOUBLE_EQ(p1["thread_utilisation"].get<double>(), threads / 32.0) << threads;
    EXPECT_DOUBLE_EQ(p2["thread_utilisation"].get<double>(), threads / 32.0) << threads;
  }
}

// Every L2 access carries the bytes it needs: instruction fetches and constant loads (which fill
// whole lines of their caches) enable every sub-word-line, so no read enables none.
TEST(CachePowerGpu, InstructionAndConstantFetchesEnableWholeLines) {
  const std::string ptx = test::module(R"(
.visible .entry k(.param .u64 out)
{
  .reg .b64 %rd<4>;
  .reg .b32 %r<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
)");
  // One CTA on SM 0 brings the kernel's code and parameters into the L2; in the second launch
  // SM 1 (whose own caches are cold) reads them there.
  const PlatformConfig cfg = loadPlatform("gtx480");
  Device dev(cfg, ExecMode::Timing);
  const Kernel& k = dev.loadModule(ptx, "k.ptx").kernel("k");
  const DevPtr out = dev.malloc(4 * 64);
  dev.launch(k, {1}, {32}, 0, KernelArgs().ptr(out));
  dev.launch(k, {2}, {32}, 0, KernelArgs().ptr(out));
  const nlohmann::json& l2 = dev.launches().back().timing->memory["l2"]["totals"];
  const nlohmann::json& p2 = l2["power_states"];
  const uint64_t fetches = l2["by_kind"]["ifetch"]["hits"].get<uint64_t>();
  const uint64_t consts = l2["by_kind"]["const"]["hits"].get<uint64_t>();
  ASSERT_GT(fetches, 0u);  // SM 1's instruction and parameter lines hit in the L2
  ASSERT_GT(consts, 0u);
  EXPECT_EQ(p2["reads"].get<uint64_t>(), fetches + consts);
  const uint32_t w = cfg.power.l2.subword_bytes;
  EXPECT_EQ(p2["read_subwords"].get<uint64_t>(), fetches * (cfg.sm.icache.line_bytes / w) +
                                                     consts * (cfg.sm.const_cache.line_bytes / w));
}

// Seed 000 Table 1 counts the active threads of the warps whose accesses reach a cache; DWL
// switches the bytes. A full warp loading every other word touches two lines with 16 threads
// each: every request comes from a full warp (thread utilisation 1) and enables half of each
// line's sub-word-lines (byte utilisation 0.5).
TEST(CachePowerGpu, ThreadAndByteUtilisationDifferForStridedWarps) {
  const std::string ptx = test::module(R"(
.visible .entry k(.param .u64 in, .param .u64 out)
{
  .reg .b64 %rd<8>;
  .reg .b32 %r<4>;
  ld.param.u64 %rd1, [in];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 8;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.u32 %r2, [%rd3];
  cvt.u64.u32 %rd7, %r2;
  add.u64 %rd7, %rd3, %rd7;
  ld.global.u32 %r3, [%rd7];
  add.u32 %r2, %r2, %r3;
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r1, 4;
  add.u64 %rd6, %rd4, %rd5;
  st.global.u32 [%rd6], %r2;
  ret;
}
)");
  const PlatformConfig cfg = loadPlatform("gtx480");
  Device dev(cfg, ExecMode::Timing);
  const Kernel& k = dev.loadModule(ptx, "k.ptx").kernel("k");
  const DevPtr in = dev.malloc(32 * 8), out = dev.malloc(32 * 4);
  dev.memset(in, 0, 32 * 8);  // the second load's address depends on the first's value (0)
  dev.launch(k, {1}, {32}, 0, KernelArgs().ptr(in).ptr(out));
  const nlohmann::json& p1 = dev.launches().back().timing->memory["l1d"]["totals"]["power_states"];
  // The second load waits for the first and hits both lines it brought in.
  ASSERT_EQ(p1["reads"].get<uint64_t>(), 2u);
  EXPECT_DOUBLE_EQ(p1["read_block_utilisation"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(p1["thread_utilisation"].get<double>(), 1.0);
}
