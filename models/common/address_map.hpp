// Where a device address lives in the memory system: its memory partition (channel, L2 slice,
// memory controller), its address within that channel, and its DRAM bank, row and column.
//
//   partition = (addr / interleave) mod partitions
//   local     = (addr / (interleave x partitions)) x interleave + addr mod interleave
//   column    = local mod row_bytes
//   bank      = (local / row_bytes) mod banks,  bank group = bank mod bank_groups
//   row       = local / (row_bytes x banks)
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
  explicit AddressMap(const MemoryConfig& m)
      : partitions_(m.partitions),
        interleave_(m.partition_interleave_bytes),
        rowBytes_(m.dram.row_bytes),
        banks_(m.dram.banks),
        bankGroups_(m.dram.bank_groups) {}

  uint32_t partition(uint64_t addr) const {
    return static_cast<uint32_t>((addr / interleave_) % partitions_);
  }
  uint64_t local(uint64_t addr) const {
    return (addr / (uint64_t(interleave_) * partitions_)) * interleave_ + addr % interleave_;
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
  uint32_t partitions_, interleave_, rowBytes_, banks_, bankGroups_;
};

}  // namespace gpusc
