// Policies a testbench registers (gpu/policies.hpp, shader/shader_policies.hpp): every policy key
// accepts the names registered for it, the model creates its units' policies from the platform's
// Policies, and nothing is global (the built-ins and other Policies objects never see a
// registration).
#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cache/replacement.hpp"
#include "catalog.hpp"
#include "common/error.hpp"
#include "dram/dram_scheduler.hpp"
#include "gpu/cta_scheduler.hpp"
#include "gpu/device.hpp"
#include "gpu/policies.hpp"
#include "shader/shader_config.hpp"
#include "shader/shader_core.hpp"
#include "shader/shader_policies.hpp"
#include "sm/simd_issue_control.hpp"
#include "sm/warp_scheduler.hpp"
#include "support/tlm_harness.hpp"

namespace gpusc {
namespace {

struct Counts {
  std::atomic<uint32_t> warp{0}, cta{0}, simd{0}, dram{0};
};

// Policies with "counted-<builtin>" for each of the four kinds: the built-in policy, counted.
std::shared_ptr<Policies> countedPolicies(Counts& n) {
  auto p = std::make_shared<Policies>();
  const Policies& b = Policies::builtin();
  p->warpSchedulers.add("counted-gto", "gto, counted", [&n, &b](const SmConfig& c) {
    ++n.warp;
    return b.warpSchedulers.create("gto", c);
  });
  p->ctaPlacement.add("counted-round-robin", "round-robin, counted",
                      [&n, &b](const PlatformConfig& c) {
                        ++n.cta;
                        return b.ctaPlacement.create("round-robin", c);
                      });
  p->simdIssue.add("counted-none", "none, counted", [&n, &b](const SimdIssueConfig& c) {
    ++n.simd;
    return b.simdIssue.create("none", c);
  });
  p->dramSchedulers.add("counted-fr-fcfs", "fr-fcfs, counted", [&n, &b](const DramConfig& c) {
    ++n.dram;
    return b.dramSchedulers.create("fr-fcfs", c);
  });
  return p;
}

const std::vector<std::string> kCountedKeys = {
    "sm.scheduler=counted-gto", "gpu.cta_placement=counted-round-robin",
    "power.simd_issue.policy=counted-none", "memory.controller.scheduler=counted-fr-fcfs",
    "gpu.num_sms=3"};

void runVecadd(const PlatformConfig& cfg) {
  Device dev(cfg, ExecMode::Timing);
  auto w = catalog::find("vecadd").make(catalog::Size::Tiny);
  w->setup(dev);
  w->run(dev);
  const auto check = w->check(dev);
  EXPECT_TRUE(check.pass) << check.message;
}

TEST(Policies, EveryPolicyKeyUsesTheRegisteredPolicy) {
  Counts n;
  const PlatformConfig cfg = loadPlatform("gtx480", kCountedKeys, countedPolicies(n));
  runVecadd(cfg);
  // One per unit that has a policy: each warp scheduler of each SM, the CTA scheduler, each
  // SM's SIMD issue control, each partition's memory controller.
  EXPECT_EQ(n.warp.load(), cfg.gpu.num_sms * cfg.sm.schedulers);
  EXPECT_EQ(n.cta.load(), 1u);
  EXPECT_EQ(n.simd.load(), cfg.gpu.num_sms);
  EXPECT_EQ(n.dram.load(), cfg.memory.partitions);
}

// A built-in policy passed through; it keeps no order version (kUnversioned), so the SM
// compares the order warp by warp.
class Forwarding : public sm::WarpSchedulingPolicy {
 public:
  explicit Forwarding(std::unique_ptr<sm::WarpSchedulingPolicy> inner) : inner_(std::move(inner)) {}
  void add(uint32_t w, uint64_t age) override { inner_->add(w, age); }
  void remove(uint32_t w) override { inner_->remove(w); }
  const std::vector<uint32_t>& order() override { return inner_->order(); }
  uint32_t preferred() const override { return inner_->preferred(); }
  void issued(uint32_t w) override { inner_->issued(w); }
  void waitsLong(uint32_t w) override { inner_->waitsLong(w); }
  void longWaitOver(uint32_t w) override { inner_->longWaitOver(w); }
  void reset() override { inner_->reset(); }

 protected:
  std::unique_ptr<sm::WarpSchedulingPolicy> inner_;
};

// Any policy with its preferred warp moved into the order: that warp first, then the policy's
// order without it, and no preferred(). The built-in gto gives its greedy warp through
// preferred(); wrapped, the same warps are tried in the same order, so every result must be
// the same.
class PreferredInOrder : public Forwarding {
 public:
  using Forwarding::Forwarding;
  const std::vector<uint32_t>& order() override {
    const uint32_t lead = inner_->preferred();
    out_.clear();
    if (lead != kNoWarp) out_.push_back(lead);
    for (uint32_t w : inner_->order())
      if (w != lead) out_.push_back(w);
    return out_;
  }
  uint32_t preferred() const override { return kNoWarp; }

