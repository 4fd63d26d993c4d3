// The host runtime API: what a CUDA program does with cudaMalloc, cudaMemcpy and <<<>>>,
// testbenches do with a Device. The command-line tool and launch specs are built on it.
//
//   gpusc::Device dev(gpusc::loadPlatform("gtx480"));
//   auto& mod = dev.loadModule(ptxText, "vecadd.ptx");
//   DevPtr a = dev.upload(hostA);
//   dev.launch(mod.kernel("vecadd"), {grid}, {block}, 0, KernelArgs().ptr(a).ptr(b).ptr(c).u32(n));
//   auto c = dev.download<float>(cPtr, n);
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/host_workers.hpp"
#include "common/platform_config.hpp"
#include "common/run_budget.hpp"
#include "func/access_log.hpp"
#include "func/decoder.hpp"
#include "func/device_heap.hpp"
#include "func/executor.hpp"
#include "func/global_memory.hpp"
#include "func/state.hpp"
#include "func/texture.hpp"
#include "gpu/child_launches.hpp"
#include "gpu/functional_tail.hpp"
#include "gpu/kernel_sampler.hpp"
#include "gpu/timing_engine.hpp"
#include "gpu/wave_sampler.hpp"

namespace gpusc {

using DevPtr = uint64_t;
using func::Dim3;

// Kernel arguments in order, as raw bytes; checked against the kernel's parameters at launch.
class KernelArgs {
 public:
  KernelArgs& ptr(DevPtr p) { return raw(&p, 8, "pointer"); }
  KernelArgs& u32(uint32_t v) { return raw(&v, 4, "u32"); }
  KernelArgs& i32(int32_t v) { return raw(&v, 4, "s32"); }
  KernelArgs& u64(uint64_t v) { return raw(&v, 8, "u64"); }
  KernelArgs& i64(int64_t v) { return raw(&v, 8, "s64"); }
  KernelArgs& f32(float v) { return raw(&v, 4, "f32"); }
  KernelArgs& f64(double v) { return raw(&v, 8, "f64"); }
  template <class T>
  KernelArgs& value(const T& v) {  // a struct passed by value
    return raw(&v, sizeof(T), "struct");
  }
  KernelArgs& raw(const void* p, size_t n, const char* what) {
    Arg a;
    a.bytes.resize(n);
    std::memcpy(a.bytes.data(), p, n);
    a.what = what;
    args_.push_back(std::move(a));
    return *this;
  }

  struct Arg {
    std::vector<uint8_t> bytes;
    std::string what;
  };
  const std::vector<Arg>& args() const { return args_; }

 private:
  std::vector<Arg> args_;
};

class Module;

struct Kernel {
  std::string name;
  std::unique_ptr<func::Program> program;
  const Module* module = nullptr;
};

// A loaded PTX module: its parsed form, module-scope variables, and decoded kernels.
class Module {
 public:
  // The entry named `entry`, decoded on first use. Throws InputError naming the entries
  // that exist when there is no such entry.
  const Kernel& kernel(const std::string& entry);
  std::vector<std::string> entryNames() const;
  const std::string& fileName() const { return ast_->fileName; }
  const ptx::Module& ast() const { return *ast_; }
  const std::vector<uint8_t>& constBank() const { return syms_.constBank; }
  // Device address of a module-scope .global variable (cudaGetSymbolAddress).
  DevPtr symbolAddress(const std::string& name) const;
  // Size in bytes of a module-scope .global or .const variable.
  uint64_t symbolSize(const std::string& name) const;

