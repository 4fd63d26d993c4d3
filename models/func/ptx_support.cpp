#include "func/ptx_support.hpp"

#include <unordered_set>

#include <fmt/format.h>

#include "common/strings.hpp"

namespace gpusc::func {

namespace {

constexpr std::string_view kIntTypes = ".u16 .s16 .u32 .s32 .u64 .s64 .b16 .b32 .b64";
constexpr std::string_view kAllTypes =
    ".b8 .b16 .b32 .b64 .u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64";

std::vector<PtxOpcodeInfo> buildTable() {
  const std::string_view ints = kIntTypes;
  const std::string_view all = kAllTypes;
  return {
      // ---- arithmetic on integers and floating point; integer-only arithmetic ----
      {"Arithmetic", "add", ".cc .sat .rn .rz .rm .rp .ftz",
       ".u16 .s16 .u32 .s32 .u64 .s64 .b16 .b32 .b64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Arithmetic", "sub", ".cc .sat .rn .rz .rm .rp .ftz",
       ".u16 .s16 .u32 .s32 .u64 .s64 .b16 .b32 .b64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Integer", "addc", ".cc", ".u32 .s32 .u64 .s64 .b32 .b64"},
      {"Integer", "subc", ".cc", ".u32 .s32 .u64 .s64 .b32 .b64"},
      {"Arithmetic", "mul", ".lo .hi .wide .rn .rz .rm .rp .ftz .sat",
       ".u16 .s16 .u32 .s32 .u64 .s64 .b16 .b32 .b64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Arithmetic", "mad", ".lo .hi .wide .cc .rn .rz .rm .rp .ftz .sat",
       ".u16 .s16 .u32 .s32 .u64 .s64 .b16 .b32 .b64 .f32 .f64"},
      {"Integer", "madc", ".lo .hi .cc", ".u32 .s32 .u64 .s64 .b32 .b64"},
      {"Integer", "mul24", ".lo .hi", ".u32 .s32"},
      {"Integer", "mad24", ".lo .hi .sat", ".u32 .s32"},
      {"Integer", "sad", "", ints},
      {"Arithmetic", "div", ".approx .full .rn .rz .rm .rp .ftz .sat",
       ".u16 .s16 .u32 .s32 .u64 .s64 .b16 .b32 .b64 .f32 .f64"},
      {"Integer", "rem", "", ints},
      {"Arithmetic", "abs", ".ftz", ".s16 .s32 .s64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Arithmetic", "neg", ".ftz", ".s16 .s32 .s64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Arithmetic", "min", ".relu .u16x2 .s16x2 .NaN .xorsign .abs .ftz",
       ".u16 .s16 .u32 .s32 .u64 .s64 .b16 .b32 .b64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Arithmetic", "max", ".relu .u16x2 .s16x2 .NaN .xorsign .abs .ftz",
       ".u16 .s16 .u32 .s32 .u64 .s64 .b16 .b32 .b64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Integer", "dp4a", "", ".u32 .s32"},
      {"Integer", "dp2a", ".lo .hi", ".u32 .s32"},
      // ---- bits ----
      {"Bits", "and", "", ".pred .b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64"},
      {"Bits", "or", "", ".pred .b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64"},
      {"Bits", "xor", "", ".pred .b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64"},
      {"Bits", "not", "", ".pred .b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64"},
      {"Bits", "cnot", "", ".b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64"},
      {"Bits", "shl", "", ".b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64"},
      {"Bits", "shr", "", ".b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64"},
      {"Bits", "popc", "", ".b32 .b64"},
      {"Bits", "clz", "", ".b32 .b64"},
      {"Bits", "brev", "", ".b32 .b64"},
      {"Bits", "bfe", "", ".u32 .s32 .u64 .s64"},
      {"Bits", "bfi", "", ".b32 .b64"},
      {"Bits", "bfind", ".shiftamt", ".u32 .s32 .u64 .s64"},
      {"Bits", "fns", "", ".b32"},
      {"Bits", "szext", ".clamp .wrap", ".u32 .s32"},
      {"Bits", "bmsk", ".clamp .wrap", ".b32"},
      {"Bits", "prmt", ".f4e .b4e .rc8 .ecl .ecr .rc16", ".b32"},
      {"Bits", "lop3", "", ".b32"},
      {"Bits", "shf", ".l .r .wrap .clamp", ".b32"},
      // ---- floating point ----
      {"Floating point", "fma", ".rn .rz .rm .rp .ftz .sat .relu",
       ".f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Floating point", "copysign", "", ".f32 .f64"},
      {"Floating point", "sqrt", ".approx .rn .rz .rm .rp .ftz", ".f32 .f64"},
      {"Floating point", "rcp", ".approx .rn .rz .rm .rp .ftz", ".f32 .f64"},
      {"Floating point", "rsqrt", ".approx .ftz", ".f32 .f64"},
      {"Floating point", "lg2", ".approx .ftz", ".f32"},
      {"Floating point", "sin", ".approx .ftz", ".f32"},
      {"Floating point", "cos", ".approx .ftz", ".f32"},
      {"Floating point", "ex2", ".approx .ftz", ".f16 .f16x2 .bf16 .bf16x2 .f32"},
      {"Floating point", "tanh", ".approx", ".f16 .f16x2 .bf16 .bf16x2 .f32"},
      {"Floating point", "testp", ".finite .infinite .number .notanumber .normal .subnormal",
       ".f32 .f64"},
      // ---- compare and select ----
      {"Compare, select", "setp",
       ".eq .ne .lt .le .gt .ge .lo .ls .hi .hs .equ .neu .ltu .leu .gtu .geu .num .nan .and .or "
       ".xor .ftz",
       ".b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Compare, select", "set",
       ".eq .ne .lt .le .gt .ge .lo .ls .hi .hs .equ .neu .ltu .leu .gtu .geu .num .nan .and .or "
       ".xor .ftz",
       ".b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Compare, select", "selp", "", all},
      {"Compare, select", "slct", ".ftz", ".b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64 .f32 .f64"},
      // ---- conversion and movement ----
      {"Convert, move", "mov", "",
       ".pred .b8 .b16 .b32 .b64 .u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64 "
       ".f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Convert, move", "cvt",
       ".rn .rz .rm .rp .rni .rzi .rmi .rpi .rna .ftz .sat .relu .satfinite .pack",
       ".u2 .s2 .u4 .s4 .u8 .u16 .u32 .u64 .s8 .s16 .s32 .s64 .b32 .f16 .f16x2 .bf16 .bf16x2 "
       ".tf32 .f32 .f64 .e4m3x2 .e5m2x2 .e2m3x2 .e3m2x2 .e2m1x2"},
      {"Convert, move", "cvta",
       ".to .global .shared .shared::cta .shared::cluster .local .const .param", ".u32 .u64"},
      {"Convert, move", "isspacep",
       ".global .shared .shared::cta .shared::cluster .local .const .param", ""},
      // ---- memory ----
      {"Memory", "ld",
       ".global .shared .shared::cta .shared::cluster .local .const .param .param::func "
       ".param::entry .nc .v2 .v4 hints",
       all},
      {"Memory", "ldu", ".global .v2 .v4 hints", all},
      {"Memory", "tex", ".1d .2d .3d .a1d .a2d .v4", ".f32 .s32 .u32"},
      {"Memory", "suld", ".b .1d .2d .3d .a1d .a2d .v2 .v4 .trap .clamp .zero .ca .cg .cs .cv",
       ".b8 .b16 .b32 .b64"},
      {"Memory", "sust", ".b .1d .2d .3d .a1d .a2d .v2 .v4 .trap .clamp .zero .wb .cg .cs .wt",
       ".b8 .b16 .b32 .b64"},
      {"Memory", "st",
       ".global .shared .shared::cta .shared::cluster .local .param .param::func .v2 .v4 hints",
       all},
      {"Memory", "atom",
       ".global .shared .shared::cta .shared::cluster .add .min .max .inc .dec .exch .cas .and "
       ".or .xor .noftz "
       "hints",
       ".b16 .b32 .b64 .u32 .u64 .s32 .s64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Memory", "red",
       ".global .shared .shared::cta .shared::cluster .add .min .max .inc .dec .exch .cas .and "
       ".or .xor .noftz "
       "hints",
       ".b32 .b64 .u32 .u64 .s32 .s64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64"},
      {"Memory", "cp",
       ".async .ca .cg .shared .shared::cta .global .commit_group .wait_group "
       ".wait_all .mbarrier .arrive .noinc .bulk .shared::cluster .mbarrier::complete_tx::bytes "
       ".bulk_group .read .prefetch .L2 .reduce .and .or .xor .add .inc .dec .min .max .noftz "
       "hints",
       ".b32 .u32 .s32 .b64 .u64 .s64 .f16 .bf16 .f32 .f64"},
      {"Memory", "mbarrier",
       ".init .inval .arrive .arrive_drop .expect_tx .complete_tx .noComplete .test_wait "
       ".try_wait .parity .pending_count .shared .shared::cta .shared::cluster hints",
       ".b64"},
      {"Memory", "prefetch", ".global .local .L1 .L2 hints", ""},
      {"Memory", "prefetchu", ".L1 hints", ""},
      {"Memory", "createpolicy",
       ".fractional .range .cvt .global .L2 .L2::evict_last .L2::evict_normal .L2::evict_first "
       ".L2::evict_unchanged",
       ".b64"},
      {"Memory", "applypriority", ".global .L2::evict_normal", ""},
      {"Memory", "discard", ".global .L2", ""},
      {"Memory", "alloca", "", ".u32 .u64"},
      {"Memory", "stacksave", "", ".u32 .u64"},
      {"Memory", "stackrestore", "", ".u32 .u64"},
      {"Memory", "getctarank", ".shared::cluster", ".u32 .u64"},
      {"Memory", "mapa", ".shared::cluster", ".u32 .u64"},
      {"Memory", "membar", ".gl hints", ""},
      {"Memory", "fence",
       ".proxy .alias .async .async::generic .mbarrier_init .shared::cta .shared::cluster .global "
       ".sync_restrict::shared::cta .sync_restrict::shared::cluster hints",
       ""},
      // ---- video (SIMD within a register) ----
      {"Video", "vadd", ".sat .add .min .max", ".u32 .s32"},
      {"Video", "vsub", ".sat .add .min .max", ".u32 .s32"},
      {"Video", "vabsdiff", ".sat .add .min .max", ".u32 .s32"},
      {"Video", "vmin", ".sat .add .min .max", ".u32 .s32"},
      {"Video", "vmax", ".sat .add .min .max", ".u32 .s32"},
      {"Video", "vshl", ".sat .clamp .wrap .add .min .max", ".u32 .s32"},
      {"Video", "vshr", ".sat .clamp .wrap .add .min .max", ".u32 .s32"},
      {"Video", "vmad", ".sat .po .shr7 .shr15", ".u32 .s32"},
      {"Video", "vset", ".eq .ne .lt .le .gt .ge .add .min .max", ".u32 .s32"},
      {"Video", "vadd2", ".sat .add", ".u32 .s32"},
      {"Video", "vsub2", ".sat .add", ".u32 .s32"},
      {"Video", "vavrg2", ".sat .add", ".u32 .s32"},
      {"Video", "vabsdiff2", ".sat .add", ".u32 .s32"},
      {"Video", "vmin2", ".sat .add", ".u32 .s32"},
      {"Video", "vmax2", ".sat .add", ".u32 .s32"},
      {"Video", "vset2", ".eq .ne .lt .le .gt .ge .add", ".u32 .s32"},
      {"Video", "vadd4", ".sat .add", ".u32 .s32"},
      {"Video", "vsub4", ".sat .add", ".u32 .s32"},
      {"Video", "vavrg4", ".sat .add", ".u32 .s32"},
      {"Video", "vabsdiff4", ".sat .add", ".u32 .s32"},
      {"Video", "vmin4", ".sat .add", ".u32 .s32"},
      {"Video", "vmax4", ".sat .add", ".u32 .s32"},
      {"Video", "vset4", ".eq .ne .lt .le .gt .ge .add", ".u32 .s32"},
      // ---- warp ----
      {"Warp", "mma",
       ".sync .aligned .m8n8k4 .m8n8k16 .m8n8k32 .m8n8k128 .m16n8k4 .m16n8k8 .m16n8k16 .m16n8k32 "
       ".m16n8k64 .m16n8k128 .m16n8k256 .row .col .satfinite .xor .and .popc",
       ".f16 .bf16 .tf32 .e4m3 .e5m2 .s8 .u8 .s4 .u4 .b1 .f32 .s32 .f64"},
      {"Warp", "wmma",
       ".load .store .mma .a .b .c .d .sync .aligned .row .col .m16n16k16 .m32n8k16 .m8n32k16 "
       ".m16n16k8 .m8n8k4 .m8n8k32 .m8n8k128 .global .shared .shared::cta .satfinite .xor .and "
       ".popc .rn .rz .rm .rp",
       ".f16 .bf16 .tf32 .s8 .u8 .s4 .u4 .b1 .f32 .s32 .f64"},
      {"Warp", "ldmatrix", ".sync .aligned .m8n8 .x1 .x2 .x4 .trans .shared .shared::cta", ".b16"},
      {"Warp", "movmatrix", ".sync .aligned .m8n8 .trans", ".b16"},
      {"Warp", "stmatrix", ".sync .aligned .m8n8 .x1 .x2 .x4 .trans .shared .shared::cta", ".b16"},
      {"Warp", "shfl", ".sync .up .down .bfly .idx", ".b32"},
      {"Warp", "vote", ".sync .all .any .uni .ballot", ".pred .b32"},
      {"Warp", "activemask", "", ".b32"},
      {"Warp", "match", ".sync .any .all", ".b32 .b64"},
      {"Warp", "elect", ".sync", ""},
      {"Warp", "redux", ".sync .add .min .max .and .or .xor", ".u32 .s32 .b32"},
      // ---- control ----
      {"Control", "bra", ".uni", ""},
      {"Control", "brx", ".idx .uni", ""},
      {"Control", "call", ".uni", ""},
      {"Control", "ret", ".uni", ""},
      {"Control", "exit", "", ""},
      {"Control", "trap", "", ""},
      {"Control", "brkpt", "", ""},
      {"Control", "bar", ".cta .aligned .warp .sync .arrive .red .popc .and .or", ".u32 .pred"},
      {"Control", "barrier", ".cta .aligned .sync .arrive .red .popc .and .or", ".u32 .pred"},
      {"Control", "nanosleep", "", ".u32"},
      {"Control", "pmevent", ".mask", ""},
      {"Control", "griddepcontrol", ".launch_dependents .wait", ""},
      {"Control", "setmaxnreg", ".inc .dec .sync .aligned", ".u32"},
  };
}

bool listed(std::string_view list, std::string_view word) {
  size_t i = 0;
  while (i < list.size()) {
    size_t j = list.find(' ', i);
    if (j == std::string_view::npos) j = list.size();
    if (list.substr(i, j - i) == word) return true;
    i = j + 1;
  }
  return false;
}

std::string codeWords(std::string_view list) {
  std::string out;
  size_t i = 0;
  while (i < list.size()) {
    size_t j = list.find(' ', i);
    if (j == std::string_view::npos) j = list.size();
    std::string_view w = list.substr(i, j - i);
    if (!out.empty()) out += ' ';
    out += w == "hints" ? std::string("(cache, eviction, ordering and scope hints)")
                        : "`" + std::string(w) + "`";
    i = j + 1;
  }
  return out;
}

}  // namespace

const std::vector<PtxOpcodeInfo>& ptxOpcodes() {
  static const std::vector<PtxOpcodeInfo> table = buildTable();
  return table;
}

const PtxOpcodeInfo* findPtxOpcode(std::string_view opcode) {
  for (const auto& e : ptxOpcodes())
    if (e.opcode == opcode) return &e;
  return nullptr;
}

bool isMemoryHint(std::string_view m) {
  static const std::unordered_set<std::string_view> hints = {
      ".ca",   ".cg",       ".cs",      ".lu",      ".cv",      ".wb",      ".wt",
      ".weak", ".volatile", ".relaxed", ".acquire", ".release", ".acq_rel", ".sc",
      ".mmio", ".cta",      ".cluster", ".gpu",     ".sys"};
  return hints.count(m) || startsWith(m, ".L1::") || startsWith(m, ".L2::") ||
         startsWith(m, ".level::");
}

bool ptxModifierAllowed(const PtxOpcodeInfo& op, std::string_view mod) {
  if (listed(op.modifiers, mod) || listed(op.types, mod)) return true;
  return listed(op.modifiers, "hints") && isMemoryHint(mod);
}

std::string ptxUnsupportedReason(std::string_view opcode, const std::vector<std::string>& mods) {
  auto has = [&](std::string_view m) {
    for (const auto& x : mods)
      if (x == m) return true;
    return false;
  };
  auto hasPrefix = [&](std::string_view p) {
    for (const auto& x : mods)
      if (startsWith(x, p)) return true;
    return false;
  };
  static const std::pair<std::string_view, std::string_view> byOpcode[] = {
      {"tld4", "texture gathers (tld4) are not supported; tex is"},
      {"txq", "texture queries (txq) are not supported"},
      {"sured", "surface reductions (sured) are not supported; suld and sust are"},
      {"suq", "surface queries (suq) are not supported"},
      {"istypep", "texture and surface type tests (istypep) are not supported"},
      {"wgmma", "warpgroup asynchronous matrix multiply-accumulate (sm_90a only) is not supported"},
      {"tcgen05",
       "the sm_100a/sm_101a fifth-generation tensor-core instructions and tensor memory are not "
       "supported"},
      {"multimem", "multimem operations on multicast memory objects are not supported"},
      {"tensormap", "tensor maps are not supported"},
      {"clusterlaunchcontrol", "clusters are not modelled"},
  };
  for (const auto& [op, why] : byOpcode)
    if (opcode == op) return std::string(why);
  if (has(".tensor") || has(".tensormap") || has(".tensormap::generic") || hasPrefix(".im2col") ||
      hasPrefix(".tile"))
    return "tensor maps are not supported";
  if (has(".cluster") && (opcode == "barrier" || opcode == "bar"))
    return "clusters are not modelled: cluster barriers are not supported";
  if (has(".multicast::cluster") || (has(".async") && (opcode == "st" || opcode == "red")))
    return "clusters are not modelled: stores and reductions to other blocks' shared memory are "
           "not supported";
  if (opcode == "tex" && (has(".cube") || has(".acube") || has(".2dms") || has(".a2dms") ||
                          has(".level") || has(".grad") || has(".base")))
    return "only 1D, 2D, 3D and layered 1D and 2D texture fetches are supported (no cube or "
           "multisample textures, no tex.level or tex.grad)";
  if ((opcode == "suld" || opcode == "sust") && has(".p"))
    return "only raw (.b) surface accesses are supported (no formatted .p)";
  if (opcode == "mma" && (has(".sp") || hasPrefix(".sp::")))
    return "sparse mma (mma.sp) is not supported";
  if ((opcode == "mma" || opcode == "wmma") && hasPrefix(".kind::"))
    return "the sm_100a/sm_120a block-scaled mma kinds are not supported";
  if (opcode == "cvt" && (has(".rs") || has(".ue8m0x2") || has(".e2m1x4") || has(".e4m3x4") ||
                          has(".e5m2x4") || has(".e2m3x4") || has(".e3m2x4")))
    return "stochastic rounding (.rs) and ue8m0x2 conversions (sm_100a) are not supported";
  if ((opcode == "ld" || opcode == "st") && has(".v8"))
    return "256-bit .v8 loads and stores (sm_100) are not supported";
  if (opcode == "st" && has(".bulk")) return "st.bulk (sm_100) is not supported";
  if (has(".f32x2")) return "packed .f32x2 arithmetic (sm_100) is not supported";
  if (opcode == "fma" && has(".oob"))
    return "fma.oob (the out-of-bounds NaN of tensor-map loads) is not supported";
  if ((opcode == "ldmatrix" || opcode == "stmatrix") && (has(".m16n16") || has(".m8n16")))
    return "the 8-bit and sub-byte ldmatrix/stmatrix shapes (sm_100a) are not supported";
  return "";
}

std::string ptxSupportMarkdown() {
  std::string out = "| Group | Instruction | Modifiers | Types |\n|---|---|---|---|\n";
  for (const auto& e : ptxOpcodes())
    out += fmt::format("| {} | `{}` | {} | {} |\n", e.group, e.opcode, codeWords(e.modifiers),
                       codeWords(e.types));
  return out;
}

}  // namespace gpusc::func
