// The PTX front end: each construct nvcc 13 emits, and error messages that name the position.
#include <cstring>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "ptx/parser.hpp"
#include "support/ptx_harness.hpp"

using namespace gpusc;
using namespace gpusc::ptx;

namespace {

std::unique_ptr<ptx::Module> parse(const std::string& body) {
  return parseModule(test::module(body), "t.ptx");
}

// The message of the InputError `f` throws.
template <class F>
std::string errorOf(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// Decoding happens when a kernel is first requested.
std::string decodeError(const std::string& body, const std::string& entry = "k") {
  return errorOf([&] {
    Device dev(test::platform());
    dev.loadModule(test::module(body), "t.ptx").kernel(entry);
  });
}

TEST(Parser, ModuleDirectives) {
  auto m = parse("");
  EXPECT_EQ(m->version, "9.0");
  EXPECT_EQ(m->target, "sm_75");
  EXPECT_EQ(m->addressSize, 64u);
}

TEST(Parser, GlobalAndConstVariablesWithInitialisers) {
  auto m = parse(R"(
.global .align 4 .b8 table[6] = {1, 2, 3};
.const .align 8 .f64 coeffs[2] = {0d3FF0000000000000, 2.5};
.global .u32 scalar = 7;
.global .align 4 .f32 arr[] = {0f3F800000, 1.5};
.extern .shared .align 16 .b8 dyn[];
)");
  const Variable* t = m->findGlobal("table");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->space, StateSpace::Global);
  EXPECT_EQ(t->align, 4u);
  EXPECT_EQ(t->init, (std::vector<uint8_t>{1, 2, 3, 0, 0, 0}));
  const Variable* c = m->findGlobal("coeffs");
  double d[2];
  std::memcpy(d, c->init.data(), 16);
  EXPECT_EQ(d[0], 1.0);
  EXPECT_EQ(d[1], 2.5);
  EXPECT_EQ(m->findGlobal("scalar")->init, (std::vector<uint8_t>{7, 0, 0, 0}));
  const Variable* a = m->findGlobal("arr");
  EXPECT_EQ(a->dims, (std::vector<uint64_t>{2}));  // unsized array takes its initialiser's size
  float f[2];
  std::memcpy(f, a->init.data(), 8);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], 1.5f);
  EXPECT_TRUE(m->findGlobal("dyn")->isExtern);
}

TEST(Parser, EntryAndFunctionSignatures) {
  auto m = parse(R"(
.func (.param .b32 rv) helper(.param .b32 x, .param .align 8 .b8 s[16]) { ret; }
.visible .entry k(.param .u64 .ptr .global .align 4 out, .param .u32 n) .maxntid 256, 1, 1 .minnctapersm 2
{
  ret;
}
)");
  const Function* h = m->findFunction("helper");
  ASSERT_NE(h, nullptr);
  EXPECT_FALSE(h->isEntry);
  ASSERT_EQ(h->returns.size(), 1u);
  ASSERT_EQ(h->params.size(), 2u);
  EXPECT_EQ(h->params[1]->sizeBytes(), 16u);
  EXPECT_EQ(h->params[1]->align, 8u);
  const Function* k = m->findFunction("k");
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->isEntry);
  EXPECT_TRUE(k->params[0]->isPtrParam);
  EXPECT_EQ(k->params[0]->type, Type::U64);
  EXPECT_EQ(k->maxntid[0], 256u);
  EXPECT_EQ(k->minnctapersm, 2u);
  // After .ptr, .align is the pointed-to memory's: the parameter keeps its natural alignment
  // (nvcc 13 writes `.ptr .align 1` for sm_100 and later, after a .u32 parameter here).
  EXPECT_EQ(k->params[0]->pointeeAlign, 4u);
  EXPECT_EQ(k->params[0]->alignment(), 8u);
  auto m100 = parse(".visible .entry f(.param .u32 n, .param .u64 .ptr .align 1 out) { ret; }");
  const Function* f = m100->findFunction("f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->params[1]->alignment(), 8u);
  EXPECT_EQ(f->params[1]->pointeeAlign, 1u);
}

TEST(Parser, APrototypeAfterTheDefinitionFindsTheDefinition) {
  // As in linked files' PTX: one file defines f, a later one declares it.
  const char* f = ".visible .func (.param .b32 r) f(.param .b32 x)";
  auto m = parse(std::string(f) + "\n{\n  ret;\n}\n" + f + ";\n" + f + ";\n");
  const Function* found = m->findFunction("f");
  ASSERT_NE(found, nullptr);
  EXPECT_FALSE(found->isExtern);
}

