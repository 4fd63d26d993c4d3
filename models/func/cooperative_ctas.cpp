// CTAs together in the functional engine: a cooperative launch's, all of them
// (Executor::runCooperative), and those a GPU would hold at once beside a CTA that runs long
// (Executor::runTogether, from runCtasInOrder): each warp for at most kCooperativeTurn warp
// instructions at a time, CTA after CTA, so that a warp spinning at a grid sync, or until a later
// CTA sets a flag, lets the other CTAs get there. In a file of its own,
// compiled outside the unity batches (models/CMakeLists.txt): with this loop beside runCtaLoop
// in executor.cpp, the compiler stopped inlining step() into runCtaLoop, the functional engine's
// hot loop, which then ran 5 to 13 % fewer warp instructions per second (docs/performance.md).
#include <algorithm>

#include "common/error.hpp"
#include "common/run_budget.hpp"
#include "func/access_log.hpp"
#include "func/executor.hpp"

namespace gpusc::func {

namespace {

// The host checks (clock, interrupt flag) every few thousand warp instructions, as runCtaLoop's.
// Call before each warp instruction: throws RunStopped (after a whole warp instruction) when the
// budget says stop, at its instruction limit exactly.
class HostCheck {
 public:
  HostCheck(const RunBudget* budget, const ExecStats& st)
      : budget_(budget), st_(st), at_(budget != nullptr && budget->active() ? next() : ~0ull) {}
  void operator()() {
    if (st_.warpInsts < at_) return;
    if (auto stop = budget_->check(0, st_.warpInsts))
      throw RunStopped(*stop, budget_->message(*stop, 0, st_.warpInsts));
    at_ = next();
  }

 private:
  static constexpr uint64_t kEvery = 4096;
  uint64_t next() const {
    return st_.warpInsts + std::min(kEvery, budget_->instructionsLeft(st_.warpInsts));
  }
  const RunBudget* budget_;
  const ExecStats& st_;
  uint64_t at_;
};

}  // namespace

void Executor::runCooperative(std::vector<Cta>& ctas, ExecStats& st, const RunBudget* budget) {
  st.ctas += ctas.size();
  runTogether(ctas, st, budget, nullptr, 0);  // every CTA is there from the start
}

void Executor::runTogether(std::vector<Cta>& ctas, ExecStats& st, const RunBudget* budget,
                           const std::function<bool(Cta&)>& next, uint64_t firstId) {
  if (L_.countMemoryUnits || L_.accessLog != nullptr)
    runTogetherLoop<true>(ctas, st, budget, next, firstId);
  else
    runTogetherLoop<false>(ctas, st, budget, next, firstId);
}

template <bool kRecord>
void Executor::runTogetherLoop(std::vector<Cta>& ctas, ExecStats& st, const RunBudget* budget,
                               const std::function<bool(Cta&)>& next, uint64_t firstId) {
  HostCheck check(budget, st);
  [[maybe_unused]] MemRecord rec;  // kRecord
  size_t live = 0;
  for (const Cta& cta : ctas) live += cta.liveWarps > 0 ? 1 : 0;
  while (live > 0) {
    bool progress = false;
    for (Cta& cta : ctas) {
      if (cta.liveWarps == 0) continue;
      if (kRecord && next && L_.accessLog != nullptr)
        L_.accessLog->setCta(static_cast<uint32_t>(cta.linearId - firstId));
      for (Warp& w : cta.warps) {
        for (uint64_t turn = 0; turn < kCooperativeTurn && w.state == WarpState::Ready; ++turn) {
          check();
          if constexpr (kRecord) {  // every step records its accesses, to count or log them
            rec.mask = 0;
            step(cta, w, st, &rec, nullptr);
            if (L_.accessLog != nullptr) L_.accessLog->record(rec);
          } else {
            step(cta, w, st, nullptr, nullptr);
          }
          progress = true;
        }
        if (w.state == WarpState::Yielded) w.state = WarpState::Ready;
      }
      if (cta.liveWarps == 0) {
        // A GPU's CTA scheduler puts the next CTA where one ended.
        if (next && next(cta)) {
          st.ctas += 1;
          progress = true;
        } else {
          --live;
        }
      }
    }
    if (!progress)
      throwDeadlock(
          *std::find_if(ctas.begin(), ctas.end(), [](const Cta& c) { return c.liveWarps > 0; }));
  }
}

}  // namespace gpusc::func
