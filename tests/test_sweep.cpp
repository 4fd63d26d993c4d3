// The sweep engine: spec parsing and its errors, expansion into points, the configuration hash,
// and the results database under parallel writers (docs/sweeps.md).
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "catalog.hpp"
#include "cli_options.hpp"
#include "common/config.hpp"
#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "common/strings.hpp"
#include "results_folder.hpp"
#include "sha256.hpp"
#include "sweep_db.hpp"
#include "sweep_spec.hpp"

using namespace gpusc;
using namespace gpusc::cli;
namespace fs = std::filesystem;

namespace {

std::vector<SweepPoint> points(const std::string& yaml, const std::string& dir = ".") {
  return expandPoints(parseSweepSpec(yaml, "spec.yaml", dir));
}

std::string hashOf(const std::string& yaml) {
  const auto p = points(yaml);
  EXPECT_EQ(p.size(), 1u);
  return p.at(0).hash;
}

fs::path tempDir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / fmt::format("gpusc-sweep-{}-{}", name, getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

// FIPS 180-4's examples (one block, two blocks, the empty message) and a message that fills
// the padding block exactly.
TEST(Sha256, KnownDigests) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 a;  // fed in pieces: the same digest as in one piece
  const std::string text(1000, 'x');
  for (size_t i = 0; i < text.size(); i += 7) a.update(text.substr(i, 7));
  EXPECT_EQ(a.hexDigest(), sha256Hex(text));
  // 1000 bytes: 15 blocks and a padding block (the value of coreutils' sha256sum).
  EXPECT_EQ(sha256Hex(text), "44f8354494a5ba03ba1792a8d3e9c534c47a9181980fde7a3f44b06ef2ae7c7f");
}

TEST(SweepSpec, PointsAreKernelsTimesVariantsTimesAxisCombinations) {
  const std::vector<uint32_t> sms{2, 8};
  const std::string yaml = R"(
name: study
sizes: [tiny]
kernels:
  - vecadd
  - {kernel: bfs, sizes: [tiny, small]}
variants:
  - name: a
  - name: b
    set: {sm.l1d.sets: 16}
axes:
  grid:
    gpu.num_sms: [2, 8]
    sm.l1d.ways: {from: 2, to: 4, step: 2}
  zip:
    memory.dram.burst_length: [4, 16]
    memory.dram.data_rate: [2, 8]
  random:
    samples: 3
    seed: 3
    keys:
      sm.l1d.mshr_entries: {from: 8, to: 48, step: 8}
      l2.slice.ways: [4, 8, 16]
)";
  const auto ps = points(yaml);
  const size_t kernels = 3, variants = 2, grid = sms.size() * 2, zip = 2, random = 3;
  ASSERT_EQ(ps.size(), kernels * variants * grid * zip * random);
  std::set<std::string> labels, randomPicks;
  for (const auto& p : ps) {
    EXPECT_TRUE(labels.insert(p.label).second) << p.label;
    // zip pairs by position: data rate = burst length / 2 in every point.
    EXPECT_EQ(p.axes["memory.dram.data_rate"].get<int>() * 2,
              p.axes["memory.dram.burst_length"].get<int>());
    randomPicks.insert(p.axes["sm.l1d.mshr_entries"].dump() + "/" + p.axes["l2.slice.ways"].dump());
    // The variant's override and the axes are in the run's arguments and its configuration.
    const std::string args = join(p.runArgs(), " ");
    EXPECT_NE(args.find(fmt::format("--set gpu.num_sms={}", p.axes["gpu.num_sms"].get<int>())),
              std::string::npos);
    EXPECT_NE(p.configYaml.find(fmt::format("num_sms: {}", p.axes["gpu.num_sms"].get<int>())),
              std::string::npos);
    EXPECT_EQ(args.find("sm.l1d.sets=16") != std::string::npos, p.variant == "b");
  }
  EXPECT_EQ(randomPicks.size(), random);  // distinct samples
  // The same seed draws the same samples; another seed others.
  const auto again = points(yaml);
  for (size_t i = 0; i < ps.size(); ++i) EXPECT_EQ(again[i].hash, ps[i].hash);
  std::string other = yaml;
  other.replace(other.find("seed: 3"), 7, "seed: 4");
  std::set<std::string> otherPicks;
  for (const auto& p : points(other))
    otherPicks.insert(p.axes["sm.l1d.mshr_entries"].dump() + "/" + p.axes["l2.slice.ways"].dump());
  EXPECT_NE(otherPicks, randomPicks);
}

