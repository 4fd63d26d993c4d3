// Every catalog kernel produces the result its host reference computes, in functional mode,
// at the tiny and small problem sizes.
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

TEST(Catalog, HasAtLeastTwentyKernels) { EXPECT_GE(catalog::names().size(), 20u); }

TEST(Catalog, UnknownKernelSuggestsTheClosest) {
  try {
    catalog::find("vecad");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'vecadd'"), std::string::npos) << e.what();
  }
}

}  // namespace
