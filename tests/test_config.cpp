// Platform configuration: typed loading, every kind of bad input reported with file:line and
// the key, --set overrides, and the resolved configuration round-tripping.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/platform_config.hpp"
#include "gpu/device.hpp"

using namespace gpusc;

namespace {

std::string errorOf(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    config::load<PlatformConfig>(yaml, "p.yaml", sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Config, Gtx480MatchesTheIssueAndGpgpuSim) {
  PlatformConfig c = loadPlatform("gtx480");
  EXPECT_EQ(c.gpu.num_sms, 15u);
  EXPECT_EQ(c.gpu.clocks.core_mhz, 700.0);
  EXPECT_EQ(c.sm.max_threads, 1536u);
  EXPECT_EQ(c.sm.max_warps, 48u);
  EXPECT_EQ(c.sm.max_ctas, 8u);
  EXPECT_EQ(c.sm.registers, 32768u);
  EXPECT_EQ(c.sm.shared_memory_bytes, 49152u);
  EXPECT_EQ(c.sm.l1d.sizeBytes(), 16u * 1024);
  EXPECT_EQ(c.sm.l1d.ways, 4u);
  EXPECT_EQ(c.sm.l1d.line_bytes, 128u);
  EXPECT_EQ(c.sm.icache.sizeBytes(), 2u * 1024);
  EXPECT_EQ(c.l2.slice.sizeBytes() * c.memory.partitions * c.l2.slices_per_partition, 768u * 1024);
  EXPECT_EQ(c.l2.slices_per_partition, 2u);  // gpgpu_n_sub_partition_per_mchannel
  EXPECT_EQ(c.l2.slice.ways, 16u);
  EXPECT_EQ(c.memory.partitions, 6u);
  EXPECT_EQ(c.sm.simd_units * c.sm.simd_lanes, 32u);
}

TEST(Config, EmptyFileGivesTheDefaults) {
  PlatformConfig c = config::load<PlatformConfig>("# nothing\n", "p.yaml", {});
  EXPECT_EQ(c.gpu.num_sms, PlatformConfig().gpu.num_sms);
}

// Input files are read up to a limit: a path that never ends (/dev/zero, a pipe left open) is
// refused naming it once the limit is passed, instead of filling the host's memory; a file of
// exactly the limit is read whole, and one that cannot be opened is left to the caller.
TEST(Config, AnInputFileIsReadUpToALimit) {
  const std::string what = "platform file";
  try {
    readInputFile("/dev/zero", what, 100000);
    ADD_FAILURE() << "/dev/zero was read whole";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "/dev/zero: the platform file is longer than 100000 bytes, the most gpusc reads "
                 "of one input file");
  }
  const std::string path =
      (std::filesystem::temp_directory_path() / ("gpusc-limit-" + std::to_string(getpid())))
          .string();
  std::ofstream(path) << std::string(70000, 'x') << "gpu:\n";
  EXPECT_EQ(readInputFile(path, what, 70005)->size(), 70005u);
  EXPECT_THROW(readInputFile(path, what, 70004), InputError);
  std::filesystem::remove(path);
  EXPECT_FALSE(readInputFile(path, what).has_value());
  // The platform loader's own words for a file it cannot open stay.
  EXPECT_THROW(loadPlatform("./no-such-platform.yaml", {}), InputError);
}

TEST(Config, UnknownKeyNamesLineAndSuggests) {
  EXPECT_EQ(errorOf("gpu:\n  num_smss: 4\n"),
            "p.yaml:2:3: unknown key 'gpu.num_smss' (did you mean 'num_sms'?)");
  EXPECT_EQ(errorOf("sm:\n  l1d:\n    sets: 64\n    wayz: 8\n"),
            "p.yaml:4:5: unknown key 'sm.l1d.wayz' (did you mean 'ways'?)");
  EXPECT_EQ(errorOf("frobnicate: 1\n"), "p.yaml:1:1: unknown key 'frobnicate'");
}

TEST(Config, WrongTypeAndRange) {
  EXPECT_EQ(errorOf("gpu:\n  num_sms: many\n"),
            "p.yaml:2:12: gpu.num_sms: expected a non-negative integer, got 'many'");
  EXPECT_EQ(errorOf("gpu:\n  num_sms: -3\n"),
            "p.yaml:2:12: gpu.num_sms: expected a non-negative integer, got '-3'");
  EXPECT_EQ(errorOf("gpu:\n  num_sms: 0\n"),
            "p.yaml:2:12: gpu.num_sms: 0 is out of range [1, 1024]");
  EXPECT_EQ(errorOf("gpu:\n  clocks:\n    core_mhz: fast\n"),
            "p.yaml:3:15: gpu.clocks.core_mhz: expected a number, got 'fast'");
  EXPECT_EQ(errorOf("sm:\n  l1d:\n    sets: 48\n"),
            "p.yaml:3:11: sm.l1d.sets: 48 is not a power of two");
  EXPECT_EQ(errorOf("sm:\n  scheduler: gtoo\n"),
            "p.yaml:2:14: sm.scheduler: 'gtoo' is not one of: lrr, gto, two-level, dfifo (did you "
            "mean 'gto'?)");
  EXPECT_EQ(errorOf("gpu: 3\n"), "p.yaml:1:6: gpu: expected a map of keys (a section)");
  EXPECT_EQ(errorOf("gpu:\n  num_sms: [1, 2]\n"),
            "p.yaml:2:12: gpu.num_sms: expected a single value (unsigned integer)");
}

TEST(Config, CrossFieldRules) {
  EXPECT_EQ(errorOf("sm:\n  max_warps: 8\n"),
            "p.yaml:2:14: sm.max_warps, sm.warp_size, sm.max_threads: max_warps (8) x warp_size "
            "(32) is smaller than max_threads (1536)");
  // A block's reserved shared memory larger than the SM's: no block could ever run.
  EXPECT_EQ(errorOf("sm:\n  shared_memory_bytes: 4096\n  shared_reserved_per_cta: 8192\n"),
            "p.yaml:3:28: sm.shared_reserved_per_cta, sm.shared_memory_bytes: the shared memory "
            "reserved per block must fit in an SM's shared memory, or no block could run");
  // A VCD traces each cycle's voltage as it completes; a network stepped every N cycles has it
  // only at the window's end.
  EXPECT_NE(errorOf("pdn:\n  step_cycles: 4\n  monitor:\n    vcd_file: v.vcd\n")
                .find("pdn.step_cycles, pdn.monitor.vcd_file: step_cycles 4 steps the network"),
            std::string::npos);
  EXPECT_EQ(errorOf("pdn:\n  step_cycles: 4\n"), "(no error)");
  // An instruction cache line must hold an instruction; the instruction and constant caches
  // cannot be removed (perfect_icache and perfect_const_cache make them ideal).
  EXPECT_NE(errorOf("sm:\n  instruction_bytes: 32\n  icache:\n    line_bytes: 16\n")
                .find("cannot hold an instruction of 32"),
            std::string::npos);
  EXPECT_NE(errorOf("sm:\n  icache:\n    enabled: false\n").find("sm.icache.enabled"),
            std::string::npos);
  EXPECT_NE(errorOf("sm:\n  const_cache:\n    enabled: false\n").find("sm.const_cache.enabled"),
            std::string::npos);
  EXPECT_NE(errorOf("pdn:\n  step_cycles: 65\n").find("pdn.step_cycles"), std::string::npos);
}

// An instruction's lanes draw their energy before its result is written back: a unit's execute
// stages may not end after the writeback of its fastest instruction (dispatch + latency).
TEST(Config, ExecuteStagesEndByTheWriteback) {
  // Defaults: the fastest SIMD instruction (int_add) is written back 4 cycles after dispatch.
  EXPECT_EQ(errorOf("power:\n  sm:\n    execute_stages:\n      simd: {delay: 1, cycles: 4}\n"),
            "(no error)");
  const std::string e =
      errorOf("power:\n  sm:\n    execute_stages:\n      simd: {delay: 2, cycles: 4}\n");
  EXPECT_NE(e.find("sm.latency.int_add.latency, power.sm.execute_stages.simd.delay, "
                   "power.sm.execute_stages.simd.cycles: the lanes of the fastest simd instruction "
                   "(sm.latency.int_add.latency: written back 4 cycles after dispatch) would draw "
                   "energy until delay 2 + cycles 4 - 1 = 5 cycles after it"),
            std::string::npos)
      << e;
  EXPECT_NE(errorOf("", {"sm.latency.sfu.latency=5", "power.sm.execute_stages.sfu.cycles=6"})
                .find("execute_stages.sfu"),
            std::string::npos);
  EXPECT_NE(errorOf("", {"sm.latency.dp_add.latency=4"}).find("execute_stages.dp"),
            std::string::npos);
}

TEST(Config, InvalidYaml) {
  std::string e = errorOf("gpu:\n  num_sms: [1, 2\n");
  EXPECT_EQ(e.rfind("p.yaml:", 0), 0u) << e;
  EXPECT_NE(e.find("invalid YAML"), std::string::npos) << e;
}

// A file holds one configuration: a second document would be silently ignored.
// A --set of a key the rest of the configuration leaves unused is refused (the file may hold
// it); the same key with the setting that uses it is accepted.
TEST(Config, SettingsOfAMechanismNotChosenAreRefusedOnTheCommandLine) {
  const auto refused = [](const std::string& yaml, const std::string& set, const std::string& why) {
    const std::string e = errorOf(yaml, {set});
    EXPECT_NE(e.find("has no effect: " + why), std::string::npos) << set << ": " << e;
  };
  refused("", "noc.mesh_columns=4", "noc.topology is crossbar (mesh uses it)");
  refused("", "noc.sm_positions=[{x: 0, y: 0}]", "noc.topology is crossbar");
  refused("", "memory.fixed_latency=10", "memory.model is hierarchy");
  refused("", "power.l2.drowsy.wake_latency=3", "drowsy.policy is none");
  refused("power:\n  l1d:\n    drowsy:\n      policy: drowsy-after-access\n",
          "power.l1d.drowsy.timeout_cycles=40", "drowsy.policy is drowsy-after-access");
  refused("power:\n  l1d:\n    drowsy:\n      policy: timeout\n",
          "power.l1d.drowsy.lookahead_cycles=4", "drowsy.lookahead is false");
  refused("", "power.simd_issue.up_thresholds=[0.6, 0.4, 0.2]", "simd_issue.policy is none");
  // Where the mechanism is chosen (in the file or by another --set), the keys are taken.
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{"noc.topology=mesh", "noc.mesh_columns=5"},
        {"memory.model=fixed-latency", "memory.fixed_latency=10"},
        {"power.l1d.drowsy.policy=timeout", "power.l1d.drowsy.timeout_cycles=40"},
        {"power.simd_issue.policy=utilisation", "power.simd_issue.slice_cycles=100"}})
    EXPECT_EQ(errorOf("", sets), "(no error)") << sets[1];
  // The file may hold the settings of a mechanism it does not choose.
  EXPECT_EQ(errorOf("noc:\n  mesh_columns: 4\nmemory:\n  fixed_latency: 9\n"), "(no error)");
}

