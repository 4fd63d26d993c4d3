// The data caches (models/cache): CacheCore, MshrTable and the replacement policies as units,
// and L1DataCache / L2Slice between a ScriptedInitiator (the SM or the interconnect) and a
// RecordingTarget (the next level, answering after kNextLevel cycles), with a ProtocolChecker
// on both connections. Expected cycles are derived from the configuration: H (the cache's
// hit_latency), D (the next level's latency, as the harness measures it), the geometry.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cache/cache_core.hpp"
#include "cache/l1_data_cache.hpp"
#include "cache/l2_slice.hpp"
#include "cache/mshr_table.hpp"
#include "cache/replacement.hpp"
#include "common/address_map.hpp"
#include "common/error.hpp"
#include "common/protocol_checker.hpp"
#include "common/rng.hpp"
#include "common/strings.hpp"
#include "support/tlm_harness.hpp"

using namespace gpusc;
using namespace gpusc::cache;
using namespace gpusc::test;

namespace {

constexpr uint32_t kNextLevel = 100;  // cycles the RecordingTarget takes to answer (D)

PlatformConfig platform(const std::vector<std::string>& sets = {}) {
  return loadPlatform("gtx480", sets);
}

// Line `i` of `set` (the i-th distinct tag mapping to that set).
uint64_t lineIn(const CacheConfig& c, uint64_t i, uint32_t set) {
  return (i * c.sets + set) * c.line_bytes;
}

Request req(uint64_t cycle, uint64_t addr, AccessKind kind, uint32_t bytes) {
  Request r;
  r.cycle = cycle;
  r.addr = addr;
  r.kind = kind;
  r.bytes = bytes;
  return r;
}

uint64_t latency(const Outcome& o) { return o.answered - o.sent; }

// Everything a test observes on a CacheCore.
struct Seen {
  enum Kind { Access, Fill, Evict } kind;
  uint32_t set, way;
  uint64_t cycle;
  ByteMask mask{};
  bool isWrite = false, hit = false, dirty = false;
};

class RecordingObserver : public LineObserver {
 public:
  std::vector<Seen> seen;
  void onAccess(uint32_t set, uint32_t way, uint64_t cycle, const ByteMask& mask, bool isWrite,
                bool hit) override {
    seen.push_back(Seen{Seen::Access, set, way, cycle, mask, isWrite, hit, false});
  }
  void onFill(uint32_t set, uint32_t way, uint64_t cycle) override {
    seen.push_back(Seen{Seen::Fill, set, way, cycle});
  }
  void onEvict(uint32_t set, uint32_t way, uint64_t cycle, bool dirty) override {
    Seen s{Seen::Evict, set, way, cycle};
    s.dirty = dirty;
    seen.push_back(s);
  }
};

// ---- benches -----------------------------------------------------------------------------------

struct L1Bench {
  PayloadPool pool;
  Clock clk;
  ScriptedInitiator sm;
  ProtocolChecker smSide;
  L1DataCache l1;
  ProtocolChecker memorySide;
  RecordingTarget memory;
  uint32_t H;