 private:
  friend class Device;
  std::unique_ptr<ptx::Module> ast_;
  func::ModuleSymbols syms_;
  std::map<std::string, uint32_t> allocatedRegisters_;  // ptxas's counts recorded in the file
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
};

// A launch whose CTA waves were sampled (sampling.mode wave, gpu/wave_sampler.hpp): its first
// `ctasDetailed` CTAs ran in the cycle-level model, the rest in the functional engine.
struct WaveSample {
  uint64_t ctasDetailed = 0, ctasTotal = 0, ctasPerWave = 0;
  uint64_t detailedCycles = 0;    // the cycle-level model's: launch start to the last CTA's end
  double extrapolatedCycles = 0;  // the functionally run CTAs' warp instructions / ipc
  uint64_t detailedInsts = 0;     // warp instructions of the detailed CTAs
  double ipc = 0;                 // the last h waves' warp instructions per cycle
  uint32_t wavesCompared = 0;     // h: the last h waves' rate against the h before
  double driftPct = 0;            // how far those two rates differ
  std::vector<double> waveIpc;    // every complete wave's, in order
  uint64_t warmupWaves = 0;       // the first waves, never compared (WaveSampler::warmupWindows)
  double boundPct = 0;            // the launch's cycles' error bound
};

// A launch under sampled simulation (sampling.mode other than none): with kernel sampling its
// group and, for a launch that ran in the functional engine, the estimate its timing figures are
// (gpu/kernel_sampler.hpp); with wave sampling, whether and how its CTA waves were sampled.
struct SampledLaunch {
  bool grouped = false;  // kernel sampling: `group` is set
  size_t group = 0;
  bool detail = true;                // ran in the cycle-level model
  std::vector<size_t> detailedFrom;  // extrapolated: the detailed launches it is estimated from
  std::optional<size_t> lender;      // extrapolated from another group's CPI (borrowed)
  // Detailed, a check of borrowing: the error its lender's CPI would have made on it, in %.
  std::optional<double> checkErrorPct;
  double cpi = 0;                  // extrapolated: the group's cycles per warp instruction
  std::optional<double> boundPct;  // extrapolated: the cycles' error bound (none: unknown)
  gpu::KernelSampler::BoundFrom boundFrom = gpu::KernelSampler::BoundFrom::None;
  std::optional<WaveSample> waves;  // detail with its later CTAs run functionally
  // Sampling left the launch alone (it ran in full detail, in no group): why. Device runtime
  // (printf, assert, malloc, launches from device code) or a cooperative launch.
  const char* notSampled = nullptr;
};

// What one launch did (functional counts; the timing model adds cycles in its own stats).
struct LaunchOptions {
  bool cooperative = false;
};

struct LaunchRecord {
  std::string kernel;
  bool cooperative = false;  // LaunchOptions::cooperative
  Dim3 grid, block;
  uint32_t dynamicShared = 0;
  uint32_t regsPerThread = 0;
  bool regsFromPtxas = false;  // ptxas's recorded count (else the liveness estimate)
  uint32_t ptxRegisters = 0;   // data registers the PTX declares (kernel and callees)
  uint32_t registerRows = 0;   // register rows per warp in the engine (registers share rows)
  uint32_t warpSlots = 0;      // rows per warp in all: register rows, special registers, scratch
  uint32_t constantRows = 0;   // rows of immediates, one copy for all warps
  uint32_t sharedPerCta = 0;
  func::ExecStats stats;
  double seconds = 0;                       // host wall-clock time of the simulation
  std::optional<gpu::TimingResult> timing;  // timing mode only
  // Set when a run limit or an interrupt stopped the launch: its figures are partial.
  std::optional<StopReason> stopped;
  // The kernel fault that ended the launch (empty: none): its figures are partial, up to it.
  std::string fault;
  // Ran to its end: neither a run limit, an interrupt nor a fault stopped it.
  bool complete() const { return !stopped && fault.empty(); }
  // Launched from device code (dynamic parallelism): the record of the launch that made it.
  std::optional<size_t> launchedBy;
  // Sampled simulation: set for every timing-mode launch. An extrapolated launch's `timing`
  // holds estimates: its cycles and energy, no per-SM, memory or voltage figures. A launch
  // whose waves were sampled has estimated cycles and energy (`stats` cover all its CTAs); its
  // per-SM, memory, voltage and per-cycle figures cover the detailed CTAs.
  std::optional<SampledLaunch> sampled;
};

// Where each launch's record goes as the launch ends (Device::setLaunchSink), e.g. to write its
// power time series, CTA timeline and statistics while the run goes (LaunchFiles,
// gpu/launch_files.hpp).
class LaunchSink {
 public:
  virtual ~LaunchSink() = default;
  // Launch `launch` (the index its record gets in Device::launches()) ended, complete or
  // stopped by a run limit. The sink may reduce what it has written out of `record` (LaunchFiles:
  // the memory statistics to their totals); the Device then keeps the record without the series
  // that grow with the launch's length in any case: timing->timeline and timing->power->samples
  // stay empty. An exception thrown here (e.g. InputError: a file cannot be written) leaves
  // launch() with it.
  virtual void launchDone(size_t launch, LaunchRecord& record) = 0;
};

enum class ExecMode { Functional, Timing };

class Device {
 public:
  explicit Device(PlatformConfig cfg, ExecMode mode = ExecMode::Functional);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const PlatformConfig& config() const { return cfg_; }
  ExecMode mode() const { return mode_; }

