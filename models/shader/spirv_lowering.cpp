#include "shader/spirv_lowering.hpp"

#include <cstring>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <spirv/unified1/GLSL.std.450.h>
#include <spirv-tools/libspirv.hpp>
#include <spirv/unified1/spirv.hpp>

#include "common/error.hpp"
#include "common/strings.hpp"

namespace gpusc::shader {

namespace {

// Locations beyond this cannot name a buffer entry (checkProgram compares the bindings with the
// configured buffers); they are refused before a register index could wrap.
constexpr uint32_t kMaxLocation = 1024;

using spv::Op;  // SPIR-V opcodes; ours are shader::Op, spelled out below

struct Type {
  enum Kind {
    Void,
    Bool,
    Int,
    Float,
    Vector,
    Matrix,
    Pointer,
    Struct,
    Array,
    Image,
    SampledImage,
    Function,
    Other
  };
  Kind kind = Other;
  uint32_t count = 1;  // vector components, matrix columns, array length
  uint32_t elem = 0;   // component / column / element / pointee type
  uint32_t storage = 0;
  std::vector<uint32_t> members;
};

// An SSA value: a register view (components live in op.swz[0..comps)), a matrix (columns), a
// sampler, a pointer, or a literal constant not yet placed in a register.
struct Value {
  enum Kind { None, Reg, Matrix, Sampler, Pointer, Literal };
  Kind kind = None;
  Operand op;
  uint32_t comps = 4;
  std::vector<Operand> cols;
  std::vector<Vec4> litCols;  // Literal: the value (matrix literals: one per column)
  uint8_t unit = 0;
  // Pointer: a variable and the constant indices into it.
  uint32_t var = 0;
  std::vector<uint32_t> chain;
};

struct Variable {
  uint32_t type = 0;  // pointee type
  uint32_t storage = 0;
  File file = File::Temp;
  uint16_t base = 0;  // first register
  bool perVertex = false;
  uint8_t unit = 0;
};

struct Inst {
  Op op;
  std::vector<uint32_t> w;  // operand words (after the opcode word)
  size_t ordinal;           // index in the module, for messages
};

class Lowering {
 public:
  Lowering(const std::vector<uint32_t>& words, const std::string& name)
      : words_(words), name_(name) {}

  Program run() {
    decode();
    p_.name = name_;
    declarations();
    function();
    return std::move(p_);
  }

 private:
  // ---- messages --------------------------------------------------------------------------------
  std::string text(size_t ordinal) {
    if (dis_.empty()) {
      spvtools::SpirvTools tools(SPV_ENV_UNIVERSAL_1_5);
      std::string out;
      if (tools.Disassemble(
              words_, &out,
              SPV_BINARY_TO_TEXT_OPTION_NO_HEADER | SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES))
        for (auto& l : split(out, '\n'))
          if (!trim(l).empty()) dis_.emplace_back(trim(l));
    }
    return ordinal < dis_.size() ? dis_[ordinal] : fmt::format("instruction {}", ordinal);
  }
  [[noreturn]] void unsupported(const Inst& in, const std::string& why = "") {
    throw InputError(fmt::format("{}: unsupported SPIR-V instruction '{}'{}", name_,
                                 text(in.ordinal), why.empty() ? "" : ": " + why));
  }
  [[noreturn]] void fail(const std::string& msg) {
    throw InputError(fmt::format("{}: {}", name_, msg));
  }

  // ---- decoding -------------------------------------------------------------------------------
  void decode() {
    if (words_.size() < 5 || words_[0] != spv::MagicNumber)
      fail("not a SPIR-V module (bad magic number)");
    spvtools::SpirvTools tools(SPV_ENV_UNIVERSAL_1_5);
    std::string msg;
    tools.SetMessageConsumer(
        [&](spv_message_level_t, const char*, const spv_position_t&, const char* m) {
          if (msg.empty()) msg = m;
        });
    if (!tools.Validate(words_)) fail("invalid SPIR-V: " + msg);
    for (size_t i = 5, k = 0; i < words_.size(); ++k) {
      const uint32_t count = words_[i] >> 16;
      if (count == 0 || i + count > words_.size()) fail("truncated SPIR-V instruction");
      Inst in{Op(words_[i] & 0xFFFF),
              std::vector<uint32_t>(words_.begin() + long(i + 1), words_.begin() + long(i + count)),
              k};
      insts_.push_back(std::move(in));
      i += count;
    }
  }

  static std::string literalString(const std::vector<uint32_t>& w, size_t from) {
    std::string s;
    for (size_t i = from; i < w.size(); ++i)
      for (int b = 0; b < 4; ++b) {
        char c = char((w[i] >> (8 * b)) & 0xFF);
        if (c == 0) return s;
        s += c;
      }
    return s;
  }

  // Registers a type or value occupies (vec: 1, mat: columns, array: length x element).
  uint32_t slots(uint32_t t) {
    const Type& ty = types_[t];
    switch (ty.kind) {
      case Type::Matrix:
        return ty.count;
      case Type::Array:
        return ty.count * slots(ty.elem);
      case Type::Struct: {
        uint32_t n = 0;
        for (uint32_t m : ty.members) n += slots(m);
        return n;
      }
      default:
        return 1;
    }
  }
  uint32_t comps(uint32_t t) {
    const Type& ty = types_[t];
    if (ty.kind == Type::Vector) return ty.count;
    if (ty.kind == Type::Matrix) return comps(ty.elem);
    return 1;
  }

  float scalarConstant(const Inst& in) {
    const Type& ty = types_[in.w[0]];
    if (ty.kind == Type::Float) {
      float f;
      std::memcpy(&f, &in.w[2], 4);
      return f;
    }
    if (ty.kind == Type::Int) return ty.elem ? float(int32_t(in.w[2])) : float(in.w[2]);
    unsupported(in, "constant of this type");
  }