  explicit L1Bench(const PlatformConfig& cfg, uint32_t maxOutstanding = ~0u)
      : clk(cfg.gpu.clocks.core_mhz),
        sm("sm", clk),
        smSide("sm_side"),
        l1("l1d", 3, cfg, pool),
        memorySide("memory_side"),
        memory("memory", clk, kNextLevel, maxOutstanding),
        H(cfg.sm.l1d.hit_latency) {
    bindThrough(smSide, sm.socket, l1.sm_socket);
    bindThrough(memorySide, l1.memory_socket, memory.socket);
  }
  void run() {
    sc_core::sc_start();
    smSide.finish();
    memorySide.finish();
  }
  void expectClean() {
    EXPECT_TRUE(sm.allAnswered());
    EXPECT_TRUE(l1.idle());
    EXPECT_TRUE(smSide.clean()) << join(smSide.violations(), "\n");
    EXPECT_TRUE(memorySide.clean()) << join(memorySide.violations(), "\n");
  }
  uint64_t stat(const std::string& path) const {
    return l1.statsJson()[nlohmann::json::json_pointer(path)].get<uint64_t>();
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
  uint32_t H;

  // The requester runs on `requesterMhz` (0: the L2 clock), the DRAM side on the L2 clock.
  L2Bench(const PlatformConfig& cfg, uint32_t partition, uint32_t maxOutstanding = ~0u,
          double requesterMhz = 0)
      : clk(cfg.gpu.clocks.l2_mhz),
        noc("noc", requesterMhz > 0 ? Clock(requesterMhz) : clk),
        nocSide("noc_side"),
        l2("l2", partition, cfg, pool),
        dramSide("dram_side"),
        dram("dram", clk, kNextLevel, maxOutstanding),
        H(cfg.l2.slice.hit_latency) {
    bindThrough(nocSide, noc.socket, l2.noc_socket);
    bindThrough(dramSide, l2.dram_socket, dram.socket);
  }
  void run() {
    sc_core::sc_start();
    nocSide.finish();
    dramSide.finish();
  }
  void expectClean() {
    EXPECT_TRUE(noc.allAnswered());
    EXPECT_TRUE(l2.idle());
    EXPECT_TRUE(nocSide.clean()) << join(nocSide.violations(), "\n");
    EXPECT_TRUE(dramSide.clean()) << join(dramSide.violations(), "\n");
  }
  uint64_t stat(const std::string& path) const {
    return l2.statsJson()[nlohmann::json::json_pointer(path)].get<uint64_t>();
  }
  bool dirty(uint64_t deviceAddr) const {
    const uint64_t local = l2.localOf(deviceAddr);
    const uint32_t way = l2.core().find(local);
    return way != CacheCore::kNoWay && l2.core().line(l2.core().setOf(local), way).dirty;
  }
};

// ---- units
// ---------------------------------------------------------------------------------------

TEST(CacheUnits, ByteMaskRebase) {
  ByteMask m{0xf, 0xff, 0, 1ull << 63};  // bytes 0-3, 64-71, 255
  EXPECT_EQ(rebase(m, 0, 64), (ByteMask{0xff, 0, 1ull << 63, 0}));
  EXPECT_EQ(rebase(m, 0, 0), m);
  EXPECT_EQ(rebase(m, 64, 0), (ByteMask{0, 0xf, 0xff, 0}));  // the line starts before it
  // A line 4 bytes in: bytes 64-71 become 60-67, byte 255 becomes 251, bytes 0-3 fall out.
  EXPECT_EQ(rebase(m, 0, 4), (ByteMask{0xf000000000000000ull, 0xf, 0, 1ull << 59}));
  EXPECT_EQ(lineMask(m, 0, 68, 64, 64), (ByteMask{0xf, 0, 0, 0}));  // clipped at the length
  EXPECT_TRUE(coversAll(firstBytes(128), 128));
  EXPECT_FALSE(coversAll(firstBytes(127), 128));
}

TEST(CacheUnits, MshrTableMatchesAReferenceMap) {
  // Random allocations and releases over few line addresses: many index collisions.
  const uint32_t entries = 16;
  MshrTable t(entries, 3);
  std::map<uint64_t, uint32_t> ref;
  Rng rng(7);
  for (int step = 0; step < 20000; ++step) {
    const uint64_t line = uint64_t(rng.below(40)) * 128;
    const uint32_t e = t.find(line);
    auto it = ref.find(line);
    ASSERT_EQ(e == MshrTable::kNone, it == ref.end()) << "step " << step;
    if (it != ref.end()) {
      ASSERT_EQ(e, it->second);
      if (rng.below(2) == 0) {
        t.release(e);
        ref.erase(it);
      } else if (t.canMerge(e)) {
        t.addWaiter(e, step);
      }
    } else if (!t.full()) {
      ref[line] = t.allocate(line);
      t.addWaiter(ref[line], step);
    }
    ASSERT_EQ(t.used(), ref.size());
  }
  // The merge limit: maxMerge waiters, then no more.
  t.clear();
  const uint32_t e = t.allocate(0x80);
  for (uint32_t i = 0; i < t.maxMerge(); ++i) {
    ASSERT_TRUE(t.canMerge(e));
    t.addWaiter(e, i);
  }
  EXPECT_FALSE(t.canMerge(e));
  EXPECT_EQ(t.waiters(e)[t.maxMerge() - 1], t.maxMerge() - 1);
}

TEST(CacheUnits, ReplacementRegistry) {
  EXPECT_EQ(replacementPolicies().names(), (std::vector<std::string>{"lru", "fifo", "random"}));
  EXPECT_THROW(replacementPolicies().create("lfu", 4, 4, 1), InputError);
  CacheConfig c = platform().sm.l1d;
  c.replacement = "plru";
  EXPECT_THROW(CacheCore(c, "sm.l1d", 1), InputError);
}

TEST(CacheUnits, RandomReplacementIsSeededAndStaysInTheSet) {
  const uint32_t ways = platform().l2.slice.ways;
  auto a = replacementPolicies().create("random", 1, ways, 42);
  auto b = replacementPolicies().create("random", 1, ways, 42);
  std::vector<uint32_t> drawn(ways, 0), first;
  for (int i = 0; i < 64 * int(ways); ++i) {
    const uint32_t v = a->victim(0, ways);
    ASSERT_LT(v, ways);
    ASSERT_EQ(v, b->victim(0, ways));  // same seed, same sequence
    ++drawn[v];
    if (first.size() < 8) first.push_back(v);
  }
  for (uint32_t w = 0; w < ways; ++w) EXPECT_GT(drawn[w], 0u) << "way " << w << " never chosen";
  a->reset();  // a new Device repeats the sequence
  for (uint32_t v : first) EXPECT_EQ(a->victim(0, ways), v);
}

TEST(CacheUnits, CoreFillEvictDirtyAndObserver) {
  CacheConfig c = platform().l2.slice;
  c.ways = 2;
  CacheCore core(c, "l2.slice", 1);
  RecordingObserver obs;
  core.setObserver(&obs);
  const uint32_t set = 9;
  const uint64_t a = lineIn(c, 0, set), b = lineIn(c, 1, set), x = lineIn(c, 2, set);
  EXPECT_EQ(core.access(a, 1, firstBytes(4), false), CacheCore::kNoWay);
  core.fill(a, 2, true);  // a written line
  core.fill(b, 3, false);
  EXPECT_EQ(core.access(b, 4, firstBytes(8), false), 1u);
  const FillResult r = core.fill(x, 5, false);  // LRU: a goes, dirty
  EXPECT_TRUE(r.evicted);
  EXPECT_TRUE(r.evictedDirty);
  EXPECT_EQ(r.evictedLine, a);
  EXPECT_EQ(r.way, 0u);
  EXPECT_EQ(core.lineAddressOf(set, 0), x);
  EXPECT_EQ(core.line(set, 1).lastAccess, 4u);
  ASSERT_EQ(obs.seen.size(), 6u);
  EXPECT_EQ(obs.seen[0].kind, Seen::Access);
  EXPECT_FALSE(obs.seen[0].hit);
  EXPECT_EQ(obs.seen[0].way, CacheCore::kNoWay);
  EXPECT_EQ(obs.seen[0].mask, firstBytes(4));
  EXPECT_EQ(obs.seen[3].kind, Seen::Access);
  EXPECT_TRUE(obs.seen[3].hit);
  EXPECT_EQ(obs.seen[3].mask, firstBytes(8));
  EXPECT_EQ(obs.seen[4].kind, Seen::Evict);
  EXPECT_TRUE(obs.seen[4].dirty);
  EXPECT_EQ(obs.seen[5].kind, Seen::Fill);
  EXPECT_EQ(obs.seen[5].cycle, 5u);
  // Banks: one access per bank per cycle.
  EXPECT_EQ(core.claimBank(0, 10), 10u);
  EXPECT_EQ(core.claimBank(0, 10), 11u);
  EXPECT_TRUE(core.bankFree(0, 12));
}

// CacheCore::lack on a sectored cache: which sectors an access lacks, which fetches in flight
// bring some of them, and the MSHR key of a fetch (its first sector).
TEST(CacheUnits, SectoredLackFindsFetchesInFlight) {
  const CacheConfig c(4, 2, 128, "write-through", "no-allocate", 1, 8, 4, 8);
  CacheConfig sc = c;
  sc.sector_bytes = 32;
  CacheCore core(sc, "l1d", 1);
  const auto bytes = [](uint32_t from, uint32_t n) { return rebase(firstBytes(n), from, 0); };
  const uint64_t line = 0x1000;
  EXPECT_EQ(core.sectorsOf(bytes(30, 4)), bytes(0, 64));  // straddles sectors 0 and 1
  EXPECT_EQ(core.sectorCount(bytes(0, 64)), 2u);
  CacheCore::Lack l = core.lack(line, bytes(0, 4));
  EXPECT_FALSE(l.hit);
  EXPECT_EQ(l.way, CacheCore::kNoWay);
  EXPECT_EQ(l.fetch, bytes(0, 32));
  EXPECT_EQ(l.waits, 0u);
  const uint32_t a = core.openFetch(line, l.fetch);
  EXPECT_EQ(core.mshrs().find(line), a);  // found by its first sector
  EXPECT_EQ(core.mshrs().entry(a).bytes, l.fetch);
  EXPECT_EQ(core.fetchKey(line, bytes(64, 64)), line + 64);
  l = core.lack(line, bytes(0, 128));  // sector 0 is on its way; 1-3 are not
  EXPECT_EQ(l.waits, 1u);
  EXPECT_EQ(l.waitOn[0], a);
  EXPECT_EQ(l.fetch, bytes(32, 96));
  const uint32_t b = core.openFetch(line, l.fetch);
  EXPECT_EQ(core.mshrs().find(line + 32), b);
  l = core.lack(line, bytes(40, 60));  // only the second fetch's
  EXPECT_EQ(l.waits, 1u);
  EXPECT_EQ(l.waitOn[0], b);
  EXPECT_FALSE(l.fetches());
  // The line arrives with sector 0: it hits there and lacks sector 2 elsewhere.
  const FillResult f = core.fill(line, 5, false, bytes(0, 32));
  EXPECT_TRUE(core.lack(line, bytes(8, 8)).hit);
  core.mshrs().release(b);
  l = core.lack(line, bytes(64, 4));
  EXPECT_FALSE(l.hit);
  EXPECT_EQ(l.way, f.way);
  EXPECT_EQ(l.fetch, bytes(64, 32));
  // Unsectored, any access lacks the whole line.
  CacheCore whole(c, "l1d", 1);
  EXPECT_EQ(whole.lack(line, bytes(64, 4)).fetch, firstBytes(128));
  EXPECT_EQ(whole.fetchKey(line, firstBytes(128)), line);
}

TEST(CacheUnits, SectorSizesAreChecked) {
  EXPECT_THROW(platform({"l2.slice.sector_bytes=48"}), InputError);   // not a power of two
  EXPECT_THROW(platform({"sm.l1d.sector_bytes=256"}), InputError);    // wider than the line
  EXPECT_THROW(platform({"sm.l1d.sector_bytes=2"}), InputError);      // narrower than a word
  EXPECT_THROW(platform({"sm.icache.sector_bytes=32"}), InputError);  // not a data cache
  EXPECT_NO_THROW(platform({"sm.l1d.sector_bytes=128"}));             // the line: unsectored
}

TEST(CacheUnits, LinesWiderThanTheByteMaskAreRejected) {
  EXPECT_THROW(
      {
        try {
          CacheCore(platform({"sm.l1d.line_bytes=512"}).sm.l1d, "sm.l1d", 1);
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("sm.l1d.line_bytes"), std::string::npos);
          throw;
        }
      },
      InputError);
}

// ---- L1 data cache
// -------------------------------------------------------------------------------

// ways + 1 lines of one set, then re-accesses whose outcome differs between LRU and FIFO.
void replacementSequence(const std::string& policy) {
  newSimulation();
  const PlatformConfig cfg = platform({"sm.l1d.replacement=" + policy});
  const CacheConfig& c = cfg.sm.l1d;
  L1Bench b(cfg);
  const uint32_t w = c.ways, set = 5;
  ASSERT_GE(w, 2u);
  // Line indices in the set: 0..w-1 (fill the set), 0 (a hit), w (evicts: LRU line 1, FIFO
  // line 0), 0 (LRU hit, FIFO miss evicting line 1), 1 (a miss for both).
  std::vector<uint64_t> stream;
  for (uint64_t i = 0; i < w; ++i) stream.push_back(i);
  for (uint64_t i : {uint64_t(0), uint64_t(w), uint64_t(0), uint64_t(1)}) stream.push_back(i);
  const bool lru = policy == "lru";
  std::vector<bool> hit(w, false);
  for (bool h : {true, false, lru, false}) hit.push_back(h);
  // Each request starts after the previous one has been answered.
  const uint64_t gap = b.H + kNextLevel + 1;
  for (size_t k = 0; k < stream.size(); ++k)
    b.sm.add(req(k * gap, lineIn(c, stream[k], set), AccessKind::Load, c.line_bytes));
  b.run();
  b.expectClean();
  std::vector<uint64_t> fetched;
  for (size_t k = 0; k < stream.size(); ++k) {
    EXPECT_EQ(latency(b.sm.outcomes()[k]), hit[k] ? b.H : b.H + kNextLevel)
        << policy << " access " << k << " (line " << stream[k] << ")";
    if (!hit[k]) fetched.push_back(lineIn(c, stream[k], set));
  }
  ASSERT_EQ(b.memory.received().size(), fetched.size());
  for (size_t k = 0; k < fetched.size(); ++k) {
    EXPECT_EQ(b.memory.received()[k].addr, fetched[k]);
    EXPECT_EQ(b.memory.received()[k].bytes, c.line_bytes);
    EXPECT_EQ(b.memory.received()[k].kind, AccessKind::Load);
    EXPECT_EQ(b.memory.received()[k].sm, 3u);  // the L1's SM
  }
  const size_t misses = fetched.size();
  EXPECT_EQ(b.stat("/by_kind/load/misses"), misses);
  EXPECT_EQ(b.stat("/by_kind/load/hits"), stream.size() - misses);
  EXPECT_EQ(b.stat("/evictions"), misses - w);
  EXPECT_DOUBLE_EQ(b.l1.statsJson()["hit_rate"].get<double>(),
                   double(stream.size() - misses) / double(stream.size()));
}

TEST(L1DataCache, LruSequence) { replacementSequence("lru"); }
TEST(L1DataCache, FifoSequence) { replacementSequence("fifo"); }

TEST(L1DataCache, RandomReplacementIsDeterministicAndEvictsALineOfTheSet) {
  uint64_t evictedBefore = ~0ull;
  for (int round = 0; round < 2; ++round) {
    newSimulation();
    const PlatformConfig cfg = platform({"sm.l1d.replacement=random"});
    const CacheConfig& c = cfg.sm.l1d;
    L1Bench b(cfg);
    const uint32_t set = 7;
    const uint64_t gap = b.H + kNextLevel + 1;
    for (uint64_t i = 0; i <= c.ways; ++i)
      b.sm.add(req(i * gap, lineIn(c, i, set), AccessKind::Load, c.line_bytes));
    b.run();
    b.expectClean();
    EXPECT_EQ(b.memory.received().size(), c.ways + 1u);  // all misses
    EXPECT_NE(b.l1.core().find(lineIn(c, c.ways, set)), CacheCore::kNoWay);
    std::vector<uint64_t> gone;
    for (uint64_t i = 0; i < c.ways; ++i)
      if (b.l1.core().find(lineIn(c, i, set)) == CacheCore::kNoWay) gone.push_back(i);
    ASSERT_EQ(gone.size(), 1u);  // exactly one line of the set was evicted
    if (round == 1) {
      EXPECT_EQ(gone[0], evictedBefore);  // the same one both times
    }
    evictedBefore = gone[0];
  }
}

TEST(L1DataCache, HitAndMissLatency) {
  newSimulation();
  const PlatformConfig cfg = platform();
  L1Bench b(cfg);
  const uint64_t a = 0x4000, second = b.H + kNextLevel + 5;
  b.sm.add(req(0, a, AccessKind::Load, cfg.sm.l1d.line_bytes));
  b.sm.add(req(second, a, AccessKind::Load, cfg.sm.l1d.line_bytes));
  b.run();
  b.expectClean();
  const auto& o = b.sm.outcomes();
  EXPECT_EQ(o[0].answered, b.H + kNextLevel);  // miss: the hit path plus the next level
  EXPECT_EQ(o[1].answered, second + b.H);      // hit
  ASSERT_EQ(b.memory.received().size(), 1u);
  EXPECT_EQ(b.memory.received()[0].cycle, 0u);  // the line read leaves in the lookup's cycle
  // Idle costs nothing: no event after the last answer.
  EXPECT_EQ(b.clk.now(), o[1].answered);
}

TEST(L1DataCache, MshrMergesLoadsToALineBeingFetched) {
  newSimulation();
  const PlatformConfig cfg = platform();
  L1Bench b(cfg);
  const uint32_t line = cfg.sm.l1d.line_bytes;
  b.sm.add(req(0, 0x8000, AccessKind::Load, line));
  b.sm.add(req(1, 0x8000, AccessKind::Load, line));
  b.run();
  b.expectClean();
  EXPECT_EQ(b.memory.received().size(), 1u);  // one fetch
  // Answered hit_latency after the fill (the fill arrives kNextLevel after cycle 0), one per
  // cycle in the order they merged: the MSHR replays them.
  EXPECT_EQ(b.sm.outcomes()[0].answered, kNextLevel + b.H);
  EXPECT_EQ(b.sm.outcomes()[1].answered, kNextLevel + b.H + 1);
  EXPECT_EQ(b.sm.outcomes()[1].accepted, 1u);
  EXPECT_EQ(b.stat("/mshr_merges"), 1u);
  EXPECT_EQ(b.stat("/by_kind/load/misses"), 2u);
}

TEST(L1DataCache, MergeLimitHoldsTheRequest) {
  newSimulation();
  const PlatformConfig cfg = platform({"sm.l1d.mshr_max_merge=2", "sm.l1d.banks=1"});
  L1Bench b(cfg);
  const uint32_t line = cfg.sm.l1d.line_bytes, merge = cfg.sm.l1d.mshr_max_merge;
  for (uint64_t i = 0; i <= merge; ++i) b.sm.add(req(i, 0x8000, AccessKind::Load, line));
  b.run();
  b.expectClean();
  const auto& o = b.sm.outcomes();
  EXPECT_EQ(b.memory.received().size(), 1u);
  for (uint32_t i = 0; i < merge; ++i) EXPECT_EQ(o[i].answered, kNextLevel + b.H + i);
  // The one over the limit waits for the fill (cycle kNextLevel), which takes the line's bank in
  // that cycle: it is accepted a cycle later, and hits.
  const Outcome& last = o[merge];
  EXPECT_EQ(last.sent, merge);
  EXPECT_EQ(last.accepted, kNextLevel + 1);
  EXPECT_EQ(last.answered, kNextLevel + 1 + b.H);
  EXPECT_EQ(b.stat("/stall_cycles/merge_limit"), kNextLevel - merge);
  EXPECT_EQ(b.stat("/stall_cycles/bank_conflict"), 1u);
  EXPECT_EQ(b.stat("/mshr_full_stall_cycles"), kNextLevel - merge);
}

TEST(L1DataCache, FullMshrsBackPressureAndLoseNothing) {
  newSimulation();
  const PlatformConfig cfg = platform({"sm.l1d.mshr_entries=2", "sm.l1d.banks=4"});
  L1Bench b(cfg);
  const uint32_t line = cfg.sm.l1d.line_bytes, entries = cfg.sm.l1d.mshr_entries;
  const uint32_t n = 4 * entries;
  // Consecutive lines: different sets and banks (no bank conflict with the fills).
  for (uint64_t i = 0; i < n; ++i) b.sm.add(req(i, i * line, AccessKind::Load, line));
  b.run();
  b.expectClean();
  const auto& o = b.sm.outcomes();
  EXPECT_EQ(b.memory.received().size(), n);  // every line fetched once
  // The first request over the MSHR count waits for the first fill (cycle kNextLevel), then
  // misses: its own fetch takes kNextLevel more.
  const Outcome& first = o[entries];
  EXPECT_EQ(first.accepted, kNextLevel);
  EXPECT_EQ(first.answered, 2 * kNextLevel + b.H);
  EXPECT_EQ(b.stat("/by_kind/load/misses"), n);
  EXPECT_GE(b.stat("/stall_cycles/mshr_full"), kNextLevel - entries);
}

TEST(L1DataCache, MissQueueBoundsRequestsWhileTheMemorySocketIsBusy) {
  newSimulation();
  // The next level takes one request at a time; the miss queue holds one.
  // Four banks, a line in each: no bank conflicts with the fills.
  const PlatformConfig cfg = platform({"sm.l1d.miss_queue=1", "sm.l1d.banks=4"});
  L1Bench b(cfg, 1);
  const uint32_t line = cfg.sm.l1d.line_bytes;
  const uint64_t D = kNextLevel;
  for (uint64_t i = 0; i < 4; ++i) {
    b.sm.add(req(i, i * 9 * line, AccessKind::Load, line));
    ASSERT_EQ(b.l1.core().bankOf(i * 9 * line), i % cfg.sm.l1d.banks);
  }
  b.run();
  b.expectClean();
  const auto& o = b.sm.outcomes();
  // 0 is accepted by the next level at once; 1 is sent and held there (no END_REQ); 2 waits in
  // the miss queue; 3 finds the queue full and is held until the next level ends 1's request
  // (cycle D), when 2 leaves and 3 takes its place. The next level serves one at a time.
  EXPECT_EQ(o[2].accepted, 2u);
  EXPECT_EQ(o[3].accepted, D);
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(o[i].answered, (i + 1) * D + b.H) << i;
  EXPECT_EQ(b.memory.received().size(), 4u);
  EXPECT_EQ(b.stat("/stall_cycles/miss_queue_full"), D - 3);
}

TEST(L1DataCache, WriteEvictAndWriteNoAllocate) {
  newSimulation();
  const PlatformConfig cfg = platform();
  ASSERT_EQ(cfg.sm.l1d.write_policy, "write-evict");
  L1Bench b(cfg);
  const uint32_t line = cfg.sm.l1d.line_bytes;
  const uint64_t gap = b.H + kNextLevel + 1, a = 0x10000, m = 0x20000;
  b.sm.add(req(0, a, AccessKind::Load, line));         // miss, fills a
  b.sm.add(req(gap, a, AccessKind::Store, line));      // hit: a is invalidated, written down
  b.sm.add(req(2 * gap, a, AccessKind::Load, line));   // miss again
  b.sm.add(req(3 * gap, m, AccessKind::Store, line));  // miss: nothing allocated
  b.sm.add(req(4 * gap, m, AccessKind::Load, line));   // miss
  b.run();
  b.expectClean();
  const auto& o = b.sm.outcomes();
  EXPECT_EQ(latency(o[0]), b.H + kNextLevel);
  EXPECT_EQ(latency(o[1]), kNextLevel);  // a store is answered when its write is acknowledged
  EXPECT_EQ(latency(o[2]), b.H + kNextLevel);
  EXPECT_EQ(latency(o[3]), kNextLevel);
  EXPECT_EQ(latency(o[4]), b.H + kNextLevel);
  const auto& r = b.memory.received();
  ASSERT_EQ(r.size(), 5u);
  const std::vector<std::pair<uint64_t, AccessKind>> expected = {{a, AccessKind::Load},
                                                                 {a, AccessKind::Store},
                                                                 {a, AccessKind::Load},
                                                                 {m, AccessKind::Store},
                                                                 {m, AccessKind::Load}};
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].addr, expected[i].first) << i;
    EXPECT_EQ(r[i].kind, expected[i].second) << i;
    EXPECT_EQ(r[i].command, expected[i].second == AccessKind::Store ? tlm::TLM_WRITE_COMMAND
                                                                    : tlm::TLM_READ_COMMAND);
    EXPECT_EQ(r[i].cycle, o[i].sent) << i;  // down in the cycle of the lookup
  }
  EXPECT_EQ(b.stat("/by_kind/store/hits"), 1u);
  EXPECT_EQ(b.stat("/by_kind/store/misses"), 1u);
  EXPECT_EQ(b.stat("/invalidations"), 1u);
  EXPECT_EQ(b.stat("/sent_down/writes"), 2u);
  EXPECT_EQ(b.l1.core().validLines(), 2u);  // a and m, from the last loads
}

