#include "cudart/server.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::cudart {

namespace {

constexpr uint64_t kMaxMessageBytes = 1ull << 36;  // 64 GiB: no device holds more

using wire::ptr;
using wire::u64;

}  // namespace

namespace {

uint32_t singleToDoubleRatio(const SmConfig& s) {
  // Multiply-add results per SM per core cycle: every SIMD unit runs FP32; FP64 runs on the DP
  // units, or holds every SIMD unit of a block (dp_path simd), or runs on the SFUs.
  const auto perCycle = [&](uint32_t units, uint32_t lanes, uint32_t initiation) {
    return double(units) * s.warp_size / std::max(initiation, s.warpCycles(lanes));
  };
  const double single = perCycle(s.simd_units, s.simd_lanes, s.latency.fp_mad.initiation);
  const uint32_t dpInit = s.latency.dp_mad.initiation;
  const double dp = s.dp_units > 0        ? perCycle(s.dp_units, s.dpLanes(), dpInit)
                    : s.dp_path == "simd" ? perCycle(s.sub_cores, s.simd_lanes, dpInit)
                                          : perCycle(s.sfu_units, s.sfu_lanes, dpInit);
  return uint32_t(std::lround(single / dp));
}

}  // namespace

wire::DeviceFacts deviceFacts(const PlatformConfig& cfg) {
  wire::DeviceFacts f;
  const std::string name = fmt::format("gpusc {}", cfg.name);
  std::strncpy(f.name, name.c_str(), sizeof(f.name) - 1);
  f.globalMemoryBytes = cfg.memory.device_memory_bytes;
  f.sharedMemoryPerSm = cfg.sm.shared_memory_bytes;
  f.sharedMemoryPerBlockOptin = cfg.sm.sharedPerBlock();
  f.sharedReservedPerBlock = cfg.sm.shared_memory_bytes - f.sharedMemoryPerBlockOptin;
  f.sharedMemoryPerBlock = std::min<uint64_t>(f.sharedMemoryPerBlockOptin, 48 * 1024);
  f.registersPerSm = cfg.sm.registers;
  f.registersPerBlock = std::min<uint32_t>(cfg.sm.registers, 64 * 1024);
  f.warpSize = cfg.sm.warp_size;
  f.maxThreadsPerBlock = std::min<uint32_t>(1024, cfg.sm.max_threads);
  f.maxThreadsPerSm = cfg.sm.max_threads;
  f.maxBlocksPerSm = cfg.sm.max_ctas;
  f.sms = cfg.gpu.num_sms;
  f.computeCapability = cfg.gpu.compute_capability;
  f.coreKhz = uint32_t(cfg.gpu.clocks.core_mhz * 1000);
  // As the driver reports it: half the data rate per pin, so that twice the clock times the
  // bus is the peak bandwidth (a GTX480's GDDR5, 4 transfers per 924 MHz command clock, reports
  // 1848 MHz; an RTX 3070's GDDR6, 8 per 1750 MHz, 7000 MHz), on a bus that is the partitions'
  // channels side by side (384 bits on a GTX480).
  f.memoryKhz = uint32_t(cfg.gpu.clocks.dram_mhz * cfg.memory.dram.data_rate * 500);
  f.heapBytes = cfg.memory.device_heap_bytes;
  f.singleToDoubleRatio = singleToDoubleRatio(cfg.sm);
  f.memoryBusBits =
      cfg.memory.partitions * cfg.memory.dram.chips * cfg.memory.dram.bus_width_bytes * 8;
  f.l2Bytes = uint32_t(std::min<uint64_t>(
      0xffffffffu, cfg.l2.slice.enabled ? uint64_t(cfg.memory.partitions) *
                                              cfg.l2.slices_per_partition * cfg.l2.slice.sizeBytes()
                                        : 0));
  return f;
}

ProgramServer::ProgramServer(Device& device, std::string programName, std::ostream& diagnostics)
    : device_(device),
      rt_(device, device.config().gpu.compute_capability, std::move(programName)),
      diag_(diagnostics) {}

std::string ProgramServer::newPrintf() {
  const std::string& all = device_.printfOutput();
  if (all.size() <= printfSent_) return {};
  std::string text = all.substr(printfSent_);
  printfSent_ = all.size();
  return text;
}

