// The banked register file of an SM. A register's bank depends on its number and on the warp
// slot (as in GPGPU-Sim), so the same register of neighbouring warps lands in different banks.
// Each bank delivers one operand per cycle; the DispatchUnit's operand collectors arbitrate.
#pragma once

#include <cstdint>

#include <systemc>

namespace gpusc::sm {

class RegisterFile : public sc_core::sc_module {
 public:
  RegisterFile(const sc_core::sc_module_name& name, uint32_t banks)
      : sc_core::sc_module(name), banks_(banks) {}
  uint32_t banks() const { return banks_; }
  uint32_t bank(uint32_t reg, uint32_t warp) const { return (reg + warp) % banks_; }

 private:
  uint32_t banks_;
};

}  // namespace gpusc::sm
