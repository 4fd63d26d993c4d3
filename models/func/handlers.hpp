// Instruction handler selection. The decoder names an operation and a type; these functions
// return the handler (a template instantiation specialised for that type) or nullptr when the
// combination is not supported, so the decoder can report it with its source position.
#pragma once

#include <cstddef>

#include "func/program.hpp"
#include "ptx/ast.hpp"

namespace gpusc::func::handlers {

using ptx::Type;

enum class IntBin : uint8_t {
  Add,
  Sub,
  MulLo,
  MulHi,
  MulWide,
  Mul24Lo,
  Mul24Hi,
  Div,
  Rem,
  Min,
  Max,
  And,
  Or,
  Xor,
  Shl,
  Shr,
  AddCC,
  AddC,
  AddCCC,
  SubCC,
  SubC,
  SubCCC  // carry chains: .cc writes CC.CF, c reads it
};
enum class IntUn : uint8_t { Abs, Neg, Not, CNot, Popc, Clz, Brev, Mov };
enum class IntTer : uint8_t {
  MadLo,
  MadHi,
  MadWide,
  Mad24Lo,
  Mad24Hi,
  Sad,
  MadLoCC,
  MadHiCC,
  MadcLo,
  MadcHi,
  MadcLoCC,
  MadcHiCC,
  Bfe,
  Prmt,
  MadHiSat,   // mad.hi.sat.s32
  Mad24HiSat  // mad24.hi.sat.s32
};

// DivApprox: div.approx (a * (1/b)); DivFull: div.full (scaled, full range).
enum class FBin : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  DivApprox,
  DivFull,
  Min,
  Max,
  MinNaN,
  MaxNaN,
  Copysign
};
enum class FUn : uint8_t {
  Abs,
  Neg,
  Sqrt,
  SqrtApprox,
  Rsqrt,
  Rcp,
  RcpApprox,
  Ex2,
  Lg2,
  Sin,
  Cos,
  Tanh,
  Mov
};

// Rounding modes (mode2 of floating-point instructions).
enum class Round : uint8_t { Default, Rn, Rz, Rm, Rp, Rni, Rzi, Rmi, Rpi, Rna };

enum FloatFlags : uint8_t { kFtz = 1, kSat = 2 };

// Comparison operators (setp/set).
enum class Cmp : uint8_t {
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Lo,
  Ls,
  Hi,
  Hs,
  Equ,
  Neu,
  Ltu,
  Leu,
  Gtu,
  Geu,
  Num,
  Nan
};
enum class BoolOp : uint8_t { None, And, Or, Xor };

enum class AtomOp : uint8_t { Add, Min, Max, Inc, Dec, Exch, Cas, And, Or, Xor };

enum class ShflMode : uint8_t { Up, Down, Bfly, Idx };
enum class VoteMode : uint8_t { All, Any, Uni, Ballot };

Handler intBinary(IntBin op, Type t);
Handler intUnary(IntUn op, Type t);
Handler intTernary(IntTer op, Type t);
Handler bfi(Type t);
Handler lop3();
Handler shf(bool left, bool wrap);

// prmt selector modes (mode of the instruction).
enum class PrmtMode : uint8_t { Default, F4e, B4e, Rc8, Ecl, Ecr, Rc16 };
Handler prmt(PrmtMode mode);
Handler bfind(Type t, bool shiftAmount);  // .u32 .s32 .u64 .s64; d is .u32
Handler fns();                            // fns.b32 d, mask, base, offset
Handler szext(bool clamp, bool isSigned);
Handler bmsk(bool clamp);
Handler dp4a(bool aSigned, bool bSigned);
Handler dp2a(bool aSigned, bool bSigned, bool hi);
// min/max with .relu (s32) and the packed 16x2 forms (with or without .relu).
Handler intMinMax32Relu(bool isMin);
Handler intMinMax16x2(bool isMin, bool isSigned, bool relu);