TEST(Parser, BodyConstructs) {
  auto m = parse(R"(
.visible .entry k(.param .u64 p)
{
  .reg .pred %p<3>;
  .reg .b32 %r<60>;
  .reg .b64 %rd<4>;
  .local .align 8 .b8 __local_depot0[32];
  .shared .align 4 .b8 tile[1024];
  .loc 1 12 5
  .pragma "nounroll";
  ld.param.u64 %rd1, [p];
  @!%p1 bra $L__BB0_2;
  ld.global.v4.u32 {%r1, %r2, _, %r3}, [%rd1+-16];
  shfl.sync.down.b32 %r4|%p2, %r1, 1, 31, -1;
  setp.ne.and.s32 %p1, %r59, 0, !%p2;
$L__BB0_2:
  {
  .reg .b32 temp;
  mov.u32 temp, %tid.x;
  }
  ret;
}
)");
  const Function* k = m->findFunction("k");
  ASSERT_NE(k, nullptr);
  // %r<60> declares %r0 .. %r59
  int regs = 0;
  for (const auto& v : k->locals)
    regs += v->name.rfind("%r", 0) == 0 && v->name.size() > 2 && std::isdigit(v->name[2]);
  EXPECT_EQ(regs, 60);
  std::vector<const Instruction*> ins;
  std::vector<std::string> labels;
  for (const auto& s : k->body) {
    if (s.kind == Statement::Kind::Instr)
      ins.push_back(&s.instr);
    else
      labels.push_back(s.label);
  }
  ASSERT_EQ(ins.size(), 7u);
  EXPECT_EQ(labels, (std::vector<std::string>{"$L__BB0_2"}));
  EXPECT_TRUE(ins[1]->guardNegated);
  EXPECT_EQ(ins[2]->mods, (std::vector<std::string>{".global", ".v4", ".u32"}));
  EXPECT_EQ(ins[2]->ops[0].kind, Operand::Kind::Vector);
  EXPECT_EQ(ins[2]->ops[0].elems[2].kind, Operand::Kind::Sink);
  EXPECT_EQ(ins[2]->ops[1].imm, -16);
  EXPECT_TRUE(ins[3]->ops[0].pipePair);
  EXPECT_TRUE(ins[4]->ops[3].negate);
  EXPECT_EQ(ins[5]->ops[1].kind, Operand::Kind::SReg);
  EXPECT_EQ(ins[5]->ops[1].sreg, SReg::TidX);
  EXPECT_EQ(ins[2]->loc.line, 17u);
  EXPECT_EQ(ins[2]->loc.col, 3u);
}

// Integer constant expressions (PTX ISA, "Constant Expressions") as immediates and address
// offsets, with C's precedence; unsigned when a literal needs 64 bits.
TEST(Parser, ConstantExpressionsInOperands) {
  auto m = parse(R"(
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, 4+4*2;
  mov.u32 %r1, (4+4)*2;
  mov.u32 %r1, 0x3210 ^ 0x1111 | 1 << 3;
  mov.u32 %r1, ~7 & 0xff;
  mov.u32 %r1, -8+16 - (10 % 4) / 2;
  mov.u32 %r1, 3 > 2 && 2 >= 2 ? 100 : 200;
  mov.b64 %rd1, 0xFFFFFFFFFFFFFFF0 >> 4;
  mov.b64 %rd1, -32 >> 4;
  ld.global.u32 %r2, [%rd1+2*16-4];
  ld.global.u32 %r2, [%rd1-8+4];
  ld.global.u32 %r2, [(1<<4)];
  ret;
}
)");
  const Function* k = m->findFunction("k");
  ASSERT_NE(k, nullptr);
  std::vector<int64_t> imm;
  for (const auto& s : k->body)
    if (s.kind == Statement::Kind::Instr && s.instr.ops.size() == 2)
      imm.push_back(s.instr.ops[1].imm);
  EXPECT_EQ(imm, (std::vector<int64_t>{12, 16, 0x2309, 0xf8, 7, 100, 0x0FFFFFFFFFFFFFFF, -2, 28, -4,
                                       16}));
  EXPECT_NE(errorOf([] {
              parse(".visible .entry k() { .reg .b32 %r1; mov.u32 %r1, 4/(2-2); ret; }");
            }).find("division by zero"),
            std::string::npos);
}