TEST(L1DataCache, AtomicsInstructionFetchesAndConstantLoadsBypass) {
  newSimulation();
  const PlatformConfig cfg = platform();
  L1Bench b(cfg);
  RecordingObserver obs;
  b.l1.core().setObserver(&obs);
  const uint64_t gap = kNextLevel + 1;
  const AccessKind kinds[] = {AccessKind::Atomic, AccessKind::InstructionFetch,
                              AccessKind::ConstLoad};
  for (int i = 0; i < 3; ++i) b.sm.add(req(i * gap, 0x3000, kinds[i], 64));
  b.run();
  b.expectClean();
  ASSERT_EQ(b.memory.received().size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(latency(b.sm.outcomes()[i]), kNextLevel);  // no lookup, no hit latency
    EXPECT_EQ(b.memory.received()[i].kind, kinds[i]);
    EXPECT_EQ(b.memory.received()[i].bytes, 64u);
    EXPECT_EQ(b.memory.received()[i].addr, 0x3000u);
  }
  EXPECT_TRUE(obs.seen.empty());
  EXPECT_EQ(b.l1.core().validLines(), 0u);
  EXPECT_EQ(b.stat("/bypassed"), 3u);
  EXPECT_EQ(b.stat("/accesses"), 0u);
}

TEST(L1DataCache, DisabledPassesEverythingThrough) {
  newSimulation();
  const PlatformConfig cfg = platform({"sm.l1d.enabled=false"});
  L1Bench b(cfg);
  const uint32_t line = cfg.sm.l1d.line_bytes;
  const uint64_t gap = kNextLevel + 1;
  b.sm.add(req(0, 0x5000, AccessKind::Load, line));
  b.sm.add(req(gap, 0x5000, AccessKind::Load, line));  // not cached: down again
  b.sm.add(req(2 * gap, 0x5000, AccessKind::Store, line));
  b.sm.add(req(3 * gap, 0x6000, AccessKind::Load, line));  // two in one cycle: the second
  b.sm.add(req(3 * gap, 0x7000, AccessKind::Load, line));  // leaves a cycle later
  b.run();
  b.expectClean();
  const auto& o = b.sm.outcomes();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(latency(o[i]), kNextLevel) << i;
  EXPECT_EQ(latency(o[4]), kNextLevel + 1);
  ASSERT_EQ(b.memory.received().size(), 5u);
  EXPECT_EQ(b.memory.received()[2].kind, AccessKind::Store);
  EXPECT_EQ(b.l1.core().validLines(), 0u);
  EXPECT_EQ(b.stat("/bypassed"), 5u);
  EXPECT_FALSE(b.l1.statsJson()["enabled"].get<bool>());
}