TEST(Config, SecondYamlDocumentIsRefused) {
  EXPECT_EQ(errorOf("name: x\n---\nname: y\n"),
            "p.yaml:2:1: a second YAML document; a file holds one configuration (remove the "
            "'---' and what follows)");
  EXPECT_EQ(errorOf("---\nname: x\n---\n"), "(no error)");  // an empty last document
}

TEST(Config, DuplicateKey) {
  EXPECT_EQ(errorOf("gpu:\n  num_sms: 4\n  num_sms: 5\n"),
            "p.yaml:3:3: duplicate key 'gpu.num_sms'");
}

TEST(Config, SetOverridesAndItsErrors) {
  PlatformConfig c =
      loadPlatform("gtx480", {"gpu.num_sms=4", "sm.l1d.sets = 64", "sm.scheduler=lrr"});
  EXPECT_EQ(c.gpu.num_sms, 4u);
  EXPECT_EQ(c.sm.l1d.sets, 64u);
  EXPECT_EQ(c.sm.scheduler, "lrr");
  EXPECT_EQ(errorOf("", {"gpu.num_smz=4"}),
            "--set gpu.num_smz=4: unknown key 'gpu.num_smz' (did you mean 'num_sms'?)");
  EXPECT_EQ(errorOf("", {"gpu.num_sms=0"}),
            "--set gpu.num_sms=0: gpu.num_sms: 0 is out of range [1, 1024]");
  EXPECT_EQ(errorOf("", {"gpu.num_sms"}), "--set gpu.num_sms: expected key.path=value");
  EXPECT_EQ(errorOf("gpu:\n  num_sms: 4\n", {"gpu.num_sms.x=1"}),
            "--set gpu.num_sms.x=1: 'gpu.num_sms' is not a section");
  EXPECT_EQ(errorOf("", {"gpu.num_sms.x=1"}),
            "--set gpu.num_sms.x=1: gpu.num_sms: expected a single value (unsigned integer)");
}

