// The fat binary that nvcc embeds in a program's host code (section .nv_fatbin), as the CUDA
// runtime receives it from __cudaRegisterFatBinary: one or more containers, each a header and a
// list of entries, an entry being the PTX or the SASS (a CUDA ELF) of one architecture, stored
// plain or compressed (LZ4 or Zstandard, nvcc's --compress-mode).
//
// Container header (16 bytes, little endian):  u32 magic 0xBA55ED50, u16 version 1,
//   u16 header size, u64 bytes of entries that follow the header.
// Entry header (its own size given, 64 or more bytes):  u16 kind (1 PTX, 2 ELF), u16 version,
//   u32 header size, u64 payload bytes (after the header, padded), u32 compressed bytes,
//   u32 -, u16 minor and u16 major (the PTX ISA version of a PTX entry), u32 architecture
//   (75: sm_75 / compute_75), u32 -, u32 -, u64 flags (0x2000: LZ4, 0x8000: Zstandard),
//   u64 -, u64 uncompressed bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpusc::cudart {

enum class FatbinKind : uint16_t { Ptx = 1, Elf = 2 };

enum class FatbinCompression { None, Lz4, Zstd };

struct FatbinEntry {
  FatbinKind kind = FatbinKind::Ptx;
  unsigned arch = 0;                            // 75 for compute_75 (PTX) or sm_75 (ELF)
  unsigned versionMajor = 0, versionMinor = 0;  // PTX ISA version of a PTX entry
  FatbinCompression compression = FatbinCompression::None;
  uint64_t uncompressedBytes = 0;  // 0 when not compressed
  std::vector<uint8_t> payload;    // as stored (compressed or not), padding included
};

struct FatBinary {
  std::vector<FatbinEntry> entries;
  uint64_t bytes = 0;  // the containers' length, headers included
};

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
// nvcc 13's oldest target (compute_75): a platform below it runs PTX of any architecture, since no
// binary nvcc 13 makes could run on it otherwise.
constexpr unsigned kOldestNvccTarget = 75;
// The wrapper nvcc's host code passes to __cudaRegisterFatBinary: {int magic; int version;
// const void* data; void* unused}, data pointing at the first container.
constexpr uint32_t kFatbinWrapperMagic = 0x466243B1u;

// Parses the containers at `data`, which holds at most `maxBytes` (a section's size; SIZE_MAX
// when only the containers' own lengths bound it). Containers follow each other as long as the
// next one starts with the magic. `what` names the binary in messages. Throws InputError.
FatBinary parseFatbin(const uint8_t* data, size_t maxBytes, const std::string& what);

// The one container at `data` (at most `maxBytes`), whatever follows it; `bytes` is its length.
// Throws InputError.
FatBinary parseFatbinContainer(const uint8_t* data, size_t maxBytes, const std::string& what);

// The container the wrapper points to (one: the next container in the section belongs to another
// wrapper). Throws InputError on a bad magic.
FatBinary parseFatbinWrapper(const void* wrapper, const std::string& what);

// The text of a PTX entry, decompressed, without the trailing padding. Throws InputError when a
// compressed payload does not decompress to the size its header gives.
std::string ptxText(const FatbinEntry& e, const std::string& what);

// The registers per thread ptxas allocated to each kernel of an ELF (SASS) entry, by kernel name:
// a cubin keeps them in bits 24-31 of its .text.<kernel> section's sh_info (what cuobjdump
// prints as REG). Empty for an entry that is not a 64-bit ELF. Throws InputError when a
// compressed payload does not decompress.
std::map<std::string, uint32_t> sassRegisters(const FatbinEntry& e, const std::string& what);

// The ELF entry compiled from the same virtual architecture as PTX entry `ptx` (sm_75 for
// compute_75), else the ELF entry of the lowest architecture; null when there is none.
const FatbinEntry* sassFor(const FatBinary& fb, const FatbinEntry& ptx);

// The PTX entry to run on a device of compute capability `arch` (e.g. 75 for 7.5): the one with
// the highest architecture not above it. With PTX only above it, the lowest where a GPU of that
// capability would run the binary's SASS (built for its major version, at or below its minor)
// or the platform is below nvcc 13's oldest target (compute_75); else null, as such a GPU
// cannot run PTX of a later architecture.
const FatbinEntry* bestPtx(const FatBinary& fb, unsigned arch);

// Whether the fat binary holds PTX of any architecture.
bool hasPtx(const FatBinary& fb);

// One line for a fat binary whose PTX is all for architectures above `arch`.
std::string ptxAboveMessage(const FatBinary& fb, unsigned arch, const std::string& what);

// One line for a fat binary without PTX: the architectures it has SASS for, and the nvcc flags
// that embed PTX.
std::string noPtxMessage(const FatBinary& fb, const std::string& what);

}  // namespace gpusc::cudart