  void declarations() {
    p_.stage = Stage::Fragment;
    for (const Inst& in : insts_) {
      const auto& w = in.w;
      switch (in.op) {
        case Op::OpCapability:
          if (w[0] != spv::CapabilityShader) unsupported(in);
          break;
        case Op::OpEntryPoint:
          if (++entries_ > 1) fail("more than one entry point");
          if (w[0] == spv::ExecutionModelVertex)
            p_.stage = Stage::Vertex;
          else if (w[0] != spv::ExecutionModelFragment)
            unsupported(in, "only vertex and fragment shaders");
          break;
        case Op::OpName:
          names_[w[0]] = literalString(w, 1);
          break;
        case Op::OpMemberName:
          memberNames_[{w[0], w[1]}] = literalString(w, 2);
          break;
        case Op::OpDecorate:
          if (w[1] == spv::DecorationLocation) location_[w[0]] = w[2];
          if (w[1] == spv::DecorationBinding) binding_[w[0]] = w[2];
          if (w[1] == spv::DecorationBuiltIn) builtin_[w[0]] = w[2];
          break;
        case Op::OpMemberDecorate:
          if (w[2] == spv::DecorationBuiltIn) memberBuiltin_[{w[0], w[1]}] = w[3];
          break;
        case Op::OpExtInstImport:
          if (literalString(w, 1) != "GLSL.std.450") unsupported(in);
          glsl_ = w[0];
          break;
        case Op::OpTypeVoid:
          types_[w[0]].kind = Type::Void;
          break;
        case Op::OpTypeBool:
          types_[w[0]].kind = Type::Bool;
          break;
        case Op::OpTypeInt:
          if (w[1] != 32) unsupported(in, "only 32-bit integers");
          types_[w[0]] = Type{Type::Int, 1, w[2], 0, {}};
          break;
        case Op::OpTypeFloat:
          if (w[1] != 32) unsupported(in, "only 32-bit floats");
          types_[w[0]].kind = Type::Float;
          break;
        case Op::OpTypeVector:
          types_[w[0]] = Type{Type::Vector, w[2], w[1], 0, {}};
          break;
        case Op::OpTypeMatrix:
          types_[w[0]] = Type{Type::Matrix, w[2], w[1], 0, {}};
          break;
        case Op::OpTypePointer:
          types_[w[0]] = Type{Type::Pointer, 1, w[2], w[1], {}};
          break;
        case Op::OpTypeStruct:
          types_[w[0]] = Type{Type::Struct, 1, 0, 0, std::vector<uint32_t>(w.begin() + 1, w.end())};
          break;
        case Op::OpTypeArray: {
          const Value& len = val(w[2]);
          types_[w[0]] = Type{Type::Array, uint32_t(len.litCols.at(0)[0]), w[1], 0, {}};
          break;
        }
        case Op::OpTypeImage:
          types_[w[0]].kind = Type::Image;
          break;
        case Op::OpTypeSampledImage:
          types_[w[0]].kind = Type::SampledImage;
          break;
        case Op::OpTypeFunction:
          types_[w[0]].kind = Type::Function;
          break;
        case Op::OpConstant: {
          const float f = scalarConstant(in);
          literal(w[1], {Vec4{f, f, f, f}}, 1);
          break;
        }
        case Op::OpConstantTrue:
        case Op::OpConstantFalse: {
          const float f = in.op == Op::OpConstantTrue ? 1.0f : 0.0f;
          literal(w[1], {Vec4{f, f, f, f}}, 1);
          break;
        }
        case Op::OpConstantComposite: {
          const Type& ty = types_[w[0]];
          if (ty.kind == Type::Vector) {
            Vec4 v{0, 0, 0, 0};
            for (size_t k = 2; k < w.size(); ++k) v[k - 2] = val(w[k]).litCols[0][0];
            literal(w[1], {v}, ty.count);
          } else if (ty.kind == Type::Matrix) {
            std::vector<Vec4> cols;
            for (size_t k = 2; k < w.size(); ++k) cols.push_back(val(w[k]).litCols[0]);
            literal(w[1], cols, comps(w[0]));
          } else {
            unsupported(in, "composite constants other than vectors and matrices");
          }
          break;
        }
        case Op::OpUndef:
          literal(w[1], {Vec4{0, 0, 0, 0}}, comps(w[0]));
          break;
        case Op::OpVariable:
          if (in.w[2] != spv::StorageClassFunction) variable(in);
          break;
        case Op::OpExecutionMode:
        case Op::OpMemoryModel:
        case Op::OpSource:
        case Op::OpSourceExtension:
        case Op::OpString:
        case Op::OpLine:
        case Op::OpNoLine:
        case Op::OpModuleProcessed:
        case Op::OpDecorationGroup:
          break;
        case Op::OpFunction:
          if (++functions_ > 1) fail("more than one function (glslang -Os inlines every call)");
          break;
        default:
          break;  // function bodies: see function()
      }
    }
  }

  void literal(uint32_t id, std::vector<Vec4> cols, uint32_t n) {
    Value v;
    v.kind = Value::Literal;
    v.litCols = std::move(cols);
    v.comps = n;
    values_[id] = v;
  }

  uint16_t constantRegister(const Vec4& v) {
    for (const auto& [idx, val] : p_.constants)
      if (std::memcmp(val.data(), v.data(), sizeof(Vec4)) == 0) return idx;
    const uint16_t idx = p_.constantCount++;
    p_.constants.push_back({idx, v});
    return idx;
  }

