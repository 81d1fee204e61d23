#include "wavekit/rewrite/launch.h"

#include "wavekit/codeobj/code_object.h"
#include "wavekit/rewrite/tools.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::rewrite {

ToolLaunchOutcome launch_instrumented(hsa::LaunchRequest request) {
  const codeobj::CodeObject object =
      codeobj::CodeObject::parse(read_file(request.code_object), request.code_object);
  const std::optional<RewriteNote> note = find_note(object);
  if (!note) fail(request.code_object, "has no WAVEKIT note: it was not rewritten by wavekit");
  const InstrumentedKernel* kernel = note->find_kernel(request.kernel);
  if (!kernel) fail(request.code_object, "kernel '" + request.kernel + "' is not instrumented");

  std::uint32_t grid[3];
  std::uint16_t block[3];
  for (int dim = 0; dim < 3; ++dim) {
    grid[dim] = request.grid.size[dim];
    if (request.block.size[dim] > 0xffff)
      throw Error("--block: " + std::to_string(request.block.size[dim]) + " does not fit 16 bits");
    block[dim] = static_cast<std::uint16_t>(request.block.size[dim]);
  }
  hsa::ArgumentSpec arena;
  arena.kind = hsa::ArgumentSpec::Kind::file;
  arena.text = "file:(wavekit per-wave arena)";
  arena.bytes.assign(arena_size(*kernel, grid, block), 0);
  fill_arena_header(arena.bytes, *kernel, grid, block);
  const unsigned arena_index = static_cast<unsigned>(request.arguments.size());
  request.arguments.push_back(std::move(arena));
  // hsa::launch runs the hostcall service whenever a loaded object uses the ring; the note
  // makes a missing probe library an error instead of a probe faulting on a null ring.
  request.require_hostcall = request.require_hostcall || note->needs_hostcall;

  ToolLaunchOutcome outcome;
  outcome.tool = note->tool;
  outcome.launch = hsa::launch(request);
  for (auto it = outcome.launch.buffers.begin(); it != outcome.launch.buffers.end(); ++it) {
    if (it->first != arena_index) continue;
    outcome.arena = std::move(it->second);
    outcome.launch.buffers.erase(it);
    break;
  }
  if (outcome.launch.ok) outcome.report = tool_report(note->tool, *kernel, outcome.arena);
  return outcome;
}

}  // namespace wavekit::rewrite
