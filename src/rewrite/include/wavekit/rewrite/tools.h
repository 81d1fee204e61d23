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
#include <span>
#include <string>
#include <vector>

#include "wavekit/rewrite/arena.h"
#include "wavekit/rewrite/plan.h"

namespace wavekit::rewrite {

// Names of the tools this build ships.
std::vector<std::string> tool_names();
// A tool's plan. Throws wavekit::Error for an unknown name, listing the known ones.
Plan tool_plan(const std::string& tool);
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
