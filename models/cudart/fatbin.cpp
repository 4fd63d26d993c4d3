#include "cudart/fatbin.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
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

FatBinary parseFatbinContainer(const uint8_t* data, size_t maxBytes, const std::string& what) {
  FatBinary fb;
  fb.bytes = parseContainer(data, maxBytes, 0, what, fb);
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

namespace {

// An entry's payload, decompressed (with its padding).
std::string entryBytes(const FatbinEntry& e, const std::string& what) {
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
          "{}: the {} {} for {}_{} does not decompress to the {} bytes its header gives", what,
          e.compression == FatbinCompression::Zstd ? "Zstandard" : "LZ4",
          e.kind == FatbinKind::Ptx ? "PTX" : "SASS", e.kind == FatbinKind::Ptx ? "compute" : "sm",
          e.arch, e.uncompressedBytes));
  }
  return text;
}

}  // namespace

std::string ptxText(const FatbinEntry& e, const std::string& what) {
  std::string text = entryBytes(e, what);
  // The payload is padded with NULs (and nvcc leads it with newlines).
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::map<std::string, uint32_t> sassRegisters(const FatbinEntry& e, const std::string& what) {
  std::map<std::string, uint32_t> out;
  if (e.kind != FatbinKind::Elf) return out;
  const std::string elf = entryBytes(e, what);
  const auto* d = reinterpret_cast<const uint8_t*>(elf.data());
  // ELF64, little-endian: e_shoff at 0x28, e_shentsize, e_shnum, e_shstrndx at 0x3a.
  if (elf.size() < 0x40 ||
      std::memcmp(d,
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      d[4] != 2 || d[5] != 1)
    return out;
  const auto shoff = load<uint64_t>(d + 0x28);
  const auto shentsize = load<uint16_t>(d + 0x3a);
  const auto shnum = load<uint16_t>(d + 0x3c);
  const auto shstrndx = load<uint16_t>(d + 0x3e);
  if (shentsize < 64 || shstrndx >= shnum || shoff > elf.size() ||
      uint64_t(shnum) * shentsize > elf.size() - shoff)
    return out;
  const auto header = [&](size_t i) { return d + shoff + i * shentsize; };
  const uint64_t names = load<uint64_t>(header(shstrndx) + 24);  // sh_offset
  for (size_t i = 0; i < shnum; ++i) {
    const uint8_t* h = header(i);
    const uint64_t at = names + load<uint32_t>(h);  // sh_name
    if (at >= elf.size()) continue;
    const std::string name(reinterpret_cast<const char*>(d + at),
                           strnlen(reinterpret_cast<const char*>(d + at), elf.size() - at));
    if (name.rfind(".text.", 0) != 0) continue;
    const uint32_t regs = load<uint32_t>(h + 44) >> 24;  // sh_info
    if (regs > 0) out[name.substr(6)] = regs;
  }
  return out;
}

const FatbinEntry* sassFor(const FatBinary& fb, const FatbinEntry& ptx) {
  const FatbinEntry* lowest = nullptr;
  for (const auto& e : fb.entries) {
    if (e.kind != FatbinKind::Elf) continue;
    if (e.arch == ptx.arch) return &e;
    if (!lowest || e.arch < lowest->arch) lowest = &e;
  }
  return lowest;
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
  if (below != nullptr || above == nullptr) return below;
  // Only PTX for architectures above the device's. A GPU of this compute capability runs SASS
  // built for its major version at or below its minor (the CUDA C++ Programming Guide's binary
  // compatibility), so with such SASS the program runs, and gpusc runs the lowest PTX (the same
  // source); without, the GPU cannot run it (cudaErrorNoKernelImageForDevice). A platform below
  // nvcc 13's oldest target (compute_75) also takes the lowest: no nvcc 13 binary could run on
  // it otherwise.
  if (arch < kOldestNvccTarget) return above;
  for (const auto& e : fb.entries)
    if (e.kind == FatbinKind::Elf && e.arch / 10 == arch / 10 && e.arch <= arch) return above;
  return nullptr;
}

namespace {
// The architectures of the fat binary's entries of `kind`, ascending.
std::set<unsigned> archsOf(const FatBinary& fb, FatbinKind kind) {
  std::set<unsigned> archs;
  for (const auto& e : fb.entries)
    if (e.kind == kind) archs.insert(e.arch);
  return archs;
}
}  // namespace

bool hasPtx(const FatBinary& fb) { return !archsOf(fb, FatbinKind::Ptx).empty(); }

std::string ptxAboveMessage(const FatBinary& fb, unsigned arch, const std::string& what) {
  const std::set<unsigned> ptx = archsOf(fb, FatbinKind::Ptx);
  if (ptx.empty()) throw InternalError("ptxAboveMessage: a fat binary without PTX");
  return fmt::format(
      "{}: the fat binary's PTX is for compute_{}, above the platform's compute capability {}.{} "
      "(gpu.compute_capability), which cannot run it: build with -arch=sm_{} as well, or run on "
      "a platform of a higher compute capability (rtx3070: 8.6; --set gpu.compute_capability={})",
      what, fmt::join(ptx, ", compute_"), arch / 10, arch % 10, arch, *ptx.begin());
}

std::string noPtxMessage(const FatBinary& fb, const std::string& what) {
  const std::set<unsigned> sass = archsOf(fb, FatbinKind::Elf);
  return fmt::format(
      "{}: the fat binary holds no PTX ({}), and gpusc runs PTX: build with -arch=sm_75 (it "
      "embeds compute_75 PTX beside the SASS) or add -gencode arch=compute_75,code=compute_75",
      what,
      sass.empty() ? std::string("no entries")
                   : fmt::format("SASS for sm_{}", fmt::join(sass, ", sm_")));
}

}  // namespace gpusc::cudart
