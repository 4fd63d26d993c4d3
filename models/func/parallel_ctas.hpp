// The functional engine on several host threads: a launch's CTAs run at once, each thread
// taking the next CTA in linear order, when nothing the program does makes its result depend
// on their order (docs/architecture.md, "Host threads").
//
// CUDA orders nothing between the blocks of a launch except through atomics and fences, so a
// program without those (and without the device runtime, whose printf log and heap every
// block shares, and without clock reads, whose value is the functional engine's instruction
// count) gives the same memory, statistics and L2 access log on any number of threads, and the
// same as one thread. Blocks that race on plain global stores (different values to one address)
// or read what another block of the same launch writes have no defined result in CUDA; their
// result may then differ from run to run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "func/executor.hpp"

namespace gpusc {
class HostWorkers;
class RunBudget;
}  // namespace gpusc

namespace gpusc::func {

// Why the CTAs of `p` run one after another on one thread (an operation that orders them or
// state they share, with the first instruction doing it), or empty when they may run on
// several threads at once.
std::string serialCtasReason(const Program& p);

// Runs CTAs [first, end) of the launch `L` on the team's threads (CTA i on SM i mod L.numSms,
// as the serial loop places them) and adds their statistics to `stats`. With L.accessLog, the
// accesses go to one log per thread and are merged into it in CTA order, as one thread would
// have logged them. `progress(done)` is called on the calling thread about every
// `progressSeconds` with the CTAs finished. When CTAs throw (a fault, a run limit), no further
// CTA starts; the statistics of those that ran are added, and the exception of the lowest CTA
// is rethrown (a RunStopped with the launch's instruction count).
void runCtasInParallel(HostWorkers& team, const LaunchState& L, uint64_t first, uint64_t end,
                       ExecStats& stats, const RunBudget* budget,
                       const std::function<void(uint64_t done)>& progress, double progressSeconds);

// Runs CTAs [first, end) of the launch `L` in ascending order on the calling thread (CTA i on SM
// i mod L.numSms), adding their statistics to `stats`; with L.accessLog, each entry is tagged
// with its CTA's offset from `first`, as runCtasInParallel tags them. `progress(done)` as there.
// The first CTA that throws stops the run. A CTA that runs long without ending (it may wait for
// a later one) goes on together with the next L.residentCtas - 1, as a GPU holds them.
void runCtasInOrder(LaunchState& L, uint64_t first, uint64_t end, ExecStats& stats,
                    const RunBudget* budget, const std::function<void(uint64_t done)>& progress,
                    double progressSeconds);

// Runs CTAs [first, end) of the launch `L`, whose order cannot change its result
// (serialCtasReason empty), with L.accessLog set, on the team's threads (none: the calling
// thread), so that the log ends as it would had they run in order and logged their accesses,
// while only the last of them log. The log keeps its latest entries, so what the earlier CTAs
// would log is overwritten once the later ones have logged as many: chunks of CTAs from the end,
// each twice the one after it, run with logging until they have logged that many, and the CTAs
// before them run without it (a CTA that records no accesses runs on the engine's plain path,
// docs/sampling.md). The statistics, memory, progress and exceptions are those of
// runCtasInParallel: the exception of the lowest CTA that throws, whichever chunk it is in.
void runCtasLoggingTheLast(HostWorkers* team, const LaunchState& L, uint64_t first, uint64_t end,
                           ExecStats& stats, const RunBudget* budget,
                           const std::function<void(uint64_t done)>& progress,
                           double progressSeconds);

}  // namespace gpusc::func