TEST(Parser, CallSequence) {
  auto m = parse(R"(
.func (.param .b32 rv) f(.param .b32 x) { ret; }
.visible .entry k()
{
  .reg .b32 %r<2>;
  {
  .param .b32 param0;
  st.param.b32 [param0+0], %r1;
  .param .b32 retval0;
  call.uni (retval0), f, (param0);
  ld.param.b32 %r0, [retval0+0];
  }
  ret;
}
)");
  const Function* k = m->findFunction("k");
  const Instruction* call = nullptr;
  for (const auto& s : k->body)
    if (s.kind == Statement::Kind::Instr && s.instr.opcode == "call") call = &s.instr;
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->callee, "f");
  ASSERT_EQ(call->callRets.size(), 1u);
  ASSERT_EQ(call->callArgs.size(), 1u);
  EXPECT_EQ(call->callArgs[0].name, "param0");
}

TEST(ParserErrors, UndeclaredRegisterNamesThePosition) {
  std::string e = errorOf(
      [] { parse(".visible .entry k()\n{\n  .reg .b32 %r<2>;\n  mov.u32 %r1, %r7;\n}\n"); });
  EXPECT_EQ(e, "t.ptx:8:16: error: '%r7' is not a declared register");
}

TEST(ParserErrors, AVariableDefinedTwice) {
  std::string e = errorOf([] {
    parse(".global .align 1 .b8 $str[2] = {65, 0};\n.global .align 1 .b8 $str[2] = {66, 0};\n");
  });
  EXPECT_EQ(e, "t.ptx:6:1: error: module-level variable '$str' is defined twice (first at line 5)");
}

// An initialised variable is held whole (zeros after the values given): one larger than the
// host's address space is the variable's error, not the host's (it was std::bad_alloc).
TEST(ParserErrors, AnInitialisedVariableTheHostCannotHold) {
  EXPECT_EQ(errorOf([] { parse(".global .u32 g[1152921504606846976] = {1, 2, 3};\n"); }),
            "t.ptx:5:48: error: 'g' is initialised and takes 4611686018427387904 bytes, more than "
            "the host can hold");
}

// What ptxas refuses at module level: an alignment that is not a power of two (or too large to
// be one gpusc keeps), a second .version, and two definitions of one function unless .weak (nvcc
// emits an inline function .weak in every unit that uses it; gpusc's linker keeps one).
TEST(ParserErrors, AlignmentsVersionsAndFunctionsDefinedTwice) {
  EXPECT_EQ(errorOf([] { parse(".shared .align 3 .b8 s[16];\n"); }),
            "t.ptx:5:16: error: .align 3: expected a power of two up to 2^31 bytes");
  EXPECT_EQ(errorOf([] { parse(".shared .align 4294967296 .b8 s[16];\n"); }),
            "t.ptx:5:16: error: .align 4294967296: expected a power of two up to 2^31 bytes");
  EXPECT_EQ(
      errorOf([] { parse(".visible .entry k()\n{\n  .local .align 0 .b8 d[8];\n  ret;\n}\n"); }),
      "t.ptx:7:17: error: .align 0: expected a power of two up to 2^31 bytes");
  EXPECT_NO_THROW(parse(".shared .align 2147483648 .b8 s[16];\n"));
  EXPECT_EQ(errorOf([] { parseModule(".version 9.0\n.version 8.0\n.target sm_80\n", "t.ptx"); }),
            "t.ptx:2:1: error: a second .version (the first at line 1): a module has one");
  EXPECT_EQ(errorOf([] {
              parse(".visible .entry k()\n{\n  ret;\n}\n.visible .entry k()\n{\n  ret;\n}\n");
            }),
            "t.ptx:9:10: error: 'k' is defined twice (first at line 5)");
  EXPECT_EQ(errorOf([] { parse(".func f()\n{\n  ret;\n}\n.visible .entry f()\n{\n  ret;\n}\n"); }),
            "t.ptx:9:10: error: 'f' is defined twice (first at line 5)");
  // A prototype and its definition, and .weak copies, are one function.
  EXPECT_NO_THROW(parse(".extern .func f();\n.func f()\n{\n  ret;\n}\n"));
  EXPECT_NO_THROW(parse(".weak .func f()\n{\n  ret;\n}\n.weak .func f()\n{\n  ret;\n}\n"));
  EXPECT_NO_THROW(parse(".weak .func f()\n{\n  ret;\n}\n.func f()\n{\n  ret;\n}\n"));
}