TEST(Config, UnknownPlatformSuggestsABuiltIn) {
  try {
    loadPlatform("gtx48");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'gtx480'"), std::string::npos) << e.what();
  }
}

TEST(Config, ResolvedYamlLoadsBackToTheSameConfiguration) {
  PlatformConfig c = loadPlatform("gtx480", {"gpu.num_sms=7", "sm.l1d.replacement=fifo"});
  std::string yaml = config::toYaml(c);
  PlatformConfig d = config::load<PlatformConfig>(yaml, "resolved.yaml", {});
  EXPECT_EQ(config::toJson(c), config::toJson(d));
  EXPECT_EQ(d.gpu.num_sms, 7u);
}

// A list entry's rule names the entry's own line, not its section's.
TEST(Config, MeshPositionsAreCheckedAtTheirEntry) {
  const std::string mesh =
      "gpu:\n  num_sms: 2\nmemory:\n  partitions: 2\nl2:\n  slices_per_partition: 1\n"
      "noc:\n  topology: mesh\n  mesh_columns: 2\n  mesh_rows: 2\n";
  EXPECT_EQ(errorOf(mesh + "  sm_positions:\n    - {x: 0, y: 0}\n    - {x: 1, y: 0}\n"
                           "  mc_positions:\n    - {x: 0, y: 1}\n    - {x: 1, y: 0}\n"),
            "p.yaml:16:7: noc.mc_positions[1]: router (1, 0) already holds noc.sm_positions[1]");
  EXPECT_EQ(errorOf(mesh + "  sm_positions:\n    - {x: 0, y: 0}\n    - {x: 2, y: 1}\n"),
            "p.yaml:13:7: noc.sm_positions[1]: (2, 1) is outside the 2x2 mesh (x < 2, y < 2; "
            "noc.mesh_columns and noc.mesh_rows give its size)");
  EXPECT_EQ(errorOf(mesh + "  sm_positions:\n    - {x: 0, y: 0}\n    - {x: 1, y: 1}\n"),
            "(no error)");
}

