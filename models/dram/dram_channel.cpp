#include "dram/dram_channel.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::dram {

namespace {

uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

}  // namespace

DramChannel::DramChannel(const DramConfig& cfg)
    : cfg_(cfg),
      bankGroups_(cfg.bank_groups),
      burstCycles_(cfg.burstCycles()),
      // tCCDL = 0 or bank_groups = 1 (memory.dram.bank_groups: "1: none"): no bank groups,
      // tCCD between any two column commands.
      sameGroupSpacing_(cfg.tCCDL == 0 || cfg.bank_groups == 1 ? cfg.tCCD
                                                               : std::max(cfg.tCCD, cfg.tCCDL)),
      banks_(cfg.banks),
      groupColReady_(cfg.bank_groups, 0) {}

void DramChannel::reset() {
  std::fill(banks_.begin(), banks_.end(), Bank{});
  std::fill(groupColReady_.begin(), groupColReady_.end(), 0);
  cmdReady_ = actReady_ = colReady_ = readReady_ = busFree_ = 0;
  busCarriesRead_ = false;
  openBanks_ = 0;
  counters_ = DramCounters{};
}

// ---- when may a command issue ------------------------------------------------------------------

uint64_t DramChannel::earliestActivate(uint32_t bank) const {
  return std::max({cmdReady_, actReady_, banks_[bank].actReady});
}

uint64_t DramChannel::earliestPrecharge(uint32_t bank) const {
  return std::max(cmdReady_, banks_[bank].preReady);
}

DramChannel::ColumnBounds DramChannel::columnBounds() const {
  const uint64_t t = std::max(cmdReady_, colReady_);
  // The burst's data must find the bus free: data leave the bus in command order.
  const uint64_t freeForWrite = busFree_ + (busCarriesRead_ ? cfg_.read_write_turnaround : 0);
  return ColumnBounds{std::max({t, readReady_, minus(busFree_, cfg_.tCL)}),
                      std::max(t, minus(freeForWrite, cfg_.tWL))};
}

// ---- commands ----------------------------------------------------------------------------------

void DramChannel::activate(uint32_t bank, uint64_t row, uint64_t cycle) {
  Bank& b = banks_[bank];
  if (b.open || cycle < earliestActivate(bank))
    throw InternalError(
        fmt::format("DRAM: ACT of bank {} at cycle {} violates its timing", bank, cycle));
  b.open = true;
  b.row = row;
  b.colReady = cycle + cfg_.tRCD;
  b.preReady = std::max(b.preReady, cycle + cfg_.tRAS);
  b.actReady = std::max(b.actReady, cycle + cfg_.tRC);
  actReady_ = cycle + cfg_.tRRD;
  cmdReady_ = cycle + 1;
  ++openBanks_;
  ++counters_.activates;
}

void DramChannel::precharge(uint32_t bank, uint64_t cycle) {
  Bank& b = banks_[bank];
  if (!b.open || cycle < earliestPrecharge(bank))
    throw InternalError(
        fmt::format("DRAM: PRE of bank {} at cycle {} violates its timing", bank, cycle));
  b.open = false;
  b.actReady = std::max(b.actReady, cycle + cfg_.tRP);
  cmdReady_ = cycle + 1;
  --openBanks_;
  ++counters_.precharges;
}

void DramChannel::columnIssued(uint32_t bank, uint64_t cycle) {
  colReady_ = cycle + cfg_.tCCD;
  groupColReady_[bankGroupOf(bank)] = cycle + sameGroupSpacing_;
  cmdReady_ = cycle + 1;
  counters_.busBusyCycles += burstCycles_;
}

uint64_t DramChannel::read(uint32_t bank, uint64_t cycle) {
  if (cycle < earliestColumn(bank, false))
    throw InternalError(
        fmt::format("DRAM: RD of bank {} at cycle {} violates its timing", bank, cycle));
  Bank& b = banks_[bank];
  b.preReady = std::max(b.preReady, cycle + cfg_.tRTPL);
  columnIssued(bank, cycle);
  busFree_ = cycle + cfg_.tCL + burstCycles_;
  busCarriesRead_ = true;
  ++counters_.reads;
  return busFree_;
}

uint64_t DramChannel::write(uint32_t bank, uint64_t cycle) {
  if (cycle < earliestColumn(bank, true))
    throw InternalError(
        fmt::format("DRAM: WR of bank {} at cycle {} violates its timing", bank, cycle));
  Bank& b = banks_[bank];
  const uint64_t end = cycle + cfg_.tWL + burstCycles_;
  b.preReady = std::max(b.preReady, end + cfg_.tWR);
  readReady_ = std::max(readReady_, end + cfg_.tCDLR);
  columnIssued(bank, cycle);
  busFree_ = end;
  busCarriesRead_ = false;
  ++counters_.writes;
  return end;
}

// ---- refresh -----------------------------------------------------------------------------------

uint64_t DramChannel::refresh(uint64_t due) {
  // Close every open bank, each as soon as it may be precharged (one command per cycle).
  while (openBanks_ > 0) {
    uint32_t first = 0;
    uint64_t firstReady = kNever;
    for (uint32_t i = 0; i < banks(); ++i) {
      if (banks_[i].open && banks_[i].preReady < firstReady) {
        first = i;
        firstReady = banks_[i].preReady;
      }
    }
    precharge(first, std::max(due, earliestPrecharge(first)));
  }
  uint64_t at = std::max(due, cmdReady_);
  for (const Bank& b : banks_) at = std::max(at, b.actReady);
  for (Bank& b : banks_) b.actReady = at + cfg_.tRFC;
  cmdReady_ = at + 1;
  ++counters_.refreshes;
  return at;
}

bool DramChannel::quiescentAt(uint64_t cycle) const {
  if (openBanks_ > 0 || cmdReady_ > cycle) return false;
  for (const Bank& b : banks_)
    if (b.actReady > cycle) return false;
  return true;
}

uint64_t DramChannel::refreshUntil(uint64_t due, uint64_t until) {
  if (cfg_.tREFI == 0) throw InternalError("DRAM: refresh requested with tREFI = 0");
  while (due <= until) {
    if (quiescentAt(due)) {
      // Nothing pending: every refresh before the last one due by `until` starts on time and
      // ends before the next is due, so only the last one leaves a trace in the timing.
      const uint64_t skipped = (until - due) / cfg_.tREFI;
      counters_.refreshes += skipped;
      due += skipped * cfg_.tREFI;
    }
    refresh(due);
    due += cfg_.tREFI;
  }
  return due;
}

}  // namespace gpusc::dram
