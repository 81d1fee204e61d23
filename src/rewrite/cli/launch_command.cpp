// `wavekit launch`: run one kernel of a code object on the emulator, with arguments from the
// command line, and write its buffers and ground-truth block traces. A rewritten object (one
// that carries a WAVEKIT note) gets its per-wave arena and its tool's report (--tool-out); the
// command lives in the rewrite part for that reason, above the hsa part that runs kernels.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "wavekit/cli/options.h"
#include "wavekit/cli/subcommand.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/hsa/launch.h"
#include "wavekit/rewrite/launch.h"
#include "wavekit/rewrite/tools.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace {

using wavekit::cli::UsageError;

unsigned parse_count(const char* option, const std::string& text) {
  std::uint64_t value = wavekit::cli::parse_unsigned(option, text);
  if (value > (1u << 20))
    throw UsageError(std::string(option) + ": " + text + " is out of range (0 to 1048576)");
  return static_cast<unsigned>(value);
}

std::uint64_t parse_instruction_budget(const std::string& text) {
  const std::uint64_t value = wavekit::cli::parse_unsigned("--max-instructions", text);
  if (value == 0) throw UsageError("--max-instructions: must be at least 1");
  return value;
}

double parse_seconds(const char* option, const std::string& text) {
  const double value = wavekit::cli::parse_double(option, text);
  if (!(value > 0) || !std::isfinite(value))
    throw UsageError(std::string(option) + ": " + text + " is not a positive number of seconds");
  return value;
}

bool is_wave_file(const std::string& name) {
  return name.size() > 9 && name.rfind("wave_", 0) == 0 && name.ends_with(".txt") &&
         name.find_first_not_of("0123456789", 5) == name.size() - 4;
}

// A file-writing tool's probes write a dispatch's files under a subdirectory named after its
// kernarg segment (tool_files_subdirectory).
bool is_dispatch_directory(const std::filesystem::directory_entry& entry) {
  const std::string name = entry.path().filename().string();
  return entry.is_directory() && name.size() > 1 && name[0] == 'k' &&
         name.find_first_not_of("0123456789abcdef", 1) == std::string::npos;
}

// A directory of per-wave files (--trace-sequence, blocktrace's --tool-out) is this run's
// result alone: the wave files and dispatch subdirectories an earlier run left there would
// otherwise mix with this run's (an earlier run with more waves leaves files this one does not
// overwrite). They are removed, and the user is told; other files stay.
void remove_earlier_wave_files(const std::string& option, const std::filesystem::path& directory) {
  std::error_code missing;
  if (!std::filesystem::is_directory(directory, missing)) return;
  std::vector<std::filesystem::path> earlier;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    if (is_dispatch_directory(entry) ||
        (entry.is_regular_file() && is_wave_file(entry.path().filename().string())))
      earlier.push_back(entry.path());
  for (const std::filesystem::path& path : earlier) std::filesystem::remove_all(path);
  if (!earlier.empty())
    std::cerr << "wavekit launch: " << option << " " << directory.string() << ": removed "
              << earlier.size() << " wave file" << (earlier.size() == 1 ? "" : "s")
              << " or directories of an earlier run\n";
}

// This launch made one dispatch, so its probes' files move up out of their subdirectory.
void collect_tool_files(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> dispatches;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    if (is_dispatch_directory(entry)) dispatches.push_back(entry.path());
  for (const std::filesystem::path& dispatch : dispatches) {
    for (const auto& file : std::filesystem::directory_iterator(dispatch))
      std::filesystem::rename(file.path(), directory / file.path().filename());
    std::filesystem::remove(dispatch);
  }
}