void ProgramServer::serve(int sock) {
  std::vector<uint8_t> payload;
  for (;;) {
    wire::RequestHeader h{};
    if (!wire::readAll(sock, &h, sizeof h)) return;  // the program exited
    if (h.bytes > kMaxMessageBytes) {
      protocolError_ = fmt::format("a request of {} bytes", h.bytes);
      return;
    }
    payload.resize(h.bytes);
    if (h.bytes && !wire::readAll(sock, payload.data(), h.bytes)) return;
    wire::Reader in(payload.data(), payload.size());
    wire::ReplyHeader r{};
    std::vector<uint8_t> out;
    int fd = -1;
    try {
      out = handle(h.op, in, &fd);
      if (!in.ok) throw CudaFailure(kErrorInvalidValue, "a request shorter than its operation");
    } catch (const CudaFailure& e) {
      r.code = e.code();
      out.clear();
      fd = -1;
      diag_ << "gpusc: " << e.what() << " (" << errorName(e.code()) << ")\n" << std::flush;
      failures_[errorName(e.code())] += 1;
      // A library that does not load: its message, for the JIT error log the program gave.
      if (h.op == wire::Op::LoadLibrary) out.assign(e.what(), e.what() + std::strlen(e.what()));
    }
    if (h.op == wire::Op::Launch && r.code != kSuccess) {
      // What a failed launch printed still reaches the program (a fault after printf).
      const std::string text = newPrintf();
      out.assign(text.begin(), text.end());
    }
    r.bytes = out.size();
    r.hasFd = fd >= 0;
    if (!wire::sendWithFd(sock, &r, sizeof r, fd) ||
        (!out.empty() && !wire::writeAll(sock, out.data(), out.size())))
      return;
  }
}

