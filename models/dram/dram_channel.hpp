// The timing state of one DRAM channel: the chips of a memory partition working in lock step
// (memory.dram), seen from its memory controller.
//
// Each of memory.dram.banks banks (in bank_groups groups, group = bank mod groups as in
// AddressMap) holds at most one open row (open-page policy). The controller issues commands on
// one shared command bus, one command per DRAM command cycle:
//
//   ACT  opens a row:        tRCD to a column command, tRAS to PRE, tRC to the next ACT of the
//                            bank, tRRD to an ACT of any other bank
//   RD   one burst out:      data on the bus tCL later for burstCycles(); tRTPL to PRE
//   WR   one burst in:       data on the bus tWL later; tWR from its last data to PRE, tCDLR from
//                            its last data to any RD of the channel (write-to-read turnaround)
//   PRE  closes the row:     tRP to the next ACT of the bank
//   REF  refreshes all banks (every bank closed): tRFC before the next ACT
//
// Column commands are spaced by tCCD (different bank group) or tCCDL (same group; tCCDL = 0:
// no bank groups, tCCD everywhere). The data bus carries one burst at a time, in command order,
// with a read-to-write turnaround gap. Every timestamp is a DRAM command cycle
// (gpu.clocks.dram_mhz). The channel only keeps, per constraint, the first cycle at which the
// next command of each kind may issue, so asking "when may X issue" costs a few comparisons.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/platform_config.hpp"

namespace gpusc::dram {

inline constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

// Commands issued and data-bus use, since the last resetCounters().
struct DramCounters {
  uint64_t activates = 0, precharges = 0, refreshes = 0;
  uint64_t reads = 0, writes = 0;  // column commands (bursts)
  uint64_t busBusyCycles = 0;      // data-bus cycles carrying bursts
};

class DramChannel {
 public:
  explicit DramChannel(const DramConfig& cfg);

  uint32_t banks() const { return static_cast<uint32_t>(banks_.size()); }
  uint32_t bankGroupOf(uint32_t bank) const { return bank % bankGroups_; }
  bool isOpen(uint32_t bank) const { return banks_[bank].open; }
  uint64_t openRow(uint32_t bank) const { return banks_[bank].row; }
  bool isRowHit(uint32_t bank, uint64_t row) const {
    const Bank& b = banks_[bank];
    return b.open && b.row == row;
  }
  uint32_t openBanks() const { return openBanks_; }

  // The first cycle at which each command may issue (given every command issued so far).
  uint64_t earliestActivate(uint32_t bank) const;
  uint64_t earliestPrecharge(uint32_t bank) const;
  uint64_t earliestColumn(uint32_t bank, bool write) const {  // kNever if the bank is closed
    return earliestColumn(bank, write, columnBounds());
  }
  // The part of earliestColumn common to every bank (the command bus, the column spacing across
  // banks, the data bus), for a scheduler that asks about many banks in one cycle.
  struct ColumnBounds {
    uint64_t read, write;
  };
  ColumnBounds columnBounds() const;
  uint64_t earliestColumn(uint32_t bank, bool write, const ColumnBounds& c) const {
    const Bank& b = banks_[bank];
    if (!b.open) return kNever;
    return std::max({write ? c.write : c.read, b.colReady, groupColReady_[bankGroupOf(bank)]});
  }
  // PRE if the bank is open (on another row), ACT if it is closed.
  uint64_t earliestRowCommand(uint32_t bank) const {
    return banks_[bank].open ? earliestPrecharge(bank) : earliestActivate(bank);
  }

  // Issue a command at `cycle` (an InternalError if a constraint forbids it: a scheduler bug).
  void activate(uint32_t bank, uint64_t row, uint64_t cycle);
  void precharge(uint32_t bank, uint64_t cycle);
  // A column command moving one burst of the open row; returns the cycle its data has left the
  // bus (the end of the burst).
  uint64_t read(uint32_t bank, uint64_t cycle);
  uint64_t write(uint32_t bank, uint64_t cycle);

  // Performs the all-bank refreshes due at `due`, due + tREFI, ... up to and including cycle
  // `until`, each as early as the constraints allow from its due cycle on: PRE of every open
  // bank, then REF. Returns the next due cycle. Refresh must be enabled (tREFI > 0). Called
  // lazily (after an idle period, with `until` far beyond `due`) it gives the same timing as
  // refreshing on time, at a cost independent of the idle time.
  uint64_t refreshUntil(uint64_t due, uint64_t until);

  const DramCounters& counters() const { return counters_; }
  void resetCounters() { counters_ = DramCounters{}; }
  // Power-on: every bank closed, no constraint pending, counters zero.
  void reset();

 private:
  struct Bank {
    bool open = false;
    uint64_t row = 0;
    uint64_t actReady = 0;  // tRP after PRE, tRC after ACT, tRFC after REF
    uint64_t colReady = 0;  // tRCD after ACT
    uint64_t preReady = 0;  // tRAS after ACT, tRTPL after RD, tWR after write data
  };

  uint64_t refresh(uint64_t due);
  bool quiescentAt(uint64_t cycle) const;  // closed, nothing pending: a REF would start at cycle
  void columnIssued(uint32_t bank, uint64_t cycle);

  const DramConfig cfg_;
  const uint32_t bankGroups_, burstCycles_, sameGroupSpacing_;
  std::vector<Bank> banks_;
  std::vector<uint64_t> groupColReady_;  // tCCDL after a column command of the group
  uint64_t cmdReady_ = 0;                // the command bus: one command per cycle
  uint64_t actReady_ = 0;                // tRRD after any ACT
  uint64_t colReady_ = 0;                // tCCD after any column command
  uint64_t readReady_ = 0;               // tCDLR after the last write data
  uint64_t busFree_ = 0;                 // the data bus is free from this cycle
  bool busCarriesRead_ = false;          // direction of the last burst
  uint32_t openBanks_ = 0;
  DramCounters counters_;
};

}  // namespace gpusc::dram
