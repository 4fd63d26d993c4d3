// Every catalog kernel produces the result its host reference computes, in functional mode,
// at the tiny and small problem sizes.
#include <algorithm>

#include <gtest/gtest.h>

#include "catalog.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;

namespace {

class CatalogKernel : public ::testing::TestWithParam<std::tuple<std::string, catalog::Size>> {};

TEST_P(CatalogKernel, MatchesHostReference) {
  const auto& [name, size] = GetParam();
  Device dev(test::platform(), ExecMode::Functional);
  auto wl = catalog::find(name).make(size);
  wl->setup(dev);
  wl->run(dev);
  catalog::CheckResult r = wl->check(dev);
  EXPECT_TRUE(r.pass) << name << " (" << wl->describe() << "): " << r.message;
  EXPECT_GT(dev.totalStats().warpInsts, 0u);
}

INSTANTIATE_TEST_SUITE_P(Functional, CatalogKernel,
                         ::testing::Combine(::testing::ValuesIn(catalog::names()),
                                            ::testing::Values(catalog::Size::Tiny,
                                                              catalog::Size::Small)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  catalog::sizeName(std::get<1>(info.param));
                         });

// And on rtx3070, whose launch limits differ (compute capability 8.6: 16 blocks, 99 KB of shared
// memory per block, registers allocated 256 per warp).
class CatalogFunctionalOnRtx3070 : public ::testing::TestWithParam<std::string> {};

TEST_P(CatalogFunctionalOnRtx3070, MatchesHostReference) {
  Device dev(loadPlatform("rtx3070"), ExecMode::Functional);
  auto wl = catalog::find(GetParam()).make(catalog::Size::Tiny);
  wl->setup(dev);
  wl->run(dev);
  catalog::CheckResult r = wl->check(dev);
  EXPECT_TRUE(r.pass) << GetParam() << ": " << r.message;
}

INSTANTIATE_TEST_SUITE_P(Rtx3070, CatalogFunctionalOnRtx3070, ::testing::ValuesIn(catalog::names()),
                         [](const auto& info) { return info.param; });

// Seed 001's root-cause stimuli give every SM its blocks (docs/catalog.md): at small size their
// grids follow the platform's SM count, and cta_waves's waves its occupancy (a quarter of the
// SM's shared memory per block: 4 blocks per SM), so a platform of 7 SMs gets 7 blocks of
// power_virus and aligned_dmiss, 14 of big_kernel, and 12 waves of 28 blocks of cta_waves.
TEST(CatalogRootCauses, GridsFollowTheSmCount) {
  const std::vector<std::pair<std::string, uint32_t>> perSm = {
      {"power_virus", 1}, {"aligned_dmiss", 1}, {"big_kernel", 2}, {"cta_waves", 12 * 4}};
  for (const uint32_t sms : {7u, 15u}) {
    for (const auto& [name, blocks] : perSm) {
      Device dev(loadPlatform("gtx480", {"gpu.num_sms=" + std::to_string(sms)}),
                 ExecMode::Functional);
      auto wl = catalog::find(name).make(catalog::Size::Small);
      wl->setup(dev);
      wl->run(dev);
      EXPECT_TRUE(wl->check(dev).pass) << name << " on " << sms << " SMs";
      ASSERT_FALSE(dev.launches().empty());
      for (const auto& l : dev.launches())
        EXPECT_EQ(l.grid.count(), uint64_t(blocks) * sms) << name << " on " << sms << " SMs";
      EXPECT_NE(wl->describe().find("grid=" + std::to_string(blocks * sms)), std::string::npos)
          << wl->describe();
    }
  }
}

// The same kernels in timing mode, on every warp-scheduling policy.
class CatalogKernelTiming : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
};

TEST_P(CatalogKernelTiming, MatchesHostReference) {
  const auto& [name, scheduler] = GetParam();
  Device dev(loadPlatform("gtx480", {"sm.scheduler=" + scheduler}), ExecMode::Timing);
  auto wl = catalog::find(name).make(catalog::Size::Tiny);
  wl->setup(dev);
  wl->run(dev);
  catalog::CheckResult r = wl->check(dev);
  EXPECT_TRUE(r.pass) << name << " on " << scheduler << ": " << r.message;
  uint64_t cycles = 0, issued = 0;
  for (const auto& l : dev.launches()) {
    ASSERT_TRUE(l.timing.has_value());
    cycles += l.timing->cycles;
    for (const auto& s : l.timing->sms) issued += s.counters.issued;
  }
  EXPECT_GT(cycles, 0u);
  EXPECT_EQ(issued, dev.totalStats().warpInsts);  // every executed instruction was issued once
}

