// What the end-to-end tests of `wavekit run` share: running command lines, the example
// programs, and the emulator's own ground truth of a plain run with its comparisons.
#pragma once

#include <cstddef>
#include <filesystem>
#include <set>
#include <string>

namespace wavekit::preload_tests {

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

// A fresh directory for one test (removed first if an earlier run left it).
std::filesystem::path scratch(const std::string& name);
std::string slurp(const std::filesystem::path& path);

// Runs a shell command line; stdout and stderr are kept apart.
Outcome shell(const std::string& command);

// A program or object of examples/hsa's build; the emulator's runtime directory.
std::string example(const std::string& name);
std::string runtime_dir();
// The program on the emulator without wavekit; under `wavekit run OPTIONS`.
Outcome plain(const std::string& program_and_args);
Outcome instrumented(const std::string& options, const std::string& program_and_args);

// Lines the shim itself printed ("wavekit: ...") that mention `what`; `wavekit run`'s summary
// repeats them as notes, which do not count.
std::size_t shim_messages(const std::string& err, const std::string& what);

// The emulator's own ground truth of every dispatch of a program run plainly, without wavekit:
// with WAVEKIT_EMU_TRACE_BLOCKS and WAVEKIT_EMU_TRACE_SEQUENCE the emulator's HSA runtime
// writes per dispatch what `wavekit launch --trace-blocks` / `--trace-sequence` writes for one
// kernel (<kernel>.<n>.json, <kernel>.<n>/wave_<id>.txt). It knows nothing of the rewriter.
struct GroundTruth {
  Outcome run;
  std::filesystem::path blocks;
  std::filesystem::path sequences;
};
GroundTruth ground_truth(const std::string& program_and_args, const std::filesystem::path& dir);

// The names of the entries of `dir` that are directories, or files ending in `extension`.
std::set<std::string> entry_names(const std::filesystem::path& dir, const std::string& extension);

// bbcount's results equal the ground truth: the same <kernel>.<n>.json files, and in each the
// same kernel and, wave by wave, the same identity and block counts.
void expect_counts_equal(const std::filesystem::path& truth, const std::filesystem::path& tool);

// blocktrace's results equal the ground truth: the same <kernel>.<n> directories, each with
// the same wave_<id>.txt files, byte for byte.
void expect_sequences_equal(const std::filesystem::path& truth, const std::filesystem::path& tool);

}  // namespace wavekit::preload_tests