  void variable(const Inst& in) {
    const uint32_t id = in.w[1], storage = in.w[2];
    const uint32_t pointee = types_[in.w[0]].elem;
    Variable v{pointee, storage, File::Temp, 0, false, 0};
    const std::string name = names_.count(id) ? names_[id] : fmt::format("%{}", id);
    if (storage == spv::StorageClassInput) {
      if (builtin_.count(id)) unsupported(in, "built-in inputs");
      if (!location_.count(id)) fail(fmt::format("input '{}' has no location", name));
      if (location_[id] > kMaxLocation)
        fail(fmt::format("input '{}' at location {}: beyond any buffer", name, location_[id]));
      v.file = File::Input;
      v.base = uint16_t(location_[id]);
      p_.inputs.push_back(Binding{name, v.base, uint16_t(slots(pointee)), uint8_t(comps(pointee))});
    } else if (storage == spv::StorageClassOutput) {
      v.file = File::Output;
      if (types_[pointee].kind == Type::Struct) {
        // gl_PerVertex: only gl_Position is supported, in o0.
        v.perVertex = true;
        v.base = 0;
        p_.outputs.push_back(Binding{"gl_Position", 0, 1, 4});
      } else {
        if (!location_.count(id)) fail(fmt::format("output '{}' has no location", name));
        if (location_[id] > kMaxLocation)
          fail(fmt::format("output '{}' at location {}: beyond any buffer", name, location_[id]));
        v.base = uint16_t(location_[id] + (p_.stage == Stage::Vertex ? 1 : 0));
        p_.outputs.push_back(
            Binding{name, v.base, uint16_t(slots(pointee)), uint8_t(comps(pointee))});
      }
    } else if (storage == spv::StorageClassUniformConstant) {
      const Type& t = types_[pointee];
      if (t.kind == Type::SampledImage) {
        v.unit = uint8_t(binding_.count(id) ? binding_[id] : p_.samplers.size());
        p_.samplers.push_back(Binding{name, v.unit, 1, 4});
      } else if (t.kind == Type::Image) {
        unsupported(in, "separate images");
      } else {
        v.file = File::Const;
        v.base = p_.constantCount;
        const uint16_t n = uint16_t(slots(pointee));
        p_.constantCount = uint16_t(p_.constantCount + n);
        p_.uniforms.push_back(Binding{name, v.base, n, uint8_t(comps(pointee))});
      }
    } else if (storage == spv::StorageClassFunction || storage == spv::StorageClassPrivate) {
      if (slots(pointee) != 1)
        unsupported(in, "local arrays and matrices (only with -Os they vanish)");
      v.file = File::Temp;
      v.base = next_++;
    } else {
      unsupported(in, "this storage class (uniform blocks are not GLSL ES 1.00)");
    }
    vars_[id] = v;
    Value ptr;
    ptr.kind = Value::Pointer;
    ptr.var = id;
    values_[id] = ptr;
  }

  // ---- the function -----------------------------------------------------------------------------
  Block& block() { return p_.blocks[size_t(cur_)]; }

  Value& val(uint32_t id) {
    auto it = values_.find(id);
    if (it == values_.end())
      fail(fmt::format("uses %{} ('{}'), which is not a value this front end supports", id,
                       names_.count(id) ? names_[id] : std::string("?")));
    return it->second;
  }

  int blockOf(uint32_t label) {
    auto it = labels_.find(label);
    if (it != labels_.end()) return it->second;
    p_.blocks.push_back(Block{fmt::format("L{}", label), {}, {}});
    labels_[label] = int(p_.blocks.size()) - 1;
    return labels_[label];
  }

  Operand reg(uint32_t id) {
    Value& v = val(id);
    if (v.kind == Value::Literal) {
      if (v.litCols.size() != 1) fail(fmt::format("matrix literal %{} used as a vector", id));
      Operand o{File::Const, constantRegister(v.litCols[0])};
      return o;
    }
    if (v.kind != Value::Reg) fail(fmt::format("%{} is not a vector or scalar value", id));
    return v.op;
  }
  uint32_t compsOf(uint32_t id) { return val(id).comps; }

  std::vector<Operand> columns(uint32_t id) {
    Value& v = val(id);
    if (v.kind == Value::Matrix) return v.cols;
    if (v.kind == Value::Literal) {
      std::vector<Operand> out;
      for (const auto& c : v.litCols) out.push_back(Operand{File::Const, constantRegister(c)});
      return out;
    }
    fail(fmt::format("%{} is not a matrix", id));
  }

  static uint8_t maskOf(uint32_t n) { return uint8_t((1u << n) - 1u); }

  // Component k of operand o, replicated.
  static Operand component(Operand o, uint32_t k) {
    const uint8_t c = o.swz[k];
    o.swz = {c, c, c, c};
    return o;
  }

  uint16_t emit(shader::Op op, uint8_t mask, std::vector<Operand> src, uint16_t dst = 0xFFFF,
                uint8_t unit = 0) {
    Instr i;
    i.op = op;
    i.dst = Dest{File::Temp, dst == 0xFFFF ? next_++ : dst, mask};
    for (size_t k = 0; k < src.size(); ++k) i.src[k] = src[k];
    i.unit = unit;
    block().code.push_back(i);
    return i.dst.index;
  }

  void setReg(uint32_t id, uint16_t t, uint32_t n) {
    Value v;
    v.kind = Value::Reg;
    v.op = Operand{File::Temp, t};
    v.comps = n;
    values_[id] = v;
  }

  void setView(uint32_t id, Operand o, uint32_t n) {
    Value v;
    v.kind = Value::Reg;
    v.op = o;
    v.comps = n;
    values_[id] = v;
  }

  // A scalar special-function op applied to each of n components.
  uint16_t perComponent(shader::Op op, Operand a, uint32_t n) {
    const uint16_t t = next_++;
    for (uint32_t k = 0; k < n; ++k) emit(op, uint8_t(1u << k), {component(a, k)}, t);
    return t;
  }

  // Broadcast a scalar operand when the other operand is a vector.
  Operand widen(uint32_t id, uint32_t n) {
    Operand o = reg(id);
    if (compsOf(id) == 1 && n > 1) o = component(o, 0);
    return o;
  }

  // ---- pointers ---------------------------------------------------------------------------------
  struct Place {
    File file;
    uint16_t index;
    int component = -1;  // a single component of a vector
    uint32_t type;
  };

  Place place(uint32_t ptrId, const Inst& in) {
    const Value& p = val(ptrId);
    if (p.kind != Value::Pointer) unsupported(in, "pointer expected");
    const Variable& v = vars_.at(p.var);
    Place pl{v.file, v.base, -1, v.type};
    for (size_t k = 0; k < p.chain.size(); ++k) {
      const uint32_t idx = p.chain[k];
      const Type& t = types_[pl.type];
      if (t.kind == Type::Struct) {
        if (v.perVertex) {
          auto it = memberBuiltin_.find({pl.type, idx});
          if (it == memberBuiltin_.end() || it->second != spv::BuiltInPosition)
            unsupported(in, "gl_PerVertex members other than gl_Position");
          pl.type = t.members[idx];
          continue;
        }
        uint32_t off = 0;
        for (uint32_t m = 0; m < idx; ++m) off += slots(t.members[m]);
        pl.index = uint16_t(pl.index + off);
        pl.type = t.members[idx];
      } else if (t.kind == Type::Array || t.kind == Type::Matrix) {
        pl.index = uint16_t(pl.index + idx * slots(t.elem));
        pl.type = t.elem;
      } else if (t.kind == Type::Vector) {
        pl.component = int(idx);
        pl.type = t.elem;
      } else {
        unsupported(in, "access chain into a scalar");
      }
    }
    return pl;
  }

