// The parsed form of a PTX module: close to the text, with names resolved to declarations.
// The functional decoder (models/func/decoder.cpp) turns it into executable instructions and
// rejects what the engine does not support, naming the position.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ptx/source.hpp"

namespace gpusc::ptx {

enum class StateSpace : uint8_t { Reg, SReg, Global, Shared, Local, Param, Const, Generic };

const char* spaceName(StateSpace s);

// Scalar PTX types. Widths in bytes via typeBytes().
enum class Type : uint8_t {
  None,
  B8,
  B16,
  B32,
  B64,
  B128,
  U8,
  U16,
  U32,
  U64,
  S8,
  S16,
  S32,
  S64,
  F16,
  F16x2,
  BF16,
  BF16x2,
  F32,
  F64,
  Pred,
};

unsigned typeBytes(Type t);
const char* typeName(Type t);
std::optional<Type> typeFromName(std::string_view dotName);  // ".u32" -> U32
bool isFloat(Type t);
bool isSigned(Type t);

// A variable: register, state-space variable, or parameter.
struct Variable {
  std::string name;
  StateSpace space = StateSpace::Reg;
  Type type = Type::None;
  unsigned vecWidth = 1;       // .v2/.v4 variables
  unsigned align = 0;          // .align N (0: natural)
  std::vector<uint64_t> dims;  // array dimensions; 0 for an unsized [] (extern shared)
  bool isExtern = false;
  unsigned pointeeAlign = 0;  // .ptr ... .align N: the pointed-to memory's alignment (a hint)
  bool isPtrParam = false;    // .param .u64 .ptr ...
  bool isManaged = false;     // .global .attribute(.managed): CUDA's __managed__
  std::vector<uint8_t> init;  // initial bytes (global/const)
  // Symbol-address initialisers: byte offset in `init` -> (symbol, addend).
  std::vector<std::pair<uint64_t, std::pair<std::string, int64_t>>> initSymbols;
  SourceLoc loc;
  int scope = 0;  // block nesting id inside a function

  uint64_t elementBytes() const { return uint64_t(typeBytes(type)) * vecWidth; }
  uint64_t sizeBytes() const {
    uint64_t n = elementBytes();
    for (auto d : dims) n *= d;
    return n;
  }
  unsigned alignment() const { return align ? align : static_cast<unsigned>(elementBytes()); }
};

enum class SReg : uint8_t {
  TidX,
  TidY,
  TidZ,
  NtidX,
  NtidY,
  NtidZ,
  CtaidX,
  CtaidY,
  CtaidZ,
  NctaidX,
  NctaidY,
  NctaidZ,
  LaneId,
  WarpId,
  NWarpId,
  SmId,
  NSmId,
  GridId,
  LaneMaskEq,
  LaneMaskLe,
  LaneMaskLt,
  LaneMaskGe,
  LaneMaskGt,
  Clock,
  Clock64,
  GlobalTimer,
  GlobalTimerLo,
  GlobalTimerHi,
  DynamicSmemSize,
  TotalSmemSize,
  // The block's reserved shared memory (sm_80+: what the platform reserves per block,
  // sm.shared_reserved_per_cta; cooperative groups keep multi-warp tiles' barriers there):
  // where it begins and ends, its size, two offsets in it, and the block's shared memory with it.
  ReservedSmemBegin,
  ReservedSmemEnd,
  ReservedSmemCap,
  ReservedSmemOffset0,
  ReservedSmemOffset1,
  AggrSmemSize,
  Pm0,
  // Clusters (sm_90): every block is a cluster of one block.
  ClusterIdX,
  ClusterIdY,
  ClusterIdZ,
  NClusterIdX,
  NClusterIdY,
  NClusterIdZ,
  ClusterCtaIdX,
  ClusterCtaIdY,
  ClusterCtaIdZ,
  ClusterNCtaIdX,
  ClusterNCtaIdY,
  ClusterNCtaIdZ,
  ClusterCtaRank,
  ClusterNCtaRank,
  IsExplicitCluster,
  // %envreg<32>, set by the driver: %envreg2 and %envreg1 are the low and high halves of a
  // cooperative launch's grid workspace (what cooperative groups' grid sync uses; 0 in any other
  // launch), the others are 0.
  EnvReg1,
  EnvReg2,
  EnvRegZero,
};

std::optional<SReg> sregFromName(std::string_view name);  // "%tid.x"
bool sregIsDynamic(SReg s);  // changes while a warp runs (clock, timers)

struct Operand {
  enum class Kind : uint8_t {
    Reg,      // a register variable (`var` set)
    SReg,     // special register
    Imm,      // integer immediate
    FImm,     // floating-point immediate (`fval`, `fbits`)
    Symbol,   // address of a variable, or a function / label name
    Address,  // [base + offset]: base is a register, a symbol, or nothing
    Vector,   // { a, b, c, d }
    Sink,     // "_"
  };
  Kind kind = Kind::Imm;
  const Variable* var = nullptr;  // Reg, or Address/Symbol naming a variable
  std::string name;               // Symbol / Address symbol name (functions, labels too)
  SReg sreg{};
  int64_t imm = 0;  // Imm value, or Address offset
  double fval = 0;
  uint8_t fbits = 0;
  uint64_t fraw = 0;           // FImm exact bits
  bool negate = false;         // !%p
  bool hasBase = false;        // Address: base register or symbol present
  std::vector<Operand> elems;  // Vector elements; setp/shfl "a|b" pairs also use this
  bool pipePair = false;       // operand was written "a|b"
  // Video instructions only: a register's sub-word selector or mask ("%r1.b0", "%r2.h10",
  // "%r3.b3210"; empty if none) and a negated register ("-%r1", vmad).
  std::string sel;
  bool minus = false;
  SourceLoc loc;
};

struct Instruction {
  const Variable* guard = nullptr;
  bool guardNegated = false;
  std::string opcode;             // "ld"
  std::vector<std::string> mods;  // {".global", ".nc", ".u32"}
  std::vector<Operand> ops;
  // call only: return and argument lists, and the callee name. An indirect call
  // (`call (r), %rd, (a), proto;`) has an empty callee, the function pointer register in ops[0]
  // and the name of its .callprototype or .calltargets label in callTable.
  std::vector<Operand> callRets, callArgs;
  std::string callee;
  std::string callTable;
  SourceLoc loc;
  std::string text;  // the source line, for error messages

