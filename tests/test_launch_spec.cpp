// Launch specs: generators, files, several launches sharing buffers, loops until a buffer is
// zero, dumps, and errors that name the file, line and key.
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "gpu/launch_spec.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;
namespace fs = std::filesystem;

namespace {

// A scratch folder with a PTX file: `scale` multiplies a buffer by k; `countdown` decrements
// every non-zero element of a buffer (so a loop until it is zero runs max(element) times).
class LaunchSpecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpusc-spec-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    write("k.ptx", test::module(R"(
.visible .entry scale(.param .u64 buf, .param .u32 k, .param .u32 n)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r1, %r2, %r3, %r1;
  ld.param.u32 %r4, [n];
  setp.ge.u32 %p1, %r1, %r4;
  @%p1 bra DONE;
  ld.param.u64 %rd1, [buf];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  ld.global.u32 %r5, [%rd1];
  ld.param.u32 %r6, [k];
  mul.lo.u32 %r5, %r5, %r6;
  st.global.u32 [%rd1], %r5;
DONE:
  ret;
}
.visible .entry countdown(.param .u64 buf, .param .u64 launches)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .reg .pred %p1;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [buf];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  ld.global.u32 %r2, [%rd1];
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra SKIP;
  sub.u32 %r2, %r2, 1;
  st.global.u32 [%rd1], %r2;
SKIP:
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  ld.param.u64 %rd3, [launches];
  atom.global.add.u32 %r3, [%rd3], 1;
DONE:
  ret;
}
)"));
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::vector<uint32_t> readU32(const std::string& name) {
    std::ifstream in(dir_ / "out" / name, std::ios::binary);
    std::vector<uint32_t> v;
    uint32_t x;
    while (in.read(reinterpret_cast<char*>(&x), 4)) v.push_back(x);
    return v;
  }

  std::string errorOf(const std::string& spec) {
    write("spec.yaml", spec);
    try {
      Device dev(test::platform());
      runLaunchSpec(dev, loadLaunchSpec(path("spec.yaml")), path("out"));
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  }

  fs::path dir_;
};

TEST_F(LaunchSpecTest, GeneratorsLaunchesAndDumps) {
  write("spec.yaml", R"(
ptx: k.ptx
buffers:
  a: {type: u32, count: 300, init: {iota: [5, 2]}}
  c: {type: u32, count: 4, init: {constant: 9}}
  z: {type: f32, count: 8, init: zeros}
  r: {type: f32, count: 1000, init: {uniform: [2, 3], seed: 11}}
launches:
  - kernel: scale
    grid: [3]
    block: 128
    args: [a, {u32: 3}, {u32: 300}]
  - kernel: scale
    grid: 1
    block: [4]
    args: [{buffer: a, offset: 4}, {u32: 10}, {u32: 2}]
    repeat: 2
dump:
  a: a.bin
  c: c.bin
  r: r.bin
)");
  Device dev(test::platform());
  auto res = runLaunchSpec(dev, loadLaunchSpec(path("spec.yaml")), path("out"));
  EXPECT_EQ(res.launches, 3u);
  auto a = readU32("a.bin");
  ASSERT_EQ(a.size(), 300u);
  for (uint32_t i = 0; i < 300; ++i) {
    uint32_t want = (5 + 2 * i) * 3;
    if (i == 1 || i == 2) want *= 100;  // the offset launch ran twice on elements 1 and 2
    EXPECT_EQ(a[i], want) << i;
  }
  EXPECT_EQ(readU32("c.bin"), (std::vector<uint32_t>{9, 9, 9, 9}));
  auto r = readU32("r.bin");
  for (uint32_t bitsv : r) {
    float f = test::asFloat(bitsv);
    EXPECT_GE(f, 2.0f);
    EXPECT_LT(f, 3.0f);
  }
}

