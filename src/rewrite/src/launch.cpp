#include "wavekit/rewrite/launch.h"

#include <filesystem>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/rewrite/tools.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::rewrite {

std::string find_probe_library(const RewriteNote& note, const std::string& code_object) {
  const std::filesystem::path recorded = note.probe_library;
  if (std::filesystem::exists(recorded)) return recorded.string();
  const std::filesystem::path beside =
      std::filesystem::path(code_object).parent_path() / recorded.filename();
  if (std::filesystem::exists(beside)) return beside.string();
  fail(code_object, "needs the probe library " + recorded.string() +
                        ", which is neither there nor next to the object");
}

ToolLaunchOutcome launch_instrumented(hsa::LaunchRequest request) {
  const codeobj::CodeObject object =
      codeobj::CodeObject::parse(read_file(request.code_object), request.code_object);
  const std::optional<RewriteNote> note = find_note(object);
  if (!note) fail(request.code_object, "has no WAVEKIT note: it was not rewritten by wavekit");
  const InstrumentedKernel* kernel = note->find_kernel(request.kernel);
  if (!kernel) fail(request.code_object, "kernel '" + request.kernel + "' is not instrumented");
  // The probe library goes into the same executable, before it is frozen, so that the loader
  // resolves the probe calls' GOT slots against its aliases.
  if (!note->probe_library.empty())
    request.libraries.push_back(find_probe_library(*note, request.code_object));

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
  arena.tool_memory = true;  // probes write it on every pass: not the kernel's progress
  arena.bytes.assign(arena_size(*kernel, grid, block), 0);
  fill_arena_header(arena.bytes, *kernel, grid, block);
  // The arena is a hidden argument of the instrumented kernel: runtimes do not count it among
  // the arguments the program passes (HIP reads one kernelParams entry per explicit argument).
  request.hidden_buffer = hsa::LaunchRequest::HiddenBuffer{kernel->arena_arg_offset, std::move(arena)};
  // hsa::launch runs the hostcall service whenever a loaded object uses the ring; the note
  // makes a missing probe library an error instead of a probe faulting on a null ring.
  request.require_hostcall = request.require_hostcall || note->needs_hostcall;

  ToolLaunchOutcome outcome;
  outcome.tool = note->tool;
  outcome.launch = hsa::launch(request);
  outcome.arena = std::move(outcome.launch.hidden_buffer);
  if (outcome.launch.ok) outcome.report = tool_report(note->tool, *kernel, outcome.arena);
  return outcome;
}

}  // namespace wavekit::rewrite