// A variant's or an axis's override of a key `set` gives wins (the spec's order), and the run gets
// that one only: gpusc run refuses a key set twice.
TEST(SweepSpec, ARunGetsTheOverrideThatWins) {
  const auto ps = points(R"(
kernels: [vecadd]
sizes: tiny
set: {sm.l1d.sets: 16, sm.l1d.ways: 2, gpu.num_sms: 4}
variants:
  - name: a
    set: ["sm.l1d.sets=64", "sm.l1d.mshr_entries=16"]
axes:
  grid:
    gpu.num_sms: [2, 8]
)");
  ASSERT_EQ(ps.size(), 2u);
  for (const auto& p : ps) {
    const std::string args = join(p.runArgs(), " ");
    const int sms = p.axes["gpu.num_sms"].get<int>();
    EXPECT_EQ(args.find("sm.l1d.sets=16"), std::string::npos) << args;
    EXPECT_EQ(args.find("gpu.num_sms=4"), std::string::npos) << args;
    EXPECT_NE(args.find("--set sm.l1d.ways=2 --set sm.l1d.sets=64 --set sm.l1d.mshr_entries=16"),
              std::string::npos)
        << args;
    EXPECT_NE(args.find(fmt::format("--set gpu.num_sms={}", sms)), std::string::npos) << args;
    // The same configuration as the point's own resolution of every override in order.
    const std::vector<std::string> sets = p.runArgs();
    std::vector<std::string> assignments;
    for (size_t i = 0; i + 1 < sets.size(); ++i)
      if (sets[i] == "--set") assignments.push_back(sets[i + 1]);
    EXPECT_NO_THROW(refuseRepeatedSets(assignments));
    EXPECT_EQ(configYaml(config::toYaml(loadPlatform(p.platform, assignments))), p.configYaml);
  }
}

TEST(SweepSpec, RangesIncludeTheirEndAndGeometricRanges) {
  auto ps = points(
      "kernels: [vecadd]\nsizes: tiny\naxes: {grid: {gpu.clocks.core_mhz: {from: "
      "0.5e3, to: 0.7e3, step: 0.1e3}}}");
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_DOUBLE_EQ(ps[2].axes["gpu.clocks.core_mhz"].get<double>(), 700.0);
  ps = points(
      "kernels: [vecadd]\nsizes: tiny\naxes: {grid: {sm.l1d.sets: {from: 8, to: 128, "
      "factor: 2}}}");
  ASSERT_EQ(ps.size(), 5u);
  EXPECT_EQ(ps[4].axes["sm.l1d.sets"].get<int>(), 128);
}

// A variant may change the platform, as seed 003's variants do (mesh size, L2 on or off).
TEST(SweepSpec, VariantsAndThePlatformAxisChooseThePlatform) {
  const auto ps = points(R"(
kernels: [vecadd]
sizes: tiny
variants:
  - {name: mesh4-nol2, platform: stream-4x4, set: {l2.slice.enabled: false}}
  - {name: mesh8, platform: stream-8x8}
)");
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].platform, "stream-4x4");
  EXPECT_EQ(ps[1].platform, "stream-8x8");
  EXPECT_NE(ps[0].configYaml.find("name: stream-4x4"), std::string::npos);
  const auto qs = points("kernels: [vecadd]\naxes: {grid: {platform: [stream-4x4, gtx480]}}");
  ASSERT_EQ(qs.size(), 2u);
  EXPECT_EQ(qs[1].platform, "gtx480");
}