TEST(ParserErrors, ARegisterDeclaredTwiceInOneScope) {
  // nvcc declares each register prefix once per function; ptxas refuses a second definition.
  EXPECT_EQ(errorOf([] {
              parse(".visible .entry k()\n{\n  .reg .b32 %r<3>;\n  .reg .b32 %r<2>;\n  ret;\n}\n");
            }),
            "t.ptx:8:3: error: '%r0' is declared twice in one scope (first at line 7)");
  // A parameter and a register of one name are one scope too.
  EXPECT_NE(errorOf([] {
              parse(".visible .entry k(.param .u64 p)\n{\n  .reg .b64 p;\n  ret;\n}\n");
            }).find("'p' is declared twice in one scope (first at line 5)"),
            std::string::npos);
  // An inner block (inline asm's braces) may declare a name of its own.
  EXPECT_NO_THROW(
      parse(".visible .entry k()\n{\n  .reg .pred p;\n  {\n  .reg .pred p;\n  }\n  ret;\n}\n"));
}

TEST(ParserErrors, VersionsAndTargetsGpuscDoesNotKnow) {
  const auto header = [](const std::string& version, const std::string& target) {
    return parseModule(".version " + version + "\n.target " + target +
                           "\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n",
                       "t.ptx");
  };
  EXPECT_EQ(errorOf([&] { header("99.0", "sm_75"); }),
            "t.ptx:1:10: error: .version 99.0: PTX ISA 99.0 is newer than the 9.x gpusc reads");
  EXPECT_EQ(errorOf([&] { header("nine", "sm_75"); }),
            "t.ptx:1:10: error: .version: expected MAJOR.MINOR (as in .version 9.0) but found "
            "'nine'");
  EXPECT_NE(errorOf([&] {
              header("9.0", "sm_9999");
            }).find("t.ptx:2:9: error: .target: unknown target 'sm_9999'"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              header("9.0", "sm_86, gpu");
            }).find("t.ptx:2:16: error: .target: unknown target 'gpu'"),
            std::string::npos);
  // What nvcc 12 and 13 write, with suffixes and options; an older version of the ISA.
  for (const char* t : {"sm_86", "sm_90a", "sm_100f", "compute_89", "sm_120a",
                        "sm_61, texmode_independent", "sm_75, debug"})
    EXPECT_NO_THROW(header("8.5", t)) << t;
  EXPECT_NO_THROW(header("9.1", "sm_121"));
}

TEST(ParserErrors, MissingSemicolon) {
  std::string e = errorOf([] { parse(".visible .entry k()\n{\n  ret\n}\n"); });
  EXPECT_EQ(e, "t.ptx:8:1: error: expected ';' after the instruction but found '}'");
}

TEST(ParserErrors, MalformedFloatLiteral) {
  std::string e = errorOf(
      [] { parse(".visible .entry k()\n{\n  .reg .f32 %f1;\n  mov.f32 %f1, 0f3F80;\n}\n"); });
  EXPECT_EQ(e, "t.ptx:8:16: error: single-precision floating-point literal needs 8 hex digits");
}

TEST(ParserErrors, UnterminatedFunction) {
  std::string e = errorOf([] { parse(".visible .entry k()\n{\n  ret;\n"); });
  EXPECT_NE(e.find("unterminated function body of 'k'"), std::string::npos) << e;
}

TEST(ParserErrors, UnknownDirective) {
  std::string e = errorOf([] { parse(".visible .entry k()\n{\n  .frobnicate 3;\n}\n"); });
  EXPECT_EQ(e, "unsupported PTX at t.ptx:7:3: .frobnicate 3;");
}

TEST(DecodeErrors, UnsupportedInstructionNamesFileLineAndText) {
  std::string e =
      decodeError(".visible .entry k()\n{\n  .reg .b32 %r<3>;\n  frob.u32 %r1, %r2;\n  ret;\n}\n");
  EXPECT_EQ(e, "unsupported PTX at t.ptx:8:3: frob.u32 %r1, %r2;");
}