TEST(L1DataCache, BankConflictsCostACycle) {
  newSimulation();
  const PlatformConfig cfg = platform({"sm.l1d.banks=2"});
  const CacheConfig& c = cfg.sm.l1d;
  L1Bench b(cfg);
  const uint64_t a = 0, sameBank = uint64_t(c.banks) * c.line_bytes, otherBank = c.line_bytes;
  ASSERT_EQ(b.l1.core().bankOf(a), b.l1.core().bankOf(sameBank));
  ASSERT_NE(b.l1.core().bankOf(a), b.l1.core().bankOf(otherBank));
  // Warm the three lines (distinct sets), then access pairs in one cycle: all hits.
  for (uint64_t i = 0; i < 3; ++i)
    b.sm.add(
        req(i, std::vector<uint64_t>{a, sameBank, otherBank}[i], AccessKind::Load, c.line_bytes));
  const uint64_t t1 = b.H + kNextLevel + 10, t2 = t1 + 10;
  b.sm.add(req(t1, a, AccessKind::Load, c.line_bytes));
  b.sm.add(req(t1, sameBank, AccessKind::Load, c.line_bytes));
  b.sm.add(req(t2, a, AccessKind::Load, c.line_bytes));
  b.sm.add(req(t2, otherBank, AccessKind::Load, c.line_bytes));
  b.run();
  b.expectClean();
  const auto& o = b.sm.outcomes();
  EXPECT_EQ(o[3].answered, t1 + b.H);
  EXPECT_EQ(o[4].accepted, t1 + 1);  // its bank is busy in t1
  EXPECT_EQ(o[4].answered, t1 + 1 + b.H);
  EXPECT_EQ(o[5].answered, t2 + b.H);
  EXPECT_EQ(o[6].accepted, t2);  // another bank: no wait
  EXPECT_EQ(o[6].answered, t2 + b.H);
  EXPECT_EQ(b.stat("/stall_cycles/bank_conflict"), 1u);
  EXPECT_EQ(b.memory.received().size(), 3u);
}

