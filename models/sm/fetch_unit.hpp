// Instruction fetch: each cycle one warp whose instruction buffer is empty (one per processing
// block, with sm.sub_cores; Sm::fetch picks them) gets the next sm.ibuffer_entries instructions
// from the per-SM instruction cache (2 KB on GTX480). A miss
// sends the line to the memory system; every warp waiting for that line is served when it
// returns. Instructions are sm.instruction_bytes long and live at a per-kernel code address.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <systemc>

#include "cache/tag_array.hpp"
#include "common/platform_config.hpp"
#include "sm/pipeline.hpp"

namespace gpusc::sm {

class FetchUnit : public sc_core::sc_module {
 public:
  // `replacement`: the instruction cache's replacement policies (a testbench's, or the built-ins).
  FetchUnit(const sc_core::sc_module_name& name, const SmConfig& cfg,
            const cache::ReplacementRegistry& replacement = cache::replacementPolicies());

  static constexpr uint64_t kCodeBase = 0x6f00'0000'0000ull;

  void setCodeBase(uint64_t base) { codeBase_ = base; }
  uint64_t lineOf(uint32_t pc) const {
    return icache_.lineAddress(codeBase_ + uint64_t(pc) * instBytes_);
  }

  enum class Result { Hit, Miss, Pending };
  // Looks up the line holding `pc` for warp `warp`; on a hit fills the warp's buffer.
  Result fetch(uint32_t warpSlot, WarpSlot& w, uint32_t pc, Cycle now, SmActivity& act);
  // The line arrived: fills it and the buffers of the warps waiting for it.
  void fill(uint64_t lineAddr, Cycle now, std::vector<WarpSlot>& warps);
  bool hasPendingMisses() const { return !pending_.empty(); }
  // The miss of `lineAddr` could not be sent: its waiting warps will fetch again.
  void cancel(uint64_t lineAddr, std::vector<WarpSlot>& warps);
  void reset();

  uint32_t nextWarp = 0;  // round-robin position

 private:
  void fillBuffer(WarpSlot& w, uint32_t pc, Cycle ready) const;

  const SmConfig& cfg_;
  cache::TagArray icache_;
  uint32_t instBytes_;
  uint64_t codeBase_ = kCodeBase;
  std::vector<std::pair<uint64_t, std::vector<uint32_t>>> pending_;  // line -> waiting warps
};

}  // namespace gpusc::sm
