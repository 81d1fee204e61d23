// How AMDGPU instructions are counted: unit, FLOPs (NVIDIA's convention), op classes, memory
// space and width. docs/model.md ("Counting") states the mapping.
#include <cstdlib>
#include <string_view>

#include "wavekit/model/binary.h"

namespace wavekit::model {
namespace {

bool starts(std::string_view text, std::string_view prefix) { return text.starts_with(prefix); }
bool ends(std::string_view text, std::string_view suffix) { return text.ends_with(suffix); }
bool has(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

std::string normalise(std::string mnemonic) {
  for (const char* suffix : {"_e64_dpp", "_e32", "_e64", "_sdwa", "_dpp"}) {
    if (ends(mnemonic, suffix)) {
      mnemonic.resize(mnemonic.size() - std::string_view(suffix).size());
      break;
    }
  }
  return mnemonic;
}

unsigned memory_width(std::string_view m) {
  struct Width {
    const char* token;
    unsigned bytes;
  };
  // Order matters: the longer tokens first.
  static const Width widths[] = {
      {"dwordx16", 64}, {"dwordx8", 32}, {"dwordx4", 16}, {"dwordx3", 12}, {"dwordx2", 8},
      {"b128", 16},     {"b96", 12},     {"b64", 8},      {"b32", 4},      {"b16", 2},
      {"ubyte", 1},     {"sbyte", 1},    {"byte", 1},     {"ushort", 2},   {"sshort", 2},
      {"short", 2},     {"u8", 1},       {"i8", 1},       {"u16", 2},      {"i16", 2},
      {"f64", 8},       {"u64", 8},      {"i64", 8},      {"x2", 8},       {"f16", 2},
      {"dword", 4},     {"u32", 4},      {"i32", 4},      {"f32", 4},
  };
  unsigned bytes = 4;
  for (const auto& w : widths) {
    if (has(m, w.token)) {
      bytes = w.bytes;
      break;
    }
  }
  // Two-address LDS forms move two elements.
  if (starts(m, "ds_read2") || starts(m, "ds_write2") || starts(m, "ds_load_2") ||
      starts(m, "ds_store_2"))
    bytes *= 2;
  // 64-bit atomics spelled _x2 on FLAT/GLOBAL/BUFFER (e.g. global_atomic_add_x2, cmpswap_x2).
  if (has(m, "atomic") && has(m, "cmpswap") && !has(m, "x2")) bytes = 4;
  return bytes;
}

// FP precision and op of a VALU mnemonic (without "v_" and "pk_").
struct FpOp {
  std::string precision;  // "fp16", "fp32", "fp64", or "" (integer/other)
  std::string op;         // "add", "mul", "fma", "div", "transcendental", "other"
};

FpOp fp_op(std::string_view body) {
  FpOp result;
  // The type is the last _f16/_f32/_f64/_bf16 token; conversions and compares are "other".
  auto type_at = [&](std::string_view t) { return ends(body, t); };
  if (type_at("_f16") || type_at("_bf16"))
    result.precision = "fp16";
  else if (type_at("_f32"))
    result.precision = "fp32";
  else if (type_at("_f64"))
    result.precision = "fp64";
  else if (has(body, "_f32_") || has(body, "_f16_") || has(body, "_f64_"))
    result.precision = has(body, "_f64") ? "fp64" : has(body, "_f32") ? "fp32" : "fp16";
  if (result.precision.empty()) return result;
  std::string_view op = body.substr(0, body.find('_'));
  std::string_view two = body.substr(0, body.find('_', op.size() + 1));
  if (starts(body, "cvt") || starts(body, "cmp") || starts(body, "class") ||
      starts(body, "cndmask") || starts(body, "mov") || starts(body, "frexp") ||
      starts(body, "ldexp") || starts(body, "fract") || starts(body, "trunc") ||
      starts(body, "ceil") || starts(body, "floor") || starts(body, "rndne") ||
      starts(body, "min") || starts(body, "max") || starts(body, "med3") ||
      starts(body, "div_scale") || starts(body, "div_fixup") || starts(body, "dot") ||
      starts(body, "sat") || starts(body, "mul_hi") || starts(body, "pack"))
    result.op = "other";
  else if (starts(body, "div_fmas"))
    result.op = "fma";
  else if (starts(body, "exp") || starts(body, "log") || starts(body, "rcp") ||
           starts(body, "rsq") || starts(body, "sqrt") || starts(body, "sin") ||
           starts(body, "cos"))
    result.op = "transcendental";
  else if (op == "add" || op == "sub" || op == "subrev")
    result.op = "add";
  else if (op == "mul" || two == "mul_legacy")
    result.op = "mul";
  else if (op == "fma" || op == "fmac" || op == "mac" || op == "mad" || op == "madak" ||
           op == "madmk" || op == "fmaak" || op == "fmamk")
    result.op = "fma";
  else
    result.op = "other";
  return result;
}

}  // namespace

InstructionClass classify(const std::string& raw_mnemonic, const std::string& memory_kind,
                          const std::string& memory_access, unsigned dst_registers) {
  InstructionClass c;
  const std::string m = normalise(raw_mnemonic);
  c.per_issue.emplace_back("instructions.wave", 1);
  // Memory instructions.
  if (!memory_kind.empty() && memory_kind != "none" && !starts(m, "ds_swizzle") &&
      !starts(m, "ds_permute") && !starts(m, "ds_bpermute")) {
    if (memory_kind == "scalar")
      c.space = "scalar";
    else if (memory_kind == "lds")
      c.space = "lds";
    else if (memory_kind == "scratch" || memory_kind == "buffer")
      c.space = "private";
    else
      c.space = "global";  // global and flat
    c.access = memory_access.empty() || memory_access == "none" ? "load" : memory_access;
    c.bytes_per_lane = memory_width(m);
    c.unit = c.space == "scalar" ? InstructionClass::Unit::smem
             : c.space == "lds"  ? InstructionClass::Unit::lds
                                 : InstructionClass::Unit::vmem;
    std::string prefix = "memory." + c.space + "." + c.access;
    c.per_issue.emplace_back(prefix + ".instructions", 1);
    if (c.space == "scalar")
      c.per_issue.emplace_back(prefix + ".bytes", c.bytes_per_lane);
    else
      c.per_lane.emplace_back(prefix + ".bytes", c.bytes_per_lane);
    return c;
  }
  if (starts(m, "s_")) {
    if (starts(m, "s_branch") || starts(m, "s_cbranch") || starts(m, "s_setpc") ||
        starts(m, "s_swappc") || starts(m, "s_call") || starts(m, "s_endpgm")) {
      c.unit = InstructionClass::Unit::branch;
      c.per_issue.emplace_back("ops.branch", 1);
    } else if (starts(m, "s_barrier") || starts(m, "s_waitcnt") || starts(m, "s_sleep") ||
               starts(m, "s_nop")) {
      c.unit = InstructionClass::Unit::sync;
      c.per_issue.emplace_back("ops.sync", 1);
    } else {
      c.unit = InstructionClass::Unit::salu;
      c.per_issue.emplace_back("ops.salu", 1);
    }
    return c;
  }
  if (starts(m, "v_mfma") || starts(m, "v_smfmac")) {
    // v_mfma_<dst>_<M>x<N>x<K><type>: blocks * M * N outputs per wave, each lane holding
    // dst_registers of them (f64: two registers each).
    c.unit = InstructionClass::Unit::matrix;
    std::string_view body = std::string_view(m).substr(m.find('_', 2) + 1);
    body = body.substr(body.find('_') + 1);  // after the dst type
    unsigned dims[3] = {0, 0, 0};
    const char* p = body.data();
    for (int i = 0; i < 3; ++i) {
      char* end = nullptr;
      dims[i] = unsigned(std::strtoul(p, &end, 10));
      p = end;
      if (*p == 'x') ++p;
    }
    if (dims[0] && dims[1] && dims[2]) {
      double outputs = double(dst_registers) * 64 / (has(m, "f64") ? 2.0 : 1.0);
      double blocks = std::max(1.0, outputs / (dims[0] * dims[1]));
      c.per_issue.emplace_back("flops.matrix", 2.0 * dims[0] * dims[1] * dims[2] * blocks);
    }
    c.per_issue.emplace_back("instructions.valu", 1);
    return c;
  }
  if (starts(m, "v_")) {
    c.unit = InstructionClass::Unit::valu;
    c.per_issue.emplace_back("instructions.valu", 1);
    c.per_lane.emplace_back("ops.valu", 1);
    std::string_view body = std::string_view(m).substr(2);
    double elements = 1;
    if (starts(body, "pk_")) {
      body = body.substr(3);
      elements = 2;
    }
    FpOp op = fp_op(body);
    if (op.precision.empty()) {
      c.per_lane.emplace_back("ops.int", 1);
      return c;
    }
    if (op.op == "transcendental") {
      c.per_lane.emplace_back("ops.transcendental", elements);
      return c;
    }
    c.per_lane.emplace_back("ops." + op.precision + "." + op.op, elements);
    if (op.op == "add" || op.op == "mul")
      c.per_lane.emplace_back("flops." + op.precision, elements);
    else if (op.op == "fma")
      c.per_lane.emplace_back("flops." + op.precision, 2 * elements);
    return c;
  }
  c.unit = InstructionClass::Unit::other;
  return c;
}

}  // namespace wavekit::model