  void load(const Inst& in) {
    const uint32_t type = in.w[0], id = in.w[1];
    const Value& p = val(in.w[2]);
    if (p.kind != Value::Pointer) unsupported(in);
    const Variable& var = vars_.at(p.var);
    if (var.storage == spv::StorageClassUniformConstant &&
        types_[var.type].kind == Type::SampledImage) {
      Value v;
      v.kind = Value::Sampler;
      v.unit = var.unit;
      values_[id] = v;
      return;
    }
    const Place pl = place(in.w[2], in);
    const Type& t = types_[type];
    if (t.kind == Type::Matrix) {
      if (pl.file != File::Const) unsupported(in, "matrices outside uniforms");
      Value v;
      v.kind = Value::Matrix;
      for (uint32_t c = 0; c < t.count; ++c)
        v.cols.push_back(Operand{File::Const, uint16_t(pl.index + c)});
      v.comps = comps(type);
      values_[id] = v;
      return;
    }
    if (t.kind == Type::Struct || t.kind == Type::Array)
      unsupported(in, "loads of whole arrays or structures");
    Operand o{pl.file, pl.index};
    if (pl.component >= 0) o = component(o, uint32_t(pl.component));
    const uint32_t n = comps(type);
    if (pl.file == File::Input || pl.file == File::Const) {
      setView(id, o, n);  // read straight from the buffer where it is used
    } else {
      // Temporaries and the output buffer can change: the loaded value is a copy.
      setReg(id, emit(shader::Op::Mov, 0xF, {o}), n);
    }
  }

  void store(const Inst& in) {
    const Place pl = place(in.w[0], in);
    const uint32_t value = in.w[1];
    if (types_[pl.type].kind == Type::Matrix || types_[pl.type].kind == Type::Struct ||
        types_[pl.type].kind == Type::Array)
      unsupported(in, "stores of matrices, arrays or structures");
    if (pl.file == File::Input || pl.file == File::Const)
      unsupported(in, "store to a read-only variable");
    const uint32_t n = comps(pl.type);
    uint8_t mask = maskOf(n);
    Operand src = reg(value);
    if (pl.component >= 0) {
      mask = uint8_t(1u << pl.component);
      src = component(src, 0);
    }
    // The value's own instruction writes the destination when it was just computed for it alone.
    const Value& v = val(value);
    if (v.kind == Value::Reg && v.op.file == File::Temp && v.op.identity() &&
        !block().code.empty() && uses_[value] == 1 && pl.component < 0) {
      Instr& last = block().code.back();
      if (last.dst.file == File::Temp && last.dst.index == v.op.index &&
          (last.dst.mask & mask) == mask && defs_(v.op.index) == 1) {
        last.dst = Dest{pl.file, pl.index, uint8_t(last.dst.mask & mask)};
        return;
      }
    }
    Instr i;
    i.op = shader::Op::Mov;
    i.dst = Dest{pl.file, pl.index, mask};
    i.src[0] = src;
    block().code.push_back(i);
  }

  int defs_(uint16_t t) {
    int n = 0;
    for (const auto& b : p_.blocks)
      for (const auto& i : b.code) n += writes(i, File::Temp, t);
    return n;
  }

  // ---- instructions -----------------------------------------------------------------------------
  void binary(shader::Op op, const Inst& in, bool swap = false) {
    const uint32_t n = comps(in.w[0]);
    Operand a = widen(in.w[2], n), b = widen(in.w[3], n);
    if (swap) std::swap(a, b);
    setReg(in.w[1], emit(op, maskOf(n), {a, b}), n);
  }

  void compare(const Inst& in) {
    using shader::Op;
    const uint32_t n = comps(in.w[0]);
    Operand a = widen(in.w[2], n), b = widen(in.w[3], n);
    Op op = Op::Slt;
    bool swap = false;
    // For a NaN operand slt, sge and seq give false and sne true, as the ordered comparisons and
    // the unordered "not equal" (what glslang emits for GLSL's operators) do; the ordered "not
    // equal" would need false. (The other unordered comparisons do not reach here.)
    if (in.op == spv::OpFOrdNotEqual)
      unsupported(in, "an ordered 'not equal' (false for NaN: the shader ISA's sne is true)");
    switch (in.op) {
      case spv::OpFOrdLessThan:
      case spv::OpSLessThan:
      case spv::OpULessThan:
        op = Op::Slt;
        break;
      case spv::OpFOrdGreaterThan:
      case spv::OpSGreaterThan:
      case spv::OpUGreaterThan:
        op = Op::Slt;
        swap = true;
        break;
      case spv::OpFOrdLessThanEqual:
      case spv::OpSLessThanEqual:
      case spv::OpULessThanEqual:
        op = Op::Sge;
        swap = true;
        break;
      case spv::OpFOrdGreaterThanEqual:
      case spv::OpSGreaterThanEqual:
      case spv::OpUGreaterThanEqual:
        op = Op::Sge;
        break;
      case spv::OpFOrdEqual:
      case spv::OpIEqual:
      case spv::OpLogicalEqual:
        op = Op::Seq;
        break;
      default:
        op = Op::Sne;
        break;
    }
    if (swap) std::swap(a, b);
    setReg(in.w[1], emit(op, maskOf(n), {a, b}), n);
  }

  Operand zero() { return Operand{File::Const, constantRegister({0, 0, 0, 0})}; }
  Operand splat(float f) { return Operand{File::Const, constantRegister({f, f, f, f})}; }

  uint16_t dot(Operand a, Operand b, uint32_t n) {
    const shader::Op op = n == 2   ? shader::Op::Dp2
                          : n == 3 ? shader::Op::Dp3
                          : n == 4 ? shader::Op::Dp4
                                   : shader::Op::Mul;
    return emit(op, 0xF, {a, b});
  }

