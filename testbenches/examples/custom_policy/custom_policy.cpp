// Example 3: a testbench that brings its own warp-scheduling policy and plugs it into the model
// through the public registry, without editing gpusc.
//
// The policy ("youngest-first") tries the most recently started warp first: the opposite of
// the built-in greedy-then-oldest. The testbench registers it in its own gpusc::Policies (which
// starts with the built-in policies), builds the platform with sm.scheduler=youngest-first, runs
// the catalog's vecadd in timing mode and checks that the results are right and that the SMs
// really scheduled with this policy.
#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "catalog.hpp"
#include "gpu/device.hpp"
#include "gpu/policies.hpp"
#include "sm/warp_scheduler.hpp"

namespace {

// Counts what the model asked of the policy, to show it was used.
struct Usage {
  std::atomic<uint64_t> made{0}, orders{0}, issues{0};
};

class YoungestFirst : public gpusc::sm::WarpSchedulingPolicy {
 public:
  explicit YoungestFirst(Usage& u) : usage_(u) {}
  void add(uint32_t warp, uint64_t age) override { warps_.emplace_back(age, warp), dirty_ = true; }
  void remove(uint32_t warp) override {
    warps_.erase(std::remove_if(warps_.begin(), warps_.end(),
                                [&](const auto& w) { return w.second == warp; }),
                 warps_.end());
    dirty_ = true;
  }
  const std::vector<uint32_t>& order() override {
    ++usage_.orders;
    if (dirty_) {  // newest (largest age) first
      std::sort(warps_.begin(), warps_.end(), [](auto a, auto b) { return a.first > b.first; });
      order_.clear();
      for (const auto& w : warps_) order_.push_back(w.second);
      dirty_ = false;
    }
    return order_;
  }
  void issued(uint32_t) override { ++usage_.issues; }

 private:
  Usage& usage_;
  std::vector<std::pair<uint64_t, uint32_t>> warps_;  // (age, warp)
  std::vector<uint32_t> order_;
  bool dirty_ = false;
};

// The testbench's policies: the built-ins plus its own. `usage` must outlive every model built
// from them (the factory is called once per warp scheduler of every SM).
std::shared_ptr<gpusc::Policies> policiesWithYoungestFirst(Usage& usage) {
  auto p = std::make_shared<gpusc::Policies>();
  p->warpSchedulers.add("youngest-first", "the most recently started warp first",
                        [&usage](const gpusc::SmConfig&) {
                          ++usage.made;
                          return std::make_unique<YoungestFirst>(usage);
                        });
  return p;
}

TEST(CustomPolicy, TheModelSchedulesWithTheTestbenchsWarpScheduler) {
  Usage usage;
  const auto policies = policiesWithYoungestFirst(usage);
  const gpusc::PlatformConfig cfg =
      gpusc::loadPlatform("gtx480", {"sm.scheduler=youngest-first", "gpu.num_sms=2"}, policies);
  EXPECT_EQ(cfg.sm.scheduler, "youngest-first");

  gpusc::Device dev(cfg, gpusc::ExecMode::Timing);
  auto work = gpusc::catalog::find("vecadd").make(gpusc::catalog::Size::Tiny);
  work->setup(dev);
  work->run(dev);
  const auto check = work->check(dev);
  EXPECT_TRUE(check.pass) << check.message;

  // One policy object per warp scheduler of every SM, and it chose every issued instruction.
  EXPECT_EQ(usage.made.load(), uint64_t(cfg.gpu.num_sms) * cfg.sm.schedulers);
  EXPECT_GT(usage.orders.load(), 0u);
  EXPECT_GT(usage.issues.load(), 0u);
  EXPECT_LE(usage.issues.load(), dev.totalStats().warpInsts);
}

TEST(CustomPolicy, OnlyThePlatformBuiltWithThePoliciesKnowsTheName) {
  Usage usage;
  const auto policies = policiesWithYoungestFirst(usage);
  // Without the testbench's policies the key names an unknown policy: an error naming the key.
  try {
    gpusc::loadPlatform("gtx480", {"sm.scheduler=youngest-first"});
    FAIL() << "the built-in registry accepted a policy registered elsewhere";
  } catch (const gpusc::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sm.scheduler"), std::string::npos) << e.what();
  }
  // The built-ins are still there, and a name cannot be registered twice.
  EXPECT_TRUE(policies->warpSchedulers.contains("gto"));
  EXPECT_FALSE(gpusc::Policies::builtin().warpSchedulers.contains("youngest-first"));
  EXPECT_THROW(
      policies->warpSchedulers.add("gto", "again",
                                   [](const gpusc::SmConfig&) {
                                     return std::unique_ptr<gpusc::sm::WarpSchedulingPolicy>();
                                   }),
      gpusc::InputError);
}

}  // namespace
