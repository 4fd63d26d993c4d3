// The fat binary reader (models/cudart/fatbin): the .nv_fatbin sections of a program nvcc 13
// built in each compression mode (tests/data/fatbin, regen.sh), the PTX picked for a device, a
// binary with SASS only, and damaged containers, which are refused with a message rather than
// read past their end.
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "cudart/fatbin.hpp"
#include "gpu/device.hpp"
#include "support/test_data.hpp"

using namespace gpusc;
using namespace gpusc::cudart;

namespace {

std::vector<uint8_t> readBytes(const std::string& name) { return readTestData("fatbin/" + name); }

FatBinary parse(const std::vector<uint8_t>& bytes) {
  return parseFatbin(bytes.data(), bytes.size(), "axpy");
}

// PTX without comments, indentation and blank lines, with single spaces between words: nvcc
// embeds its PTX with the comments removed and (compressed) the indentation too.
std::string normalised(const std::string& ptx) {
  std::istringstream in(ptx);
  std::string line, out;
  while (std::getline(in, line)) {
    std::string words, word;
    std::istringstream ws(line);
    while (ws >> word) words += (words.empty() ? "" : " ") + word;
    if (words.empty() || words.rfind("//", 0) == 0) continue;
    out += words + "\n";
  }
  return out;
}

std::string nvccPtx() {
  const auto b = readBytes("axpy.ptx");
  return std::string(b.begin(), b.end());
}

}  // namespace

TEST(Fatbin, EachCompressionModeGivesNvccsPtxForCompute75) {
  const std::string expected = normalised(nvccPtx());
  for (const auto& [file, compression] : std::vector<std::pair<std::string, FatbinCompression>>{
           {"axpy_none.fatbin", FatbinCompression::None},
           {"axpy_speed.fatbin", FatbinCompression::Lz4},
           {"axpy_size.fatbin", FatbinCompression::Zstd}}) {
    SCOPED_TRACE(file);
    const auto bytes = readBytes(file);
    const FatBinary fb = parse(bytes);
    EXPECT_EQ(fb.bytes, bytes.size());  // every container of the section read
    const FatbinEntry* ptx = bestPtx(fb, 75);
    ASSERT_NE(ptx, nullptr);
    EXPECT_EQ(ptx->arch, 75u);
    EXPECT_EQ(ptx->versionMajor, 9u);
    EXPECT_EQ(ptx->versionMinor, 0u);
    EXPECT_EQ(ptx->compression, compression);
    EXPECT_EQ(normalised(ptxText(*ptx, file)), expected);
    size_t sass = 0;
    for (const auto& e : fb.entries) sass += e.kind == FatbinKind::Elf && e.arch == 75;
    EXPECT_GE(sass, 1u);
  }
}

TEST(Fatbin, TheBestPtxIsTheNewestNotAboveTheDeviceElseTheOldest) {
  const auto bytes = readBytes("axpy_two_ptx.fatbin");
  const FatBinary fb = parse(bytes);
  std::vector<unsigned> ptxArchs;
  for (const auto& e : fb.entries)
    if (e.kind == FatbinKind::Ptx) ptxArchs.push_back(e.arch);
  EXPECT_EQ(ptxArchs, (std::vector<unsigned>{75, 80}));
  EXPECT_EQ(bestPtx(fb, 86)->arch, 80u);
  EXPECT_EQ(bestPtx(fb, 80)->arch, 80u);
  EXPECT_EQ(bestPtx(fb, 79)->arch, 75u);
  EXPECT_EQ(bestPtx(fb, 20)->arch, 75u);  // a Fermi platform runs the oldest PTX there is
  EXPECT_EQ(normalised(ptxText(*bestPtx(fb, 75), "two")), normalised(nvccPtx()));
}

