// The executable form of a PTX kernel: a flat array of decoded instructions for the entry and
// every function it calls, with operands resolved to register-file slots.
//
// Register file of a warp: `uint64_t R[numSlots][32]` (slot-major, one 64-bit cell per lane)
// and `uint32_t P[numPreds]` (one lane mask per predicate register). Slots [0, numRegRows) are
// the rows of the PTX registers: registers whose live ranges never overlap share a row (see
// shareRegisterRows in cfg.hpp), so Inst operands name rows, while InstInfo keeps the PTX
// register numbers [0, numRegSlots) for the timing model's scoreboard and register banks. The
// slots after the rows hold special registers that do not change while a warp runs (filled when
// the warp starts). Immediates and symbol addresses are the same in every warp: their slots are
// kConstSlotBase + k, row k of the program's constRows, which all warps read (rowOf in
// state.hpp), so every operand is still read the same way without a copy in each warp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ptx/ast.hpp"

namespace gpusc::func {

constexpr int kWarpSize = 32;
constexpr uint32_t kFullMask = 0xffffffffu;
constexpr uint32_t kNoPc = 0xffffffffu;
// Each thread's stack (alloca, recursive functions' frames) unless the program sets another:
// CUDA's default cudaLimitStackSize.
constexpr uint32_t kDefaultStackBytes = 1024;
// Operand slots from here on name the program's constant rows (Program::constRows).
constexpr uint32_t kConstSlotBase = 0x80000000u;

// What kind of work an instruction is, at the grain the timing and power models need.
// Latency classes follow GPGPU-Sim's ADD/MAX/MUL/MAD/DIV split per int/fp/dp.
enum class InstClass : uint8_t {
  IntAdd,
  IntMax,
  IntMul,
  IntMad,
  IntDiv,
  FpAdd,
  FpMax,
  FpMul,
  FpMad,
  FpDiv,
  DpAdd,
  DpMax,
  DpMul,
  DpMad,
  DpDiv,
  Sfu,   // transcendental / sqrt / rcp approximations (fp32)
  Shfl,  // shfl, vote, match, activemask
  Load,
  Store,
  Atomic,
  Branch,
  Call,
  Ret,
  Exit,
  Barrier,
  Nop,  // membar, fence, prefetch, nanosleep: no result
  Count_
};
const char* instClassName(InstClass c);
inline constexpr int kNumInstClasses = static_cast<int>(InstClass::Count_);

// Where a memory instruction goes. Generic addresses are resolved per lane.
enum class MemSpace : uint8_t {
  None,
  Global,
  Shared,
  Local,
  Const,
  KernelParam,
  CallParam,
  Generic
};
const char* memSpaceName(MemSpace s);

// How an instruction affects control flow; Normal instructions run their handler and fall through.
enum class Flow : uint8_t {
  Normal,
  Branch,
  BranchIndexed,
  Call,
  CallIndirect,  // call through a function pointer (Program::indirectCalls[aux])
  Ret,
  Exit,
  Barrier,
  Trap
};

// Generic address windows. Device allocations live below kWindowBase.
constexpr uint64_t kWindowBase = 0x7000'0000'0000ull;
constexpr uint64_t kSharedWindow = 0x7000'0000'0000ull;
constexpr uint64_t kLocalWindow = 0x7100'0000'0000ull;
constexpr uint64_t kConstWindow = 0x7200'0000'0000ull;
constexpr uint64_t kParamWindow = 0x7300'0000'0000ull;
constexpr uint64_t kWindowSize = 0x0100'0000'0000ull;
// Function addresses (`mov.u64 %rd, func;`, function names in initialisers): kCodeWindow +
// kFunctionStride x the function's index in its module (see func::functionAddress).
constexpr uint64_t kCodeWindow = 0x7400'0000'0000ull;
constexpr uint64_t kFunctionStride = 16;

struct ExecCtx;
struct Inst;
using Handler = void (*)(ExecCtx& c, const Inst& in, uint32_t mask);

// Inst::flags of a barrier: its number is in register src[0] (else aux), its thread count in
// register src[1] (else imm, 0 for all the CTA's threads).
constexpr uint8_t kBarrierIdInRegister = 1;
constexpr uint8_t kBarrierCountInRegister = 2;

struct Inst {
  Handler fn = nullptr;
  Flow flow = Flow::Normal;
  InstClass cls = InstClass::Nop;
  MemSpace space = MemSpace::None;
  uint8_t bytes = 0;  // memory: bytes per element
  uint8_t vec = 1;    // memory: elements per lane (v2/v4)
  uint8_t ndst = 0, nsrc = 0;
  uint8_t mode = 0;        // op-specific sub-operation (compare op, shuffle mode, atomic op, ...)
  uint8_t mode2 = 0;       // op-specific second mode (boolean combine op, rounding, ...)
  uint8_t flags = 0;       // op-specific flags
  uint8_t predSrcNeg = 0;  // bit i: predicate source i is negated
  int32_t guard = -1;      // predicate index guarding the instruction, -1 if none
  bool guardNeg = false;
  bool wakes = false;   // may wake warps sleeping in mbarrier waits (mbarrier, cp.async.bulk)
  bool sleeps = false;  // nanosleep: a path of a divergent warp that sleeps lets another run
  // shfl/vote/match/redux/elect .sync and bar.warp.sync: the lanes of the member mask meet here
  bool warpSync = false;
  uint32_t dst[4] = {0, 0, 0, 0};  // data slots, or predicate indices where the op says so
  uint32_t src[6] = {0, 0, 0, 0, 0, 0};
  int64_t imm = 0;          // address offset or op-specific immediate
  uint32_t target = kNoPc;  // branch target / callee entry
  uint32_t reconv = kNoPc;  // immediate post-dominator of a branch (reconvergence point)
  uint32_t aux = 0;         // branch-table index (brx.idx), barrier id, ...
  uint32_t func = 0;        // index of the function this instruction belongs to
};

// The work of a matrix multiply-accumulate (mma, wmma.mma) for the timing model's tensor cores:
// its multiply-adds per warp and the input and accumulator types that set their rate.
enum class MatrixType : uint8_t {
  F16,     // f16 inputs, f16 accumulators (C and D)
  F16F32,  // f16 inputs with an f32 accumulator
  BF16,    // bf16 inputs (f32 accumulators)
  TF32,
  Int8,  // s8/u8
  Int4,  // s4/u4
  B1,    // single-bit (xor/and with popc)
  Fp8,   // e4m3/e5m2
  F64,
  Count_
};
struct MatrixWork {
  uint32_t fmas = 0;  // multiply-adds of one warp instruction (m x n x k); 0: not a matrix op
  MatrixType type = MatrixType::F16;
};

// The asynchronous copies' part in an instruction (cp.async), for the timing model's waits.
enum class AsyncCopyOp : uint8_t {
  None,
  Copy,       // cp.async: one copy into the warp's open group
  Commit,     // cp.async.commit_group: the open group is committed
  WaitGroup,  // cp.async.wait_group N: all but the N most recent committed groups complete
  WaitAll     // cp.async.wait_all: commit, then every copy complete
};

// Per-instruction information kept out of the hot array.
// What a SIMD instruction is beyond its class, where a platform may run it elsewhere
// (sm.conversions_on_sfu, sm.bit_counts_on_sfu, sm.fp_compare_on_int_units): a conversion between
// integer and floating point or a rounding of a float to an integral value (cvt), a bit count
// (popc, clz, bfind, brev), an FP32 compare or min/max (setp, set, min, max).
enum class AluOp : uint8_t { Other, Convert, BitCount, FpCompare };

struct InstInfo {
  ptx::SourceLoc loc;
  std::string text;                           // source text, for messages and traces
  std::string opcode;                         // full opcode with modifiers, e.g. "ld.global.nc.u32"
  std::vector<uint32_t> regReads, regWrites;  // PTX register numbers (scoreboard, banks)
  std::vector<uint32_t> predReads, predWrites;
  MatrixWork matrix;  // mma and wmma.mma
  AsyncCopyOp asyncCopy = AsyncCopyOp::None;
  uint32_t asyncWaitGroups = 0;  // WaitGroup's N
  // A global load the SM's L1 does not cache (the timing model sends it to the L2): a cache
  // operator that caches at the L2 only (.cg, cp.async.cg) or fetches again (.cv), a volatile
  // load, or a .relaxed/.acquire load at .gpu or .sys scope, which must see other SMs' writes
  // while the L1 is not coherent.
  bool l2Only = false;
  AluOp aluOp = AluOp::Other;
};

// What an activation of a recursive function (one on a cycle of direct calls) keeps of its own:
// a call to it saves the callee's previous activation (register rows, predicates, parameter
// bytes, the thread's stack in use) for the calling lanes, and its ret restores them.
struct RecursiveFrame {
  uint32_t rowBegin = 0, rowEnd = 0;      // the function's register rows
  uint32_t predBegin = 0, predEnd = 0;    // its predicates
  uint32_t paramBegin = 0, paramEnd = 0;  // bytes of its formal parameters, results and call
                                          // sites' .param variables in the call-parameter area
  uint32_t frameBytes = 0;                // what an activation takes from the thread's stack
  uint32_t frameRow = kNoPc;              // row of each lane's frame base (its .local variables)
};

struct FunctionInfo {
  std::string name;
  uint32_t begin = 0, end = 0;  // pc range [begin, end)
  bool isEntry = false;
  uint32_t frame = kNoPc;  // index in Program::frames when the function is recursive
};

// A direct call to a recursive function: its own argument and result .param variables, copied to
// and from the callee's formal parameters per lane (Flow::Call with Inst::mode 1, Inst::imm the
// index in Program::recursiveCalls).
struct RecursiveCall {
  uint32_t func = 0;                         // the callee (index in Program::functions)
  std::vector<uint32_t> args, rets;          // offsets of the call site's variables
  std::vector<uint32_t> params, returns;     // offsets of the callee's formal parameters
  std::vector<uint32_t> argBytes, retBytes;  // their sizes
};

// One function an indirect call may reach, and where its formal parameters live in the
// per-thread call-parameter area.
struct IndirectTarget {
  uint64_t address = 0;                   // its function address
  uint32_t func = 0;                      // index in Program::functions
  uint32_t entry = 0;                     // first pc
  std::vector<uint32_t> params, returns;  // offsets of the formal parameters and results
};

// An indirect call site: the call's own argument and result .param variables (copied to and from
// the callee's formal parameters, per lane, at the call and at the callee's ret).
struct IndirectCall {
  std::vector<IndirectTarget> targets;
  std::vector<uint32_t> args, rets;          // offsets in the call-parameter area
  std::vector<uint32_t> argBytes, retBytes;  // their sizes
  bool fromTargetList = false;               // .calltargets (else .callprototype)
};

struct KernelParamInfo {
  std::string name;
  uint32_t offset = 0, size = 0, align = 0;
  ptx::Type type = ptx::Type::None;
};

// A special register whose value is fixed for the life of a warp.
struct SRegSlot {
  uint32_t slot;
  ptx::SReg sreg;
};

struct Program {
  std::string name;  // entry name
  std::string fileName;
  std::vector<Inst> code;
  std::vector<InstInfo> info;                       // parallel to code
  std::vector<FunctionInfo> functions;              // functions[0] is the entry
  std::vector<std::vector<uint32_t>> branchTables;  // brx.idx targets (pcs)
  std::vector<std::vector<uint32_t>> operandLists;  // slots of mma/ldmatrix operands (Inst::aux)
  std::vector<IndirectCall> indirectCalls;          // call through a pointer (Inst::aux)
  std::vector<RecursiveFrame> frames;               // FunctionInfo::frame
  std::vector<RecursiveCall> recursiveCalls;        // direct calls to recursive functions