  bool hasMod(std::string_view m) const {
    for (const auto& x : mods)
      if (x == m) return true;
    return false;
  }
};

// A `.callprototype` declaration: the sizes in bytes of its return and argument parameters.
struct CallPrototype {
  std::vector<uint64_t> returns, params;
  SourceLoc loc;
};

struct Statement {
  enum class Kind : uint8_t { Instr, Label } kind = Kind::Instr;
  Instruction instr;
  std::string label;
  SourceLoc loc;
};

struct Function {
  std::string name;
  bool isEntry = false;
  bool isExtern = false;  // declaration only
  bool isVisible = false;
  std::vector<std::unique_ptr<Variable>> params;   // in order
  std::vector<std::unique_ptr<Variable>> returns;  // .func return parameters
  std::vector<std::unique_ptr<Variable>> locals;  // every body declaration (reg/local/shared/param)
  std::vector<Statement> body;
  // .branchtargets lists by label name
  std::map<std::string, std::vector<std::string>> branchTargets;
  // .callprototype declarations and .calltargets lists (function names) by label name
  std::map<std::string, CallPrototype> callPrototypes;
  std::map<std::string, std::vector<std::string>> callTargets;
  uint32_t maxntid[3] = {0, 0, 0}, reqntid[3] = {0, 0, 0};
  uint32_t minnctapersm = 0, maxnreg = 0;
  SourceLoc loc;
};

struct Module {
  std::string fileName;
  std::string version;  // "9.0"
  std::string target;   // "sm_75"
  unsigned addressSize = 64;
  std::vector<std::unique_ptr<Variable>> globals;  // .global/.const/.shared at module scope
  std::vector<std::unique_ptr<Function>> functions;
  // `.alias alias, aliasee;`: calls and addresses of `alias` mean `aliasee`
  std::map<std::string, std::string> aliases;

  // The function a name stands for (the definition when there is one; aliases followed).
  const Function* findFunction(std::string_view name) const;
  const Variable* findGlobal(std::string_view name) const;
};

}  // namespace gpusc::ptx