TEST_F(LaunchSpecTest, ExpectedBuffersGiveACheckThatCanFail) {
  // scale x3 of iota(0, 1): element i becomes 3i. The reference files differ in element 7
  // by 1 (u32: exact) and, for the float copy, by 0.25.
  std::vector<uint32_t> want(64);
  std::vector<float> wantF(64);
  for (uint32_t i = 0; i < 64; ++i) {
    want[i] = 3 * i;
    wantF[i] = float(i);
  }
  const auto writeBin = [&](const std::string& name, const void* p, size_t n) {
    write(name, std::string(static_cast<const char*>(p), n));
  };
  writeBin("good.bin", want.data(), 256);
  want[7] += 1;
  writeBin("bad.bin", want.data(), 256);
  wantF[7] += 0.25f;
  writeBin("f.bin", wantF.data(), 256);
  const auto run = [&](const std::string& expect) {
    write("spec.yaml", R"(
ptx: k.ptx
buffers:
  a: {type: u32, count: 64, init: iota}
  f: {type: f32, count: 64, init: iota}
launches:
  - {kernel: scale, grid: 1, block: 64, args: [a, {u32: 3}, {u32: 64}]}
expect:
)" + expect);
    Device dev(test::platform());
    return runLaunchSpec(dev, loadLaunchSpec(path("spec.yaml")), path("out"));
  };
  auto ok = run("  a: good.bin\n");
  ASSERT_EQ(ok.checks.size(), 1u);
  EXPECT_TRUE(ok.pass());
  EXPECT_EQ(ok.checks[0].message, "a: all 64 elements match");
  auto bad = run("  a: bad.bin\n");
  EXPECT_FALSE(bad.pass());
  EXPECT_EQ(bad.checks[0].mismatches, 1u);
  EXPECT_NE(bad.checks[0].message.find("a[7] = 21 where"), std::string::npos)
      << bad.checks[0].message;
  // A float buffer within and beyond its tolerance.
  EXPECT_TRUE(run("  f: {file: f.bin, tolerance: 0.25}\n").pass());
  EXPECT_FALSE(run("  f: {file: f.bin, tolerance: 0.2}\n").pass());
  EXPECT_TRUE(run("  f: {file: f.bin, relative_tolerance: 0.04}\n").pass());  // 0.25 / 7
  // Bad references name the spec's line and key.
  write("short.bin", std::string(100, '\0'));
  EXPECT_NE(errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 64}\nlaunches:\n  - {kernel: "
                    "scale, grid: 1, block: 1, args: [a, {u32: 1}, {u32: 1}]}\n"
                    "expect:\n  a: short.bin\n")
                .find("spec.yaml:7:6: expect.a: '"),
            std::string::npos);
  EXPECT_NE(errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 64}\nlaunches:\n  - {kernel: "
                    "scale, grid: 1, block: 1, args: [a, {u32: 1}, {u32: 1}]}\n"
                    "expect:\n  b: good.bin\n")
                .find("expect"),
            std::string::npos);
  EXPECT_NE(errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 64}\nlaunches:\n  - {kernel: "
                    "scale, grid: 1, block: 1, args: [a, {u32: 1}, {u32: 1}]}\n"
                    "expect:\n  a: {file: good.bin, tolerance: -1}\n")
                .find("expect.a.tolerance: must be >= 0"),
            std::string::npos);
}