  // ---- memory ----
  DevPtr malloc(uint64_t bytes);
  // Memory the host shares with the device at the same address (CUDA's managed and mapped host
  // memory): the returned address is a valid host pointer too (func::GlobalMemory::allocateShared).
  // Pinned host memory (`deviceMemory` false) does not count against
  // memory.device_memory_bytes.
  DevPtr mallocShared(uint64_t bytes, bool deviceMemory = true);
  // The device malloc heap (memory.device_heap_bytes until changed with resize, before its
  // first use).
  func::DeviceHeap& heap() { return heap_; }
  // Each thread's stack, for alloca and recursive functions' frames (CUDA's cudaLimitStackSize:
  // 1 KiB until set; at most the 512 KiB of local memory a thread has). Later launches use it.
  static constexpr uint32_t kMaxStackBytes = 512 * 1024;
  void setStackBytes(uint32_t bytes) { stackBytes_ = bytes; }
  uint32_t stackBytes() const { return stackBytes_; }
  void free(DevPtr p);
  void copyToDevice(DevPtr dst, const void* src, uint64_t bytes);
  void copyToHost(void* dst, DevPtr src, uint64_t bytes);
  void memset(DevPtr dst, uint8_t value, uint64_t bytes);
  // A texture object over texels already in device memory (func/texture.hpp): checks `d`
  // (InputError naming what is wrong, or that its texels are not inside one allocation) and
  // writes it to an allocation of its own, whose address is the handle a kernel's `tex`
  // instructions take (CUDA's cudaTextureObject_t). free() destroys it.
  DevPtr createTexture(const func::TextureDescriptor& d);
  // A surface object over the texels `d` describes (its magic number is set to a surface's):
  // the handle `suld.b` / `sust.b` take (cudaSurfaceObject_t).
  DevPtr createSurface(func::TextureDescriptor d);

  // cudaMemcpyToSymbol / cudaMemcpyFromSymbol: a module-scope .global or .const variable.
  void copyToSymbol(Module& m, const std::string& name, const void* src, uint64_t bytes,
                    uint64_t offset = 0);
  void copyFromSymbol(const Module& m, const std::string& name, void* dst, uint64_t bytes,
                      uint64_t offset = 0);

  template <class T>
  DevPtr upload(const std::vector<T>& host) {
    DevPtr p = malloc(host.size() * sizeof(T));
    copyToDevice(p, host.data(), host.size() * sizeof(T));
    return p;
  }
  template <class T>
  std::vector<T> download(DevPtr src, size_t count) {
    std::vector<T> out(count);
    copyToHost(out.data(), src, count * sizeof(T));
    return out;
  }

  // ---- modules and launches ----
  // Where a module-scope .global variable lives when its memory was allocated before the module
  // (a CUDA program's __managed__ variable, in managed memory the program maps at the same
  // address): its address and bytes.
  struct Placement {
    DevPtr address = 0;
    uint64_t bytes = 0;
  };
  // Parses and loads PTX text. `fileName` names it in messages. The .global variables `placed`
  // names live where it says (each must be one of the module's, and fit); the others are
  // allocated. Throws InputError.
  Module& loadModule(std::string_view ptxText, const std::string& fileName,
                     const std::map<std::string, Placement>& placed = {});
  Module& loadModuleFile(const std::string& path);

  // Runs a kernel to completion (launches are synchronous). Throws InputError for a bad
  // launch configuration or arguments, KernelFault when the kernel faults, RunStopped when the
  // platform's run limits (`limits`, over all launches of this Device) or the interrupt flag
  // stop it: the stopped launch's partial record is then the last of launches(), and every
  // later launch throws RunStopped at once.
  void launch(const Kernel& k, Dim3 grid, Dim3 block, uint32_t dynamicShared,
              const KernelArgs& args);
  // The same with options: a cooperative launch (LaunchOptions::cooperative) has every CTA
  // resident at once, so its grid may sync (cooperative groups' grid.sync()); a grid larger
  // than the SMs hold at once (ctasPerSm() x gpu.num_sms) throws InputError.
  void launch(const Kernel& k, Dim3 grid, Dim3 block, uint32_t dynamicShared,
              const KernelArgs& args, const LaunchOptions& options);
  void synchronize() {}
  // Launches from device code not yet started that a launch may have pending at once
  // (cudaLimitDevRuntimePendingLaunchCount; more fail with cudaErrorLaunchPendingCountExceeded).
  void setPendingLaunchLimit(uint64_t n) { pendingLaunchLimit_ = n; }
  uint64_t pendingLaunchLimit() const { return pendingLaunchLimit_; }

