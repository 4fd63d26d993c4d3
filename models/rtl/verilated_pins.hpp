// Adapts a verilated class (Verilator's --cc output, V<block>) to a block's pin interface: each
// owns its VerilatedContext, so instances are independent (no state shared between SMs or
// between simulations). Included only by the files that instantiate verilated blocks.
#pragma once

#include <memory>
#include <string>

#include "verilated.h"

namespace gpusc::rtl {

template <class V>
class VerilatedModel {
 public:
  VerilatedModel() : context_(std::make_unique<VerilatedContext>()) {
    top_ = std::make_unique<V>(context_.get(), "top");
  }
  ~VerilatedModel() {
    if (top_) top_->final();
  }
  VerilatedModel(VerilatedModel&&) noexcept = default;
  VerilatedModel& operator=(VerilatedModel&&) noexcept = default;

  V& top() { return *top_; }
  // One rising edge: the inputs are applied with the clock low, then the clock rises.
  void clock() {
    top_->clk = 0;
    top_->eval();
    top_->clk = 1;
    top_->eval();
    context_->timeInc(1);
  }

 private:
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<V> top_;
};

}  // namespace gpusc::rtl