TEST(L1DataCache, ObserverSeesEveryAccessWithItsByteMask) {
  newSimulation();
  const PlatformConfig cfg = platform();
  const CacheConfig& c = cfg.sm.l1d;
  L1Bench b(cfg);
  RecordingObserver obs;
  b.l1.core().setObserver(&obs);
  const uint32_t set = 3;
  const uint64_t a = lineIn(c, 2, set), t1 = b.H + kNextLevel + 1, t2 = t1 + b.H + 1;
  const ByteMask m1{0xf0, 0, 0, 0}, m2{0, 0xffff, 0, 0}, m3{1, 0, 0, 0};
  Request r1 = req(0, a, AccessKind::Load, c.line_bytes), r2 = r1, r3 = r1;
  r1.byteMask = m1;
  r2.cycle = t1;
  r2.byteMask = m2;
  r3.cycle = t2;
  r3.kind = AccessKind::Store;
  r3.byteMask = m3;
  for (const Request& r : {r1, r2, r3}) b.sm.add(r);
  b.run();
  b.expectClean();
  ASSERT_EQ(obs.seen.size(), 5u);
  const Seen& miss = obs.seen[0];
  EXPECT_EQ(miss.kind, Seen::Access);
  EXPECT_EQ(miss.set, set);
  EXPECT_EQ(miss.way, CacheCore::kNoWay);
  EXPECT_EQ(miss.cycle, 0u);
  EXPECT_EQ(miss.mask, m1);
  EXPECT_FALSE(miss.hit);
  EXPECT_FALSE(miss.isWrite);
  const Seen& fill = obs.seen[1];
  EXPECT_EQ(fill.kind, Seen::Fill);
  EXPECT_EQ(fill.cycle, kNextLevel);
  const Seen& hit = obs.seen[2];
  EXPECT_EQ(hit.kind, Seen::Access);
  EXPECT_TRUE(hit.hit);
  EXPECT_EQ(hit.way, fill.way);
  EXPECT_EQ(hit.cycle, t1);
  EXPECT_EQ(hit.mask, m2);
  const Seen& store = obs.seen[3];
  EXPECT_TRUE(store.isWrite);
  EXPECT_TRUE(store.hit);
  EXPECT_EQ(store.mask, m3);
  EXPECT_EQ(store.cycle, t2);
  const Seen& evict = obs.seen[4];  // write-evict
  EXPECT_EQ(evict.kind, Seen::Evict);
  EXPECT_EQ(evict.way, fill.way);
  EXPECT_FALSE(evict.dirty);
  EXPECT_FALSE(b.l1.core().line(set, fill.way).valid);
  EXPECT_EQ(b.l1.core().line(set, fill.way).lastAccess, t2);
}

TEST(L1DataCache, ResetStateAndStats) {
  newSimulation();
  const PlatformConfig cfg = platform();
  L1Bench b(cfg);
  const uint32_t line = cfg.sm.l1d.line_bytes;
  b.sm.add(req(0, 0x9000, AccessKind::Load, line));
  sc_core::sc_start(b.clk.period() * 10);  // mid-flight
  EXPECT_FALSE(b.l1.idle());
  EXPECT_THROW(b.l1.resetState(), InternalError);
  b.run();
  EXPECT_EQ(b.l1.core().validLines(), 1u);
  b.l1.resetState();
  b.l1.resetStats();
  EXPECT_EQ(b.l1.core().validLines(), 0u);
  EXPECT_EQ(b.stat("/accesses"), 0u);
  const uint64_t again = b.clk.now() + 1;
  b.sm.add(req(again, 0x9000, AccessKind::Load, line));
  b.run();
  b.expectClean();
  EXPECT_EQ(latency(b.sm.outcomes()[1]), b.H + kNextLevel);  // a miss again
  EXPECT_EQ(b.stat("/by_kind/load/misses"), 1u);
}

// Mixed random traffic with every resource small (MSHRs, merges, miss queue, sets) and a next
// level that takes two requests at a time: everything is answered exactly once, every payload
// of the cache's own returns to the pool, and the counters add up.
TEST(L1DataCache, RandomTrafficUnderBackPressureLosesNothing) {
  newSimulation();
  const PlatformConfig cfg =
      platform({"sm.l1d.sets=4", "sm.l1d.ways=2", "sm.l1d.banks=2", "sm.l1d.mshr_entries=4",
                "sm.l1d.mshr_max_merge=2", "sm.l1d.miss_queue=2"});
  const uint32_t line = cfg.sm.l1d.line_bytes;
  L1Bench b(cfg, 2);
  Rng rng(2024);
  const int n = 600;
  for (int i = 0; i < n; ++i) {
    const uint32_t k = rng.below(20);
    const AccessKind kind = k < 12   ? AccessKind::Load
                            : k < 17 ? AccessKind::Store
                            : k < 19 ? AccessKind::Atomic
                                     : AccessKind::ConstLoad;
    b.sm.add(req(uint64_t(i / 2), uint64_t(rng.below(24)) * line, kind, line));
  }
  b.run();
  b.expectClean();
  EXPECT_EQ(b.pool.available(), b.pool.created());
  const nlohmann::json st = b.l1.statsJson();
  EXPECT_EQ(st["accesses"].get<uint64_t>(),
            st["hits"].get<uint64_t>() + st["misses"].get<uint64_t>());
  uint64_t requests = 0;
  for (const auto& [kind, c] : st["by_kind"].items()) requests += c["requests"].get<uint64_t>();
  EXPECT_EQ(requests, uint64_t(n));
  const uint64_t loadMisses = b.stat("/by_kind/load/misses");
  const uint64_t stores = b.stat("/by_kind/store/requests");
  // Line reads: a load miss that did not merge; plus every store and bypassed request.
  EXPECT_EQ(b.memory.received().size(),
            loadMisses - b.stat("/mshr_merges") + stores + b.stat("/bypassed"));
  EXPECT_EQ(b.stat("/fills"), loadMisses - b.stat("/mshr_merges"));
  EXPECT_GT(b.stat("/mshr_merges"), 0u);
  EXPECT_GT(b.stat("/evictions"), 0u);
  EXPECT_GT(b.stat("/stall_cycles/miss_queue_full") + b.stat("/mshr_full_stall_cycles"), 0u);
}

TEST(L1DataCache, UnsupportedWritePolicyIsAnInputError) {
  newSimulation();
  PayloadPool pool;
  // A platform file is refused when it loads; a configuration built in code by the L1 itself.
  EXPECT_THROW(platform({"sm.l1d.write_policy=write-back"}), InputError);
  PlatformConfig cfg = platform();
  cfg.sm.l1d.write_policy = "write-back";
  EXPECT_THROW(L1DataCache("l1d", 0, cfg, pool), InputError);
}

// ---- L2 slice
// ------------------------------------------------------------------------------------

TEST(L2Slice, HitMissWriteAllocateAndAtomics) {
  newSimulation();
  const PlatformConfig cfg = platform(
      {"memory.partitions=1", "l2.slices_per_partition=1", "l2.slice.write_allocate=allocate"});
  const CacheConfig& c = cfg.l2.slice;
  L2Bench b(cfg, 0);
  const uint32_t line = c.line_bytes;
  const uint64_t gap = b.H + kNextLevel + 1;
  const uint64_t a = lineIn(c, 1, 1), p = lineIn(c, 1, 2), f = lineIn(c, 1, 3), e = lineIn(c, 1, 4);
  Request partial = req(2 * gap, p, AccessKind::Store, line);
  partial.byteMask = firstBytes(line / 2);
  b.noc.add(req(0, a, AccessKind::Load, line));         // read miss
  b.noc.add(req(gap, a, AccessKind::Load, line));       // read hit
  b.noc.add(partial);                                   // partial write miss: fetch, then dirty
  b.noc.add(req(3 * gap, f, AccessKind::Store, line));  // whole-line write miss: no fetch
  b.noc.add(req(4 * gap, e, AccessKind::Atomic, 4));    // atomic miss: fetch, then dirty
  b.noc.add(req(5 * gap, e, AccessKind::Atomic, 4));    // atomic hit
  b.noc.add(req(6 * gap, a, AccessKind::Store, line));  // write hit
  b.run();
  b.expectClean();
  const auto& o = b.noc.outcomes();
  const uint64_t miss = b.H + kNextLevel;
  const std::vector<uint64_t> expected = {miss, b.H, miss, b.H, miss, b.H, b.H};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(latency(o[i]), expected[i]) << i;
  const auto& r = b.dram.received();
  ASSERT_EQ(r.size(), 3u);  // line reads only: no write, no atomic goes down
  const uint64_t fetched[] = {a, p, e};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r[i].addr, fetched[i]);
    EXPECT_EQ(r[i].bytes, line);
    EXPECT_EQ(r[i].command, tlm::TLM_READ_COMMAND);
  }
  EXPECT_TRUE(b.dirty(a));
  EXPECT_TRUE(b.dirty(p));
  EXPECT_TRUE(b.dirty(f));
  EXPECT_TRUE(b.dirty(e));
  EXPECT_EQ(b.stat("/by_kind/atomic/hits"), 1u);
  EXPECT_EQ(b.stat("/by_kind/atomic/misses"), 1u);
  EXPECT_EQ(b.stat("/by_kind/store/misses"), 2u);
  EXPECT_EQ(b.stat("/by_kind/store/hits"), 1u);
  EXPECT_EQ(b.stat("/fills"), 4u);
}