  uint32_t numSlots = 0;     // data slots of each warp: register rows, special registers
  uint32_t numRegSlots = 0;  // PTX registers (the numbers in InstInfo::regReads/regWrites)
  uint32_t numRegRows = 0;   // rows holding them: slots [0, numRegRows)
  uint32_t numPreds = 0;
  // Row k (32 lanes of the same value) is constant slot kConstSlotBase + k; read only.
  std::vector<uint64_t> constRows;
  std::vector<SRegSlot> sregSlots;
  uint32_t scratchSlot = 0;  // target of sink operands "_"

  uint32_t sharedStaticBytes = 0;    // static .shared variables of the kernel and its callees
  uint32_t dynamicSharedOffset = 0;  // where the extern .shared array starts
  uint32_t localBytesPerThread = 0;
  uint32_t callParamBytesPerThread = 0;
  // The thread's stack (alloca, recursive functions' frames): LaunchState::stackBytes of local
  // memory from stackBase, its bytes in use in slot stackSlot (kNoPc: the kernel uses no stack).
  // localBytesPerThread counts a stack of kDefaultStackBytes.
  uint32_t stackBase = 0;
  uint32_t stackSlot = kNoPc;
  std::vector<KernelParamInfo> params;
  uint32_t paramBytes = 0;