// Rules checked while the model is built, and as it runs, name the key's line in the platform
// file as the loader's own do.
TEST(Config, ErrorsAfterLoadingNameTheKeysLine) {
  const std::filesystem::path file =
      std::filesystem::path(testing::TempDir()) / fmt::format("origins-{}.yaml", ::getpid());
  std::ofstream(file) << "name: tiny\nmemory:\n  device_memory_bytes: 1048576\npdn:\n"
                         "  network: elements\n  regulator:\n    sense: die\n"
                         "    bandwidth_khz: 5000\n";
  const std::string f = file.string();
  // Built in code (no file): the message as the model gives it.
  EXPECT_EQ(PlatformConfig().locate("pdn.regulator.bandwidth_khz: x"),
            "pdn.regulator.bandwidth_khz: x");
  try {
    Device dev(loadPlatform(f), ExecMode::Timing);
    ADD_FAILURE() << "a 5 MHz regulator loop was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(f + ":8:20: pdn.regulator.bandwidth_khz: a 5000 kHz", 0),
              0u)
        << e.what();
  }
  Device dev(loadPlatform(f, {"pdn.regulator.bandwidth_khz=20"}), ExecMode::Functional);
  dev.malloc(524288);
  try {
    dev.malloc(1048576);
    ADD_FAILURE() << "1 MB allocated past a 1 MB device memory";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(
                  f + ":3:24: memory.device_memory_bytes: out of device memory: 1048576 bytes", 0),
              0u)
        << e.what();
  }
  // A key the file leaves at its default: the file.
  EXPECT_EQ(loadPlatform(f).locate("sm.l1d.sets: x"), f + ": sm.l1d.sets: x");
  // --set: the option.
  EXPECT_EQ(loadPlatform(f, {"sm.l1d.sets=64"}).locate("sm.l1d.sets: x"),
            "--set sm.l1d.sets=64: sm.l1d.sets: x");
  EXPECT_EQ(loadPlatform(f).locate("voltage monitor: x"), "voltage monitor: x");
  std::filesystem::remove(file);
}

// A rule of several keys names the key at fault first, and the message's line is that key's (not
// the section's, nor another key's of it).
TEST(Config, ARuleOfSeveralKeysNamesTheKeyAtFaultAndItsLine) {
  const std::string yaml =
      "name: rtl-line\nrtl:\n  droop_predictor: model\n"
      "  drowsy_controller: verilated\n";
  try {
    config::load<PlatformConfig>(yaml, "p.yaml", {});
    ADD_FAILURE() << "a verilated drowsy-line controller without drowsy lines was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("p.yaml:4:22: rtl.drowsy_controller, ", 0), 0u)
        << e.what();
  }
  try {
    loadPlatform("gtx480", {"rtl.power_switch=verilated", "power.gating.idle_detect=timeout",
                            "power.gating.sm.timeout_cycles=1048576"});
    ADD_FAILURE() << "a 21-bit timeout was accepted for the RTL switch";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--set power.gating.sm.timeout_cycles=1048576: "
                                         "power.gating.sm.timeout_cycles"),
              std::string::npos)
        << e.what();
  }
}

TEST(Config, EveryKeyIsDocumented) {
  auto keys = config::listKeys<PlatformConfig>();
  EXPECT_GT(keys.size(), 100u);
  for (const auto& k : keys) EXPECT_FALSE(k.doc.empty()) << k.path;
}

}  // namespace