TEST(DecodeErrors, UnsupportedModifier) {
  std::string e = decodeError(
      ".visible .entry k()\n{\n  .reg .b32 %r<3>;\n  add.rn.s32 %r1, %r1, %r2;\n  ret;\n}\n");
  EXPECT_EQ(e, "unsupported PTX at t.ptx:8:3: add.rn.s32 %r1, %r1, %r2;");
}

TEST(DecodeErrors, ExternalFunctionCall) {
  std::string e = decodeError(R"(
.extern .func (.param .b64 rv) mystery(.param .b64 size);
.visible .entry k()
{
  .reg .b32 %r<2>;
  {
  .param .b64 p0;
  .param .b64 r0;
  call.uni (r0), mystery, (p0);
  }
  ret;
}
)");
  // malloc, free and vprintf are the CUDA runtime's; other functions need a body.
  EXPECT_NE(e.find("unsupported PTX at t.ptx:13:3: call.uni (r0), mystery, (p0); ('mystery' "
                   "has no body"),
            std::string::npos)
      << e;
}

TEST(DecodeErrors, ALocalOfARecursiveFunctionTakenOtherThanByMovIsReported) {
  // Its address differs from activation to activation: gpusc computes it for mov and for memory
  // operands, and refuses it elsewhere by name.
  std::string e = decodeError(R"(
.func f()
{
  .local .align 4 .b8 depot[8];
  .reg .b64 %a;
  cvta.local.u64 %a, depot;
  call.uni f, ();
  ret;
}
.visible .entry k() { call.uni f, (); ret; }
)");
  EXPECT_NE(e.find("the address of 'depot', a local variable of the recursive function 'f', is "
                   "taken here"),
            std::string::npos)
      << e;  // A generic access naming it would take its frame offset for a generic address.
  e = decodeError(R"(
.func f()
{
  .local .align 4 .b8 depot[8];
  .reg .b32 %v;
  ld.u32 %v, [depot];
  call.uni f, ();
  ret;
}
.visible .entry k() { call.uni f, (); ret; }
)");
  EXPECT_NE(e.find("'depot', a local variable of the recursive function 'f', is addressed here "
                   "other than by a .local access"),
            std::string::npos)
      << e;
}

TEST(DecodeErrors, UndefinedLabel) {
  std::string e = decodeError(".visible .entry k()\n{\n  bra.uni NOWHERE;\n}\n");
  EXPECT_EQ(e, "t.ptx:7:3: error: branch to undefined label 'NOWHERE'");
}

TEST(DecodeErrors, MissingEntryListsTheEntries) {
  std::string e = decodeError(".visible .entry kernel_a() { ret; }\n", "kernel_b");
  EXPECT_EQ(e, "t.ptx: no kernel entry 'kernel_b' (did you mean 'kernel_a'?) (entries: kernel_a)");
}

}  // namespace

// Found by the PTX fuzz target: a huge register range took minutes and gigabytes before.
TEST(Parser, AHugeRegisterRangeIsAnError) {
  EXPECT_EQ(errorOf([] { parse(".visible .entry k() { .reg .b32 %r<2000000000>; ret; }"); }),
            "t.ptx:5:36: error: register range %r<2000000000> exceeds the supported 65536 "
            "registers");
  EXPECT_EQ(parse(".visible .entry k() { .reg .b32 %r<65536>; ret; }")->functions[0]->locals.size(),
            65536u);
}

// Found by the run fuzz target: sizes past the limits are errors, not std::bad_alloc, minutes of
// allocation or a size that wraps around.
TEST(Decoder, LocalMemoryPastTheThreadsLimitIsAnError) {
  EXPECT_EQ(decodeError(".visible .entry k() { .local .b8 x[4000000000]; ret; }"),
            "t.ptx:5:34: error: local variable 'x' ends past the 512 KiB of local memory a "
            "thread has");
  EXPECT_EQ(decodeError(".visible .entry k() { .local .b8 x[524288]; ret; }"), "(no error)");
  EXPECT_NE(decodeError(".visible .entry k() { .local .b8 x[524288]; .local .b8 y[1]; ret; }"),
            "(no error)");
}

TEST(Decoder, SharedMemoryPast4GiBIsAnError) {
  EXPECT_EQ(decodeError(".visible .entry k() { .shared .b8 s[4294967312]; ret; }"),
            "t.ptx:5:35: error: shared variable 's' ends past 4 GiB of shared memory");
}

TEST(Parser, AnArrayLargerThanTheAddressSpaceIsAnError) {
  EXPECT_EQ(errorOf([] { parse(".global .b32 g[4294967296][4294967296];"); }),
            "t.ptx:5:14: error: array 'g' is larger than the address space");
}