INSTANTIATE_TEST_SUITE_P(Timing, CatalogKernelTiming,
                         ::testing::Combine(::testing::ValuesIn(catalog::names()),
                                            ::testing::Values("lrr", "gto", "two-level", "dfifo")),
                         [](const auto& info) {
                           std::string s = std::get<1>(info.param);
                           std::replace(s.begin(), s.end(), '-', '_');
                           return std::get<0>(info.param) + "_" + s;
                         });

// Every kernel on every platform, through the memory hierarchy, with a TLM-2.0 protocol checker
// on every memory connection (a violation fails the launch).
class CatalogOnPlatform : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(CatalogOnPlatform, MatchesHostReferenceWithoutProtocolViolations) {
  const auto& [name, platform] = GetParam();
  Device dev(loadPlatform(platform, {"gpu.check_protocol=true"}), ExecMode::Timing);
  ASSERT_EQ(dev.config().memory.model, "hierarchy");
  auto wl = catalog::find(name).make(catalog::Size::Tiny);
  wl->setup(dev);
  wl->run(dev);
  catalog::CheckResult r = wl->check(dev);
  EXPECT_TRUE(r.pass) << name << " on " << platform << ": " << r.message;
  EXPECT_TRUE(dev.timingEngine()->gpu().protocolViolations().empty());
  uint64_t memoryRequests = 0;
  for (const auto& l : dev.launches())
    memoryRequests += l.timing->memory["l1d"]["totals"]["sent_down"]["total"].get<uint64_t>();
  EXPECT_GT(memoryRequests, 0u);  // the kernel's traffic went through the hierarchy
}

INSTANTIATE_TEST_SUITE_P(Platforms, CatalogOnPlatform,
                         ::testing::Combine(::testing::ValuesIn(catalog::names()),
                                            ::testing::Values("gtx480", "fermi16-mesh",
                                                              "stream-4x4", "stream-8x8",
                                                              "stream-11x11", "rtx3070")),
                         [](const auto& info) {
                           std::string s = std::get<1>(info.param);
                           std::replace(s.begin(), s.end(), '-', '_');
                           return std::get<0>(info.param) + "_" + s;
                         });

TEST(Catalog, HasAtLeastTwentyKernels) { EXPECT_GE(catalog::names().size(), 20u); }

// The large size: the kernels that declare one give a larger problem than at default size (its
// description differs and names larger numbers); the others refuse it, naming the kernels that
// have one. (Their runs are benchmarks: docs/bench/large-functional.json.)
TEST(Catalog, LargeSizeWhereDeclaredAndRefusedElsewhere) {
  const std::vector<std::string> large = catalog::largeNames();
  EXPECT_GE(large.size(), 6u);
  const auto largestNumber = [](const std::string& text) {
    uint64_t best = 0, cur = 0;
    for (char c : text + " ") {
      if (c >= '0' && c <= '9') {
        cur = cur * 10 + uint64_t(c - '0');
      } else {
        best = std::max(best, cur);
        cur = 0;
      }
    }
    return best;
  };
  for (const auto& e : catalog::all()) {
    if (e.large) {
      const std::string d = e.make(catalog::Size::Default)->describe();
      const std::string l = e.make(catalog::Size::Large)->describe();
      EXPECT_NE(d, l) << e.name;
      EXPECT_GT(largestNumber(l), 2 * largestNumber(d)) << e.name << ": " << d << " / " << l;
      continue;
    }
    try {
      e.make(catalog::Size::Large);
      ADD_FAILURE() << e.name << " accepted --size large";
    } catch (const InputError& ex) {
      const std::string what = ex.what();
      EXPECT_NE(what.find("--size large: " + e.name + " has no large size"), std::string::npos)
          << what;
      EXPECT_NE(what.find(large.front()), std::string::npos) << what;
    }
  }
}

TEST(Catalog, UnknownKernelSuggestsTheClosest) {
  try {
    catalog::find("vecad");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'vecadd'"), std::string::npos) << e.what();
  }
}

}  // namespace