// f16, bf16, f16x2 and bf16x2 arithmetic (mode2: rounding, flags: HalfFlags).
enum class HalfOp : uint8_t { Add, Sub, Mul, Fma, Min, Max, MinNaN, MaxNaN, Neg, Abs, Ex2, Tanh };
enum HalfFlags : uint8_t {
  kHalfFtz = 1,
  kHalfSat = 2,
  kHalfRelu = 4,
  kHalfSatFinite = 8,
  kHalfXorSignAbs = 16  // min/max .xorsign.abs
};
Handler halfArith(HalfOp op, Type t);
Handler cvtPackPair(Type dt);  // cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32 d, a, b
// cvt.{rn,rz}{.relu}{.satfinite}.{f16,bf16}.f32 d, a (mode2: rounding, flags: kHalfRelu,
// kHalfSatFinite).
Handler cvtHalfSingle(Type dt);

// Warp-collective matrix instructions (models/func/handlers_mma.cpp). Their operands are in
// Program::operandLists[aux].
// Fragment layouts. The integer families hold e elements per register (s8, u8, e4m3, e5m2: 4;
// s4, u4: 8; b1: 32): M16N8K16Int is m16n8k16 (s8), m16n8k32 (s4) and m16n8k128 (b1);
// M16N8K32Int m16n8k32 (s8, e4m3, e5m2), m16n8k64 (s4) and m16n8k256 (b1); M8N8K16Int m8n8k16
// (s8), m8n8k32 (s4) and m8n8k128 (b1). The k of an instruction travels in Inst::imm.
enum class MmaShape : uint8_t {
  M16N8K8Half,
  M16N8K16Half,
  M16N8K8Tf32,
  M16N8K16Int,
  M16N8K32Int,
  M16N8K4Tf32,
  M8N8K16Int,
  M8N8K4F64,
  M16N8K4F64,
  M16N8K8F64,
  M16N8K16F64
};
enum class MmaType : uint8_t { F16, BF16, TF32, S8, U8, S4, U4, B1, E4M3, E5M2, F64 };
Handler mma();
Handler mmaQuadPair();      // mma.sync.aligned.m8n8k4 with .f16 inputs (see handlers_mma.cpp)
Handler matrixLoadStore();  // ldmatrix / stmatrix
Handler texFetch(bool intCoords);  // tex.1d / tex.2d through a texture object (handlers_tex.cpp)
Handler surfaceAccess();           // suld.b / sust.b through a surface object (handlers_tex.cpp)
Handler movmatrix();               // movmatrix.sync.aligned.m8n8.trans.b16 d, a (src[0], dst[0])
Handler wmma();                    // wmma.load / wmma.store / wmma.mma (see handlers_mma.cpp)
// wmma fragment element kinds, and shapes (m16n16k16, m32n8k16, m8n32k16, m16n16k8).
enum class WmmaKind : uint8_t { F16, BF16, TF32, F32, F16Acc, S8, U8, S32, F64, S4, U4, B1 };
enum class WmmaShape : uint8_t { M16N16K16, M32N8K16, M8N32K16, M16N16K8 };
// Registers of a fragment of `kind` holding `elements` elements per thread.
size_t wmmaRegs(WmmaKind kind, int elements);

enum class ReduxOp : uint8_t { Add, Min, Max, And, Or, Xor };
Handler redux(ReduxOp op, Type t);  // redux.sync over the executing lanes

Handler floatBinary(FBin op, Type t, Round r, uint8_t flags);
Handler floatUnary(FUn op, Type t, Round r, uint8_t flags);
Handler floatFma(Type t, Round r, uint8_t flags);
// f32 min/max beyond the plain two-input form: `min{.ftz}{.NaN}{.xorsign.abs}.f32 d, a, b` and
// `min{.ftz}{.NaN}{.abs}.f32 d, a, b, c` (mode: MinMaxMode bits, flags: kFtz; nsrc inputs).
enum MinMaxMode : uint8_t { kMmMin = 1, kMmNaN = 2, kMmAbs = 4, kMmXorSign = 8 };
Handler floatMinMaxF32();
Handler testp(uint8_t what,
              Type t);  // 0 finite 1 infinite 2 number 3 notanumber 4 normal 5 subnormal

Handler setp(Cmp cmp, BoolOp op, Type t,
             bool ftz = false);  // dst[0] p, dst[1] q (or ~0u), src[2] c predicate