TEST(SweepSpec, ErrorsNameFileLineColumnAndKey) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"kernels: [vecad]", "spec.yaml:1:11: kernels\\[0\\]: .*did you mean 'vecadd'"},
      {"kernels: [vecadd]\nvariantz: []",
       "spec.yaml:2:1: unknown key 'variantz' \\(did you mean 'variants'\\?\\)"},
      {"kernels: [vecadd]\naxes: {grid: {gpu.num_smss: [1]}}",
       "spec.yaml:2:15: axes.grid.gpu.num_smss: unknown platform key 'gpu.num_smss' \\(did you "
       "mean 'gpu.num_sms'\\?\\)"},
      {"kernels: [vecadd]\naxes:\n  grid:\n    gpu.num_sms: [4, 0]",
       "spec.yaml:4:22: axes.grid.gpu.num_sms: gpu.num_sms: 0 is out of range"},
      {"kernels: [vecadd]\nvariants:\n  - name: x\n    set: {sm.l1d.sets: 3}",
       "spec.yaml:4:24: variants\\[0\\].set.sm.l1d.sets: sm.l1d.sets: 3 is not a power of two"},
      {"kernels: [vecadd]\naxes: {grid: {gpu.num_sms: {from: 1, to: 4}}}",
       "spec.yaml:2:28: axes.grid.gpu.num_sms: a range needs either 'step' or 'factor'"},
      {"kernels: [vecadd]\naxes: {zip: {gpu.num_sms: [1, 2], sm.l1d.sets: [16]}}",
       "spec.yaml:2:48: axes.zip.sm.l1d.sets: 1 values, but the first zip axis has 2"},
      {"kernels: [vecadd]\naxes: {grid: {gpu.num_sms: [1]}, zip: {gpu.num_sms: [2]}}",
       "spec.yaml:2:40: axes.zip.gpu.num_sms: 'gpu.num_sms' is already an axis"},
      {"kernels: [vecadd]\naxes: {random: {samples: 9, keys: {gpu.num_sms: [1, 2]}}}",
       "spec.yaml:2:26: axes.random.samples: expected 1 to 2"},
      {"kernels: [vecadd]\nmode: fast", "spec.yaml:2:7: mode: expected timing or functional"},
      {"kernels: [vecadd]\nmode: functional\nlimits: {max_cycles: 10}",
       "spec.yaml:3:10: limits.max_cycles: functional mode has no cycles"},
      {"kernels: [vecadd]\nplatform: gtx48", "spec.yaml:2:11: platform: .*did you mean 'gtx480'"},
      {"kernels: [vecadd]\nvariants: [{name: a}, {name: a}]",
       "spec.yaml:2:30: variants\\[1\\].name: 'a' is named twice"},
      {"kernels: [vecadd]\nsizes: [huge]", "spec.yaml:2:9: sizes: --size huge"},
      {"kernels: [sgemm, vecadd]\nsizes: [large]",
       "spec.yaml:1:18: kernels\\[1\\]: vecadd has no large size, which sizes asks for"},
      {"kernels: [vecadd]\n---\nkernels: [sgemm]",
       "spec.yaml:2:1: a second YAML document; a file holds one configuration"},
      {"kernels: [{launch: nope.yaml}]", "spec.yaml:1:20: kernels\\[0\\].launch: no such file"},
      {"kernels: [vecadd]\nname: a/b", "spec.yaml:2:7: name: 'a/b': use letters"},
      {"platform: gtx480", "spec.yaml:1:1: kernels: missing"},
      {"kernels: [vecadd, vecadd]",
       "spec.yaml:1:19: kernels\\[1\\]: vecadd@default is listed twice"},
      {"kernels: [vecadd]\nset: [gpu.num_sms=4, gpu.num_sms=5]",
       "spec.yaml:2:22: set\\[1\\]: 'gpu.num_sms' is set twice"},
  };
  for (const auto& [yaml, pattern] : cases) {
    try {
      points(yaml);
      ADD_FAILURE() << "no error for:\n" << yaml;
    } catch (const InputError& e) {
      EXPECT_TRUE(std::regex_search(e.what(), std::regex(pattern)))
          << e.what() << "\n  expected: " << pattern;
    }
  }
}

