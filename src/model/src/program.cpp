#include "wavekit/model/program.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "wavekit/model/compare.h"
#include "wavekit/support/error.h"

namespace wavekit::model {

namespace {

// A fresh file for the observer's lines, removed when the run is over.
class Scratch {
 public:
  Scratch() {
    std::string name =
        (std::filesystem::temp_directory_path() / "wavekit-model-XXXXXX.jsonl").string();
    const int fd = mkstemps(name.data(), 6);
    if (fd < 0) throw Error("cannot create a file for the counts in " + name);
    ::close(fd);
    path_ = name;
  }
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

ProgramOutcome model_program(const ProgramSpec& spec) {
  if (spec.command.empty()) throw Error("no program to run");
  if (!std::filesystem::exists(spec.observer_module))
    throw Error("the model's dispatch observer is missing: " + spec.observer_module);
  // The observer compiles the regex at the program's first dispatch; a bad one is refused here,
  // before the program runs.
  try {
    std::regex check(spec.kernels);
  } catch (const std::regex_error& error) {
    throw Error("--kernels: '" + spec.kernels + "' is not a regular expression: " + error.what());
  }
  Scratch lines;

  ChildProgram program;
  program.command = spec.command;
  program.tool = "wavekit model";
  program.environment["LD_LIBRARY_PATH"] =
      prepend_path("LD_LIBRARY_PATH", spec.emulator_runtime_dir);
  program.environment["WAVEKIT_EMU_OBSERVER"] = spec.observer_module;
  program.environment["WAVEKIT_MODEL_OUT"] = lines.path();
  program.environment["WAVEKIT_MODEL_MACHINE"] = spec.cache_machine;
  program.environment["WAVEKIT_MODEL_KERNELS"] = spec.kernels;
  program.environment["WAVEKIT_MODEL_LAUNCHES"] = std::to_string(spec.launches);
  if (!spec.emulated_target.empty())
    program.environment["WAVEKIT_EMU_TARGET"] = spec.emulated_target;
  program.stdout_file = spec.stdout_file;
  program.timeout_seconds = spec.timeout_seconds;

  ProgramOutcome outcome;
  outcome.exit = run_program(program);

  std::ifstream in(lines.path());
  if (!in) throw Error("cannot read the counts the program left in " + lines.path());
  std::vector<std::pair<std::uint64_t, nlohmann::json>> read;  // (dispatch, line)
  std::string text;
  for (std::size_t number = 1; std::getline(in, text); ++number) {
    try {
      nlohmann::json line = nlohmann::json::parse(text);
      const std::uint64_t dispatch = line.value("dispatch", std::uint64_t{0});
      read.emplace_back(dispatch, std::move(line));
    } catch (const nlohmann::json::exception&) {
      // A process killed while writing leaves a partial last line; anything else is ours.
      if (in.peek() == EOF) break;
      throw Error(lines.path() + ":" + std::to_string(number) + ": not a line of counts");
    }
  }
  // In dispatch order (a counted dispatch's line is written when it completes, so a later
  // uncounted one of another queue may come first); the sort is stable by construction, the
  // line order breaking ties.
  std::vector<std::size_t> order(read.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return read[a].first != read[b].first ? read[a].first < read[b].first : a < b;
  });
  std::map<std::string, std::size_t> index;            // symbol -> kernels[]
  std::map<std::string, std::uint64_t> base_launches;  // kernel_base_name -> launches so far
  for (std::size_t i : order) {
    const nlohmann::json& line = read[i].second;
    const std::string symbol = line.value("symbol", "");
    auto [at, added] = index.emplace(symbol, outcome.kernels.size());
    if (added) {
      ProgramKernel kernel;
      kernel.symbol = symbol;
      kernel.name = line.contains("model") ? line["model"].value("name", symbol)
                                           : line.value("kernel", symbol);
      outcome.kernels.push_back(std::move(kernel));
    }
    ProgramKernel& kernel = outcome.kernels[at->second];
    ++kernel.launches;
    const std::uint64_t launch = base_launches[kernel_base_name(kernel.name)]++;
    if (line.contains("model")) {
      kernel.counted.push_back(kernel_from_json(line["model"], "the observer's counts"));
      kernel.counted_launch.push_back(launch);
    } else if (line.contains("error")) {
      kernel.errors.push_back("launch " + std::to_string(line.value("launch", std::uint64_t{0})) +
                              ": " + line["error"].get<std::string>());
    }
  }
  return outcome;
}

std::vector<KernelTotals> total_program(const ProgramOutcome& outcome,
                                        const std::vector<Machine>& machines,
                                        const PredictOptions& options) {
  std::vector<KernelTotals> totals;
  for (const ProgramKernel& kernel : outcome.kernels) {
    KernelTotals total;
    total.kernel = &kernel;
    total.seconds.assign(machines.size(), 0);
    for (const KernelModel& model : kernel.counted) {
      total.fp32_flops += model.count("flops.fp32");
      total.fp64_flops += model.count("flops.fp64");
      total.global_load_bytes += model.count("memory.global.load.bytes");
      total.global_store_bytes += model.count("memory.global.store.bytes");
      total.dram_bytes += model.count("dram.read.bytes") + model.count("dram.write.bytes");
      std::vector<Prediction>& predictions = total.predictions.emplace_back();
      for (std::size_t m = 0; m < machines.size(); ++m) {
        predictions.push_back(predict(model, machines[m], options));
        total.seconds[m] += predictions.back().seconds;
      }
    }
    const double scale =
        kernel.counted.empty() ? 0 : double(kernel.launches) / double(kernel.counted.size());
    for (double* figure : {&total.fp32_flops, &total.fp64_flops, &total.global_load_bytes,
                           &total.global_store_bytes, &total.dram_bytes})
      *figure *= scale;
    for (double& seconds : total.seconds) seconds *= scale;
    totals.push_back(std::move(total));
  }
  return totals;
}

}  // namespace wavekit::model