Handler set(Cmp cmp, BoolOp op, Type dt, Type st, bool ftz = false);
Handler selp(Type t);
Handler slct(Type dt, Type ct, uint8_t flags);

Handler cvt(Type dt, Type st, Round r, uint8_t flags);
// cvt.{rna,rn,rz}{.satfinite}.tf32.f32: the f32 rounded to 10 mantissa bits (low 13 bits zero);
// mode2: the rounding (Rna, Rn or Rz), flags 1: .satfinite.
Handler cvtTf32();
// Narrow floating-point formats, two values per register: cvt.rn.satfinite{.relu}.<f>x2.f32
// d, a, b (mode2 0; a goes to the upper element), .<f8>x2.f16x2 d, a (mode2 1) and
// cvt.rn{.relu}.f16x2.<f>x2 d, a (mode2 2); flags 1: .relu. fp8 and fp6 pairs are 16 bits (one
// element per byte), fp4 pairs 8 bits.
enum class NarrowFormat : uint8_t { E4M3, E5M2, E2M3, E3M2, E2M1 };
Handler cvtNarrow(NarrowFormat f);
// cvt.pack.sat: mode the converted width (2, 4, 8 or 16 bits), flags 1: signed; d = c << 2w |
// sat(a) << w | sat(b) (no c for 16 bits).
Handler cvtPackSat();
Handler movPack(unsigned parts, unsigned partBytes);    // mov.b64 d, {a,b}
Handler movUnpack(unsigned parts, unsigned partBytes);  // mov.b64 {a,b}, s
Handler movSReg(ptx::SReg s);                           // dynamic special registers
Handler cvta(bool toGeneric, MemSpace space);           // imm holds the window base
Handler isspacep();                                     // imm: the space's window base (0: global)
Handler predLogic();                                    // mode: 0 and, 1 or, 2 xor, 3 not, 4 mov
Handler predConst();                                    // mode 4: set, 5: clear
Handler nop();
Handler sleep();      // nanosleep: StepEnv::sleepNs
Handler satAddS32();  // add.sat.s32 / sub.sat.s32: clamp to the int32 range
Handler satSubS32();

Handler load(MemSpace space, unsigned bytes, bool isSigned);
Handler store(MemSpace space, unsigned bytes);
Handler atomic(AtomOp op, Type t, bool returnsValue);
// call vprintf: appends each lane's text to LaunchState::printfLog (imm, aux, src[5]: offsets of
// the format pointer, the argument-buffer pointer and the return value in the call-param area).
Handler vprintf();
Handler assertFail();  // call __assertfail: a failed device assert
// call malloc / call free (the CUDA runtime's device heap, LaunchState::heap): imm is the offset
// of the argument in the call-param area, aux (malloc) of the result.
Handler deviceMalloc();
Handler deviceFree();
// The device runtime's calls for launches from device code (dynamic parallelism,
// handlers_launch.cpp): src[i] is the call-param offset of argument i, aux of the result (kNoPc:
// none). Each executing lane calls, in lane order.
enum class DeviceCall : uint8_t {
  GetParameterBufferV2,   // (function, grid, block, shared bytes) -> buffer
  GetParameterBuffer,     // (alignment, bytes) -> buffer
  LaunchDeviceV2,         // (buffer, stream) -> error
  LaunchDevice,           // (function, buffer, grid, block, shared bytes, stream) -> error
  GetLastError,           // () -> error, cleared
  PeekAtLastError,        // () -> error
  StreamCreateWithFlags,  // (stream*, flags) -> error
  StreamDestroy,          // (stream) -> error
  GetDevice,              // (int*) -> error
};
Handler deviceRuntime(DeviceCall call);
// call cudaGraphSetConditional: each executing lane, in lane order, stores its value (src[1]'s
// call parameter) to the 32-bit word its handle (src[0]'s) addresses in global memory.
Handler setConditional();
Handler cpAsync();  // cp.async.{ca,cg}.shared.global (see handlers_mem.cpp for the operands)

