// The ready-made tools: each is a plan (what to insert) and a reporter (what the arena means
// after a dispatch). Their sources live in src/rewrite/tools/<tool>/.
//
// bbcount: one 8-byte counter per basic block per wave, incremented by an inline snippet at
// each block entry. Its report is exactly the JSON of `wavekit launch --trace-blocks`:
//   {"kernel": NAME, "waves": [{"id", "workgroup": [x,y,z], "wave_in_workgroup",
//                               "blocks": {"0x<original block start>": count, ...}}]}
// listing the blocks a wave entered at least once.
//
// callret: at each return of each call a kernel makes, in its own code or in a device function
// it reaches (a recursion's calls included), a probe call records the active lanes' 32-bit
// return values (v0) in one 40-byte record per call site per wave. Its report:
//   {"kernel": NAME, "waves": [{"id", "workgroup", "wave_in_workgroup",
//      "calls": {"0x<original s_swappc_b64 address>": {"returns", "lanes", "first_lane",
//                "first_value", "min", "max", "hash": "0x..."}}}]}
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "wavekit/rewrite/arena.h"
#include "wavekit/rewrite/plan.h"

namespace wavekit::rewrite {

// Names of the ready-made tools this build ships (not "custom", the plan-file tool).
std::vector<std::string> tool_names();
// The ready-made tools for --help, a line each: "  bbcount     per-wave basic-block counts".
std::string tool_help();
// A ready-made tool's plan. Throws wavekit::Error for an unknown name, listing the known ones.
Plan tool_plan(const std::string& tool);

// What `wavekit rewrite`, `wavekit run` or the shim was asked to instrument with: a ready-made
// tool by name, or a plan file (the tool "custom") with the probe library its calls use.
// (The CLIs take a probe library only with a plan; the shim's WAVEKIT_PROBE_LIB overrides any
// tool's, which the fail-safe tests use.)
struct ToolChoice {
  std::string tool = {};           // a ready-made tool or "custom"; empty with a plan: "custom"
  std::string plan_path = {};      // the plan file (JSON) of the custom tool
  std::string probe_library = {};  // the probe library (overrides the plan's or the tool's)
  std::vector<std::string> kernels = {};  // instrument only these (empty: what the plan says)
};
// The tool's name as results carry it: choice.tool, or "custom" for a plan file.
std::string tool_name(const ToolChoice& choice);
// The plan of a choice, checked: a known tool, a plan file exactly for "custom". With `processor`
// ("gfx90a"), a ready-made tool's probe library for it is filled in (tool_probe_library); without,
// the plan has none yet. Throws wavekit::Error naming the mistake (an unreadable or invalid plan
// file included).
Plan resolve_plan(const ToolChoice& choice, const std::string& processor = {});
// Whether resolve_plan's answer depends on the processor (a ready-made tool with probes).
bool plan_depends_on_processor(const ToolChoice& choice);

// After a run under a launcher (`wavekit run`): the tool's view of what its dispatches left,
// e.g. bbcount's heatmaps written beside each dispatch's JSON with the first one printed,
// callret's table per kernel. `summary` is the run's summary ({"dispatches": [{"kernel",
// "file"}...]}); what cannot be shown is said on `terminal` and skipped (the results stand).
// Tools without a view print nothing.
void present_results(const std::string& tool, const nlohmann::json& summary,
                     std::ostream& terminal);
// A tool's report for one dispatch of `kernel` from its arena (see fill_arena_header); for a
// name that is not one of tool_names() (a custom plan), variables_report. Throws
// wavekit::Error for an arena that does not fit the note.
nlohmann::json tool_report(const std::string& tool, const InstrumentedKernel& kernel,
                           std::span<const std::uint8_t> arena);
// True for a tool whose output is the files its probes write through the hostcall file service
// (blocktrace): launchers make the tool-output path that service's directory, and the report
// is only a summary. False for unknown names.
bool tool_writes_files(const std::string& tool);
// Such a tool's probes write one dispatch's files under this subdirectory of the file service's
// directory: "k" + the address of the dispatch's kernarg segment in lowercase hex, which no two
// dispatches in flight share. Launchers rename it once the dispatch is complete.
std::string tool_files_subdirectory(std::uint64_t kernarg_address);
// Every per-wave variable of every wave that ran, by name: {"kernel", "waves": [{"id",
// "workgroup", "wave_in_workgroup", "variables": {"name": [element, ...]}}]}, elements of 1, 2,
// 4 or 8 bytes as unsigned integers, others as hex strings of their bytes in memory order.
nlohmann::json variables_report(const InstrumentedKernel& kernel,
                                std::span<const std::uint8_t> arena);

// Where the ready-made tools' probe libraries are: $WAVEKIT_PROBE_DIR if set, else the
// directory the build put them in (<build>/probes, recorded at build time).
std::string tool_probe_directory();
// The probe library of `tool` for `processor` ("gfx90a"): <directory>/<tool>.<processor>.co;
// "" for a tool without probes. Throws wavekit::Error when the file is missing.
std::string tool_probe_library(const std::string& tool, const std::string& processor);

// callret's per-lane hash, one splitmix64 step from the state lane << 32 | value (add
// 0x9e3779b97f4a7c15, then mix): a record's "hash" is the sum of it over every active lane of
// every return, so a checker can recompute it.
std::uint64_t callret_lane_hash(std::uint32_t lane, std::uint32_t value);

}  // namespace wavekit::rewrite
