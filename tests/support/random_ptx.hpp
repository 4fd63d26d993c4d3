// Random PTX programs for differential testing, and a host-side reference that runs them.
//
// A program is a tree of statements (integer and bit arithmetic, loads of an input buffer,
// stores to the thread's own output words, if/else and loops that diverge, loops and ifs every
// thread of a CTA takes together, barriers with shared-memory exchanges, shared and global
// atomics, shuffles, ballots and calls of generated functions, direct or through a table of
// function pointers with a callee per thread). The generator prints it as PTX
// and the reference evaluates the same tree, statement by statement over the CTA's threads, with
// PTX's semantics written out here independently of the engine.
//
// Programs are race-free by construction, so their memory results are unique: a thread stores
// only to its own output words; shared words are written by their owner, read only after a
// barrier and not written again before the next barrier; atomics are commutative and their old
// values are not used; barriers, shuffles and ballots appear only where the whole CTA is active.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpusc::test {

struct RandomProgram {
  uint64_t seed = 0;
  std::string ptx;                 // the module; the entry is `random_kernel(in, out, counters)`
  uint32_t ctas = 1;               // grid (x)
  uint32_t threads = 32;           // block (x): 32, 64 or 128
  std::vector<uint32_t> in;        // the input buffer's contents
  uint32_t outWords = 0;           // output words (all zero before the launch)
  std::vector<uint32_t> counters;  // the global atomics' words before the launch

  struct Tree;  // the statements, for the reference (random_ptx.cpp)
  std::shared_ptr<const Tree> tree;
};

// The words each thread owns in `out`: slots 0-7 for stores in the program, 8-15 for the final
// values of the eight data registers.
inline constexpr uint32_t kOutSlots = 16;
inline constexpr uint32_t kInWords = 1024;
inline constexpr uint32_t kCounters = 8;

RandomProgram generateProgram(uint64_t seed);

// For shrinking a failing program: the number of statements at the entry's top level, and the
// program without its top-level statement `index` (same launch, inputs and functions).
size_t topLevelStatements(const RandomProgram& p);
RandomProgram withoutStatement(const RandomProgram& p, size_t index);

// What the program leaves in memory.
struct MemoryResult {
  std::vector<uint32_t> out, counters;
};

// The reference: runs `p` on the host.
MemoryResult referenceRun(const RandomProgram& p);

}  // namespace gpusc::test