TEST_F(LaunchSpecTest, LoopUntilZeroWithAFileInput) {
  std::vector<uint32_t> init = {3, 0, 7, 1};
  std::ofstream(dir_ / "init.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(init.data()), init.size() * 4);
  write("spec.yaml", R"(
ptx: k.ptx
buffers:
  b: {type: u32, file: init.bin}
  n: {type: u32, count: 1}
launches:
  - loop:
      until_zero: b
      launches:
        - {kernel: countdown, grid: [1], block: [4], args: [b, n]}
dump:
  n: n.bin
)");
  Device dev(test::platform());
  auto res = runLaunchSpec(dev, loadLaunchSpec(path("spec.yaml")), path("out"));
  EXPECT_EQ(res.launches, 7u);  // the largest element
  EXPECT_EQ(readU32("n.bin"), (std::vector<uint32_t>{7}));
}

TEST_F(LaunchSpecTest, LoopBoundIsAnError) {
  std::string e = errorOf(R"(ptx: k.ptx
buffers:
  b: {type: u32, count: 4, init: {constant: 50}}
  n: {type: u32, count: 1}
launches:
  - kernel: countdown
    grid: 1
    block: 4
    args: [b, n]
    until_zero: b
    max_iterations: 10
)");
  EXPECT_EQ(e, path("spec.yaml") +
                   ":6:5: buffer 'b' still not zero after max_iterations = 10 iterations");
}

TEST_F(LaunchSpecTest, ErrorsNameFileLineAndKey) {
  const std::string f = path("spec.yaml");
  EXPECT_EQ(errorOf("ptx: k.ptx\nbufers: {}\nlaunches: []\n"),
            f + ":2:1: unknown key 'bufers' (did you mean 'buffers'?)");
  EXPECT_EQ(errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u33, count: 4}\nlaunches: [{kernel: scale, "
                    "grid: 1, block: 1}]\n"),
            f + ":3:13: buffers.a.type: 'u33' is not a type: u8, u16, u32, u64, s8, s16, s32, s64, "
                "f32, f64, b8, "
                "b16, b32, b64 (did you mean 'u32'?)");
  EXPECT_EQ(errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: -4}\nlaunches: [{kernel: scale, "
                    "grid: 1, block: 1}]\n"),
            f + ":3:25: buffers.a.count: expected a non-negative integer, got '-4'");
  const std::string init = errorOf(
      "ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 4, init: randm}\nlaunches: [{kernel: scale, "
      "grid: 1, block: 1}]\n");
  EXPECT_EQ(init.rfind(f + ":3:34: buffers.a.init: 'randm' is not a generator: zeros, iota", 0), 0u)
      << init;
  EXPECT_EQ(errorOf("ptx: k.ptx\nlaunches:\n  - kernel: scale\n    grid: [0]\n    block: 1\n"),
            f + ":4:11: launches[0].grid: dimensions must be at least 1");
  EXPECT_EQ(
      errorOf("ptx: k.ptx\nlaunches:\n  - kernel: scale\n    grid: [1, 2, 3, 4]\n    block: 1\n"),
      f + ":4:11: launches[0].grid: expected 1 to 3 dimensions, e.g. [64, 16]");
  EXPECT_EQ(errorOf("ptx: k.ptx\nlaunches:\n  - kernel: scale\n    grid: 1\n    block: 1\n    "
                    "args: [nope]\n"),
            f + ":6:12: launches[0].args[0]: no buffer named 'nope'");
  EXPECT_EQ(errorOf("ptx: k.ptx\nlaunches:\n  - kernel: scale\n    grid: 1\n    blok: 1\n"),
            f + ":5:5: unknown key 'launches[0].blok' (did you mean 'block'?)");
  EXPECT_EQ(errorOf("ptx: k.ptx\nlaunches:\n  - kernel: scael\n    grid: 1\n    block: 1\n"),
            f + ":3:5: kernel: " + path("k.ptx") +
                ": no kernel entry 'scael' (did you mean 'scale'?) "
                "(entries: scale, countdown)");
  EXPECT_EQ(errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 4}\nlaunches:\n  - kernel: "
                    "scale\n    grid: 1\n"
                    "    block: 1\n    args: [a, {u32: 1}]\n"),
            f + ":5:5: launch of scale: 2 arguments given; the kernel takes 3");
  EXPECT_EQ(
      errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 4}\nlaunches:\n  - kernel: scale\n    "
              "grid: 1\n"
              "    block: 1\n    args: [a, {u64: 1}, {u32: 4}]\n"),
      f + ":5:5: launch of scale: argument 1 (k) is a u64 of 8 bytes; parameter 'k' has 4 bytes");
  EXPECT_EQ(errorOf("ptx: nothere.ptx\nlaunches: [{kernel: scale, grid: 1, block: 1}]\n"),
            f + ":1:6: ptx: cannot read '" + path("nothere.ptx") + "'");
  fs::create_directories(path("adir"));
  EXPECT_EQ(errorOf("ptx: adir\nlaunches: [{kernel: scale, grid: 1, block: 1}]\n"),
            f + ":1:6: ptx: '" + path("adir") + "' is a folder, not a PTX file");
  write("empty.ptx", "");
  EXPECT_EQ(errorOf("ptx: empty.ptx\nlaunches: [{kernel: scale, grid: 1, block: 1}]\n"),
            f + ":1:6: ptx: '" + path("empty.ptx") + "' is empty");
  EXPECT_EQ(errorOf("ptx: k.ptx\nlaunches: []\n"),
            f + ":2:11: launches: expected a list of at least one launch");
  EXPECT_EQ(errorOf("ptx: k.ptx\nlaunches: [{kernel: scale, grid: 1, block: [2048]}]\n"),
            f + ":2:12: launch of scale: block (2048,1,1) exceeds the limits (1024, 1024, 64)");
}

