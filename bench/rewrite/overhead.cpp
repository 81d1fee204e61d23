// For every corpus kernel a tool (bbcount by default; `rewrite_bench DIR callret|blocktrace`)
// can instrument and has points in: executed wave-instructions of the rewritten kernel over the
// original's (both from the emulator, in the same process, same inputs), and the rewriter's
// throughput in relocated instructions per second. Ratios, not times, are the result; the
// throughput is indicative only (shared 2-core machine). The "entry/exit" column is the same
// kernel rewritten with the tool's points left out: the prologue (slot claim, capture region)
// and the write-back before s_endpgm alone, the part of the ratio no point placement changes.
// blocktrace's per-wave files go under DIR/<object>.<kernel>.trace; its ratio includes the waves'
// polling while the host services their requests, so it depends on how fast the host answers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/rewrite/launch.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace {

wavekit::hsa::LaunchRequest request_for(const wavekit::corpus::CorpusKernel& kernel,
                                        const std::vector<wavekit::corpus::Argument>& args,
                                        const std::string& path) {
  wavekit::hsa::LaunchRequest request;
  request.code_object = path;
  request.kernel = kernel.name;
  const wavekit::corpus::Dim3 grid = kernel.grid_size();
  request.grid.size = {grid.x, grid.y, grid.z};
  request.grid.count = 3;
  request.block.size = {kernel.block.x, kernel.block.y, kernel.block.z};
  request.block.count = 3;
  for (const wavekit::corpus::Argument& arg : args) {
    wavekit::hsa::ArgumentSpec spec;
    spec.kind = arg.kind == wavekit::corpus::Argument::Kind::buffer
                    ? wavekit::hsa::ArgumentSpec::Kind::file
                    : (arg.bytes.size() == 8 ? wavekit::hsa::ArgumentSpec::Kind::u64
                                             : wavekit::hsa::ArgumentSpec::Kind::u32);
    spec.text = arg.name;
    spec.bytes = arg.bytes;
    request.arguments.push_back(spec);
  }
  return request;
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path dir =
      argc > 1 ? std::filesystem::path(argv[1])
               : std::filesystem::temp_directory_path() / "wavekit_rewrite_bench";
  std::filesystem::create_directories(dir);
  const std::string tool = argc > 2 ? argv[2] : "bbcount";
  std::vector<double> ratios, floors;
  std::uint64_t relocated = 0;
  double rewrite_seconds = 0;
  std::printf("%-28s %-24s %12s %12s %7s %11s %7s\n", "object", "kernel", "original", tool.c_str(),
              "ratio", "entry/exit", "ratio");
  for (const wavekit::corpus::CorpusObject& object : wavekit::corpus::objects()) {
    if (object.fat_binary || object.stripped) continue;
    const auto input =
        wavekit::codeobj::CodeObject::parse(wavekit::read_file(object.path), object.path);
    for (const std::string& name : object.kernels) {
      wavekit::rewrite::Plan plan = wavekit::rewrite::tool_plan(tool);
      plan.kernels = {name};
      plan.probe_library = wavekit::rewrite::tool_probe_library(tool, input.target().processor);
      wavekit::rewrite::RewriteResult result;
      const auto start = std::chrono::steady_clock::now();
      try {
        result = wavekit::rewrite::rewrite(input, plan);
      } catch (const wavekit::Error& error) {
        std::printf("%-28s %-24s refused: %s\n", object.name.c_str(), name.c_str(), error.what());
        continue;
      }
      if (result.points_instrumented == 0) continue;  // callret: a kernel without calls
      rewrite_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      relocated += result.instructions_relocated;
      const std::string out = (dir / (object.name + "." + name + ".co")).string();
      wavekit::write_file(out, result.bytes);
      const auto& kernel = wavekit::corpus::kernel(name);
      const auto args = kernel.make_inputs(7);
      const auto original = wavekit::hsa::launch(request_for(kernel, args, object.path));
      wavekit::hsa::LaunchRequest request = request_for(kernel, args, out);
      request.hostcall_file_root = (dir / (object.name + "." + name + ".trace")).string();
      const auto instrumented = wavekit::rewrite::launch_instrumented(request);
      if (!original.ok || !instrumented.launch.ok) {
        std::printf("%-28s %-24s failed: %s\n", object.name.c_str(), name.c_str(),
                    (original.ok ? instrumented.launch.error : original.error).c_str());
        continue;
      }
      const double ratio = double(instrumented.launch.instructions) / double(original.instructions);
      wavekit::rewrite::Plan bare = plan;
      bare.points.clear();
      bare.tool = "custom";  // its report: the variables as they are
      const std::string bare_out = (dir / (object.name + "." + name + ".bare.co")).string();
      wavekit::write_file(bare_out, wavekit::rewrite::rewrite(input, bare).bytes);
      request.code_object = bare_out;
      const auto floor = wavekit::rewrite::launch_instrumented(request);
      if (!floor.launch.ok) {
        std::printf("%-28s %-24s failed without points: %s\n", object.name.c_str(), name.c_str(),
                    floor.launch.error.c_str());
        continue;
      }
      const double floor_ratio = double(floor.launch.instructions) / double(original.instructions);
      ratios.push_back(ratio);
      floors.push_back(floor_ratio);
      std::printf("%-28s %-24s %12llu %12llu %7.3f %11llu %7.3f\n", object.name.c_str(),
                  name.c_str(), static_cast<unsigned long long>(original.instructions),
                  static_cast<unsigned long long>(instrumented.launch.instructions), ratio,
                  static_cast<unsigned long long>(floor.launch.instructions), floor_ratio);
    }
  }
  if (ratios.empty()) return 1;
  std::sort(ratios.begin(), ratios.end());
  std::sort(floors.begin(), floors.end());
  std::printf("%s executed-instruction ratio: median %.3f, min %.3f, max %.3f over %zu kernels\n",
              tool.c_str(), ratios[ratios.size() / 2], ratios.front(), ratios.back(),
              ratios.size());
  std::printf("entry/exit only (no points): median %.3f, min %.3f, max %.3f\n",
              floors[floors.size() / 2], floors.front(), floors.back());
  std::printf("rewrite throughput: %.0f relocated instructions/s (%llu in %.3f s)\n",
              double(relocated) / rewrite_seconds, static_cast<unsigned long long>(relocated),
              rewrite_seconds);
  return 0;
}
