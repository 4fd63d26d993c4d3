// The functional SIMT engine: executes decoded instructions for a warp, maintains its
// reconvergence stack (immediate post-dominator based), calls, exits and CTA barriers.
//
// The same step() serves the functional mode (which runs each warp until it blocks) and the
// timing model (which decides when each warp issues and calls step() at issue).
#pragma once

#include <cstdint>
#include <string>

#include "func/state.hpp"
#include "func/step_env.hpp"

namespace gpusc {
class RunBudget;
}

namespace gpusc::func {

// Counts of what the engine executed; the functional mode's statistics.
struct ExecStats {
  uint64_t warpInsts = 0;
  uint64_t threadInsts = 0;                  // active lanes summed over warp instructions
  uint64_t byClass[kNumInstClasses] = {};    // warp instructions per class
  uint64_t activeLanes[kWarpSize + 1] = {};  // histogram: active threads per warp instruction
  uint64_t branches = 0, divergentBranches = 0;
  uint64_t spinYields = 0;  // paths that spun waiting for lanes of their warp and yielded
  uint64_t barrierWaits = 0;
  uint64_t ctas = 0;
  // With LaunchState::countMemoryUnits (sampled simulation's signatures): the warp instructions
  // that accessed memory, and their units: for an atomic the most lanes on one address (they
  // serialise), else the distinct 32-byte sectors (global: transactions; shared: a proxy for
  // bank conflicts, 4 for a conflict-free warp, 32 for a stride of 32 words).
  uint64_t memInsts = 0, memUnits = 0;

  void add(const ExecStats& o);
};

enum class StepKind : uint8_t {
  Executed,   // an ordinary instruction (or a branch/call/return) ran
  AtBarrier,  // the warp arrived at a barrier and now waits (barrier may have released at once)
  Exited,     // the warp finished (all its threads exited)
};

struct StepResult {
  StepKind kind = StepKind::Executed;
  uint32_t pc = 0;
  uint32_t active = 0;    // SIMT active mask
  uint32_t executed = 0;  // lanes that executed (active & guard)
  bool released = false;  // a barrier released (warps of the CTA became ready)
  bool diverged = false;
};

class Executor {
 public:
  explicit Executor(LaunchState& launch) : L_(launch) {}

  // Prepares `cta` (block index `ctaid`, running on SM `smId`) for execution: shared memory,
  // warps, registers.
  void initCta(Cta& cta, const Dim3& ctaid, uint64_t linearId, uint32_t smId) const;

  // Executes one instruction of warp `w` of `cta`. With `rec`, the memory addresses it
  // accessed are recorded there. With `env` (the timing model's, one per SM): %clock reads
  // env->clock and LaunchState::clock is left alone, global memory is translated through
  // env->tlb, and with env->log global stores and atomics are logged instead of performed.
  // Steps with distinct envs on distinct CTAs may then run on several threads at once, unless
  // the program uses the device runtime (Program::usesDeviceRuntime).
  StepResult step(Cta& cta, Warp& w, ExecStats& st, MemRecord* rec = nullptr,
                  StepEnv* env = nullptr);

  // Runs every warp of `cta` to completion (functional mode). Throws KernelFault on deadlock.
  // Runs the CTA to completion. With a budget, throws RunStopped (after a whole warp
  // instruction) when it says stop: at the instruction limit exactly, and within a few
  // thousand warp instructions of a timeout or an interrupt. `st` is the launch's statistics.
  // With `env` the steps take it (step()): CTAs of one launch may then run on several host
  // threads at once, each with its own env, Executor and LaunchState copy, when their order
  // does not matter (func/parallel_ctas.hpp).
  // With `suspendAfter` (0: never), it returns after that many warp instructions if the CTA has
  // not ended by then (cta.liveWarps > 0); runTogether can take it on from there.
  void runCta(Cta& cta, ExecStats& st, const RunBudget* budget = nullptr, StepEnv* env = nullptr,
              uint64_t suspendAfter = 0);

  // Runs `ctas` together to completion, as one cooperative launch's CTAs, all resident at once:
  // in turns of at most kCooperativeTurn warp instructions per warp, CTA after CTA, so that a
  // warp spinning until other CTAs arrive (a grid sync) lets them run. Deterministic; the spin
  // loops' instructions count. Budget and faults as runCta.
  static constexpr uint64_t kCooperativeTurn = 64;
  void runCooperative(std::vector<Cta>& ctas, ExecStats& st, const RunBudget* budget = nullptr);

  // Runs `ctas` together as runCooperative does (they may have run already: runCta with
  // suspendAfter), and when one ends, `next(cta)` may put the launch's next CTA in its place:
  // true when it did (it is counted in `st`), false when no CTA is left (an empty `next`: none
  // comes). With an access log and a `next`, each CTA's accesses are tagged with its linear id
  // less `firstId`.
  void runTogether(std::vector<Cta>& ctas, ExecStats& st, const RunBudget* budget,
                   const std::function<bool(Cta&)>& next, uint64_t firstId);