// Same resolved configuration, same hash: however the value is spelled, wherever it is set
// (spec-wide, variant or axis), or left at its default.
TEST(SweepHash, SameConfigurationSameHash) {
  const PlatformConfig def = loadPlatform(kDefaultPlatform);
  const std::string base = "kernels: [vecadd]\nsizes: tiny\n";
  const std::string h = hashOf(base);
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(hashOf(base + fmt::format("set: {{gpu.num_sms: {}}}", def.gpu.num_sms)), h);
  const std::string sms = hashOf(base + "set: {gpu.num_sms: 16}");
  EXPECT_NE(sms, h);
  EXPECT_EQ(hashOf(base + "set: {gpu.num_sms: 0x10}"), sms);
  EXPECT_EQ(hashOf(base + "set: [\"gpu.num_sms = 16\"]"), sms);
  EXPECT_EQ(hashOf(base + "variants: [{name: v, set: {gpu.num_sms: 16}}]"), sms);
  EXPECT_EQ(hashOf(base + "axes: {grid: {gpu.num_sms: [16]}}"), sms);
  const std::string off = hashOf(base + "set: {sm.l1d.enabled: false}");
  EXPECT_EQ(hashOf(base + "set: {sm.l1d.enabled: no}"), off);
  EXPECT_EQ(hashOf(base + "set: {sm.l1d.enabled: Off}"), off);
  EXPECT_EQ(hashOf(base + "set: {gpu.clocks.core_mhz: 7e2}"), hashOf(base));
  // The spec's name and the sweep it is in are not part of a point's identity.
  EXPECT_EQ(hashOf("name: other\n" + base), h);
}

// Any key changed, another hash: every numeric platform key, moved to a value it accepts
// (and the string keys with a choice of values, to another choice).
TEST(SweepHash, EveryKeyChangedChangesTheHash) {
  const std::string base = "kernels: [vecadd]\nsizes: tiny\n";
  const std::string h = hashOf(base);
  const nlohmann::json platform = config::toJson(loadPlatform(kDefaultPlatform));
  size_t tested = 0, numeric = 0;
  std::set<std::string> hashes{h};
  size_t choices = 0, choicesTested = 0, choicesDependent = 0;
  std::string lastError;
  const auto changes = [&](const std::string& key, const std::string& text) {
    std::string hv;
    try {
      hv = hashOf(base + fmt::format("set: {{{}: \"{}\"}}", key, text));
    } catch (const InputError& e) {
      lastError = e.what();
      return false;  // out of range, not a power of two, inconsistent with other keys
    }
    EXPECT_TRUE(hashes.insert(hv).second) << key << "=" << text << " gave a known hash";
    return true;
  };
  for (const auto& k : config::listKeys<PlatformConfig>()) {
    // The key's value on the platform (which may differ from the key's default).
    nlohmann::json value = platform;
    for (const auto& part : split(k.path, '.'))
      value = value.is_object() ? value.value(part, nlohmann::json()) : nlohmann::json();
    const bool integer = k.type == "unsigned integer" || k.type == "integer";
    if (k.type == "string" && startsWith(k.constraint, "one of ")) {
      ++choices;
      bool accepted = false;
      lastError.clear();
      for (const auto& c : split(k.constraint.substr(7), ','))
        if (std::string(trim(c)) != value.get<std::string>() &&
            changes(k.path, std::string(trim(c)))) {
          accepted = true;
          break;
        }
      if (accepted) {
        ++choicesTested;
      } else if (lastError.find(" needs ") != std::string::npos ||
                 lastError.find(" is not modelled") != std::string::npos) {
        // e.g. rtl.power_switch needs timeout gating: no value alone; the caches share their
        // write policies' names, and each models only some of them (the L1 never allocates).
        ++choicesDependent;
      } else if (lastError.find("has no effect") != std::string::npos) {
        // Unused by the platform's other choices (a read-only cache's write policy): not a
        // choice it offers.
        --choices;
      } else {
        ADD_FAILURE() << k.path << ": no other choice accepted (" << lastError << ")";
      }
      continue;
    }
    if (!integer && k.type != "number") continue;
    ++numeric;
    if (!value.is_number()) continue;
    const double d = value.get<double>();
    // Candidates: double, half, +1, -1 (the first the key accepts).
    lastError.clear();
    bool accepted = false;
    for (double v : {d * 2, d / 2, d + 1, d - 1}) {
      if ((k.type == "unsigned integer" && v < 0) || (integer && v != std::floor(v)) || v == d)
        continue;
      if (changes(k.path, integer ? fmt::format("{}", int64_t(v)) : fmt::format("{:.17g}", v))) {
        ++tested;
        accepted = true;
        break;
      }
    }
    // A key the platform's choices leave unused (a drowsy timeout without drowsy lines, the
    // mesh's shape on a crossbar) is refused when set alone: it needs another key set too.
    if (!accepted && lastError.find("has no effect") != std::string::npos) --numeric;
  }
  // Every choice key was changed, except those whose other values need another key set too.
  EXPECT_EQ(choicesTested + choicesDependent, choices);
  EXPECT_GT(choicesTested, choices * 3 / 4) << choicesTested << " of " << choices;
  // Nearly every numeric key has a changed value it accepts.
  EXPECT_GT(tested, numeric * 9 / 10) << tested << " of " << numeric;
  // The mode, the kernel and the size are part of the identity too.
  EXPECT_NE(hashOf(base + "mode: functional"), h);
  EXPECT_NE(hashOf("kernels: [vecadd]\nsizes: small\n"), h);
  EXPECT_NE(hashOf("kernels: [sgemm]\nsizes: tiny\n"), h);
}