  // 32-bit registers per thread: what ptxas allocated, when the PTX records it (a
  // "// ptxas ...: <kernel> uses <n> registers" line, written by stimuli/regen_ptx.sh), else an
  // estimate (max live 32-bit values, from liveness analysis: a lower bound of what a compiler
  // allocates).
  uint32_t regsPerThread = 0;
  bool regsFromPtxas = false;
  uint32_t reqntid[3] = {0, 0, 0}, maxntid[3] = {0, 0, 0};
  // The most threads a block of this kernel may have by its .maxntid (CUDA's
  // __launch_bounds__); 0: the directive is absent.
  uint64_t maxThreadsByDirective() const {
    if (maxntid[0] == 0) return 0;
    return uint64_t(maxntid[0]) * std::max(1u, maxntid[1]) * std::max(1u, maxntid[2]);
  }
  // The kernel (or a function it may call) calls vprintf, malloc or free, or launches kernels,
  // which change state shared by every SM (the printf log, the device heap, the launches made)
  // when they execute: its steps cannot run on several host threads at once.
  bool usesDeviceRuntime = false;
  // The kernel launches kernels (dynamic parallelism: the device runtime's launch calls,
  // device_launches.hpp); it also uses the device runtime.
  bool launchesKernels = false;
  // The kernels whose address the code takes (what its launches from device code may name).
  std::vector<std::string> addressedKernels;
};

}  // namespace gpusc::func
