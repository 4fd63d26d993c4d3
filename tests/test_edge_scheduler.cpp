// The order of the model's clocked units within an instant (common/edge_scheduler.hpp), and a
// run's independence from SystemC processes outside the model.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "catalog.hpp"
#include "common/clock.hpp"
#include "common/edge_scheduler.hpp"
#include "gpu/device.hpp"
#include "gpu/policies.hpp"

using namespace gpusc;

namespace {

// Timed events of its own at the instants the model's units run, and a process that runs at
// each of them: it changes the order in which SystemC releases equal-time events and runs
// processes, and nothing else. It ticks from `start` (or the first instant) until `stop` (or
// `until`), so that the simulation runs dry as it would without it.
class Bystander : public sc_core::sc_module {
 public:
  Bystander(const sc_core::sc_module_name& name, std::vector<sc_core::sc_time> periods,
            sc_core::sc_time until, const sc_core::sc_event* start = nullptr,
            const sc_core::sc_event* stop = nullptr)
      : sc_core::sc_module(name), periods_(std::move(periods)), until_(until) {
    SC_METHOD(tick);
    for (auto& e : events_) sensitive << e;
    if (start) {
      sensitive << *start;
      dont_initialize();
    }
    if (stop) {
      SC_METHOD(halt);
      sensitive << *stop;
      dont_initialize();
    }
  }
  uint64_t ticks = 0;

 private:
  SC_HAS_PROCESS(Bystander);
  void tick() {
    ++ticks;
    if (sc_core::sc_time_stamp() >= until_) return;
    for (size_t i = 0; i < std::size(events_); ++i)
      events_[i].notify(periods_[(ticks + i) % periods_.size()]);
  }
  void halt() {
    for (auto& e : events_) e.cancel();
  }
  std::vector<sc_core::sc_time> periods_;
  sc_core::sc_time until_;
  sc_core::sc_event events_[5];
};

// A fresh SystemC context for a scheduler of our own, and a log of what ran when.
struct Bench {
  Bench() {
    sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
    sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
    sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  }
  std::vector<std::string> log;
  EdgeScheduler::Unit add(EdgeScheduler& s, uint32_t rank, const std::string& name,
                          std::function<void()> also = {}) {
    return s.add(rank, [this, name, also] {
      log.push_back(fmt::format("{}@{}", name, sc_core::sc_time_stamp().value()));
      if (also) also();
    });
  }
};

}  // namespace

TEST(EdgeScheduler, RunsUnitsByTimeThenRankThenTheOrderTheyWereAdded) {
  Bench b;
  EdgeScheduler s("edges");
  const auto a = b.add(s, 2, "a");
  const auto x = b.add(s, 0, "x");
  const auto c = b.add(s, 1, "c");
  const auto y = b.add(s, 0, "y");
  // Equal times released by SystemC in whatever order its heap gives: not the units' order.
  Bystander by("bystander", {sc_core::sc_time(10, sc_core::SC_PS)},
               sc_core::sc_time(30, sc_core::SC_PS));
  for (auto u : {a, y, c, x}) s.wakeAt(u, 10000);  // 10 ps, in femtoseconds' values
  s.wakeAt(a, 5000);                               // earlier: replaces 10 ps
  s.wakeAt(c, 20000);                              // later than its pending 10 ps: ignored
  sc_core::sc_start();
  EXPECT_EQ(b.log, (std::vector<std::string>{"a@5000", "x@10000", "y@10000", "c@10000"}));
  EXPECT_GT(by.ticks, 2u);
}

TEST(EdgeScheduler, AUnitWokenForNowRunsInThisPassIfLaterElseInAnotherPass) {
  Bench b;
  EdgeScheduler s("edges");
  EdgeScheduler::Unit early = 0, late = 0, mid = 0;
  early = b.add(s, 0, "early");
  mid = b.add(s, 1, "mid", [&] {
    if (sc_core::sc_time_stamp().value() == 1000) {
      s.wakeAt(early, 1000);  // ranks before mid: another pass at the same instant
      s.wakeAt(late, 0);      // ranks after mid (and a past time means now): this pass
      s.wakeAt(mid, 3000);
    }
  });
  late = b.add(s, 2, "late");
  s.wakeAt(mid, 1000);
  sc_core::sc_start();
  EXPECT_EQ(b.log, (std::vector<std::string>{"mid@1000", "late@1000", "early@1000", "mid@3000"}));
}

