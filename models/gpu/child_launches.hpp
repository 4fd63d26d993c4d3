// Launches a kernel makes from device code (dynamic parallelism, CUDA's CDP2 model), for one
// grid: the device runtime's answers while the grid runs (func::DeviceLaunches), and the launches
// it made, which the Device runs once the grid has finished.
//
// The order they run in is one a GPU may choose: a grid's children start after the grid, so
// every write of the grid is visible to them, one after another in the order the grid made them
// (each with its own children before the next: a launch completes with its children, so the next
// launch into the same stream waits for them), then the launches into the tail-launch stream.
// A GPU may instead run children beside their parent and beside each other; CUDA leaves that
// order to it, and a kernel may not wait for its children (CDP2 has no cudaDeviceSynchronize in
// device code), so results are the same and only timing differs (docs/cuda-programs.md).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>

#include "func/device_launches.hpp"

namespace gpusc {

class Device;
class Module;
struct Kernel;

// CUDA's limits (the programming guide, "Dynamic Parallelism"): nesting depth, and launches made
// and not yet started (cudaLimitDevRuntimePendingLaunchCount, 2,048 unless set).
constexpr uint32_t kMaxLaunchDepth = 24;
constexpr uint64_t kDefaultPendingLaunches = 2048;

struct ChildLaunch {
  const Kernel* kernel = nullptr;
  func::Dim3 grid, block;
  uint32_t sharedBytes = 0;
  uint64_t buffer = 0;  // device memory holding its arguments (released when it starts)
  uint64_t bufferBytes = 0;
};

class ChildLaunches final : public func::DeviceLaunches {
 public:
  // For a grid of `module` at nesting depth `depth` (0: launched by the host).
  ChildLaunches(Device& device, Module& module, uint32_t depth);
  ~ChildLaunches() override;  // releases what was made and never run
  ChildLaunches(const ChildLaunches&) = delete;
  ChildLaunches& operator=(const ChildLaunches&) = delete;

  uint64_t parameterBuffer(uint64_t function, const func::Dim3& grid, const func::Dim3& block,
                           uint32_t sharedBytes, uint32_t& error) override;
  uint64_t parameterBuffer(uint64_t bytes, uint32_t& error) override;
  uint32_t launch(uint64_t buffer, uint64_t stream) override;
  uint32_t launch(uint64_t function, uint64_t buffer, const func::Dim3& grid,
                  const func::Dim3& block, uint32_t sharedBytes, uint64_t stream) override;
  uint64_t createStream() override { return nextStream_++; }
  uint32_t lastError(uint64_t thread, bool reset) override;
  void setLastError(uint64_t thread, uint32_t error) override { lastError_[thread] = error; }

  // The next launch to run (in the order above), taken out; false when none is left.
  bool next(ChildLaunch& out);
  uint32_t depth() const { return depth_; }

 private:
  // The kernel at code address `function` with this shape, or an error code.
  uint32_t check(uint64_t function, const func::Dim3& grid, const func::Dim3& block,
                 uint32_t sharedBytes, const Kernel*& kernel);
  uint64_t allocate(uint64_t bytes, uint32_t& error);
  uint32_t enqueue(ChildLaunch c, uint64_t stream);

  Device& dev_;
  Module& module_;
  uint32_t depth_;
  std::map<uint64_t, ChildLaunch> prepared_;  // buffers handed out, not yet launched
  std::deque<ChildLaunch> launched_, tail_;
  std::unordered_map<uint64_t, uint32_t> lastError_;  // per thread (CTA x 1024 + thread)
  uint64_t nextStream_ = 0x100;                       // above the special handles
};

}  // namespace gpusc
