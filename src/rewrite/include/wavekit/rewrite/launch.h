// Running a rewritten code object on the emulator: what a launcher must do for the WAVEKIT
// note (docs/rewrite.md, "What a launcher does"), on top of `wavekit launch`'s own work. The
// arena is passed as one more buffer argument, the one the rewriter appended to `.args`.
#pragma once

#include <nlohmann/json.hpp>

#include "wavekit/hsa/launch.h"
#include "wavekit/rewrite/arena.h"

namespace wavekit::rewrite {

struct ToolLaunchOutcome {
  hsa::LaunchOutcome launch;  // its buffers hold the kernel's own arguments only
  std::string tool;
  // The tool's report (bbcount: the --trace-blocks JSON; a custom plan: variables_report).
  nlohmann::json report;
  std::vector<std::uint8_t> arena;  // header + slots, as the dispatch left them
};

// `request.arguments` are the ORIGINAL kernel's arguments. Reads the object's WAVEKIT note,
// allocates and fills the arena for the dispatch, appends it, launches, and runs the tool's
// reporter; loads the note's probe library (find_probe_library) into the same executable. When
// the note says needs_hostcall, the launch runs the hostcall service (hsa::launch does so
// whenever a loaded object uses the ring; its statistics come back in launch.hostcall) and
// throws if no loaded object uses the ring. Throws wavekit::Error for an object without a
// WAVEKIT note or a kernel it did not instrument; emulator faults come back in launch.error
// (and then the report is empty).
ToolLaunchOutcome launch_instrumented(hsa::LaunchRequest request);

// The file of the probe library a rewritten object names (its note's wavekit.probe_library): the
// recorded path if it exists, else the same file name next to `code_object`. Throws
// wavekit::Error naming both when neither exists.
std::string find_probe_library(const RewriteNote& note, const std::string& code_object);

}  // namespace wavekit::rewrite