// mbarrier operations (models/func/handlers_async.cpp). src[0] + imm: the object's address (in
// Inst::space, shared or generic); src[1]: the count, tx-count, state or parity operand; dst[0]:
// the returned state (arrivals), the predicate (waits) or the count (pending_count, whose source
// is src[0]). A wait that finds its phase incomplete puts the warp in WarpState::MbarrierWait.
enum class MbarOp : uint8_t {
  Init,
  Inval,
  Arrive,
  ArriveDrop,
  ExpectTx,
  CompleteTx,
  TestWait,
  TryWait,
  PendingCount
};
enum MbarFlags : uint8_t { kMbarParity = 1, kMbarExpectTx = 2, kMbarNoComplete = 4 };
Handler mbarrier(MbarOp op);
Handler cpAsyncBulk();  // cp.async.bulk (see handlers_async.cpp for the operands)
// cp.reduce.async.bulk: the same handler; flags holds the BulkRedOp + 1 and mode2 the
// BulkRedType (flags 0: a plain copy).
enum class BulkRedOp : uint8_t { And, Or, Xor, Add, Inc, Dec, Min, Max };
enum class BulkRedType : uint8_t { B32, U32, S32, B64, U64, S64, F32, F64, F16, BF16 };

// Video instructions (models/func/handlers_video.cpp): the scalar vadd vsub vabsdiff vmin vmax
// vshl vshr vmad vset and the SIMD vop2/vop4 forms. src[0] a, src[1] b, src[2] c (zero when the
// instruction has none), dst[0] d; every other parameter travels in Inst::imm
// (VideoParams::encode).
enum class VideoOp : uint8_t { Add, Sub, AbsDiff, Min, Max, Shl, Shr, Mad, Set, Avrg };
struct VideoParams {
  VideoOp op = VideoOp::Add;
  uint8_t lanes = 1;  // 1: scalar; 2: vop2 (half-words); 4: vop4 (bytes)
  bool aSigned = false, bSigned = false, dSigned = false;
  bool sat = false;
  uint8_t op2 = 0;     // 0 none, 1 .add, 2 .min, 3 .max (SIMD forms: .add accumulates)
  uint8_t cmp = 0;     // vset: Cmp::Eq .. Cmp::Ge
  bool clamp = false;  // vshl/vshr: .clamp (else .wrap)
  uint8_t scale = 0;   // vmad: 0, 7 (.shr7) or 15 (.shr15)
  bool po = false, negProduct = false, negC = false;  // vmad
  // Scalar: 0 the whole word, 1..4 byte 0..3, 5..6 half-word 0..1 (dsel 0: no merge).
  // SIMD: asel/bsel hold, per lane i at bits 3i, the element of {b, a} it takes; dsel is the
  // mask (bit i: lane i is written).
  uint16_t asel = 0, bsel = 0;
  uint8_t dsel = 0;
  uint64_t encode() const;
  static VideoParams decode(uint64_t bits);
};
Handler video();

// elect.sync d|p, membermask: the lowest active lane of the member mask is the leader
// (dst[0]: its lane id in every lane, dst[1]: the predicate, true in the leader).
Handler electSync();
// createpolicy: d = imm | the low 32 bits of src[0] (mode 1: d = src[0], the access property).
Handler createPolicy();
// getctarank (mode 0) / mapa (mode 1) with every block a cluster of one: rank 0, the same
// address (a target rank other than 0 is a kernel fault). bytes: the type's size.
Handler clusterOfOne();
// alloca / stacksave / stackrestore. Each thread's stack: LaunchState::stackBytes (CUDA's
// cudaLimitStackSize), after the kernel's local variables. aux is the hidden slot of bytes in use,
// imm the stack's local base, bytes the pointer size, mode log2 of alloca's alignment.
constexpr uint32_t kStackBytes = kDefaultStackBytes;
Handler stackAlloc();
Handler stackSave();
Handler stackRestore();

Handler shfl(ShflMode mode);
Handler vote(VoteMode mode);  // ballot writes a data slot; the others a predicate
Handler activemask();
Handler matchAny(Type t);
Handler matchAll(Type t);

}  // namespace gpusc::func::handlers