TEST(L2Slice, DirtyEvictionWritesBackOnceToItsDeviceAddress) {
  newSimulation();
  // Six partitions: the slice of partition 3 indexes lines by their partition-local address.
  const PlatformConfig cfg = platform({"l2.slices_per_partition=1"});
  const CacheConfig& c = cfg.l2.slice;
  const uint32_t part = 3;
  ASSERT_GT(cfg.memory.partitions, part);
  const AddressMap map(cfg.memory);
  const uint64_t I = cfg.memory.partition_interleave_bytes, P = cfg.memory.partitions;
  const auto device = [&](uint64_t local) { return (local / I * P + part) * I + local % I; };
  L2Bench b(cfg, part);
  const uint32_t set = 0, line = c.line_bytes;
  const uint64_t gap = b.H + kNextLevel + 1;
  std::vector<uint64_t> lines;  // device addresses of ways + 2 lines of one set
  for (uint64_t i = 0; i < c.ways + 2u; ++i) {
    lines.push_back(device(lineIn(c, i, set)));
    ASSERT_EQ(map.partition(lines.back()), part);
    ASSERT_EQ(map.local(lines.back()), lineIn(c, i, set));
  }
  // Line 0 written whole (allocated dirty, no fetch), then ways reads of other lines of the
  // set: the last-but-one evicts line 0 (least recently used, dirty), the last a clean line.
  b.noc.add(req(0, lines[0], AccessKind::Store, line));
  for (size_t i = 1; i < lines.size(); ++i)
    b.noc.add(req(i * gap, lines[i], AccessKind::Load, line));
  b.run();
  b.expectClean();
  std::vector<Received> writes, reads;
  for (const Received& r : b.dram.received())
    (r.command == tlm::TLM_WRITE_COMMAND ? writes : reads).push_back(r);
  ASSERT_EQ(writes.size(), 1u);  // exactly one write-back
  EXPECT_EQ(writes[0].addr, lines[0]);
  EXPECT_EQ(writes[0].bytes, line);
  // It leaves when the fill that evicts line 0 arrives.
  EXPECT_EQ(writes[0].cycle, c.ways * gap + kNextLevel);
  ASSERT_EQ(reads.size(), lines.size() - 1);
  for (size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(reads[i - 1].addr, lines[i]);
  EXPECT_EQ(b.stat("/evictions"), 2u);
  EXPECT_EQ(b.stat("/dirty_writebacks"), 1u);
  EXPECT_EQ(b.stat("/sent_down/writes"), 1u);
}

TEST(L2Slice, IndexesByPartitionLocalAddress) {
  newSimulation();
  const PlatformConfig cfg = platform({"l2.slices_per_partition=1"});
  const CacheConfig& c = cfg.l2.slice;
  const uint32_t part = 1;
  const uint64_t I = cfg.memory.partition_interleave_bytes, P = cfg.memory.partitions;
  L2Bench b(cfg, part);
  RecordingObserver obs;
  b.l2.core().setObserver(&obs);
  // The first bytes of the partition's first two chunks: local addresses 0 and I.
  b.noc.add(req(0, part * I, AccessKind::Load, c.line_bytes));
  b.noc.add(req(1, (P + part) * I, AccessKind::Load, c.line_bytes));
  b.run();
  b.expectClean();
  ASSERT_GE(obs.seen.size(), 2u);
  EXPECT_EQ(obs.seen[0].set, 0u);
  EXPECT_EQ(obs.seen[1].set, (I / c.line_bytes) % c.sets);
}

// Two slices per partition (gtx480): a channel's consecutive interleave-sized chunks alternate
// between them, and each slice indexes its own chunks densely (slice-local addresses).
TEST(L2Slice, TwoSlicesPerPartitionSplitTheChannelByChunks) {
  newSimulation();
  const PlatformConfig cfg = platform({"l2.slices_per_partition=2"});
  const CacheConfig& c = cfg.l2.slice;
  const AddressMap map(cfg);
  const uint64_t I = cfg.memory.partition_interleave_bytes, P = cfg.memory.partitions;
  ASSERT_EQ(map.slices(), 2 * P);
  // Partition 1's chunks k = 0, 1, 2, 3 (device addresses (k P + 1) I) go to its slices
  // 2, 3, 2, 3 at slice-local addresses 0, 0, I, I; device() inverts the map.
  for (uint64_t k = 0; k < 4; ++k) {
    const uint64_t addr = (k * P + 1) * I + 8;
    EXPECT_EQ(map.partition(addr), 1u);
    EXPECT_EQ(map.slice(addr), 2u + k % 2) << k;
    EXPECT_EQ(map.sliceLocal(addr), k / 2 * I + 8) << k;
    EXPECT_EQ(map.device(map.slice(addr), map.sliceLocal(addr)), addr) << k;
  }
  const uint32_t slice = 3;  // partition 1's second slice: its chunks k = 1, 3, ...
  L2Bench b(cfg, slice);
  RecordingObserver obs;
  b.l2.core().setObserver(&obs);
  b.noc.add(req(0, (1 * P + 1) * I, AccessKind::Load, c.line_bytes));  // chunk 1: local 0
  b.noc.add(req(1, (3 * P + 1) * I, AccessKind::Load, c.line_bytes));  // chunk 3: local I
  b.run();
  b.expectClean();
  ASSERT_GE(obs.seen.size(), 2u);
  EXPECT_EQ(obs.seen[0].set, 0u);
  EXPECT_EQ(obs.seen[1].set, (I / c.line_bytes) % c.sets);
  // The fetches go down with their device addresses.
  ASSERT_EQ(b.dram.received().size(), 2u);
  EXPECT_EQ(b.dram.received()[0].addr, (1 * P + 1) * I);
  EXPECT_EQ(b.dram.received()[1].addr, (3 * P + 1) * I);
}

// write-validate (gtx480): a store miss allocates without reading DRAM, whatever it covers; a
// read of bytes the line does not hold fetches it (the line stays); a read of held bytes hits;
// the write-back of a partly written line carries only the written bytes.
TEST(L2Slice, WriteValidateAllocatesWithoutFetchingAndFetchesOnARead) {
  newSimulation();
  const PlatformConfig cfg = platform({"memory.partitions=1", "l2.slices_per_partition=1",
                                       "l2.slice.write_allocate=write-validate"});
  const CacheConfig& c = cfg.l2.slice;
  L2Bench b(cfg, 0);
  const uint32_t line = c.line_bytes;
  const uint64_t gap = b.H + kNextLevel + 1;
  const uint64_t p = lineIn(c, 1, 2), q = lineIn(c, 1, 3);
  const auto part = [&](uint64_t cycle, uint64_t addr, AccessKind k, uint32_t bytes) {
    Request r = req(cycle, addr, k, line);
    r.byteMask = firstBytes(bytes);
    return r;
  };
  b.noc.add(part(0, p, AccessKind::Store, line / 4));        // partial write miss: no fetch
  b.noc.add(part(gap, p, AccessKind::Load, line / 8));       // held bytes: a hit
  b.noc.add(part(2 * gap, p, AccessKind::Load, line / 2));   // bytes not held: fetched
  b.noc.add(part(3 * gap, p, AccessKind::Load, line));       // now the whole line: a hit
  b.noc.add(part(4 * gap, q, AccessKind::Store, line / 2));  // another partial write miss
  b.run();
  b.expectClean();
  const auto& o = b.noc.outcomes();
  const uint64_t miss = b.H + kNextLevel;
  const std::vector<uint64_t> expected = {b.H, b.H, miss, b.H, b.H};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(latency(o[i]), expected[i]) << i;
  const auto& r = b.dram.received();
  ASSERT_EQ(r.size(), 1u);  // the one read that needed bytes the line did not hold
  EXPECT_EQ(r[0].addr, p);
  EXPECT_EQ(r[0].command, tlm::TLM_READ_COMMAND);
  EXPECT_TRUE(b.dirty(p));
  EXPECT_TRUE(b.dirty(q));
  EXPECT_EQ(b.stat("/by_kind/store/misses"), 2u);
  EXPECT_EQ(b.stat("/by_kind/load/hits"), 2u);
  EXPECT_EQ(b.stat("/by_kind/load/misses"), 1u);
  EXPECT_EQ(b.stat("/fills"), 2u);  // the two allocations; the fetch refilled a present line
}

// A sectored L2 (32-byte sectors): a miss fetches only the sectors its access touches, a line
// present without a needed sector fetches that sector alone (a sector miss), and an access whose
// sectors are partly on their way waits for that fetch and fetches only the rest.
TEST(L2Slice, SectorsAreFetchedOnlyWhereNeeded) {
  newSimulation();
  const PlatformConfig cfg =
      platform({"memory.partitions=1", "l2.slices_per_partition=1", "l2.slice.sector_bytes=32"});
  const CacheConfig& c = cfg.l2.slice;
  L2Bench b(cfg, 0);
  const uint32_t line = c.line_bytes, sector = c.sector_bytes;
  const uint64_t gap = b.H + kNextLevel + 1;
  const uint64_t p = lineIn(c, 1, 2);
  const auto bytes = [&](uint32_t from, uint32_t n) { return rebase(firstBytes(n), from, 0); };
  const auto load = [&](uint64_t cycle, uint32_t from, uint32_t n) {
    Request r = req(cycle, p, AccessKind::Load, line);
    r.byteMask = bytes(from, n);
    return r;
  };
  b.noc.add(load(0, 0, 4));                              // a miss: sector 0 fetched
  b.noc.add(load(gap, 4, 8));                            // in sector 0: a hit
  b.noc.add(load(2 * gap, sector, 4));                   // a sector miss: sector 1 alone
  b.noc.add(load(3 * gap, 2 * sector, 4));               // a sector miss: sector 2
  b.noc.add(load(3 * gap + 1, 2 * sector, 2 * sector));  // waits for 2, fetches 3
  b.run();
  b.expectClean();
  const auto& o = b.noc.outcomes();
  const uint64_t miss = b.H + kNextLevel;
  EXPECT_EQ(latency(o[0]), miss);
  EXPECT_EQ(latency(o[1]), b.H);
  EXPECT_EQ(latency(o[2]), miss);
  EXPECT_EQ(latency(o[3]), miss);
  EXPECT_GE(latency(o[4]), miss);
  const auto& r = b.dram.received();
  ASSERT_EQ(r.size(), 4u);
  const std::vector<ByteMask> fetched = {bytes(0, sector), bytes(sector, sector),
                                         bytes(2 * sector, sector), bytes(3 * sector, sector)};
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].addr, p) << i;  // the line's address, its sectors in the byte mask
    EXPECT_EQ(r[i].command, tlm::TLM_READ_COMMAND) << i;
    EXPECT_EQ(r[i].byteMask, fetched[i]) << i;
    EXPECT_EQ(r[i].sectorBytes, sector) << i;
  }
  EXPECT_EQ(b.stat("/by_kind/load/hits"), 1u);
  EXPECT_EQ(b.stat("/by_kind/load/misses"), 4u);
  EXPECT_EQ(b.stat("/sectors/fetched"), 4u);
  EXPECT_EQ(b.stat("/sectors/sector_misses"), 3u);
  EXPECT_EQ(b.stat("/mshr_merges"), 1u);
  EXPECT_EQ(b.stat("/fills"), 1u);  // one line; the later fetches add sectors to it
}