// Values a buffer's type cannot hold, and buffers larger than the device's memory, are refused
// at their line before anything is allocated.
TEST_F(LaunchSpecTest, ValuesAndSizesBeyondTheTypesAndTheDevice) {
  const std::string f = path("spec.yaml");
  const auto spec = [](const std::string& buffer, const std::string& arg = "{u32: 2}") {
    return "ptx: k.ptx\nbuffers:\n  a: " + buffer +
           "\nlaunches:\n  - {kernel: scale, grid: 1, block: 4, args: [a, " + arg +
           ", {u32: 4}]}\n";
  };
  EXPECT_EQ(errorOf(spec("{type: u32, count: 4611686018427387904}")),
            f + ":3:25: buffers.a.count: 4611686018427387904 elements of 4 bytes is more than 1 "
                "TiB");
  const std::string big = errorOf(spec("{type: u32, count: 1000000000}"));
  EXPECT_EQ(big.rfind(f + ":3:3: buffers.a: 4000000000 bytes: ", 0), 0u) << big;
  EXPECT_NE(big.find("memory.device_memory_bytes: out of device memory"), std::string::npos) << big;
  EXPECT_EQ(errorOf(spec("{type: u8, count: 4, init: {constant: 300}}")),
            f + ":3:44: buffers.a.init.constant: 300 is outside u8's range [0, 255]");
  EXPECT_EQ(errorOf(spec("{type: u32, count: 4, init: {constant: 1.5}}")),
            f + ":3:45: buffers.a.init.constant: 1.5 is not a whole number, as u32 needs");
  EXPECT_EQ(errorOf(spec("{type: s8, count: 4, init: {iota: [100, 10]}}")),
            f + ":3:40: buffers.a.init.iota: element 3: 130 is outside s8's range [-128, 127]");
  EXPECT_EQ(errorOf(spec("{type: u16, count: 4, init: {uniform: [0, 100000]}}")),
            f + ":3:48: buffers.a.init.uniform: 100000 is outside u16's range [0, 65535]");
  EXPECT_EQ(errorOf(spec("{type: f32, count: 4, init: {constant: 1e300}}")),
            f + ":3:45: buffers.a.init.constant: 1e+300 is beyond the range of f32");
  EXPECT_EQ(errorOf(spec("{type: u32, count: 4}", "{u32: 4294967296}")),
            f + ":5:56: launches[0].args[1]: 4294967296 is outside u32's range");
  EXPECT_EQ(errorOf(spec("{type: u32, count: 4}", "{u32: -1}")),
            f + ":5:56: launches[0].args[1]: -1 is outside u32's range");
  EXPECT_EQ(errorOf(spec("{type: u8, count: 257, init: iota}")),
            f + ":3:35: buffers.a.init: element 256: 256 is outside u8's range [0, 255]");
  EXPECT_EQ(errorOf(spec("{type: u32, count: 4, init: {constant: 255}}")), "(no error)");
}