 private:
  std::vector<uint32_t> out_;
};

// A run of `kernel` at tiny on 4 SMs of gtx480 with sm.scheduler `scheduler`: its cycles and
// every scheduler's issues and stall reasons.
struct SchedulerRun {
  bool passed = false;
  uint64_t cycles = 0;
  std::vector<std::array<uint64_t, sm::kNumStalls>> outcomes;
};
SchedulerRun runWithScheduler(const char* kernel, const std::string& scheduler,
                              std::shared_ptr<const Policies> p) {
  Device dev(loadPlatform("gtx480", {"sm.scheduler=" + scheduler, "gpu.num_sms=4"}, p),
             ExecMode::Timing);
  auto w = catalog::find(kernel).make(catalog::Size::Tiny);
  w->setup(dev);
  w->run(dev);
  SchedulerRun r;
  r.passed = w->check(dev).pass;
  const gpu::TimingResult& t = *dev.launches().back().timing;
  r.cycles = t.cycles;
  for (const gpu::SmTiming& sm : t.sms)
    r.outcomes.insert(r.outcomes.end(), sm.schedulers.begin(), sm.schedulers.end());
  return r;
}

TEST(Policies, PreferredWarpIsTriedFirstAsIfFirstInTheOrder) {
  auto p = std::make_shared<Policies>();
  p->warpSchedulers.add("gto-in-order", "gto with the greedy warp in order()",
                        [](const SmConfig& c) {
                          return std::make_unique<PreferredInOrder>(
                              Policies::builtin().warpSchedulers.create("gto", c));
                        });
  const SchedulerRun gto = runWithScheduler("hotspot", "gto", p);
  const SchedulerRun inOrder = runWithScheduler("hotspot", "gto-in-order", p);
  ASSERT_TRUE(gto.passed);
  ASSERT_TRUE(inOrder.passed);
  EXPECT_GT(gto.cycles, 0u);
  EXPECT_EQ(gto.cycles, inOrder.cycles);
  EXPECT_EQ(gto.outcomes, inOrder.outcomes);  // every scheduler's issues and stall reasons
}

// Every built-in warp scheduling policy keeps an order version, so the SM skips comparing the
// order warp by warp: whenever order()'s contents change, so must the version (else the SM would
// scan a stale order), through any sequence of the policy's calls, a reset included.
TEST(Policies, TheOrderVersionChangesWheneverTheOrderDoes) {
  SmConfig cfg;
  cfg.two_level_active = 3;
  for (const char* name : {"lrr", "gto", "two-level", "dfifo"}) {
    auto policy = Policies::builtin().warpSchedulers.create(name, cfg);
    std::vector<uint32_t> last = policy->order();
    uint64_t version = policy->orderVersion();
    ASSERT_NE(version, sm::WarpSchedulingPolicy::kUnversioned) << name;
    std::vector<uint32_t> live;
    uint64_t age = 0, changes = 0;
    uint32_t seed = 12345;
    auto next = [&](uint32_t n) {
      seed = seed * 1103515245u + 12345u;
      return (seed >> 16) % n;
    };
    for (int step = 0; step < 4000; ++step) {
      const uint32_t op = next(8);
      if (op == 0 || live.empty()) {
        const uint32_t w = next(16);
        if (std::find(live.begin(), live.end(), w) == live.end()) {
          policy->add(w, age++);
          live.push_back(w);
        }
      } else {
        const uint32_t w = live[next(uint32_t(live.size()))];
        if (op == 1) {
          policy->remove(w);
          live.erase(std::find(live.begin(), live.end(), w));
        } else if (op <= 4) {
          policy->issued(w);
        } else if (op == 5) {
          policy->waitsLong(w);
        } else if (op == 6) {
          policy->longWaitOver(w);
        } else if (next(50) == 0) {
          policy->reset();
          live.clear();
        }
      }
      const std::vector<uint32_t>& order = policy->order();
      const uint64_t v = policy->orderVersion();
      if (order != last) {
        EXPECT_NE(v, version) << name << " at step " << step;
        ++changes;
      }
      last = order;
      version = v;
    }
    EXPECT_GT(changes, 100u) << name;  // the sequence did change the order
  }
}

// Each built-in policy passed through Forwarding, which keeps no order version: the SM then
// compares the order instead, and the run must be the same.
TEST(Policies, APolicyWithoutAnOrderVersionRunsTheSame) {
  for (const char* name : {"lrr", "gto", "two-level", "dfifo"}) {
    auto p = std::make_shared<Policies>();
    p->warpSchedulers.add(
        "unversioned", "the policy without its order version", [name](const SmConfig& c) {
          return std::make_unique<Forwarding>(Policies::builtin().warpSchedulers.create(name, c));
        });
    const SchedulerRun versioned = runWithScheduler("bfs", name, p);
    const SchedulerRun unversioned = runWithScheduler("bfs", "unversioned", p);
    ASSERT_TRUE(versioned.passed) << name;
    ASSERT_TRUE(unversioned.passed) << name;
    EXPECT_GT(versioned.cycles, 0u) << name;
    EXPECT_EQ(versioned.cycles, unversioned.cycles) << name;
    EXPECT_EQ(versioned.outcomes, unversioned.outcomes) << name;
  }
}

TEST(Policies, AnotherPoliciesObjectGetsAModelOfItsOwn) {
  // Same names, same configuration, other Policies: the second device must not reuse the
  // model (and policy objects) built from the first.
  Counts first, second;
  runVecadd(loadPlatform("gtx480", kCountedKeys, countedPolicies(first)));
  runVecadd(loadPlatform("gtx480", kCountedKeys, countedPolicies(second)));
  EXPECT_GT(first.warp.load(), 0u);
  EXPECT_EQ(second.warp.load(), first.warp.load());
}

TEST(Policies, RegisteredNamesAreKnownOnlyWhereRegistered) {
  Counts n;
  const auto p = countedPolicies(n);
  // The error lists the registered name beside the built-ins, and names the key.
  try {
    loadPlatform("gtx480", {"sm.scheduler=counted-gt"}, p);
    FAIL() << "an unknown policy name was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "sm.scheduler: 'counted-gt' is not one of: lrr, gto, two-level, dfifo, "
                  "counted-gto (did you mean 'counted-gto'?)"),
              std::string::npos)
        << e.what();
  }
  // A name registered for one key is not accepted at another.
  EXPECT_THROW(loadPlatform("gtx480", {"gpu.cta_placement=counted-gto"}, p), InputError);
  // Neither the built-ins nor a fresh Policies know it.
  EXPECT_THROW(loadPlatform("gtx480", {"sm.scheduler=counted-gto"}), InputError);
  EXPECT_THROW(loadPlatform("gtx480", {"sm.scheduler=counted-gto"}, std::make_shared<Policies>()),
               InputError);
  EXPECT_FALSE(Policies::builtin().warpSchedulers.contains("counted-gto"));
  // A registration never replaces a policy, and needs a name and a factory.
  const auto noFactory = Registry<sm::WarpSchedulingPolicy, const SmConfig&>::Factory();
  Policies q;
  EXPECT_THROW(q.warpSchedulers.add("gto", "again",
                                    [](const SmConfig& c) {
                                      return Policies::builtin().warpSchedulers.create("lrr", c);
                                    }),
               InputError);
  EXPECT_THROW(q.warpSchedulers.add("", "nameless", noFactory), InputError);
  EXPECT_THROW(q.warpSchedulers.add("empty", "no factory", noFactory), InputError);
}

