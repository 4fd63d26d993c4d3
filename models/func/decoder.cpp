#include "func/decoder.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/strings.hpp"
#include "func/cfg.hpp"
#include "func/handlers.hpp"
#include "func/ptx_support.hpp"
#include "ptx/parser.hpp"

namespace gpusc::func {

using namespace handlers;
using ptx::Function;
using ptx::Instruction;
using ptx::Operand;
using ptx::SReg;
using ptx::StateSpace;
using ptx::Type;
using ptx::Variable;

namespace {

uint64_t alignUp(uint64_t v, uint64_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

// The modifiers of one instruction; each decoder takes the ones it understands and anything
// left over makes the instruction unsupported.
class ModList {
 public:
  explicit ModList(const std::vector<std::string>& mods) {
    for (const auto& m : mods) mods_.push_back({m, false});
  }
  bool take(std::string_view m) {
    for (auto& e : mods_)
      if (!e.used && e.text == m) {
        e.used = true;
        return true;
      }
    return false;
  }
  // Takes the first unused modifier among `options`; returns its index or -1.
  int takeOne(std::initializer_list<std::string_view> options) {
    for (auto& e : mods_) {
      if (e.used) continue;
      int i = 0;
      for (auto o : options) {
        if (e.text == o) {
          e.used = true;
          return i;
        }
        ++i;
      }
    }
    return -1;
  }
  // Takes every type modifier, in order.
  std::vector<Type> takeTypes() {
    std::vector<Type> out;
    for (auto& e : mods_) {
      if (e.used) continue;
      if (auto t = ptx::typeFromName(e.text)) {
        e.used = true;
        out.push_back(*t);
      }
    }
    return out;
  }
  // Cache, scope, ordering and eviction-hint modifiers: no functional effect.
  void takeMemoryHints() {
    for (auto& e : mods_)
      if (!e.used && isMemoryHint(e.text)) e.used = true;
  }
  bool allUsed() const {
    for (const auto& e : mods_)
      if (!e.used) return false;
    return true;
  }

 private:
  struct Entry {
    std::string text;
    bool used;
  };
  std::vector<Entry> mods_;
};

Round roundFrom(int idx) {
  static const Round table[] = {Round::Rn,  Round::Rz,  Round::Rm,  Round::Rp,
                                Round::Rni, Round::Rzi, Round::Rmi, Round::Rpi};
  return idx < 0 ? Round::Default : table[idx];
}

bool isIntType(Type t) {
  switch (t) {
    case Type::B16:
    case Type::B32:
    case Type::B64:
    case Type::U16:
    case Type::U32:
    case Type::U64:
    case Type::S16:
    case Type::S32:
    case Type::S64:
      return true;
    default:
      return false;
  }
}

// Generic-address window bases of .global .shared .local .const .param .shared::cta (global
// addresses are generic addresses).
constexpr uint64_t kSpaceWindow[] = {
    0, kSharedWindow, kLocalWindow, kConstWindow, kParamWindow, kSharedWindow};

bool isHalfType(Type t) {
  return t == Type::F16 || t == Type::F16x2 || t == Type::BF16 || t == Type::BF16x2;
}

// The unsigned type of the same width (for plain copies).
Type bitsType(Type t) {
  switch (ptx::typeBytes(t)) {
    case 1:
      return Type::U8;
    case 2:
      return Type::U16;
    case 4:
      return Type::U32;
    default:
      return Type::U64;
  }
}

// Whether the lanes of the instruction's member mask wait for each other at it (sm_70 and later).
bool isWarpSync(const ptx::Instruction& in) {
  const std::string& op = in.opcode;
  if (op == "shfl" || op == "vote" || op == "match" || op == "redux" || op == "elect")
    return in.hasMod(".sync");
  return (op == "bar" || op == "barrier") && in.hasMod(".warp");
}

// InstInfo::aluOp of a decoded instruction (its class is decided: cvt with an f64 side is DpAdd).
AluOp aluOpOf(const ptx::Instruction& in, InstClass cls) {
  const std::string& op = in.opcode;
  if (op == "popc" || op == "clz" || op == "brev" || op == "bfind") return AluOp::BitCount;
  const auto has = [&](std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (in.hasMod(n)) return true;
    return false;
  };
  if (op == "cvt" && cls == InstClass::FpAdd) {  // the packing forms have no integer type
    const bool integer = has({".s8", ".s16", ".s32", ".s64", ".u8", ".u16", ".u32", ".u64"});
    const bool toIntegral = has({".rni", ".rzi", ".rmi", ".rpi"});
    return integer || toIntegral ? AluOp::Convert : AluOp::Other;
  }
  if ((op == "setp" || op == "set") && cls == InstClass::FpAdd && in.hasMod(".f32"))
    return AluOp::FpCompare;
  if ((op == "min" || op == "max") && cls == InstClass::FpMax && in.hasMod(".f32"))
    return AluOp::FpCompare;
  return AluOp::Other;
}

class Decoder {
 public:
  // `rowOf`, when given, places PTX register r (numbered in declaration order, function by
  // function) in register row rowOf[r] of `numRows` rows; else each register has its own row.
  // `firstRow`, with `rowOf`, gives each function's first row (its rows are
  // [firstRow[f], firstRow[f + 1])).
  Decoder(const ptx::Module& m, const Function& entry, const ModuleSymbols& syms,
          const std::vector<uint32_t>* rowOf = nullptr, uint32_t numRows = 0,
          const std::vector<uint32_t>* firstRow = nullptr)
      : m_(m),
        entry_(entry),
        syms_(syms),
        p_(std::make_unique<Program>()),
        rowOf_(rowOf),
        numRows_(numRows),
        firstRow_(firstRow) {}

  // The first PTX register of each function (in Program::functions order), and the register
  // count after the last: what shareRegisterRows needs. Valid after run().
  const std::vector<uint32_t>& firstRegOfFunction() const { return firstReg_; }

  std::unique_ptr<Program> run() {
    p_->name = entry_.name;
    p_->fileName = m_.fileName;
    std::copy(std::begin(entry_.reqntid), std::end(entry_.reqntid), p_->reqntid);
    std::copy(std::begin(entry_.maxntid), std::end(entry_.maxntid), p_->maxntid);
    collectFunctions(&entry_, {});
    findRecursion();
    p_->launchesKernels = !deviceCalls_.empty();
    p_->usesDeviceRuntime =
        vprintf_ != nullptr || assertFail_ != nullptr || !heapFuncs_.empty() || p_->launchesKernels;
    assignRegisters();
    layoutShared();
    layoutLocal();
    layoutParams();
    labels_.resize(funcs_.size());
    frameUsed_.assign(funcs_.size(), 0);
    // Recursive functions' frames come from the thread's stack.
    if (std::find(recursive_.begin(), recursive_.end(), 1) != recursive_.end() &&
        stackSlot_ == kNoPc)
      stackSlot_ = newSlot();
    for (size_t i = 0; i < funcs_.size(); ++i) decodeFunction(i);
    fixup();
    p_->stackBase = p_->localBytesPerThread;
    p_->stackSlot = stackSlot_;
    if (stackSlot_ != kNoPc) p_->localBytesPerThread += kStackBytes;
    makeFrames();
    p_->scratchSlot = newSlot();
    p_->numSlots = nextSlot_;
    p_->constRows.resize(size_t(constSlots_.size()) * kWarpSize);
    for (auto& [bits, slot] : constSlots_)
      std::fill_n(p_->constRows.begin() + size_t(slot - kConstSlotBase) * kWarpSize, kWarpSize,
                  bits);
    for (auto& [sreg, slot] : sregSlots_) p_->sregSlots.push_back({slot, sreg});
    for (size_t i = 0; i < funcs_.size(); ++i) computeReconvergence(*p_, p_->functions[i]);
    p_->regsPerThread = estimateRegisters(*p_, regWidth_);
    return std::move(p_);
  }

 private:
  // ---- errors ----
  [[noreturn]] void unsupported(const Instruction& in) const {
    throw InputError(ptx::unsupportedMessage(in.loc, in.text));
  }
  [[noreturn]] void unsupported(const Instruction& in, const std::string& why) const {
    throw InputError(ptx::unsupportedMessage(in.loc, in.text) + " (" + why + ")");
  }
  [[noreturn]] void invalid(const ptx::SourceLoc& loc, const std::string& msg) const {
    throw InputError(fmt::format("{}: error: {}", loc.str(), msg));
  }

  // ---- functions reachable from the entry ----
  void collectFunctions(const Function* f, std::vector<const Function*> stack) {
    if (std::find(funcs_.begin(), funcs_.end(), f) != funcs_.end()) return;
    stack.push_back(f);
    funcs_.push_back(f);
    for (const auto& s : f->body) {
      if (s.kind != ptx::Statement::Kind::Instr || s.instr.opcode != "call") continue;
      if (s.instr.callee.empty()) {
        // Through a pointer: every function it may reach. Whether a call through a pointer
        // recurses is known only when it runs (the executor faults then).
        for (const Function* t : indirectTargets(*f, s.instr))
          if (std::find(stack.begin(), stack.end(), t) == stack.end()) collectFunctions(t, stack);
        continue;
      }
      const Function* callee = m_.findFunction(s.instr.callee);
      if (callee == nullptr)
        invalid(s.instr.loc, "call to undeclared function '" + s.instr.callee + "'");
      if (callee->isExtern && isVprintf(callee)) {
        vprintf_ = callee;
        continue;
      }
      if (callee->isExtern && isAssertFail(callee)) {
        assertFail_ = callee;
        continue;
      }
      if (callee->isExtern && isSetConditional(callee)) {
        setConditional_ = callee;
        continue;
      }
      if (callee->isExtern && isRuntimeHeap(callee)) {
        if (std::find(heapFuncs_.begin(), heapFuncs_.end(), callee) == heapFuncs_.end())
          heapFuncs_.push_back(callee);
        continue;
      }
      if (callee->isExtern && callee->name.rfind("__cudaCDP2", 0) == 0) {
        if (!deviceCallOf(callee))
          unsupported(s.instr, "the device runtime's '" + callee->name.substr(10) +
                                   "' in device code (gpusc's device runtime has kernel launches, "
                                   "cudaStreamCreateWithFlags, cudaStreamDestroy, cudaGetDevice, "
                                   "cudaGetLastError and cudaPeekAtLastError)");
        if (std::find(deviceCalls_.begin(), deviceCalls_.end(), callee) == deviceCalls_.end())
          deviceCalls_.push_back(callee);
        continue;
      }
      if (callee->isExtern)
        unsupported(s.instr, "'" + callee->name + "' has no body in this module");
      if (callee->isEntry) invalid(s.instr.loc, "call to kernel entry '" + callee->name + "'");
      if (std::find(stack.begin(), stack.end(), callee) == stack.end())
        collectFunctions(callee, stack);
    }
  }

  // The functions on a cycle of calls (recursive_): direct calls, and calls through a pointer to
  // each function the call may reach.
  void findRecursion() {
    const size_t n = funcs_.size();
    std::vector<std::vector<size_t>> calls(n);
    for (size_t i = 0; i < n; ++i)
      for (const auto& s : funcs_[i]->body) {
        if (s.kind != ptx::Statement::Kind::Instr || s.instr.opcode != "call") continue;
        const std::vector<const Function*> callees =
            s.instr.callee.empty() ? indirectTargets(*funcs_[i], s.instr)
                                   : std::vector<const Function*>{m_.findFunction(s.instr.callee)};
        for (const Function* c : callees) {
          auto it = std::find(funcs_.begin(), funcs_.end(), c);
          if (it != funcs_.end()) calls[i].push_back(size_t(it - funcs_.begin()));
        }
      }
    recursive_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      std::vector<char> seen(n, 0);
      std::vector<size_t> work(calls[i]);
      while (!work.empty() && !recursive_[i]) {
        const size_t v = work.back();
        work.pop_back();
        if (v == i) recursive_[i] = 1;
        if (seen[v]) continue;
        seen[v] = 1;
        work.insert(work.end(), calls[v].begin(), calls[v].end());
      }
    }
  }
  bool isRecursive(const Function* f) const {
    auto it = std::find(funcs_.begin(), funcs_.end(), f);
    return it != funcs_.end() && recursive_[size_t(it - funcs_.begin())];
  }

  // Program::frames, once the functions are decoded. An activation takes its .local variables
  // and 16 bytes (its return address and its caller's frame: the least a GPU's calling
  // convention keeps on the stack) from the thread's stack.
  void makeFrames() {
    for (size_t fi = 0; fi < funcs_.size(); ++fi) {
      if (!recursive_[fi]) continue;
      RecursiveFrame fr;
      fr.rowBegin = firstRow_ ? (*firstRow_)[fi] : firstReg_[fi];
      fr.rowEnd = firstRow_ ? (*firstRow_)[fi + 1] : firstReg_[fi + 1];
      fr.predBegin = firstPred_[fi];
      fr.predEnd = firstPred_[fi + 1];
      fr.paramBegin = paramRange_[fi].first;
      fr.paramEnd = paramRange_[fi].second;
      fr.frameBytes = frameBytes_[fi] + 16;
      if (frameUsed_[fi]) fr.frameRow = regOf_.at(frameVars_[fi].get()).row;
      p_->functions[fi].frame = static_cast<uint32_t>(p_->frames.size());
      p_->frames.push_back(fr);
    }
  }

  // An instruction of recursive function fi that names one of its .local variables, rewritten to
  // address the variable in the lane's current frame: [var + k] becomes [%frame + offset + k],
  // and `mov.u64 d, var` becomes `add.u64 d, %frame, offset`.
  bool namesFrameVariable(const Instruction& in) const {
    for (const Operand& o : in.ops)
      if ((o.kind == Operand::Kind::Address || o.kind == Operand::Kind::Symbol) && o.var &&
          frameOff_.count(o.var))
        return true;
    return false;
  }
  Instruction inFrame(const Instruction& in, size_t fi) {
    Instruction out = in;
    const Variable* frame = frameVars_[fi].get();
    for (Operand& o : out.ops) {
      if (!o.var || !frameOff_.count(o.var)) continue;
      const uint64_t off = frameOff_.at(o.var);
      if (o.kind == Operand::Kind::Address) {
        // A local address in a register would read as a generic one elsewhere.
        if (!in.hasMod(".local"))
          unsupported(in, "'" + o.var->name + "', a local variable of the recursive function '" +
                              funcs_[fi]->name +
                              "', is addressed here other than by a .local access");
        o.var = frame;
        o.name = frame->name;
        o.imm += static_cast<int64_t>(off);
        continue;
      }
      if (o.kind != Operand::Kind::Symbol) continue;
      const bool wide = in.hasMod(".u64") || in.hasMod(".b64") || in.hasMod(".s64");
      if (in.opcode != "mov" || in.ops.size() != 2 || &o != &out.ops[1] || !wide)
        unsupported(in, "the address of '" + o.var->name +
                            "', a local variable of the recursive "
                            "function '" +
                            funcs_[fi]->name +
                            "', is taken here; gpusc takes it with mov.u64 or as a memory address");
      Operand base = o;
      base.kind = Operand::Kind::Reg;
      base.var = frame;
      base.name = frame->name;
      base.imm = 0;
      Operand offset;
      offset.kind = Operand::Kind::Imm;
      offset.imm = static_cast<int64_t>(off);
      offset.loc = o.loc;
      out.opcode = "add";
      out.mods = {".u64"};
      out.ops = {in.ops[0], base, offset};
      return out;
    }
    return out;
  }

  // The parameter and result sizes of a function (or of a .callprototype).
  static bool sameSizes(const std::vector<std::unique_ptr<Variable>>& vars,
                        const std::vector<uint64_t>& sizes) {
    if (vars.size() != sizes.size()) return false;
    for (size_t i = 0; i < vars.size(); ++i)
      if (vars[i]->sizeBytes() != sizes[i]) return false;
    return true;
  }
  static std::vector<uint64_t> sizesOf(const std::vector<Operand>& ops) {
    std::vector<uint64_t> out;
    for (const auto& o : ops) out.push_back(o.var ? o.var->sizeBytes() : 0);
    return out;
  }

  // Functions whose address the module takes: named in an initialiser or as an operand of an
  // instruction other than a direct call.
  const std::vector<const Function*>& addressTaken() {
    if (addressTakenDone_) return addressTaken_;
    addressTakenDone_ = true;
    auto add = [&](const std::string& name) {
      const Function* f = m_.findFunction(name);
      if (f && !f->isEntry && !f->isExtern &&
          std::find(addressTaken_.begin(), addressTaken_.end(), f) == addressTaken_.end())
        addressTaken_.push_back(f);
    };
    for (const auto& g : m_.globals)
      for (const auto& [off, sym] : g->initSymbols) add(sym.first);
    for (const auto& f : m_.functions)
      for (const auto& s : f->body)
        if (s.kind == ptx::Statement::Kind::Instr && s.instr.opcode != "call")
          for (const auto& o : s.instr.ops)
            if (o.kind == Operand::Kind::Symbol && o.var == nullptr) add(o.name);
    return addressTaken_;
  }

  // The functions an indirect call may reach: its .calltargets list, or every function whose
  // address is taken and whose parameters match its .callprototype. Checks the call's own
  // argument and result sizes against them.
  std::vector<const Function*> indirectTargets(const Function& f, const Instruction& in) {
    const auto args = sizesOf(in.callArgs), rets = sizesOf(in.callRets);
    std::vector<const Function*> out;
    if (auto t = f.callTargets.find(in.callTable); t != f.callTargets.end()) {
      for (const auto& name : t->second) {
        const Function* callee = m_.findFunction(name);
        if (callee == nullptr || callee->isEntry)
          invalid(in.loc,
                  "'" + name + "' in .calltargets '" + in.callTable + "' is not a function");
        if (callee->isExtern) unsupported(in, "'" + callee->name + "' has no body in this module");
        if (!sameSizes(callee->params, args) || !sameSizes(callee->returns, rets))
          invalid(in.loc, fmt::format("call through .calltargets '{}' passes {} arguments and {} "
                                      "results that do not match '{}'",
                                      in.callTable, args.size(), rets.size(), callee->name));
        if (std::find(out.begin(), out.end(), callee) == out.end()) out.push_back(callee);
      }
      return out;
    }
    auto p = f.callPrototypes.find(in.callTable);
    if (p == f.callPrototypes.end())
      invalid(in.loc, "'" + in.callTable + "' is not a .callprototype or .calltargets label");
    if (p->second.params != args || p->second.returns != rets)
      invalid(in.loc, fmt::format("call passes {} arguments and {} results that do not match "
                                  ".callprototype '{}'",
                                  args.size(), rets.size(), in.callTable));
    for (const Function* callee : addressTaken())
      if (sameSizes(callee->params, args) && sameSizes(callee->returns, rets))
        out.push_back(callee);
    return out;
  }

  // The CUDA runtime's device heap: `void* malloc(size_t)` and `void free(void*)`.
  static bool isRuntimeHeap(const Function* f) {
    if (f->params.size() != 1 || f->params[0]->sizeBytes() != 8) return false;
    if (f->name == "malloc") return f->returns.size() == 1 && f->returns[0]->sizeBytes() == 8;
    return f->name == "free" && f->returns.empty();
  }

  // The device runtime's calls gpusc answers (handlers::DeviceCall), by name and by the sizes
  // of their arguments and result as cuda_device_runtime_api.h declares them.
  static std::optional<handlers::DeviceCall> deviceCallOf(const Function* f) {
    using handlers::DeviceCall;
    struct Known {
      const char* name;
      DeviceCall call;
      std::vector<uint64_t> params;
      uint64_t result;
    };
    static const Known known[] = {
        {"GetParameterBufferV2", DeviceCall::GetParameterBufferV2, {8, 12, 12, 4}, 8},
        {"GetParameterBuffer", DeviceCall::GetParameterBuffer, {8, 8}, 8},
        {"LaunchDeviceV2", DeviceCall::LaunchDeviceV2, {8, 8}, 4},
        {"LaunchDeviceV2_ptsz", DeviceCall::LaunchDeviceV2, {8, 8}, 4},
        {"LaunchDevice", DeviceCall::LaunchDevice, {8, 8, 12, 12, 4, 8}, 4},
        {"LaunchDevice_ptsz", DeviceCall::LaunchDevice, {8, 8, 12, 12, 4, 8}, 4},
        {"GetLastError", DeviceCall::GetLastError, {}, 4},
        {"PeekAtLastError", DeviceCall::PeekAtLastError, {}, 4},
        {"StreamCreateWithFlags", DeviceCall::StreamCreateWithFlags, {8, 4}, 4},
        {"StreamDestroy", DeviceCall::StreamDestroy, {8}, 4},
        {"GetDevice", DeviceCall::GetDevice, {8}, 4},
    };
    if (f->name.rfind("__cudaCDP2", 0) != 0) return std::nullopt;
    const std::string name = f->name.substr(10);
    for (const Known& k : known) {
      if (name != k.name || f->params.size() != k.params.size() || f->returns.size() > 1) continue;
      bool sizes = f->returns.empty() || f->returns[0]->sizeBytes() == k.result;
      for (size_t i = 0; i < k.params.size(); ++i)
        sizes = sizes && f->params[i]->sizeBytes() == k.params[i];
      if (sizes) return k.call;
    }
    return std::nullopt;
  }

  // A graph's conditional node's value, set by a kernel:
  // `cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned value)`.
  static bool isSetConditional(const Function* f) {
    return f->name == "cudaGraphSetConditional" && f->params.size() == 2 && f->returns.empty() &&
           f->params[0]->sizeBytes() == 8 && f->params[1]->sizeBytes() == 4;
  }

  // Device printf: the CUDA runtime's `vprintf(const char* format, void* args)`.
  static bool isVprintf(const Function* f) {
    return f->name == "vprintf" && f->params.size() == 2 && f->returns.size() <= 1 &&
           f->params[0]->sizeBytes() == 8 && f->params[1]->sizeBytes() == 8 &&
           (f->returns.empty() || f->returns[0]->sizeBytes() == 4);
  }

  // Device assert: the CUDA runtime's `__assertfail(const char* message, const char* file,
  // unsigned line, const char* function, size_t charSize)`.
  static bool isAssertFail(const Function* f) {
    return f->name == "__assertfail" && f->params.size() == 5 && f->returns.empty() &&
           f->params[0]->sizeBytes() == 8 && f->params[1]->sizeBytes() == 8 &&
           f->params[2]->sizeBytes() == 4 && f->params[3]->sizeBytes() == 8;
  }

  uint32_t newSlot() { return nextSlot_++; }

  void assignRegisters() {
    uint32_t reg = 0;
    frameVars_.resize(funcs_.size());
    for (size_t fi = 0; fi < funcs_.size(); ++fi) {
      const Function* f = funcs_[fi];
      firstReg_.push_back(reg);
      firstPred_.push_back(p_->numPreds);
      // A recursive function with .local variables: a hidden register holds each lane's frame.
      if (recursive_[fi] && std::any_of(f->locals.begin(), f->locals.end(), [](const auto& v) {
            return v->space == StateSpace::Local;
          })) {
        auto v = std::make_unique<Variable>();
        v->name = "%frame";
        v->type = Type::U64;
        v->loc = f->loc;
        regOf_[v.get()] = {rowOf_ ? (*rowOf_)[reg] : reg, reg};
        ++reg;
        regWidth_.push_back(2);
        frameVars_[fi] = std::move(v);
      }
      for (const auto& v : f->locals) {
        if (v->space != StateSpace::Reg) continue;
        if (v->vecWidth != 1 || v->type == Type::B128)
          invalid(v->loc, "vector and 128-bit registers are not supported");
        if (v->type == Type::Pred) {
          predOf_[v.get()] = p_->numPreds++;
        } else {
          regOf_[v.get()] = {rowOf_ ? (*rowOf_)[reg] : reg, reg};
          ++reg;
          regWidth_.push_back(ptx::typeBytes(v->type) > 4 ? 2 : 1);
        }
      }
      for (const auto& v : f->params) {
        if (v->space == StateSpace::Reg) invalid(v->loc, ".reg parameters are not supported");
      }
    }
    firstReg_.push_back(reg);
    firstPred_.push_back(p_->numPreds);
    p_->numRegSlots = reg;
    p_->numRegRows = nextSlot_ = rowOf_ ? numRows_ : reg;
  }

  void layoutShared() {
    uint64_t off = 0;
    uint64_t dynAlign = 16;
    bool hasExtern = false;
    auto place = [&](const Variable* v) {
      if (v->isExtern || (!v->dims.empty() && v->dims.back() == 0)) {
        hasExtern = true;
        dynAlign = std::max<uint64_t>(dynAlign, v->alignment());
        externShared_.push_back(v);
        return;
      }
      off = alignUp(off, v->alignment());
      addrOf_[v] = off;
      if (v->sizeBytes() > UINT32_MAX - off)
        invalid(v->loc,
                fmt::format("shared variable '{}' ends past 4 GiB of shared memory", v->name));
      off += v->sizeBytes();
    };
    // Module-level .shared variables: only those the kernel's functions name. nvcc demotes a
    // kernel's __shared__ arrays into its body, except under -rdc=true for templates (.weak
    // .shared at module scope), where a linked module holds every kernel's arrays; a GPU's
    // linker gives each kernel only the ones it reaches.
    std::unordered_set<const Variable*> used;
    for (const Function* f : funcs_)
      for (const auto& s : f->body)
        if (s.kind == ptx::Statement::Kind::Instr)
          for (const auto& o : s.instr.ops) {
            used.insert(o.var);
            for (const auto& e : o.elems) used.insert(e.var);  // a vector's (one level)
          }
    for (const auto& g : m_.globals)
      if (g->space == StateSpace::Shared && (g->isExtern || used.count(g.get()))) place(g.get());
    for (const Function* f : funcs_)
      for (const auto& v : f->locals)
        if (v->space == StateSpace::Shared) place(v.get());
    p_->sharedStaticBytes = static_cast<uint32_t>(off);
    p_->dynamicSharedOffset = static_cast<uint32_t>(hasExtern ? alignUp(off, dynAlign) : off);
    for (const Variable* v : externShared_) addrOf_[v] = p_->dynamicSharedOffset;
  }

  void layoutLocal() {
    uint64_t off = 0;
    frameBytes_.assign(funcs_.size(), 0);
    for (size_t fi = 0; fi < funcs_.size(); ++fi) {
      const Function* f = funcs_[fi];
      if (recursive_[fi]) {  // in each activation's frame, on the thread's stack
        uint64_t at = 0;
        for (const auto& v : f->locals)
          if (v->space == StateSpace::Local) {
            at = alignUp(at, v->alignment());
            frameOff_[v.get()] = at;
            constexpr uint64_t kMaxLocalBytes = 512 * 1024;  // as in the static layout below
            if (v->sizeBytes() > kMaxLocalBytes - std::min(at, kMaxLocalBytes))
              invalid(v->loc, fmt::format("local variable '{}' of the recursive function '{}' "
                                          "ends past the 512 KiB of local memory a thread has",
                                          v->name, f->name));
            at += v->sizeBytes();
          }
        frameBytes_[fi] = static_cast<uint32_t>(alignUp(at, 16));
        continue;
      }
      for (const auto& v : f->locals)
        if (v->space == StateSpace::Local) {
          off = alignUp(off, v->alignment());
          addrOf_[v.get()] = off;
          // CUDA's limit of local memory per thread (every architecture since Fermi).
          constexpr uint64_t kMaxLocalBytes = 512 * 1024;
          if (v->sizeBytes() > kMaxLocalBytes - std::min(off, kMaxLocalBytes))
            invalid(v->loc, fmt::format("local variable '{}' ends past the 512 KiB of local "
                                        "memory a thread has",
                                        v->name));
          off += v->sizeBytes();
        }
    }
    p_->localBytesPerThread = static_cast<uint32_t>(alignUp(off, 8));
  }

  void layoutParams() {
    uint64_t off = 0;
    for (const auto& v : entry_.params) {
      off = alignUp(off, v->alignment());
      addrOf_[v.get()] = off;
      spaceOf_[v.get()] = MemSpace::KernelParam;
      p_->params.push_back({v->name, static_cast<uint32_t>(off),
                            static_cast<uint32_t>(v->sizeBytes()), v->alignment(), v->type});
      off += v->sizeBytes();
    }
    p_->paramBytes = static_cast<uint32_t>(off);
    // Per-thread call parameter area: formal parameters and return values of every callee,
    // and the call-site .param variables, which share their callee's storage.
    uint64_t cp = 0;
    auto placeCall = [&](const Variable* v) {
      cp = alignUp(cp, std::max<uint64_t>(4, v->alignment()));
      addrOf_[v] = cp;
      spaceOf_[v] = MemSpace::CallParam;
      cp += v->sizeBytes();
    };
    // A recursive function's formal parameters and results, and the variables of its calls to
    // recursive functions and through pointers (its own, copied to and from the callee's), lie
    // together: an activation saves them.
    paramRange_.assign(funcs_.size(), {0, 0});
    // A call whose variables have storage of their own (copied to and from its callee's).
    auto placeOwn = [&](const Instruction& in) {
      for (const auto* list : {&in.callArgs, &in.callRets})
        for (const Operand& o : *list) {
          checkParamOperand(o, in);
          if (!addrOf_.count(o.var)) placeCall(o.var);
        }
    };
    auto placeCallSites = [&](const Function* f) {
      for (const auto& s : f->body)
        if (s.kind == ptx::Statement::Kind::Instr && s.instr.opcode == "call" &&
            (s.instr.callee.empty() || isRecursive(m_.findFunction(s.instr.callee))))
          placeOwn(s.instr);
    };
    for (size_t i = 1; i < funcs_.size(); ++i) {
      paramRange_[i].first = static_cast<uint32_t>(cp);
      for (const auto& v : funcs_[i]->params) placeCall(v.get());
      for (const auto& v : funcs_[i]->returns) placeCall(v.get());
      if (recursive_[i]) placeCallSites(funcs_[i]);
      paramRange_[i].second = static_cast<uint32_t>(cp);
    }
    if (vprintf_) {
      for (const auto& v : vprintf_->params) placeCall(v.get());
      for (const auto& v : vprintf_->returns) placeCall(v.get());
    }
    if (assertFail_)
      for (const auto& v : assertFail_->params) placeCall(v.get());
    for (const Function* f : heapFuncs_) {
      for (const auto& v : f->params) placeCall(v.get());
      for (const auto& v : f->returns) placeCall(v.get());
    }
    for (const Function* f : deviceCalls_) {
      for (const auto& v : f->params) placeCall(v.get());
      for (const auto& v : f->returns) placeCall(v.get());
    }
    if (setConditional_)
      for (const auto& v : setConditional_->params) placeCall(v.get());
    for (const Function* f : funcs_) {
      for (const auto& s : f->body) {
        if (s.kind != ptx::Statement::Kind::Instr || s.instr.opcode != "call") continue;
        const Instruction& in = s.instr;
        if (in.callee.empty()) {  // indirect
          placeOwn(in);
          continue;
        }
        const Function* callee = m_.findFunction(in.callee);
        if (in.callArgs.size() != callee->params.size() ||
            in.callRets.size() != callee->returns.size())
          invalid(in.loc,
                  fmt::format("call to '{}' passes {} arguments and {} results; it takes {} and {}",
                              callee->name, in.callArgs.size(), in.callRets.size(),
                              callee->params.size(), callee->returns.size()));
        if (isRecursive(callee)) {
          placeOwn(in);
          recursiveCall(in, callee);
          continue;
        }
        auto alias = [&](const Operand& o, const Variable* formal) {
          checkParamOperand(o, in);
          checkArgumentSize(o, formal);
          auto it = addrOf_.find(o.var);
          if (it != addrOf_.end() && it->second != addrOf_[formal])
            unsupported(in, "a .param variable passed to two different functions");
          addrOf_[o.var] = addrOf_[formal];
          spaceOf_[o.var] = MemSpace::CallParam;
        };
        for (size_t i = 0; i < in.callArgs.size(); ++i)
          alias(in.callArgs[i], callee->params[i].get());
        for (size_t i = 0; i < in.callRets.size(); ++i)
          alias(in.callRets[i], callee->returns[i].get());
      }
    }
    // .param variables declared in a body and never passed to a call still need storage.
    for (const Function* f : funcs_)
      for (const auto& v : f->locals)
        if (v->space == StateSpace::Param && !addrOf_.count(v.get())) placeCall(v.get());
    p_->callParamBytesPerThread = static_cast<uint32_t>(alignUp(cp, 8));
  }

  // A call's argument or result: a .param variable, of its formal's size.
  void checkParamOperand(const Operand& o, const Instruction& in) const {
    if (o.kind != Operand::Kind::Symbol || o.var == nullptr || o.var->space != StateSpace::Param)
      unsupported(in, "call arguments must be .param variables");
  }
  void checkArgumentSize(const Operand& o, const Variable* formal) const {
    if (o.var->sizeBytes() != formal->sizeBytes())
      invalid(o.loc, fmt::format("argument '{}' has {} bytes; '{}' expects {}", o.var->name,
                                 o.var->sizeBytes(), formal->name, formal->sizeBytes()));
  }

  // A direct call to a recursive function: its variables' offsets beside the callee's.
  void recursiveCall(const Instruction& in, const Function* callee) {
    RecursiveCall rc;
    rc.func =
        static_cast<uint32_t>(std::find(funcs_.begin(), funcs_.end(), callee) - funcs_.begin());
    auto add = [&](const Operand& o, const Variable* formal, std::vector<uint32_t>& mine,
                   std::vector<uint32_t>& theirs, std::vector<uint32_t>& bytes) {
      checkArgumentSize(o, formal);
      mine.push_back(static_cast<uint32_t>(addrOf_.at(o.var)));
      theirs.push_back(static_cast<uint32_t>(addrOf_.at(formal)));
      bytes.push_back(static_cast<uint32_t>(formal->sizeBytes()));
    };
    for (size_t i = 0; i < in.callArgs.size(); ++i)
      add(in.callArgs[i], callee->params[i].get(), rc.args, rc.params, rc.argBytes);
    for (size_t i = 0; i < in.callRets.size(); ++i)
      add(in.callRets[i], callee->returns[i].get(), rc.rets, rc.returns, rc.retBytes);
    recursiveCallOf_[&in] = static_cast<uint32_t>(p_->recursiveCalls.size());
    p_->recursiveCalls.push_back(std::move(rc));
  }

  // ---- operands ----
  uint32_t constSlot(uint64_t bits) {
    auto it = constSlots_.find(bits);
    if (it != constSlots_.end()) return it->second;
    const uint32_t s = kConstSlotBase + static_cast<uint32_t>(constSlots_.size());
    constSlots_[bits] = s;
    return s;
  }

  static uint64_t truncate(uint64_t v, Type t) {
    unsigned b = ptx::typeBytes(t);
    return b >= 8 ? v : (v & ((1ull << (8 * b)) - 1));
  }

  uint64_t immBits(const Operand& o, Type t) {
    if (o.kind == Operand::Kind::Imm) {
      if (t == Type::F32) {
        float f = static_cast<float>(o.imm);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        return b;
      }
      if (t == Type::F64) {
        double f = static_cast<double>(o.imm);
        uint64_t b;
        std::memcpy(&b, &f, 8);
        return b;
      }
      return truncate(static_cast<uint64_t>(o.imm), t);
    }
    // FImm
    if (t == Type::F32) {
      if (o.fbits == 32) return o.fraw & 0xffffffffu;
      float f = static_cast<float>(o.fval);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    if (t == Type::F64) {
      if (o.fbits == 64) return o.fraw;
      double d = o.fval;
      uint64_t b;
      std::memcpy(&b, &d, 8);
      return b;
    }
    // A float literal used as raw bits of an integer-typed operand (mov.b32 %r, 0f3F800000).
    return truncate(o.fraw, t);
  }

  // The address a symbol stands for, and the space it lives in.
  std::pair<uint64_t, MemSpace> symbolAddress(const Operand& o, const Instruction& in) {
    const Variable* v = o.var;
    if (v == nullptr) {
      if (auto a = functionAddress(m_, o.name)) {
        const Function* f = m_.findFunction(o.name);
        auto& named = p_->addressedKernels;
        if (f->isEntry && std::find(named.begin(), named.end(), f->name) == named.end())
          named.push_back(f->name);
        return {*a, MemSpace::None};
      }
      invalid(o.loc, "'" + o.name + "' is not a declared variable");
    }
    switch (v->space) {
      case StateSpace::Global: {
        auto it = syms_.globalAddress.find(v->name);
        if (it == syms_.globalAddress.end())
          invalid(o.loc, "global '" + v->name + "' has no address");
        return {it->second, MemSpace::Global};
      }
      case StateSpace::Const: {
        auto it = syms_.constOffset.find(v->name);
        if (it == syms_.constOffset.end())
          invalid(o.loc, "constant '" + v->name + "' has no address");
        return {it->second, MemSpace::Const};
      }
      case StateSpace::Shared:
        return {addrOf_.at(v), MemSpace::Shared};
      case StateSpace::Local:
        if (frameOff_.count(v))
          unsupported(in, "the address of '" + v->name +
                              "', a local variable of a recursive function, is taken here; gpusc "
                              "takes it with mov.u64 or as a memory address");
        return {addrOf_.at(v), MemSpace::Local};
      case StateSpace::Param: {
        auto it = addrOf_.find(v);
        if (it == addrOf_.end()) invalid(o.loc, "parameter '" + v->name + "' is not in scope");
        return {it->second, spaceOf_.at(v)};
      }
      default:
        invalid(o.loc, "'" + v->name + "' is a register, not an address");
    }
  }

  // A data register operand: its row, and (recorded in InstInfo) its PTX register number.
  struct RegRef {
    uint32_t row, reg;
  };
  RegRef dataReg(const Operand& o, const Instruction& in) {
    if (o.kind != Operand::Kind::Reg) invalid(o.loc, "expected a register");
    auto it = regOf_.find(o.var);
    if (it == regOf_.end()) {
      if (o.var->type == Type::Pred)
        invalid(o.loc, "'" + o.var->name + "' is a predicate; expected a data register");
      unsupported(in);
    }
    return it->second;
  }

  uint32_t src(const Operand& o, Type t, const Instruction& in, InstInfo& info) {
    switch (o.kind) {
      case Operand::Kind::Reg: {
        RegRef r = dataReg(o, in);
        info.regReads.push_back(r.reg);
        return r.row;
      }
      case Operand::Kind::Imm:
      case Operand::Kind::FImm:
        return constSlot(immBits(o, t));
      case Operand::Kind::SReg: {
        if (ptx::sregIsDynamic(o.sreg)) unsupported(in, o.name + " may only be read with mov");
        auto it = sregSlots_.find(o.sreg);
        if (it != sregSlots_.end()) return it->second;
        uint32_t s = newSlot();
        sregSlots_[o.sreg] = s;
        return s;
      }
      case Operand::Kind::Symbol:
        return constSlot(symbolAddress(o, in).first);
      default:
        invalid(o.loc, "expected a value operand");
    }
  }

  uint32_t dst(const Operand& o, const Instruction& in, InstInfo& info) {
    if (o.kind == Operand::Kind::Sink) return sinkSlot();
    RegRef r = dataReg(o, in);
    info.regWrites.push_back(r.reg);
    return r.row;
  }

  uint32_t sinkSlot() {
    if (sink_ == kNoPc) sink_ = newSlot();
    return sink_;
  }

  uint32_t predIndex(const Operand& o) {
    if (o.kind != Operand::Kind::Reg || o.var->type != Type::Pred)
      invalid(o.loc, "expected a predicate register");
    return predOf_.at(o.var);
  }

  uint32_t predSrc(const Operand& o, Inst& x, unsigned srcIndex, InstInfo& info) {
    uint32_t p = predIndex(o);
    if (o.negate) x.predSrcNeg |= uint8_t(1u << srcIndex);
    info.predReads.push_back(p);
    return p;
  }

  uint32_t predDst(const Operand& o, InstInfo& info) {
    if (o.kind == Operand::Kind::Sink) {
      if (sinkPred_ == kNoPc) sinkPred_ = p_->numPreds++;
      return sinkPred_;
    }
    uint32_t p = predIndex(o);
    info.predWrites.push_back(p);
    return p;
  }

  // [reg + off] / [sym + off] / [imm]: base slot, offset, and the symbol's space if any.
  struct Address {
    uint32_t base;
    int64_t offset;
    MemSpace symbolSpace = MemSpace::None;
  };

  Address address(const Operand& o, const Instruction& in, InstInfo& info) {
    if (o.kind != Operand::Kind::Address) invalid(o.loc, "expected an address [..]");
    if (!o.elems.empty()) invalid(o.loc, "only a texture fetch has coordinates in its address");
    if (!o.hasBase) return {constSlot(0), o.imm};
    if (o.var && o.var->space == StateSpace::Reg) {
      if (o.var->type == Type::Pred) invalid(o.loc, "a predicate cannot be an address");
      Operand reg = o;
      reg.kind = Operand::Kind::Reg;
      RegRef r = dataReg(reg, in);
      info.regReads.push_back(r.reg);
      return {r.row, o.imm};
    }
    Operand sym = o;
    sym.kind = Operand::Kind::Symbol;
    auto [addr, space] = symbolAddress(sym, in);
    return {constSlot(0), static_cast<int64_t>(addr) + o.imm, space};
  }

  // ---- instruction decoding ----
  void decodeFunction(size_t fi) {
    const Function& f = *funcs_[fi];
    FunctionInfo info;
    info.name = f.name;
    info.isEntry = f.isEntry;
    info.begin = static_cast<uint32_t>(p_->code.size());
    for (const auto& s : f.body) {
      if (s.kind == ptx::Statement::Kind::Label) {
        labels_[fi][s.label] = static_cast<uint32_t>(p_->code.size());
        continue;
      }
      Inst x;
      InstInfo ii;
      ii.loc = s.instr.loc;
      ii.text = s.instr.text;
      ii.opcode = s.instr.opcode;
      for (const auto& m : s.instr.mods) ii.opcode += m;
      x.func = static_cast<uint32_t>(fi);
      if (s.instr.guard) {
        x.guard = static_cast<int32_t>(predOf_.at(s.instr.guard));
        x.guardNeg = s.instr.guardNegated;
        ii.predReads.push_back(static_cast<uint32_t>(x.guard));
      }
      if (frameVars_[fi] && s.instr.opcode != "call" && namesFrameVariable(s.instr)) {
        frameUsed_[fi] = 1;
        const Instruction framed = inFrame(s.instr, fi);
        decode(framed, x, ii, fi);
        ii.aluOp = aluOpOf(framed, x.cls);
      } else {
        decode(s.instr, x, ii, fi);
        ii.aluOp = aluOpOf(s.instr, x.cls);
      }
      x.warpSync = x.flow == Flow::Normal && isWarpSync(s.instr);
      p_->code.push_back(x);
      p_->info.push_back(std::move(ii));
    }
    // Every function ends in an implicit return (labels may point just past the last instruction).
    Inst r;
    r.flow = f.isEntry ? Flow::Exit : Flow::Ret;
    r.cls = f.isEntry ? InstClass::Exit : InstClass::Ret;
    r.func = static_cast<uint32_t>(fi);
    InstInfo ri;
    ri.loc = f.loc;
    ri.text = "(implicit return at end of " + f.name + ")";
    ri.opcode = f.isEntry ? "exit" : "ret";
    p_->code.push_back(r);
    p_->info.push_back(std::move(ri));
    info.end = static_cast<uint32_t>(p_->code.size());
    p_->functions.push_back(info);
  }

  void decode(const Instruction& in, Inst& x, InstInfo& info, size_t fi) {
    ModList mods(in.mods);
    const std::string& op = in.opcode;
    // The supported-instruction table (func/ptx_support.cpp) is the first gate.
    const PtxOpcodeInfo* known = findPtxOpcode(op);
    const std::string why = ptxUnsupportedReason(op, in.mods);
    if (!why.empty()) unsupported(in, why);
    if (known == nullptr) unsupported(in);
    for (const auto& m : in.mods)
      if (!ptxModifierAllowed(*known, m)) unsupported(in);
    if (known->group != std::string_view("Video")) {
      rejectVideoOperands(in.ops, op);
      rejectVideoOperands(in.callArgs, op);
      rejectVideoOperands(in.callRets, op);
    }
    auto nops = [&](size_t n) {
      if (in.ops.size() != n)
        invalid(in.loc, fmt::format("'{}' takes {} operands, found {}", op, n, in.ops.size()));
    };
    auto oneType = [&]() {
      auto ts = mods.takeTypes();
      if (ts.size() != 1) invalid(in.loc, fmt::format("'{}' needs exactly one type", op));
      return ts[0];
    };
    auto finish = [&]() {
      if (!mods.allUsed()) unsupported(in);
      if (x.flow == Flow::Normal && x.fn == nullptr) unsupported(in);
    };
    auto set3 = [&](Type t) {  // d, a, b
      nops(3);
      x.dst[0] = dst(in.ops[0], in, info);
      x.src[0] = src(in.ops[1], t, in, info);
      x.src[1] = src(in.ops[2], t, in, info);
      x.ndst = 1;
      x.nsrc = 2;
    };
    auto set2 = [&](Type t) {  // d, a
      nops(2);
      x.dst[0] = dst(in.ops[0], in, info);
      x.src[0] = src(in.ops[1], t, in, info);
      x.ndst = 1;
      x.nsrc = 1;
    };
    auto set4 = [&](Type t, Type tc) {  // d, a, b, c
      nops(4);
      x.dst[0] = dst(in.ops[0], in, info);
      x.src[0] = src(in.ops[1], t, in, info);
      x.src[1] = src(in.ops[2], t, in, info);
      x.src[2] = src(in.ops[3], tc, in, info);
      x.ndst = 1;
      x.nsrc = 3;
    };
    auto floatFlags = [&]() {
      uint8_t f = 0;
      if (mods.take(".ftz")) f |= kFtz;
      if (mods.take(".sat")) f |= kSat;
      return f;
    };
    auto takeRound = [&]() { return roundFrom(mods.takeOne({".rn", ".rz", ".rm", ".rp"})); };
    auto fpClass = [&](Type t, InstClass sp, InstClass dp) { return t == Type::F64 ? dp : sp; };

    // ---- arithmetic ----
    if (op == "add" || op == "sub") {
      bool isAdd = op == "add";
      bool cc = mods.take(".cc");
      Round r = takeRound();
      uint8_t ff = floatFlags();
      Type t = oneType();
      if (isHalfType(t)) {
        if (cc) unsupported(in);
        decodeHalf(in, x, info, isAdd ? HalfOp::Add : HalfOp::Sub, t, r, false, false, ff);
        finish();
        return;
      }
      set3(t);
      if (ptx::isFloat(t)) {
        x.fn = floatBinary(isAdd ? FBin::Add : FBin::Sub, t, r, ff);
        x.mode2 = static_cast<uint8_t>(r);
        x.cls = fpClass(t, InstClass::FpAdd, InstClass::DpAdd);
      } else {
        if (r != Round::Default || (ff & kFtz)) unsupported(in);
        if (ff & kSat) {
          if (t != Type::S32) unsupported(in);
          x.fn = saturatingAddSub(isAdd);
        } else {
          x.fn = intBinary(
              cc ? (isAdd ? IntBin::AddCC : IntBin::SubCC) : (isAdd ? IntBin::Add : IntBin::Sub),
              t);
        }
        x.cls = InstClass::IntAdd;
      }
    } else if (op == "addc" || op == "subc") {
      bool cc = mods.take(".cc");
      Type t = oneType();
      set3(t);
      bool isAdd = op == "addc";
      x.fn = intBinary(
          isAdd ? (cc ? IntBin::AddCCC : IntBin::AddC) : (cc ? IntBin::SubCCC : IntBin::SubC), t);
      x.cls = InstClass::IntAdd;
    } else if (op == "mul" || op == "mul24") {
      int hl = mods.takeOne({".lo", ".hi", ".wide"});
      Round r = takeRound();
      uint8_t ff = floatFlags();
      Type t = oneType();
      if (isHalfType(t)) {
        if (hl >= 0 || op != "mul") unsupported(in);
        decodeHalf(in, x, info, HalfOp::Mul, t, r, false, false, ff);
        finish();
        return;
      }
      set3(t);
      if (ptx::isFloat(t)) {
        if (hl >= 0) unsupported(in);
        x.fn = floatBinary(FBin::Mul, t, r, ff);
        x.mode2 = static_cast<uint8_t>(r);
        x.cls = fpClass(t, InstClass::FpMul, InstClass::DpMul);
      } else {
        if (r != Round::Default || ff) unsupported(in);
        if (op == "mul24") {
          if (hl == 2) unsupported(in);
          x.fn = intBinary(hl == 1 ? IntBin::Mul24Hi : IntBin::Mul24Lo, t);
        } else {
          if (hl < 0 && t != Type::U16 && t != Type::S16 && !isIntType(t)) unsupported(in);
          x.fn = intBinary(hl == 1 ? IntBin::MulHi : hl == 2 ? IntBin::MulWide : IntBin::MulLo, t);
        }
        x.cls = InstClass::IntMul;
      }
    } else if (op == "mad" || op == "mad24" || op == "madc") {
      bool madc = op == "madc";
      int hl = mods.takeOne({".lo", ".hi", ".wide"});
      bool cc = mods.take(".cc");
      Round r = takeRound();
      uint8_t ff = floatFlags();
      Type t = oneType();
      if (ptx::isFloat(t)) {
        if (hl >= 0 || cc || madc) unsupported(in);
        set4(t, t);
        x.fn = floatFma(t, r, ff);
        x.mode2 = static_cast<uint8_t>(r);
        x.cls = fpClass(t, InstClass::FpMad, InstClass::DpMad);
      } else {
        if (r != Round::Default || (ff & kFtz)) unsupported(in);
        Type tc = t;
        if (hl == 2) {
          tc = ptx::isSigned(t) ? (t == Type::S16 ? Type::S32 : Type::S64)
                                : (ptx::typeBytes(t) == 2 ? Type::U32 : Type::U64);
        }
        set4(t, tc);
        // .sat: only mad.hi.s32 and mad24.hi.s32, the sum clamped to the s32 range.
        const bool sat = (ff & kSat) != 0;
        if (sat && (t != Type::S32 || hl != 1 || cc || madc)) unsupported(in);
        if (sat) {
          x.fn = intTernary(op == "mad24" ? IntTer::Mad24HiSat : IntTer::MadHiSat, t);
        } else if (op == "mad24") {
          x.fn = intTernary(hl == 1 ? IntTer::Mad24Hi : IntTer::Mad24Lo, t);
        } else if (madc) {
          x.fn = intTernary(hl == 1 ? (cc ? IntTer::MadcHiCC : IntTer::MadcHi)
                                    : (cc ? IntTer::MadcLoCC : IntTer::MadcLo),
                            t);
        } else if (cc) {
          x.fn = intTernary(hl == 1 ? IntTer::MadHiCC : IntTer::MadLoCC, t);
        } else {
          x.fn = intTernary(hl == 1 ? IntTer::MadHi : hl == 2 ? IntTer::MadWide : IntTer::MadLo, t);
        }
        x.cls = InstClass::IntMad;
      }
    } else if (op == "sad") {
      Type t = oneType();
      set4(t, t);
      x.fn = intTernary(IntTer::Sad, t);
      x.cls = InstClass::IntAdd;
    } else if (op == "fma") {
      Round r = takeRound();
      bool relu = mods.take(".relu");
      uint8_t ff = floatFlags();
      Type t = oneType();
      if (isHalfType(t)) {
        decodeHalf(in, x, info, HalfOp::Fma, t, r, false, relu, ff);
        finish();
        return;
      }
      if (relu) unsupported(in);
      if (r == Round::Default) invalid(in.loc, "fma requires a rounding modifier");
      set4(t, t);
      x.fn = floatFma(t, r, ff);
      x.mode2 = static_cast<uint8_t>(r);
      x.cls = fpClass(t, InstClass::FpMad, InstClass::DpMad);
    } else if (op == "div") {
      bool approx = mods.take(".approx");
      bool full = mods.take(".full");
      Round r = takeRound();
      uint8_t ff = floatFlags();
      Type t = oneType();
      set3(t);
      if (ptx::isFloat(t)) {
        x.fn = floatBinary(approx ? FBin::DivApprox : full ? FBin::DivFull : FBin::Div, t, r, ff);
        x.mode2 = static_cast<uint8_t>(r);
        x.cls = fpClass(t, InstClass::FpDiv, InstClass::DpDiv);
      } else {
        if (approx || full || r != Round::Default || ff) unsupported(in);
        x.fn = intBinary(IntBin::Div, t);
        x.cls = InstClass::IntDiv;
      }
    } else if (op == "rem") {
      Type t = oneType();
      set3(t);
      x.fn = intBinary(IntBin::Rem, t);
      x.cls = InstClass::IntDiv;
    } else if (op == "abs" || op == "neg") {
      uint8_t ff = floatFlags();
      Type t = oneType();
      if (isHalfType(t)) {
        decodeHalf(in, x, info, op == "abs" ? HalfOp::Abs : HalfOp::Neg, t, Round::Default, false,
                   false, ff);
        finish();
        return;
      }
      set2(t);
      if (ptx::isFloat(t)) {
        x.fn = floatUnary(op == "abs" ? FUn::Abs : FUn::Neg, t, Round::Default, ff);
        x.cls = fpClass(t, InstClass::FpAdd, InstClass::DpAdd);
      } else {
        if (ff) unsupported(in);
        x.fn = intUnary(op == "abs" ? IntUn::Abs : IntUn::Neg, t);
        x.cls = InstClass::IntAdd;
      }
    } else if (op == "min" || op == "max") {
      bool nan = mods.take(".NaN");
      bool relu = mods.take(".relu");
      bool xorSign = mods.take(".xorsign");
      bool abs = mods.take(".abs");
      int packed = mods.takeOne({".u16x2", ".s16x2"});
      uint8_t ff = floatFlags();
      bool isMin = op == "min";
      if (packed >= 0) {
        if (!mods.takeTypes().empty() || nan || ff || xorSign || abs) unsupported(in);
        set3(Type::B32);
        x.fn = intMinMax16x2(isMin, packed == 1, relu);
        x.cls = InstClass::IntMax;
        finish();
        return;
      }
      Type t = oneType();
      const bool three = in.ops.size() == 4;
      // .xorsign needs .abs; .abs alone only on the three-input form, which is .f32 only.
      if (xorSign != abs && !(abs && !xorSign && three)) unsupported(in);
      if (three && (t != Type::F32 || xorSign || relu || (ff & kSat))) unsupported(in);
      if (xorSign && (relu || (ff & kSat) || t == Type::F64 || !ptx::isFloat(t))) unsupported(in);
      if (isHalfType(t)) {
        decodeHalf(in, x, info, isMin ? HalfOp::Min : HalfOp::Max, t, Round::Default, nan, relu, ff,
                   xorSign);
        finish();
        return;
      }
      if (three || xorSign) {
        x.dst[0] = dst(in.ops[0], in, info);
        x.ndst = 1;
        for (size_t i = 1; i < in.ops.size(); ++i) x.src[i - 1] = src(in.ops[i], t, in, info);
        x.nsrc = static_cast<uint8_t>(in.ops.size() - 1);
        x.mode = static_cast<uint8_t>((isMin ? kMmMin : 0) | (nan ? kMmNaN : 0) |
                                      (abs ? kMmAbs : 0) | (xorSign ? kMmXorSign : 0));
        x.flags = ff;
        x.fn = floatMinMaxF32();
        x.cls = InstClass::FpMax;
        finish();
        return;
      }
      set3(t);
      if (relu) {
        if (t != Type::S32) unsupported(in);
        x.fn = intMinMax32Relu(isMin);
        x.cls = InstClass::IntMax;
        finish();
        return;
      }
      if (ptx::isFloat(t)) {
        x.fn = floatBinary(
            nan ? (isMin ? FBin::MinNaN : FBin::MaxNaN) : (isMin ? FBin::Min : FBin::Max), t,
            Round::Default, ff);
        x.cls = fpClass(t, InstClass::FpMax, InstClass::DpMax);
      } else {
        if (nan || ff) unsupported(in);
        x.fn = intBinary(isMin ? IntBin::Min : IntBin::Max, t);
        x.cls = InstClass::IntMax;
      }
    } else if (op == "copysign") {
      Type t = oneType();
      set3(t);
      x.fn = floatBinary(FBin::Copysign, t, Round::Default, 0);
      x.cls = fpClass(t, InstClass::FpAdd, InstClass::DpAdd);
    } else if (op == "sqrt" || op == "rcp" || op == "rsqrt" || op == "ex2" || op == "lg2" ||
               op == "sin" || op == "cos" || op == "tanh") {
      bool approx = mods.take(".approx");
      Round r = takeRound();
      uint8_t ff = floatFlags();
      Type t = oneType();
      if (isHalfType(t)) {
        if ((op != "ex2" && op != "tanh") || !approx || r != Round::Default) unsupported(in);
        decodeHalf(in, x, info, op == "ex2" ? HalfOp::Ex2 : HalfOp::Tanh, t, r, false, false, ff);
        finish();
        return;
      }
      set2(t);
      FUn f;
      if (op == "sqrt")
        f = approx ? FUn::SqrtApprox : FUn::Sqrt;
      else if (op == "rcp")
        f = approx ? FUn::RcpApprox : FUn::Rcp;
      else if (op == "rsqrt")
        f = FUn::Rsqrt;
      else if (op == "ex2")
        f = FUn::Ex2;
      else if (op == "lg2")
        f = FUn::Lg2;
      else if (op == "sin")
        f = FUn::Sin;
      else if (op == "cos")
        f = FUn::Cos;
      else
        f = FUn::Tanh;
      bool needsApprox = op != "sqrt" && op != "rcp";
      if (needsApprox && !approx) invalid(in.loc, op + " requires .approx");
      if (!needsApprox && !approx && r == Round::Default)
        invalid(in.loc, op + " requires .approx or a rounding modifier");
      if (t == Type::F64 && needsApprox && op != "rsqrt") unsupported(in);
      x.fn = floatUnary(f, t, r, ff);
      x.mode2 = static_cast<uint8_t>(r);
      x.cls = t == Type::F64 ? InstClass::DpDiv : InstClass::Sfu;
    } else if (op == "testp") {
      int what =
          mods.takeOne({".finite", ".infinite", ".number", ".notanumber", ".normal", ".subnormal"});
      Type t = oneType();
      nops(2);
      if (what < 0) invalid(in.loc, "testp needs an operation");
      x.dst[0] = predDst(in.ops[0], info);
      x.src[0] = src(in.ops[1], t, in, info);
      x.mode = static_cast<uint8_t>(what);
      x.fn = testp(x.mode, t);
      x.cls = fpClass(t, InstClass::FpAdd, InstClass::DpAdd);
    }
    // ---- logic and bit manipulation ----
    else if (op == "and" || op == "or" || op == "xor" || op == "not" || op == "cnot") {
      Type t = oneType();
      x.cls = InstClass::IntAdd;
      if (t == Type::Pred) {
        if (op == "cnot") unsupported(in);
        bool unaryOp = op == "not";
        nops(unaryOp ? 2 : 3);
        x.dst[0] = predDst(in.ops[0], info);
        x.src[0] = predSrc(in.ops[1], x, 0, info);
        if (!unaryOp) x.src[1] = predSrc(in.ops[2], x, 1, info);
        x.mode = op == "and" ? 0 : op == "or" ? 1 : op == "xor" ? 2 : 3;
        x.fn = predLogic();
      } else if (op == "not" || op == "cnot") {
        set2(t);
        x.fn = intUnary(op == "not" ? IntUn::Not : IntUn::CNot, t);
      } else {
        set3(t);
        x.fn = intBinary(op == "and" ? IntBin::And : op == "or" ? IntBin::Or : IntBin::Xor, t);
      }
    } else if (op == "shl" || op == "shr") {
      Type t = oneType();
      nops(3);
      x.dst[0] = dst(in.ops[0], in, info);
      x.src[0] = src(in.ops[1], t, in, info);
      x.src[1] = src(in.ops[2], Type::U32, in, info);
      x.ndst = 1;
      x.nsrc = 2;
      x.fn = intBinary(op == "shl" ? IntBin::Shl : IntBin::Shr, t);
      x.cls = InstClass::IntAdd;
    } else if (op == "popc" || op == "clz" || op == "brev") {
      Type t = oneType();
      set2(t);
      x.fn = intUnary(op == "popc" ? IntUn::Popc : op == "clz" ? IntUn::Clz : IntUn::Brev, t);
      x.cls = InstClass::IntAdd;
    } else if (op == "bfe") {
      Type t = oneType();
      nops(4);
      x.dst[0] = dst(in.ops[0], in, info);
      x.src[0] = src(in.ops[1], t, in, info);
      x.src[1] = src(in.ops[2], Type::U32, in, info);
      x.src[2] = src(in.ops[3], Type::U32, in, info);
      x.ndst = 1;
      x.nsrc = 3;
      x.fn = intTernary(IntTer::Bfe, t);
      x.cls = InstClass::IntAdd;
    } else if (op == "bfi") {
      Type t = oneType();
      nops(5);
      x.dst[0] = dst(in.ops[0], in, info);
      x.src[0] = src(in.ops[1], t, in, info);
      x.src[1] = src(in.ops[2], t, in, info);
      x.src[2] = src(in.ops[3], Type::U32, in, info);
      x.src[3] = src(in.ops[4], Type::U32, in, info);
      x.ndst = 1;
      x.nsrc = 4;
      x.fn = bfi(t);
      x.cls = InstClass::IntAdd;
    } else if (op == "prmt") {
      int mode = mods.takeOne({".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"});
      Type t = oneType();
      if (t != Type::B32) unsupported(in);
      set4(t, Type::U32);
      x.mode = static_cast<uint8_t>(mode + 1);
      x.fn = prmt(static_cast<PrmtMode>(mode + 1));
      x.cls = InstClass::IntAdd;
    } else if (op == "bfind") {
      bool shiftAmount = mods.take(".shiftamt");
      Type t = oneType();
      set2(t);
      x.fn = bfind(t, shiftAmount);
      x.cls = InstClass::IntAdd;
    } else if (op == "fns") {
      Type t = oneType();
      if (t != Type::B32) unsupported(in);
      nops(4);
      x.dst[0] = dst(in.ops[0], in, info);
      x.src[0] = src(in.ops[1], Type::B32, in, info);
      x.src[1] = src(in.ops[2], Type::U32, in, info);
      x.src[2] = src(in.ops[3], Type::S32, in, info);
      x.ndst = 1;
      x.nsrc = 3;
      x.fn = fns();
      x.cls = InstClass::IntAdd;
    } else if (op == "szext" || op == "bmsk") {
      int mode = mods.takeOne({".clamp", ".wrap"});
      Type t = oneType();
      if (mode < 0) invalid(in.loc, op + " needs .clamp or .wrap");
      set3(Type::U32);
      if (op == "szext") {
        if (t != Type::U32 && t != Type::S32) unsupported(in);
        x.fn = szext(mode == 0, t == Type::S32);
      } else {
        if (t != Type::B32) unsupported(in);
        x.fn = bmsk(mode == 0);
      }
      x.cls = InstClass::IntAdd;
    } else if (op == "dp4a" || op == "dp2a") {
      int hl = op == "dp2a" ? mods.takeOne({".lo", ".hi"}) : 0;
      auto ts = mods.takeTypes();
      if (hl < 0) invalid(in.loc, "dp2a needs .lo or .hi");
      if (ts.size() != 2) invalid(in.loc, op + " needs two types (.atype.btype)");
      for (Type t : ts)
        if (t != Type::U32 && t != Type::S32) unsupported(in);
      bool as = ts[0] == Type::S32, bs = ts[1] == Type::S32;
      set4(Type::U32, Type::U32);
      x.fn = op == "dp4a" ? dp4a(as, bs) : dp2a(as, bs, hl == 1);
      x.cls = InstClass::IntMad;
    } else if (op == "redux") {
      if (!mods.take(".sync")) unsupported(in);
      int rop = mods.takeOne({".add", ".min", ".max", ".and", ".or", ".xor"});
      Type t = oneType();
      if (rop < 0) invalid(in.loc, "redux.sync needs an operation");
      nops(3);
      x.dst[0] = dst(in.ops[0], in, info);
      x.src[0] = src(in.ops[1], t, in, info);
      x.src[1] = src(in.ops[2], Type::B32, in, info);  // membermask
      x.ndst = 1;
      x.nsrc = 2;
      x.fn = redux(static_cast<ReduxOp>(rop), t);
      x.cls = InstClass::Shfl;
    } else if (op == "lop3") {
      Type t = oneType();
      nops(5);
      if (t != Type::B32) unsupported(in);
      x.dst[0] = dst(in.ops[0], in, info);
      for (int i = 0; i < 3; ++i) x.src[i] = src(in.ops[1 + i], t, in, info);
      if (in.ops[4].kind != Operand::Kind::Imm)
        invalid(in.ops[4].loc, "lop3 needs an immediate LUT");
      x.imm = in.ops[4].imm;
      x.ndst = 1;
      x.nsrc = 3;
      x.fn = lop3();
      x.cls = InstClass::IntAdd;
    } else if (op == "shf") {
      int dir = mods.takeOne({".l", ".r"});
      int mode = mods.takeOne({".wrap", ".clamp"});
      Type t = oneType();
      if (dir < 0 || mode < 0 || t != Type::B32) unsupported(in);
      set4(t, Type::U32);
      x.fn = shf(dir == 0, mode == 0);
      x.cls = InstClass::IntAdd;
    }
    // ---- comparison and selection ----
    else if (op == "setp" || op == "set") {
      int cmp = mods.takeOne({".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi", ".hs",
                              ".equ", ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan"});
      int bop = mods.takeOne({".and", ".or", ".xor"});
      uint8_t ff = floatFlags();
      auto ts = mods.takeTypes();
      if (cmp < 0) invalid(in.loc, op + " needs a comparison operator");
      Type st = ts.empty() ? Type::None : ts.back();
      if ((op == "setp" && ts.size() != 1) || (op == "set" && ts.size() != 2))
        invalid(in.loc, op + " has the wrong number of types");
      x.mode = static_cast<uint8_t>(cmp);
      x.mode2 = static_cast<uint8_t>(bop < 0 ? BoolOp::None : static_cast<BoolOp>(bop + 1));
      if (ff & kSat) unsupported(in);
      if ((ff & kFtz) && st != Type::F32 && st != Type::F16 && st != Type::F16x2) unsupported(in);
      const bool withC = bop >= 0;
      nops(withC ? 4 : 3);
      if (op == "setp") {
        const Operand& d = in.ops[0];
        if (d.kind == Operand::Kind::Vector && d.pipePair) {
          x.dst[0] = predDst(d.elems[0], info);
          x.dst[1] = predDst(d.elems[1], info);
          x.ndst = 2;
        } else {
          x.dst[0] = predDst(d, info);
          x.ndst = 1;
        }
        x.fn = setp(static_cast<Cmp>(cmp), static_cast<BoolOp>(x.mode2), st, ff & kFtz);
      } else {
        // What a true comparison writes: 1.0 in a floating-point destination type, all ones in
        // an integer one; with packed operands, in each half.
        const Type dt = ts[0];
        const bool packed = st == Type::F16x2 || st == Type::BF16x2;
        x.dst[0] = dst(in.ops[0], in, info);
        x.ndst = 1;
        switch (dt) {
          case Type::U32:
          case Type::S32:
            x.imm = packed ? 0xffff : 0xffffffff;
            break;
          case Type::U16:
          case Type::S16:
            x.imm = 0xffff;
            break;
          case Type::F32:
            x.imm = 0x3f800000;
            break;
          case Type::F16:
          case Type::F16x2:
            x.imm = 0x3c00;
            break;
          case Type::BF16:
          case Type::BF16x2:
            x.imm = 0x3f80;
            break;
          default:
            unsupported(in);
        }
        const bool scalarDt = dt != Type::F16x2 && dt != Type::BF16x2;
        if (packed ? scalarDt && dt != Type::U32 && dt != Type::S32 && dt != st : !scalarDt)
          invalid(in.loc, "set with " + std::string(ptx::typeName(st)) + " operands writes " +
                              (packed ? "the same packed type, .u32 or .s32"
                                      : "a scalar type (.u16, .s16, .u32, .s32, .f16, .bf16 "
                                        "or .f32)"));
        x.fn = set(static_cast<Cmp>(cmp), static_cast<BoolOp>(x.mode2), dt, st, ff & kFtz);
      }
      x.src[0] = src(in.ops[1], st, in, info);
      x.src[1] = src(in.ops[2], st, in, info);
      x.nsrc = 2;
      if (withC) {
        x.src[2] = predSrc(in.ops[3], x, 2, info);
        x.nsrc = 3;
      }
      if (ptx::isFloat(st) && (cmp >= 6 && cmp <= 9))
        invalid(in.loc, "unsigned comparisons need integer types");
      x.cls =
          ptx::isFloat(st) ? fpClass(st, InstClass::FpAdd, InstClass::DpAdd) : InstClass::IntAdd;
    } else if (op == "selp") {
      Type t = oneType();
      nops(4);
      x.dst[0] = dst(in.ops[0], in, info);
      x.src[0] = src(in.ops[1], t, in, info);
      x.src[1] = src(in.ops[2], t, in, info);
      x.src[2] = predSrc(in.ops[3], x, 2, info);
      x.ndst = 1;
      x.nsrc = 3;
      x.fn = selp(t);
      x.cls = InstClass::IntAdd;
    } else if (op == "slct") {
      uint8_t ff = floatFlags();
      auto ts = mods.takeTypes();
      if (ts.size() != 2) invalid(in.loc, "slct needs two types");
      set4(ts[0], ts[1]);
      x.fn = slct(ts[0], ts[1], ff);
      x.cls = InstClass::IntAdd;
    }
    // ---- data movement and conversion ----
    else if (op == "mov") {
      decodeMov(in, mods, x, info);
    } else if (op == "cvt" && mods.take(".pack")) {  // cvt.pack.sat.ctype.s32{.b32}
      if (!mods.take(".sat")) invalid(in.loc, "cvt.pack needs .sat");
      const int small = mods.takeOne({".u2", ".s2", ".u4", ".s4"});
      const auto ts = mods.takeTypes();
      unsigned width = 0;
      bool isSigned = false;
      if (small >= 0) {
        width = small < 2 ? 2 : 4;
        isSigned = small % 2 == 1;
      } else if (!ts.empty()) {
        width = 8 * ptx::typeBytes(ts[0]);
        isSigned = ptx::isSigned(ts[0]);
        if (ts[0] != Type::U8 && ts[0] != Type::S8 && ts[0] != Type::U16 && ts[0] != Type::S16)
          unsupported(in);
      }
      const size_t rest = small >= 0 ? 0 : 1;  // types after the converted one
      const bool wide = width == 16;
      if (width == 0 || ts.size() != rest + (wide ? 1 : 2) || ts[rest] != Type::S32 ||
          (!wide && ts[rest + 1] != Type::B32))
        invalid(in.loc,
                "cvt.pack is cvt.pack.sat.{u16,s16}.s32 d, a, b or "
                "cvt.pack.sat.{u8,s8,u4,s4,u2,s2}.s32.b32 d, a, b, c");
      if (wide) {
        set3(Type::S32);
        x.src[2] = constSlot(0);
        x.nsrc = 3;
      } else {
        set4(Type::S32, Type::B32);
      }
      x.mode = static_cast<uint8_t>(width);
      x.flags = isSigned ? 1 : 0;
      x.fn = cvtPackSat();
      x.cls = InstClass::IntAdd;
    } else if (op == "cvt" && narrowFormatIndex(in.mods) >= 0) {
      decodeNarrowCvt(in, mods, x, info);
    } else if (op == "cvt" && mods.take(".tf32")) {  // cvt.{rna,rn,rz}{.satfinite}.tf32.f32
      const int r = mods.takeOne({".rna", ".rn", ".rz"});
      const bool satFinite = mods.take(".satfinite");
      const auto ts = mods.takeTypes();
      if (r < 0 || ts.size() != 1 || ts[0] != Type::F32) unsupported(in);
      set2(Type::F32);
      x.mode2 = static_cast<uint8_t>(r == 0 ? Round::Rna : r == 1 ? Round::Rn : Round::Rz);
      x.flags = satFinite ? 1 : 0;
      x.fn = cvtTf32();
      x.cls = InstClass::FpAdd;
    } else if (op == "cvt") {
      int r = mods.takeOne({".rn", ".rz", ".rm", ".rp", ".rni", ".rzi", ".rmi", ".rpi"});
      bool relu = mods.take(".relu");
      bool satFinite = mods.take(".satfinite");
      uint8_t ff = floatFlags();
      auto ts = mods.takeTypes();
      if (ts.size() != 2) invalid(in.loc, "cvt needs a destination and a source type");
      Type dt = ts[0], st = ts[1];
      if (dt == Type::B32 || st == Type::B32) unsupported(in);  // .b32 only in cvt.pack
      Round rr = roundFrom(r);
      if (dt == Type::F16x2 || dt == Type::BF16x2) {  // pack two f32 values
        if (st != Type::F32 || ff || (rr != Round::Rn && rr != Round::Rz)) unsupported(in);
        set3(st);
        x.mode2 = static_cast<uint8_t>(rr);
        x.flags = static_cast<uint8_t>((relu ? kHalfRelu : 0) | (satFinite ? kHalfSatFinite : 0));
        x.fn = cvtPackPair(dt);
        x.cls = InstClass::FpAdd;
        finish();
        return;
      }
      if ((relu || satFinite) && (dt == Type::F16 || dt == Type::BF16) && st == Type::F32 && !ff &&
          (rr == Round::Rn || rr == Round::Rz)) {
        set2(st);
        x.mode2 = static_cast<uint8_t>(rr);
        x.flags = static_cast<uint8_t>((relu ? kHalfRelu : 0) | (satFinite ? kHalfSatFinite : 0));
        x.fn = cvtHalfSingle(dt);
        x.cls = InstClass::FpAdd;
        finish();
        return;
      }
      if (relu || satFinite) unsupported(in);
      bool fromF = ptx::isFloat(st), toF = ptx::isFloat(dt);
      if (fromF && !toF && rr != Round::Rni && rr != Round::Rzi && rr != Round::Rmi &&
          rr != Round::Rpi)
        invalid(in.loc, "float-to-integer cvt needs .rni, .rzi, .rmi or .rpi");
      if (!fromF && toF && (rr == Round::Default || rr >= Round::Rni))
        invalid(in.loc, "integer-to-float cvt needs .rn, .rz, .rm or .rp");
      if (fromF && toF && ptx::typeBytes(dt) < ptx::typeBytes(st) && rr == Round::Default)
        invalid(in.loc, "narrowing float cvt needs a rounding modifier");
      set2(st);
      x.mode2 = static_cast<uint8_t>(rr);
      x.flags = ff;
      x.fn = cvt(dt, st, rr, ff);
      x.cls = (dt == Type::F64 || st == Type::F64) ? InstClass::DpAdd
              : (fromF || toF)                     ? InstClass::FpAdd
                                                   : InstClass::IntAdd;
    } else if (op == "cvta") {
      bool to = mods.take(".to");
      int sp = mods.takeOne(
          {".global", ".shared", ".local", ".const", ".param", ".shared::cta", ".shared::cluster"});
      if (sp == 6) sp = 1;  // a cluster of one block: its own shared memory
      Type t = oneType();
      if (sp < 0) invalid(in.loc, "cvta needs a state space");
      set2(t);
      if (sp == 0) {
        x.fn = intUnary(IntUn::Mov, Type::U64);  // global addresses are generic addresses
      } else {
        x.fn = cvta(!to, MemSpace::Generic);
        x.imm = static_cast<int64_t>(kSpaceWindow[sp]);
      }
      x.cls = InstClass::IntAdd;
    } else if (op == "isspacep") {
      int sp = mods.takeOne(
          {".global", ".shared", ".local", ".const", ".param", ".shared::cta", ".shared::cluster"});
      if (sp == 6) sp = 1;  // a cluster of one block: its own shared memory
      if (sp < 0) invalid(in.loc, "isspacep needs a state space");
      nops(2);
      x.dst[0] = predDst(in.ops[0], info);
      x.ndst = 1;
      x.src[0] = src(in.ops[1], Type::U64, in, info);
      x.nsrc = 1;
      x.imm = static_cast<int64_t>(kSpaceWindow[sp]);
      x.fn = isspacep();
      x.cls = InstClass::IntAdd;
    }
    // ---- memory ----
    else if (op == "ld" || op == "ldu" || op == "st") {
      decodeLoadStore(in, mods, x, info, fi);
    } else if (op == "atom" || op == "red") {
      decodeAtomic(in, mods, x, info);
    } else if (op == "mma") {
      decodeMma(in, mods, x, info);
    } else if (op == "wmma") {
      decodeWmma(in, mods, x, info);
    } else if (op == "ldmatrix" || op == "stmatrix") {
      decodeMatrixLoadStore(in, mods, x, info);
    } else if (op == "tex") {
      decodeTex(in, mods, x, info);
    } else if (op == "suld" || op == "sust") {
      decodeSurface(in, mods, x, info, op == "sust");
    } else if (op == "movmatrix") {
      if (!mods.take(".sync") || !mods.take(".aligned") || !mods.take(".m8n8") ||
          !mods.take(".trans") || oneType() != Type::B16)
        invalid(in.loc, "movmatrix is movmatrix.sync.aligned.m8n8.trans.b16 d, a");
      set2(Type::B32);
      x.fn = movmatrix();
      x.cls = InstClass::Shfl;  // a register exchange across the warp, like shfl
    } else if (known->group == std::string_view("Video")) {
      decodeVideo(in, mods, x, info);
    } else if (op == "cp" && mods.take(".bulk")) {
      decodeCpAsyncBulk(in, mods, x, info);
    } else if (op == "cp") {
      decodeCpAsync(in, mods, x, info);
    } else if (op == "mbarrier") {
      decodeMbarrier(in, mods, x, info);
    } else if (op == "prefetch" || op == "prefetchu") {
      mods.takeOne({".global", ".local"});
      mods.takeOne({".L1", ".L2"});
      mods.takeMemoryHints();
      nops(1);
      address(in.ops[0], in, info);
      x.cls = InstClass::Nop;
      x.fn = nop();
    } else if (op == "membar" || op == "fence") {
      mods.takeMemoryHints();
      mods.take(".gl");
      mods.take(".proxy");
      mods.take(".alias");
      // fence.proxy.async{.space} orders the async proxy (bulk copies, which complete at once
      // here); fence.mbarrier_init orders mbarrier.init: nothing to do in either.
      mods.take(".async");
      mods.take(".async::generic");
      mods.take(".mbarrier_init");
      mods.takeOne({".shared::cta", ".shared::cluster", ".global"});
      // .sync_restrict narrows what the fence orders; everything is in order here anyway.
      mods.takeOne({".sync_restrict::shared::cta", ".sync_restrict::shared::cluster"});
      x.cls = InstClass::Nop;
      x.fn = nop();
    } else if (op == "nanosleep") {
      const auto ts = mods.takeTypes();
      if (ts.size() != 1 || ts[0] != Type::U32) invalid(in.loc, "nanosleep needs .u32");
      nops(1);
      x.src[0] = src(in.ops[0], Type::U32, in, info);
      x.nsrc = 1;
      x.cls = InstClass::Nop;
      x.fn = sleep();
      x.sleeps = true;
    } else if (op == "pmevent") {
      mods.takeTypes();
      x.cls = InstClass::Nop;
      x.fn = nop();
    } else if (op == "griddepcontrol") {
      // One launch at a time: dependents start after this grid anyway, and the grids this one
      // depends on have completed before it started, so both forms return at once.
      if (mods.takeOne({".launch_dependents", ".wait"}) < 0)
        invalid(in.loc, "griddepcontrol needs .launch_dependents or .wait");
      nops(0);
      x.cls = InstClass::Nop;
      x.fn = nop();
    } else if (op == "setmaxnreg") {
      // A register-allocation hint for the warpgroup; the register file is not resized.
      if (mods.takeOne({".inc", ".dec"}) < 0) invalid(in.loc, "setmaxnreg needs .inc or .dec");
      if (!mods.take(".sync") || !mods.take(".aligned") || oneType() != Type::U32)
        invalid(in.loc, "setmaxnreg is setmaxnreg.{inc,dec}.sync.aligned.u32");
      nops(1);
      const Operand& n = in.ops[0];
      if (n.kind != Operand::Kind::Imm || n.imm < 24 || n.imm > 256 || n.imm % 8 != 0)
        invalid(n.loc,
                "setmaxnreg needs an immediate register count in [24, 256], a multiple of 8");
      x.cls = InstClass::Nop;
      x.fn = nop();
    } else if (op == "applypriority" || op == "discard") {
      // Cache-residency hints with no effect on values: applypriority only changes an L2
      // line's eviction priority, and discard leaves the line's data unspecified, which the
      // memory's unchanged contents satisfy.
      mods.take(".global");
      if (op == "applypriority" ? !mods.take(".L2::evict_normal") : !mods.take(".L2"))
        invalid(in.loc, op + " needs ." + (op == "applypriority" ? "L2::evict_normal" : "L2"));
      nops(2);
      address(in.ops[0], in, info);
      if (in.ops[1].kind != Operand::Kind::Imm || in.ops[1].imm != 128)
        invalid(in.ops[1].loc, op + " works on 128-byte lines: its size must be 128");
      x.cls = InstClass::Nop;
      x.fn = nop();
    } else if (op == "createpolicy") {
      decodeCreatePolicy(in, mods, x, info);
    } else if (op == "alloca" || op == "stacksave" || op == "stackrestore") {
      decodeStack(in, mods, x, info);
    } else if (op == "getctarank" || op == "mapa") {
      // Clusters are not modelled: every block is a cluster of one, so an address's block rank
      // is 0 and mapping an address to block 0 leaves it unchanged (other ranks fault).
      const bool toCluster = mods.take(".shared::cluster");
      const Type t = oneType();
      nops(op == "mapa" ? 3 : 2);
      x.dst[0] = dst(in.ops[0], in, info);
      x.src[0] = src(in.ops[1], t, in, info);
      x.src[1] = op == "mapa" ? src(in.ops[2], Type::U32, in, info) : constSlot(0);
      x.ndst = 1;
      x.nsrc = 2;
      x.mode = op == "mapa" ? 1 : 0;
      x.flags = toCluster ? 1 : 0;
      x.bytes = static_cast<uint8_t>(ptx::typeBytes(t));
      x.fn = clusterOfOne();
      x.cls = InstClass::IntAdd;
    }
    // ---- warp-level ----
    else if (op == "shfl") {
      mods.take(".sync");
      int mode = mods.takeOne({".up", ".down", ".bfly", ".idx"});
      Type t = oneType();
      if (mode < 0 || t != Type::B32) unsupported(in);
      if (in.ops.size() != 4 && in.ops.size() != 5) invalid(in.loc, "shfl takes 4 or 5 operands");
      const Operand& d = in.ops[0];
      if (d.kind == Operand::Kind::Vector && d.pipePair) {
        x.dst[0] = dst(d.elems[0], in, info);
        x.dst[1] = predDst(d.elems[1], info);
        x.ndst = 2;
      } else {
        x.dst[0] = dst(d, in, info);
        x.ndst = 1;
      }
      for (int i = 0; i < 3; ++i) x.src[i] = src(in.ops[1 + i], Type::B32, in, info);
      x.nsrc = 3;
      if (in.ops.size() == 5) x.src[x.nsrc++] = src(in.ops[4], Type::B32, in, info);
      x.fn = shfl(static_cast<ShflMode>(mode));
      x.cls = InstClass::Shfl;
    } else if (op == "vote") {
      mods.take(".sync");
      int mode = mods.takeOne({".all", ".any", ".uni", ".ballot"});
      Type t = oneType();
      if (mode < 0) invalid(in.loc, "vote needs a mode");
      if (in.ops.size() != 2 && in.ops.size() != 3) invalid(in.loc, "vote takes 2 or 3 operands");
      if (mode == 3) {
        if (t != Type::B32) unsupported(in);
        x.dst[0] = dst(in.ops[0], in, info);
      } else {
        if (t != Type::Pred) unsupported(in);
        x.dst[0] = predDst(in.ops[0], info);
      }
      x.ndst = 1;
      x.src[0] = predSrc(in.ops[1], x, 0, info);
      x.nsrc = 1;
      if (in.ops.size() == 3) x.src[x.nsrc++] = src(in.ops[2], Type::B32, in, info);
      x.fn = vote(static_cast<VoteMode>(mode));
      x.cls = InstClass::Shfl;
    } else if (op == "activemask") {
      Type t = oneType();
      if (t != Type::B32) unsupported(in);
      nops(1);
      x.dst[0] = dst(in.ops[0], in, info);
      x.ndst = 1;
      x.fn = activemask();
      x.cls = InstClass::Shfl;
    } else if (op == "elect") {
      if (!mods.take(".sync")) invalid(in.loc, "elect needs .sync");
      nops(2);
      const Operand& d = in.ops[0];
      if (d.kind != Operand::Kind::Vector || !d.pipePair)
        invalid(d.loc, "elect.sync writes 'd|p' (a register or _, and a predicate)");
      x.dst[0] = dst(d.elems[0], in, info);
      x.dst[1] = predDst(d.elems[1], info);
      x.ndst = 2;
      x.src[0] = src(in.ops[1], Type::B32, in, info);
      x.nsrc = 1;
      x.fn = electSync();
      x.cls = InstClass::Shfl;
    } else if (op == "match") {
      mods.take(".sync");
      int mode = mods.takeOne({".any", ".all"});
      Type t = oneType();
      if (mode < 0) invalid(in.loc, "match needs .any or .all");
      nops(3);
      const Operand& d = in.ops[0];
      if (d.kind == Operand::Kind::Vector && d.pipePair) {
        if (mode != 1) invalid(in.loc, "only match.all has a predicate result");
        x.dst[0] = dst(d.elems[0], in, info);
        x.dst[1] = predDst(d.elems[1], info);
        x.ndst = 2;
      } else {
        x.dst[0] = dst(d, in, info);
        x.ndst = 1;
      }
      x.src[0] = src(in.ops[1], t, in, info);
      x.src[1] = src(in.ops[2], Type::B32, in, info);
      x.nsrc = 2;
      x.fn = mode == 0 ? matchAny(t) : matchAll(t);
      x.cls = InstClass::Shfl;
    }
    // ---- control flow ----
    else if (op == "bra") {
      mods.take(".uni");
      nops(1);
      if (in.ops[0].kind != Operand::Kind::Symbol) invalid(in.loc, "bra needs a label");
      x.flow = Flow::Branch;
      x.cls = InstClass::Branch;
      fixups_.push_back(
          {static_cast<uint32_t>(p_->code.size()), in.ops[0].name, fi, false, in.loc});
    } else if (op == "brx") {
      if (!mods.take(".idx")) unsupported(in);
      mods.take(".uni");
      nops(2);
      x.src[0] = src(in.ops[0], Type::U32, in, info);
      x.nsrc = 1;
      if (in.ops[1].kind != Operand::Kind::Symbol)
        invalid(in.loc, "brx.idx needs a .branchtargets label");
      auto it = funcs_[fi]->branchTargets.find(in.ops[1].name);
      if (it == funcs_[fi]->branchTargets.end())
        invalid(in.ops[1].loc, "'" + in.ops[1].name + "' is not a .branchtargets list");
      x.flow = Flow::BranchIndexed;
      x.cls = InstClass::Branch;
      x.aux = static_cast<uint32_t>(p_->branchTables.size());
      p_->branchTables.emplace_back();
      tableFixups_.push_back({x.aux, it->second, fi, in.loc});
    } else if (op == "call" && in.callee.empty()) {
      mods.take(".uni");
      decodeIndirectCall(in, x, info, fi);
    } else if (op == "call") {
      mods.take(".uni");
      const Function* callee = m_.findFunction(in.callee);
      if (callee == vprintf_ && vprintf_ != nullptr) {
        x.fn = handlers::vprintf();
        x.space = MemSpace::CallParam;
        x.imm = static_cast<int64_t>(addrOf_.at(callee->params[0].get()));
        x.aux = static_cast<uint32_t>(addrOf_.at(callee->params[1].get()));
        x.src[5] = callee->returns.empty()
                       ? kNoPc
                       : static_cast<uint32_t>(addrOf_.at(callee->returns[0].get()));
        x.cls = InstClass::Nop;
        finish();
        return;
      }
      if (callee == assertFail_ && assertFail_ != nullptr) {
        x.fn = handlers::assertFail();
        x.space = MemSpace::CallParam;
        x.imm = static_cast<int64_t>(addrOf_.at(callee->params[0].get()));
        x.aux = static_cast<uint32_t>(addrOf_.at(callee->params[1].get()));
        x.src[4] = static_cast<uint32_t>(addrOf_.at(callee->params[2].get()));
        x.src[5] = static_cast<uint32_t>(addrOf_.at(callee->params[3].get()));
        x.cls = InstClass::Nop;
        finish();
        return;
      }
      if (std::find(heapFuncs_.begin(), heapFuncs_.end(), callee) != heapFuncs_.end()) {
        const bool isMalloc = callee->name == "malloc";
        x.fn = isMalloc ? deviceMalloc() : deviceFree();
        x.space = MemSpace::CallParam;
        x.imm = static_cast<int64_t>(addrOf_.at(callee->params[0].get()));
        if (isMalloc) x.aux = static_cast<uint32_t>(addrOf_.at(callee->returns[0].get()));
        x.cls = InstClass::Nop;
        finish();
        return;
      }
      if (callee == setConditional_ && setConditional_ != nullptr) {
        x.fn = handlers::setConditional();
        x.space = MemSpace::CallParam;
        x.src[0] = static_cast<uint32_t>(addrOf_.at(callee->params[0].get()));
        x.src[1] = static_cast<uint32_t>(addrOf_.at(callee->params[1].get()));
        x.cls = InstClass::Nop;
        finish();
        return;
      }
      if (std::find(deviceCalls_.begin(), deviceCalls_.end(), callee) != deviceCalls_.end()) {
        x.fn = handlers::deviceRuntime(*deviceCallOf(callee));
        x.space = MemSpace::CallParam;
        for (size_t i = 0; i < callee->params.size(); ++i)
          x.src[i] = static_cast<uint32_t>(addrOf_.at(callee->params[i].get()));
        x.aux = callee->returns.empty()
                    ? kNoPc
                    : static_cast<uint32_t>(addrOf_.at(callee->returns[0].get()));
        x.cls = InstClass::Nop;
        finish();
        return;
      }
      x.flow = Flow::Call;
      x.cls = InstClass::Call;
      x.aux =
          static_cast<uint32_t>(std::find(funcs_.begin(), funcs_.end(), callee) - funcs_.begin());
      if (recursive_[x.aux]) {
        x.mode = 1;
        x.imm = recursiveCallOf_.at(&in);
      }
    } else if (op == "ret") {
      mods.take(".uni");
      nops(0);
      x.flow = funcs_[fi]->isEntry ? Flow::Exit : Flow::Ret;
      x.cls = funcs_[fi]->isEntry ? InstClass::Exit : InstClass::Ret;
    } else if (op == "exit") {
      nops(0);
      x.flow = Flow::Exit;
      x.cls = InstClass::Exit;
    } else if (op == "trap" || op == "brkpt") {
      x.flow = Flow::Trap;
      x.cls = InstClass::Exit;
    } else if (op == "bar" || op == "barrier") {
      decodeBarrier(in, mods, x, info);
    } else {
      unsupported(in);
    }
    finish();
  }

  // The narrow floating-point format a cvt names (index in kNarrowNames), or -1.
  static constexpr std::string_view kNarrowNames[] = {".e4m3x2", ".e5m2x2", ".e2m3x2", ".e3m2x2",
                                                      ".e2m1x2"};
  static int narrowFormatIndex(const std::vector<std::string>& mods) {
    for (const auto& m : mods)
      for (int i = 0; i < 5; ++i)
        if (m == kNarrowNames[i]) return i;
    return -1;
  }

  // cvt.rn.satfinite{.relu}.<f>x2.f32 d, a, b; cvt.rn.satfinite{.relu}.<f8>x2.f16x2 d, a;
  // cvt.rn{.relu}.f16x2.<f>x2 d, a.
  void decodeNarrowCvt(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    const int fi = narrowFormatIndex(in.mods);
    mods.take(std::string(kNarrowNames[fi]));
    size_t fpos = 0, tpos = 0;
    for (size_t i = 0; i < in.mods.size(); ++i) {
      if (in.mods[i] == kNarrowNames[fi]) fpos = i;
      if (ptx::typeFromName(in.mods[i])) tpos = i;
    }
    const bool toNarrow = fpos < tpos;
    if (!mods.take(".rn")) invalid(in.loc, "this cvt needs .rn");
    const bool satFinite = mods.take(".satfinite");
    x.flags = mods.take(".relu") ? 1 : 0;
    const auto ts = mods.takeTypes();
    if (ts.size() != 1) invalid(in.loc, "cvt needs a destination and a source type");
    const bool f8 = fi <= 1;
    if (toNarrow) {
      if (!satFinite) invalid(in.loc, "conversions to fp8, fp6 and fp4 need .satfinite");
      if (ts[0] == Type::F32) {
        nops(in, 3);
        x.src[0] = src(in.ops[1], Type::F32, in, info);
        x.src[1] = src(in.ops[2], Type::F32, in, info);
        x.mode2 = 0;
      } else if (ts[0] == Type::F16x2 && f8) {
        nops(in, 2);
        x.src[0] = src(in.ops[1], Type::B32, in, info);
        x.src[1] = constSlot(0);
        x.mode2 = 1;
      } else {
        unsupported(in);
      }
    } else {
      if (satFinite || ts[0] != Type::F16x2) unsupported(in);
      nops(in, 2);
      x.src[0] = src(in.ops[1], Type::B32, in, info);
      x.src[1] = constSlot(0);
      x.mode2 = 2;
    }
    x.dst[0] = dst(in.ops[0], in, info);
    x.ndst = 1;
    x.nsrc = 2;
    x.fn = cvtNarrow(static_cast<NarrowFormat>(fi));
    x.cls = InstClass::FpAdd;  // a conversion, issued like the other float conversions
  }

  // createpolicy.fractional.L2::primary{.L2::secondary}.b64 d{, fraction};
  // createpolicy.range{.global}.L2::primary{.L2::secondary}.b64 d, [a], primary, total;
  // createpolicy.cvt.L2.b64 d, access-property;
  // The policy is an opaque 64-bit token: the kind and priorities in its high bits and the
  // fraction's bits (or the primary size) in its low 32 bits. Loads and stores take it as a hint.
  void decodeCreatePolicy(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    const int kind = mods.takeOne({".fractional", ".range", ".cvt"});
    if (kind < 0) invalid(in.loc, "createpolicy needs .fractional, .range or .cvt");
    if (kind == 1) mods.take(".global");
    int prim = 0, sec = 0;
    if (kind == 2) {
      if (!mods.take(".L2")) invalid(in.loc, "createpolicy.cvt needs .L2");
    } else {
      prim = mods.takeOne(
          {".L2::evict_last", ".L2::evict_normal", ".L2::evict_first", ".L2::evict_unchanged"});
      if (prim < 0) invalid(in.loc, "createpolicy needs a primary priority (.L2::evict_*)");
      sec = mods.takeOne({".L2::evict_first", ".L2::evict_unchanged"});
    }
    if (oneTypeOf(in, mods) != Type::B64) invalid(in.loc, "createpolicy writes a .b64 policy");
    if (in.ops.empty()) invalid(in.loc, "createpolicy needs a destination");
    x.dst[0] = dst(in.ops[0], in, info);
    x.ndst = 1;
    if (kind == 0) {
      if (in.ops.size() != 1 && in.ops.size() != 2)
        invalid(in.loc, "createpolicy.fractional takes a destination and an optional fraction");
      if (in.ops.size() == 2) {
        const Operand& f = in.ops[1];
        if (f.kind == Operand::Kind::FImm && (f.fval <= 0 || f.fval > 1))
          invalid(f.loc, "the fraction must be in (0, 1]");
        x.src[0] = src(f, Type::F32, in, info);
      } else {
        x.src[0] = constSlot(0x3f800000u);  // 1.0
      }
    } else if (kind == 1) {
      nops(in, 4);
      address(in.ops[1], in, info);
      x.src[0] = src(in.ops[2], Type::U32, in, info);
      src(in.ops[3], Type::U32, in, info);
    } else {
      nops(in, 2);
      x.src[0] = src(in.ops[1], Type::B64, in, info);
    }
    x.nsrc = 1;
    x.mode = kind == 2 ? 1 : 0;  // cvt: the access property is the policy
    x.imm = static_cast<int64_t>((uint64_t(kind + 1) << 60) | (uint64_t(prim) << 56) |
                                 (uint64_t(sec + 1) << 52));
    x.fn = createPolicy();
    x.cls = InstClass::IntAdd;
  }

  // alloca.type ptr, size{, align}; stacksave.type d; stackrestore.type a. The stack is a
  // per-thread region of kStackBytes placed after the kernel's local variables; alloca returns
  // local addresses in it. A hidden register holds each thread's bytes in use.
  void decodeStack(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    const Type t = oneTypeOf(in, mods);
    if (t != Type::U32 && t != Type::U64) invalid(in.loc, in.opcode + " takes .u32 or .u64");
    if (stackSlot_ == kNoPc) stackSlot_ = newSlot();
    x.aux = stackSlot_;
    x.imm = p_->localBytesPerThread;  // the stack's base (local variables end there)
    x.bytes = static_cast<uint8_t>(ptx::typeBytes(t));
    if (in.opcode == "alloca") {
      if (in.ops.size() != 2 && in.ops.size() != 3)
        invalid(in.loc, "alloca takes a destination, a size and an optional alignment");
      unsigned align = 8;
      if (in.ops.size() == 3) {
        const Operand& a = in.ops[2];
        if (a.kind != Operand::Kind::Imm || a.imm <= 0 || a.imm > 4096 || (a.imm & (a.imm - 1)))
          invalid(a.loc, "alloca's alignment is an immediate power of two up to 4096");
        align = static_cast<unsigned>(a.imm);
      }
      x.dst[0] = dst(in.ops[0], in, info);
      x.ndst = 1;
      x.src[0] = src(in.ops[1], t, in, info);
      x.nsrc = 1;
      x.mode = static_cast<uint8_t>(__builtin_ctz(align));
      x.fn = stackAlloc();
    } else if (in.opcode == "stacksave") {
      nops(in, 1);
      x.dst[0] = dst(in.ops[0], in, info);
      x.ndst = 1;
      x.fn = stackSave();
    } else {
      nops(in, 1);
      x.src[0] = src(in.ops[0], t, in, info);
      x.nsrc = 1;
      x.fn = stackRestore();
    }
    x.cls = InstClass::IntAdd;
  }

  Type oneTypeOf(const Instruction& in, ModList& mods) const {
    auto ts = mods.takeTypes();
    if (ts.size() != 1) invalid(in.loc, fmt::format("'{}' needs exactly one type", in.opcode));
    return ts[0];
  }

  void nops(const Instruction& in, size_t n) const {
    if (in.ops.size() != n)
      invalid(in.loc, fmt::format("'{}' takes {} operands, found {}", in.opcode, n, in.ops.size()));
  }

  // Sub-word selectors and negated registers belong to video instructions only.
  void rejectVideoOperands(const std::vector<Operand>& ops, const std::string& op) const {
    for (const auto& o : ops) {
      if (!o.sel.empty())
        invalid(o.loc, fmt::format("the operand selector '{}' is only valid in video "
                                   "instructions, not in '{}'",
                                   o.sel, op));
      if (o.minus)
        invalid(o.loc, fmt::format("a negated register is only valid in vmad, not in '{}'", op));
      rejectVideoOperands(o.elems, op);
    }
  }

  // Scalar video selector: 0 none (the word), 1..4 .b0-.b3, 5..6 .h0/.h1.
  uint8_t videoScalarSel(const Operand& o, const std::string& op) const {
    static const char* const names[] = {".b0", ".b1", ".b2", ".b3", ".h0", ".h1"};
    if (o.sel.empty()) return 0;
    for (uint8_t i = 0; i < 6; ++i)
      if (o.sel == names[i]) return static_cast<uint8_t>(i + 1);
    invalid(o.loc,
            fmt::format("'{}' is not a selector of {} (.b0 .b1 .b2 .b3 .h0 .h1)", o.sel, op));
  }

  // SIMD video source selector (.hxy for vop2, .bxyzw for vop4; the last digit picks lane 0's
  // element of {b, a}): per lane i, the element index at bits 3i.
  uint16_t videoSimdSel(const Operand& o, unsigned lanes, unsigned first,
                        const std::string& op) const {
    uint16_t sel = 0;
    if (o.sel.empty()) {
      for (unsigned i = 0; i < lanes; ++i) sel |= static_cast<uint16_t>((first + i) << (3 * i));
      return sel;
    }
    const char letter = lanes == 2 ? 'h' : 'b';
    const unsigned limit = lanes == 2 ? 4 : 8;
    bool ok = o.sel.size() == 2 + lanes && o.sel[1] == letter;
    for (unsigned i = 0; ok && i < lanes; ++i) {
      const unsigned k = static_cast<unsigned>(o.sel[1 + lanes - i] - '0');
      ok = k < limit;
      sel |= static_cast<uint16_t>(k << (3 * i));
    }
    if (!ok)
      invalid(o.loc, fmt::format("'{}' is not a source selector of {} ({})", o.sel, op,
                                 lanes == 2 ? ".hxy, x and y in 0..3" : ".bxyzw, each in 0..7"));
    return sel;
  }

  // SIMD video destination mask (.h0 .h1 .h10; .b0 .. .b3210): bit i set when lane i is written.
  uint8_t videoMask(const Operand& o, unsigned lanes, const std::string& op) const {
    if (o.sel.empty()) return static_cast<uint8_t>((1u << lanes) - 1);
    const char letter = lanes == 2 ? 'h' : 'b';
    bool ok = o.sel.size() >= 3 && o.sel.size() <= 2 + lanes && o.sel[1] == letter;
    uint8_t m = 0;
    int prev = 99;
    for (size_t i = 2; ok && i < o.sel.size(); ++i) {
      const int k = o.sel[i] - '0';
      ok = k < static_cast<int>(lanes) && k < prev;  // digits in decreasing order
      prev = k;
      m |= static_cast<uint8_t>(1u << k);
    }
    if (!ok) invalid(o.loc, fmt::format("'{}' is not a destination mask of {}", o.sel, op));
    return m;
  }

  // vadd vsub vabsdiff vmin vmax vshl vshr vmad vset, vop2 and vop4 (handlers_video.cpp).
  void decodeVideo(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    const std::string& op = in.opcode;
    VideoParams v;
    v.lanes = op.back() == '2' ? 2 : op.back() == '4' ? 4 : 1;
    const std::string base = v.lanes == 1 ? op : op.substr(0, op.size() - 1);
    static const std::pair<const char*, VideoOp> ops[] = {
        {"vadd", VideoOp::Add},  {"vsub", VideoOp::Sub}, {"vabsdiff", VideoOp::AbsDiff},
        {"vmin", VideoOp::Min},  {"vmax", VideoOp::Max}, {"vshl", VideoOp::Shl},
        {"vshr", VideoOp::Shr},  {"vmad", VideoOp::Mad}, {"vset", VideoOp::Set},
        {"vavrg", VideoOp::Avrg}};
    for (const auto& [name, o] : ops)
      if (base == name) v.op = o;
    const bool isSet = v.op == VideoOp::Set, isMad = v.op == VideoOp::Mad;
    const bool isShift = v.op == VideoOp::Shl || v.op == VideoOp::Shr;
    if (isSet) {
      const int cmp = mods.takeOne({".eq", ".ne", ".lt", ".le", ".gt", ".ge"});
      if (cmp < 0) invalid(in.loc, op + " needs a comparison (.eq .ne .lt .le .gt .ge)");
      v.cmp = static_cast<uint8_t>(cmp);
    }
    v.sat = mods.take(".sat");
    const int op2 = mods.takeOne({".add", ".min", ".max"});
    v.op2 = static_cast<uint8_t>(op2 + 1);
    if (isShift) {
      const int mode = mods.takeOne({".clamp", ".wrap"});
      if (mode < 0) invalid(in.loc, op + " needs .clamp or .wrap");
      v.clamp = mode == 0;
    }
    if (isMad) {
      v.po = mods.take(".po");
      const int sc = mods.takeOne({".shr7", ".shr15"});
      v.scale = sc < 0 ? 0 : sc == 0 ? 7 : 15;
    }
    const auto ts = mods.takeTypes();
    const size_t ntypes = isSet ? 2 : 3;
    if (ts.size() != ntypes)
      invalid(in.loc, fmt::format("{} needs {} types (.u32 or .s32)", op,
                                  isSet ? ".atype.btype" : ".dtype.atype.btype"));
    for (Type t : ts)
      if (t != Type::U32 && t != Type::S32) invalid(in.loc, op + " types are .u32 or .s32");
    if (isSet) {
      v.aSigned = ts[0] == Type::S32;
      v.bSigned = ts[1] == Type::S32;
    } else {
      v.dSigned = ts[0] == Type::S32;
      v.aSigned = ts[1] == Type::S32;
      v.bSigned = ts[2] == Type::S32;
    }
    if (isShift && v.bSigned) invalid(in.loc, op + " takes a .u32 shift amount (btype)");
    if (!mods.allUsed()) unsupported(in);
    if (in.ops.size() < 3 || in.ops.size() > 4)
      invalid(in.loc, fmt::format("'{}' takes {} operands, found {}", op,
                                  v.lanes == 1 && !isMad ? "3 or 4" : "4", in.ops.size()));
    const Operand& d = in.ops[0];
    if (v.lanes == 1) {
      if (isMad) {
        if (in.ops.size() != 4) invalid(in.loc, "vmad takes 4 operands (d, a, b, c)");
        if (!d.sel.empty()) invalid(d.loc, "vmad has no destination selector");
      } else if (in.ops.size() == 4) {
        if (op2 < 0 && d.sel.empty())
          invalid(in.loc, op + " with a c operand needs a secondary operation (.add .min .max) "
                               "or a destination selector");
        if (op2 >= 0 && !d.sel.empty())
          invalid(d.loc, op + ": a secondary operation and a destination selector exclude each "
                              "other");
      } else if (op2 >= 0 || !d.sel.empty()) {
        invalid(in.loc, op + " with a secondary operation or a destination selector needs c");
      }
      v.dsel = videoScalarSel(d, op);
      v.asel = videoScalarSel(in.ops[1], op);
      v.bsel = videoScalarSel(in.ops[2], op);
      if (in.ops.size() == 4 && !in.ops[3].sel.empty())
        invalid(in.ops[3].loc, op + ": c takes no selector");
    } else {
      if (in.ops.size() != 4) invalid(in.loc, op + " takes 4 operands (d, a, b, c)");
      if (op2 > 0) invalid(in.loc, op + " has only the secondary operation .add");
      if (v.sat && op2 == 0)
        invalid(in.loc, op + ": saturation cannot be used with the secondary accumulate");
      v.dsel = videoMask(d, v.lanes, op);
      v.asel = videoSimdSel(in.ops[1], v.lanes, 0, op);
      v.bsel = videoSimdSel(in.ops[2], v.lanes, v.lanes, op);
      if (!in.ops[3].sel.empty()) invalid(in.ops[3].loc, op + ": c takes no selector");
    }
    for (size_t i = 0; i < in.ops.size(); ++i)
      if (in.ops[i].minus && (!isMad || i == 0))
        invalid(in.ops[i].loc, "a negated register is only valid in vmad's a, b and c");
    if (isMad) {
      v.negProduct = in.ops[1].minus != in.ops[2].minus;
      v.negC = in.ops[3].minus;
      if (v.po && (in.ops[1].minus || in.ops[2].minus || v.negC))
        invalid(in.loc, "vmad.po takes no negated operand");
      if (v.negProduct && v.negC) invalid(in.loc, "vmad negates either the product or c, not both");
    }
    x.dst[0] = dst(d, in, info);
    x.src[0] = src(in.ops[1], Type::U32, in, info);
    x.src[1] = src(in.ops[2], Type::U32, in, info);
    x.src[2] = in.ops.size() == 4 ? src(in.ops[3], Type::U32, in, info) : constSlot(0);
    x.ndst = 1;
    x.nsrc = 3;
    x.imm = static_cast<int64_t>(v.encode());
    x.fn = video();
    // Integer ALU work; vmad uses the multiplier. (GPUs since Maxwell emulate video instructions
    // with short sequences of integer instructions, so these classes are a lower bound.)
    x.cls = isMad ? InstClass::IntMad : InstClass::IntAdd;
  }

  // f16/bf16 (and x2) arithmetic. `nan`, `relu` and the float flags were taken by the caller.
  void decodeHalf(const Instruction& in, Inst& x, InstInfo& info, HalfOp op, Type t, Round r,
                  bool nan, bool relu, uint8_t ff, bool xorSignAbs = false) {
    const bool bf = t == Type::BF16 || t == Type::BF16x2;
    if (r != Round::Default && r != Round::Rn)
      unsupported(in, "f16/bf16 arithmetic rounds with .rn");
    if (op == HalfOp::Fma && r == Round::Default)
      invalid(in.loc, "fma requires a rounding modifier");
    if (bf && (ff & kFtz) && op != HalfOp::Ex2) unsupported(in);
    if (bf && (ff & kSat)) unsupported(in);
    if (relu && op != HalfOp::Fma && op != HalfOp::Min && op != HalfOp::Max) unsupported(in);
    if ((ff & kSat) && op != HalfOp::Add && op != HalfOp::Sub && op != HalfOp::Mul &&
        op != HalfOp::Fma)
      unsupported(in);
    if (nan) op = op == HalfOp::Min ? HalfOp::MinNaN : HalfOp::MaxNaN;
    const size_t n =
        (op == HalfOp::Neg || op == HalfOp::Abs || op == HalfOp::Ex2 || op == HalfOp::Tanh) ? 2
        : op == HalfOp::Fma                                                                 ? 4
                                                                                            : 3;
    if (in.ops.size() != n)
      invalid(in.loc, fmt::format("'{}' takes {} operands, found {}", in.opcode, n, in.ops.size()));
    x.dst[0] = dst(in.ops[0], in, info);
    x.ndst = 1;
    for (size_t i = 1; i < n; ++i) x.src[i - 1] = src(in.ops[i], t, in, info);
    x.nsrc = static_cast<uint8_t>(n - 1);
    x.mode2 = static_cast<uint8_t>(Round::Rn);
    x.flags = static_cast<uint8_t>(((ff & kFtz) ? kHalfFtz : 0) | ((ff & kSat) ? kHalfSat : 0) |
                                   (relu ? kHalfRelu : 0) | (xorSignAbs ? kHalfXorSignAbs : 0));
    x.fn = halfArith(op, t);
    switch (op) {
      case HalfOp::Mul:
        x.cls = InstClass::FpMul;
        break;
      case HalfOp::Fma:
        x.cls = InstClass::FpMad;
        break;
      case HalfOp::Min:
      case HalfOp::Max:
      case HalfOp::MinNaN:
      case HalfOp::MaxNaN:
        x.cls = InstClass::FpMax;
        break;
      case HalfOp::Ex2:
      case HalfOp::Tanh:
        x.cls = InstClass::Sfu;
        break;
      default:
        x.cls = InstClass::FpAdd;
    }
  }

  Handler saturatingAddSub(bool isAdd) { return isAdd ? satAddS32() : satSubS32(); }

  void decodeMov(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    Type t = [&] {
      auto ts = mods.takeTypes();
      if (ts.size() != 1) invalid(in.loc, "mov needs exactly one type");
      return ts[0];
    }();
    if (in.ops.size() != 2) invalid(in.loc, "mov takes 2 operands");
    const Operand& d = in.ops[0];
    const Operand& a = in.ops[1];
    x.cls = ptx::isFloat(t) ? (t == Type::F64 ? InstClass::DpAdd : InstClass::FpAdd)
                            : InstClass::IntAdd;
    if (t == Type::Pred) {
      x.dst[0] = predDst(d, info);
      x.ndst = 1;
      if (a.kind == Operand::Kind::Imm) {
        x.mode = a.imm ? 4 : 5;  // set / clear
        x.fn = predConst();
      } else {
        x.src[0] = predSrc(a, x, 0, info);
        x.nsrc = 1;
        x.mode = 4;
        x.fn = predLogic();
      }
      return;
    }
    if (a.kind == Operand::Kind::Vector) {  // pack
      if (d.kind != Operand::Kind::Reg) invalid(in.loc, "mov pack needs a register destination");
      unsigned n = static_cast<unsigned>(a.elems.size());
      unsigned part = ptx::typeBytes(t) / std::max(1u, n);
      if (n < 2 || n > 4 || part == 0) invalid(in.loc, "bad vector size for mov");
      x.dst[0] = dst(d, in, info);
      x.ndst = 1;
      Type pt = part == 1 ? Type::U8 : part == 2 ? Type::U16 : part == 4 ? Type::U32 : Type::U64;
      for (unsigned i = 0; i < n; ++i) x.src[i] = src(a.elems[i], pt, in, info);
      x.nsrc = static_cast<uint8_t>(n);
      x.mode = static_cast<uint8_t>(part);
      x.fn = movPack(n, part);
      return;
    }
    if (d.kind == Operand::Kind::Vector) {  // unpack
      unsigned n = static_cast<unsigned>(d.elems.size());
      unsigned part = ptx::typeBytes(t) / std::max(1u, n);
      if (n < 2 || n > 4 || part == 0) invalid(in.loc, "bad vector size for mov");
      for (unsigned i = 0; i < n; ++i) x.dst[i] = dst(d.elems[i], in, info);
      x.ndst = static_cast<uint8_t>(n);
      x.src[0] = src(a, t, in, info);
      x.nsrc = 1;
      x.mode = static_cast<uint8_t>(part);
      x.fn = movUnpack(n, part);
      return;
    }
    x.dst[0] = dst(d, in, info);
    x.ndst = 1;
    if (a.kind == Operand::Kind::SReg && ptx::sregIsDynamic(a.sreg)) {
      x.mode = static_cast<uint8_t>(a.sreg);
      x.fn = movSReg(a.sreg);
      return;
    }
    x.src[0] = src(a, t, in, info);
    x.nsrc = 1;
    x.fn = intUnary(IntUn::Mov, bitsType(t) == Type::U8 ? Type::U16 : bitsType(t));
  }

  void decodeLoadStore(const Instruction& in, ModList& mods, Inst& x, InstInfo& info, size_t fi) {
    const bool isStore = in.opcode == "st";
    {
      const auto has = [&](const char* m) {
        return std::find(in.mods.begin(), in.mods.end(), m) != in.mods.end();
      };
      info.l2Only =
          !isStore && (has(".cg") || has(".cv") || has(".volatile") ||
                       ((has(".relaxed") || has(".acquire")) && (has(".gpu") || has(".sys"))));
    }
    int sp = mods.takeOne({".global", ".shared", ".local", ".const", ".param", ".shared::cta",
                           ".param::func", ".param::entry", ".shared::cluster"});
    if (sp == 8) sp = 1;  // a cluster of one block: its own shared memory
    mods.take(".nc");
    mods.takeMemoryHints();
    int v = mods.takeOne({".v2", ".v4"});
    auto ts = mods.takeTypes();
    if (ts.size() != 1) invalid(in.loc, in.opcode + " needs exactly one type");
    Type t = ts[0];
    unsigned bytes = ptx::typeBytes(t);
    if (bytes == 0 || bytes > 8 || t == Type::Pred) unsupported(in);
    x.vec = static_cast<uint8_t>(v == 0 ? 2 : v == 1 ? 4 : 1);
    x.bytes = static_cast<uint8_t>(bytes);
    // .L2::cache_hint adds a createpolicy value as a last operand (a hint: read, then unused).
    const bool policy =
        std::find(in.mods.begin(), in.mods.end(), ".L2::cache_hint") != in.mods.end();
    if (in.ops.size() != (policy ? 3u : 2u))
      invalid(in.loc, in.opcode + (policy ? " with .L2::cache_hint takes 3 operands (the last a "
                                            "cache policy)"
                                          : " takes 2 operands"));
    if (policy) src(in.ops[2], Type::B64, in, info);
    const Operand& addrOp = isStore ? in.ops[0] : in.ops[1];
    const Operand& valOp = isStore ? in.ops[1] : in.ops[0];
    Address ad = address(addrOp, in, info);
    MemSpace space;
    switch (sp) {
      case 0:
        space = MemSpace::Global;
        break;
      case 1:
      case 5:
        space = MemSpace::Shared;
        break;
      case 2:
        space = MemSpace::Local;
        break;
      case 3:
        space = MemSpace::Const;
        break;
      case 4:
      case 6:
      case 7:
        space = ad.symbolSpace != MemSpace::None ? ad.symbolSpace
                : funcs_[fi]->isEntry            ? MemSpace::KernelParam
                                                 : MemSpace::CallParam;
        break;
      default:
        space = MemSpace::Generic;
        break;
    }
    if (ad.symbolSpace != MemSpace::None && space != MemSpace::Generic && ad.symbolSpace != space)
      invalid(addrOp.loc, fmt::format("'{}' is in {} space, not {}", addrOp.name,
                                      memSpaceName(ad.symbolSpace), memSpaceName(space)));
    if (space == MemSpace::Generic && ad.symbolSpace != MemSpace::None &&
        ad.symbolSpace != MemSpace::Global)
      unsupported(in, "generic access through a non-global symbol");
    x.space = space;
    x.src[0] = ad.base;
    x.imm = ad.offset;
    std::vector<const Operand*> vals;
    if (valOp.kind == Operand::Kind::Vector) {
      for (const auto& e : valOp.elems) vals.push_back(&e);
    } else {
      vals.push_back(&valOp);
    }
    if (vals.size() != x.vec)
      invalid(valOp.loc, fmt::format("{} values for a .v{} access", vals.size(), unsigned(x.vec)));
    if (isStore) {
      for (size_t i = 0; i < vals.size(); ++i) x.src[1 + i] = src(*vals[i], t, in, info);
      x.nsrc = static_cast<uint8_t>(1 + vals.size());
      x.fn = store(space, bytes);
      x.cls = InstClass::Store;
      if (space == MemSpace::Const || space == MemSpace::KernelParam)
        invalid(in.loc, fmt::format("cannot store to {} space", memSpaceName(space)));
    } else {
      for (size_t i = 0; i < vals.size(); ++i) x.dst[i] = dst(*vals[i], in, info);
      x.ndst = static_cast<uint8_t>(vals.size());
      x.nsrc = 1;
      x.fn = load(space, bytes, ptx::isSigned(t));
      x.cls = InstClass::Load;
    }
  }

  void decodeAtomic(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    const bool isRed = in.opcode == "red";
    int sp = mods.takeOne({".global", ".shared", ".shared::cta", ".shared::cluster"});
    mods.takeMemoryHints();
    int aop = mods.takeOne(
        {".add", ".min", ".max", ".inc", ".dec", ".exch", ".cas", ".and", ".or", ".xor"});
    const bool noftz = mods.take(".noftz");
    auto ts = mods.takeTypes();
    if (aop < 0) invalid(in.loc, in.opcode + " needs an operation");
    if (ts.size() != 1) invalid(in.loc, in.opcode + " needs exactly one type");
    Type t = ts[0];
    AtomOp op = static_cast<AtomOp>(aop);
    if (t == Type::B16 && op != AtomOp::Cas)
      invalid(in.loc, in.opcode + " on .b16 is a compare-and-swap only (atom.cas.b16)");
    const bool policy =
        std::find(in.mods.begin(), in.mods.end(), ".L2::cache_hint") != in.mods.end();
    size_t want = (isRed ? 2 : 3) + (op == AtomOp::Cas ? 1 : 0) + (policy ? 1 : 0);
    if (in.ops.size() != want)
      invalid(in.loc, fmt::format("{} takes {} operands", in.opcode, want));
    if (policy) src(in.ops[want - 1], Type::B64, in, info);  // the cache policy: a hint
    size_t i = 0;
    if (!isRed) {
      x.dst[0] = dst(in.ops[i++], in, info);
      x.ndst = 1;
    }
    Address ad = address(in.ops[i++], in, info);
    x.space = sp == 0 ? MemSpace::Global : sp > 0 ? MemSpace::Shared : MemSpace::Generic;
    if (ad.symbolSpace != MemSpace::None && x.space != MemSpace::Generic &&
        ad.symbolSpace != x.space)
      invalid(in.loc, "atomic address is in a different state space");
    x.src[0] = ad.base;
    x.imm = ad.offset;
    x.src[1] = src(in.ops[i++], t, in, info);
    x.src[2] = op == AtomOp::Cas ? src(in.ops[i++], t, in, info) : x.src[1];
    x.nsrc = 3;
    x.bytes = static_cast<uint8_t>(ptx::typeBytes(t));
    x.mode = static_cast<uint8_t>(op);
    x.mode2 = noftz ? 1 : 0;  // atom.add.f32 on global memory flushes subnormals without it
    x.fn = atomic(op, t, !isRed);
    x.cls = InstClass::Atomic;
  }

  // cp.async copies global to shared memory at once; commit and wait groups are then no-ops.
  void decodeCpAsync(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    if (!mods.take(".async")) unsupported(in);
    const bool commit = mods.take(".commit_group");
    if (commit || mods.take(".wait_all")) {
      nopsCheck(in, 0);
      x.fn = nop();
      x.cls = InstClass::Nop;
      info.asyncCopy = commit ? AsyncCopyOp::Commit : AsyncCopyOp::WaitAll;
      return;
    }
    if (mods.take(".mbarrier")) {  // cp.async.mbarrier.arrive{.noinc}.shared{::cta}.b64 [a]
      // The arrive-on happens when this thread's earlier cp.async copies complete, which they
      // have (they copy at once). Without .noinc the pending count is first raised by one, so
      // the two cancel; with .noinc it is an arrival like mbarrier.arrive's.
      if (!mods.take(".arrive")) invalid(in.loc, "cp.async.mbarrier needs .arrive");
      const bool noinc = mods.take(".noinc");
      const bool shared = mods.takeOne({".shared", ".shared::cta"}) >= 0;
      const auto types = mods.takeTypes();
      if (types.size() != 1 || types[0] != Type::B64)
        invalid(in.loc, "cp.async.mbarrier.arrive takes a .b64 mbarrier");
      nopsCheck(in, 1);
      Address a = address(in.ops[0], in, info);
      x.space = sharedOrGeneric(shared, a, in.ops[0]);
      x.src[0] = a.base;
      x.imm = a.offset;
      x.src[1] = constSlot(noinc ? 1 : 0);
      x.nsrc = 2;
      x.dst[0] = sinkSlot();
      x.ndst = 1;
      x.bytes = 8;
      x.fn = noinc ? mbarrier(MbarOp::Arrive) : nop();
      x.wakes = noinc;
      x.cls = noinc ? InstClass::Atomic : InstClass::Nop;
      return;
    }
    if (mods.take(".wait_group")) {
      nopsCheck(in, 1);
      if (in.ops[0].kind != Operand::Kind::Imm)
        invalid(in.loc, "cp.async.wait_group needs an integer");
      if (in.ops[0].imm < 0 || in.ops[0].imm > INT32_MAX)
        invalid(in.ops[0].loc, "cp.async.wait_group needs a group count of 0 or more");
      x.fn = nop();
      x.cls = InstClass::Nop;
      info.asyncCopy = AsyncCopyOp::WaitGroup;
      info.asyncWaitGroups = static_cast<uint32_t>(in.ops[0].imm);
      return;
    }
    int cache = mods.takeOne({".ca", ".cg"});
    int dsp = mods.takeOne({".shared", ".shared::cta"});
    bool gsp = mods.take(".global");
    mods.takeMemoryHints();
    if (cache < 0 || dsp < 0 || !gsp) unsupported(in);
    if (in.ops.size() != 3 && in.ops.size() != 4)
      invalid(in.loc, "cp.async takes a destination, a source, a size and an optional source size");
    const Operand& sz = in.ops[2];
    if (sz.kind != Operand::Kind::Imm || (sz.imm != 4 && sz.imm != 8 && sz.imm != 16))
      invalid(sz.loc, "cp.async copies 4, 8 or 16 bytes");
    if (cache == 1 && sz.imm != 16) invalid(sz.loc, "cp.async.cg copies 16 bytes");
    info.l2Only = cache == 1;  // .cg: cached in the L2 only
    Address to = address(in.ops[0], in, info);
    Address from = address(in.ops[1], in, info);
    if (to.symbolSpace != MemSpace::None && to.symbolSpace != MemSpace::Shared)
      invalid(in.ops[0].loc, "cp.async writes shared memory");
    if (from.symbolSpace != MemSpace::None && from.symbolSpace != MemSpace::Global)
      invalid(in.ops[1].loc, "cp.async reads global memory");
    if (from.offset < INT32_MIN || from.offset > INT32_MAX) unsupported(in, "source offset");
    x.src[0] = to.base;
    x.imm = to.offset;
    x.src[1] = from.base;
    x.aux = static_cast<uint32_t>(static_cast<int32_t>(from.offset));
    x.src[2] =
        in.ops.size() == 4 ? src(in.ops[3], Type::U32, in, info) : constSlot(uint64_t(sz.imm));
    x.nsrc = 3;
    x.bytes = static_cast<uint8_t>(sz.imm);
    x.space = MemSpace::Global;
    x.fn = cpAsync();
    x.cls = InstClass::Load;
    info.asyncCopy = AsyncCopyOp::Copy;
  }

  // The space of an mbarrier or bulk-copy operand: .shared/.shared::cta (and .shared::cluster,
  // a CTA being a cluster of one) or generic. A symbol's own space wins.
  MemSpace sharedOrGeneric(bool shared, const Address& a, const Operand& o) {
    if (a.symbolSpace != MemSpace::None && a.symbolSpace != MemSpace::Shared)
      invalid(o.loc, "expected a shared-memory address");
    return shared || a.symbolSpace == MemSpace::Shared ? MemSpace::Shared : MemSpace::Generic;
  }

  // mbarrier.{init,inval,arrive,arrive_drop,expect_tx,complete_tx,test_wait,try_wait,
  // pending_count}: see handlers_async.cpp.
  void decodeMbarrier(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    const int opIdx = mods.takeOne({".init", ".inval", ".arrive", ".arrive_drop", ".expect_tx",
                                    ".complete_tx", ".test_wait", ".try_wait", ".pending_count"});
    if (opIdx < 0) unsupported(in);
    static const MbarOp ops[] = {MbarOp::Init,       MbarOp::Inval,    MbarOp::Arrive,
                                 MbarOp::ArriveDrop, MbarOp::ExpectTx, MbarOp::CompleteTx,
                                 MbarOp::TestWait,   MbarOp::TryWait,  MbarOp::PendingCount};
    const MbarOp mop = ops[opIdx];
    const bool arrive = mop == MbarOp::Arrive || mop == MbarOp::ArriveDrop;
    const bool wait = mop == MbarOp::TestWait || mop == MbarOp::TryWait;
    uint8_t flags = 0;
    if (arrive && mods.take(".expect_tx")) flags |= kMbarExpectTx;
    if (arrive && mods.take(".noComplete")) flags |= kMbarNoComplete;
    if (wait && mods.take(".parity")) flags |= kMbarParity;
    // .shared::cluster addresses name the block's own shared memory (a cluster of one block).
    const bool shared = mods.takeOne({".shared", ".shared::cta", ".shared::cluster"}) >= 0;
    mods.takeMemoryHints();  // .release .acquire .relaxed .cta .cluster
    const auto types = mods.takeTypes();
    if (types.size() != 1 || types[0] != Type::B64) unsupported(in);
    x.flags = flags;
    x.wakes = true;
    x.fn = mbarrier(mop);
    if (mop == MbarOp::PendingCount) {
      nopsCheck(in, 2);
      x.dst[0] = dst(in.ops[0], in, info);
      x.src[0] = src(in.ops[1], Type::B64, in, info);
      x.ndst = x.nsrc = 1;
      x.wakes = false;
      x.cls = InstClass::IntAdd;
      return;
    }
    // Operands: [addr] (init/inval/expect_tx/complete_tx with a value), or a result first.
    const bool hasResult = arrive || wait;
    const size_t first = hasResult ? 1 : 0;
    size_t minOps = first + 1, maxOps = first + 2;
    if (mop == MbarOp::Init || mop == MbarOp::ExpectTx || mop == MbarOp::CompleteTx ||
        (flags & (kMbarExpectTx | kMbarNoComplete)))
      minOps = first + 2;  // a count is required
    if (mop == MbarOp::Inval) maxOps = 1;
    if (wait) minOps = 3, maxOps = mop == MbarOp::TryWait ? 4 : 3;  // try_wait: a time hint
    if (in.ops.size() < minOps || in.ops.size() > maxOps)
      invalid(in.loc, fmt::format("'{}' takes {} to {} operands, found {}", in.opcode, minOps,
                                  maxOps, in.ops.size()));
    if (hasResult) {
      if (wait) {
        x.dst[0] = predDst(in.ops[0], info);
      } else {
        x.dst[0] = dst(in.ops[0], in, info);
      }
      x.ndst = 1;
    }
    Address a = address(in.ops[first], in, info);
    x.space = sharedOrGeneric(shared, a, in.ops[first]);
    x.src[0] = a.base;
    x.imm = a.offset;
    x.src[1] = in.ops.size() > first + 1 ? src(in.ops[first + 1], Type::B64, in, info)
                                         : constSlot(1);  // arrive: one arrival
    if (wait && mop == MbarOp::TryWait && in.ops.size() == 4) src(in.ops[3], Type::U32, in, info);
    x.nsrc = 2;
    x.bytes = 8;
    x.cls = wait ? InstClass::Load : InstClass::Atomic;
  }

  // cp.async.bulk (.bulk taken): global -> shared with an mbarrier's complete_tx, shared ->
  // global with a bulk group, shared -> shared, prefetch; commit_group and wait_group.
  void decodeCpAsyncBulk(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    if (!mods.take(".async")) unsupported(in);
    if (mods.take(".commit_group")) {
      nopsCheck(in, 0);
      x.fn = nop();
      x.cls = InstClass::Nop;
      return;
    }
    if (mods.take(".wait_group")) {
      mods.take(".read");
      nopsCheck(in, 1);
      if (in.ops[0].kind != Operand::Kind::Imm)
        invalid(in.loc, "cp.async.bulk.wait_group needs an integer");
      x.fn = nop();
      x.cls = InstClass::Nop;
      return;
    }
    if (mods.take(".prefetch")) {
      mods.take(".L2");
      mods.take(".global");
      mods.takeMemoryHints();
      x.fn = nop();
      x.cls = InstClass::Nop;
      return;
    }
    // cp.reduce.async.bulk: a reduction op and an element type.
    const bool reduce = std::find(in.mods.begin(), in.mods.end(), ".reduce") != in.mods.end();
    int redOp = -1;
    BulkRedType redType = BulkRedType::B32;
    if (reduce) {
      mods.take(".reduce");
      redOp = mods.takeOne({".and", ".or", ".xor", ".add", ".inc", ".dec", ".min", ".max"});
      const bool noftz = mods.take(".noftz");
      const auto ts = mods.takeTypes();
      if (redOp < 0 || ts.size() != 1)
        invalid(in.loc,
                "cp.reduce.async.bulk needs a reduction (.and .or .xor .add .inc .dec "
                ".min .max) and a type");
      static const std::pair<Type, BulkRedType> types[] = {
          {Type::B32, BulkRedType::B32}, {Type::U32, BulkRedType::U32},
          {Type::S32, BulkRedType::S32}, {Type::B64, BulkRedType::B64},
          {Type::U64, BulkRedType::U64}, {Type::S64, BulkRedType::S64},
          {Type::F32, BulkRedType::F32}, {Type::F64, BulkRedType::F64},
          {Type::F16, BulkRedType::F16}, {Type::BF16, BulkRedType::BF16}};
      bool found = false;
      for (const auto& [pt, bt] : types)
        if (ts[0] == pt) {
          redType = bt;
          found = true;
        }
      const BulkRedOp ro = static_cast<BulkRedOp>(redOp);
      const bool bits = redType == BulkRedType::B32 || redType == BulkRedType::B64;
      const bool flt = redType >= BulkRedType::F32;
      const bool half = redType == BulkRedType::F16 || redType == BulkRedType::BF16;
      bool ok = found;
      if (ro == BulkRedOp::And || ro == BulkRedOp::Or || ro == BulkRedOp::Xor)
        ok = ok && bits;
      else if (ro == BulkRedOp::Inc || ro == BulkRedOp::Dec)
        ok = ok && redType == BulkRedType::U32;
      else if (ro == BulkRedOp::Add)
        ok = ok && !bits && redType != BulkRedType::S64 && half == noftz;
      else
        ok = ok && !bits && !flt;
      if (!ok || (noftz && !half)) unsupported(in);
    }
    // The destination space comes first: .shared::cta/.shared::cluster or .global.
    std::vector<std::string> spaces;
    for (const auto& m : in.mods)
      if (m == ".global" || m == ".shared::cta" || m == ".shared::cluster" || m == ".shared")
        spaces.push_back(m);
    for (const auto& sp : spaces) mods.take(sp);
    const bool complete = mods.take(".mbarrier::complete_tx::bytes");
    const bool group = mods.take(".bulk_group");
    const bool hint = mods.take(".L2::cache_hint");
    if (mods.take(".multicast::cluster")) unsupported(in, "clusters are not supported");
    mods.takeMemoryHints();
    if (spaces.size() != 2) unsupported(in);
    const bool dstGlobal = spaces[0] == ".global", srcGlobal = spaces[1] == ".global";
    if (dstGlobal && srcGlobal) unsupported(in);
    x.mode = dstGlobal ? 1 : srcGlobal ? 0 : 2;
    if (reduce) {
      if (x.mode == 0) unsupported(in, "bulk reductions read shared memory (.shared::cta)");
      if (x.mode == 2 && redType >= BulkRedType::F32)
        unsupported(in, "bulk reductions into shared memory are on integers");
      x.flags = static_cast<uint8_t>(redOp + 1);
      x.mode2 = static_cast<uint8_t>(redType);
    }
    if ((x.mode == 1) != group || (x.mode != 1) != complete)
      unsupported(in, x.mode == 1 ? "a copy to global memory completes through .bulk_group"
                                  : "a copy to shared memory completes through "
                                    ".mbarrier::complete_tx::bytes");
    const size_t n = (x.mode == 1 ? 3 : 4) + (hint ? 1 : 0);
    nopsCheck(in, n);
    Address to = address(in.ops[0], in, info);
    Address from = address(in.ops[1], in, info);
    auto expect = [&](const Address& a, const Operand& o, bool global) {
      if (a.symbolSpace != MemSpace::None &&
          a.symbolSpace != (global ? MemSpace::Global : MemSpace::Shared))
        invalid(o.loc, global ? "expected a global address" : "expected a shared address");
    };
    expect(to, in.ops[0], dstGlobal);
    expect(from, in.ops[1], srcGlobal);
    if (from.offset < INT32_MIN || from.offset > INT32_MAX) unsupported(in, "source offset");
    x.src[0] = to.base;
    x.imm = to.offset;
    x.src[1] = from.base;
    x.aux = static_cast<uint32_t>(static_cast<int32_t>(from.offset));
    x.src[2] = src(in.ops[2], Type::U32, in, info);
    x.src[3] = constSlot(0);
    if (x.mode != 1) {
      Address bar = address(in.ops[3], in, info);
      x.space = sharedOrGeneric(true, bar, in.ops[3]);
      if (bar.offset < INT32_MIN || bar.offset > INT32_MAX) unsupported(in, "mbarrier offset");
      x.src[3] = bar.base;
      x.dst[0] = static_cast<uint32_t>(static_cast<int32_t>(bar.offset));
      x.space = MemSpace::Shared;
    }
    if (hint) src(in.ops[n - 1], Type::B64, in, info);
    x.nsrc = 4;
    x.bytes = 16;
    x.wakes = x.mode != 1;
    x.fn = cpAsyncBulk();
    x.cls = x.mode == 1 ? InstClass::Store : InstClass::Load;
    if (reduce && x.mode == 1) x.cls = InstClass::Atomic;  // read-modify-write at the L2
  }

  // The object and coordinates of a texture fetch or surface access, [handle, {coordinates}], of
  // the shape named by the modifiers (.1d .2d .3d, or the layered .a1d .a2d): src[0] the handle,
  // src[1..3] x, y and z as `coordType`, or, layered, x, y and the layer (an integer) in src[3].
  // Returns whether the shape is layered.
  bool objectAndCoordinates(const Instruction& in, ModList& mods, const Operand& a, bool surface,
                            Type coordType, Inst& x, InstInfo& info) {
    const int shape = mods.takeOne({".1d", ".2d", ".3d", ".a1d", ".a2d"});
    if (shape < 0)
      unsupported(in, surface ? "only 1D, 2D, 3D and layered 1D and 2D surfaces are supported"
                              : "only 1D, 2D, 3D and layered 1D and 2D texture fetches are "
                                "supported (no cube textures, no tex.level or tex.grad)");
    const bool layered = shape >= 3;
    const int geom = layered ? shape - 3 : shape;  // 0: 1D, 1: 2D, 2: 3D
    if (a.kind != Operand::Kind::Address || a.elems.size() != 1)
      invalid(a.loc, surface ? "a surface access takes [surface, {coordinates}]"
                             : "a texture fetch reads [texture, {coordinates}]");
    if (!a.var || a.var->space != StateSpace::Reg || a.imm != 0)
      unsupported(in, surface ? "surfaces are accessed through surface objects (a .u64 "
                                "register); surface references (.surfref) are not supported"
                              : "textures are fetched through texture objects (a .u64 register); "
                                "texture references (.texref) are not supported");
    auto coords = vectorElems(a.elems[0]);
    // {x}, {x, y}, {x, y, z, _}; layered: {layer, x}, {layer, x, y, _}.
    const size_t ncoords = layered ? (geom == 0 ? 2 : 4) : geom == 2 ? 4 : size_t(geom + 1);
    if (a.elems[0].kind != Operand::Kind::Vector || coords.size() != ncoords)
      invalid(a.elems[0].loc, fmt::format("this {} takes {} coordinates",
                                          surface ? "surface access" : "fetch", ncoords));
    Operand handle = a;
    handle.kind = Operand::Kind::Reg;
    handle.elems.clear();
    x.src[0] = src(handle, Type::U64, in, info);
    const size_t first = layered ? 1 : 0;
    for (int k = 0; k < 3; ++k)
      x.src[1 + k] =
          k <= geom ? src(*coords[first + size_t(k)], coordType, in, info) : constSlot(0);
    if (layered) x.src[3] = src(*coords[0], Type::S32, in, info);
    x.nsrc = 4;
    return layered;
  }

  // tex.{1d,2d,3d,a1d,a2d}.v4.dtype.ctype {d0, d1, d2, d3}, [handle, {coordinates}]: a fetch
  // through a texture object (func/texture.hpp), timed as a global load of the texels.
  void decodeTex(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    if (!mods.take(".v4")) unsupported(in, "a texture fetch returns .v4");
    auto ts = mods.takeTypes();
    if (ts.size() != 2) invalid(in.loc, "tex needs .v4.dtype.ctype");
    if (ts[0] != Type::F32 && ts[0] != Type::S32 && ts[0] != Type::U32)
      unsupported(in, "a texture fetch returns .f32, .s32 or .u32 here");
    if (ts[1] != Type::F32 && ts[1] != Type::S32)
      invalid(in.loc, "texture coordinates are .f32 or .s32");
    nopsCheck(in, 2);
    auto d = vectorElems(in.ops[0]);
    if (in.ops[0].kind != Operand::Kind::Vector || d.size() != 4)
      invalid(in.ops[0].loc, "a texture fetch writes four registers {d0, d1, d2, d3}");
    if (objectAndCoordinates(in, mods, in.ops[1], false, ts[1], x, info)) x.flags = 1;
    for (int k = 0; k < 4; ++k) x.dst[k] = dst(*d[k], in, info);
    x.ndst = 4;
    x.space = MemSpace::Global;
    x.bytes = 4;
    x.vec = 4;
    x.fn = texFetch(ts[1] == Type::S32);
    x.cls = InstClass::Load;
  }

  // suld.b.{1d,2d,3d,a1d,a2d}{.v2,.v4}.{b8,b16,b32,b64}{.trap,.clamp,.zero} {d..}, [surf,
  // {coordinates}] and sust.b likewise with [surf, {coordinates}], {a..}: raw bytes of a surface
  // object (x in bytes), timed as a global load or store.
  void decodeSurface(const Instruction& in, ModList& mods, Inst& x, InstInfo& info, bool store) {
    if (!mods.take(".b")) unsupported(in, "only raw surface accesses (.b) are supported, not .p");
    const int vec = mods.takeOne({".v2", ".v4"});
    const size_t n = vec < 0 ? 1 : vec == 0 ? 2 : 4;
    int clamp = mods.takeOne({".trap", ".clamp", ".zero"});
    if (clamp < 0) clamp = 0;  // PTX's default is .trap
    for (const char* hint : {".ca", ".cg", ".cs", ".cv", ".wb", ".wt"}) mods.take(hint);
    auto ts = mods.takeTypes();
    if (ts.size() != 1 ||
        (ts[0] != Type::B8 && ts[0] != Type::B16 && ts[0] != Type::B32 && ts[0] != Type::B64))
      invalid(in.loc, in.opcode + " needs one of .b8 .b16 .b32 .b64");
    const unsigned eb = ptx::typeBytes(ts[0]);
    if (eb * n > 16) invalid(in.loc, "a surface access moves at most 16 bytes");
    nopsCheck(in, 2);
    const Operand& data = store ? in.ops[1] : in.ops[0];
    const bool layered =
        objectAndCoordinates(in, mods, store ? in.ops[0] : in.ops[1], true, Type::S32, x, info);
    auto regs = vectorElems(data);
    if (regs.size() != n)
      invalid(data.loc,
              fmt::format("this surface access moves {} register{}", n, n == 1 ? "" : "s"));
    std::vector<uint32_t> list;
    for (const Operand* r : regs)
      list.push_back(store ? src(*r, ts[0], in, info) : dst(*r, in, info));
    x.aux = static_cast<uint32_t>(p_->operandLists.size());
    p_->operandLists.push_back(std::move(list));
    x.space = MemSpace::Global;
    x.bytes = static_cast<uint8_t>(eb);
    x.vec = static_cast<uint8_t>(n);
    x.mode = static_cast<uint8_t>(clamp);
    x.flags = static_cast<uint8_t>((store ? 1 : 0) | (layered ? 2 : 0));
    x.fn = surfaceAccess();
    x.cls = store ? InstClass::Store : InstClass::Load;
  }

  // The registers of a { ... } vector operand (or a single register).
  std::vector<const Operand*> vectorElems(const Operand& o) {
    std::vector<const Operand*> v;
    if (o.kind == Operand::Kind::Vector)
      for (const auto& e : o.elems) v.push_back(&e);
    else
      v.push_back(&o);
    return v;
  }

  // mma.sync.aligned.shape.row.col{.satfinite}.dtype.atype.btype.ctype d, a, b, c, and the
  // quad-pair form mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype (any of .row and
  // .col for A and B).
  void decodeMma(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    const bool syncAligned = mods.take(".sync") && mods.take(".aligned");
    const int aLayout = mods.takeOne({".row", ".col"}), bLayout = mods.takeOne({".row", ".col"});
    if (!syncAligned || aLayout < 0 || bLayout < 0)
      unsupported(in, "mma needs .sync.aligned and the .row.col layout");
    static const char* const shapes[] = {".m16n8k4",  ".m16n8k8",   ".m16n8k16",  ".m16n8k32",
                                         ".m16n8k64", ".m16n8k128", ".m16n8k256", ".m8n8k4",
                                         ".m8n8k16",  ".m8n8k32",   ".m8n8k128"};
    int shape = -1;
    for (int i = 0; i < 11 && shape < 0; ++i)
      if (mods.take(shapes[i])) shape = i;
    if (shape < 0) unsupported(in);
    const bool m8 = shape >= 7;
    const int k = std::atoi(shapes[shape] + (m8 ? 6 : 7));  // after ".m8n8k" or ".m16n8k"
    const bool satFinite = mods.take(".satfinite");
    const int b1op = mods.takeOne({".xor", ".and"});
    const bool popc = mods.take(".popc");
    // The four types d, a, b, c in order (some are not ptx::Type names: tf32, fp8, s4, u4, b1).
    static const char* const names[] = {".f16", ".bf16", ".tf32", ".s8",   ".u8", ".s4",
                                        ".u4",  ".b1",   ".e4m3", ".e5m2", ".f64"};
    std::vector<std::string> ts;
    for (const auto& m : in.mods)
      if (m == ".f32" || m == ".s32" ||
          std::find_if(std::begin(names), std::end(names), [&](const char* n) { return m == n; }) !=
              std::end(names))
        ts.push_back(m);
    for (const auto& t : ts) mods.take(t);
    if (ts.size() == 2 && ts[0] == ".f32" && ts[1] == ".tf32")
      ts = {".f32", ".tf32", ".tf32", ".f32"};
    if (ts.size() != 4) invalid(in.loc, "mma needs .dtype.atype.btype.ctype");
    auto kind = [&](const std::string& t) -> int {
      for (int i = 0; i < 11; ++i)
        if (t == names[i]) return i;  // the MmaType order
      return -1;
    };
    const int at = kind(ts[1]), bt = kind(ts[2]);
    if (at < 0 || bt < 0) unsupported(in);
    const MmaType a = MmaType(at), b = MmaType(bt);
    auto family = [](MmaType t) {
      switch (t) {
        case MmaType::S8:
        case MmaType::U8:
          return 1;
        case MmaType::S4:
        case MmaType::U4:
          return 2;
        case MmaType::B1:
          return 3;
        case MmaType::E4M3:
        case MmaType::E5M2:
          return 4;
        default:
          return 0;  // f16 bf16 tf32 f64: both inputs the same type
      }
    };
    if (family(a) != family(b) || (family(a) == 0 && a != b)) unsupported(in);
    const bool isInt = family(a) >= 1 && family(a) <= 3;
    const bool isF64 = a == MmaType::F64;
    // m8n8k4 with f16 inputs: four 8x8x4 products, one per quad-pair of threads, in any layout.
    const bool quadPair = a == MmaType::F16 && m8 && k == 4;
    if (!quadPair && (aLayout != 0 || bLayout != 1))
      unsupported(in, "mma needs .sync.aligned and the .row.col layout");
    // Shape and input type: the fragment layout, and elements per register.
    MmaShape ms{};
    bool ok = false;
    switch (a) {
      case MmaType::F16:
      case MmaType::BF16:
        ok = quadPair || (!m8 && (k == 8 || k == 16));
        ms = k == 8 ? MmaShape::M16N8K8Half : MmaShape::M16N8K16Half;
        break;
      case MmaType::TF32:
        ok = !m8 && (k == 4 || k == 8);
        ms = k == 4 ? MmaShape::M16N8K4Tf32 : MmaShape::M16N8K8Tf32;
        break;
      case MmaType::F64:
        ok = (m8 && k == 4) || (!m8 && (k == 4 || k == 8 || k == 16));
        ms = m8       ? MmaShape::M8N8K4F64
             : k == 4 ? MmaShape::M16N8K4F64
             : k == 8 ? MmaShape::M16N8K8F64
                      : MmaShape::M16N8K16F64;
        break;
      default: {  // integer and fp8: k is one (or two) registers of elements per thread row
        const int e = family(a) == 2 ? 8 : family(a) == 3 ? 32 : 4;
        ok = (m8 && k == 4 * e && family(a) != 4) || (!m8 && k == 4 * e && family(a) != 4) ||
             (!m8 && k == 8 * e);
        ms = m8 ? MmaShape::M8N8K16Int : k == 4 * e ? MmaShape::M16N8K16Int : MmaShape::M16N8K32Int;
        break;
      }
    }
    if (!ok) unsupported(in);
    if ((a == MmaType::B1) != (b1op >= 0 && popc))
      invalid(in.loc, a == MmaType::B1 ? "mma with .b1 inputs needs .xor.popc or .and.popc"
                                       : ".xor/.and.popc apply to .b1 inputs only");
    if (satFinite && (!isInt || a == MmaType::B1)) unsupported(in);
    // Accumulators: s32 (integer inputs), f64 (f64), f32 or f16 (f16 and fp8 inputs), f32.
    const std::string acc = isInt ? ".s32" : isF64 ? ".f64" : ".f32";
    const bool halfOk = a == MmaType::F16 || family(a) == 4;
    const bool dHalf = halfOk && ts[0] == ".f16", cHalf = halfOk && ts[3] == ".f16";
    if ((ts[0] != acc && !dHalf) || (ts[3] != acc && !cHalf))
      unsupported(in,
                  "accumulators must be .f32 (.f16 with f16 or fp8 inputs), .f64 (f64 "
                  "inputs) or .s32 (integer inputs)");
    const int mrows = m8 ? 8 : 16;
    const int perA = a == MmaType::TF32 || isF64               ? 1
                     : a == MmaType::F16 || a == MmaType::BF16 ? 2
                     : family(a) == 2                          ? 8
                     : family(a) == 3                          ? 32
                                                               : 4;
    // The quad-pair form: each thread holds four A and four B elements and eight of C and D.
    const size_t ra = quadPair ? 2 : size_t(mrows * k / 32 / perA),
                 rb = quadPair ? 2 : size_t(8 * k / 32 / perA);
    const size_t nc = quadPair ? 8 : size_t(mrows * 8 / 32);
    nopsCheck(in, 4);
    auto d = vectorElems(in.ops[0]), av = vectorElems(in.ops[1]), bv = vectorElems(in.ops[2]),
         cc = vectorElems(in.ops[3]);
    const size_t rd = dHalf ? nc / 2 : nc, rc = cHalf ? nc / 2 : nc;
    if (d.size() != rd || av.size() != ra || bv.size() != rb || cc.size() != rc)
      invalid(in.loc, fmt::format("this mma takes {{{}}}, {{{}}}, {{{}}} and {{{}}} registers", rd,
                                  ra, rb, rc));
    const Type regType = isF64 ? Type::F64 : Type::B32;
    std::vector<uint32_t> list;
    for (const Operand* o : d) list.push_back(dst(*o, in, info));
    for (const Operand* o : av) list.push_back(src(*o, regType, in, info));
    for (const Operand* o : bv) list.push_back(src(*o, regType, in, info));
    for (const Operand* o : cc)
      list.push_back(src(*o,
                         cHalf   ? Type::B32
                         : isInt ? Type::S32
                         : isF64 ? Type::F64
                                 : Type::F32,
                         in, info));
    x.aux = static_cast<uint32_t>(p_->operandLists.size());
    p_->operandLists.push_back(std::move(list));
    x.mode = static_cast<uint8_t>(ms);
    x.mode2 = static_cast<uint8_t>(at | (bt << 4));
    x.imm = k;
    x.flags = static_cast<uint8_t>((isInt ? 1 : 0) | (satFinite ? 2 : 0) | (dHalf ? 4 : 0) |
                                   (cHalf ? 8 : 0) | (b1op == 0 ? 16 : 0) | (b1op == 1 ? 32 : 0) |
                                   (isF64 ? 64 : 0));
    x.fn = mma();
    if (quadPair) {  // its own handler: flags 4 D f16, 8 C f16, 16 A .col, 32 B .col
      x.flags = static_cast<uint8_t>((dHalf ? 4 : 0) | (cHalf ? 8 : 0) | (aLayout == 1 ? 16 : 0) |
                                     (bLayout == 1 ? 32 : 0));
      x.fn = mmaQuadPair();
    }
    // Without tensor cores for its type the timing model runs it as multiply-adds of its
    // accumulator's class.
    x.cls = isInt ? InstClass::IntMad : isF64 ? InstClass::DpMad : InstClass::FpMad;
    // The quad-pair form is four 8x8x4 products.
    info.matrix.fmas = quadPair ? 4 * 8 * 8 * 4 : uint32_t(mrows * 8 * k);
    info.matrix.type = matrixTypeOf(a, dHalf && cHalf);
  }

  static MatrixType matrixTypeOf(MmaType a, bool halfAccumulators) {
    switch (a) {
      case MmaType::F16:
        return halfAccumulators ? MatrixType::F16 : MatrixType::F16F32;
      case MmaType::BF16:
        return MatrixType::BF16;
      case MmaType::TF32:
        return MatrixType::TF32;
      case MmaType::S8:
      case MmaType::U8:
        return MatrixType::Int8;
      case MmaType::S4:
      case MmaType::U4:
        return MatrixType::Int4;
      case MmaType::B1:
        return MatrixType::B1;
      case MmaType::E4M3:
      case MmaType::E5M2:
        return MatrixType::Fp8;
      case MmaType::F64:
        break;
    }
    return MatrixType::F64;
  }

  void decodeMatrixLoadStore(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    const bool store = in.opcode == "stmatrix";
    if (!mods.take(".sync") || !mods.take(".aligned") || !mods.take(".m8n8")) unsupported(in);
    int num = mods.takeOne({".x1", ".x2", ".x4"});
    bool trans = mods.take(".trans");
    int sp = mods.takeOne({".shared", ".shared::cta"});
    Type t = [&] {
      auto ts = mods.takeTypes();
      return ts.size() == 1 ? ts[0] : Type::None;
    }();
    if (num < 0 || t != Type::B16) unsupported(in);
    const size_t n = num == 0 ? 1 : num == 1 ? 2 : 4;
    nopsCheck(in, 2);
    const Operand& regs = store ? in.ops[1] : in.ops[0];
    auto r = vectorElems(regs);
    if (r.size() != n)
      invalid(regs.loc, fmt::format("ldmatrix/stmatrix .x{} needs {} registers", n, n));
    Address ad = address(store ? in.ops[0] : in.ops[1], in, info);
    std::vector<uint32_t> list;
    for (const Operand* o : r)
      list.push_back(store ? src(*o, Type::B32, in, info) : dst(*o, in, info));
    list.push_back(ad.base);
    x.aux = static_cast<uint32_t>(p_->operandLists.size());
    p_->operandLists.push_back(std::move(list));
    x.imm = ad.offset;
    x.space = sp >= 0 ? MemSpace::Shared : MemSpace::Generic;
    if (ad.symbolSpace != MemSpace::None && ad.symbolSpace != MemSpace::Shared)
      invalid(in.loc, in.opcode + " addresses shared memory");
    x.mode = static_cast<uint8_t>(n);
    x.flags = static_cast<uint8_t>((trans ? 1 : 0) | (store ? 2 : 0));
    x.bytes = 16;
    x.fn = matrixLoadStore();
    x.cls = store ? InstClass::Store : InstClass::Load;
  }

  // The registers of the wmma fragment operand `o` ({r0, r1, ...}, n of them) onto `list`.
  void wmmaFragment(std::vector<uint32_t>& list, const Operand& o, bool isDst, size_t n, Type t,
                    const Instruction& in, InstInfo& info) {
    auto r = vectorElems(o);
    if (r.size() != n) invalid(o.loc, fmt::format("this wmma fragment has {} registers", n));
    for (const Operand* e : r) list.push_back(isDst ? dst(*e, in, info) : src(*e, t, in, info));
  }

  // wmma.load.{a,b,c} / wmma.store.d of a rows x cols fragment (which: 0 A, 1 B, 2 C/D) of kind
  // `fk` in state space `sp` (0 global, 1 shared, -1 generic): its registers, the address and
  // the stride (the layout's leading dimension when the instruction gives none) onto `list`;
  // `shapeFlags` is ORed into x.flags after the layout and `which`.
  void wmmaLoadStore(const Instruction& in, Inst& x, InstInfo& info, std::vector<uint32_t>& list,
                     bool store, int which, int layout, int sp, int rows, int cols, WmmaKind fk,
                     Type regType, uint8_t shapeFlags) {
    const Operand& frag = store ? in.ops[1] : in.ops[0];
    wmmaFragment(list, frag, !store, wmmaRegs(fk, rows * cols / 32), regType, in, info);
    Address ad = address(store ? in.ops[0] : in.ops[1], in, info);
    list.push_back(ad.base);
    list.push_back(in.ops.size() == 3 ? src(in.ops[2], Type::U32, in, info)
                                      : constSlot(uint64_t(layout == 1 ? rows : cols)));
    x.imm = ad.offset;
    x.space = sp == 0 ? MemSpace::Global : sp > 0 ? MemSpace::Shared : MemSpace::Generic;
    if (ad.symbolSpace != MemSpace::None && x.space != MemSpace::Generic &&
        ad.symbolSpace != x.space)
      invalid(in.loc, "wmma address is in a different state space");
    x.mode = store ? 1 : 0;
    x.mode2 = static_cast<uint8_t>(fk);
    x.flags = static_cast<uint8_t>((layout == 1 ? 1 : 0) | (which << 1) | shapeFlags);
    x.bytes = 16;
    x.cls = store ? InstClass::Store : InstClass::Load;
  }

  // wmma in the 8x8 shapes: m8n8k4 (f64), m8n8k32 (s4, u4) and m8n8k128 (b1), with s32 or f64
  // accumulators. Their fragments use gpusc's layout (handlers_mma.cpp), as the other shapes do.
  void decodeWmmaSmall(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    const int kind = mods.takeOne({".load", ".store", ".mma"});
    const int shape = mods.takeOne({".m8n8k4", ".m8n8k32", ".m8n8k128"});
    if (kind < 0 || shape < 0 || !mods.take(".sync") || !mods.take(".aligned"))
      unsupported(in, "wmma needs .load, .store or .mma and .sync.aligned");
    const int k = shape == 0 ? 4 : shape == 1 ? 32 : 128;
    std::vector<std::string> ts;
    for (const auto& m : in.mods)
      if (m == ".f64" || m == ".s32" || m == ".s4" || m == ".u4" || m == ".b1") ts.push_back(m);
    for (const auto& t : ts) mods.take(t);
    auto kindOf = [](const std::string& t) {
      return t == ".f64"  ? WmmaKind::F64
             : t == ".s4" ? WmmaKind::S4
             : t == ".u4" ? WmmaKind::U4
             : t == ".b1" ? WmmaKind::B1
                          : WmmaKind::S32;
    };
    // The input types each shape takes.
    auto inputOk = [&](const std::string& t) {
      return shape == 0 ? t == ".f64" : shape == 1 ? (t == ".s4" || t == ".u4") : t == ".b1";
    };
    const std::string acc = shape == 0 ? ".f64" : ".s32";
    const Type regType = shape == 0 ? Type::F64 : Type::B32;
    std::vector<uint32_t> list;
    auto regs = [&](const Operand& o, bool isDst, size_t n, Type t) {
      wmmaFragment(list, o, isDst, n, t, in, info);
    };
    if (kind == 2) {  // mma
      const int al = mods.takeOne({".row", ".col"}), bl = mods.takeOne({".row", ".col"});
      if (al < 0 || bl < 0) invalid(in.loc, "wmma.mma needs the A and B layouts");
      const bool sat = mods.take(".satfinite");
      const int b1op = mods.takeOne({".xor", ".and"});
      const bool popc = mods.take(".popc");
      if (shape == 0 && mods.takeOne({".rz", ".rm", ".rp"}) >= 0)
        unsupported(in, "f64 wmma.mma rounds to nearest (.rn) only");
      if (shape == 0) mods.take(".rn");
      if (ts.size() != 4 || ts[0] != acc || ts[3] != acc || !inputOk(ts[1]) || !inputOk(ts[2]))
        unsupported(in,
                    "wmma.mma is .f64.f64.f64.f64 (m8n8k4), .s32.{s4,u4}.{s4,u4}.s32 "
                    "(m8n8k32) or .s32.b1.b1.s32 (m8n8k128)");
      if (shape > 0 && (al != 0 || bl != 1))
        unsupported(in, "sub-byte wmma.mma takes .row.col layouts");
      if ((shape == 2) != (b1op >= 0 && popc))
        invalid(in.loc, shape == 2 ? "wmma.mma with .b1 inputs needs .xor.popc or .and.popc"
                                   : ".xor/.and.popc apply to .b1 inputs only");
      if (sat && shape != 1) unsupported(in, ".satfinite applies to s4/u4 wmma.mma only");
      const WmmaKind ak = kindOf(ts[1]), bk = kindOf(ts[2]);
      nopsCheck(in, 4);
      regs(in.ops[0], true, 2, regType);
      regs(in.ops[1], false, wmmaRegs(ak, 8 * k / 32), regType);
      regs(in.ops[2], false, wmmaRegs(bk, k * 8 / 32), regType);
      regs(in.ops[3], false, 2, shape == 0 ? Type::F64 : Type::S32);
      x.mode = 2;
      x.mode2 = static_cast<uint8_t>(int(ak) | (int(bk) << 4));
      x.flags = sat ? 128 : 0;
      x.imm = b1op < 0 ? 0 : b1op + 1;
      x.cls = shape == 0 ? InstClass::DpMad : InstClass::IntMad;
      info.matrix.fmas = uint32_t(8 * 8 * k);
      info.matrix.type = shape == 0   ? MatrixType::F64
                         : shape == 1 ? MatrixType::Int4
                                      : MatrixType::B1;
    } else {
      const bool store = kind == 1;
      const int which = store ? (mods.take(".d") ? 2 : -1) : mods.takeOne({".a", ".b", ".c"});
      const int layout = mods.takeOne({".row", ".col"});
      const int sp = mods.takeOne({".global", ".shared", ".shared::cta"});
      if (which < 0 || layout < 0 || ts.size() != 1) invalid(in.loc, "malformed wmma load/store");
      const bool accum = which == 2;
      if (accum ? ts[0] != acc : !inputOk(ts[0]))
        unsupported(in,
                    "wmma fragments: m8n8k4 .f64; m8n8k32 A/B .s4/.u4 and C/D .s32; "
                    "m8n8k128 A/B .b1 and C/D .s32");
      if (shape > 0 && !accum && layout != which)  // A .row (0), B .col (1)
        unsupported(in, "sub-byte wmma fragments: A is .row and B is .col");
      if (in.ops.size() != 2 && in.ops.size() != 3)
        invalid(in.loc, "wmma load/store takes a fragment, an address and an optional stride");
      const WmmaKind fk = kindOf(ts[0]);
      wmmaLoadStore(in, x, info, list, store, which, layout, sp, which == 1 ? k : 8,
                    which == 0 ? k : 8, fk, regType, static_cast<uint8_t>((shape << 3) | 32));
    }
    x.aux = static_cast<uint32_t>(p_->operandLists.size());
    p_->operandLists.push_back(std::move(list));
    x.fn = wmma();
  }

  // wmma.load.{a,b,c} / wmma.store.d / wmma.mma in the shapes m16n16k16, m32n8k16, m8n32k16
  // (f16 or bf16 inputs) and m16n16k8 (tf32), with f32 or (f16 inputs) f16 accumulators; the
  // fragment layout is gpusc's own (see handlers_mma.cpp).
  void decodeWmma(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    for (const auto& m : in.mods)
      if (m == ".m8n8k4" || m == ".m8n8k32" || m == ".m8n8k128")
        return decodeWmmaSmall(in, mods, x, info);
    int kind = mods.takeOne({".load", ".store", ".mma"});
    int shape = mods.takeOne({".m16n16k16", ".m32n8k16", ".m8n32k16", ".m16n16k8"});
    if (kind < 0 || !mods.take(".sync") || !mods.take(".aligned") || shape < 0)
      unsupported(in,
                  "wmma needs .sync.aligned and a shape m16n16k16, m32n8k16, m8n32k16 or "
                  "m16n16k8");
    int tf32 = 0;
    while (mods.take(".tf32")) ++tf32;
    const bool isTf32Shape = shape == int(WmmaShape::M16N16K8);
    const int mm = shape == 1   ? 32
                   : shape == 2 ? 8
                                : 16,
              nn = shape == 1   ? 8
                   : shape == 2 ? 32
                                : 16,
              kk = isTf32Shape ? 8 : 16;
    std::vector<uint32_t> list;
    auto regs = [&](const Operand& o, bool isDst, size_t n, Type t) {
      wmmaFragment(list, o, isDst, n, t, in, info);
    };
    auto kindOf = [&](Type t, bool accum) -> int {
      if (t == Type::F32) return accum ? int(WmmaKind::F32) : -1;
      if (t == Type::S32) return accum && !isTf32Shape ? int(WmmaKind::S32) : -1;
      if ((t == Type::S8 || t == Type::U8) && !accum && !isTf32Shape)
        return int(t == Type::S8 ? WmmaKind::S8 : WmmaKind::U8);
      if (t == Type::F16) return int(accum ? WmmaKind::F16Acc : WmmaKind::F16);
      if (t == Type::BF16 && !accum) return int(WmmaKind::BF16);
      return -1;
    };
    if (kind == 2) {  // mma
      int al = mods.takeOne({".row", ".col"}), bl = mods.takeOne({".row", ".col"});
      auto ts = mods.takeTypes();
      if (al < 0 || bl < 0) invalid(in.loc, "wmma.mma needs the A and B layouts");
      WmmaKind ik, bk = WmmaKind::F16;
      bool dHalf = false, cHalf = false;
      const bool satFinite = mods.take(".satfinite");
      const bool intIn = ts.size() == 4 && (ts[1] == Type::S8 || ts[1] == Type::U8);
      if (intIn) {  // .s32.{s8,u8}.{s8,u8}.s32{.satfinite}
        if (tf32 || ts[0] != Type::S32 || ts[3] != Type::S32 ||
            (ts[2] != Type::S8 && ts[2] != Type::U8))
          unsupported(in, "integer wmma.mma is .s32.{s8,u8}.{s8,u8}.s32");
        ik = ts[1] == Type::S8 ? WmmaKind::S8 : WmmaKind::U8;
        bk = ts[2] == Type::S8 ? WmmaKind::S8 : WmmaKind::U8;
      } else if (satFinite) {
        unsupported(in, "only integer wmma.mma takes .satfinite");
      } else if (tf32 == 2 && ts.size() == 2 && ts[0] == Type::F32 && ts[1] == Type::F32) {
        ik = WmmaKind::TF32;
      } else if (tf32 == 0 && ts.size() == 4 && ts[0] == Type::F32 && ts[1] == Type::BF16 &&
                 ts[2] == Type::BF16 && ts[3] == Type::F32) {
        ik = WmmaKind::BF16;
      } else if (tf32 == 0 && ts.size() == 2 && kindOf(ts[0], true) >= 0 &&
                 kindOf(ts[1], true) >= 0) {
        ik = WmmaKind::F16;
        dHalf = ts[0] == Type::F16;
        cHalf = ts[1] == Type::F16;
      } else {
        unsupported(in,
                    "wmma.mma: f16 inputs with f16 or f32 accumulators, bf16 or tf32 inputs "
                    "with f32 accumulators");
      }
      if ((ik == WmmaKind::TF32) != isTf32Shape)
        unsupported(in, "tf32 wmma has the shape m16n16k8, and only tf32 has it");
      nopsCheck(in, 4);
      if (!intIn) bk = ik;
      regs(in.ops[0], true, dHalf ? 4 : 8, Type::B32);
      regs(in.ops[1], false, wmmaRegs(ik, mm * kk / 32), Type::B32);
      regs(in.ops[2], false, wmmaRegs(bk, kk * nn / 32), Type::B32);
      regs(in.ops[3], false, cHalf ? 4 : 8, cHalf || intIn ? Type::B32 : Type::F32);
      x.mode = 2;
      x.mode2 = static_cast<uint8_t>(int(ik) | (int(bk) << 4));
      x.flags = static_cast<uint8_t>((shape << 3) | (dHalf ? 32 : 0) | (cHalf ? 64 : 0) |
                                     (satFinite ? 128 : 0));
      x.cls = intIn ? InstClass::IntMad : InstClass::FpMad;
      info.matrix.fmas = uint32_t(mm * nn * kk);
      info.matrix.type = intIn                  ? MatrixType::Int8
                         : ik == WmmaKind::TF32 ? MatrixType::TF32
                         : ik == WmmaKind::BF16 ? MatrixType::BF16
                         : dHalf && cHalf       ? MatrixType::F16
                                                : MatrixType::F16F32;
    } else {
      const bool store = kind == 1;
      int which = store ? (mods.take(".d") ? 2 : -1) : mods.takeOne({".a", ".b", ".c"});
      int layout = mods.takeOne({".row", ".col"});
      int sp = mods.takeOne({".global", ".shared", ".shared::cta"});
      auto ts = mods.takeTypes();
      if (which < 0 || layout < 0 || ts.size() + size_t(tf32) != 1)
        invalid(in.loc, "malformed wmma load/store");
      const bool accum = which == 2;
      int k = tf32 ? (accum ? -1 : int(WmmaKind::TF32)) : kindOf(ts[0], accum);
      if (k < 0 || (k == int(WmmaKind::TF32)) != (isTf32Shape && !accum) ||
          (isTf32Shape && k == int(WmmaKind::F16Acc)))
        unsupported(in,
                    "wmma fragments: A and B f16/bf16/s8/u8 (tf32 for m16n16k8), C and D f32, "
                    "f16 or s32 (f32 for m16n16k8)");
      if (in.ops.size() != 2 && in.ops.size() != 3)
        invalid(in.loc, "wmma load/store takes a fragment, an address and an optional stride");
      wmmaLoadStore(in, x, info, list, store, which, layout, sp, which == 1 ? kk : mm,
                    which == 0 ? kk : nn, static_cast<WmmaKind>(k), Type::B32,
                    static_cast<uint8_t>(shape << 3));
    }
    x.aux = static_cast<uint32_t>(p_->operandLists.size());
    p_->operandLists.push_back(std::move(list));
    x.fn = wmma();
  }

  void nopsCheck(const Instruction& in, size_t n) const {
    if (in.ops.size() != n)
      invalid(in.loc, fmt::format("'{}' takes {} operands, found {}", in.opcode, n, in.ops.size()));
  }

  void decodeBarrier(const Instruction& in, ModList& mods, Inst& x, InstInfo& info) {
    mods.take(".cta");
    mods.take(".aligned");
    if (mods.take(".warp")) {  // bar.warp.sync membermask: warps execute in lock step here
      mods.take(".sync");
      x.fn = nop();
      x.cls = InstClass::Nop;
      return;
    }
    int kind = mods.takeOne({".sync", ".arrive", ".red"});
    if (kind < 0 && in.opcode == "bar") kind = 0;  // "bar 0" is bar.sync 0
    if (kind < 0) unsupported(in);
    x.flow = Flow::Barrier;
    x.cls = InstClass::Barrier;
    x.mode = static_cast<uint8_t>(kind);  // 0 sync, 1 arrive, 2 red
    size_t i = 0;
    if (kind == 2) {
      int rop = mods.takeOne({".popc", ".and", ".or"});
      auto ts = mods.takeTypes();
      if (rop < 0 || ts.size() != 1)
        invalid(in.loc, "bar.red needs .popc.u32, .and.pred or .or.pred");
      x.mode2 = static_cast<uint8_t>(rop);
      if (rop == 0)
        x.dst[0] = dst(in.ops[i++], in, info);
      else
        x.dst[0] = predDst(in.ops[i++], info);
      x.ndst = 1;
    }
    if (in.ops.size() < i + 1) invalid(in.loc, "barrier needs a barrier number");
    // The barrier number and the thread count are immediates (aux, imm) or registers (src[0],
    // src[1], flagged in `flags`: nvcc -G and cooperative groups pass the number in a
    // register), read from the warp's first active lane when it arrives.
    const Operand& id = in.ops[i++];
    if (id.kind == Operand::Kind::Imm) {
      if (id.imm < 0 || id.imm > 15) invalid(id.loc, "barrier number must be 0..15");
      x.aux = static_cast<uint32_t>(id.imm);
    } else {
      x.src[0] = src(id, Type::U32, in, info);
      x.flags |= kBarrierIdInRegister;
    }
    x.imm = 0;  // expected thread count (0: all threads of the CTA)
    if (kind == 2 ? in.ops.size() == i + 2 : in.ops.size() == i + 1) {
      const Operand& cnt = in.ops[i++];
      if (cnt.kind == Operand::Kind::Imm) {
        if (cnt.imm <= 0 || cnt.imm % 32 != 0)
          invalid(cnt.loc, "barrier thread count must be a positive multiple of 32");
        x.imm = cnt.imm;
      } else {
        x.src[1] = src(cnt, Type::U32, in, info);
        x.flags |= kBarrierCountInRegister;
      }
    }
    if (kind == 2) {
      x.src[2] = predSrc(in.ops[i++], x, 2, info);
    }
    if (in.ops.size() != i) invalid(in.loc, "too many operands for the barrier");
    if (kind == 1 && x.imm == 0 && !(x.flags & kBarrierCountInRegister))
      invalid(in.loc, "bar.arrive needs a thread count");
  }

  void fixup() {
    for (const auto& f : fixups_) {
      auto it = labels_[f.func].find(f.label);
      if (it == labels_[f.func].end())
        invalid(f.loc, "branch to undefined label '" + f.label + "'");
      p_->code[f.pc].target = it->second;
    }
    for (const auto& t : tableFixups_) {
      for (const auto& l : t.labels) {
        auto it = labels_[t.func].find(l);
        if (it == labels_[t.func].end())
          invalid(t.loc, "branch table names undefined label '" + l + "'");
        p_->branchTables[t.table].push_back(it->second);
      }
    }
    for (auto& x : p_->code)
      if (x.flow == Flow::Call) x.target = p_->functions[x.aux].begin;
    for (auto& ic : p_->indirectCalls)
      for (auto& t : ic.targets) t.entry = p_->functions[t.func].begin;
  }

  // call (rets), %fp, (args), proto-or-targets;
  void decodeIndirectCall(const Instruction& in, Inst& x, InstInfo& info, size_t fi) {
    if (in.ops.size() != 1) invalid(in.loc, "an indirect call takes one function pointer");
    x.src[0] = src(in.ops[0], Type::U64, in, info);
    x.nsrc = 1;
    x.flow = Flow::CallIndirect;
    x.cls = InstClass::Call;
    x.space = MemSpace::CallParam;
    IndirectCall ic;
    ic.fromTargetList = funcs_[fi]->callTargets.count(in.callTable) != 0;
    for (const Operand& o : in.callArgs) {
      ic.args.push_back(static_cast<uint32_t>(addrOf_.at(o.var)));
      ic.argBytes.push_back(static_cast<uint32_t>(o.var->sizeBytes()));
    }
    for (const Operand& o : in.callRets) {
      ic.rets.push_back(static_cast<uint32_t>(addrOf_.at(o.var)));
      ic.retBytes.push_back(static_cast<uint32_t>(o.var->sizeBytes()));
    }
    for (const Function* callee : indirectTargets(*funcs_[fi], in)) {
      IndirectTarget t;
      t.address = *functionAddress(m_, callee->name);
      t.func =
          static_cast<uint32_t>(std::find(funcs_.begin(), funcs_.end(), callee) - funcs_.begin());
      for (const auto& v : callee->params) t.params.push_back(uint32_t(addrOf_.at(v.get())));
      for (const auto& v : callee->returns) t.returns.push_back(uint32_t(addrOf_.at(v.get())));
      ic.targets.push_back(std::move(t));
    }
    x.aux = static_cast<uint32_t>(p_->indirectCalls.size());
    p_->indirectCalls.push_back(std::move(ic));
  }

  struct Fixup {
    uint32_t pc;
    std::string label;
    size_t func;
    bool isCall;
    ptx::SourceLoc loc;
  };
  struct TableFixup {
    uint32_t table;
    std::vector<std::string> labels;
    size_t func;
    ptx::SourceLoc loc;
  };

  const ptx::Module& m_;
  const Function& entry_;
  const ModuleSymbols& syms_;
  std::unique_ptr<Program> p_;
  std::vector<const Function*> funcs_;
  const std::vector<uint32_t>* rowOf_;
  uint32_t numRows_;
  std::vector<uint32_t> firstReg_;
  std::unordered_map<const Variable*, RegRef> regOf_;
  std::unordered_map<const Variable*, uint32_t> predOf_;
  std::unordered_map<const Variable*, uint64_t> addrOf_;
  std::unordered_map<const Variable*, MemSpace> spaceOf_;
  std::vector<const Variable*> externShared_;
  std::map<uint64_t, uint32_t> constSlots_;
  std::map<SReg, uint32_t> sregSlots_;
  std::vector<std::unordered_map<std::string, uint32_t>> labels_;
  std::vector<Fixup> fixups_;
  std::vector<TableFixup> tableFixups_;
  std::vector<uint8_t> regWidth_;  // 32-bit units per register slot
  uint32_t nextSlot_ = 0;
  uint32_t sink_ = kNoPc, sinkPred_ = kNoPc;
  uint32_t stackSlot_ = kNoPc;  // the thread's stack bytes in use (alloca, recursive frames)
  const std::vector<uint32_t>* firstRow_ = nullptr;
  std::vector<uint32_t> firstPred_;  // first predicate of each function, and the count after
  std::vector<char> recursive_;      // per function: on a cycle of direct calls
  std::vector<std::unique_ptr<Variable>> frameVars_;        // per function: its %frame register
  std::vector<char> frameUsed_;                             // an instruction reads its %frame
  std::vector<uint32_t> frameBytes_;                        // its .local variables in a frame
  std::unordered_map<const Variable*, uint64_t> frameOff_;  // recursive functions' locals
  std::vector<std::pair<uint32_t, uint32_t>> paramRange_;   // [begin, end) per function
  std::unordered_map<const Instruction*, uint32_t> recursiveCallOf_;
  const Function* vprintf_ = nullptr;         // the module's vprintf declaration, when called
  const Function* assertFail_ = nullptr;      // the module's __assertfail declaration, when called
  std::vector<const Function*> heapFuncs_;    // malloc and free, when called
  std::vector<const Function*> deviceCalls_;  // the device runtime's (__cudaCDP2...), when called
  const Function* setConditional_ = nullptr;  // cudaGraphSetConditional, when called
  std::vector<const Function*> addressTaken_;
  bool addressTakenDone_ = false;
};

}  // namespace

void layoutConstBank(const ptx::Module& m, ModuleSymbols& syms) {
  uint64_t off = 0;
  for (const auto& g : m.globals) {
    if (g->space != StateSpace::Const) continue;
    off = alignUp(off, g->alignment());
    syms.constOffset[g->name] = off;
    if (syms.constBank.size() < off + g->sizeBytes())
      syms.constBank.resize(off + g->sizeBytes(), 0);
    if (!g->init.empty()) std::memcpy(syms.constBank.data() + off, g->init.data(), g->init.size());
    off += g->sizeBytes();
  }
  if (syms.constBank.size() > 65536)
    throw InputError(
        fmt::format("{}: .const variables need {} bytes; the constant bank holds 65536", m.fileName,
                    syms.constBank.size()));
}

std::optional<uint64_t> functionAddress(const ptx::Module& m, std::string_view name) {
  const Function* f = m.findFunction(name);
  if (f == nullptr) return std::nullopt;  // a kernel's address is what a device launch names
  for (size_t i = 0; i < m.functions.size(); ++i)
    if (m.functions[i].get() == f) return kCodeWindow + kFunctionStride * i;
  return std::nullopt;
}

std::unique_ptr<Program> decodeKernel(const ptx::Module& m, const ptx::Function& entry,
                                      const ModuleSymbols& syms) {
  Decoder first(m, entry, syms);
  const auto p = first.run();
  // Decode again with registers whose live ranges do not overlap in one row (the operands are
  // resolved to rows as they are decoded, so no per-opcode knowledge is needed to rename them).
  uint32_t rows = 0;
  std::vector<uint32_t> firstRow;
  const std::vector<uint32_t> rowOf =
      shareRegisterRows(*p, first.firstRegOfFunction(), rows, &firstRow);
  return Decoder(m, entry, syms, &rowOf, rows, &firstRow).run();
}

const char* instClassName(InstClass c) {
  static const char* names[] = {"int_add", "int_max", "int_mul", "int_mad", "int_div", "fp_add",
                                "fp_max",  "fp_mul",  "fp_mad",  "fp_div",  "dp_add",  "dp_max",
                                "dp_mul",  "dp_mad",  "dp_div",  "sfu",     "shfl",    "load",
                                "store",   "atomic",  "branch",  "call",    "ret",     "exit",
                                "barrier", "nop"};
  static_assert(sizeof(names) / sizeof(names[0]) == kNumInstClasses);
  return names[static_cast<int>(c)];
}

const char* memSpaceName(MemSpace s) {
  switch (s) {
    case MemSpace::None:
      return "none";
    case MemSpace::Global:
      return "global";
    case MemSpace::Shared:
      return "shared";
    case MemSpace::Local:
      return "local";
    case MemSpace::Const:
      return "const";
    case MemSpace::KernelParam:
      return "kernel-param";
    case MemSpace::CallParam:
      return "param";
    case MemSpace::Generic:
      return "generic";
  }
  return "?";
}

}  // namespace gpusc::func
