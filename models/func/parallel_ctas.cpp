#include "func/parallel_ctas.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/host_workers.hpp"
#include "common/run_budget.hpp"
#include "func/access_log.hpp"

namespace gpusc::func {

namespace {

// The dot-separated parts of an opcode with its modifiers ("ld.volatile.global.u32").
bool hasPart(const std::string& opcode, const char* part) {
  const std::string p = std::string(".") + part;
  for (size_t at = opcode.find(p); at != std::string::npos; at = opcode.find(p, at + 1)) {
    const size_t end = at + p.size();
    if (end == opcode.size() || opcode[end] == '.') return true;
  }
  return false;
}

std::string base(const std::string& opcode) { return opcode.substr(0, opcode.find('.')); }

// What in `in` orders the blocks of a launch, or null.
const char* ordersBlocks(const Inst& in, const InstInfo& info) {
  const std::string op = base(info.opcode);
  const std::string& o = info.opcode;
  const bool local = in.space == MemSpace::Shared || in.space == MemSpace::Local;
  if ((op == "atom" || op == "red") && !local) return "an atomic on global memory";
  if (op == "multimem") return "a multimem operation";
  if (op == "cp" && hasPart(o, "reduce") && hasPart(o, "global"))
    return "a bulk reduction into global memory";
  if (op == "membar" && (hasPart(o, "gl") || hasPart(o, "sys"))) return "a fence between blocks";
  if (op == "fence" && !hasPart(o, "proxy") && !hasPart(o, "mbarrier_init") &&
      (hasPart(o, "gpu") || hasPart(o, "sys")))
    return "a fence between blocks";
  if ((op == "ld" || op == "st") && !local &&
      (hasPart(o, "volatile") || hasPart(o, "mmio") || hasPart(o, "gpu") || hasPart(o, "sys")))
    return "a volatile or ordered global access";
  if (info.text.find("%clock") != std::string::npos ||
      info.text.find("%globaltimer") != std::string::npos)
    return "a clock read (the functional engine's clock counts the launch's instructions in order)";
  return nullptr;
}

}  // namespace

std::string serialCtasReason(const Program& p) {
  if (p.usesDeviceRuntime)
    return "the kernel calls device printf, malloc or free or launches kernels (state every block "
           "shares)";
  for (size_t pc = 0; pc < p.code.size(); ++pc)
    if (const char* why = ordersBlocks(p.code[pc], p.info[pc]))
      return fmt::format("{}: {}: {}", why, p.info[pc].loc.str(), p.info[pc].text);
  return {};
}

void runCtasInParallel(HostWorkers& team, const LaunchState& L, uint64_t first, uint64_t end,
                       ExecStats& stats, const RunBudget* budget,
                       const std::function<void(uint64_t done)>& progress, double progressSeconds) {
  if (end - first > uint64_t(UINT32_MAX))
    throw InternalError("runCtasInParallel: more CTAs than the access log's tags count");
  // One thread's state: its own copy of the launch (the access log it points at is the
  // thread's), engine, CTA, statistics and page translations.
  struct Worker {
    LaunchState L;
    std::unique_ptr<AccessLog> log;
    ExecStats stats;
    StepEnv env;
    Cta cta;
  };
  std::vector<Worker> workers(team.threads());
  for (Worker& w : workers) {
    w.L = L;
    if (L.accessLog != nullptr) {
      w.log = std::make_unique<AccessLog>(L.accessLog->capacity());
      w.L.accessLog = w.log.get();
    }
  }
  std::atomic<uint64_t> next{first}, done{0};
  std::atomic<bool> failed{false};
  std::mutex failMutex;
  uint64_t failedCta = UINT64_MAX;
  std::exception_ptr failure;
  const std::thread::id caller = std::this_thread::get_id();
  const auto t0 = std::chrono::steady_clock::now();
  auto lastReport = t0;

  auto job = [&](size_t i) {
    Worker& w = workers[i];
    Executor ex(w.L);
    // CTAs are taken in ascending order, so each log holds its CTAs in ascending order.
    while (!failed.load(std::memory_order_relaxed)) {
      const uint64_t id = next.fetch_add(1, std::memory_order_relaxed);
      if (id >= end) break;
      try {
        ex.initCta(w.cta, L.grid.ctaOf(id), id, static_cast<uint32_t>(id % L.numSms));
        if (w.log) w.log->setCta(static_cast<uint32_t>(id - first));
        ex.runCta(w.cta, w.stats, budget, &w.env);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failMutex);
        if (id < failedCta) {
          failedCta = id;
          failure = std::current_exception();
        }
        failed.store(true, std::memory_order_relaxed);
        break;
      }
      const uint64_t n = done.fetch_add(1, std::memory_order_relaxed) + 1;
      if (progress && std::this_thread::get_id() == caller) {
        const auto now = std::chrono::steady_clock::now();
        if (std::chrono::duration<double>(now - lastReport).count() >= progressSeconds) {
          progress(n);
          lastReport = now;
        }
      }
    }
  };
  team.run(workers.size(), job);

