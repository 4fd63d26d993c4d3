#include "cudart/runtime.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "cudart/ptx_link.hpp"
#include "ptx/ast.hpp"

namespace gpusc::cudart {

namespace {

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

int faultCode(const KernelFault& fault) {
  const std::string what = fault.what();
  if (startsWith(what, "illegal ")) return kErrorIllegalAddress;
  if (startsWith(what, "misaligned ")) return kErrorMisalignedAddress;
  if (startsWith(what, "deadlock ")) return kErrorLaunchTimeout;
  if (startsWith(what, "assertion ")) return kErrorAssert;
  return kErrorLaunchFailure;
}

Runtime::Runtime(Device& device, unsigned computeCapability, std::string programName)
    : device_(device),
      computeCapability_(computeCapability),
      programName_(std::move(programName)) {}

Runtime::~Runtime() = default;

// ---- registration ----

void** Runtime::registerFatBinary(const void* wrapper) {
  auto b = std::make_unique<Binary>();
  b->name = fmt::format("{} (fat binary {})", programName_, binaries_.size() + 1);
  const FatBinary fb = parseFatbinWrapper(wrapper, b->name);
  return addBinary(std::move(b), fb, {});
}

void** Runtime::registerFatBinary(const uint8_t* container, size_t bytes) {
  auto b = std::make_unique<Binary>();
  b->name = fmt::format("{} (fat binary {})", programName_, binaries_.size() + 1);
  // The program's container, then (relocatable device code) each file's own container.
  std::vector<FatBinary> files;
  FatBinary fb;
  try {
    size_t at = 0;
    do {
      FatBinary one = parseFatbinContainer(container + at, bytes - at, b->name);
      const size_t length = one.bytes;
      if (at == 0)
        fb = std::move(one);
      else
        files.push_back(std::move(one));
      at += length;
    } while (at < bytes);
  } catch (const InputError& e) {
    throw CudaFailure(kErrorInvalidKernelImage, e.what());
  }
  return addBinary(std::move(b), fb, files);
}

namespace {

// Whether `fb` is libcudadevrt's file (linked into a program whose kernels launch kernels): its
// PTX, for a target of its own, defines the device runtime's functions (__cudaCDP2...), which
// gpusc answers itself (func/device_launches.hpp), so it is left out of the link.
bool definesDeviceRuntime(const FatBinary& fb, const std::string& name) {
  for (const FatbinEntry& e : fb.entries) {
    if (e.kind != FatbinKind::Ptx) continue;
    std::istringstream in(ptxText(e, name));
    for (std::string line; std::getline(in, line);)
      if ((line.rfind(".visible .func", 0) == 0 || line.rfind(".weak .func", 0) == 0) &&
          line.find("__cudaCDP2") != std::string::npos)
        return true;
    return false;
  }
  return false;
}

}  // namespace

void** Runtime::addBinary(std::unique_ptr<Binary> b, const FatBinary& fb,
                          const std::vector<FatBinary>& files) {
  try {
    const FatbinEntry* e = bestPtx(fb, computeCapability_);
    if (e != nullptr) {
      b->ptx = ptxText(*e, b->name);
    } else if (!files.empty()) {
      // Relocatable device code: the linked container holds SASS only; each file's container
      // holds that file's PTX, linked here into one module.
      std::vector<std::string> texts;
      for (size_t i = 0; i < files.size(); ++i) {
        if (definesDeviceRuntime(files[i], b->name)) continue;
        const FatbinEntry* f = bestPtx(files[i], computeCapability_);
        if (f == nullptr) {
          const std::string what =
              fmt::format("{}, file {} of {} linked (nvcc -rdc)", b->name, i + 1, files.size());
          b->noPtx = hasPtx(files[i]) ? ptxAboveMessage(files[i], computeCapability_, what)
                                      : noPtxMessage(files[i], what);
          break;
        }
        if (e == nullptr) e = f;
        texts.push_back(ptxText(*f, b->name));
      }
      if (b->noPtx.empty())
        b->ptx = linkPtx(texts, b->name);
      else
        e = nullptr;
    } else {
      b->noPtx =
          hasPtx(fb) ? ptxAboveMessage(fb, computeCapability_, b->name) : noPtxMessage(fb, b->name);
    }
    if (e != nullptr) {
      b->ptxArch = e->arch;
      // The registers ptxas gave each kernel in the SASS built from this PTX, in the form the
      // catalog's PTX records them (gpusc sizes a CTA's register footprint by them).
      if (const FatbinEntry* sass = sassFor(fb, *e)) {
        std::string header;
        for (const auto& [kernel, regs] : sassRegisters(*sass, b->name))
          header +=
              fmt::format("// ptxas -arch=sm_{}: {} uses {} registers\n", sass->arch, kernel, regs);
        b->ptx = header + b->ptx;
      }
    }
  } catch (const InputError& e) {
    throw CudaFailure(kErrorInvalidKernelImage, e.what());
  }
  handles_.push_back(std::make_unique<void*>(nullptr));
  void** handle = handles_.back().get();
  binaries_[handle] = std::move(b);
  return handle;
}

void Runtime::registerFunction(void** handle, const void* hostFun, const char* deviceName) {
  auto it = binaries_.find(handle);
  if (it == binaries_.end())
    throw CudaFailure(kErrorInvalidResourceHandle,
                      fmt::format("__cudaRegisterFunction({}): not a registered fat binary",
                                  deviceName ? deviceName : "?"));
  functions_[hostFun] = Function{it->second.get(), deviceName ? deviceName : ""};
}

void Runtime::registerVar(void** handle, const void* hostVar, const char* deviceName, size_t bytes,
                          bool constant) {
  auto it = binaries_.find(handle);
  if (it == binaries_.end())
    throw CudaFailure(kErrorInvalidResourceHandle,
                      fmt::format("__cudaRegisterVar({}): not a registered fat binary",
                                  deviceName ? deviceName : "?"));
  variables_[hostVar] = Variable{it->second.get(), deviceName ? deviceName : "", bytes, constant};
}

void Runtime::registerManagedVar(void** handle, DevPtr address, size_t bytes,
                                 const char* deviceName) {
  auto it = binaries_.find(handle);
  const std::string name = deviceName ? deviceName : "";
  if (it == binaries_.end())
    throw CudaFailure(
        kErrorInvalidResourceHandle,
        fmt::format("__cudaRegisterManagedVar({}): not a registered fat binary", name));
  if (it->second->module)
    throw CudaFailure(
        kErrorInvalidValue,
        fmt::format("__cudaRegisterManagedVar({}): the module of {} is loaded already", name,
                    it->second->name));
  it->second->managed[name] = {address, bytes};
}

void Runtime::initModule(void** handle) {
  auto it = binaries_.find(handle);
  if (it == binaries_.end())
    throw CudaFailure(kErrorInvalidResourceHandle, "__cudaInitModule: not a registered fat binary");
  moduleOf(*it->second);
}

void Runtime::unregisterFatBinary(void** handle) {
  auto it = binaries_.find(handle);
  if (it == binaries_.end()) return;
  const Binary* b = it->second.get();
  for (auto f = functions_.begin(); f != functions_.end();)
    f = f->second.binary == b ? functions_.erase(f) : std::next(f);
  for (auto v = variables_.begin(); v != variables_.end();)
    v = v->second.binary == b ? variables_.erase(v) : std::next(v);
  binaries_.erase(it);  // a loaded module stays in the Device (its launches' records name it)
}

// ---- libraries ----

namespace {

// The architecture a PTX module's .target directive names (86 for sm_86 or sm_86a), 0 when none.
unsigned ptxTarget(const std::string& ptx) {
  const size_t at = ptx.find(".target");
  if (at == std::string::npos) return 0;
  const size_t sm = ptx.find("sm_", at);
  if (sm == std::string::npos || ptx.find('\n', at) < sm) return 0;
  unsigned arch = 0;
  for (size_t i = sm + 3; i < ptx.size() && ptx[i] >= '0' && ptx[i] <= '9' && arch < 10000; ++i)
    arch = arch * 10 + unsigned(ptx[i] - '0');
  return arch;
}

}  // namespace

void** Runtime::loadLibrary(const uint8_t* code, size_t bytes, bool ptx) {
  const std::string name = fmt::format("{} (library {})", programName_, ++libraries_);
  void** handle = nullptr;
  if (ptx) {
    auto b = std::make_unique<Binary>();
    b->name = name;
    b->ptx.assign(reinterpret_cast<const char*>(code), bytes);
    b->ptxArch = ptxTarget(b->ptx);
    // As a GPU's JIT compiler: PTX for a later architecture does not run (a platform below
    // nvcc 13's oldest target runs what it is given, as it runs fat binaries: bestPtx).
    if (b->ptxArch > computeCapability_ && computeCapability_ >= kOldestNvccTarget)
      throw CudaFailure(
          kErrorNoKernelImageForDevice,
          fmt::format("{}: PTX for sm_{} does not run on a device of compute capability {}.{} "
                      "(compile it for compute_{} or below)",
                      name, b->ptxArch, computeCapability_ / 10, computeCapability_ % 10,
                      computeCapability_));
    handles_.push_back(std::make_unique<void*>(nullptr));
    handle = handles_.back().get();
    binaries_[handle] = std::move(b);
  } else {
    handle = registerFatBinary(code, bytes);
    binaries_[handle]->name = name;
  }
  // Loaded now, so the error comes from this call (a GPU's JIT compiles a library's PTX when it
  // loads with CUDA_MODULE_LOADING=EAGER; the errors are the same either way).
  try {
    moduleOf(*binaries_[handle]);
  } catch (const CudaFailure& e) {
    binaries_.erase(handle);
    throw CudaFailure(e.code() == kErrorInvalidKernelImage ? kErrorInvalidPtx : e.code(), e.what());
  }
  return handle;
}

Runtime::Binary& Runtime::library(void** handle, const char* function) {
  auto it = binaries_.find(handle);
  if (it == binaries_.end())
    throw CudaFailure(kErrorInvalidResourceHandle,
                      fmt::format("{}: not a loaded library", function));
  return *it->second;
}

std::vector<std::string> Runtime::libraryKernels(void** handle) {
  return moduleOf(library(handle, "cudaLibraryLoadData")).entryNames();
}

void Runtime::libraryKernel(void** handle, const void* kernel, const std::string& name) {
  Binary& b = library(handle, "cudaLibraryGetKernel");
  const std::vector<std::string> kernels = moduleOf(b).entryNames();
  if (std::find(kernels.begin(), kernels.end(), name) == kernels.end())
    throw CudaFailure(
        kErrorSymbolNotFound,
        fmt::format("cudaLibraryGetKernel: {} has no kernel '{}' (its kernels: {})", b.name, name,
                    kernels.empty() ? "none" : fmt::format("{}", fmt::join(kernels, ", "))));
  functions_[kernel] = Function{&b, name};
}

std::pair<DevPtr, uint64_t> Runtime::libraryGlobal(void** handle, const std::string& name) {
  Binary& b = library(handle, "cudaLibraryGetGlobal");
  const Module& m = moduleOf(b);
  const ptx::Variable* v = m.ast().findGlobal(name);
  if (v == nullptr || (v->space != ptx::StateSpace::Global && v->space != ptx::StateSpace::Const))
    throw CudaFailure(kErrorSymbolNotFound,
                      fmt::format("cudaLibraryGetGlobal: {} has no .global or .const variable '{}'",
                                  b.name, name));
  // A .const variable lives in the constant bank, outside the device's address space.
  if (v->space == ptx::StateSpace::Const) return {0, v->sizeBytes()};
  try {
    return {m.symbolAddress(name), v->sizeBytes()};
  } catch (const InputError& e) {
    throw CudaFailure(kErrorSymbolNotFound, e.what());
  }
}

Module& Runtime::moduleOf(Binary& b) {
  if (!b.module) {
    if (b.ptx.empty()) throw CudaFailure(kErrorNoKernelImageForDevice, b.noPtx);
    try {
      b.module = &device().loadModule(b.ptx, b.name, b.managed);
    } catch (const InputError& e) {
      throw CudaFailure(kErrorInvalidKernelImage, e.what());
    }
  }
  return *b.module;
}

// ---- launches ----

void Runtime::pushConfiguration(Dim3 grid, Dim3 block, size_t sharedBytes, void* stream) {
  configurations_.push_back(Configuration{grid, block, sharedBytes, stream});
}

void Runtime::popConfiguration(Dim3* grid, Dim3* block, size_t* sharedBytes, void** stream) {
  if (configurations_.empty())
    throw CudaFailure(kErrorInvalidConfiguration,
                      "__cudaPopCallConfiguration without a configuration pushed");
  const Configuration c = configurations_.back();
  configurations_.pop_back();
  if (grid) *grid = c.grid;
  if (block) *block = c.block;
  if (sharedBytes) *sharedBytes = c.sharedBytes;
  if (stream) *stream = c.stream;
}

const Kernel& Runtime::kernel(const void* hostFun) {
  auto it = functions_.find(hostFun);
  if (it == functions_.end())
    throw CudaFailure(
        kErrorInvalidDeviceFunction,
        fmt::format("{}: no kernel registered for host function {}", programName_, hostFun));
  Module& m = moduleOf(*it->second.binary);
  try {
    return m.kernel(it->second.name);
  } catch (const InputError& e) {
    throw CudaFailure(kErrorInvalidDeviceFunction, e.what());
  }
}

unsigned Runtime::ptxArch(const void* hostFun) const {
  auto it = functions_.find(hostFun);
  return it == functions_.end() ? 0 : it->second.binary->ptxArch;
}

void Runtime::checkLaunch(const Kernel& k, Dim3 grid, Dim3 block, size_t sharedBytes) {
  // What a GPU refuses before running anything: cudaErrorInvalidConfiguration for dimensions,
  // threads and shared memory it can never provide.
  const PlatformConfig& cfg = device().config();
  const auto bad = [&](const std::string& why) {
    throw CudaFailure(kErrorInvalidConfiguration, fmt::format("launch of {}: {}", k.name, why));
  };
  if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
    bad(fmt::format("a grid of {}x{}x{} blocks of {}x{}x{} threads", grid.x, grid.y, grid.z,
                    block.x, block.y, block.z));
  if (grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
    bad(fmt::format("grid {}x{}x{} exceeds 2147483647x65535x65535", grid.x, grid.y, grid.z));
  if (block.x > 1024 || block.y > 1024 || block.z > 64)
    bad(fmt::format("block {}x{}x{} exceeds 1024x1024x64", block.x, block.y, block.z));
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  const uint64_t maxThreads = std::min<uint64_t>(1024, cfg.sm.max_threads);
  if (threads > maxThreads)
    bad(fmt::format("{} threads per block; the device allows {} ({})", threads, maxThreads,
                    cfg.sm.max_threads < 1024 ? "sm.max_threads" : "CUDA's limit"));
  const uint64_t shared = uint64_t(k.program->dynamicSharedOffset) + sharedBytes;
  const uint64_t perBlock = cfg.sm.sharedPerBlock();
  if (shared > perBlock)
    bad(
        fmt::format("{} bytes of shared memory per block ({} static, {} dynamic); a block may have "
                    "{} (sm.shared_memory_bytes less sm.shared_reserved_per_cta)",
                    shared, k.program->dynamicSharedOffset, sharedBytes, perBlock));
}

void Runtime::launch(const void* hostFun, Dim3 grid, Dim3 block, void** args, size_t sharedBytes,
                     void* stream, bool cooperative) {
  checkStream(stream);
  const Kernel& k = kernel(hostFun);
  checkLaunch(k, grid, block, sharedBytes);
  KernelArgs ka;
  const auto& params = k.program->params;
  if (!params.empty() && args == nullptr)
    throw CudaFailure(
        kErrorInvalidValue,
        fmt::format("launch of {}: no arguments for its {} parameters", k.name, params.size()));
  for (size_t i = 0; i < params.size(); ++i) ka.raw(args[i], params[i].size, "argument");
  Device& dev = device();
  const size_t before = dev.launches().size();
  LaunchOptions options;
  options.cooperative = cooperative;
  try {
    dev.launch(k, {grid.x, grid.y, grid.z}, {block.x, block.y, block.z},
               static_cast<uint32_t>(sharedBytes), ka, options);
  } catch (const KernelFault& e) {
    throw CudaFailure(faultCode(e), e.what());
  } catch (const LaunchRefused& e) {
    // What the device refuses beyond the checks above: a block's registers, a cooperative grid
    // the GPU cannot hold at once, a cooperative launch the platform's CTA placement cannot keep
    // resident.
    using Reason = LaunchRefused::Reason;
    throw CudaFailure(e.reason() == Reason::Resources             ? kErrorLaunchOutOfResources
                      : e.reason() == Reason::CooperativeTooLarge ? kErrorCooperativeLaunchTooLarge
                      : e.reason() == Reason::Unsupported         ? kErrorNotSupported
                                                                  : kErrorInvalidConfiguration,
                      e.what());
  } catch (const InputError& e) {
    throw CudaFailure(kErrorInvalidConfiguration, e.what());
  }
  for (size_t i = before; i < dev.launches().size(); ++i)
    if (const auto& t = dev.launches()[i].timing; t && t->coreMhz > 0)
      simulatedSeconds_ += double(t->cycles) / (t->coreMhz * 1e6);
}

// ---- memory ----

void* Runtime::malloc(size_t bytes) {
  try {
    const DevPtr p = device().malloc(bytes);
    mallocs_.insert(p);
    return reinterpret_cast<void*>(p);
  } catch (const InputError& e) {
    throw CudaFailure(kErrorMemoryAllocation, e.what());
  }
}

void* Runtime::mallocShared(size_t bytes, bool managed) {
  try {
    return reinterpret_cast<void*>(device().mallocShared(bytes, managed));
  } catch (const InputError& e) {
    throw CudaFailure(kErrorMemoryAllocation, e.what());
  }
}

void Runtime::free(void* p) {
  if (p == nullptr) return;
  const auto addr = reinterpret_cast<DevPtr>(p);
  if (!device().memory().isAllocated(addr, 1))
    throw CudaFailure(kErrorInvalidValue,
                      fmt::format("cudaFree({}): not a pointer cudaMalloc returned", p));
  try {
    device().free(addr);
  } catch (const InputError& e) {
    throw CudaFailure(kErrorInvalidValue, e.what());
  }
  mallocs_.erase(addr);
}

void Runtime::reset() {
  for (const DevPtr p : mallocs_) device().free(p);
  mallocs_.clear();
  streams_.clear();
  events_.clear();
  lastError_ = kSuccess;
  device().setStackBytes(func::kDefaultStackBytes);
}

void Runtime::freeHost(void* p) {
  if (p == nullptr) return;
  const auto addr = reinterpret_cast<DevPtr>(p);
  if (device().memory().sharedFile(addr) < 0)
    throw CudaFailure(kErrorInvalidValue,
                      fmt::format("cudaFreeHost({}): not a pointer cudaMallocHost returned", p));
  device().free(addr);
}

bool Runtime::isDevicePointer(const void* p, size_t bytes) {
  return device().memory().isAllocated(reinterpret_cast<DevPtr>(p), std::max<size_t>(1, bytes));
}

void Runtime::memcpy(void* dst, const void* src, size_t bytes, int kind) {
  if (bytes == 0) return;
  if (dst == nullptr || src == nullptr)
    throw CudaFailure(kErrorInvalidValue, "cudaMemcpy with a null pointer");
  Device& dev = device();
  const bool dstDevice = isDevicePointer(dst, bytes), srcDevice = isDevicePointer(src, bytes);
  // Shared (managed, host-mapped) memory is host memory too: copies touch it directly.
  const bool dstShared = dstDevice && dev.memory().isShared(reinterpret_cast<DevPtr>(dst));
  const bool srcShared = srcDevice && dev.memory().isShared(reinterpret_cast<DevPtr>(src));
  bool toDevice = false, fromDevice = false;
  if (!memcpySides(kind, dstDevice, srcDevice, &toDevice, &fromDevice))
    throw CudaFailure(kErrorInvalidMemcpyDirection,
                      fmt::format("cudaMemcpy kind {} is not a cudaMemcpyKind", kind));
  if ((toDevice && !dstDevice) || (fromDevice && !srcDevice)) {
    const bool dstSide = toDevice && !dstDevice;
    const void* p = dstSide ? dst : src;
    // A pointer into an allocation whose copy runs past its end says so.
    if (isDevicePointer(p, 1))
      throw CudaFailure(kErrorInvalidValue,
                        fmt::format("cudaMemcpy of {} bytes from {} to {}: the {} runs past the "
                                    "end of its device allocation",
                                    bytes, src, dst, dstSide ? "destination" : "source"));
    throw CudaFailure(kErrorInvalidValue,
                      fmt::format("cudaMemcpy of {} bytes from {} to {}: the {} pointer is not "
                                  "inside a device allocation",
                                  bytes, src, dst, dstSide ? "destination" : "source"));
  }
  const bool hostDst = !toDevice || dstShared, hostSrc = !fromDevice || srcShared;
  if (hostDst && hostSrc) {
    std::memmove(dst, src, bytes);
  } else if (hostSrc) {
    dev.copyToDevice(reinterpret_cast<DevPtr>(dst), src, bytes);
  } else if (hostDst) {
    dev.copyToHost(dst, reinterpret_cast<DevPtr>(src), bytes);
  } else {
    std::vector<uint8_t> tmp(bytes);
    dev.copyToHost(tmp.data(), reinterpret_cast<DevPtr>(src), bytes);
    dev.copyToDevice(reinterpret_cast<DevPtr>(dst), tmp.data(), bytes);
  }
}

void Runtime::memset(void* dst, int value, size_t bytes) {
  if (bytes == 0) return;
  if (!isDevicePointer(dst, bytes))
    throw CudaFailure(
        kErrorInvalidValue,
        fmt::format("cudaMemset of {} bytes at {}: not inside a device allocation", bytes, dst));
  device().memset(reinterpret_cast<DevPtr>(dst), static_cast<uint8_t>(value), bytes);
}

const Runtime::Variable& Runtime::variable(const void* symbol) {
  auto it = variables_.find(symbol);
  if (it == variables_.end())
    throw CudaFailure(kErrorInvalidSymbol,
                      fmt::format("{}: {} is not a registered __device__ or __constant__ variable",
                                  programName_, symbol));
  return it->second;
}

void Runtime::memcpyToSymbol(const void* symbol, const void* src, size_t bytes, size_t offset,
                             int kind) {
  const Variable& v = variable(symbol);
  if (kind != kHostToDevice && kind != kDeviceToDevice && kind != kDefault)
    throw CudaFailure(kErrorInvalidMemcpyDirection,
                      fmt::format("cudaMemcpyToSymbol({}) with kind {}", v.name, kind));
  if (offset + bytes > v.bytes)
    throw CudaFailure(kErrorInvalidValue,
                      fmt::format("cudaMemcpyToSymbol: {} bytes at offset {} do not fit {} ({} "
                                  "bytes)",
                                  bytes, offset, v.name, v.bytes));
  Module& m = moduleOf(*v.binary);
  std::vector<uint8_t> staged;
  const void* from = src;
  if (isDevicePointer(src, bytes) && !device().memory().isShared(reinterpret_cast<DevPtr>(src))) {
    staged.resize(bytes);
    device().copyToHost(staged.data(), reinterpret_cast<DevPtr>(src), bytes);
    from = staged.data();
  }
  try {
    device().copyToSymbol(m, v.name, from, bytes, offset);
  } catch (const InputError& e) {
    throw CudaFailure(kErrorInvalidSymbol, e.what());
  }
}

void Runtime::memcpyFromSymbol(void* dst, const void* symbol, size_t bytes, size_t offset,
                               int kind) {
  const Variable& v = variable(symbol);
  if (kind != kDeviceToHost && kind != kDeviceToDevice && kind != kDefault)
    throw CudaFailure(kErrorInvalidMemcpyDirection,
                      fmt::format("cudaMemcpyFromSymbol({}) with kind {}", v.name, kind));
  if (offset + bytes > v.bytes)
    throw CudaFailure(kErrorInvalidValue,
                      fmt::format("cudaMemcpyFromSymbol: {} bytes at offset {} do not fit {} ({} "
                                  "bytes)",
                                  bytes, offset, v.name, v.bytes));
  Module& m = moduleOf(*v.binary);
  const bool toDevice =
      isDevicePointer(dst, bytes) && !device().memory().isShared(reinterpret_cast<DevPtr>(dst));
  std::vector<uint8_t> staged(toDevice ? bytes : 0);
  try {
    device().copyFromSymbol(m, v.name, toDevice ? staged.data() : dst, bytes, offset);
  } catch (const InputError& e) {
    throw CudaFailure(kErrorInvalidSymbol, e.what());
  }
  if (toDevice) device().copyToDevice(reinterpret_cast<DevPtr>(dst), staged.data(), bytes);
}

void* Runtime::symbolAddress(const void* symbol) {
  const Variable& v = variable(symbol);
  // Constant memory is a bank of its own here, outside the device's address space: a
  // __constant__ variable is reached through the symbol (cudaMemcpyToSymbol, FromSymbol).
  if (v.constant) return nullptr;
  Module& m = moduleOf(*v.binary);
  try {
    return reinterpret_cast<void*>(m.symbolAddress(v.name));
  } catch (const InputError& e) {
    throw CudaFailure(kErrorInvalidSymbol, e.what());
  }
}

size_t Runtime::symbolSize(const void* symbol) { return variable(symbol).bytes; }

// ---- streams and events ----

void* Runtime::createStream() {
  auto s = std::make_unique<int>(0);
  void* h = s.get();
  streams_[h] = std::move(s);
  return h;
}

void Runtime::destroyStream(void* stream) {
  checkStream(stream);
  if (stream != nullptr) streams_.erase(stream);
}

void Runtime::checkStream(void* stream) const {
  // 0 is the legacy default stream; 1 and 2 are cudaStreamLegacy and cudaStreamPerThread.
  if (stream == nullptr || stream == reinterpret_cast<void*>(1) ||
      stream == reinterpret_cast<void*>(2) || streams_.count(stream))
    return;
  throw CudaFailure(kErrorInvalidResourceHandle, fmt::format("{} is not a stream", stream));
}

void* Runtime::createEvent() {
  auto e = std::make_unique<Event>();
  void* h = e.get();
  events_[h] = std::move(e);
  return h;
}

void Runtime::checkEvent(void* event) const {
  if (!events_.count(event))
    throw CudaFailure(kErrorInvalidResourceHandle, fmt::format("{} is not an event", event));
}

void Runtime::destroyEvent(void* event) {
  if (!events_.erase(event))
    throw CudaFailure(kErrorInvalidResourceHandle, fmt::format("{} is not an event", event));
}

void Runtime::recordEvent(void* event, void* stream) {
  checkStream(stream);
  auto it = events_.find(event);
  if (it == events_.end())
    throw CudaFailure(kErrorInvalidResourceHandle, fmt::format("{} is not an event", event));
  it->second->seconds = simulatedSeconds_;  // streams are served in order: all work so far ended
}

float Runtime::elapsedMs(void* start, void* end) {
  auto a = events_.find(start), b = events_.find(end);
  if (a == events_.end() || b == events_.end())
    throw CudaFailure(kErrorInvalidResourceHandle, "cudaEventElapsedTime: not an event");
  if (!a->second->seconds || !b->second->seconds)
    throw CudaFailure(kErrorInvalidResourceHandle,
                      "cudaEventElapsedTime: an event that was never recorded");
  return float((*b->second->seconds - *a->second->seconds) * 1e3);
}

// ---- errors ----

int Runtime::fail(const CudaFailure& f) {
  lastError_ = f.code();
  if (isStickyError(f.code())) sticky_ = f.code();  // the context is lost, as on a GPU
  return f.code();
}

int Runtime::lastError(bool reset) {
  const int e = sticky_ ? sticky_ : lastError_;
  if (reset) lastError_ = kSuccess;
  return e;
}

}  // namespace gpusc::cudart