// A name given twice, a second document, a dump file outside the output folder or one gpusc
// writes itself, a value of the wrong kind for a parameter: refused at their line.
TEST_F(LaunchSpecTest, NamesGivenTwiceAndDumpsOutsideTheOutputFolder) {
  const std::string f = path("spec.yaml");
  const std::string launch =
      "launches: [{kernel: scale, grid: 1, block: 4, args: [a, {u32: 2}, "
      "{u32: 4}]}]\n";
  EXPECT_EQ(errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 4}\n  a: {type: u32, count: "
                    "8}\n" +
                    launch),
            f + ":4:3: buffers.a: given twice");
  EXPECT_EQ(errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 4}\n" + launch +
                    "dump: {a: x.bin, a: y.bin}\n"),
            f + ":5:18: dump.a: given twice");
  EXPECT_EQ(errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 4}\n  b: {type: u32, count: "
                    "4}\n" +
                    launch + "dump: {a: x.bin, b: x.bin}\n"),
            f + ":6:21: dump.b: buffer 'a' is dumped to 'x.bin' already");
  for (const char* bad : {"../x.bin", "/tmp/x.bin", "sub/x.bin", "\"\"", "."})
    EXPECT_EQ(errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 4}\n" + launch +
                      "dump: {a: " + bad + "}\n")
                  .rfind(f + ":5:11: dump.a: '", 0),
              0u)
        << bad;
  EXPECT_EQ(errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 4}\n" + launch +
                    "dump: {a: stats.json}\n"),
            f + ":5:11: dump.a: 'stats.json' is a file gpusc writes into the output folder itself");
  EXPECT_EQ(
      errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 4}\n" + launch + "---\nptx: k.ptx\n"),
      f + ":5:1: a second YAML document; a file holds one configuration (remove the '---' "
          "and what follows)");
  EXPECT_EQ(errorOf("ptx: k.ptx\nbuffers:\n  a: {type: u32, count: 4}\nlaunches: [{kernel: "
                    "scale, grid: 1, block: 4, args: [a, {f32: 2}, {u32: 4}]}]\n"),
            f + ":4:12: launch of scale: argument 1 (k) is a f32; parameter 'k' is a .u32 (give "
                "it an integer)");
}