// PTX above the device only: a GPU runs the binary's SASS if it was built for the device's
// major version at or below its minor (gpusc then runs the lowest PTX), else nothing.
TEST(Fatbin, PtxAboveTheDeviceRunsOnlyWhereItsSassWould) {
  const auto entry = [](FatbinKind kind, unsigned arch) {
    FatbinEntry e;
    e.kind = kind;
    e.arch = arch;
    return e;
  };
  FatBinary fb;
  fb.entries = {entry(FatbinKind::Ptx, 90), entry(FatbinKind::Ptx, 86), entry(FatbinKind::Elf, 86)};
  EXPECT_EQ(bestPtx(fb, 75), nullptr);
  EXPECT_EQ(bestPtx(fb, 80), nullptr);    // sm_86 SASS does not run on 8.0
  EXPECT_EQ(bestPtx(fb, 87)->arch, 86u);  // the highest not above
  EXPECT_EQ(bestPtx(fb, 20)->arch, 86u);  // below compute_75: the lowest
  fb.entries.push_back(entry(FatbinKind::Elf, 80));
  EXPECT_EQ(bestPtx(fb, 80)->arch, 86u);  // its sm_80 SASS would run
  EXPECT_EQ(bestPtx(fb, 75), nullptr);    // of another major version
  fb.entries.push_back(entry(FatbinKind::Elf, 75));
  EXPECT_EQ(bestPtx(fb, 75)->arch, 86u);
}

TEST(Fatbin, TheEmbeddedPtxRunsOnTheDevice) {
  const auto bytes = readBytes("axpy_size.fatbin");
  const FatBinary fb = parse(bytes);
  const std::string text = ptxText(*bestPtx(fb, 20), "axpy");
  Device dev(loadPlatform("gtx480"));
  Module& m = dev.loadModule(text, "axpy.fatbin");
  const int n = 300;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = float(i), y[i] = float(2 * i);
  const DevPtr dx = dev.upload(x), dy = dev.upload(y);
  const float scale = 2;
  dev.copyToSymbol(m, "scale", &scale, sizeof scale);
  dev.launch(m.kernel("_Z4axpyfPKfPfi"), {2}, {256}, 0,
             KernelArgs().f32(1.5f).ptr(dx).ptr(dy).i32(n));
  const auto out = dev.download<float>(dy, n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 1.5f * 2 * x[i] + y[i]) << i;
}

TEST(Fatbin, SassOnlyHasNoPtxAndTheMessageNamesTheFlags) {
  const FatBinary fb = parse(readBytes("axpy_sass_only.fatbin"));
  EXPECT_EQ(bestPtx(fb, 75), nullptr);
  const std::string msg = noPtxMessage(fb, "./app");
  EXPECT_NE(msg.find("SASS for sm_75"), std::string::npos) << msg;
  EXPECT_NE(msg.find("-arch=sm_75"), std::string::npos) << msg;
  EXPECT_NE(msg.find("code=compute_75"), std::string::npos) << msg;
}

TEST(Fatbin, TheWrapperPointsAtOneContainer) {
  const auto bytes = readBytes("axpy_two_ptx.fatbin");
  // The section's second container is the one with the PTX.
  uint64_t firstBody;
  std::memcpy(&firstBody, bytes.data() + 8, 8);
  const uint8_t* second = bytes.data() + 16 + firstBody;
  struct {
    uint32_t magic, version;
    const void* data;
    void* unused;
  } wrapper{kFatbinWrapperMagic, 1, second, nullptr};
  const FatBinary fb = parseFatbinWrapper(&wrapper, "app");
  EXPECT_EQ(fb.bytes, bytes.size() - 16 - firstBody);
  EXPECT_NE(bestPtx(fb, 80), nullptr);
  wrapper.magic = 0x12345678;
  EXPECT_THROW(parseFatbinWrapper(&wrapper, "app"), InputError);
}

TEST(Fatbin, DamagedContainersAreRefusedNotReadPastTheirEnd) {
  const auto good = readBytes("axpy_size.fatbin");
  const auto expectRefused = [](std::vector<uint8_t> b, const std::string& fragment) {
    try {
      parseFatbin(b.data(), b.size(), "bad");
      ADD_FAILURE() << "accepted; expected: " << fragment;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expectRefused({good.begin(), good.begin() + 10}, "truncated");
  auto badMagic = good;
  badMagic[0] ^= 0xff;
  expectRefused(badMagic, "no fat binary");
  expectRefused({good.begin(), good.end() - 40}, "claims");  // the last container cut short
  auto bigEntry = good;
  bigEntry[16 + 8 + 7] = 0x7f;  // the first entry's payload size, huge
  expectRefused(bigEntry, "overruns");
  // A compressed PTX entry whose data is damaged does not decompress to its size.
  FatBinary fb = parse(good);
  FatbinEntry ptx = *bestPtx(fb, 75);
  ptx.payload[ptx.payload.size() / 2] ^= 0x5a;
  ptx.payload.resize(ptx.payload.size() - 7);
  EXPECT_THROW(ptxText(ptx, "bad"), InputError);
}
