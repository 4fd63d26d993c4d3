#include "cudart/fatbin.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <lz4.h>
#include <zstd.h>

#include "common/error.hpp"
#include "common/strings.hpp"

namespace gpusc::cudart {

namespace {

constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;
constexpr size_t kContainerHeader = 16;
constexpr size_t kEntryHeaderMin = 64;
// No PTX module comes near this; a header claiming more is corrupt.
constexpr uint64_t kMaxEntryBytes = uint64_t(1) << 32;

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Parses one container at `p` (at most `avail` bytes); returns its length.
size_t parseContainer(const uint8_t* p, size_t avail, size_t at, const std::string& what,
                      FatBinary& out) {
  if (avail < kContainerHeader)
    throw InputError(
        fmt::format("{}: fat binary truncated at byte {} (container header)", what, at));
  const auto magic = load<uint32_t>(p);
  if (magic != kFatbinMagic)
    throw InputError(fmt::format("{}: no fat binary at byte {} (magic 0x{:08x}, expected 0x{:08x})",
                                 what, at, magic, kFatbinMagic));
  const auto headerSize = load<uint16_t>(p + 6);
  const auto bodySize = load<uint64_t>(p + 8);
  if (headerSize < kContainerHeader || headerSize > avail || bodySize > avail - headerSize)
    throw InputError(
        fmt::format("{}: fat binary container at byte {} claims {} bytes, more than the {} there",
                    what, at, uint64_t(headerSize) + bodySize, avail));
  const uint8_t* e = p + headerSize;
  const uint8_t* end = e + bodySize;
  while (e < end) {
    const size_t off = at + size_t(e - p);
    if (size_t(end - e) < kEntryHeaderMin)
      throw InputError(fmt::format("{}: fat binary entry at byte {} truncated", what, off));
    FatbinEntry entry;
    const auto kind = load<uint16_t>(e);
    const auto entryHeader = load<uint32_t>(e + 4);
    const auto payload = load<uint64_t>(e + 8);
    if (entryHeader < kEntryHeaderMin || entryHeader > size_t(end - e) ||
        payload > kMaxEntryBytes || payload > size_t(end - e) - entryHeader)
      throw InputError(fmt::format(
          "{}: fat binary entry at byte {} (header {} bytes, payload {}) overruns its container",
          what, off, entryHeader, payload));
    entry.versionMinor = load<uint16_t>(e + 24);
    entry.versionMajor = load<uint16_t>(e + 26);
    entry.arch = load<uint32_t>(e + 28);
    const auto flags = load<uint64_t>(e + 40);
    entry.uncompressedBytes = load<uint64_t>(e + 56);
    if (flags & kFlagZstd)
      entry.compression = FatbinCompression::Zstd;
    else if (flags & kFlagLz4)
      entry.compression = FatbinCompression::Lz4;
    if (entry.compression != FatbinCompression::None) {
      const auto compressed = load<uint32_t>(e + 16);
      if (compressed > payload)
        throw InputError(
            fmt::format("{}: fat binary entry at byte {}: {} compressed bytes in a payload of {}",
                        what, off, compressed, payload));
      if (entry.uncompressedBytes == 0 || entry.uncompressedBytes > kMaxEntryBytes)
        throw InputError(fmt::format(
            "{}: fat binary entry at byte {}: compressed, to an uncompressed size of {} bytes",
            what, off, entry.uncompressedBytes));
      entry.payload.assign(e + entryHeader, e + entryHeader + compressed);
    } else {
      entry.payload.assign(e + entryHeader, e + entryHeader + payload);
    }
    if (kind == uint16_t(FatbinKind::Ptx) || kind == uint16_t(FatbinKind::Elf)) {
      entry.kind = FatbinKind(kind);
      out.entries.push_back(std::move(entry));
    }  // other kinds (none nvcc 13 writes) carry nothing a simulator runs
    e += entryHeader + payload;
  }
  return headerSize + bodySize;
}

}  // namespace

FatBinary parseFatbin(const uint8_t* data, size_t maxBytes, const std::string& what) {
  FatBinary fb;
  size_t at = 0;
  do {
    at += parseContainer(data + at, maxBytes - at, at, what, fb);
  } while (maxBytes - at >= kContainerHeader && load<uint32_t>(data + at) == kFatbinMagic);
  fb.bytes = at;
  return fb;
}

FatBinary parseFatbinWrapper(const void* wrapper, const std::string& what) {
  const auto* w = static_cast<const uint8_t*>(wrapper);
  const auto magic = load<uint32_t>(w);
  if (magic != kFatbinWrapperMagic)
    throw InputError(fmt::format("{}: not a fat binary wrapper (magic 0x{:08x}, expected 0x{:08x})",
                                 what, magic, kFatbinWrapperMagic));
  const auto* data = load<const uint8_t*>(w + 8);
  if (data == nullptr)
    throw InputError(fmt::format("{}: the fat binary wrapper has no data", what));
  // The container's header bounds what is read (parseContainer checks its magic first); one
  // container per wrapper.
  const auto headerSize = load<uint16_t>(data + 6);
  const auto bodySize = load<uint64_t>(data + 8);
  if (bodySize > kMaxEntryBytes)
    throw InputError(fmt::format("{}: fat binary container claims {} bytes", what, bodySize));
  FatBinary fb;
  fb.bytes = parseContainer(data, size_t(headerSize) + bodySize, 0, what, fb);
  return fb;
}

std::string ptxText(const FatbinEntry& e, const std::string& what) {
  std::string text;
  if (e.compression == FatbinCompression::None) {
    text.assign(e.payload.begin(), e.payload.end());
  } else {
    text.resize(e.uncompressedBytes);
    size_t got = 0;
    bool ok = false;
    if (e.compression == FatbinCompression::Zstd) {
      got = ZSTD_decompress(text.data(), text.size(), e.payload.data(), e.payload.size());
      ok = !ZSTD_isError(got);
    } else if (e.payload.size() <= size_t(std::numeric_limits<int>::max()) &&
               text.size() <= size_t(std::numeric_limits<int>::max())) {
      const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(e.payload.data()),
                                        text.data(), int(e.payload.size()), int(text.size()));
      ok = n >= 0;
      got = ok ? size_t(n) : 0;
    }
    if (!ok || got != text.size())
      throw InputError(fmt::format(
          "{}: the {} PTX for compute_{} does not decompress to the {} bytes its header gives",
          what, e.compression == FatbinCompression::Zstd ? "Zstandard" : "LZ4", e.arch,
          e.uncompressedBytes));
  }
  // The payload is padded with NULs (and nvcc leads it with newlines).
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

const FatbinEntry* bestPtx(const FatBinary& fb, unsigned arch) {
  const FatbinEntry* below = nullptr;  // highest arch <= `arch`
  const FatbinEntry* above = nullptr;  // lowest arch > `arch`
  for (const auto& e : fb.entries) {
    if (e.kind != FatbinKind::Ptx) continue;
    if (e.arch <= arch) {
      if (!below || e.arch > below->arch) below = &e;
    } else if (!above || e.arch < above->arch) {
      above = &e;
    }
  }
  return below ? below : above;
}

std::string noPtxMessage(const FatBinary& fb, const std::string& what) {
  std::set<unsigned> sass;
  for (const auto& e : fb.entries)
    if (e.kind == FatbinKind::Elf) sass.insert(e.arch);
  std::vector<std::string> archs;
  for (unsigned a : sass) archs.push_back(fmt::format("sm_{}", a));
  return fmt::format(
      "{}: the fat binary holds no PTX ({}), and gpusc runs PTX: build with -arch=sm_75 (it "
      "embeds compute_75 PTX beside the SASS) or add -gencode arch=compute_75,code=compute_75",
      what, archs.empty() ? std::string("no entries") : "SASS for " + join(archs, ", "));
}

}  // namespace gpusc::cudart