// Found by the run fuzz target: literals past their range are input errors (a hexadecimal one
// escaped as std::out_of_range).
TEST(Lexer, LiteralsPastTheirRangeAreErrors) {
  EXPECT_EQ(errorOf([] { parse(".global .u64 g = 0x10000000000000000;"); }),
            "t.ptx:5:18: error: integer literal out of range: 0x10000000000000000");
  EXPECT_EQ(errorOf([] { parse(".global .u64 g = 0b" + std::string(65, '1') + ";"); }),
            "t.ptx:5:18: error: integer literal out of range: 0b" + std::string(65, '1'));
  EXPECT_EQ(errorOf([] { parse(".global .f64 g = 1e999;"); }),
            "t.ptx:5:18: error: floating-point literal out of range: 1e999");
  EXPECT_EQ(errorOf([] { parse(".global .u64 g = 0xffffffffffffffff;"); }), "(no error)");
}

// The registers ptxas allocated, as the catalog's PTX and gpusc exec's fat binaries record them.
// A template kernel's mangled name runs to thousands of characters (Thrust's and CUB's do); a
// record that is not "<kernel> uses <n> registers" is an error naming the line.
TEST(AllocatedRegisters, KernelNamesOfAnyLength) {
  const std::string longName = "_ZN3cub6detail" + std::string(3000, 'x') + "E";
  const auto regs = allocatedRegisters(
      "//\n// ptxas -arch=sm_75: short uses 40 registers\n"
      "// ptxas -arch=sm_75: " +
          longName + " uses 168 registers\n.version 9.0\n",
      "t.ptx");
  ASSERT_EQ(regs.size(), 2u);
  EXPECT_EQ(regs.at("short"), 40u);
  EXPECT_EQ(regs.at(longName), 168u);
  for (const char* bad :
       {"// ptxas -arch=sm_75: k uses many registers", "// ptxas -arch=sm_75:  uses 8 registers",
        "// ptxas -arch=sm_75: a b uses 8 registers", "// ptxas -arch=sm_75: k uses 8 regs"}) {
    EXPECT_EQ(errorOf([&] { allocatedRegisters(std::string("\n\n") + bad + "\n", "t.ptx"); }),
              "t.ptx:3: error: expected '// ptxas <options>: <kernel> uses <n> registers'")
        << bad;
  }
}

// CUDA's __managed__ variables: `.attribute(.managed)` on a .global. A module loaded with the
// variable placed (in memory allocated before it, as gpusc exec's managed memory) keeps it there
// and writes its initial value there; a placement that does not fit, or names no .global, is an
// error naming the module.
TEST(Parser, ManagedVariablesAndTheirPlacement) {
  const std::string body = R"(
.global .attribute(.managed) .align 4 .u32 counter = 5;
.global .align 4 .u32 plain;
)";
  auto m = parse(body);
  EXPECT_TRUE(m->findGlobal("counter")->isManaged);
  EXPECT_FALSE(m->findGlobal("plain")->isManaged);
  EXPECT_EQ(errorOf([] { parse(".shared .attribute(.managed) .u32 s;"); }),
            "t.ptx:5:9: error: .attribute(.managed) applies to .global only");
  EXPECT_EQ(errorOf([] { parse(".global .attribute(.unified(1, 2)) .u32 u;"); }).substr(0, 37),
            "t.ptx:5:20: error: variable attribute");

  Device dev(test::platform());
  const DevPtr placed = dev.malloc(64);
  gpusc::Module& mod = dev.loadModule(test::module(body), "m.ptx", {{"counter", {placed, 4}}});
  EXPECT_EQ(mod.symbolAddress("counter"), placed);
  EXPECT_NE(mod.symbolAddress("plain"), placed);
  EXPECT_EQ(dev.download<uint32_t>(placed, 1)[0], 5u);
  EXPECT_EQ(errorOf([&] {
              dev.loadModule(test::module(body), "m.ptx", {{"counter", {placed, 2}}});
            }),
            "m.ptx: .global 'counter' is 4 bytes; 2 were allocated for it");
  EXPECT_NE(errorOf([&] {
              dev.loadModule(test::module(body), "m.ptx", {{"other", {placed, 4}}});
            }).find("m.ptx: no .global 'other'"),
            std::string::npos);
}