  const std::vector<LaunchRecord>& launches() const { return launches_; }
  // A flag that stops the run when raised (e.g. by a SIGINT handler; null: none). Checked
  // between simulation slices in timing mode and every few thousand warp instructions in
  // functional mode.
  void setInterruptFlag(const std::atomic<bool>* flag) { budget_.setInterruptFlag(flag); }
  // Called about every second of host time while a launch runs (both modes), with how far it
  // has come; the command-line tool prints it. None by default: the library prints nothing.
  void setProgress(gpu::ProgressFn fn) { progress_ = std::move(fn); }
  // Why the run stopped early, if it did.
  std::optional<StopReason> stopped() const { return stopped_; }
  // Host threads (default 1; 0: the cores available). In timing mode they evaluate the SMs'
  // cycles, engaged while they pay (ThreadPolicy::Adaptive) or in every cycle with several SMs
  // to evaluate (Fixed); the results are bit-identical whatever the count and the policy. In
  // the functional engine (functional mode, and what sampled simulation runs there) a launch's
  // CTAs run on all of them at once when the kernel's result does not depend on their order
  // (func/parallel_ctas.hpp); other kernels run on one (docs/architecture.md, "Host threads").
  void setHostThreads(unsigned n, ThreadPolicy policy = ThreadPolicy::Adaptive);
  unsigned hostThreads() const { return hostThreads_; }
  // With several host threads: the kernels whose CTAs the functional engine ran on one, each
  // with the reason (func::serialCtasReason).
  const std::map<std::string, std::string>& serialKernels() const { return serialKernels_; }
  // Host seconds the functional engine has run: functional mode's launches, and in timing mode
  // with sampling the launches or CTAs it fast-forwarded (and extrapolation's trial runs).
  double functionalSeconds() const { return functionalSeconds_; }
  // CTAs of wave-sampled launches the functional engine ran on the other host threads while the
  // cycle-level model ran the launches' first CTAs (docs/sampling.md).
  uint64_t functionalTailCtas() const { return tailCtas_; }
  // Timing mode with pdn.enabled: each launch's droop events, voltage-trace rows and worst-droop
  // window go to `sink` as they are produced instead of into the launch records, whose memory
  // then does not grow with the launches' length (pdn::VoltageReport; null: kept in the
  // records). `sink` must outlive the Device or be detached (nullptr) before it goes.
  void setVoltageSink(pdn::VoltageSink* sink);
  // Each launch's record goes to `sink` when the launch ends, before launches() keeps it without
  // its CTA timeline and power time series, so that the records do not grow with the launches'
  // length (null, the default: they keep everything). `sink` must outlive the Device's launches.
  void setLaunchSink(LaunchSink* sink) { launchSink_ = sink; }
  // The cycle-level model (timing mode only), e.g. to attach observers.
  gpu::TimingEngine* timingEngine() { return timing_; }
  func::ExecStats totalStats() const;
  func::GlobalMemory& memory() { return gmem_; }
  // CTAs of `k` with this block and dynamic shared memory one SM holds at once (CUDA's occupancy
  // calculator): the rule the CTA scheduler applies.
  uint32_t ctasPerSm(const Kernel& k, const Dim3& block, uint32_t dynamicShared) const;
  // Everything the kernels printed with device printf (vprintf), in execution order.
  const std::string& printfOutput() const { return printfOutput_; }

  // What one block of `block` threads of `k` with `sharedBytes` of shared memory (static and
  // dynamic) takes on an SM: its warps, their registers and its shared memory as allocated.
  sm::CtaFootprint footprint(const Kernel& k, const Dim3& block, uint32_t sharedBytes) const;

