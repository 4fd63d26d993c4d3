// Adapts a verilated class (Verilator's --cc output, V<block>) to a block's pin interface: each
// owns its VerilatedContext, so instances are independent (no state shared between SMs or
// between simulations). Included only by the files that instantiate verilated blocks.
//
// Waveforms (RtlWaves, gpusc run --vcd): a traced block dumps its signals with Verilator's VCD
// writer at the platform's time of each clock: the clock of platform cycle c at c x period (the
// clock low, this cycle's inputs applied) and half a period later (the rising edge's results).
// Transactors skip clocks in which no register can change; before the first clock after such a
// stretch the block's pulse inputs (an access, a push, a request) are dumped idle at the first
// skipped cycle, so the waves show the stretch as it was: registers holding, no pulses, the
// clock stopped.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "rtl/rtl_waves.hpp"
#include "verilated.h"
#include "verilated_vcd_c.h"

namespace gpusc::rtl {

// Verilator's VCD output written into an RtlWaves stream.
class WaveStreamFile : public VerilatedVcdFile {
 public:
  explicit WaveStreamFile(RtlWaves::Stream& s) : stream_(s) {}
  bool open(const std::string&) override { return true; }
  void close() override {}
  ssize_t write(const char* bufp, ssize_t len) override {
    stream_.vcd.append(bufp, size_t(len));
    return len;
  }

 private:
  RtlWaves::Stream& stream_;
};

template <class V>
class VerilatedModel {
 public:
  VerilatedModel() : context_(std::make_unique<VerilatedContext>()) {
    top_ = std::make_unique<V>(context_.get(), "top");
  }
  ~VerilatedModel() {
    if (vcd_) {
      stream_->flush();  // the idle pulses after the last clock, and what Verilator buffers
      stream_->flush = nullptr;
      vcd_->close();
    }
    if (top_) top_->final();
  }
  // Not movable: a traced model's stream refers to it.
  VerilatedModel(VerilatedModel&&) = delete;
  VerilatedModel& operator=(VerilatedModel&&) = delete;

  V& top() { return *top_; }
  const V& top() const { return *top_; }

  // From now on every clock is dumped into a new stream of `waves` named `scope`, clocks of
  // platform cycle c at c x `periodFs` femtoseconds. `waves` must outlive this model.
  void trace(RtlWaves& waves, const std::string& scope, uint64_t periodFs) {
    if (vcd_) return;
    stream_ = &waves.addStream(scope);
    file_ = std::make_unique<WaveStreamFile>(*stream_);
    context_->traceEverOn(true);
    context_->timeprecision(-15);
    vcd_ = std::make_unique<VerilatedVcdC>(file_.get());
    top_->trace(vcd_.get(), 99);
    vcd_->open(scope.c_str());
    // At the end of the trace the pulse inputs go idle after the last clock, as after any
    // clock that no other follows at once.
    stream_->flush = [this] {
      if (dumped_ && idle_) {
        idle_(*top_);
        top_->clk = 0;
        top_->eval();
        dump((cycle_ + 1) * periodFs_);
      }
      vcd_->flush();
    };
    periodFs_ = periodFs;
  }

  // Tracing: the platform cycle of the next clock, called before its inputs are applied; after
  // skipped cycles, `idle(top)` sets the pulse inputs idle and that is dumped at the first
  // skipped cycle.
  template <class Idle>
  void startCycle(uint64_t cycle, Idle&& idle) {
    if (!vcd_) return;
    if (!idle_) idle_ = idle;
    if (dumped_ && cycle > cycle_ + 1) {
      idle(*top_);
      top_->clk = 0;
      top_->eval();
      dump((cycle_ + 1) * periodFs_);
    }
    cycle_ = cycle;
  }

  // One rising edge: the inputs are applied with the clock low, then the clock rises.
  void clock() {
    clock([] {});
  }
  // The same, with `beforeEdge` called once the inputs have settled with the clock low (to read
  // combinational outputs that answer this cycle's inputs).
  template <class F>
  void clock(F&& beforeEdge) {
    top_->clk = 0;
    top_->eval();
    beforeEdge();
    if (vcd_) dump(cycle_ * periodFs_);
    top_->clk = 1;
    top_->eval();
    if (vcd_) {
      dump(cycle_ * periodFs_ + periodFs_ / 2);
      dumped_ = true;
    }
    context_->timeInc(1);
  }

 private:
  // Verilator's dump times must increase: a clock at a time already dumped (a reset in the
  // cycle of the last clock) shows in the next dump.
  void dump(uint64_t fs) {
    if (anyDump_ && fs <= lastFs_) return;
    vcd_->dump(fs);
    lastFs_ = fs;
    anyDump_ = true;
  }

  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<V> top_;
  // Tracing (null: off).
  RtlWaves::Stream* stream_ = nullptr;
  std::unique_ptr<WaveStreamFile> file_;
  std::unique_ptr<VerilatedVcdC> vcd_;
  std::function<void(V&)> idle_;  // sets the pulse inputs idle (from startCycle)
  uint64_t periodFs_ = 0, cycle_ = 0, lastFs_ = 0;
  bool dumped_ = false, anyDump_ = false;
};

}  // namespace gpusc::rtl