  for (const Worker& w : workers) stats.add(w.stats);
  if (L.accessLog != nullptr) {
    std::vector<const AccessLog*> parts;
    for (const Worker& w : workers) parts.push_back(w.log.get());
    L.accessLog->mergeByCta(parts);
  }
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const RunStopped& e) {
      if (budget == nullptr) throw;
      throw RunStopped(e.reason(), budget->message(e.reason(), 0, stats.warpInsts));
    }
  }
}

void runCtasInOrder(LaunchState& L, uint64_t first, uint64_t end, ExecStats& stats,
                    const RunBudget* budget, const std::function<void(uint64_t done)>& progress,
                    double progressSeconds) {
  // A CTA that runs this many warp instructions without ending may be waiting for a later CTA
  // (a flag it sets, a lock it holds), which a GPU would run beside it. In order, it would wait
  // forever: from there, the CTAs the platform's SMs hold at once run together (runTogether),
  // and each that ends makes room for the next, as a GPU's CTA scheduler places them. A CTA that
  // waits for one a GPU could not hold beside it spins there too, as on the GPU. A CTA that runs
  // as long without waiting for another goes on together with the next ones too: the launch's
  // CTAs then run in another order, one a GPU may give them as well.
  constexpr uint64_t kLongCta = uint64_t(1) << 22;
  Executor ex(L);
  Cta cta;
  auto lastReport = std::chrono::steady_clock::now();
  uint64_t done = 0;
  const auto ended = [&] {
    ++done;
    if (progress) {
      const auto now = std::chrono::steady_clock::now();
      if (std::chrono::duration<double>(now - lastReport).count() >= progressSeconds) {
        progress(done);
        lastReport = now;
      }
    }
  };
  const auto start = [&](Cta& c, uint64_t id) {
    ex.initCta(c, L.grid.ctaOf(id), id, static_cast<uint32_t>(id % L.numSms));
  };
  for (uint64_t id = first; id < end; ++id) {
    start(cta, id);
    if (L.accessLog != nullptr) L.accessLog->setCta(static_cast<uint32_t>(id - first));
    const bool others = L.residentCtas > 1 && id + 1 < end;
    ex.runCta(cta, stats, budget, nullptr, others ? kLongCta : 0);
    if (cta.liveWarps == 0) {
      ended();
      continue;
    }
    std::vector<Cta> together;
    together.push_back(std::move(cta));
    uint64_t next = id + 1;
    for (; next < end && together.size() < L.residentCtas; ++next) {
      together.emplace_back();
      start(together.back(), next);
      stats.ctas += 1;
    }
    const std::function<bool(Cta&)> startNext = [&](Cta& c) {
      ended();
      if (next >= end) return false;
      start(c, next++);
      return true;
    };
    ex.runTogether(together, stats, budget, startNext, first);
    return;
  }
}

void runCtasLoggingTheLast(HostWorkers* team, const LaunchState& L, uint64_t first, uint64_t end,
                           ExecStats& stats, const RunBudget* budget,
                           const std::function<void(uint64_t done)>& progress,
                           double progressSeconds) {
  if (L.accessLog == nullptr) throw InternalError("runCtasLoggingTheLast: no access log");
  if (end - first > uint64_t(UINT32_MAX))
    throw InternalError("runCtasLoggingTheLast: more CTAs than the access log's tags count");
  uint64_t done = 0;
  // CTAs [a, b) with `log` (null: without logging), their progress counted after `done`.
  const auto run = [&](uint64_t a, uint64_t b, AccessLog* log) {
    LaunchState part = L;
    part.accessLog = log;
    std::function<void(uint64_t)> report;
    if (progress) report = [&](uint64_t n) { progress(done + n); };
    if (team != nullptr)
      runCtasInParallel(*team, part, a, b, stats, budget, report, progressSeconds);
    else
      runCtasInOrder(part, a, b, stats, budget, report, progressSeconds);
    done += b - a;
  };
  const size_t keeps = L.accessLog->capacity();
  // The chunks logged, the last CTAs' first; the first chunk as many CTAs as threads.
  std::vector<std::unique_ptr<AccessLog>> chunks;
  uint64_t logged = 0, from = end, a = end;  // the chunk running: [a, from)
  uint64_t size = team != nullptr ? team->threads() : 1;
  try {
    while (from > first && logged < keeps) {
      a = from - std::min(size, from - first);
      chunks.push_back(std::make_unique<AccessLog>(keeps));
      run(a, from, chunks.back().get());
      logged += chunks.back()->logged();
      from = a;
      size *= 2;
    }
  } catch (const RunStopped&) {
    throw;
  } catch (...) {
    // The CTAs before the chunk that threw might throw too, and the lowest CTA's exception is the
    // one to give (as a run in order would); they need no log.
    const std::exception_ptr failure = std::current_exception();
    if (a > first) run(first, a, nullptr);
    std::rethrow_exception(failure);
  }
  if (from > first) run(first, from, nullptr);
  // In CTA order: the chunks' entries after what the log held (its capacity is each chunk's).
  for (auto it = chunks.rbegin(); it != chunks.rend(); ++it) L.accessLog->append(**it);
}

}  // namespace gpusc::func