  void extInst(const Inst& in) {
    using shader::Op;
    if (in.w[2] != glsl_) unsupported(in);
    const uint32_t n = comps(in.w[0]), id = in.w[1];
    const uint8_t m = maskOf(n);
    auto arg = [&](size_t k) { return widen(in.w[4 + k], n); };
    auto set = [&](uint16_t t) { setReg(id, t, n); };
    switch (in.w[3]) {
      case GLSLstd450FAbs: {
        Operand a = arg(0);
        a.abs = true;
        a.neg = false;
        set(emit(Op::Mov, m, {a}));
        break;
      }
      case GLSLstd450Floor:
        set(emit(Op::Flr, m, {arg(0)}));
        break;
      case GLSLstd450Ceil: {
        Operand a = arg(0);
        a.neg = !a.neg;
        const uint16_t t = emit(Op::Flr, m, {a});
        set(emit(Op::Mov, m, {Operand{File::Temp, t, {0, 1, 2, 3}, true}}));
        break;
      }
      case GLSLstd450Fract:
        set(emit(Op::Frc, m, {arg(0)}));
        break;
      case GLSLstd450Trunc:
        set(emit(Op::Trc, m, {arg(0)}));
        break;
      case GLSLstd450Sin:
        set(perComponent(Op::Sin, arg(0), n));
        break;
      case GLSLstd450Cos:
        set(perComponent(Op::Cos, arg(0), n));
        break;
      case GLSLstd450Exp2:
        set(perComponent(Op::Ex2, arg(0), n));
        break;
      case GLSLstd450Log2:
        set(perComponent(Op::Lg2, arg(0), n));
        break;
      case GLSLstd450Exp: {
        const uint16_t t = emit(Op::Mul, m, {arg(0), splat(1.4426950408889634f)});
        set(perComponent(Op::Ex2, Operand{File::Temp, t}, n));
        break;
      }
      case GLSLstd450Log: {
        const uint16_t t = perComponent(Op::Lg2, arg(0), n);
        set(emit(Op::Mul, m, {Operand{File::Temp, t}, splat(0.6931471805599453f)}));
        break;
      }
      case GLSLstd450Sqrt:
        set(perComponent(Op::Sqrt, arg(0), n));
        break;
      case GLSLstd450InverseSqrt:
        set(perComponent(Op::Rsq, arg(0), n));
        break;
      case GLSLstd450Pow: {
        const uint16_t l = perComponent(Op::Lg2, arg(0), n);
        const uint16_t p = emit(Op::Mul, m, {Operand{File::Temp, l}, arg(1)});
        set(perComponent(Op::Ex2, Operand{File::Temp, p}, n));
        break;
      }
      case GLSLstd450FMin:
      case GLSLstd450NMin:
      case GLSLstd450SMin:
        set(emit(Op::Min, m, {arg(0), arg(1)}));
        break;
      case GLSLstd450FMax:
      case GLSLstd450NMax:
      case GLSLstd450SMax:
        set(emit(Op::Max, m, {arg(0), arg(1)}));
        break;
      case GLSLstd450FClamp:
      case GLSLstd450NClamp:
      case GLSLstd450SClamp: {
        const uint16_t t = emit(Op::Max, m, {arg(0), arg(1)});
        set(emit(Op::Min, m, {Operand{File::Temp, t}, arg(2)}));
        break;
      }
      case GLSLstd450FMix: {
        Operand x = arg(0), y = arg(1), a = arg(2);
        Operand nx = x;
        nx.neg = !nx.neg;
        const uint16_t d = emit(Op::Add, m, {y, nx});
        set(emit(Op::Mad, m, {Operand{File::Temp, d}, a, x}));
        break;
      }
      case GLSLstd450Step:
        set(emit(Op::Sge, m, {arg(1), arg(0)}));
        break;
      case GLSLstd450SmoothStep: {
        Operand e0 = arg(0), e1 = arg(1), x = arg(2), ne0 = e0;
        ne0.neg = !ne0.neg;
        const uint16_t num = emit(Op::Add, m, {x, ne0});
        const uint16_t den = emit(Op::Add, m, {e1, ne0});
        const uint16_t r = perComponent(Op::Rcp, Operand{File::Temp, den}, n);
        const uint16_t q = emit(Op::Mul, m, {Operand{File::Temp, num}, Operand{File::Temp, r}});
        const uint16_t lo = emit(Op::Max, m, {Operand{File::Temp, q}, zero()});
        const uint16_t t = emit(Op::Min, m, {Operand{File::Temp, lo}, splat(1.0f)});
        Operand tt{File::Temp, t};
        Operand neg2t = tt;
        neg2t.neg = true;
        const uint16_t s = emit(Op::Mad, m, {neg2t, splat(2.0f), splat(3.0f)});
        const uint16_t t2 = emit(Op::Mul, m, {tt, tt});
        set(emit(Op::Mul, m, {Operand{File::Temp, t2}, Operand{File::Temp, s}}));
        break;
      }
      case GLSLstd450Fma:
        set(emit(Op::Mad, m, {arg(0), arg(1), arg(2)}));
        break;
      case GLSLstd450Length: {
        const uint32_t k = compsOf(in.w[4]);
        const Operand a = reg(in.w[4]);
        const uint16_t d = dot(a, a, k);
        setReg(id, perComponent(Op::Sqrt, Operand{File::Temp, d}, 1), 1);
        break;
      }
      case GLSLstd450Distance: {
        const uint32_t k = compsOf(in.w[4]);
        Operand b = reg(in.w[5]);
        b.neg = !b.neg;
        const uint16_t d = emit(Op::Add, maskOf(k), {reg(in.w[4]), b});
        const uint16_t dd = dot(Operand{File::Temp, d}, Operand{File::Temp, d}, k);
        setReg(id, perComponent(Op::Sqrt, Operand{File::Temp, dd}, 1), 1);
        break;
      }
      case GLSLstd450Normalize: {
        const Operand a = reg(in.w[4]);
        const uint16_t d = dot(a, a, n);
        const uint16_t r = emit(Op::Rsq, 0xF, {Operand{File::Temp, d}});
        set(emit(Op::Mul, m, {a, Operand{File::Temp, r}}));
        break;
      }
      case GLSLstd450Cross: {
        Operand a = reg(in.w[4]), b = reg(in.w[5]);
        auto sw = [](Operand o, uint8_t x, uint8_t y, uint8_t z) {
          const auto s = o.swz;
          o.swz = {s[x], s[y], s[z], s[z]};
          return o;
        };
        const uint16_t t = emit(Op::Mul, 7, {sw(a, 2, 0, 1), sw(b, 1, 2, 0)});
        Operand nt{File::Temp, t};
        nt.neg = true;
        set(emit(Op::Mad, 7, {sw(a, 1, 2, 0), sw(b, 2, 0, 1), nt}));
        break;
      }
      case GLSLstd450Reflect: {
        // I - 2 dot(N, I) N
        const Operand i = reg(in.w[4]), nn = reg(in.w[5]);
        const uint16_t d = dot(nn, i, n);
        const uint16_t d2 = emit(Op::Mul, m, {Operand{File::Temp, d}, splat(-2.0f)});
        set(emit(Op::Mad, m, {Operand{File::Temp, d2}, nn, i}));
        break;
      }
      default:
        unsupported(in, "this GLSL.std.450 function");
    }
  }

