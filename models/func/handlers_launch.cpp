// The device runtime's calls for launches from device code (dynamic parallelism): each reads its
// arguments from the call-parameter area, asks LaunchState::deviceLaunches, and writes its result
// there. The launches themselves run after the grid that makes them (gpu::Device). And a graph's
// conditional value a kernel sets (cudaGraphSetConditional).
#include <cstring>

#include "func/device_launches.hpp"
#include "func/handlers.hpp"
#include "func/lanes.hpp"
#include "func/mem_access.hpp"

namespace gpusc::func::handlers {

namespace {

Dim3 launchDim(ExecCtx& c, uint32_t offset, int l) {
  return {callParam<uint32_t>(c, offset, l), callParam<uint32_t>(c, offset + 4, l),
          callParam<uint32_t>(c, offset + 8, l)};
}

template <class T>
void launchResult(ExecCtx& c, const Inst& in, int l, T v) {
  if (in.aux != kNoPc) setCallParam<T>(c, in.aux, l, v);
}

// Writes `v` where the thread's pointer argument points (a cudaStream_t or an int of the caller).
template <class T>
bool writeThrough(ExecCtx& c, uint64_t pointer, int l, T v) {
  if (pointer == 0) return false;
  std::memcpy(resolve(c, MemSpace::Generic, pointer, sizeof(T), l, true).ptr, &v, sizeof(T));
  return true;
}

template <DeviceCall Call>
void deviceRuntimeHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  DeviceLaunches* rt = c.L->deviceLaunches;
  if (rt == nullptr && mask != 0)
    c.fault(__builtin_ctz(mask), "a device-side launch call outside a launch that can make them");
  forEachLane(mask, [&](int l) {
    const uint64_t thread =
        c.cta->linearId * 1024 + uint64_t(c.w->idInCta) * kWarpSize + uint64_t(l);
    uint32_t error = kDeviceRuntimeSuccess;
    if constexpr (Call == DeviceCall::GetParameterBufferV2) {
      const uint64_t buffer = rt->parameterBuffer(
          callParam<uint64_t>(c, in.src[0], l), launchDim(c, in.src[1], l),
          launchDim(c, in.src[2], l), callParam<uint32_t>(c, in.src[3], l), error);
      launchResult<uint64_t>(c, in, l, buffer);
    } else if constexpr (Call == DeviceCall::GetParameterBuffer) {
      const uint64_t buffer = rt->parameterBuffer(callParam<uint64_t>(c, in.src[1], l), error);
      launchResult<uint64_t>(c, in, l, buffer);
    } else if constexpr (Call == DeviceCall::LaunchDeviceV2) {
      error =
          rt->launch(callParam<uint64_t>(c, in.src[0], l), callParam<uint64_t>(c, in.src[1], l));
      launchResult<uint32_t>(c, in, l, error);
    } else if constexpr (Call == DeviceCall::LaunchDevice) {
      error =
          rt->launch(callParam<uint64_t>(c, in.src[0], l), callParam<uint64_t>(c, in.src[1], l),
                     launchDim(c, in.src[2], l), launchDim(c, in.src[3], l),
                     callParam<uint32_t>(c, in.src[4], l), callParam<uint64_t>(c, in.src[5], l));
      launchResult<uint32_t>(c, in, l, error);
    } else if constexpr (Call == DeviceCall::GetLastError || Call == DeviceCall::PeekAtLastError) {
      launchResult<uint32_t>(c, in, l, rt->lastError(thread, Call == DeviceCall::GetLastError));
      return;
    } else if constexpr (Call == DeviceCall::StreamCreateWithFlags) {
      if (!writeThrough<uint64_t>(c, callParam<uint64_t>(c, in.src[0], l), l, rt->createStream()))
        error = kDeviceRuntimeInvalidValue;
      launchResult<uint32_t>(c, in, l, error);
    } else if constexpr (Call == DeviceCall::StreamDestroy) {
      launchResult<uint32_t>(c, in, l, error);  // streams hold nothing to release
    } else {
      static_assert(Call == DeviceCall::GetDevice);
      if (!writeThrough<int32_t>(c, callParam<uint64_t>(c, in.src[0], l), l, 0))
        error = kDeviceRuntimeInvalidValue;
      launchResult<uint32_t>(c, in, l, error);
    }
    if (error != kDeviceRuntimeSuccess) rt->setLastError(thread, error);
  });
}

void setConditionalHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  forEachLane(mask, [&](int l) {
    const auto word = callParam<uint64_t>(c, in.src[0], l);
    const auto value = callParam<uint32_t>(c, in.src[1], l);
    std::memcpy(resolve(c, MemSpace::Global, word, 4, l, true).ptr, &value, 4);
  });
}

}  // namespace

Handler setConditional() { return &setConditionalHandler; }

Handler deviceRuntime(DeviceCall call) {
  switch (call) {
    case DeviceCall::GetParameterBufferV2:
      return &deviceRuntimeHandler<DeviceCall::GetParameterBufferV2>;
    case DeviceCall::GetParameterBuffer:
      return &deviceRuntimeHandler<DeviceCall::GetParameterBuffer>;
    case DeviceCall::LaunchDeviceV2:
      return &deviceRuntimeHandler<DeviceCall::LaunchDeviceV2>;
    case DeviceCall::LaunchDevice:
      return &deviceRuntimeHandler<DeviceCall::LaunchDevice>;
    case DeviceCall::GetLastError:
      return &deviceRuntimeHandler<DeviceCall::GetLastError>;
    case DeviceCall::PeekAtLastError:
      return &deviceRuntimeHandler<DeviceCall::PeekAtLastError>;
    case DeviceCall::StreamCreateWithFlags:
      return &deviceRuntimeHandler<DeviceCall::StreamCreateWithFlags>;
    case DeviceCall::StreamDestroy:
      return &deviceRuntimeHandler<DeviceCall::StreamDestroy>;
    case DeviceCall::GetDevice:
      return &deviceRuntimeHandler<DeviceCall::GetDevice>;
  }
  return nullptr;
}

}  // namespace gpusc::func::handlers
