// Differential testing with random PTX programs (tests/support/random_ptx.hpp): every program
// runs in functional mode and in timing mode on two platforms (gtx480's crossbar and
// fermi16-mesh's mesh), and each run's memory must equal the host reference's, word for word,
// without a fault.
//
// A failure names the seed and writes the program to the temporary folder; repeat it with
//   GPUSC_RANDOM_PTX_SEED=<seed> build/tests/test_random_ptx
// and add the seed to kRegressionSeeds once fixed. GPUSC_RANDOM_PTX_SEEDS=<n> runs seeds 1..n
// instead of the default range (a longer search).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gpu/device.hpp"
#include "support/random_ptx.hpp"

using namespace gpusc;
using test::MemoryResult;
using test::RandomProgram;

namespace {

// Seeds that once failed, kept as regression cases (none has yet).
const std::vector<uint64_t> kRegressionSeeds = {};

constexpr uint64_t kDefaultSeeds = 60;

std::vector<uint64_t> seeds() {
  if (const char* one = std::getenv("GPUSC_RANDOM_PTX_SEED"))
    return {std::strtoull(one, nullptr, 10)};
  uint64_t n = kDefaultSeeds;
  if (const char* many = std::getenv("GPUSC_RANDOM_PTX_SEEDS"))
    n = std::strtoull(many, nullptr, 10);
  std::vector<uint64_t> out;
  for (uint64_t s = 1; s <= n; ++s) out.push_back(s);
  return out;
}

struct Target {
  const char* platform;
  ExecMode mode;
  std::string name() const {
    return fmt::format("{} mode on {}", mode == ExecMode::Timing ? "timing" : "functional",
                       platform);
  }
};
const Target kTargets[] = {{"gtx480", ExecMode::Functional},
                           {"gtx480", ExecMode::Timing},
                           {"fermi16-mesh", ExecMode::Timing}};

MemoryResult run(const RandomProgram& p, const Target& t) {
  Device dev(loadPlatform(t.platform), t.mode);
  Module& m = dev.loadModule(p.ptx, fmt::format("random_{}.ptx", p.seed));
  DevPtr in = dev.upload(p.in);
  DevPtr out = dev.malloc(uint64_t(p.outWords) * 4);
  dev.memset(out, 0, uint64_t(p.outWords) * 4);
  DevPtr counters = dev.upload(p.counters);
  dev.launch(m.kernel("random_kernel"), {p.ctas}, {p.threads}, 0,
             KernelArgs().ptr(in).ptr(out).ptr(counters));
  return {dev.download<uint32_t>(out, p.outWords),
          dev.download<uint32_t>(counters, p.counters.size())};
}

std::string saved(const RandomProgram& p) {
  const auto path =
      std::filesystem::temp_directory_path() / fmt::format("gpusc-random-{}.ptx", p.seed);
  std::ofstream(path) << p.ptx;
  return fmt::format("program written to {}; repeat with GPUSC_RANDOM_PTX_SEED={} {}",
                     path.string(), p.seed, "build/tests/test_random_ptx");
}

// The first word where `got` differs from the reference, described; empty when equal.
std::string firstDifference(const RandomProgram& p, const MemoryResult& want,
                            const MemoryResult& got) {
  for (size_t i = 0; i < want.out.size(); ++i) {
    if (want.out[i] == got.out[i]) continue;
    const size_t thread = i / test::kOutSlots, slot = i % test::kOutSlots;
    return fmt::format(
        "out word {} (thread {} of CTA {}, {}) is {:#x}, the reference says {:#x}", i,
        thread % p.threads, thread / p.threads,
        slot < 8 ? fmt::format("store slot {}", slot) : fmt::format("%v{} at the end", slot - 8),
        got.out[i], want.out[i]);
  }
  for (size_t i = 0; i < want.counters.size(); ++i)
    if (want.counters[i] != got.counters[i])
      return fmt::format("atomic counter {} is {:#x}, the reference says {:#x}", i, got.counters[i],
                         want.counters[i]);
  return "";
}

// What is wrong with `p` on `t` (an exception or the first difference); empty when nothing is.
std::string problem(const RandomProgram& p, const Target& t) {
  try {
    return firstDifference(p, test::referenceRun(p), run(p, t));
  } catch (const std::exception& e) {
    return e.what();
  }
}

// Runs `seeds` on every target; the number of seeds that failed. A failing program is shrunk
// (top-level statements left out while it still fails) before it is written out. Seeds run
// target by target, so each platform is elaborated once.
int check(const std::vector<uint64_t>& seeds) {
  std::vector<RandomProgram> programs;
  for (uint64_t s : seeds) programs.push_back(test::generateProgram(s));
  std::vector<bool> failed(seeds.size(), false);
  for (const Target& t : kTargets) {
    for (size_t i = 0; i < programs.size(); ++i) {
      if (failed[i]) continue;
      RandomProgram p = programs[i];
      std::string what = problem(p, t);
      if (what.empty()) continue;
      for (size_t k = test::topLevelStatements(p); k-- > 0;) {
        RandomProgram q = test::withoutStatement(p, k);
        std::string w = problem(q, t);
        if (!w.empty()) p = std::move(q), what = std::move(w);
      }
      ADD_FAILURE() << "seed " << p.seed << ", " << t.name() << ": " << what << "\n" << saved(p);
      failed[i] = true;
    }
  }
  return static_cast<int>(std::count(failed.begin(), failed.end(), true));
}

TEST(RandomPtx, ModesPlatformsAndReferenceAgree) { EXPECT_EQ(check(seeds()), 0); }

TEST(RandomPtx, RegressionSeeds) {
  if (kRegressionSeeds.empty()) GTEST_SKIP() << "no seed has failed so far";
  EXPECT_EQ(check(kRegressionSeeds), 0);
}

TEST(RandomPtx, SameSeedSameProgram) {
  EXPECT_EQ(test::generateProgram(7).ptx, test::generateProgram(7).ptx);
  EXPECT_NE(test::generateProgram(7).ptx, test::generateProgram(8).ptx);
}

// The default seeds together exercise every construct the generator knows.
TEST(RandomPtx, DefaultSeedsCoverEveryConstruct) {
  std::string all;
  for (uint64_t s = 1; s <= kDefaultSeeds; ++s) all += test::generateProgram(s).ptx;
  for (const char* construct : {"bar.sync",
                                "shfl.sync.up",
                                "shfl.sync.down",
                                "shfl.sync.bfly",
                                "shfl.sync.idx",
                                "vote.sync.ballot",
                                "red.global.",
                                "red.shared.add",
                                "ld.shared",
                                "call (pr)",
                                "bra.uni LOOP",
                                "bra LOOP",
                                "bra ELSE",
                                "bra.uni ELSE",
                                "selp.b32",
                                "@%ps ",
                                "@!%ps ",
                                "lop3.b32",
                                "prmt.b32",
                                "bfi.b32",
                                "bfe.s32",
                                "div.s32",
                                "rem.u32",
                                "mul.wide.u32",
                                "shf.l.wrap",
                                "shf.r.clamp",
                                "ld.global.u32",
                                "st.global.u32 [%rdout+",
                                "call (pr), %q0, (pa, pb), proto"})
    EXPECT_NE(all.find(construct), std::string::npos) << construct;
}

}  // namespace