std::vector<uint8_t> ProgramServer::handle(wire::Op op, wire::Reader& in, int* fdOut) {
  wire::Buffer out;
  switch (op) {
    case wire::Op::Hello: {
      const auto version = in.get<uint32_t>();
      if (version != wire::kVersion)
        throw CudaFailure(kErrorInitializationError,
                          fmt::format("the program's runtime library speaks version {} of "
                                      "gpusc's protocol, this gpusc version {}: use the library "
                                      "installed with this gpusc",
                                      version, wire::kVersion));
      out.put(deviceFacts(device_.config()));
      out.putString(resultsFolder_);
      break;
    }
    case wire::Op::RegisterFatBinary:
      out.put(u64(rt_.registerFatBinary(in.rest(), in.left())));
      break;
    case wire::Op::RegisterFunction: {
      auto handle = static_cast<void**>(ptr(in.get<uint64_t>()));
      const void* hostFun = ptr(in.get<uint64_t>());
      const std::string name = in.getString();
      rt_.registerFunction(handle, hostFun, name.c_str());
      break;
    }
    case wire::Op::RegisterVar: {
      auto handle = static_cast<void**>(ptr(in.get<uint64_t>()));
      const void* hostVar = ptr(in.get<uint64_t>());
      const auto bytes = in.get<uint64_t>();
      const bool constant = in.get<uint32_t>() != 0;
      const std::string name = in.getString();
      rt_.registerVar(handle, hostVar, name.c_str(), bytes, constant);
      break;
    }
    case wire::Op::RegisterManagedVar: {
      auto handle = static_cast<void**>(ptr(in.get<uint64_t>()));
      const auto address = in.get<uint64_t>();
      const auto bytes = in.get<uint64_t>();
      const std::string name = in.getString();
      rt_.registerManagedVar(handle, address, bytes, name.c_str());
      break;
    }
    case wire::Op::InitModule:
      rt_.initModule(static_cast<void**>(ptr(in.get<uint64_t>())));
      break;
    case wire::Op::LoadLibrary: {
      const bool ptx = in.get<uint32_t>() != 0;
      void** handle = rt_.loadLibrary(in.rest(), in.left(), ptx);
      const std::vector<std::string> kernels = rt_.libraryKernels(handle);
      out.put(u64(handle)).put(uint32_t(kernels.size()));
      for (const std::string& k : kernels) out.putString(k);
      break;
    }
    case wire::Op::LibraryKernel: {
      auto handle = static_cast<void**>(ptr(in.get<uint64_t>()));
      const void* kernel = ptr(in.get<uint64_t>());
      rt_.libraryKernel(handle, kernel, in.getString());
      break;
    }
    case wire::Op::LibraryGlobal: {
      auto handle = static_cast<void**>(ptr(in.get<uint64_t>()));
      const auto [address, bytes] = rt_.libraryGlobal(handle, in.getString());
      out.put(uint64_t(address)).put(bytes);
      break;
    }
    case wire::Op::UnregisterFatBinary:
      rt_.unregisterFatBinary(static_cast<void**>(ptr(in.get<uint64_t>())));
      break;
    case wire::Op::KernelInfo: {
      const void* hostFun = ptr(in.get<uint64_t>());
      const Kernel& k = rt_.kernel(hostFun);
      const func::Program& p = *k.program;
      const PlatformConfig& cfg = device_.config();
      wire::FunctionFacts f;
      f.staticSharedBytes = p.dynamicSharedOffset;
      f.constBytes = k.module ? k.module->constBank().size() : 0;
      f.localBytesPerThread = p.localBytesPerThread;
      f.regsPerThread = p.regsPerThread;
      // The most threads a block of this kernel can have: the device's limit, the kernel's
      // __launch_bounds__ (.maxntid), and the warps whose registers fit one SM (as the launch
      // counts them: per warp, rounded to the allocation granularity, per register partition).
      uint32_t maxThreads = std::min<uint32_t>(1024, cfg.sm.max_threads);
      if (const uint64_t most = p.maxThreadsByDirective(); most > 0)
        maxThreads = static_cast<uint32_t>(std::min<uint64_t>(maxThreads, most));
      if (p.regsPerThread > 0) {
        const sm::CtaFootprint one = device_.footprint(k, {cfg.sm.warp_size, 1, 1}, 0);
        const uint32_t warps = sm::warpsByRegisters(cfg.sm, one.registersPerWarp);
        maxThreads = std::min(maxThreads, warps * cfg.sm.warp_size);
      }
      f.maxThreadsPerBlock = maxThreads;
      f.ptxVersion = rt_.ptxArch(hostFun);
      f.params = uint32_t(p.params.size());
      out.put(f);
      for (const auto& param : p.params) out.put(uint32_t(param.size));
      break;
    }
    case wire::Op::Launch: {
      const auto h = in.get<wire::LaunchHeader>();
      if (!in.ok) break;
      const void* hostFun = ptr(h.hostFun);
      if (stopped_)
        throw CudaFailure(kErrorLaunchTimeout,
                          fmt::format("launch refused: the run stopped ({})", stopped_->what()));
      const Kernel& k = rt_.kernel(hostFun);
      std::vector<void*> args;
      const uint8_t* at = in.rest();
      size_t left = in.left();
      for (const auto& param : k.program->params) {
        if (left < param.size)
          throw CudaFailure(kErrorInvalidValue,
                            fmt::format("launch of {}: arguments for {} bytes of parameters, "
                                        "{} sent",
                                        k.name, param.size, left));
        args.push_back(const_cast<uint8_t*>(at));
        at += param.size;
        left -= param.size;
      }
      try {
        rt_.launch(hostFun, {h.grid[0], h.grid[1], h.grid[2]}, {h.block[0], h.block[1], h.block[2]},
                   args.data(), h.sharedBytes, ptr(h.stream), h.cooperative != 0);
      } catch (const RunStopped& e) {
        stopped_ = e;
        throw CudaFailure(kErrorLaunchTimeout, e.what());
      } catch (const CudaFailure& e) {
        if (isStickyError(e.code())) faults_.push_back(e.what());
        throw;
      }
      const std::string text = newPrintf();
      out.putBytes(text.data(), text.size());
      break;
    }
    case wire::Op::Malloc:
      out.put(u64(rt_.malloc(in.get<uint64_t>())));
      break;
    case wire::Op::MallocShared: {
      const auto bytes = in.get<uint64_t>();
      const bool managed = in.get<uint32_t>() != 0;
      const void* p = rt_.mallocShared(bytes, managed);
      out.put(u64(p));
      out.put(device_.memory().sharedSpan(u64(p)));
      *fdOut = device_.memory().sharedFile(u64(p));
      break;
    }
    case wire::Op::Free:
      rt_.free(ptr(in.get<uint64_t>()));
      break;
    case wire::Op::FreeHost:
      rt_.freeHost(ptr(in.get<uint64_t>()));
      break;
    case wire::Op::CopyToDevice: {
      void* dst = ptr(in.get<uint64_t>());
      rt_.memcpy(dst, in.rest(), in.left(), kHostToDevice);
      break;
    }
    case wire::Op::CopyFromDevice: {
      const void* src = ptr(in.get<uint64_t>());
      const auto bytes = in.get<uint64_t>();
      if (bytes > kMaxMessageBytes)
        throw CudaFailure(kErrorInvalidValue, fmt::format("a copy of {} bytes", bytes));
      out.bytes.resize(bytes);
      rt_.memcpy(out.bytes.data(), src, bytes, kDeviceToHost);
      break;
    }
    case wire::Op::CopyDeviceToDevice: {
      void* dst = ptr(in.get<uint64_t>());
      const void* src = ptr(in.get<uint64_t>());
      rt_.memcpy(dst, src, in.get<uint64_t>(), kDeviceToDevice);
      break;
    }
    case wire::Op::Memset: {
      void* dst = ptr(in.get<uint64_t>());
      const auto value = in.get<uint32_t>();
      rt_.memset(dst, int(value), in.get<uint64_t>());
      break;
    }
    case wire::Op::CopyToSymbol: {
      const void* symbol = ptr(in.get<uint64_t>());
      const auto offset = in.get<uint64_t>();
      const auto bytes = in.get<uint64_t>();
      const auto deviceSrc = in.get<uint64_t>();
      if (deviceSrc) {
        rt_.memcpyToSymbol(symbol, ptr(deviceSrc), bytes, offset, kDeviceToDevice);
      } else {
        if (in.left() < bytes) throw CudaFailure(kErrorInvalidValue, "cudaMemcpyToSymbol: short");
        rt_.memcpyToSymbol(symbol, in.rest(), bytes, offset, kHostToDevice);
      }
      break;
    }
    case wire::Op::CopyFromSymbol: {
      const void* symbol = ptr(in.get<uint64_t>());
      const auto offset = in.get<uint64_t>();
      const auto bytes = in.get<uint64_t>();
      const auto deviceDst = in.get<uint64_t>();
      if (deviceDst) {
        rt_.memcpyFromSymbol(ptr(deviceDst), symbol, bytes, offset, kDeviceToDevice);
      } else {
        if (bytes > kMaxMessageBytes)
          throw CudaFailure(kErrorInvalidValue, fmt::format("a copy of {} bytes", bytes));
        out.bytes.resize(bytes);
        rt_.memcpyFromSymbol(out.bytes.data(), symbol, bytes, offset, kDeviceToHost);
      }
      break;
    }
    case wire::Op::SymbolAddress: {
      const void* symbol = ptr(in.get<uint64_t>());
      out.put(u64(rt_.symbolAddress(symbol)));
      out.put(uint64_t(rt_.symbolSize(symbol)));
      break;
    }
    case wire::Op::StreamCreate:
      out.put(u64(rt_.createStream()));
      break;
    case wire::Op::StreamDestroy:
      rt_.destroyStream(ptr(in.get<uint64_t>()));
      break;
    case wire::Op::StreamCheck:
      rt_.checkStream(ptr(in.get<uint64_t>()));
      break;
    case wire::Op::EventCreate:
      out.put(u64(rt_.createEvent()));
      break;
    case wire::Op::EventDestroy:
      rt_.destroyEvent(ptr(in.get<uint64_t>()));
      break;
    case wire::Op::EventCheck:
      rt_.checkEvent(ptr(in.get<uint64_t>()));
      break;
    case wire::Op::EventRecord: {
      void* event = ptr(in.get<uint64_t>());
      rt_.recordEvent(event, ptr(in.get<uint64_t>()));
      break;
    }
    case wire::Op::EventElapsed: {
      void* start = ptr(in.get<uint64_t>());
      out.put(rt_.elapsedMs(start, ptr(in.get<uint64_t>())));
      break;
    }
    case wire::Op::SetHeapSize: {
      const auto bytes = in.get<uint64_t>();
      if (!device_.heap().resize(bytes))
        throw CudaFailure(kErrorInvalidValue,
                          "cudaLimitMallocHeapSize: a kernel has used the device heap already; "
                          "set its size before the first launch that calls malloc");
      break;
    }
    case wire::Op::DeviceReset:
      rt_.reset();
      break;
    case wire::Op::ClientFailure:
      failures_[errorName(static_cast<int>(in.get<uint32_t>()))] += 1;
      break;
    case wire::Op::SetPendingLaunches:
      device_.setPendingLaunchLimit(in.get<uint64_t>());
      break;
    case wire::Op::SetStackSize: {
      const auto bytes = in.get<uint64_t>();
      if (bytes > Device::kMaxStackBytes)
        throw CudaFailure(kErrorInvalidValue,
                          fmt::format("cudaLimitStackSize of {} bytes: a thread has at most {} "
                                      "bytes of local memory",
                                      bytes, Device::kMaxStackBytes));
      device_.setStackBytes(static_cast<uint32_t>(bytes));
      break;
    }
    case wire::Op::Occupancy: {
      const Kernel& k = rt_.kernel(ptr(in.get<uint64_t>()));
      const auto threads = in.get<uint32_t>();
      const auto shared = in.get<uint64_t>();
      if (threads == 0 || shared > 0xffffffffu)
        throw CudaFailure(kErrorInvalidValue,
                          fmt::format("occupancy of {}: {} threads, {} bytes of dynamic shared "
                                      "memory per block",
                                      k.name, threads, shared));
      out.put(device_.ctasPerSm(k, {threads, 1, 1}, uint32_t(shared)));
      break;
    }
    default:
      throw CudaFailure(kErrorNotSupported,
                        fmt::format("request {} is not one this gpusc knows: use the runtime "
                                    "library installed with this gpusc",
                                    uint32_t(op)));
  }
  return std::move(out.bytes);
}

}  // namespace gpusc::cudart
