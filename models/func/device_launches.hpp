// Kernels that launch kernels (dynamic parallelism): the device runtime's calls a kernel makes
// (`<<<>>>` in device code compiles to __cudaCDP2GetParameterBufferV2 and
// __cudaCDP2LaunchDeviceV2), answered by whoever runs the launch (gpu::Device). The functional
// engine's handlers (handlers_launch.cpp) read the calls' arguments and write their results; the
// runtime checks each launch as it is made and runs the launches after the grid that made them.
#pragma once

#include <cstdint>

#include "func/state.hpp"

namespace gpusc::func {

// CUDA's error codes the device runtime returns (values of cudaError_t; the host runtime's,
// cudart/cuda_errors.hpp, are a layer above).
enum DeviceRuntimeError : uint32_t {
  kDeviceRuntimeSuccess = 0,
  kDeviceRuntimeInvalidValue = 1,
  kDeviceRuntimeMemoryAllocation = 2,
  kDeviceRuntimeInvalidConfiguration = 9,
  kDeviceRuntimeMaxDepthExceeded = 65,
  kDeviceRuntimePendingCountExceeded = 69,
  kDeviceRuntimeInvalidDeviceFunction = 98,
  kDeviceRuntimeOutOfResources = 701,
};

// Stream handles the device runtime gives special meaning (cuda_device_runtime_api.h).
constexpr uint64_t kTailLaunchStream = 0x3;
constexpr uint64_t kFireAndForgetStream = 0x4;

class DeviceLaunches {
 public:
  virtual ~DeviceLaunches() = default;
  // A parameter buffer for a launch of the kernel at code address `function` with this shape
  // (cudaGetParameterBufferV2): its device address, or 0 with `error` set when the launch could
  // not be made (not a kernel, a refused configuration, the nesting depth or the pending count).
  virtual uint64_t parameterBuffer(uint64_t function, const Dim3& grid, const Dim3& block,
                                   uint32_t sharedBytes, uint32_t& error) = 0;
  // A parameter buffer of `bytes` (cudaGetParameterBuffer; the launch names its kernel later).
  virtual uint64_t parameterBuffer(uint64_t bytes, uint32_t& error) = 0;
  // Launches what `buffer` (from parameterBuffer with a kernel) holds the arguments of, into
  // `stream`. Returns the error code.
  virtual uint32_t launch(uint64_t buffer, uint64_t stream) = 0;
  // Launches `function` with the arguments in `buffer` (from either parameterBuffer).
  virtual uint32_t launch(uint64_t function, uint64_t buffer, const Dim3& grid, const Dim3& block,
                          uint32_t sharedBytes, uint64_t stream) = 0;
  // A new stream handle (cudaStreamCreateWithFlags in device code).
  virtual uint64_t createStream() = 0;
  // The last error a thread's device-runtime calls returned (cudaGetLastError reads it and,
  // with `reset`, clears it; cudaPeekAtLastError does not).
  virtual uint32_t lastError(uint64_t thread, bool reset) = 0;
  virtual void setLastError(uint64_t thread, uint32_t error) = 0;
};

}  // namespace gpusc::func