  void instruction(const Inst& in) {
    using shader::Op;
    const auto& w = in.w;
    switch (in.op) {
      case spv::OpLoad:
        load(in);
        break;
      case spv::OpStore:
        store(in);
        break;
      case spv::OpAccessChain:
      case spv::OpInBoundsAccessChain: {
        Value base = val(w[2]);
        if (base.kind != Value::Pointer) unsupported(in);
        for (size_t k = 3; k < w.size(); ++k) {
          const Value& idx = val(w[k]);
          if (idx.kind != Value::Literal)
            unsupported(in, "a non-constant index (dynamic indexing)");
          base.chain.push_back(uint32_t(idx.litCols[0][0]));
        }
        values_[w[1]] = base;
        break;
      }
      case spv::OpFAdd:
      case spv::OpIAdd:
        binary(Op::Add, in);
        break;
      case spv::OpFMul:
      case spv::OpIMul:
        binary(Op::Mul, in);
        break;
      case spv::OpFSub:
      case spv::OpISub: {
        const uint32_t n = comps(w[0]);
        Operand b = widen(w[3], n);
        b.neg = !b.neg;
        setReg(w[1], emit(Op::Add, maskOf(n), {widen(w[2], n), b}), n);
        break;
      }
      case spv::OpFDiv: {
        const uint32_t n = comps(w[0]);
        const uint32_t dn = compsOf(w[3]);
        const uint16_t r = perComponent(Op::Rcp, reg(w[3]), dn);
        Operand ro{File::Temp, r};
        if (dn == 1) ro = component(ro, 0);
        setReg(w[1], emit(Op::Mul, maskOf(n), {widen(w[2], n), ro}), n);
        break;
      }
      case spv::OpFMod: {
        const uint32_t n = comps(w[0]);
        const Operand a = widen(w[2], n), b = widen(w[3], n);
        const uint32_t dn = compsOf(w[3]);
        const uint16_t r = perComponent(Op::Rcp, reg(w[3]), dn);
        Operand ro{File::Temp, r};
        if (dn == 1) ro = component(ro, 0);
        const uint16_t q = emit(Op::Mul, maskOf(n), {a, ro});
        const uint16_t f = emit(Op::Flr, maskOf(n), {Operand{File::Temp, q}});
        Operand nf{File::Temp, f};
        nf.neg = true;
        setReg(w[1], emit(Op::Mad, maskOf(n), {nf, b, a}), n);
        break;
      }
      case spv::OpFNegate:
      case spv::OpSNegate: {
        Operand a = reg(w[2]);
        a.neg = !a.neg;
        setView(w[1], a, comps(w[0]));
        break;
      }
      case spv::OpVectorTimesScalar: {
        const uint32_t n = comps(w[0]);
        setReg(w[1], emit(Op::Mul, maskOf(n), {reg(w[2]), component(reg(w[3]), 0)}), n);
        break;
      }
      case spv::OpMatrixTimesScalar: {
        std::vector<Operand> cols = columns(w[2]), out;
        for (const Operand& c : cols)
          out.push_back(Operand{File::Temp, emit(Op::Mul, 0xF, {c, component(reg(w[3]), 0)})});
        Value v;
        v.kind = Value::Matrix;
        v.cols = out;
        v.comps = comps(w[0]);
        values_[w[1]] = v;
        break;
      }
      case spv::OpMatrixTimesVector: {
        const std::vector<Operand> cols = columns(w[2]);
        const Operand x = reg(w[3]);
        const uint32_t n = comps(w[0]);
        uint16_t t = emit(Op::Mul, maskOf(n), {cols[0], component(x, 0)});
        for (size_t c = 1; c < cols.size(); ++c)
          t = emit(Op::Mad, maskOf(n),
                   {cols[c], component(x, uint32_t(c)), Operand{File::Temp, t}});
        setReg(w[1], t, n);
        break;
      }
      case spv::OpVectorTimesMatrix: {
        const std::vector<Operand> cols = columns(w[3]);
        const Operand x = reg(w[2]);
        const uint32_t k = compsOf(w[2]);
        const uint16_t t = next_++;
        const shader::Op op = k == 2 ? Op::Dp2 : k == 3 ? Op::Dp3 : Op::Dp4;
        for (size_t c = 0; c < cols.size(); ++c) emit(op, uint8_t(1u << c), {x, cols[c]}, t);
        setReg(w[1], t, uint32_t(cols.size()));
        break;
      }
      case spv::OpDot:
        setReg(w[1], dot(reg(w[2]), reg(w[3]), compsOf(w[2])), 1);
        break;
      case spv::OpFOrdLessThan:
      case spv::OpSLessThan:
      case spv::OpULessThan:
      case spv::OpFOrdGreaterThan:
      case spv::OpSGreaterThan:
      case spv::OpUGreaterThan:
      case spv::OpFOrdLessThanEqual:
      case spv::OpSLessThanEqual:
      case spv::OpULessThanEqual:
      case spv::OpFOrdGreaterThanEqual:
      case spv::OpSGreaterThanEqual:
      case spv::OpUGreaterThanEqual:
      case spv::OpFOrdEqual:
      case spv::OpIEqual:
      case spv::OpLogicalEqual:
      case spv::OpFOrdNotEqual:
      case spv::OpFUnordNotEqual:
      case spv::OpINotEqual:
      case spv::OpLogicalNotEqual:
        compare(in);
        break;
      case spv::OpLogicalNot: {
        const uint32_t n = comps(w[0]);
        setReg(w[1], emit(Op::Seq, maskOf(n), {reg(w[2]), zero()}), n);
        break;
      }
      case spv::OpLogicalAnd:
        binary(Op::Mul, in);
        break;
      case spv::OpLogicalOr:
        binary(Op::Max, in);
        break;
      case spv::OpSelect: {
        const uint32_t n = comps(w[0]);
        setReg(w[1], emit(Op::Sel, maskOf(n), {widen(w[2], n), widen(w[3], n), widen(w[4], n)}), n);
        break;
      }
      case spv::OpConvertSToF:
      case spv::OpConvertUToF:
        setView(w[1], reg(w[2]), comps(w[0]));
        break;
      case spv::OpConvertFToS:
      case spv::OpConvertFToU: {
        const uint32_t n = comps(w[0]);
        setReg(w[1], emit(Op::Trc, maskOf(n), {reg(w[2])}), n);
        break;
      }
      case spv::OpCopyObject:
        values_[w[1]] = val(w[2]);
        break;
      case spv::OpCompositeExtract: {
        const Value& v = val(w[2]);
        if (v.kind == Value::Matrix || (v.kind == Value::Literal && v.litCols.size() > 1)) {
          Operand col = columns(w[2]).at(w[3]);
          if (w.size() > 4) col = component(col, w[4]);
          setView(w[1], col, w.size() > 4 ? 1 : v.comps);
        } else if (w.size() == 4) {
          setView(w[1], component(reg(w[2]), w[3]), 1);
        } else {
          unsupported(in, "extraction from structures or arrays");
        }
        break;
      }
      case spv::OpCompositeInsert: {
        const uint32_t n = comps(w[0]);
        if (w.size() != 5 || types_[w[0]].kind != Type::Vector) unsupported(in);
        const uint16_t t = emit(Op::Mov, maskOf(n), {reg(w[3])});
        emit(Op::Mov, uint8_t(1u << w[4]), {component(reg(w[2]), 0)}, t);
        setReg(w[1], t, n);
        break;
      }
      case spv::OpCompositeConstruct: {
        const Type& t = types_[w[0]];
        if (t.kind == Type::Matrix) {
          Value v;
          v.kind = Value::Matrix;
          for (size_t k = 2; k < w.size(); ++k) v.cols.push_back(reg(w[k]));
          v.comps = comps(w[0]);
          values_[w[1]] = v;
          break;
        }
        if (t.kind != Type::Vector) unsupported(in, "structures and arrays");
        // Components gathered from the parts: one register view when they all come from one
        // register, moves with write masks otherwise.
        std::vector<Operand> parts;
        for (size_t k = 2; k < w.size(); ++k)
          for (uint32_t c = 0; c < compsOf(w[k]); ++c) parts.push_back(component(reg(w[k]), c));
        construct(w[1], parts);
        break;
      }
      case spv::OpVectorShuffle: {
        const uint32_t n1 = compsOf(w[2]);
        std::vector<Operand> parts;
        for (size_t k = 4; k < w.size(); ++k) {
          if (w[k] == 0xFFFFFFFFu) {
            parts.push_back(zero());
            continue;
          }
          parts.push_back(w[k] < n1 ? component(reg(w[2]), w[k]) : component(reg(w[3]), w[k] - n1));
        }
        construct(w[1], parts);
        break;
      }
      case spv::OpImageSampleImplicitLod:
      case spv::OpImageSampleExplicitLod: {
        const Value& s = val(w[2]);
        if (s.kind != Value::Sampler) unsupported(in, "sampling needs a combined sampler");
        // Image operands: none for an implicit LOD; for an explicit one, only Lod. Our textures
        // have one level sampled nearest, so a level of detail changes nothing; a bias, offset
        // or gradients would, and are refused rather than dropped.
        if (in.op == spv::OpImageSampleImplicitLod && w.size() > 4)
          unsupported(in, "bias, offsets or gradients");
        if (in.op == spv::OpImageSampleExplicitLod &&
            (w.size() < 5 || w[4] != spv::ImageOperandsLodMask || w.size() != 6))
          unsupported(in, "offsets or gradients (only an explicit level of detail is lowered)");
        setReg(w[1], emit(Op::Tex, 0xF, {reg(w[3])}, 0xFFFF, s.unit), 4);
        break;
      }
      case spv::OpExtInst:
        extInst(in);
        break;
      case spv::OpPhi: {
        const uint16_t t = next_++;
        setReg(w[1], t, comps(w[0]));
        for (size_t k = 2; k + 1 < w.size(); k += 2)
          phis_.push_back(Phi{t, w[k], w[k + 1], cur_, in.ordinal});
        break;
      }
      case spv::OpSelectionMerge:
      case spv::OpLoopMerge:
      case spv::OpLine:
      case spv::OpNoLine:
        break;
      case spv::OpFunctionCall:
        unsupported(in, "function calls (glslang -Os inlines them)");
      default:
        unsupported(in);
    }
  }

