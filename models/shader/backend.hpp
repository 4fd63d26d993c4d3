// The back end after code motion: register allocation onto the core's temporaries (spilling to
// free output-buffer entries: the core has no memory to spill to) and VLIW bundling.
#pragma once

#include "shader/isa.hpp"

namespace gpusc::shader {

struct AllocationResult {
  int requirement = 0;  // the highest register pressure (the paper's "register requirement")
  int spilled = 0;      // virtual temporaries placed in the output buffer
};

// Graph colouring of the virtual temporaries with `temporaries` colours, the rest onto output
// entries no output binding or instruction uses; copies that end up from a register to itself
// are removed. InputError when even those do not suffice.
AllocationResult allocateRegisters(Program& p, int temporaries, int outputEntries);

// Pairs adjacent instructions of a block (and a block's branch word with its last instruction)
// when neither reads or writes what the other writes and they need different units for
// texture and special functions. Keeps the order, so code motion's clusters stay as they are.
void bundle(Program& p);

}  // namespace gpusc::shader