// The running unit's own requests: the earliest one counts (one for now runs in a later pass,
// after the units still due in this one), and a cancel drops what it asked for.
TEST(EdgeScheduler, TheRunningUnitsOwnRequestsReplaceOrCancelItsNextRun) {
  Bench b;
  EdgeScheduler s("edges");
  EdgeScheduler::Unit self = 0, other = 0;
  int runs = 0;
  self = b.add(s, 0, "self", [&] {
    ++runs;
    if (runs == 1) {
      s.wakeAt(self, 5000);
      s.wakeAt(self, 1000);  // earlier: replaces 5000
      s.wakeAt(self, 7000);  // later than a pending request: ignored
      EXPECT_EQ(s.pendingTime(self), 1000u);
    } else if (runs == 2) {
      s.wakeAt(self, 6000);
      s.cancel(self);  // nothing more
      EXPECT_EQ(s.pendingTime(self), EdgeScheduler::kNever);
    }
  });
  other = b.add(s, 1, "other");
  s.wakeAt(self, 1000);
  s.wakeAt(other, 1000);
  sc_core::sc_start();
  EXPECT_EQ(b.log, (std::vector<std::string>{"self@1000", "other@1000", "self@1000"}));
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(sc_core::sc_time_stamp().value(), 1000u);
}

TEST(EdgeScheduler, ACancelledUnitDoesNotRunAndTheSimulationRunsDry) {
  Bench b;
  EdgeScheduler s("edges");
  const auto u = b.add(s, 0, "u");
  const auto v = b.add(s, 0, "v");
  s.wakeAt(u, 4000);
  s.wakeAt(v, 2000);
  s.cancel(u);
  sc_core::sc_start();
  EXPECT_EQ(b.log, (std::vector<std::string>{"v@2000"}));
  EXPECT_FALSE(sc_core::sc_pending_activity());
  EXPECT_EQ(s.pendingTime(u), EdgeScheduler::kNever);
  // Cancelled between runs, the only due unit leaves nothing scheduled: time does not move on.
  s.wakeAt(u, 9000);
  EXPECT_TRUE(sc_core::sc_pending_activity());
  s.cancel(u);
  EXPECT_FALSE(sc_core::sc_pending_activity());
  sc_core::sc_start();
  EXPECT_EQ(sc_core::sc_time_stamp().value(), 2000u);
  EXPECT_EQ(b.log.size(), 1u);
}

// A process outside the model, here one that runs at every edge of the core and DRAM clocks
// (a testbench's monitor, an RTL block's clock), leaves the run as it was. Before the units ran
// from one scheduler, such a process changed the order of the units' processes within an
// instant and with it the cycles (srad at tiny on gtx480: 25,959, or 25,950 with three more
// timed events at each core edge).
TEST(EdgeScheduler, AProcessOutsideTheModelDoesNotChangeTheRun) {
  for (const char* platform : {"gtx480", "stream-4x4"}) {
    for (const char* kernel : {"vecadd", "srad"}) {
      auto run = [&](bool bystander) {
        // Policies of its own: a platform of its own, so an engine (and a context) of its own.
        // (The first engine of the process takes the current context: a fresh one.)
        sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
        sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
        const PlatformConfig cfg = loadPlatform(platform, {}, std::make_shared<Policies>());
        Device dev(cfg, ExecMode::Timing);
        if (bystander) {
          const sc_core::sc_time core = sc_core::sc_time::from_value(
                                     Clock(cfg.gpu.clocks.core_mhz).periodValue()),
                                 dram = sc_core::sc_time::from_value(
                                     Clock(cfg.gpu.clocks.dram_mhz).periodValue());
          // From each kernel's start to its end: the launches start at the instants they would.
          const gpu::CtaScheduler& cs = dev.timingEngine()->gpu().ctaScheduler();
          new Bystander("bystander", {core, dram, core * 2.0}, sc_core::sc_max_time(),
                        &cs.kernel_started, &cs.kernel_finished);  // lives on with its context
        }
        auto wl = catalog::find(kernel).make(catalog::Size::Tiny);
        wl->setup(dev);
        wl->run(dev);
        EXPECT_TRUE(wl->check(dev).pass);
        return dev.launches();
      };
      const std::vector<LaunchRecord> plain = run(false), watched = run(true);
      ASSERT_EQ(plain.size(), watched.size());
      for (size_t i = 0; i < plain.size(); ++i) {
        const gpu::TimingResult &p = *plain[i].timing, &w = *watched[i].timing;
        SCOPED_TRACE(fmt::format("{} on {}, launch {}", kernel, platform, i));
        EXPECT_EQ(p.cycles, w.cycles);
        EXPECT_EQ(p.memory, w.memory);
        ASSERT_EQ(p.sms.size(), w.sms.size());
        for (size_t s = 0; s < p.sms.size(); ++s) {
          EXPECT_EQ(p.sms[s].counters.issued, w.sms[s].counters.issued);
          EXPECT_EQ(p.sms[s].counters.rfBankConflicts, w.sms[s].counters.rfBankConflicts);
          EXPECT_EQ(p.sms[s].schedulers, w.sms[s].schedulers);
        }
        ASSERT_TRUE(p.voltage && w.voltage);
        EXPECT_EQ(p.voltage->minVoltage, w.voltage->minVoltage);
        EXPECT_EQ(p.voltage->worstCycle, w.voltage->worstCycle);
      }
    }
  }
}
