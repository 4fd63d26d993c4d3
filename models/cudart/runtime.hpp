// The state behind the CUDA runtime API for one program: its fat binaries, kernels and
// variables as its host code registers them, its allocations, streams and events, the launch
// configurations <<<>>> pushes, and the errors the API reports, on a Device.
//
// `gpusc exec` serves the requests of a program's runtime library (testbenches/cudart) with one
// Runtime (cudart/server); a failing call throws CudaFailure, which the server turns into its
// code. The Runtime itself is an ordinary object: tests drive it directly.
//
// Streams are served in the order their work is issued, one operation at a time (every call
// completes before it returns): that orders each stream's work as CUDA requires, and a program
// that relies on two streams overlapping sees them one after the other. Events record the
// simulated time at which the work issued before them ended (the sum of the launches' simulated
// durations; memory copies take no simulated time; functional mode has no time: 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudart/cuda_errors.hpp"
#include "cudart/fatbin.hpp"
#include "gpu/device.hpp"

namespace gpusc::cudart {

// CUDA's dim3 has gpusc's Dim3's layout (three 32-bit unsigned integers).
using gpusc::Dim3;

// A call that fails: the code the API returns and what gpusc says about it (stderr).
class CudaFailure : public std::runtime_error {
 public:
  CudaFailure(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// The CUDA error a kernel fault gives on a GPU: an illegal address 700, a misaligned one 716, a
// trap 719 (unspecified launch failure), a launch that never finishes 702 (the watchdog's
// timeout), a failed device assert 710; anything else 719.
int faultCode(const KernelFault& fault);

class Runtime {
 public:
  // `computeCapability` (e.g. 20 for 2.0) picks the PTX in each fat binary; `programName` names
  // the program in messages.
  Runtime(Device& device, unsigned computeCapability, std::string programName);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  Device& device() { return device_; }
  unsigned computeCapability() const { return computeCapability_; }

  // ---- registration (nvcc's host code, per translation unit) ----
  // Returns the handle later calls name the fat binary by. A fat binary without PTX is kept: its
  // kernels fail at launch with kErrorNoKernelImageForDevice and the message naming nvcc's flags.
  void** registerFatBinary(const void* wrapper);
  // The same from the container's bytes (as the program's runtime library sends them).
  void** registerFatBinary(const uint8_t* container, size_t bytes);
  void registerFunction(void** handle, const void* hostFun, const char* deviceName);
  // A __device__ or __constant__ variable: `hostVar` is the host shadow the program passes to
  // cudaMemcpyToSymbol and friends.
  void registerVar(void** handle, const void* hostVar, const char* deviceName, size_t bytes,
                   bool constant);
  // A __managed__ variable: the program's library allocated its `bytes` of managed memory at
  // `address` (the host's pointer to it), and the module's .global of that name lives there.
  void registerManagedVar(void** handle, DevPtr address, size_t bytes, const char* deviceName);
  // __cudaInitModule: the fat binary's module loaded now (its __managed__ variables initialised
  // before the host reads them).
  void initModule(void** handle);
  void unregisterFatBinary(void** handle);
  size_t fatBinaries() const { return binaries_.size(); }

  // ---- libraries the program loads itself (cudaLibraryLoadData: NVRTC's PTX, nvcc -fatbin) ----
  // Loads `code` (PTX text when `ptx`, else a fat binary container) now, so a bad one fails here
  // (kErrorInvalidPtx naming its line; kErrorNoKernelImageForDevice for PTX of a later
  // architecture than the device's). cudaLibraryUnload is unregisterFatBinary(handle).
  void** loadLibrary(const uint8_t* code, size_t bytes, bool ptx);
  std::vector<std::string> libraryKernels(void** handle);
  // cudaLibraryGetKernel: `kernel` (the program's handle) names the library's kernel `name` from
  // now on, as a host stub names its kernel. kErrorSymbolNotFound when there is none.
  void libraryKernel(void** handle, const void* kernel, const std::string& name);
  // cudaLibraryGetGlobal: the device address (0 for a .const variable, which lives in the
  // constant bank) and size of the library's variable `name`.
  std::pair<DevPtr, uint64_t> libraryGlobal(void** handle, const std::string& name);

  // ---- launches ----
  void pushConfiguration(Dim3 grid, Dim3 block, size_t sharedBytes, void* stream);
  // The configuration of the launch now being made (<<<>>> pushes, the stub pops).
  void popConfiguration(Dim3* grid, Dim3* block, size_t* sharedBytes, void** stream);
  // cudaLaunchKernel: `args` holds one pointer per kernel parameter, to its value.
  // `cooperative`: cudaLaunchCooperativeKernel (every block resident at once; a grid too large
  // for that is kErrorCooperativeLaunchTooLarge).
  void launch(const void* hostFun, Dim3 grid, Dim3 block, void** args, size_t sharedBytes,
              void* stream, bool cooperative = false);
  // The kernel a host stub names, its module loaded (cudaFuncGetAttributes, the occupancy
  // calculator). Throws kErrorInvalidDeviceFunction for an unregistered stub.
  const Kernel& kernel(const void* hostFun);
  // The virtual architecture of the PTX the kernel was taken from (75 for compute_75).
  unsigned ptxArch(const void* hostFun) const;

  // ---- memory ----
  void* malloc(size_t bytes);
  // Host memory the device may read and write at the same address (cudaMallocHost,
  // cudaHostAlloc, cudaMallocManaged). Only managed memory (`managed`) counts against the
  // device's memory; pinned host memory is the host's.
  void* mallocShared(size_t bytes, bool managed = true);
  void free(void* p);      // cudaFree: device or managed memory (null: nothing)
  void freeHost(void* p);  // cudaFreeHost
  void memcpy(void* dst, const void* src, size_t bytes, int kind);
  void memset(void* dst, int value, size_t bytes);
  void memcpyToSymbol(const void* symbol, const void* src, size_t bytes, size_t offset, int kind);
  void memcpyFromSymbol(void* dst, const void* symbol, size_t bytes, size_t offset, int kind);
  // A variable's device address (null for a __constant__ one: constant memory is a bank of its
  // own, reached through the symbol).
  void* symbolAddress(const void* symbol);
  size_t symbolSize(const void* symbol);
  // True when `p` lies inside a device allocation (device or shared memory).
  bool isDevicePointer(const void* p, size_t bytes = 1);

  // ---- streams and events ----
  void* createStream();
  void destroyStream(void* stream);
  void checkEvent(void* event) const;    // throws kErrorInvalidResourceHandle for an unknown one
  void checkStream(void* stream) const;  // throws kErrorInvalidResourceHandle for an unknown one
  void* createEvent();
  void destroyEvent(void* event);
  void recordEvent(void* event, void* stream);
  // Milliseconds of simulated time between two recorded events.
  float elapsedMs(void* start, void* end);
  // Seconds of simulated time the launches so far took.
  double simulatedSeconds() const { return simulatedSeconds_; }

  // ---- errors ----
  // Records a failed call's code as the last error (and, for a kernel fault, as the sticky error
  // every later call returns, as on a GPU). Returns the code.
  int fail(const CudaFailure& f);
  // cudaGetLastError (reset) or cudaPeekAtLastError.
  int lastError(bool reset);
  // The sticky error (a kernel fault's), 0 when none: a GPU's context is unusable after a fault.
  int stickyError() const { return sticky_; }

  // cudaDeviceReset: frees the memory malloc() gave (not managed or pinned memory, nor the
  // modules' variables), destroys the streams and events, clears the last error (not a kernel
  // fault's sticky one: CUDA's documentation says only a new process clears it), and sets each
  // thread's stack back to its default.
  void reset();

 private:
  struct Binary {
    std::string name;          // for messages: "program (fat binary 2)"
    std::string ptx;           // the PTX picked for the device ("" when none)
    std::string noPtx;         // why there is none
    unsigned ptxArch = 0;      // the PTX's virtual architecture
    Module* module = nullptr;  // loaded on first use
    // Its __managed__ variables: where each lives (loadModule's placements).
    std::map<std::string, Device::Placement> managed;
  };
  struct Function {
    Binary* binary;
    std::string name;
  };
  struct Variable {
    Binary* binary;
    std::string name;
    size_t bytes;
    bool constant;
  };
  struct Event {
    std::optional<double> seconds;  // simulated time when recorded
  };

  Module& moduleOf(Binary& b);
  Binary& library(void** handle, const char* function);
  const Variable& variable(const void* symbol);
  void checkLaunch(const Kernel& k, Dim3 grid, Dim3 block, size_t sharedBytes);

  // `files`: the containers of each file of a program built with relocatable device code.
  void** addBinary(std::unique_ptr<Binary> b, const FatBinary& fb,
                   const std::vector<FatBinary>& files);

  Device& device_;
  unsigned computeCapability_;
  std::string programName_;
  std::map<void**, std::unique_ptr<Binary>> binaries_;
  std::vector<std::unique_ptr<void*>> handles_;  // the handles given out (stable addresses)
  unsigned libraries_ = 0;                       // loaded by the program (for their names)
  std::map<const void*, Function> functions_;
  std::map<const void*, Variable> variables_;
  struct Configuration {
    Dim3 grid, block;
    size_t sharedBytes;
    void* stream;
  };
  std::vector<Configuration> configurations_;
  std::map<void*, std::unique_ptr<int>> streams_;
  std::map<void*, std::unique_ptr<Event>> events_;
  std::set<DevPtr> mallocs_;  // malloc()'s allocations not yet freed
  double simulatedSeconds_ = 0;
  int lastError_ = kSuccess;
  int sticky_ = kSuccess;
};

}  // namespace gpusc::cudart
