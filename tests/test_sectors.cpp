// Sectored caches end to end (docs/memory-system.md): on rtx3070 (32-byte sectors in 128-byte
// lines, in the L1 and the L2) a load that touches one word of a line moves one sector, not the
// line, through the L2, across the crossbar and over the DRAM bus. Each test runs the same
// kernel on the platform as it is and with sector_bytes set to 0 (unsectored) and derives the
// difference from the geometry: lines touched, sectors per line, the crossbar's flit and header
// sizes, the DRAM burst.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gpu/device.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;

namespace {

// Thread t reads the word at in + t x 128 (one word in each line), then, after that load has
// returned (its address depends on the value read, which is 0), the word 32 bytes further on:
// the line's second sector. It writes the sum to out[t].
const char* const kTwoSectorsKernel = R"(
.visible .entry two_sectors(.param .u64 in, .param .u64 out)
{
  .reg .b64 %rd<10>;
  .reg .b32 %r<10>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r4, %r1, %r2, %r3;
  mul.wide.u32 %rd3, %r4, 128;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4];
  cvt.rzi.u32.f32 %r5, %f1;
  cvt.u64.u32 %rd5, %r5;
  add.s64 %rd6, %rd4, %rd5;
  ld.global.f32 %f2, [%rd6+32];
  add.f32 %f3, %f1, %f2;
  mul.wide.u32 %rd7, %r4, 4;
  add.s64 %rd8, %rd2, %rd7;
  st.global.f32 [%rd8], %f3;
  ret;
}
)";

constexpr uint32_t kCtas = 8, kThreads = 128;
constexpr uint32_t kLines = kCtas * kThreads;  // lines of `in` the kernel touches

struct Traffic {
  uint64_t dramReadBursts = 0, dramBytes = 0, replyFlits = 0;
  uint64_t l1Fetched = 0, l1SectorMisses = 0, l2Fetched = 0, l2SectorMisses = 0;
};

Traffic run(const std::vector<std::string>& sets) {
  const PlatformConfig c = loadPlatform("rtx3070", sets);
  Device dev(c, ExecMode::Timing);
  const DevPtr in = dev.malloc(uint64_t(kLines) * 128), out = dev.malloc(uint64_t(kLines) * 4);
  Module& m = dev.loadModule(test::module(kTwoSectorsKernel), "two_sectors.ptx");
  dev.launch(m.kernel("two_sectors"), {kCtas}, {kThreads}, 0, KernelArgs().ptr(in).ptr(out));
  const nlohmann::json& mem = dev.launches().back().timing->memory;
  Traffic t;
  t.dramReadBursts = mem["dram"]["totals"]["read_bursts"].get<uint64_t>();
  t.dramBytes = mem["dram"]["totals"]["bytes"].get<uint64_t>();
  t.replyFlits = mem["interconnect"]["networks"]["reply"]["flits"].get<uint64_t>();
  const auto sectors = [](const nlohmann::json& cache, const char* key) {
    return cache["totals"].contains("sectors") ? cache["totals"]["sectors"][key].get<uint64_t>()
                                               : uint64_t(0);
  };
  t.l1Fetched = sectors(mem["l1d"], "fetched");
  t.l1SectorMisses = sectors(mem["l1d"], "sector_misses");
  t.l2Fetched = sectors(mem["l2"], "fetched");
  t.l2SectorMisses = sectors(mem["l2"], "sector_misses");
  return t;
}

const std::vector<std::string> kUnsectored = {"sm.l1d.sector_bytes=0", "l2.slice.sector_bytes=0"};

}  // namespace

// Each line's first load misses both caches and fetches sector 0; the second, after the first
// has filled the line, finds the line without sector 1 in both (a sector miss) and fetches it
// alone: two sectors per line, at each level.
TEST(SectoredCaches, AStridedLoadFetchesOnlyTheSectorsItTouches) {
  const Traffic s = run({});
  EXPECT_EQ(s.l1Fetched, 2u * kLines);
  EXPECT_EQ(s.l1SectorMisses, uint64_t(kLines));
  EXPECT_EQ(s.l2SectorMisses, uint64_t(kLines));
  // The L2 fetches the kernel's code and parameter lines too, whole.
  EXPECT_GE(s.l2Fetched, 2u * kLines);
  EXPECT_LE(s.l2Fetched, 2u * kLines + 4 * 16);
}

// Unsectored, each line crosses the DRAM bus whole once (the second load hits in the L1);
// sectored, two of its sectors do. With rtx3070's 32-byte GDDR6 burst (= a sector) the DRAM reads
// differ by (line / burst - 2) bursts per line. The kernel's parameters (16 bytes) are one
// constant-cache line, narrower than an L2 line: sectored, the L2 fetches only its sectors. The
// code is fetched in whole lines either way.
TEST(SectoredCaches, OnlyTheFetchedSectorsCrossTheDramBus) {
  const PlatformConfig c = loadPlatform("rtx3070");
  const uint32_t burst = c.memory.dram.burstBytes();
  ASSERT_EQ(burst, c.l2.slice.sector_bytes);
  ASSERT_EQ(c.sm.icache.line_bytes, c.l2.slice.line_bytes);
  const uint32_t perLine = c.l2.slice.line_bytes / burst;
  const uint32_t paramLine = (c.l2.slice.line_bytes - c.sm.const_cache.line_bytes) / burst;
  const Traffic s = run({}), u = run(kUnsectored);
  EXPECT_EQ(u.l1Fetched, 0u);  // unsectored caches report no sector counts
  EXPECT_EQ(u.dramReadBursts - s.dramReadBursts, uint64_t(perLine - 2) * kLines + paramLine);
  // The DRAM's byte count is what crossed its bus: the sectors, not the lines they are in (the
  // kernel's stores stay in the L2, and a sector is a burst).
  EXPECT_EQ(s.dramBytes, s.dramReadBursts * burst);
  EXPECT_EQ(u.dramBytes - s.dramBytes, (u.dramReadBursts - s.dramReadBursts) * burst);
}

// The answers carry only their sectors across the crossbar: an L2 answer to an L1 fetch of one
// sector is ceil((header + sector) / flit) flits, of a whole line ceil((header + line) / flit).
// Sectored, each line is answered twice with one sector; unsectored, once with the line.
TEST(SectoredCaches, AnswersCarryOnlyTheirSectorsAcrossTheCrossbar) {
  const PlatformConfig c = loadPlatform("rtx3070");
  const NocConfig& n = c.noc;
  const auto flits = [&](uint32_t bytes) {
    return (n.header_bytes + bytes + n.flit_bytes - 1) / n.flit_bytes;
  };
  const Traffic s = run({}), u = run(kUnsectored);
  const uint64_t sectored = 2 * uint64_t(kLines) * flits(c.l2.slice.sector_bytes);
  const uint64_t whole = uint64_t(kLines) * flits(c.l2.slice.line_bytes);
  ASSERT_GT(whole, sectored);
  EXPECT_EQ(u.replyFlits - s.replyFlits, whole - sectored);
}