// An unsectored L2 fetches the whole line whatever the access touches, and says nothing of
// sectors.
TEST(L2Slice, UnsectoredFetchesWholeLines) {
  newSimulation();
  const PlatformConfig cfg = platform({"memory.partitions=1", "l2.slices_per_partition=1"});
  L2Bench b(cfg, 0);
  Request r = req(0, lineIn(cfg.l2.slice, 1, 2), AccessKind::Load, cfg.l2.slice.line_bytes);
  r.byteMask = firstBytes(4);
  b.noc.add(r);
  b.run();
  b.expectClean();
  ASSERT_EQ(b.dram.received().size(), 1u);
  EXPECT_EQ(b.dram.received()[0].byteMask, firstBytes(cfg.l2.slice.line_bytes));
  EXPECT_EQ(b.dram.received()[0].sectorBytes, 0u);
  EXPECT_FALSE(b.l2.statsJson().contains("sectors"));
}

TEST(L2Slice, WriteValidateWritesBackOnlyTheWrittenBytes) {
  newSimulation();
  const PlatformConfig cfg = platform({"memory.partitions=1", "l2.slices_per_partition=1",
                                       "l2.slice.write_allocate=write-validate"});
  const CacheConfig& c = cfg.l2.slice;
  L2Bench b(cfg, 0);
  const uint32_t set = 0, line = c.line_bytes;
  const uint64_t gap = b.H + kNextLevel + 1;
  // Line 0 gets its bytes [8, 24) written, then ways loads of other lines of the set evict it.
  Request w = req(0, lineIn(c, 0, set), AccessKind::Store, line);
  w.byteMask = rebase(firstBytes(16), 8, 0);  // bytes 8..23
  b.noc.add(w);
  for (uint64_t i = 1; i <= c.ways; ++i)
    b.noc.add(req(i * gap, lineIn(c, i, set), AccessKind::Load, line));
  b.run();
  b.expectClean();
  std::vector<Received> writes;
  for (const Received& r : b.dram.received())
    if (r.command == tlm::TLM_WRITE_COMMAND) writes.push_back(r);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].addr, lineIn(c, 0, set));
  EXPECT_EQ(writes[0].bytes, line);           // the line's address range, with
  EXPECT_EQ(writes[0].byteMask, w.byteMask);  // only the written bytes enabled
}

TEST(L2Slice, LinesSmallerThanTheRequest) {
  newSimulation();
  const PlatformConfig cfg =
      platform({"memory.partitions=1", "l2.slice.line_bytes=64", "l2.slice.banks=1"});
  const CacheConfig& c = cfg.l2.slice;
  L2Bench b(cfg, 0);
  RecordingObserver obs;
  b.l2.core().setObserver(&obs);
  const uint32_t request = 128, lines = request / c.line_bytes;
  ASSERT_EQ(lines, 2u);
  const uint64_t gap = b.H + kNextLevel + lines + 1, a = 0x40000, w = 0x50000;
  Request r0 = req(0, a, AccessKind::Load, request);
  r0.byteMask = ByteMask{0xf, 0xff, 0, 0};  // bytes 0-3 and 64-71: one part in each line
  b.noc.add(r0);
  b.noc.add(req(gap, a, AccessKind::Load, request));       // both lines hit
  b.noc.add(req(2 * gap, w, AccessKind::Store, request));  // two whole-line writes
  b.run();
  b.expectClean();
  const auto& o = b.noc.outcomes();
  // One bank: the lines are looked up in consecutive cycles, and one request leaves per cycle,
  // so the second line's fetch (and fill) come a cycle after the first's.
  EXPECT_EQ(latency(o[0]), (lines - 1) + kNextLevel + b.H);
  EXPECT_EQ(latency(o[1]), (lines - 1) + b.H);
  EXPECT_EQ(latency(o[2]), (lines - 1) + b.H);
  const auto& r = b.dram.received();
  ASSERT_EQ(r.size(), lines);  // two line reads, nothing for the whole-line writes
  for (uint32_t i = 0; i < lines; ++i) {
    EXPECT_EQ(r[i].addr, a + i * c.line_bytes);
    EXPECT_EQ(r[i].bytes, c.line_bytes);
    EXPECT_EQ(r[i].cycle, i);
  }
  // Each line's lookup sees its own part of the request's byte mask.
  ASSERT_GE(obs.seen.size(), 2u);
  EXPECT_EQ(obs.seen[0].mask, (ByteMask{0xf, 0, 0, 0}));
  EXPECT_EQ(obs.seen[1].mask, (ByteMask{0xff, 0, 0, 0}));
  EXPECT_TRUE(b.dirty(w));
  EXPECT_TRUE(b.dirty(w + c.line_bytes));
  EXPECT_EQ(b.stat("/by_kind/load/accesses"), 2u * lines);
}

TEST(L2Slice, FullMshrsBackPressure) {
  newSimulation();
  const PlatformConfig cfg =
      platform({"memory.partitions=1", "l2.slice.mshr_entries=1", "l2.slice.banks=1"});
  const CacheConfig& c = cfg.l2.slice;
  L2Bench b(cfg, 0);
  b.noc.add(req(0, lineIn(c, 0, 0), AccessKind::Load, c.line_bytes));
  b.noc.add(req(1, lineIn(c, 0, 1), AccessKind::Load, c.line_bytes));
  b.run();
  b.expectClean();
  const auto& o = b.noc.outcomes();
  EXPECT_EQ(o[0].answered, kNextLevel + b.H);
  // Held until the fill frees the MSHR (cycle kNextLevel); the fill takes the only bank in
  // that cycle, so the lookup is a cycle later; then a miss of its own.
  EXPECT_EQ(o[1].accepted, kNextLevel + 1);
  EXPECT_EQ(o[1].answered, kNextLevel + 1 + kNextLevel + b.H);
  EXPECT_EQ(b.stat("/stall_cycles/mshr_full"), kNextLevel - 1);
  EXPECT_EQ(b.dram.received().size(), 2u);
}