// 64-bit integers beyond a double's 53 bits keep every bit, and the whole 64-bit range can be
// drawn from.
TEST_F(LaunchSpecTest, SixtyFourBitValuesAreExact) {
  write("spec.yaml", R"(
ptx: k.ptx
buffers:
  a: {type: u32, count: 4}
  c: {type: u64, count: 2, init: {constant: 18446744073709551615}}
  d: {type: u64, count: 2, init: {constant: 9007199254740993}}
  e: {type: u64, count: 3, init: {iota: [18446744073709551610, 2]}}
  s: {type: s64, count: 2, init: {iota: [-9223372036854775808, 9223372036854775807]}}
  u: {type: u64, count: 64, init: {uniform: [0, 18446744073709551615], seed: 3}}
  x: {type: u64, count: 1, init: {constant: 1e19}}
launches: [{kernel: scale, grid: 1, block: 4, args: [a, {u32: 2}, {u32: 4}]}]
dump: {c: c.bin, d: d.bin, e: e.bin, s: s.bin, u: u.bin, x: x.bin}
)");
  Device dev(test::platform());
  runLaunchSpec(dev, loadLaunchSpec(path("spec.yaml")), path("out"));
  const auto u64s = [&](const std::string& name) {
    std::ifstream in(dir_ / "out" / name, std::ios::binary);
    std::vector<uint64_t> v;
    uint64_t x;
    while (in.read(reinterpret_cast<char*>(&x), 8)) v.push_back(x);
    return v;
  };
  EXPECT_EQ(u64s("c.bin"), (std::vector<uint64_t>{~0ull, ~0ull}));
  EXPECT_EQ(u64s("d.bin"), (std::vector<uint64_t>{9007199254740993ull, 9007199254740993ull}));
  EXPECT_EQ(u64s("e.bin"), (std::vector<uint64_t>{~0ull - 5, ~0ull - 3, ~0ull - 1}));
  EXPECT_EQ(u64s("s.bin"), (std::vector<uint64_t>{1ull << 63, ~0ull}));  // INT64_MIN, -1
  EXPECT_EQ(u64s("x.bin"), (std::vector<uint64_t>{10000000000000000000ull}));
  // Draws over the whole range: about half of them above 2^63 (64 draws: at least 16).
  int high = 0;
  for (uint64_t v : u64s("u.bin")) high += v >> 63;
  EXPECT_GE(high, 16);
  EXPECT_LE(high, 48);
  const std::string f = path("spec.yaml");
  const auto spec = [](const std::string& buffer) {
    return "ptx: k.ptx\nbuffers:\n  a: " + buffer +
           "\nlaunches:\n  - {kernel: scale, grid: 1, block: 4, args: [a, {u32: 2}, {u32: 4}]}\n";
  };
  EXPECT_EQ(errorOf(spec("{type: u64, count: 4, init: {constant: 18446744073709551616}}")),
            f + ":3:45: buffers.a.init.constant: 18446744073709551616 is outside u64's range [0, "
                "18446744073709551615]");
  EXPECT_EQ(errorOf(spec("{type: s64, count: 4, init: {constant: 9223372036854775808}}")),
            f + ":3:45: buffers.a.init.constant: 9223372036854775808 is outside s64's range "
                "[-9223372036854775808, 9223372036854775807]");
  EXPECT_EQ(errorOf(spec("{type: u64, count: 4, init: {iota: [18446744073709551610, 2]}}")),
            f + ":3:41: buffers.a.init.iota: element 3: 18446744073709551616 is outside u64's "
                "range [0, 18446744073709551615]");
}

TEST_F(LaunchSpecTest, CooperativeLaunchesSyncTheirGrid) {
  // tests/data/grid_sync.cu: two rounds of a[i] = a[(i + 1) % n] + 1 between grid syncs.
  const std::string ptx = std::string(GPUSC_SOURCE_DIR) + "/tests/data/grid_sync.ptx";
  const auto spec = [&](const std::string& launch) {
    return "ptx: " + ptx + R"(
buffers:
  a: {type: s32, count: 600, init: {iota: [0, 1]}}
launches:
  - {kernel: rotate, grid: [5], block: [128], args: [a, {s32: 600}, {s32: 2}], )" +
           launch + R"(}
dump:
  a: a.bin
)";
  };
  write("spec.yaml", spec("cooperative: true"));
  Device dev(test::platform());
  runLaunchSpec(dev, loadLaunchSpec(path("spec.yaml")), path("out"));
  const std::vector<uint32_t> a = readU32("a.bin");
  ASSERT_EQ(a.size(), 600u);
  for (uint32_t i = 0; i < 600; ++i) ASSERT_EQ(a[i], (i + 2) % 600 + 2) << i;
  EXPECT_TRUE(dev.launches().back().cooperative);

  const std::string f = path("spec.yaml");
  const std::string maybe = spec("cooperative: maybe");
  const size_t line5 = maybe.find("  - {kernel");
  EXPECT_EQ(errorOf(maybe), fmt::format("{}:5:{}: launches[0].cooperative: expected true or false, "
                                        "got 'maybe'",
                                        f, maybe.find("maybe") - line5 + 1));
  const std::string big =
      errorOf(spec("cooperative: true").replace(spec("").find("grid: [5]") + 7, 1, "100000"));
  EXPECT_NE(big.find(f + ":5:5: cooperative launch of rotate: 100000 blocks, but the platform "
                         "holds"),
            std::string::npos)
      << big;
  // Not cooperative: grid.sync() traps.
  write("spec.yaml", spec("cooperative: false"));
  Device plain(test::platform());
  EXPECT_THROW(runLaunchSpec(plain, loadLaunchSpec(path("spec.yaml")), path("out")), KernelFault);
}