  LaunchState& launch() { return L_; }

 private:
  // The memory units of recent accesses of steps without a StepEnv (with one: the env's), and
  // the memo a step with `env` (or none) uses.
  MemoryUnitsMemo unitsMemo_;
  MemoryUnitsMemo& unitsMemo(StepEnv* env) { return env ? env->unitsMemo : unitsMemo_; }
  // step()'s body, forced inline into runCtaLoop (executor.cpp only): the functional engine's
  // hot loop depends on it, and GCC's own inlining of step() there is fragile
  // (docs/performance.md).
  StepResult stepHere(Cta& cta, Warp& w, ExecStats& st, MemRecord* rec, StepEnv* env);
  template <bool kRecord>
  void runCtaLoop(Cta& cta, ExecStats& st, const RunBudget* budget, StepEnv* env,
                  uint64_t suspendAfter);
  // Runs warp `w` from its pc through the straight-line instructions that follow (runCtaLoop):
  // at most `limit` of them, stopping before any that is not plain (a branch, call, ret, exit,
  // barrier or trap, or one that syncs the warp, sleeps or wakes warps), at the top path's
  // reconvergence point, and after one that makes the warp wait. Each counts, runs and (with
  // kRecord, into `rec`) records its accesses as runCtaLoop's step does. Returns how many ran
  // (0: the first is not plain).
  template <bool kRecord>
  uint32_t runStraight(Cta& cta, Warp& w, ExecStats& st, StepEnv* env, uint64_t limit,
                       MemRecord* rec);
  // (In func/cooperative_ctas.cpp, so that step() stays inlined into runCtaLoop.)
  template <bool kRecord>
  void runTogetherLoop(std::vector<Cta>& ctas, ExecStats& st, const RunBudget* budget,
                       const std::function<bool(Cta&)>& next, uint64_t firstId);
  // Throws KernelFault: every live warp of `cta` waits at a barrier that cannot complete.
  [[noreturn]] void throwDeadlock(const Cta& cta) const;
  // The context an instruction of warp `w` at `pc` runs in (its lanes `active`).
  ExecCtx context(Cta& cta, Warp& w, uint32_t active, uint32_t pc, MemRecord* rec = nullptr,
                  StepEnv* env = nullptr) const {
    return ExecCtx{&L_, &cta, &w, w.regs.data(), L_.prog->constRows.data(), w.preds.data(), active,
                   pc,  rec,  env};
  }
  // The 32 cells of operand slot `s` of warp `w` (rowOf in state.hpp).
  uint64_t* row(Warp& w, uint32_t s) const {
    return rowOf(w.regs.data(), L_.prog->constRows.data(), s);
  }
  void arriveAtBarrier(Cta& cta, Warp& w, const Inst& in, uint32_t mask, StepResult& r);
  bool tryRelease(Cta& cta, uint32_t id);
  // call through a function pointer: copies each lane's arguments to its callee's parameters and
  // pushes one call frame per callee (they run one after another and reconverge after the call).
  void callIndirect(Cta& cta, Warp& w, const Inst& in, uint32_t mask, StepResult& r);
  // ret of a function an indirect call reached: copies the results to the call's variables.
  void returnIndirect(Warp& w, const Inst& call, const Inst& ret, uint32_t mask);
  // For each of `lanes`: bytes[i] of its call-parameter area from offset from[i] to to[i].
  void copyCallParams(Warp& w, uint32_t lanes, const std::vector<uint32_t>& to,
                      const std::vector<uint32_t>& from, const std::vector<uint32_t>& bytes);
  // A direct call to a recursive function: saves the callee's previous activation, copies the
  // calling lanes' arguments and takes each lane's frame from its stack.
  void callRecursive(Cta& cta, Warp& w, const Inst& in, uint32_t mask, StepResult& r);
  // Appends the activation of recursive function `func` (all lanes) to w.frameSaves.
  void saveActivation(Warp& w, uint32_t func);
  // Takes lane l's frame of recursive function `func` from its stack (a kernel fault when the
  // stack has no room) and points the function's %frame register at it.
  void takeFrame(Cta& cta, Warp& w, uint32_t func, int l, const StepResult& r);
  // ret of the recursive function whose frame is w.stack[frame] (a direct or indirect call's):
  // copies the lanes' results to the call's variables and gives them back the activation the
  // call saved.
  void returnRecursive(Warp& w, size_t frame, const Inst& ret, uint32_t mask);
  void warpFinished(Cta& cta, Warp& w, StepResult& r);
  // After an mbarrier operation: wakes the CTA's sleeping waiters when a phase completed, and
  // reports a warp whose wait failed as waiting.
  void afterMbarrier(Cta& cta, Warp& w, StepResult& r, bool divergent, ExecStats& st);
  // When no warp of `cta` can run and some sleep in mbarrier waits: wakes them to retry, unless
  // nothing changed since they were last woken this way. Returns whether it woke any.
  bool wakeIfStuck(Cta& cta);

  LaunchState& L_;
};

}  // namespace gpusc::func