TEST(L2Slice, MshrMergeAcrossRequesters) {
  newSimulation();
  const PlatformConfig cfg = platform({"memory.partitions=1"});
  const CacheConfig& c = cfg.l2.slice;
  L2Bench b(cfg, 0);
  const uint64_t a = lineIn(c, 4, 4);
  Request r0 = req(0, a, AccessKind::Load, c.line_bytes), r1 = r0, r2 = r0;
  r1.cycle = 1;
  r1.sm = 5;
  r2.cycle = 2;
  r2.kind = AccessKind::Store;  // a write merging into a read miss: the fill is dirty
  r2.byteMask = firstBytes(8);
  for (const Request& r : {r0, r1, r2}) b.noc.add(r);
  b.run();
  b.expectClean();
  EXPECT_EQ(b.dram.received().size(), 1u);
  // One per cycle after the fill, in the order they merged (the MSHR replays them).
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(b.noc.outcomes()[i].answered, kNextLevel + b.H + uint64_t(i)) << i;
  EXPECT_EQ(b.stat("/mshr_merges"), 2u);
  EXPECT_TRUE(b.dirty(a));
}

TEST(L2Slice, DisabledPassesEverythingThrough) {
  newSimulation();
  const PlatformConfig cfg = platform({"l2.slice.enabled=false"});
  L2Bench b(cfg, 0);
  const uint64_t gap = kNextLevel + 1;
  const AccessKind kinds[] = {AccessKind::Load, AccessKind::Load, AccessKind::Store,
                              AccessKind::Atomic};
  for (int i = 0; i < 4; ++i) {
    Request r = req(i * gap, 0x1000, kinds[i], i == 3 ? 4 : 128);
    r.sm = 9;
    b.noc.add(r);
  }
  b.run();
  b.expectClean();
  const auto& r = b.dram.received();
  ASSERT_EQ(r.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(latency(b.noc.outcomes()[i]), kNextLevel) << i;
    EXPECT_EQ(r[i].addr, 0x1000u);
    EXPECT_EQ(r[i].kind, kinds[i]);
    EXPECT_EQ(r[i].bytes, i == 3 ? 4u : 128u);
    EXPECT_EQ(r[i].sm, 9u);  // the same payload, as the requester made it
    EXPECT_EQ(r[i].cycle, b.noc.outcomes()[i].sent);
  }
  EXPECT_EQ(b.l2.core().validLines(), 0u);
  EXPECT_EQ(b.stat("/bypassed"), 4u);
}

TEST(L2Slice, RandomTrafficUnderBackPressureLosesNothing) {
  newSimulation();
  // 64-byte lines under 128-byte requests, a tiny cache: merges, evictions, write-backs.
  const PlatformConfig cfg =
      platform({"memory.partitions=1", "l2.slice.line_bytes=64", "l2.slice.sets=4",
                "l2.slice.ways=2", "l2.slice.banks=2", "l2.slice.mshr_entries=4",
                "l2.slice.mshr_max_merge=2", "l2.slice.miss_queue=2"});
  L2Bench b(cfg, 0, 2);
  Rng rng(99);
  const int n = 600;
  for (int i = 0; i < n; ++i) {
    const uint32_t k = rng.below(20);
    const AccessKind kind = k < 10   ? AccessKind::Load
                            : k < 16 ? AccessKind::Store
                            : k < 18 ? AccessKind::Atomic
                                     : AccessKind::InstructionFetch;
    Request r = req(uint64_t(i / 2), uint64_t(rng.below(16)) * 128, kind,
                    kind == AccessKind::Atomic ? 4 : 128);
    if (kind == AccessKind::Store && rng.below(2)) r.byteMask = firstBytes(rng.below(128) + 1);
    b.noc.add(r);
  }
  b.run();
  b.expectClean();
  EXPECT_EQ(b.pool.available(), b.pool.created());
  uint64_t reads = 0, writes = 0;
  for (const Received& r : b.dram.received())
    (r.command == tlm::TLM_WRITE_COMMAND ? writes : reads) += 1;
  EXPECT_EQ(writes, b.stat("/dirty_writebacks"));
  EXPECT_EQ(reads, b.stat("/sent_down/reads"));
  const nlohmann::json st = b.l2.statsJson();
  EXPECT_EQ(st["accesses"].get<uint64_t>(),
            st["hits"].get<uint64_t>() + st["misses"].get<uint64_t>());
  // Every miss either merged, fetched its line, or (a whole-line write) was placed at once.
  EXPECT_LE(reads + b.stat("/mshr_merges"), st["misses"].get<uint64_t>());
  EXPECT_GT(writes, 0u);
  EXPECT_GT(b.stat("/mshr_merges"), 0u);
}

// The requester on another clock: requests are looked up on the next L2 edge, answers leave on
// L2 edges.
TEST(L2Slice, CrossesClockDomains) {
  newSimulation();
  const PlatformConfig cfg = platform({"memory.partitions=1", "gpu.clocks.l2_mhz=500"});
  const double requesterMhz = cfg.gpu.clocks.core_mhz;
  ASSERT_NE(requesterMhz, cfg.gpu.clocks.l2_mhz);
  L2Bench b(cfg, 0, ~0u, requesterMhz);
  const Clock req_clk(requesterMhz), l2(cfg.gpu.clocks.l2_mhz);
  const uint64_t a = 0x2000, sent[] = {3, 3 + 2 * (b.H + kNextLevel)};
  b.noc.add(req(sent[0], a, AccessKind::Load, 128));  // miss
  b.noc.add(req(sent[1], a, AccessKind::Load, 128));  // hit
  b.run();
  b.expectClean();
  for (int i = 0; i < 2; ++i) {
    const uint64_t at = sent[i] * req_clk.periodValue();                   // sent, in fs
    const uint64_t edge = (at + l2.periodValue() - 1) / l2.periodValue();  // L2 cycle
    const uint64_t done = edge + b.H + (i == 0 ? kNextLevel : 0);
    EXPECT_EQ(b.noc.outcomes()[i].answered, done * l2.periodValue() / req_clk.periodValue()) << i;
  }
}

TEST(L2Slice, CensusCountsEachSetsLinesTouchedSinceTheStatisticsWereReset) {
  newSimulation();
  const PlatformConfig cfg = platform({"memory.partitions=1", "l2.slices_per_partition=1"});
  const CacheConfig& c = cfg.l2.slice;
  const uint32_t W = c.ways, line = c.line_bytes;
  ASSERT_GE(W, 4u);
  L2Bench b(cfg, 0);
  // An earlier launch left set 0 full and two lines in set 1 (placed at cycle 0, the reset's).
  for (uint32_t i = 0; i < W; ++i) b.l2.warm(lineIn(c, i, 0), firstBytes(line), false);
  for (uint32_t i = 0; i < 2; ++i) b.l2.warm(lineIn(c, i, 1), firstBytes(line), false);
  b.l2.resetStats();
  // This launch: a hit on one of set 0's lines and a new line there (evicting another earlier
  // one), and a new line in set 1.
  const uint64_t gap = b.H + kNextLevel + 1;
  b.noc.add(req(gap, lineIn(c, 0, 0), AccessKind::Load, line));
  b.noc.add(req(2 * gap, lineIn(c, W, 0), AccessKind::Load, line));
  b.noc.add(req(3 * gap, lineIn(c, 2, 1), AccessKind::Load, line));
  b.run();
  b.expectClean();
  const auto census = [&](double growth) {
    L2Slice::LineCensus n;
    b.l2.census(growth, n);
    return std::pair{n.touched, n.pending};
  };
  // Set 0 holds 2 lines of this launch, set 1 one: each set is still to turn over (fewer than
  // its ways) if its touches times the growth reach its ways.
  EXPECT_EQ(census(1.0), std::pair(uint64_t{3}, uint64_t{0}));
  EXPECT_EQ(census(W / 2.0), std::pair(uint64_t{3}, uint64_t{2}));
  EXPECT_EQ(census(W), std::pair(uint64_t{3}, uint64_t{3}));
  // Statistics reset again: nothing is this launch's.
  b.l2.resetStats();
  EXPECT_EQ(census(double(W)), std::pair(uint64_t{0}, uint64_t{0}));
}

TEST(L2Slice, ConfigurationErrors) {
  newSimulation();
  PayloadPool pool;
  EXPECT_THROW(L2Slice("a", 0, platform({"l2.slice.write_policy=write-through"}), pool),
               InputError);
  EXPECT_THROW(L2Slice("b", 0, platform({"l2.slice.write_allocate=no-allocate"}), pool),
               InputError);
  try {
    L2Slice("c", 0, platform({"memory.partition_interleave_bytes=64"}), pool);
    ADD_FAILURE() << "a line wider than the partition interleave was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("partition_interleave_bytes"), std::string::npos);
  }
  // Without an L2 its policies do not matter: a platform file may hold any (a --set of one is
  // refused as having no effect).
  PlatformConfig noL2 = platform({"l2.slice.enabled=false"});
  noL2.l2.slice.write_policy = "write-through";
  EXPECT_NO_THROW(L2Slice("d", 0, noL2, pool));
  EXPECT_THROW(platform({"l2.slice.enabled=false", "l2.slice.write_policy=write-through"}),
               InputError);
}

}  // namespace