 private:
  void validateLaunch(const Kernel& k, const Dim3& grid, const Dim3& block,
                      uint32_t dynamicShared) const;
  void validateCooperative(const Kernel& k, const Dim3& grid, const Dim3& block,
                           uint32_t dynamicShared) const;
  std::vector<uint8_t> packArgs(const Kernel& k, const KernelArgs& args) const;
  const ptx::Variable& symbol(const Module& m, const std::string& name, uint64_t offset,
                              uint64_t bytes) const;
  friend class ChildLaunches;
  // A launch, then the launches it makes from device code (each with its own), `launchedBy`
  // the record of the launch that made it.
  void launchOne(const Kernel& k, Dim3 grid, Dim3 block, uint32_t dynamicShared,
                 const KernelArgs& args, const LaunchOptions& options,
                 std::optional<size_t> launchedBy);
  // The launch alone; the launches it makes go to `children`.
  void launchAlone(const Kernel& k, Dim3 grid, Dim3 block, uint32_t dynamicShared,
                   const KernelArgs& args, const LaunchOptions& options, ChildLaunches* children,
                   std::optional<size_t> launchedBy);
  // The launch's state afresh (launch() may run a launch twice under sampling).
  func::LaunchState launchState(const Kernel& k, const Dim3& grid, const Dim3& block,
                                uint32_t dynamicShared, const KernelArgs& args);
  // Runs the CTAs of `L` from linear index `firstCta` on in the functional engine (progress and
  // run limits as launch()).
  // With a `tail` (a wave-sampled launch's last CTAs, run meanwhile on the other host threads),
  // the calling thread runs the CTAs the tail has not, and the tail's results are added.
  void runFunctional(func::LaunchState& L, func::ExecStats& stats, const std::string& label,
                     uint64_t firstCta = 0, gpu::FunctionalTail* tail = nullptr);
  // func::serialCtasReason of `p`, computed once per kernel.
  const std::string& serialCtasReason(const func::Program* p);
  // For a wave-sampled launch of `L` with CTA footprint `f`: the other host threads' run of its
  // last CTAs while the cycle-level model runs the first (null where it does not apply).
  std::unique_ptr<gpu::FunctionalTail> functionalTail(const func::LaunchState& L,
                                                      const sm::CtaFootprint& f);
  // The timing figures of a launch extrapolated from its group's last detailed launch (its record
  // in launches_).
  gpu::TimingResult extrapolated(size_t group, const func::ExecStats& stats, double cycles) const;
  // The host wrote [dst, dst + bytes): the timing model's L2 may take it
  // (l2.host_writes).
  void hostWrote(DevPtr dst, uint64_t bytes);

  PlatformConfig cfg_;
  ExecMode mode_;
  func::GlobalMemory gmem_;
  func::DeviceHeap heap_;
  uint32_t stackBytes_ = func::kDefaultStackBytes;  // device malloc/free
  DevPtr gridWorkspace_ = 0;  // cooperative launches' grid workspace (allocated at the first)
  std::vector<std::unique_ptr<Module>> modules_;
  std::vector<LaunchRecord> launches_;
  gpu::TimingEngine* timing_ = nullptr;
  RunBudget budget_;
  gpu::ProgressFn progress_;
  pdn::VoltageSink* voltageSink_ = nullptr;
  LaunchSink* launchSink_ = nullptr;
  std::optional<StopReason> stopped_;
  std::string stopMessage_;
  std::map<const func::Program*, uint64_t> codeBase_;  // instruction addresses per kernel
  // Sampled simulation (timing mode with sampling.mode kernel): the groups and their detailed
  // launches (whose records in launches_ the extrapolated members scale).
  std::unique_ptr<gpu::KernelSampler> sampler_;
  // Sampled simulation with sampling.warm_l2: the log of a functional run's global accesses
  // (made once, emptied for each use; accessLog() hands it out, null without warming).
  std::unique_ptr<func::AccessLog> accessLog_;
  func::AccessLog* accessLog();
  std::string printfOutput_;
  unsigned hostThreads_ = 1;
  // The functional engine's threads (made at the first launch that runs on several).
  std::unique_ptr<HostWorkers> functionalTeam_;
  std::map<const func::Program*, std::string> serialReasons_;  // serialCtasReason per kernel
  std::map<std::string, std::string> serialKernels_;
  double functionalSeconds_ = 0;
  uint64_t tailCtas_ = 0;  // CTAs functional tails ran (FunctionalTail)
  // Launches from device code (ChildLaunches): made and not yet started, their limit, and the
  // nesting depth of the launch running (0: the host's).
  uint64_t pendingChildLaunches_ = 0;
  uint64_t pendingLaunchLimit_ = kDefaultPendingLaunches;
  uint32_t launchDepth_ = 0;
};

}  // namespace gpusc
