#include "sm/fetch_unit.hpp"

#include <algorithm>

namespace gpusc::sm {

FetchUnit::FetchUnit(const sc_core::sc_module_name& name, const SmConfig& cfg,
                     const cache::ReplacementRegistry& replacement)
    : sc_core::sc_module(name),
      cfg_(cfg),
      icache_(cfg.icache, 0, replacement),
      instBytes_(cfg.instruction_bytes) {}

void FetchUnit::reset() {
  icache_.invalidateAll();
  pending_.clear();
  nextWarp = 0;
}

void FetchUnit::fillBuffer(WarpSlot& w, uint32_t pc, Cycle ready) const {
  const uint32_t perLine = icache_.lineBytes() / instBytes_;
  const uint64_t off = (codeBase_ + uint64_t(pc) * instBytes_) % icache_.lineBytes() / instBytes_;
  const uint32_t lineEnd = pc + (perLine - static_cast<uint32_t>(off));
  w.ibBegin = pc;
  w.ibEnd = std::min(pc + cfg_.ibuffer_entries, lineEnd);
  w.ibReady = ready;
  w.fetching = false;
}

FetchUnit::Result FetchUnit::fetch(uint32_t warpSlot, WarpSlot& w, uint32_t pc, Cycle now,
                                   SmActivity& act) {
  const uint64_t line = lineOf(pc);
  act.icacheAccesses += 1;
  if (icache_.access(line) || cfg_.perfect_icache) {
    fillBuffer(w, pc, now + cfg_.icache.hit_latency + cfg_.decode_latency);
    return Result::Hit;
  }
  w.fetching = true;
  for (auto& p : pending_) {
    if (p.first == line) {
      p.second.push_back(warpSlot);
      return Result::Pending;
    }
  }
  pending_.push_back({line, {warpSlot}});
  return Result::Miss;
}

void FetchUnit::cancel(uint64_t lineAddr, std::vector<WarpSlot>& warps) {
  auto it =
      std::find_if(pending_.begin(), pending_.end(), [&](auto& p) { return p.first == lineAddr; });
  if (it == pending_.end()) return;
  for (uint32_t ws : it->second) warps[ws].fetching = false;
  pending_.erase(it);
}

void FetchUnit::fill(uint64_t lineAddr, Cycle now, std::vector<WarpSlot>& warps) {
  icache_.fill(lineAddr);
  auto it =
      std::find_if(pending_.begin(), pending_.end(), [&](auto& p) { return p.first == lineAddr; });
  if (it == pending_.end()) return;
  for (uint32_t ws : it->second) {
    WarpSlot& w = warps[ws];
    if (!w.active || !w.fetching) continue;
    fillBuffer(w, w.pc, now + cfg_.decode_latency);
  }
  pending_.erase(it);
}

}  // namespace gpusc::sm