  void construct(uint32_t id, const std::vector<Operand>& parts) {
    const uint32_t n = uint32_t(parts.size());
    bool oneReg = n <= 4;
    for (const auto& p : parts)
      oneReg = oneReg && p.file == parts[0].file && p.index == parts[0].index &&
               p.neg == parts[0].neg && p.abs == parts[0].abs;
    if (oneReg) {
      Operand o = parts[0];
      for (uint32_t k = 0; k < 4; ++k) o.swz[k] = parts[std::min(k, n - 1)].swz[0];
      setView(id, o, n);
      return;
    }
    const uint16_t t = next_++;
    for (uint32_t k = 0; k < n;) {
      // Neighbouring components from one register go in one move.
      Operand o = parts[k];
      uint8_t mask = uint8_t(1u << k);
      uint32_t e = k + 1;
      while (e < n && parts[e].file == o.file && parts[e].index == o.index &&
             parts[e].neg == o.neg && parts[e].abs == o.abs) {
        o.swz[e] = parts[e].swz[0];
        mask |= uint8_t(1u << e);
        ++e;
      }
      for (uint32_t j = k; j < e; ++j) o.swz[j] = parts[j].swz[0];
      emit(shader::Op::Mov, mask, {o}, t);
      k = e;
    }
    setReg(id, t, n);
  }

  struct Phi {
    uint16_t temp;
    uint32_t value, pred;
    int block;
    size_t ordinal;
  };