TEST(Policies, EveryCacheUsesTheRegisteredReplacementPolicy) {
  std::atomic<uint32_t> made{0};
  auto p = std::make_shared<Policies>();
  p->replacement.add("counted-lru", "lru, counted",
                     [&made](uint32_t sets, uint32_t ways, uint64_t seed) {
                       ++made;
                       return Policies::builtin().replacement.create("lru", sets, ways, seed);
                     });
  const PlatformConfig cfg =
      loadPlatform("gtx480",
                   {"gpu.num_sms=2", "sm.icache.replacement=counted-lru",
                    "sm.const_cache.replacement=counted-lru", "sm.l1d.replacement=counted-lru",
                    "l2.slice.replacement=counted-lru"},
                   p);
  runVecadd(cfg);
  // Each SM's instruction cache, constant cache and L1D, and every L2 slice.
  EXPECT_EQ(made.load(), 3 * cfg.gpu.num_sms + cfg.memory.partitions * cfg.l2.slices_per_partition);
}

TEST(Policies, ShaderBufferGatingUsesTheRegisteredPolicy) {
  std::atomic<uint32_t> made{0};
  auto p = std::make_shared<shader::ShaderPolicies>();
  p->gating.add("counted-immediate", "immediate, counted",
                [&made](const shader::ShaderGatingConfig& g) {
                  ++made;
                  return shader::ShaderPolicies::builtin().gating.create("immediate", g);
                });
  const shader::ShaderPlatformConfig cfg =
      shader::loadShaderPlatform("shader-cluster", {"gating.input=counted-immediate"}, p);
  test::newSimulation();
  shader::ShaderCore core("core", cfg);  // its input buffer gates with the registered policy
  EXPECT_EQ(made.load(), 1u);
  EXPECT_THROW(shader::loadShaderPlatform("shader-cluster", {"gating.output=counted-immediate"}),
               InputError);
}

}  // namespace
}  // namespace gpusc