int run_launch(wavekit::cli::Arguments args) {
  std::string code_object, kernel, grid, block, out_dir, trace_blocks, trace_sequence, trace_memory,
      threads, max_resident, tool_out, max_instructions, timeout, lds;
  std::vector<std::string> arg_specs, libraries;
  bool stats = false, check_bounds = false;
  wavekit::cli::OptionParser parser(
      "wavekit launch",
      "Runs one kernel of an AMDGPU code object (gfx908, gfx90a, gfx942) on wavekit's emulator.\n"
      "Arguments are matched in order to the kernel's explicit arguments in the metadata note;\n"
      "hidden arguments (block counts, group sizes, ...) are filled as a HIP runtime would.\n\n"
      "argument specs:\n"
      "  file:PATH    a buffer holding the file's bytes (its pointer is passed)\n"
      "  zeros:BYTES  a zeroed buffer of BYTES bytes\n"
      "  i32:V u32:V i64:V u64:V f32:V f64:V   a scalar passed by value (integers: decimal or "
      "0x)\n"
      "  struct:T:V,T:V,...  a struct passed by value, fields laid out as C does (T: i8 u8 i16 "
      "u16\n"
      "               i32 u32 i64 u64 f32 f64), e.g. struct:i32:3,f32:0.5,u64:0x10\n\n"
      "examples:\n"
      "  wavekit launch add.co --kernel vector_add --grid 1024 --block 256 \\\n"
      "      --arg file:a.bin --arg file:b.bin --arg zeros:4096 --arg u32:1024 --out results\n"
      "  wavekit launch k.co --kernel transpose_2d --grid 208,112 --block 16,16 ... --trace-blocks "
      "t.json");
  parser.positional("CODE_OBJECT", &code_object, "the code object (.co / .hsaco)");
  parser.option("--kernel", &kernel, "NAME", "kernel to run (its name or NAME.kd; required)");
  parser.option("--grid", &grid, "X[,Y[,Z]]", "grid size in work-items per dimension (required)");
  parser.option("--block", &block, "X[,Y[,Z]]",
                "workgroup size in work-items per dimension (required)");
  parser.repeated("--library", &libraries, "CODE_OBJECT",
                  "also load this code object into the executable (e.g. a probe library)");
  parser.repeated("--arg", &arg_specs, "SPEC", "one kernel argument, in order (see above)");
  parser.option("--out", &out_dir, "DIR",
                "write buffer argument i to DIR/arg<i>.bin after the run (probes' hostcall file "
                "services write there too)");
  parser.option("--trace-blocks", &trace_blocks, "FILE",
                "write per-wave executed basic-block counts as JSON");
  parser.option("--trace-sequence", &trace_sequence, "DIR",
                "write DIR/wave_<id>.txt: executed block starts in order");
  parser.option("--trace-memory", &trace_memory, "FILE",
                "write per wave every executed memory instruction (original address, kind, EXEC) "
                "with its active lanes' addresses as JSON (docs/emu.md)");
  parser.option("--tool-out", &tool_out, "PATH",
                "a rewritten object: write its tool's report there (bbcount: the --trace-blocks "
                "JSON, keyed by original block addresses; blocktrace: PATH is the directory of "
                "the waves' files, the --trace-sequence format)");
  parser.option("--lds", &lds, "BYTES",
                "dynamic LDS per workgroup (HIP's dynamic shared memory), added to the kernel's "
                "own");
  parser.option("--threads", &threads, "N", "host threads (default: every core)");
  parser.option("--max-resident-waves", &max_resident, "N",
                "limit on resident waves (default: the emulator's)");
  parser.option("--max-instructions", &max_instructions, "N",
                "stop the dispatch after N wave-instructions, reporting where each wave stood "
                "(default: no limit; environment of HSA programs: WAVEKIT_EMU_MAX_INSTRUCTIONS)");
  parser.option("--timeout", &timeout, "SECONDS",
                "stop the dispatch after this much wall time, likewise (default: no limit; "
                "WAVEKIT_EMU_TIMEOUT)");
  parser.flag("--check-bounds", &check_bounds,
              "report any access past the bytes a buffer or the kernarg segment was given, "
              "which a GPU's page mapping lets through (default: a GPU's behaviour)");
  parser.flag("--stats", &stats,
              "print workgroups, waves, wave-instructions and time to stderr (and the hostcall "
              "service's statistics when probes used it)");
  if (auto exit_code = parser.parse(args)) return *exit_code;
  if (kernel.empty()) throw UsageError("--kernel is required");
  if (grid.empty()) throw UsageError("--grid is required");
  if (block.empty()) throw UsageError("--block is required");

  wavekit::hsa::LaunchRequest request;
  request.code_object = code_object;
  request.libraries = libraries;
  request.hostcall_file_root = out_dir;
  request.kernel = kernel;
  try {
    request.grid = wavekit::hsa::parse_dimensions("--grid", grid);
    request.block = wavekit::hsa::parse_dimensions("--block", block);
  } catch (const wavekit::Error& error) {
    throw UsageError(error.what());
  }
  for (const auto& spec : arg_specs)
    request.arguments.push_back(wavekit::hsa::parse_argument(spec));
  if (!threads.empty()) request.host_threads = parse_count("--threads", threads);
  if (!max_resident.empty())
    request.max_resident_waves = parse_count("--max-resident-waves", max_resident);
  if (!lds.empty()) {
    const std::uint64_t bytes = wavekit::cli::parse_unsigned("--lds", lds);
    if (bytes > 65536)
      throw UsageError("--lds: " + lds + " is more than the 64 KiB of a workgroup");
    request.dynamic_lds_bytes = static_cast<std::uint32_t>(bytes);
  }
  if (!max_instructions.empty())
    request.max_instructions = parse_instruction_budget(max_instructions);
  if (!timeout.empty()) request.max_seconds = parse_seconds("--timeout", timeout);
  request.exact_bounds = check_bounds;
  request.record_block_counts = !trace_blocks.empty();
  request.record_block_sequence = !trace_sequence.empty();
  request.record_memory_accesses = !trace_memory.empty();

  // A rewritten object needs its arena (the argument the rewriter appended) and has a report.
  bool instrumented = false, tool_files = false;
  try {
    const auto note = wavekit::rewrite::find_note(
        wavekit::codeobj::CodeObject::parse(wavekit::read_file(code_object), code_object));
    instrumented = note.has_value();
    tool_files = instrumented && wavekit::rewrite::tool_writes_files(note->tool);
  } catch (const wavekit::Error&) {
    // Not a readable code object: the launch below says precisely what is wrong with it.
  }
  if (!tool_out.empty() && !instrumented)
    throw UsageError(code_object +
                     " was not rewritten by wavekit (no WAVEKIT note), so it has no "
                     "tool report: rewrite it first (wavekit rewrite --tool ...)");
  // A tool that writes files (blocktrace) writes them from its probes, during the run: its
  // --tool-out is the file service's directory, in place of --out.
  if (tool_files && !tool_out.empty()) {
    remove_earlier_wave_files("--tool-out", tool_out);
    std::filesystem::create_directories(tool_out);
    request.hostcall_file_root = tool_out;
  }
  if (!trace_sequence.empty()) remove_earlier_wave_files("--trace-sequence", trace_sequence);
  wavekit::hsa::LaunchOutcome outcome;
  nlohmann::json report;
  if (instrumented) {
    wavekit::rewrite::ToolLaunchOutcome tool = wavekit::rewrite::launch_instrumented(request);
    outcome = std::move(tool.launch);
    report = std::move(tool.report);
  } else {
    outcome = wavekit::hsa::launch(request);
  }
  if (stats) {
    double rate = outcome.seconds > 0 ? outcome.instructions / outcome.seconds : 0;
    std::cerr << "kernel " << outcome.kernel << " (" << outcome.target
              << "): " << outcome.workgroups << " workgroups, " << outcome.waves << " waves ("
              << outcome.waves_per_workgroup << " per workgroup), " << outcome.instructions
              << " wave-instructions in " << outcome.seconds << " s (" << rate
              << " wave-instructions/s)\n";
    if (outcome.hostcall) std::cerr << "hostcall: " << outcome.hostcall->to_json() << "\n";
  }
  if (!outcome.ok) {
    std::cerr << "wavekit launch: " << outcome.error << "\n";
    return 1;
  }
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    for (const auto& [index, bytes] : outcome.buffers)
      wavekit::write_file(out_dir + "/arg" + std::to_string(index) + ".bin", bytes);
  }
  if (!trace_blocks.empty()) wavekit::write_file(trace_blocks, outcome.block_trace.dump(1) + "\n");
  if (!trace_sequence.empty())
    wavekit::hsa::write_block_sequences(trace_sequence, outcome.block_sequences);
  if (!trace_memory.empty()) wavekit::write_file(trace_memory, outcome.memory_trace.dump(1) + "\n");
  if (!tool_out.empty() && !tool_files) wavekit::write_file(tool_out, report.dump(1) + "\n");
  if (!tool_out.empty() && tool_files) collect_tool_files(tool_out);
  return 0;
}

}  // namespace

WAVEKIT_SUBCOMMAND("launch", "run one kernel of a code object on the emulator", run_launch);