  void function() {
    // Use counts (for folding a value into the output write that is its only use).
    for (const Inst& in : insts_) {
      size_t first = 0;
      switch (in.op) {
        case spv::OpStore:
          first = 0;
          break;
        case spv::OpBranchConditional:
          first = 0;
          break;
        default:
          first = 2;
          break;
      }
      for (size_t k = first; k < in.w.size(); ++k) ++uses_[in.w[k]];
    }
    bool inBody = false;
    for (const Inst& in : insts_) {
      if (in.op == spv::OpFunction) {
        inBody = true;
        continue;
      }
      if (!inBody) continue;
      switch (in.op) {
        case spv::OpFunctionParameter:
          unsupported(in, "function parameters");
        case spv::OpFunctionEnd:
          inBody = false;
          break;
        case spv::OpLabel:
          cur_ = blockOf(in.w[0]);
          break;
        case spv::OpVariable:
          variable(in);
          break;
        case spv::OpBranch: {
          // The target first: blockOf may add a block, and block() must not be taken before.
          const int to = blockOf(in.w[0]);
          block().term = Terminator{TermKind::Jump, {}, {to, -1}, false};
          break;
        }
        case spv::OpBranchConditional: {
          Terminator t;
          t.kind = TermKind::Branch;
          t.cond = component(reg(in.w[0]), 0);
          t.succ = {blockOf(in.w[1]), blockOf(in.w[2])};
          block().term = t;
          break;
        }
        case spv::OpSwitch: {
          // glslang wraps inlined functions with early returns in a switch on a constant.
          const Value& sel = val(in.w[0]);
          if (sel.kind != Value::Literal) unsupported(in, "a switch on a non-constant value");
          uint32_t target = in.w[1];
          for (size_t k = 2; k + 1 < in.w.size(); k += 2)
            if (float(in.w[k]) == sel.litCols[0][0]) target = in.w[k + 1];
          const int to = blockOf(target);
          block().term = Terminator{TermKind::Jump, {}, {to, -1}, false};
          break;
        }
        case spv::OpReturn:
        case spv::OpUnreachable:
          block().term.kind = TermKind::End;
          break;
        case spv::OpKill:
        case spv::OpTerminateInvocation:
          block().term.kind = TermKind::Kill;
          break;
        default:
          instruction(in);
      }
    }
    if (p_.blocks.empty()) fail("no function body");
    resolvePhis();
  }

  // Out of SSA: each phi gets a copy at the end of every predecessor (through a fresh value, so
  // that phis of one block read their inputs before any of them is written). A predecessor with
  // two successors gets a new block on the edge.
  void resolvePhis() {
    std::map<std::pair<int, int>, int> edgeBlock;
    std::map<int, std::vector<std::pair<uint16_t, Operand>>> copies;  // block -> (phi temp, value)
    for (const Phi& ph : phis_) {
      int pred = blockOf(ph.pred);
      Block& pb = p_.blocks[size_t(pred)];
      if (pb.term.kind == TermKind::Branch && pb.term.succ[0] != pb.term.succ[1]) {
        auto key = std::pair{pred, ph.block};
        auto it = edgeBlock.find(key);
        if (it == edgeBlock.end()) {
          p_.blocks.push_back(Block{fmt::format("E{}_{}", pred, ph.block), {}, {}});
          const int e = int(p_.blocks.size()) - 1;
          p_.blocks[size_t(e)].term = Terminator{TermKind::Jump, {}, {ph.block, -1}, false};
          Terminator& t = p_.blocks[size_t(pred)].term;
          for (int& s : t.succ)
            if (s == ph.block) s = e;
          it = edgeBlock.emplace(key, e).first;
        }
        pred = it->second;
      }
      Operand v;
      try {
        v = reg(ph.value);
      } catch (const InputError&) {
        unsupported(insts_[ph.ordinal], "a phi of matrices or samplers");
      }
      copies[pred].push_back({ph.temp, v});
    }
    for (auto& [b, list] : copies) {
      Block& blk = p_.blocks[size_t(b)];
      // Direct copies unless one phi reads another's temporary (then through fresh values).
      bool direct = true;
      for (const auto& [t, v] : list)
        for (const auto& [t2, v2] : list) direct = direct && !v2.sameRegister(File::Temp, t);
      std::vector<uint16_t> mids;
      for (const auto& [t, v] : list) {
        const uint16_t mid = direct ? t : next_++;
        Instr i;
        i.dst = Dest{File::Temp, mid, 0xF};
        i.src[0] = v;
        blk.code.push_back(i);
        mids.push_back(mid);
      }
      if (direct) continue;
      for (size_t k = 0; k < list.size(); ++k) {
        Instr i;
        i.dst = Dest{File::Temp, list[k].first, 0xF};
        i.src[0] = Operand{File::Temp, mids[k]};
        blk.code.push_back(i);
      }
    }
  }

  const std::vector<uint32_t>& words_;
  std::string name_;
  std::vector<std::string> dis_;
  std::vector<Inst> insts_;
  Program p_;
  std::map<uint32_t, Type> types_;
  std::map<uint32_t, Value> values_;
  std::map<uint32_t, Variable> vars_;
  std::map<uint32_t, std::string> names_;
  std::map<std::pair<uint32_t, uint32_t>, std::string> memberNames_;
  std::map<uint32_t, uint32_t> location_, binding_, builtin_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> memberBuiltin_;
  std::map<uint32_t, int> uses_;
  std::map<uint32_t, int> labels_;
  std::vector<Phi> phis_;
  uint32_t glsl_ = 0;
  int entries_ = 0, functions_ = 0, cur_ = 0;
  uint16_t next_ = 0;
};

}  // namespace

std::vector<uint32_t> spirvWords(const std::string& bytes, const std::string& name) {
  if (bytes.size() % 4 != 0 || bytes.size() < 20)
    throw InputError(fmt::format("{}: not a SPIR-V module ({} bytes)", name, bytes.size()));
  std::vector<uint32_t> w(bytes.size() / 4);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = uint32_t(uint8_t(bytes[4 * i])) | uint32_t(uint8_t(bytes[4 * i + 1])) << 8 |
           uint32_t(uint8_t(bytes[4 * i + 2])) << 16 | uint32_t(uint8_t(bytes[4 * i + 3])) << 24;
  if (w[0] != spv::MagicNumber)
    throw InputError(fmt::format("{}: not a SPIR-V module (bad magic number)", name));
  return w;
}

Program lowerSpirv(const std::vector<uint32_t>& words, const std::string& name) {
  return Lowering(words, name).run();
}

}  // namespace gpusc::shader