// A launch spec is identified by its contents and its files', not by its path.
TEST(SweepHash, LaunchSpecByContents) {
  const fs::path data = fs::path(GPUSC_SOURCE_DIR) / "tests" / "data";
  const fs::path a = tempDir("launch-a"), b = tempDir("launch-b");
  for (const fs::path& d : {a, b})
    for (const char* f : {"double_pass.yaml", "double.ptx", "double_expected.bin"})
      fs::copy_file(data / f, d / f);
  const std::string spec = "kernels: [{launch: double_pass.yaml}]\n";
  const auto hashIn = [&](const fs::path& d) { return points(spec, d.string()).at(0).hash; };
  EXPECT_EQ(hashIn(a), hashIn(b));
  std::ofstream(b / "double.ptx", std::ios::app) << "// changed\n";
  EXPECT_NE(hashIn(a), hashIn(b));
  // The expected output is part of it too (same size, other contents).
  EXPECT_EQ(hashIn(a), points(spec, data.string()).at(0).hash);
  {
    std::fstream f(a / "double_expected.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.put('\x7f');
  }
  EXPECT_NE(hashIn(a), points(spec, data.string()).at(0).hash);
  fs::remove_all(a);
  fs::remove_all(b);
}

namespace {
nlohmann::json writerRow(int writer, int i) {
  return {{"sweep", "parallel"},
          {"label", fmt::format("w{}/p{}", writer, i)},
          {"hash", fmt::format("{:064x}", writer * 1000 + i)},
          {"status", "ok"},
          {"exit_code", 0},
          {"cycles", writer * 1000 + i},
          {"ipc", writer + i / 100.0},
          {"axes", {{"writer", writer}, {"i", i}}},
          {"error", std::string(200 + i, 'a' + char(writer))}};
}
}  // namespace

// Eight processes write 50 rows each into one database at once: every row arrives whole.
TEST(SweepDb, ParallelWritersLoseNothing) {
  const fs::path dir = tempDir("db");
  const std::string path = (dir / "results.sqlite").string();
  constexpr int kWriters = 8, kRows = 50;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 0;
      try {
        SweepDb db(path);
        for (int i = 0; i < kRows; ++i) db.put(writerRow(w, i));
      } catch (const std::exception& e) {
        fprintf(stderr, "writer %d: %s\n", w, e.what());
        rc = 1;
      }
      _exit(rc);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  SweepDb db(path);
  const auto rows = db.rows("parallel");
  ASSERT_EQ(rows.size(), size_t(kWriters * kRows));
  std::set<std::string> seen;
  for (const auto& r : rows) {
    const int w = r["axes"]["writer"], i = r["axes"]["i"];
    const nlohmann::json want = writerRow(w, i);
    for (const auto& [k, v] : want.items()) EXPECT_EQ(r[k], v) << k;
    seen.insert(r["label"].get<std::string>());
  }
  EXPECT_EQ(seen.size(), size_t(kWriters * kRows));
  // A row written again replaces the earlier one whole (no column of it survives).
  db.put({{"sweep", "parallel"}, {"label", "w0/p0"}, {"hash", "h"}, {"status", "failed"}});
  const auto r = db.byHash("h");
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["status"], "failed");
  EXPECT_TRUE((*r)["cycles"].is_null());
  EXPECT_THROW(db.put({{"sweep", "x"}, {"label", "y"}, {"no_such_column", 1}}), InternalError);
  fs::remove_all(dir);
}

