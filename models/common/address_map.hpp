// Where a device address lives in the memory system: its memory partition (channel, memory
// controller), its L2 slice, its address within that channel and that slice, and its DRAM bank,
// row and column.
//
//   partition = (addr / interleave + h) mod partitions
//   local     = (addr / (interleave x partitions)) x interleave + addr mod interleave
//   slice     = partition x S + (local / interleave) mod S     (S = l2.slices_per_partition)
//   slice-local = (local / (interleave x S)) x interleave + addr mod interleave
//   column    = local mod row_bytes
//   bank      = (local / row_bytes) mod banks,  bank group = bank mod bank_groups
//   row       = local / (row_bytes x banks)
//
// A channel's consecutive interleave-sized chunks alternate between its S slices (GPGPU-Sim
// picks a sub-partition by the lowest bank bit, which its Fermi mapping puts at the same place).
//
// h is 0 with memory.partition_hash none. With fold it is a hash of the chunk number above the
// partition's, u = addr / (interleave x partitions): the sum of u's digits in base `partitions`,
// mod partitions. For one u, h is one number, so the partitions of u's chunks are a rotation of
// those without it: every address still has one partition and one local address, and `local`
// is unchanged. What moves is which partition a run of chunks starts at: the chunks of
// `partitions` consecutive u (accesses partitions x interleave bytes apart: the blocks of a grid
// writing in lockstep, a matrix's column), which all share one partition without the hash, reach
// every partition, as do those of u a power of `partitions` apart. GPUs since Fermi hash their
// partition index for this reason ("partition camping" was a GT200 effect: NVIDIA's matrix
// transpose whitepaper, Ruetsch and Micikevicius 2009); NVIDIA's hash itself is not public.
#pragma once

#include <cstdint>

#include "common/platform_config.hpp"

namespace gpusc {

struct DramLocation {
  uint32_t bank = 0, bankGroup = 0;
  uint64_t row = 0;
  uint32_t column = 0;  // byte within the row
};

class AddressMap {
 public:
  // The platform's map; `AddressMap(cfg.memory)` alone sees one L2 slice per partition (enough
  // for partitions, channel addresses and DRAM locations).
  explicit AddressMap(const PlatformConfig& cfg)
      : AddressMap(cfg.memory, cfg.l2.slices_per_partition) {}
  explicit AddressMap(const MemoryConfig& m, uint32_t slicesPerPartition = 1)
      : partitions_(m.partitions),
        slicesPerPartition_(slicesPerPartition),
        interleave_(m.partition_interleave_bytes),
        rowBytes_(m.dram.row_bytes),
        banks_(m.dram.banks),
        bankGroups_(m.dram.bank_groups),
        hashed_(m.partition_hash == "fold" && m.partitions > 1),
        digitBits_(powerOfTwoBits(m.partitions)) {}

  uint32_t partition(uint64_t addr) const {
    const uint64_t chunk = addr / interleave_;
    if (!hashed_) return static_cast<uint32_t>(chunk % partitions_);
    return static_cast<uint32_t>((chunk % partitions_ + hash(chunk / partitions_)) % partitions_);
  }
  uint64_t local(uint64_t addr) const {
    return (addr / (uint64_t(interleave_) * partitions_)) * interleave_ + addr % interleave_;
  }
  // L2 slices: slicesPerPartition per partition, numbered partition-major.
  uint32_t slices() const { return partitions_ * slicesPerPartition_; }
  uint32_t slicesPerPartition() const { return slicesPerPartition_; }
  uint32_t slice(uint64_t addr) const {
    return partition(addr) * slicesPerPartition_ +
           static_cast<uint32_t>((addr / (uint64_t(interleave_) * partitions_)) %
                                 slicesPerPartition_);
  }
  // The address of `addr` within its slice (dense: a slice's sets are all used).
  uint64_t sliceLocal(uint64_t addr) const {
    return (addr / (uint64_t(interleave_) * partitions_ * slicesPerPartition_)) * interleave_ +
           addr % interleave_;
  }
  // The device address of slice-local address `sliceLocal` of slice `slice`.
  uint64_t device(uint32_t slice, uint64_t sliceLocal) const {
    const uint64_t p = slice / slicesPerPartition_, s = slice % slicesPerPartition_;
    const uint64_t chunk = sliceLocal / interleave_;
    const uint64_t upper = chunk * slicesPerPartition_ + s;  // addr / (interleave x partitions)
    const uint64_t low = (p + partitions_ - hash(upper)) % partitions_;  // hash < partitions
    return (upper * partitions_ + low) * interleave_ + sliceLocal % interleave_;
  }
  DramLocation dram(uint64_t localAddr) const {
    DramLocation d;
    d.column = static_cast<uint32_t>(localAddr % rowBytes_);
    d.bank = static_cast<uint32_t>((localAddr / rowBytes_) % banks_);
    d.bankGroup = d.bank % bankGroups_;
    d.row = localAddr / (uint64_t(rowBytes_) * banks_);
    return d;
  }

 private:
  // log2(n) for a power of two n, else 0.
  static uint32_t powerOfTwoBits(uint32_t n) {
    return (n & (n - 1)) == 0 ? static_cast<uint32_t>(__builtin_ctz(n)) : 0;
  }
  // h of the chunk number above the partition's (0 without a hash).
  uint64_t hash(uint64_t upper) const {
    if (!hashed_) return 0;
    uint64_t h = 0;
    if (digitBits_ != 0) {
      for (; upper != 0; upper >>= digitBits_) h += upper & (partitions_ - 1);
    } else {
      for (; upper != 0; upper /= partitions_) h += upper % partitions_;
    }
    return h % partitions_;
  }

  uint32_t partitions_, slicesPerPartition_, interleave_, rowBytes_, banks_, bankGroups_;
  bool hashed_;
  uint32_t digitBits_;  // log2(partitions) when a power of two, else 0
};

}  // namespace gpusc
