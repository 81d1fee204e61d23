// `wavekit rewrite`: instrument a code object with a ready-made tool or a plan.
#include <filesystem>
#include <iostream>

#include "wavekit/cli/options.h"
#include "wavekit/cli/subcommand.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/rewrite/tools.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace {

int run_rewrite(wavekit::cli::Arguments args) {
  std::string input, output, tool, plan_path, probe_lib, processor;
  std::vector<std::string> kernels;
  bool json = false;
  wavekit::cli::OptionParser parser(
      "wavekit rewrite",
      "Instruments an AMDGPU code object (or the code object for --processor in a fat binary):\n"
      "each instrumented kernel runs a relocated copy of its code with the tool's points\n"
      "inserted, and the object gains a WAVEKIT note describing the per-wave arena a launcher\n"
      "must provide (docs/rewrite.md). The ready-made tools:\n" +
          wavekit::rewrite::tool_help());
  parser.positional("IN", &input, "code object, offload bundle or HIP host object");
  parser.option("--output", &output, "OUT", "where to write the rewritten code object");
  std::string tools;
  for (const std::string& name : wavekit::rewrite::tool_names())
    tools += (tools.empty() ? "" : ", ") + name;
  parser.option("--tool", &tool, "NAME", "a ready-made tool: " + tools);
  parser.option("--plan", &plan_path, "PLAN.json", "a custom instrumentation plan");
  parser.option("--probe-lib", &probe_lib, "LIB", "the probe library the plan's calls use");
  parser.repeated("--kernel", &kernels, "NAME", "instrument only this kernel (repeatable)");
  parser.option("--processor", &processor, "GFX", "which code object of a fat binary");
  parser.flag("--json", &json, "print the WAVEKIT note as JSON instead of a summary");
  parser.short_name('o', "--output");
  if (auto code = parser.parse(args)) return *code;
  if (output.empty()) throw wavekit::cli::UsageError("missing -o OUT");
  if (tool.empty() == plan_path.empty())
    throw wavekit::cli::UsageError("give exactly one of --tool and --plan");
  if (!probe_lib.empty() && plan_path.empty())
    throw wavekit::cli::UsageError("--probe-lib goes with --plan");

  const wavekit::rewrite::ToolChoice choice{tool, plan_path, probe_lib, kernels};
  wavekit::rewrite::Plan plan = wavekit::rewrite::resolve_plan(choice);
  auto mutator = wavekit::rewrite::Mutator::open(wavekit::read_file(input), input, processor);
  // A tool with probes uses its library for the object's processor.
  if (wavekit::rewrite::plan_depends_on_processor(choice))
    plan = wavekit::rewrite::resolve_plan(choice, mutator.object().target().processor);
  // The note records the library's absolute path, so that a launcher started elsewhere finds
  // it (or, failing that, the same file name next to the rewritten object).
  if (!plan.probe_library.empty())
    plan.probe_library = std::filesystem::absolute(plan.probe_library).string();
  const wavekit::rewrite::RewriteResult result = wavekit::rewrite::rewrite(mutator.object(), plan);
  wavekit::write_file(output, result.bytes);
  if (json) {
    std::cout << wavekit::rewrite::note_to_json(result.note).dump(2) << "\n";
    return 0;
  }
  std::cout << output << ": " << plan.tool << ", " << result.note.kernels.size() << " kernel(s), "
            << result.points_instrumented << " points, " << result.instructions_relocated
            << " instructions relocated";
  if (result.branches_relaxed)
    std::cout << ", " << result.branches_relaxed << " branches made long jumps (out of range)";
  std::cout << "\n";
  for (const wavekit::rewrite::InstrumentedKernel& kernel : result.note.kernels)
    std::cout << "  " << kernel.name << ": arena pointer at kernarg offset "
              << kernel.arena_arg_offset << ", " << kernel.layout.stride() << " bytes per wave\n";
  return 0;
}

}  // namespace

WAVEKIT_SUBCOMMAND("rewrite", "instrument a code object (bbcount, or a custom plan)", run_rewrite);
