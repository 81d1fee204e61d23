// The ready-made tools: each is a plan (what to insert) and a reporter (what the arena means
// after a dispatch). Their sources live in src/rewrite/tools/<tool>/.
//
// bbcount: one 8-byte counter per basic block per wave, incremented by an inline snippet at
// each block entry. Its report is exactly the JSON of `wavekit launch --trace-blocks`:
//   {"kernel": NAME, "waves": [{"id", "workgroup": [x,y,z], "wave_in_workgroup",
//                               "blocks": {"0x<original block start>": count, ...}}]}
// listing the blocks a wave entered at least once.
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
// A tool's report for one dispatch of `kernel` from its arena (see fill_arena_header).
// Throws wavekit::Error for a tool without a reporter or an arena that does not fit the note.
nlohmann::json tool_report(const std::string& tool, const InstrumentedKernel& kernel,
                           std::span<const std::uint8_t> arena);

}  // namespace wavekit::rewrite
