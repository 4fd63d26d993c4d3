// The waveforms of the verilated blocks of one run (gpusc run --vcd; docs/rtl-cosim.md
// "Waveforms"). Every traced block instance writes its own stream with Verilator's VCD writer
// (the blocks are verilated with --trace), timed in femtoseconds (the simulation's time resolution)
// from the platform's cycles; closing merges the streams, each under its scope
// (rtl.sm3.droop_predictor, ...), into the model's VCD file (voltage.vcd, written by SystemC) so
// that one file holds both, on one time axis. Free of SystemC and of Verilator's headers.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>

namespace gpusc::rtl {

class RtlWaves {
 public:
  // One traced block instance. `scope`: its dot-separated path under "rtl"; `vcd`: what
  // Verilator wrote so far; `flush` makes Verilator write what it buffers (empty once the block
  // has closed its trace).
  struct Stream {
    std::string scope;
    std::string vcd;
    std::function<void()> flush;
  };

  // A new stream (the reference stays valid as long as this object).
  Stream& addStream(std::string scope);
  size_t streams() const { return streams_.size(); }

  // Adds every stream to the VCD file `path` (written and closed by SystemC):
  // their variables under scope "rtl", their changes interleaved with the file's in time order,
  // only those in [fromFs, untilFs) (untilFs 0: no end; the values before fromFs appear at
  // fromFs). The file is rewritten in place. InputError if it cannot be read or written.
  void mergeInto(const std::string& path, uint64_t fromFs = 0, uint64_t untilFs = 0);

 private:
  std::deque<Stream> streams_;
};

}  // namespace gpusc::rtl
