#include "gpu/child_launches.hpp"

#include "common/error.hpp"
#include "func/program.hpp"
#include "gpu/device.hpp"

namespace gpusc {

ChildLaunches::ChildLaunches(Device& device, Module& module, uint32_t depth)
    : dev_(device), module_(module), depth_(depth) {}

ChildLaunches::~ChildLaunches() {
  // Buffers a grid asked for and never launched, and launches that never ran (the run stopped,
  // or a launch before them faulted).
  for (const auto& [buffer, c] : prepared_) {
    dev_.gmem_.release(buffer);
    --dev_.pendingChildLaunches_;
  }
  for (const auto* q : {&launched_, &tail_})
    for (const ChildLaunch& c : *q) {
      dev_.gmem_.release(c.buffer);
      --dev_.pendingChildLaunches_;
    }
}

uint32_t ChildLaunches::check(uint64_t function, const func::Dim3& grid, const func::Dim3& block,
                              uint32_t sharedBytes, const Kernel*& kernel) {
  const auto& functions = module_.ast().functions;
  const uint64_t index = (function - func::kCodeWindow) / func::kFunctionStride;
  if (function < func::kCodeWindow || (function - func::kCodeWindow) % func::kFunctionStride != 0 ||
      index >= functions.size() || !functions[index]->isEntry)
    return func::kDeviceRuntimeInvalidDeviceFunction;
  if (depth_ + 1 > kMaxLaunchDepth) return func::kDeviceRuntimeMaxDepthExceeded;
  try {
    kernel = &module_.kernel(functions[index]->name);
    dev_.validateLaunch(*kernel, grid, block, sharedBytes);
  } catch (const LaunchRefused& e) {
    return e.reason() == LaunchRefused::Reason::Resources
               ? func::kDeviceRuntimeOutOfResources
               : func::kDeviceRuntimeInvalidConfiguration;
  } catch (const InputError&) {  // a kernel the engine cannot decode (its address taken in data)
    return func::kDeviceRuntimeInvalidDeviceFunction;
  }
  return func::kDeviceRuntimeSuccess;
}

uint64_t ChildLaunches::allocate(uint64_t bytes, uint32_t& error) {
  // A buffer is a pending launch from the time it is handed out (the device runtime's pool of
  // launches holds their arguments) until its launch starts or the grid ends without launching it.
  if (dev_.pendingChildLaunches_ >= dev_.pendingLaunchLimit_) {
    error = func::kDeviceRuntimePendingCountExceeded;
    return 0;
  }
  try {
    const uint64_t buffer = dev_.gmem_.allocate(bytes == 0 ? 1 : bytes);
    ++dev_.pendingChildLaunches_;
    return buffer;
  } catch (const InputError&) {  // device memory full
    error = func::kDeviceRuntimeMemoryAllocation;
    return 0;
  }
}

uint64_t ChildLaunches::parameterBuffer(uint64_t function, const func::Dim3& grid,
                                        const func::Dim3& block, uint32_t sharedBytes,
                                        uint32_t& error) {
  ChildLaunch c;
  error = check(function, grid, block, sharedBytes, c.kernel);
  if (error != func::kDeviceRuntimeSuccess) return 0;
  c.grid = grid;
  c.block = block;
  c.sharedBytes = sharedBytes;
  c.bufferBytes = c.kernel->program->paramBytes;
  c.buffer = allocate(c.bufferBytes, error);
  if (c.buffer == 0) return 0;
  prepared_[c.buffer] = c;
  return c.buffer;
}

uint64_t ChildLaunches::parameterBuffer(uint64_t bytes, uint32_t& error) {
  ChildLaunch c;
  c.bufferBytes = bytes;
  c.buffer = allocate(bytes, error);
  if (c.buffer == 0) return 0;
  prepared_[c.buffer] = c;  // its kernel comes with the launch
  return c.buffer;
}

uint32_t ChildLaunches::enqueue(ChildLaunch c, uint64_t stream) {
  (stream == func::kTailLaunchStream ? tail_ : launched_).push_back(c);
  return func::kDeviceRuntimeSuccess;
}

uint32_t ChildLaunches::launch(uint64_t buffer, uint64_t stream) {
  const auto it = prepared_.find(buffer);
  if (it == prepared_.end() || it->second.kernel == nullptr)
    return func::kDeviceRuntimeInvalidValue;
  const ChildLaunch c = it->second;
  prepared_.erase(it);
  return enqueue(c, stream);
}

uint32_t ChildLaunches::launch(uint64_t function, uint64_t buffer, const func::Dim3& grid,
                               const func::Dim3& block, uint32_t sharedBytes, uint64_t stream) {
  const auto it = prepared_.find(buffer);
  if (it == prepared_.end()) return func::kDeviceRuntimeInvalidValue;
  ChildLaunch c = it->second;
  const uint32_t error = check(function, grid, block, sharedBytes, c.kernel);
  if (error != func::kDeviceRuntimeSuccess) return error;  // the buffer stays the grid's
  if (c.bufferBytes < c.kernel->program->paramBytes) return func::kDeviceRuntimeInvalidValue;
  c.grid = grid;
  c.block = block;
  c.sharedBytes = sharedBytes;
  prepared_.erase(it);
  return enqueue(c, stream);
}

uint32_t ChildLaunches::lastError(uint64_t thread, bool reset) {
  const auto it = lastError_.find(thread);
  if (it == lastError_.end()) return func::kDeviceRuntimeSuccess;
  const uint32_t e = it->second;
  if (reset) lastError_.erase(it);
  return e;
}

bool ChildLaunches::next(ChildLaunch& out) {
  std::deque<ChildLaunch>& q = launched_.empty() ? tail_ : launched_;
  if (q.empty()) return false;
  out = q.front();
  q.pop_front();
  --dev_.pendingChildLaunches_;
  return true;
}

}  // namespace gpusc
