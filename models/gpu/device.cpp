#include "gpu/device.hpp"

#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/host_workers.hpp"
#include "common/strings.hpp"
#include "func/parallel_ctas.hpp"
#include "ptx/parser.hpp"

namespace gpusc {

namespace {
// Whether a kernel reads where its block's reserved shared memory is (%reserved_smem_offset_*).
bool readsReservedShared(const func::Program& p) {
  using ptx::SReg;
  for (const func::SRegSlot& s : p.sregSlots)
    if (s.sreg == SReg::ReservedSmemBegin || s.sreg == SReg::ReservedSmemEnd ||
        s.sreg == SReg::ReservedSmemCap || s.sreg == SReg::ReservedSmemOffset0 ||
        s.sreg == SReg::ReservedSmemOffset1)
      return true;
  return false;
}
}  // namespace

// ---- Module ------------------------------------------------------------------------------------

const Kernel& Module::kernel(const std::string& entry) {
  auto it = kernels_.find(entry);
  if (it != kernels_.end()) return *it->second;
  const ptx::Function* f = ast_->findFunction(entry);
  if (f == nullptr || !f->isEntry) {
    auto names = entryNames();
    throw InputError(fmt::format("{}: no kernel entry '{}'{} (entries: {})", ast_->fileName, entry,
                                 didYouMean(entry, names),
                                 names.empty() ? "none" : join(names, ", ")));
  }
  if (f->isExtern)
    throw InputError(fmt::format("{}: kernel '{}' is only declared", ast_->fileName, entry));
  auto k = std::make_unique<Kernel>();
  k->name = entry;
  k->program = func::decodeKernel(*ast_, *f, syms_);
  if (auto r = allocatedRegisters_.find(entry); r != allocatedRegisters_.end()) {
    k->program->regsPerThread = r->second;
    k->program->regsFromPtxas = true;
  }
  k->module = this;
  return *(kernels_[entry] = std::move(k));
}

std::vector<std::string> Module::entryNames() const {
  std::vector<std::string> out;
  for (const auto& f : ast_->functions)
    if (f->isEntry && !f->isExtern) out.push_back(f->name);
  return out;
}

DevPtr Module::symbolAddress(const std::string& name) const {
  auto it = syms_.globalAddress.find(name);
  if (it == syms_.globalAddress.end())
    throw InputError(fmt::format("{}: no .global variable '{}'", ast_->fileName, name));
  return it->second;
}

uint64_t Module::symbolSize(const std::string& name) const {
  const ptx::Variable* v = ast_->findGlobal(name);
  if (v == nullptr)
    throw InputError(fmt::format("{}: no module-scope variable '{}'", ast_->fileName, name));
  return v->sizeBytes();
}

// ---- Device ------------------------------------------------------------------------------------

Device::Device(PlatformConfig cfg, ExecMode mode)
    : cfg_(std::move(cfg)),
      mode_(mode),
      gmem_(cfg_.memory.device_memory_bytes),
      heap_(gmem_, cfg_.memory.device_heap_bytes),
      budget_(cfg_.limits) {
  if (mode_ == ExecMode::Timing) {
    try {
      timing_ = &gpu::TimingEngine::get(cfg_);
    } catch (const InputError& e) {
      // A rule the model's parts check as they are built (a mesh layout, a regulator's
      // stability): the key's line in the platform file.
      throw InputError(cfg_.locate(e.what()));
    }
    timing_->reset();
    timing_->setThreads(1);  // the engine outlives Devices: each starts from the default
  }
}

void Device::setHostThreads(unsigned n, ThreadPolicy policy) {
  hostThreads_ = n == 0 ? HostWorkers::available() : n;
  if (functionalTeam_ && functionalTeam_->threads() != hostThreads_) functionalTeam_.reset();
  if (timing_ != nullptr) timing_->setThreads(hostThreads_, policy);
}

void Device::setVoltageSink(pdn::VoltageSink* sink) {
  if (timing_ == nullptr) return;
  pdn::Pdn* pdn = timing_->gpu().pdn();
  if (pdn == nullptr) return;
  voltageSink_ = sink;
  pdn->monitor().setSink(sink);
}

// The engine outlives the Device: it keeps no pointer to what the Device was given.
Device::~Device() { setVoltageSink(nullptr); }

DevPtr Device::mallocShared(uint64_t bytes, bool deviceMemory) {
  try {
    return gmem_.allocateShared(bytes, deviceMemory);
  } catch (const InputError& e) {
    throw InputError(cfg_.locate(e.what()));
  }
}

DevPtr Device::malloc(uint64_t bytes) {
  try {
    return gmem_.allocate(bytes);
  } catch (const InputError& e) {
    throw InputError(cfg_.locate(e.what()));  // memory.device_memory_bytes' line
  }
}
void Device::free(DevPtr p) { gmem_.release(p); }
void Device::copyToDevice(DevPtr dst, const void* src, uint64_t bytes) {
  gmem_.write(dst, src, bytes);
  hostWrote(dst, bytes);
}
void Device::copyToHost(void* dst, DevPtr src, uint64_t bytes) { gmem_.read(src, dst, bytes); }
void Device::memset(DevPtr dst, uint8_t value, uint64_t bytes) {
  gmem_.fill(dst, value, bytes);
  hostWrote(dst, bytes);
}
DevPtr Device::createSurface(func::TextureDescriptor d) {
  d.magic = func::kSurfaceMagic;
  return createTexture(d);
}

DevPtr Device::createTexture(const func::TextureDescriptor& d) {
  const bool surface = d.magic == func::kSurfaceMagic;
  const char* what = surface ? "surface object" : "texture object";
  const std::string problem = func::textureDescriptorProblem(d, surface);
  if (!problem.empty()) throw InputError(fmt::format("{}: {}", what, problem));
  const uint64_t span = func::textureSpan(d);
  if (!gmem_.isAllocated(d.base, span))
    throw InputError(fmt::format(
        "{}: its {} bytes of texels at 0x{:x} are not inside one allocation", what, span, d.base));
  const DevPtr p = malloc(sizeof d);
  gmem_.write(p, &d, sizeof d);  // a texture header: not data the caches hold
  return p;
}
void Device::hostWrote(DevPtr dst, uint64_t bytes) {
  if (timing_ != nullptr) timing_->gpu().hostWrote(dst, bytes);
}

const ptx::Variable& Device::symbol(const Module& m, const std::string& name, uint64_t offset,
                                    uint64_t bytes) const {
  const ptx::Variable* v = m.ast().findGlobal(name);
  if (v == nullptr || (v->space != ptx::StateSpace::Global && v->space != ptx::StateSpace::Const)) {
    std::vector<std::string> names;
    for (const auto& g : m.ast().globals)
      if (g->space == ptx::StateSpace::Global || g->space == ptx::StateSpace::Const)
        names.push_back(g->name);
    throw InputError(fmt::format("{}: no .global or .const variable '{}'{}", m.fileName(), name,
                                 didYouMean(name, names)));
  }
  if (offset + bytes > v->sizeBytes())
    throw InputError(fmt::format("{}: {} bytes at offset {} do not fit '{}' ({} bytes)",
                                 m.fileName(), bytes, offset, name, v->sizeBytes()));
  return *v;
}

void Device::copyToSymbol(Module& m, const std::string& name, const void* src, uint64_t bytes,
                          uint64_t offset) {
  const ptx::Variable& v = symbol(m, name, offset, bytes);
  if (v.space == ptx::StateSpace::Global) {
    gmem_.write(m.syms_.globalAddress.at(name) + offset, src, bytes);
    hostWrote(m.syms_.globalAddress.at(name) + offset, bytes);
  } else {
    std::memcpy(m.syms_.constBank.data() + m.syms_.constOffset.at(name) + offset, src, bytes);
  }
}

void Device::copyFromSymbol(const Module& m, const std::string& name, void* dst, uint64_t bytes,
                            uint64_t offset) {
  const ptx::Variable& v = symbol(m, name, offset, bytes);
  if (v.space == ptx::StateSpace::Global) {
    gmem_.read(m.syms_.globalAddress.at(name) + offset, dst, bytes);
  } else {
    std::memcpy(dst, m.syms_.constBank.data() + m.syms_.constOffset.at(name) + offset, bytes);
  }
}

Module& Device::loadModule(std::string_view ptxText, const std::string& fileName,
                           const std::map<std::string, Placement>& placed) {
  auto m = std::make_unique<Module>();
  m->ast_ = ptx::parseModule(ptxText, fileName);
  m->allocatedRegisters_ = ptx::allocatedRegisters(ptxText, fileName);
  func::layoutConstBank(*m->ast_, m->syms_);
  // Module-scope .global variables live in device memory.
  for (const auto& g : m->ast_->globals) {
    if (g->space != ptx::StateSpace::Global) continue;
    if (g->isExtern)
      throw InputError(
          fmt::format("{}: external .global '{}' is not supported", fileName, g->name));
    DevPtr p = 0;
    if (auto at = placed.find(g->name); at != placed.end()) {
      if (g->sizeBytes() > at->second.bytes)
        throw InputError(fmt::format("{}: .global '{}' is {} bytes; {} were allocated for it",
                                     fileName, g->name, g->sizeBytes(), at->second.bytes));
      p = at->second.address;
    } else {
      p = gmem_.allocate(std::max<uint64_t>(1, g->sizeBytes()));
    }
    m->syms_.globalAddress[g->name] = p;
    if (!g->init.empty()) gmem_.write(p, g->init.data(), g->init.size());
  }
  for (const auto& [name, where] : placed)
    if (!m->syms_.globalAddress.count(name))
      throw InputError(
          fmt::format("{}: no .global '{}' to place at {:#x}", fileName, name, where.address));
  // Initialisers holding the address of another variable.
  auto patch = [&](const ptx::Variable& v, auto write) {
    for (const auto& [off, sym] : v.initSymbols) {
      auto it = m->syms_.globalAddress.find(sym.first);
      uint64_t addr;
      if (it != m->syms_.globalAddress.end()) {
        addr = it->second;
      } else if (m->syms_.constOffset.count(sym.first)) {
        addr = func::kConstWindow + m->syms_.constOffset.at(sym.first);
      } else if (auto f = func::functionAddress(*m->ast_, sym.first)) {
        addr = *f;
      } else {
        throw InputError(fmt::format("{}: initialiser of '{}' names unknown symbol '{}'",
                                     v.loc.str(), v.name, sym.first));
      }
      addr += static_cast<uint64_t>(sym.second);
      write(off, addr);
    }
  };
  for (const auto& g : m->ast_->globals) {
    if (g->space == ptx::StateSpace::Global) {
      DevPtr base = m->syms_.globalAddress[g->name];
      patch(*g, [&](uint64_t off, uint64_t addr) {
        gmem_.write(base + off, &addr, std::min<uint64_t>(8, ptx::typeBytes(g->type)));
      });
    } else if (g->space == ptx::StateSpace::Const) {
      uint64_t base = m->syms_.constOffset[g->name];
      patch(*g, [&](uint64_t off, uint64_t addr) {
        std::memcpy(m->syms_.constBank.data() + base + off, &addr,
                    std::min<uint64_t>(8, ptx::typeBytes(g->type)));
      });
    }
  }
  modules_.push_back(std::move(m));
  return *modules_.back();
}

Module& Device::loadModuleFile(const std::string& path) {
  const std::optional<std::string> text = readInputFile(path, "PTX file");
  if (!text) throw InputError(fmt::format("{}: cannot read PTX file", path));
  return loadModule(*text, path);
}

void Device::validateLaunch(const Kernel& k, const Dim3& grid, const Dim3& block,
                            uint32_t dyn) const {
  const func::Program& p = *k.program;
  auto bad = [&](const std::string& msg,
                 LaunchRefused::Reason why = LaunchRefused::Reason::Configuration) {
    throw LaunchRefused(why, fmt::format("launch of {}: {}", k.name, msg));
  };
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) bad("grid dimensions must be at least 1");
  if (block.x == 0 || block.y == 0 || block.z == 0) bad("block dimensions must be at least 1");
  if (grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
    bad(fmt::format("grid ({},{},{}) exceeds the limits (2147483647, 65535, 65535)", grid.x, grid.y,
                    grid.z));
  if (block.x > 1024 || block.y > 1024 || block.z > 64)
    bad(fmt::format("block ({},{},{}) exceeds the limits (1024, 1024, 64)", block.x, block.y,
                    block.z));
  // Code built for compute capability 5.0 or later may assume its SMs' 65,536 registers (CUB
  // and Thrust tune their blocks to them); a platform with fewer refuses such blocks, so the
  // refusal says how to run it.
  const auto registerHint = [&]() -> std::string {
    constexpr uint32_t kModernRegisters = 65536;
    if (cfg_.sm.registers >= kModernRegisters || cfg_.gpu.compute_capability < 50) return {};
    return fmt::format(
        "; SMs of compute capability {}.{}, which the platform reports, have {}, and code tuned "
        "for them (CUB's and Thrust's sorts) may need them: run on a platform with as many "
        "(rtx3070), or add --set sm.registers={}",
        cfg_.gpu.compute_capability / 10, cfg_.gpu.compute_capability % 10, kModernRegisters,
        kModernRegisters);
  };
  const uint64_t threads = block.count();
  const uint64_t maxThreads = std::min<uint64_t>(1024, cfg_.sm.max_threads);
  if (threads > maxThreads)
    bad(
        fmt::format("{} threads per block; the platform allows {} (sm.max_threads {}, at most "
                    "1024 per block)",
                    threads, maxThreads, cfg_.sm.max_threads));
  if (const uint64_t most = p.maxThreadsByDirective(); most > 0 && threads > most)
    bad(fmt::format("{} threads per block; the kernel allows at most {} (.maxntid, CUDA's "
                    "__launch_bounds__)",
                    threads, most),
        LaunchRefused::Reason::Resources);
  if (p.reqntid[0] && (block.x != p.reqntid[0] || (p.reqntid[1] && block.y != p.reqntid[1]) ||
                       (p.reqntid[2] && block.z != p.reqntid[2])))
    bad(fmt::format("the kernel requires a block of {}x{}x{} (.reqntid)", p.reqntid[0],
                    std::max(1u, p.reqntid[1]), std::max(1u, p.reqntid[2])));
  const uint64_t shared = uint64_t(p.dynamicSharedOffset) + dyn;
  if (readsReservedShared(p) && cfg_.sm.shared_reserved_per_cta == 0)
    bad("the kernel reads %reserved_smem_offset registers (the block's reserved shared memory, "
        "which cooperative groups use from compute capability 8.0), but the platform reserves "
        "no shared memory per block (sm.shared_reserved_per_cta is 0; GPUs of compute "
        "capability 8.0 and later reserve 1 KB)");
  const uint32_t perBlock = cfg_.sm.sharedPerBlock();
  if (shared > perBlock)
    bad(fmt::format(
        "{} bytes of shared memory per block ({} static + {} dynamic); a block may have {} "
        "(sm.shared_memory_bytes {} less sm.shared_reserved_per_cta {})",
        shared, p.dynamicSharedOffset, dyn, perBlock, cfg_.sm.shared_memory_bytes,
        cfg_.sm.shared_reserved_per_cta));
  // What one SM must hold for a block to run at all, its warps and their registers: refused in
  // both modes alike (a launch the timing model cannot place fails in functional mode too, as on
  // the platform's hardware).
  const SmConfig& s = cfg_.sm;
  const sm::CtaFootprint f = footprint(k, block, uint32_t(shared));
  if (f.sharedBytes > s.shared_memory_bytes)
    bad(fmt::format("{} bytes of shared memory per block, with sm.shared_reserved_per_cta {} "
                    "rounded up to sm.shared_allocation_granularity {}, are {}; an SM has {} "
                    "(sm.shared_memory_bytes)",
                    shared, s.shared_reserved_per_cta, s.shared_allocation_granularity,
                    f.sharedBytes, s.shared_memory_bytes),
        LaunchRefused::Reason::Resources);
  if (f.registers > s.registers)
    bad(fmt::format(
            "a block of {} threads needs {} registers ({} per thread, each warp's rounded up to "
            "sm.register_allocation_granularity {}); an SM has {} (sm.registers){}",
            f.threads, f.registers, p.regsPerThread, s.register_allocation_granularity, s.registers,
            registerHint()),
        LaunchRefused::Reason::Resources);
  if (const uint32_t most = sm::warpsByRegisters(s, f.registersPerWarp); f.warps > most)
    bad(fmt::format("a block of {} warps needs {} registers per warp ({} per thread, rounded up to "
                    "sm.register_allocation_granularity {}); the SM's {} registers in "
                    "sm.register_partitions {} partitions hold {} such warps{}",
                    f.warps, f.registersPerWarp, p.regsPerThread, s.register_allocation_granularity,
                    s.registers, s.register_partitions, most, registerHint()),
        LaunchRefused::Reason::Resources);
  if (f.warps > s.max_warps)
    bad(fmt::format("a block of {} warps exceeds the SM's {} (sm.max_warps)", f.warps,
                    s.max_warps));
}

void Device::validateCooperative(const Kernel& k, const Dim3& grid, const Dim3& block,
                                 uint32_t dyn) const {
  const uint64_t perSm = ctasPerSm(k, block, dyn);
  const uint64_t resident = perSm * cfg_.gpu.num_sms;
  if (grid.count() > resident)
    throw LaunchRefused(
        LaunchRefused::Reason::CooperativeTooLarge,
        fmt::format(
            "cooperative launch of {}: {} blocks, but the platform holds {} of them at once ({} "
            "per SM x {} SMs, gpu.num_sms), and a cooperative launch needs every block resident",
            k.name, grid.count(), resident, perSm, cfg_.gpu.num_sms));
  // Refused in both modes alike, as a launch the timing model cannot place is.
  if (cfg_.gpu.cta_placement == "congestion-aware")
    throw LaunchRefused(
        LaunchRefused::Reason::Unsupported,
        fmt::format(
            "cooperative launch of {}: gpu.cta_placement congestion-aware may leave blocks waiting "
            "for SMs it stops using, and a cooperative launch needs every block resident; use "
            "round-robin or packed",
            k.name));
}

std::vector<uint8_t> Device::packArgs(const Kernel& k, const KernelArgs& args) const {
  const func::Program& p = *k.program;
  const auto& a = args.args();
  if (a.size() != p.params.size())
    throw InputError(fmt::format("launch of {}: {} arguments given; the kernel takes {}", k.name,
                                 a.size(), p.params.size()));
  std::vector<uint8_t> buf(p.paramBytes, 0);
  for (size_t i = 0; i < a.size(); ++i) {
    const auto& prm = p.params[i];
    if (a[i].bytes.size() != prm.size)
      throw InputError(fmt::format(
          "launch of {}: argument {} ({}) is a {} of {} bytes; parameter '{}' has {} bytes", k.name,
          i, prm.name, a[i].what, a[i].bytes.size(), prm.name, prm.size));
    // Of the right size, a floating-point value for an integer parameter (or the reverse) is
    // still a mistake: the kernel would read its bits as the other kind. Untyped (.bN)
    // parameters and arguments (raw bytes, structs) take anything.
    const std::string& w = a[i].what;
    const bool argFloat = w == "f16" || w == "f32" || w == "f64";
    const bool argInteger = w == "pointer" || (w.size() >= 2 && (w[0] == 'u' || w[0] == 's') &&
                                               std::isdigit(static_cast<unsigned char>(w[1])));
    const std::string pt = prm.type == ptx::Type::None ? "" : ptx::typeName(prm.type) + 1;
    const bool paramFloat = !pt.empty() && pt[0] == 'f';
    const bool paramInteger = !pt.empty() && (pt[0] == 'u' || pt[0] == 's');
    if ((argFloat && paramInteger) || (argInteger && paramFloat))
      throw InputError(fmt::format(
          "launch of {}: argument {} ({}) is a {}; parameter '{}' is a .{} (give it {})", k.name, i,
          prm.name, w, prm.name, pt, paramFloat ? "a floating-point value" : "an integer"));
    std::memcpy(buf.data() + prm.offset, a[i].bytes.data(), prm.size);
  }
  return buf;
}

sm::CtaFootprint Device::footprint(const Kernel& k, const Dim3& block, uint32_t sharedBytes) const {
  const SmConfig& s = cfg_.sm;
  sm::CtaFootprint f;
  f.threads = static_cast<uint32_t>(block.count());
  f.warps = (f.threads + s.warp_size - 1) / s.warp_size;
  // Registers are allocated per warp, in units of the allocation granularity.
  const uint32_t perThread = std::max(1u, k.program->regsPerThread);
  const uint32_t g = s.register_allocation_granularity;
  f.registersPerWarp = (perThread * s.warp_size + g - 1) / g * g;
  f.registers = f.registersPerWarp * f.warps;
  // The static, dynamic and reserved bytes together, rounded up to the allocation unit.
  const uint64_t u = s.shared_allocation_granularity;
  f.sharedBytes = uint32_t((uint64_t(sharedBytes) + s.shared_reserved_per_cta + u - 1) / u * u);
  return f;
}

uint32_t Device::ctasPerSm(const Kernel& k, const Dim3& block, uint32_t dynamicShared) const {
  return sm::ctasPerSm(cfg_.sm,
                       footprint(k, block, k.program->dynamicSharedOffset + dynamicShared));
}

func::LaunchState Device::launchState(const Kernel& k, const Dim3& grid, const Dim3& block,
                                      uint32_t dyn, const KernelArgs& args) {
  func::LaunchState L;
  L.prog = k.program.get();
  L.gmem = &gmem_;
  L.params = packArgs(k, args);
  L.constBank = &k.module->constBank();
  L.grid = grid;
  L.block = block;
  L.dynamicShared = dyn;
  L.sharedBytes = k.program->dynamicSharedOffset + dyn;
  L.reservedShared = cfg_.sm.shared_reserved_per_cta;
  if (readsReservedShared(*k.program)) {
    L.reservedSharedMapped = true;
    L.reservedSharedAt = (L.sharedBytes + 15u) / 16u * 16u;
  }
  L.warpsPerCta = static_cast<uint32_t>((block.count() + func::kWarpSize - 1) / func::kWarpSize);
  L.numSms = cfg_.gpu.num_sms;
  L.residentCtas =
      uint64_t(sm::ctasPerSm(cfg_.sm, footprint(k, block, L.sharedBytes))) * cfg_.gpu.num_sms;
  L.printfLog = &printfOutput_;
  L.heap = &heap_;
  L.stackBytes = stackBytes_;
  L.localBytes = func::localBytesOf(*k.program, stackBytes_);
  // Sampled simulation: the launch's memory units go into its signature.
  L.countMemoryUnits =
      mode_ == ExecMode::Timing && cfg_.sampling.kernels() && !k.program->usesDeviceRuntime;
  return L;
}

func::AccessLog* Device::accessLog() {
  if (!cfg_.sampling.warm_l2 || timing_ == nullptr || !timing_->gpu().hierarchy() ||
      !cfg_.l2.slice.enabled)
    return nullptr;
  if (!accessLog_) {
    // 8 times as many entries as the L2 has 128-byte lines: an entry is one warp instruction's
    // touch of a line, so repeated touches of the same lines take several.
    const uint64_t l2Bytes = uint64_t(cfg_.memory.partitions) * cfg_.l2.slices_per_partition *
                             cfg_.l2.slice.sets * cfg_.l2.slice.ways * cfg_.l2.slice.line_bytes;
    accessLog_ =
        std::make_unique<func::AccessLog>(size_t(8 * (l2Bytes >> func::AccessLog::kLineBits)));
  }
  accessLog_->clear();
  return accessLog_.get();
}

const std::string& Device::serialCtasReason(const func::Program* p) {
  auto why = serialReasons_.find(p);
  if (why == serialReasons_.end())
    why = serialReasons_.emplace(p, func::serialCtasReason(*p)).first;
  return why->second;
}

std::unique_ptr<gpu::FunctionalTail> Device::functionalTail(const func::LaunchState& L,
                                                            const sm::CtaFootprint& f) {
  // A tail costs two copies of the pages the launch touches (its own, and the launch's memory's
  // undo log, to tell what it changed). It is made for launches of at least kLeastWaves waves
  // (the detailed part takes a few), whose CTAs' order cannot change the result, without an
  // instruction limit (which stops at an exact instruction) or memory the host program shares
  // (which it may write meanwhile).
  constexpr uint64_t kLeastWaves = 8;
  if (hostThreads_ < 2 || L.cooperative || cfg_.limits.max_warp_instructions != 0 ||
      gmem_.hasShared())
    return nullptr;
  const uint64_t perWave = uint64_t(sm::ctasPerSm(cfg_.sm, f)) * cfg_.gpu.num_sms;
  if (perWave == 0 || L.grid.count() < kLeastWaves * perWave || !serialCtasReason(L.prog).empty())
    return nullptr;
  gpu::FunctionalTail::Params p;
  p.threads = hostThreads_ - 1;
  p.margin = perWave;
  const func::AccessLog* log = accessLog();
  p.logCapacity = log != nullptr ? log->capacity() : 0;
  auto tail = std::make_unique<gpu::FunctionalTail>(L, gmem_, p);
  tail->start();
  return tail;
}

void Device::runFunctional(func::LaunchState& L, func::ExecStats& stats, const std::string& label,
                           uint64_t firstCta, gpu::FunctionalTail* tail) {
  const Dim3& grid = L.grid;
  const uint64_t ctas = grid.count();
  const auto t0 = std::chrono::steady_clock::now();
  struct Clocked {  // adds the host time spent here, however it ends
    std::chrono::steady_clock::time_point t0;
    double& seconds;
    ~Clocked() {
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  } clocked{t0, functionalSeconds_};
  // The progress after `done` of the launch's CTAs from firstCta on.
  std::function<void(uint64_t)> report;
  if (progress_)
    report = [&](uint64_t done) {
      gpu::LaunchProgress p;
      p.label = label;
      p.ctasDone = static_cast<uint32_t>(firstCta + done);
      p.ctasTotal = static_cast<uint32_t>(ctas);
      p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      p.etaSeconds = p.seconds * double(ctas - firstCta - done) / double(done);
      progress_(p);
    };
  if (tail != nullptr &&
      tail->finish(L, firstCta, stats, &budget_, report, gpu::kProgressPeriodSeconds)) {
    tailCtas_ += tail->ctasRun();
    return;
  }
  // When the CTAs' order cannot change the result and no instruction limit must stop the launch
  // at an exact instruction, several host threads take them at once, and an access log is kept
  // by the last CTAs alone (the others' entries would be overwritten). That spares the others
  // the logging, and the recording of their accesses unless their memory units are counted too
  // (a sampled trial's: the sum is the same in any order).
  const bool logLast = L.accessLog != nullptr;
  if ((hostThreads_ > 1 || logLast) && ctas > firstCta + 1 &&
      cfg_.limits.max_warp_instructions == 0 && !L.cooperative) {
    const std::string& why = serialCtasReason(L.prog);
    if (why.empty()) {
      if (hostThreads_ > 1 && !functionalTeam_)
        functionalTeam_ = std::make_unique<HostWorkers>(hostThreads_);
      if (logLast)
        func::runCtasLoggingTheLast(functionalTeam_.get(), L, firstCta, ctas, stats, &budget_,
                                    report, gpu::kProgressPeriodSeconds);
      else
        func::runCtasInParallel(*functionalTeam_, L, firstCta, ctas, stats, &budget_, report,
                                gpu::kProgressPeriodSeconds);
      return;
    }
    if (hostThreads_ > 1) serialKernels_.emplace(L.prog->name, why);
  }
  if (L.cooperative) {  // every CTA at once, in turns (a grid sync waits for all of them)
    func::Executor ex(L);
    std::vector<func::Cta> all(ctas - firstCta);
    for (uint64_t id = firstCta; id < ctas; ++id)
      ex.initCta(all[id - firstCta], grid.ctaOf(id), id,
                 static_cast<uint32_t>(id % cfg_.gpu.num_sms));
    ex.runCooperative(all, stats, &budget_);
    if (report) report(ctas - firstCta);
    return;
  }
  func::runCtasInOrder(L, firstCta, ctas, stats, &budget_, report, gpu::kProgressPeriodSeconds);
}

namespace {

// Dynamic energy follows the activity (warp instructions, by `act`), static energy the time (by
// `time`); the report then covers `cycles`.
void scaleEnergy(power::PowerReport& p, double act, double time, uint64_t cycles) {
  const auto scale = [&](power::EnergyBreakdown& e) {
    for (auto& b : e.blocks) {
      b.dynamicJ *= act;
      b.staticJ *= time;
    }
  };
  p.cycles = cycles;
  p.seconds *= time;
  scale(p.total);
  for (auto& e : p.perSm) scale(e);
}

}  // namespace

gpu::TimingResult Device::extrapolated(size_t group, const func::ExecStats& stats,
                                       double cycles) const {
  // What the estimate scales: the last detailed launch of the group it is estimated from (its
  // own, or its lender's: one has one before any member is extrapolated, so launches_ is not
  // empty either).
  const LaunchRecord& ref =
      launches_.at(sampler_->detailedLaunches(sampler_->estimatedFrom(group)).back());
  gpu::TimingResult t;
  t.cycles = uint64_t(std::llround(cycles));
  // The cycle-level model did not run: its clock stands where the last launch left it.
  t.startCycle = t.endCycle = launches_.back().timing->endCycle;
  t.coreMhz = cfg_.gpu.clocks.core_mhz;
  if (ref.timing->power) {
    // Dynamic energy follows the activity (warp instructions), static energy the time.
    const uint64_t refInsts = ref.stats.warpInsts, refCycles = ref.timing->cycles;
    const double act = refInsts ? double(stats.warpInsts) / double(refInsts) : 0.0;
    const double time = refCycles ? double(t.cycles) / double(refCycles) : 0.0;
    power::PowerReport p = *ref.timing->power;
    p.perSm.clear();
    p.samples.clear();
    scaleEnergy(p, act, time, t.cycles);
    t.power = std::move(p);
  }
  return t;
}

void Device::launch(const Kernel& k, Dim3 grid, Dim3 block, uint32_t dyn, const KernelArgs& args) {
  launch(k, grid, block, dyn, args, LaunchOptions{});
}

void Device::launch(const Kernel& k, Dim3 grid, Dim3 block, uint32_t dyn, const KernelArgs& args,
                    const LaunchOptions& options) {
  launchOne(k, grid, block, dyn, args, options, std::nullopt);
}

void Device::launchOne(const Kernel& k, Dim3 grid, Dim3 block, uint32_t dyn, const KernelArgs& args,
                       const LaunchOptions& options, std::optional<size_t> launchedBy) {
  // A kernel that launches kernels: its launches run after it (ChildLaunches), each with the
  // launches it makes, at one nesting level deeper.
  std::unique_ptr<ChildLaunches> made;
  if (k.program->launchesKernels) {
    Module* module = nullptr;
    for (const auto& m : modules_)
      if (m.get() == k.module) module = m.get();
    if (module == nullptr) throw InputError("launch of " + k.name + ": its module is not loaded");
    // Every kernel it may launch is decoded now: PTX the engine cannot run stops the launch
    // before it starts, not while its threads run.
    for (const std::string& name : k.program->addressedKernels) module->kernel(name);
    made = std::make_unique<ChildLaunches>(*this, *module, launchDepth_);
  }
  const size_t index = launches_.size();
  launchAlone(k, grid, block, dyn, args, options, made.get(), launchedBy);
  if (!made) return;
  ChildLaunch c;
  while (made->next(c)) {
    const func::Program& p = *c.kernel->program;
    std::vector<uint8_t> bytes(c.bufferBytes);
    gmem_.read(c.buffer, bytes.data(), bytes.size());
    gmem_.release(c.buffer);
    KernelArgs childArgs;
    for (const func::KernelParamInfo& prm : p.params)
      childArgs.raw(bytes.data() + prm.offset, prm.size, "argument");
    ++launchDepth_;
    struct Leave {
      uint32_t& depth;
      ~Leave() { --depth; }
    } leave{launchDepth_};
    launchOne(*c.kernel, c.grid, c.block, c.sharedBytes, childArgs, LaunchOptions{}, index);
  }
}

void Device::launchAlone(const Kernel& k, Dim3 grid, Dim3 block, uint32_t dyn,
                         const KernelArgs& args, const LaunchOptions& options,
                         ChildLaunches* children, std::optional<size_t> launchedBy) {
  validateLaunch(k, grid, block, dyn);
  if (options.cooperative) validateCooperative(k, grid, block, dyn);
  // The grid workspace, as a driver gives it: its size, then the barrier word grid syncs count
  // arrivals in (any start value works: a sync flips its top bit).
  if (options.cooperative && gridWorkspace_ == 0) {
    gridWorkspace_ = gmem_.allocate(8);
    const uint32_t words[2] = {8, 0};
    gmem_.write(gridWorkspace_, words, sizeof words);
  }
  const auto stateOf = [&] {
    func::LaunchState s = launchState(k, grid, block, dyn, args);
    s.cooperative = options.cooperative;
    s.gridWorkspace = options.cooperative ? gridWorkspace_ : 0;
    if (options.cooperative) s.countMemoryUnits = false;  // never sampled (below)
    s.deviceLaunches = children;
    return s;
  };
  func::LaunchState L = stateOf();

  LaunchRecord rec;
  rec.kernel = k.name;
  rec.cooperative = options.cooperative;
  rec.grid = grid;
  rec.block = block;
  rec.dynamicShared = dyn;
  rec.regsPerThread = k.program->regsPerThread;
  rec.regsFromPtxas = k.program->regsFromPtxas;
  rec.ptxRegisters = k.program->numRegSlots;
  rec.registerRows = k.program->numRegRows;
  rec.warpSlots = k.program->numSlots;
  rec.constantRows = static_cast<uint32_t>(k.program->constRows.size() / func::kWarpSize);
  rec.sharedPerCta = L.sharedBytes;
  rec.launchedBy = launchedBy;

  if (stopped_) throw RunStopped(*stopped_, stopMessage_);
  if (auto stop = budget_.check(0, 0)) {  // nothing left for this launch
    stopped_ = stop;
    stopMessage_ = budget_.message(*stop, 0, 0);
    throw RunStopped(*stopped_, stopMessage_);
  }
  auto t0 = std::chrono::steady_clock::now();
  const auto finish = [&] {
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    budget_.spend(rec.timing ? rec.timing->cycles : 0, rec.stats.warpInsts);
    if (launchSink_) {
      launchSink_->launchDone(launches_.size(), rec);
      if (rec.timing) {
        std::vector<sm::CtaRecord>().swap(rec.timing->timeline);
        if (rec.timing->power) std::vector<power::PowerSample>().swap(rec.timing->power->samples);
      }
    }
    launches_.push_back(std::move(rec));
  };
  // A run limit or an interrupt stopped the launch in the functional engine: it ends there.
  const auto finishStopped = [&](const RunStopped& e) {
    rec.stopped = stopped_ = e.reason();
    stopMessage_ = e.what();
    finish();
  };
  // A kernel fault ends the launch too: its record keeps what it ran, and the fault.
  const auto finishFaulted = [&](const KernelFault& e) {
    rec.fault = e.what();
    finish();
  };
  const std::string label = fmt::format("kernel {} ({})", launches_.size() + 1, k.name);
  if (mode_ == ExecMode::Functional) {
    try {
      runFunctional(L, rec.stats, label);
    } catch (const RunStopped& e) {
      finishStopped(e);
      throw;
    } catch (const KernelFault& e) {
      finishFaulted(e);
      throw;
    }
    finish();
    return;
  }

  // Sampled simulation: a launch that a group of its shape would extrapolate runs in the
  // functional engine first, with an undo log of memory; if it joins a group and is not due for
  // detail, that run is its result, else memory is put back and it runs in the cycle-level model.
  // A launch that runs in detail whichever group it joins (or starts) skips that first run: its
  // signature comes from the detailed run.
  // Not a cooperative launch either: its blocks spin at grid syncs for as many instructions as
  // the timing gives, which the functional engine's count would not extrapolate. And no first
  // run while memory is shared with the host program (managed or mapped memory): the host may
  // write it while the launch runs (another host thread, or in answer to the kernel), and
  // putting memory back would undo those writes; such a launch runs in detail at once.
  const bool sampling =
      cfg_.sampling.enabled() && !k.program->usesDeviceRuntime && !options.cooperative;
  const bool kernels = sampling && cfg_.sampling.kernels();
  if (kernels && !sampler_) sampler_ = std::make_unique<gpu::KernelSampler>(cfg_.sampling);
  const std::string identity = k.module->fileName() + ":" + k.name;
  std::optional<gpu::KernelSampler::Decision> decision;
  if (kernels && !gmem_.hasShared() &&
      !sampler_->detailWhereverItJoins(
          gpu::LaunchSignature::of(identity, grid, block, dyn, func::ExecStats{}))) {
    // Ends the log on every way out: kept when the trial is the launch's result (or it stopped).
    struct UndoLog {
      func::GlobalMemory& m;
      explicit UndoLog(func::GlobalMemory& g) : m(g) { m.beginUndoLog(); }
      ~UndoLog() {
        if (m.logging()) m.endUndoLog();
      }
    } log(gmem_);
    const size_t printed = printfOutput_.size();
    func::ExecStats trial;
    L.accessLog = accessLog();  // an extrapolated launch warms the L2 with its accesses
    try {
      runFunctional(L, trial, label);
    } catch (const RunStopped& e) {
      rec.stats = trial;
      finishStopped(e);
      throw;
    } catch (const KernelFault& e) {
      rec.stats = trial;
      finishFaulted(e);
      throw;
    }
    decision = sampler_->decide(gpu::LaunchSignature::of(identity, grid, block, dyn, trial));
    std::optional<gpu::KernelSampler::Estimate> estimate;
    if (!decision->detail) estimate = sampler_->estimate(decision->group, trial.warpInsts);
    // A launch whose estimate reaches the cycle limit runs in detail instead, so that the run
    // stops at the limit's cycle as a run without sampling does, not past it.
    if (estimate && uint64_t(std::llround(estimate->cycles)) >= budget_.cyclesLeft(0))
      estimate.reset();
    if (estimate) {
      const gpu::KernelSampler::Estimate& e = *estimate;
      rec.stats = trial;
      rec.timing = extrapolated(decision->group, trial, e.cycles);
      SampledLaunch sl;
      sl.grouped = true;
      sl.group = decision->group;
      sl.detail = false;
      const size_t from = sampler_->estimatedFrom(decision->group);
      sl.detailedFrom = sampler_->detailedLaunches(from);
      if (from != decision->group) sl.lender = from;  // borrowed
      sl.cpi = e.cpi;
      sl.boundPct = e.bound.pct;
      sl.boundFrom = e.bound.from;
      rec.sampled = std::move(sl);
      if (L.accessLog != nullptr) timing_->gpu().warmL2(*L.accessLog);
      finish();
      return;
    }
    gmem_.undo();
    printfOutput_.resize(printed);
    L = stateOf();
  }

  const sm::CtaFootprint f = footprint(k, block, L.sharedBytes);
  auto it = codeBase_.find(k.program.get());
  if (it == codeBase_.end())
    it =
        codeBase_
            .emplace(k.program.get(), sm::FetchUnit::kCodeBase + (uint64_t(codeBase_.size()) << 24))
            .first;
  if (!gpu::TimingEngine::isCurrent(timing_))
    throw InputError(
        "launch of " + k.name +
        ": this Device's platform is no longer elaborated: a Device with another platform (or "
        "a SystemC context of the testbench's own) was created after it, and a process "
        "simulates one platform at a time; create the Devices one after another");
  if (voltageSink_) voltageSink_->beginLaunch(launches_.size());
  // Wave sampling: the sampler may stop the launch's CTAs from starting once its rate is stable;
  // the functional engine then runs the rest (from the first that did not start: CTAs start in
  // linear order).
  std::optional<gpu::WaveSampler> waves;
  std::unique_ptr<gpu::FunctionalTail> tail;
  if (sampling && cfg_.sampling.waves()) {
    waves.emplace(cfg_.sampling.wave_stable_pct, cfg_.sampling.wave_windows);
    waves->limitCycles(budget_.cyclesLeft(0));
    tail = functionalTail(L, f);
  }
  try {
    rec.timing = timing_->run(L, rec.stats, f, it->second, label, &budget_, &progress_,
                              waves ? &*waves : nullptr, tail.get());
  } catch (const KernelFault& e) {
    finishFaulted(e);
    throw;
  }
  // The timing stopped at a run limit (in the cycle-level model, or a wave-sampled launch's
  // extrapolated rest reaching the cycle limit): the launch ends there.
  const auto finishTimingStopped = [&] {
    rec.stopped = stopped_ = rec.timing->stopped;
    stopMessage_ = budget_.message(*stopped_, rec.timing->cycles, rec.stats.warpInsts);
    finish();
    throw RunStopped(*stopped_, stopMessage_);
  };
  if (rec.timing->stopped) finishTimingStopped();
  std::optional<WaveSample> waveSample;
  if (waves && waves->stopped()) {
    WaveSample w;
    w.ctasDetailed = waves->ctasDetailed();
    w.ctasTotal = grid.count();
    w.ctasPerWave = waves->ctasPerWave();
    w.detailedCycles = rec.timing->cycles;
    w.detailedInsts = rec.stats.warpInsts;
    for (const gpu::WaveSampler::Window& x : waves->windows()) w.waveIpc.push_back(x.ipc());
    w.warmupWaves = waves->warmupWindows();
    func::ExecStats rest;
    // The memory units per access in the launch's signature come from its detailed CTAs:
    // counting them slows the functional engine.
    L.countMemoryUnits = false;
    L.accessLog = accessLog();  // the rest of the launch warms the L2 with its accesses
    try {
      runFunctional(L, rest, label, w.ctasDetailed, tail.get());
    } catch (const RunStopped& e) {
      rec.stats.add(rest);
      finishStopped(e);
      throw;
    } catch (const KernelFault& e) {
      rec.stats.add(rest);
      finishFaulted(e);
      throw;
    }
    if (L.accessLog != nullptr) timing_->gpu().warmL2(*L.accessLog);
    const gpu::WaveSampler::Estimate e = waves->estimate(w.detailedCycles, rest.warpInsts);
    rec.stats.add(rest);
    w.extrapolatedCycles = e.extrapolated;
    w.ipc = e.ipc;
    w.wavesCompared = e.half;
    w.driftPct = e.driftPct;
    w.boundPct = e.boundPct;
    gpu::TimingResult& t = *rec.timing;
    t.cycles = uint64_t(std::llround(e.cycles));
    // The cut kept the launch's end before the cycle limit at the waves' mean length
    // (WaveSampler::limitCycles); should the extrapolation still reach the limit, the launch
    // stops there, as a run without sampling would.
    if (t.cycles >= budget_.cyclesLeft(0)) {
      t.cycles = budget_.cyclesLeft(0);
      t.stopped = StopReason::MaxCycles;
    }
    if (t.power) {
      const double act =
          w.detailedInsts ? double(rec.stats.warpInsts) / double(w.detailedInsts) : 0;
      const double time = w.detailedCycles ? double(t.cycles) / double(w.detailedCycles) : 0;
      scaleEnergy(*t.power, act, time, t.cycles);
    }
    waveSample = std::move(w);
  }
  if (sampling) {
    SampledLaunch sl;
    if (kernels) {
      if (!decision)
        decision =
            sampler_->decide(gpu::LaunchSignature::of(identity, grid, block, dyn, rec.stats));
      if (const std::optional<double> check = sampler_->recordDetailed(
              decision->group, launches_.size(), rec.stats.warpInsts, rec.timing->cycles))
        sl.checkErrorPct = 100.0 * *check;  // a check of borrowing
      sl.grouped = true;
      sl.group = decision->group;
    }
    sl.waves = std::move(waveSample);
    rec.sampled = std::move(sl);
  } else if (cfg_.sampling.enabled()) {
    // Sampling leaves it alone: it ran in full detail, and the run's counts say so.
    SampledLaunch sl;
    sl.notSampled = options.cooperative ? "cooperative launch"
                                        : "device runtime (printf, assert, malloc, free, "
                                          "launches)";
    rec.sampled = std::move(sl);
  }
  if (rec.timing->stopped) finishTimingStopped();
  finish();
}

func::ExecStats Device::totalStats() const {
  func::ExecStats t;
  for (const auto& l : launches_) t.add(l.stats);
  return t;
}

}  // namespace gpusc