TEST(SweepDb, MetricsFromStats) {
  // Two launches: hit rates over both, bandwidth over the run's simulated time.
  nlohmann::json stats = {
      {"complete", true},
      {"workload", {{"check", {{"pass", true}}}}},
      {"run",
       {{"cycles", 2000},
        {"ipc", 1.5},
        {"warp_instructions", 3000},
        {"simulated_seconds", 2e-6},
        {"energy", {{"total_j", 4e-6}, {"by_block_j", {{"l2", 1e-6}, {"dram", 3e-6}}}}},
        {"average_power_w", 2.0},
        {"power_gating", {{"sm_gatings", 2}, {"simd_unit_gatings", 3}, {"lane_gatings", 4}}}}},
      {"launches", nlohmann::json::array()}};
  for (int l = 0; l < 2; ++l)
    stats["launches"].push_back(
        {{"timing",
          {{"memory",
            {{"l1d", {{"totals", {{"accesses", 10 + 10 * l}, {"hits", 5}}}}},
             {"l2", {{"totals", {{"accesses", 4}, {"hits", 1 + l}}}}},
             {"dram", {{"totals", {{"bytes", 1000}}}}}}}}}});
  const nlohmann::json m = metricsOf(stats);
  EXPECT_DOUBLE_EQ(m["l1d_hit_rate"].get<double>(), 10.0 / 30.0);
  EXPECT_DOUBLE_EQ(m["l2_hit_rate"].get<double>(), 3.0 / 8.0);
  EXPECT_EQ(m["dram_bytes"], 2000);
  EXPECT_DOUBLE_EQ(m["dram_bandwidth_gbs"].get<double>(), 2000 / 2e-6 / 1e9);
  EXPECT_DOUBLE_EQ(m["power_by_block_w"]["dram"].get<double>(), 3e-6 / 2e-6);
  EXPECT_EQ(m["gatings"], 9);
  EXPECT_EQ(m["check_pass"], true);
  EXPECT_TRUE(m["worst_droop_pct"].is_null());  // no PDN in this run
  EXPECT_TRUE(m["sampled"].is_null());          // simulated in full
  EXPECT_TRUE(m["cycles_bound"].is_null());
  // A sampled run says so: its method, its cycles' bound, its launches extrapolated.
  nlohmann::json sampledStats = stats;
  sampledStats["run"]["sampling"] = {
      {"mode", "kernel"}, {"cycles_bound", 12.5}, {"launches_extrapolated", 3}};
  const nlohmann::json s = metricsOf(sampledStats);
  EXPECT_EQ(s["sampled"], "kernel");
  EXPECT_DOUBLE_EQ(s["cycles_bound"].get<double>(), 12.5);
  EXPECT_EQ(s["launches_extrapolated"], 3);

  // Read from a file, the per-SM and per-slice parts are left out and the metrics are the same.
  for (auto& l : stats["launches"]) {
    l["timing"]["sms"] = nlohmann::json::array({{{"issued", 1}}, {{"issued", 2}}});
    l["timing"]["memory"]["l2"]["per_slice"] = nlohmann::json::array({{{"hits", 1}}});
    l["stats"] = {{"warp_instructions", 5}};
  }
  stats["config"] = {{"gpu", {{"num_sms", 2}}}};
  const fs::path dir = tempDir("metrics");
  std::ofstream(dir / "stats.json") << stats.dump(2);
  const nlohmann::json read = readStatsForMetrics((dir / "stats.json").string());
  EXPECT_EQ(metricsOf(read), m);
  EXPECT_FALSE(read.contains("config"));
  EXPECT_FALSE(read["launches"][0]["timing"].contains("sms"));
  EXPECT_FALSE(read["launches"][0].contains("stats"));
  EXPECT_FALSE(read["launches"][1]["timing"]["memory"]["l2"].contains("per_slice"));
  EXPECT_EQ(read["run"], stats["run"]);
  EXPECT_TRUE(readStatsForMetrics((dir / "missing.json").string()).is_null());
  fs::remove_all(dir);
}
