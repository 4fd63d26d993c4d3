// The banked register file of an SM. A register's bank depends on its number and on the warp
// slot (as in GPGPU-Sim), so the same register of neighbouring warps lands in different banks.
// Each bank delivers sm.register_bank_ports operands per cycle (1 unless set); the
// DispatchUnit's operand collectors arbitrate.
// With sm.sub_cores blocks the banks are divided among them: a warp's registers live in its own
// block's banks (bank = block x banks per block + (reg + warp) mod banks per block).
#pragma once

#include <cstdint>

#include <systemc>

namespace gpusc::sm {

class RegisterFile : public sc_core::sc_module {
 public:
  RegisterFile(const sc_core::sc_module_name& name, uint32_t banks, uint32_t blocks = 1)
      : sc_core::sc_module(name), banks_(banks), perBlock_(banks / blocks) {}
  uint32_t banks() const { return banks_; }
  uint32_t bank(uint32_t reg, uint32_t warp, uint32_t block = 0) const {
    return block * perBlock_ + (reg + warp) % perBlock_;
  }

 private:
  uint32_t banks_;
  uint32_t perBlock_;
};

}  // namespace gpusc::sm