TEST_F(LaunchSpecTest, TexturesAndSurfacesOverBuffers) {
  // tests/data/textures.cu: fetch1d (thread i fetches at x0 + i dx) and surfaceBytes (uchar4
  // texels reversed in place).
  const std::string ptx = std::string(GPUSC_SOURCE_DIR) + "/tests/data/textures.ptx";
  const std::string head = "ptx: " + ptx + R"(
buffers:
  ramp: {type: f32, count: 12, init: {iota: [1, 2]}}
  out: {type: f32, count: 64, init: zeros}
  bytes: {type: u8, count: 80, init: iota}
textures:
)";
  const std::string rest = R"(
  rgba: {buffer: bytes, surface: true, width: 20, channels: 4}
launches:
  - {kernel: fetch1d, grid: 1, block: 32, args: [{texture: ramp}, out, {s32: 16}, {f32: -0.4}, {f32: 0.85}]}
  - {kernel: surfaceBytes, grid: 1, block: 32, args: [{surface: rgba}, {s32: 20}]}
dump:
  out: out.bin
  bytes: bytes.bin
)";
  write("spec.yaml",
        head + "  ramp: {buffer: ramp, width: 12, filter: linear, address: clamp}" + rest);
  Device dev(test::platform());
  runLaunchSpec(dev, loadLaunchSpec(path("spec.yaml")), path("out"));
  const std::vector<uint32_t> out = readU32("out.bin");
  ASSERT_EQ(out.size(), 64u);
  for (int i = 0; i < 16; ++i) {
    // The Programming Guide's linear fetch of texels 1 + 2k, clamped at both ends.
    const double xb = (-0.4f + float(i) * 0.85f) - 0.5;
    const long k = long(std::floor(xb));
    const double a = std::round((xb - double(k)) * 256) / 256;
    auto texel = [](long j) { return 1.0 + 2.0 * double(std::min(std::max(j, 0L), 11L)); };
    float got;
    std::memcpy(&got, &out[size_t(i) * 4], 4);
    EXPECT_NEAR(got, (1 - a) * texel(k) + a * texel(k + 1), 1e-4) << "thread " << i;
  }
  std::ifstream in(path("out/bytes.bin"), std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 80u);
  for (int i = 0; i < 80; ++i) EXPECT_EQ(bytes[size_t(i)], (i / 4) * 4 + 3 - i % 4) << i;

  const std::string f = path("spec.yaml");
  auto with = [&](const std::string& ramp) { return errorOf(head + "  ramp: " + ramp + rest); };
  EXPECT_EQ(with("{buffer: ramp, width: 12, address: clam}"),
            f + ":7:44: textures.ramp.address: 'clam' is not an address mode: wrap, clamp, "
                "mirror, border (did you mean 'clamp'?)");
  EXPECT_EQ(with("{buffer: ramp, width: 13}"),
            f + ":7:9: textures.ramp: its texels span 52 bytes; buffer 'ramp' has 48");
  EXPECT_EQ(with("{buffer: bytes, width: 80, filter: linear}"),
            f + ":7:9: textures.ramp: linear filtering needs a texture that reads as floats");
  std::string asTexture = head + "  ramp: {buffer: ramp, width: 12}" + rest;
  asTexture.replace(asTexture.find("{surface: rgba}"), 15, "{texture: rgba}");
  EXPECT_EQ(errorOf(asTexture),
            f + ":11:65: launches[1].args[0].texture: no texture named 'rgba' in textures");
}

}  // namespace
