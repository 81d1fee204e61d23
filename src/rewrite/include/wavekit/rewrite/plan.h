// The instrumentation plan: which points, what to do there (a probe call with arguments, or an
// inline snippet), and the per-wave variables. The mutator API builds one; `wavekit rewrite
// --probe-lib LIB --plan PLAN.json` reads one from JSON (schema in docs/rewrite.md):
//
//   {"kernels": ["k"],                                   // optional; default: every kernel
//    "variables": [{"name": "hits", "element_size": 8, "count": 1}],
//    "points": [
//      {"where": "block_entry", "snippet": {"op": "increment", "variable": "hits"}},
//      {"where": "call_return", "call": {"probe": "on_ret",
//        "args": [{"kind": "point_id"}, {"kind": "return_value"}]}}]}
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "wavekit/rewrite/arena.h"

namespace wavekit::rewrite {

enum class PointKind {
  kernel_entry,  // once per wave, after the entry prologue
  kernel_exit,   // before each s_endpgm
  block_entry,   // at the start of each basic block
  before_instruction,
  after_instruction,
  memory,           // before each memory instruction of the chosen kinds
  call_site,        // before each s_swappc_b64
  call_return,      // right after each s_swappc_b64 returns
  function_entry,   // device functions
  function_return,  // before each s_setpc_b64 s[30:31]
};

enum class MemoryKind { global, scratch, lds, scalar, flat };

enum class ArgumentKind {
  constant,          // value
  point_id,          // the point's index in the rewritten object
  original_address,  // the instruction's address in the original object
  register_value,    // a register ("v3", "s[4:5]", "exec", "vcc") as it is at the point
  // The same value, and the probe's return value becomes the register's (32 bits, or 64 in
  // v[0:1] for a pair, EXEC and VCC): what the instrumented code continues with. VGPRs change
  // in the lanes the probe ran for; SGPRs, EXEC and VCC take the first such lane's value. At
  // most one per call.
  register_reference,
  effective_address,  // a memory instruction's address (per lane)
  exec,               // the EXEC mask at the point
  return_value,       // v0:v1 after a call (call_return points only)
  variable,           // address of a per-wave variable in this wave's slot
};

struct Argument {
  ArgumentKind kind = ArgumentKind::constant;
  std::uint64_t value = 0;  // constant
  std::string name;         // register_value: register; variable: variable name
  // variable only: the address of element i, where i is the point's call site among the
  // kernel's call sites, then those of the device functions it reaches (call_site /
  // call_return points); the variable then gets one element per such call site of each
  // kernel, keyed by the calls' original addresses (callret's records).
  bool indexed_by_call_site = false;
};

enum class SnippetOp {
  increment,  // variable[element] += 1 (element: the point's block index, or 0)
  store,      // variable[element] = argument
};

struct Snippet {
  SnippetOp op = SnippetOp::increment;
  std::string variable;
  bool indexed_by_block = false;  // one element per basic block (bbcount's counters)
  std::optional<Argument> value;  // store only
};

struct ProbeCall {
  std::string probe;  // the probe library's function name
  std::vector<Argument> args;
  bool uniform = false;  // call with EXEC = all ones instead of the point's EXEC
};

struct PointSpec {
  PointKind where = PointKind::block_entry;
  std::vector<MemoryKind> memory_kinds;  // memory points: which kinds (empty: all)
  std::vector<std::uint64_t> addresses;  // before/after_instruction: original addresses
  std::optional<Snippet> snippet;        // exactly one of snippet and call
  std::optional<ProbeCall> call;
  // before_instruction calls only: the call replaces the instruction, which does not run (an
  // s_nop stands in its place). The registers live after it keep their values unless the
  // probe changes them by reference: a probe that computes the instruction's result returns it
  // through a register_reference to the destination.
  bool replace = false;
};

struct Plan {
  std::string tool = "custom";
  std::vector<std::string> kernels;  // empty: every kernel of the object
  std::vector<PerWaveVariable> variables;
  std::vector<PointSpec> points;
  std::string probe_library;  // path of the probe library (calls need one)

  bool has_calls() const;
};

// JSON <-> Plan. parse_plan throws wavekit::Error naming `context`, the JSON path and the
// problem (unknown key or kind, missing field, snippet and call both or neither, a variable
// that is not declared).
Plan parse_plan(const nlohmann::json& json, const std::string& context);
nlohmann::json plan_to_json(const Plan& plan);

std::string to_string(PointKind kind);
std::string to_string(ArgumentKind kind);
std::string to_string(MemoryKind kind);

}  // namespace wavekit::rewrite
