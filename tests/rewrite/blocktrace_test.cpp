// blocktrace end to end through the command line, on the corpus for gfx908, gfx90a and gfx942:
// `wavekit launch ORIGINAL --trace-sequence TRUTH` (the emulator's ground truth) and `wavekit
// launch REWRITTEN --tool-out FILES`, where every wave wrote its own file through the hostcall
// ring, must give the same directory: the same file names and, wave by wave, the same lines,
// the blocks of the device functions the kernel calls included. The tool's files must also equal
// the rewritten run's own --trace-sequence translated to original addresses, which is the only
// oracle for kernels whose sequences depend on the schedule (global_atomics).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "corpus_runs.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/isa/isa.h"
#include "wavekit/rewrite/arena.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::rewrite {
namespace {

// -O2 objects of every processor (the -O0 ones trace the same blocks, more slowly): a few
// hundred waves per kernel, each making a few hostcall requests. And -O0 calls.hip, whose
// recursive fibonacci calls itself through a target computed at run time.
std::vector<Case> cases() {
  return corpus_cases([](const corpus::CorpusObject& o) {
    return !o.fat_binary && !o.stripped &&
           (o.opt == "-O2" || (o.opt == "-O0" && o.name.starts_with("calls_")));
  });
}

// Kernels whose block sequences depend on how waves interleave (compare-and-swap retry loops):
// the rewritten kernel's waves interleave differently, so the original run is not the oracle;
// the rewritten run's own ground truth is.
bool schedule_dependent(const std::string& kernel) { return kernel == "global_atomics"; }

std::map<std::string, std::string> read_directory(const std::filesystem::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::vector<std::uint8_t> bytes = read_file(entry.path().string());
    files[entry.path().filename().string()] = std::string(bytes.begin(), bytes.end());
  }
  return files;
}

// The emulator's block sequence of the REWRITTEN run (`wavekit launch REWRITTEN
// --trace-sequence`), as the lines the tool should have written. A block in `relocated` (the
// kernel's and its callees' copies) stands for the original instruction it starts at or
// precedes (the address map); where a block only falls through into the next one and both stand
// for the same instruction (the prologue, then the first block's own code when a branch targets
// it), the later one is the block. A block that ends in a probe call (an s_swappc_b64 of
// inserted code) is followed by the probe library's blocks, whose addresses may coincide with
// the rewritten object's, until the call returns: those, and the block that starts at the
// return (not a block of the original), are dropped; where that block ends in a probe call too
// (kernel_exit's, before s_endpgm), so are the next call's. Anything else outside `relocated`
// ran at its original address, uninstrumented: it is kept as it is, so that the comparison fails.
std::string translate_sequence(const std::string& text, const RewriteNote& note,
                               const codeobj::CodeObject& rewritten,
                               const codeobj::Section& relocated) {
  const isa::Decoder decoder(rewritten.target().processor);
  const std::uint64_t end = relocated.address + relocated.size;
  auto decode = [&](std::uint64_t address) {
    return decoder.decode(rewritten.read(address, std::min<std::uint64_t>(16, end - address)),
                          address);
  };
  auto original_instruction = [&](std::uint64_t address) {
    for (const AddressRange& range : note.address_map)
      if (range.new_address <= address && address < range.new_address + range.size) return true;
    return false;
  };
  // Block starts of the rewritten code by the emulator's rule, besides entries: branch targets,
  // after conditional branches and calls (the GOT at the end does not decode: skipped).
  std::set<std::uint64_t> leaders;
  for (std::uint64_t address = relocated.address; address < end;) {
    const std::optional<isa::Instruction> inst = decode(address);
    if (!inst) {
      address += 4;
      continue;
    }
    if (inst->branch_target) leaders.insert(*inst->branch_target);
    if (inst->flow == isa::ControlFlow::conditional_branch || inst->flow == isa::ControlFlow::call)
      leaders.insert(address + inst->size);
    address += inst->size;
  }
  // How the block starting at `address` ends: in a probe call (where it returns to), by falling
  // into the next block (its start), or otherwise (neither).
  struct Ending {
    std::optional<std::uint64_t> probe_returns_to, falls_into;
  };
  auto ending = [&](std::uint64_t address) {
    Ending result;
    while (address < end) {
      const std::optional<isa::Instruction> inst = decode(address);
      if (!inst) break;
      if (inst->flow != isa::ControlFlow::none) {
        if (inst->flow == isa::ControlFlow::call && !original_instruction(inst->address))
          result.probe_returns_to = inst->address + inst->size;
        break;
      }
      address += inst->size;
      if (leaders.count(address)) {
        result.falls_into = address;
        break;
      }
    }
    return result;
  };
  struct Line {
    std::uint64_t address = 0;  // original (or, outside `relocated`, as run)
    std::optional<std::uint64_t> falls_into;
  };
  std::vector<Line> kept;
  std::optional<std::uint64_t> returns_to;  // inside a probe call until this block
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::uint64_t address = std::stoull(line, nullptr, 16);
    if (returns_to) {
      if (address == *returns_to) returns_to = ending(address).probe_returns_to;
      continue;
    }
    if (!relocated.contains_address(address)) {
      kept.push_back({address, std::nullopt});
      continue;
    }
    const std::optional<std::uint64_t> original = note.original_instruction_at_or_after(address);
    if (!original) continue;
    if (!kept.empty() && kept.back().falls_into == address && kept.back().address == *original)
      kept.pop_back();
    const Ending block = ending(address);
    kept.push_back({*original, block.falls_into});
    returns_to = block.probe_returns_to;
  }
  std::string lines;
  for (const Line& line : kept) lines += block_key(line.address) + "\n";
  return lines;
}

// Every file of `actual` equals the one of the same name in `expected`, and no file is extra.
void expect_same_files(const std::map<std::string, std::string>& actual,
                       const std::map<std::string, std::string>& expected,
                       const std::string& oracle) {
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(actual.size(), expected.size());
  std::size_t differing = 0;
  for (const auto& [name, text] : expected) {
    const auto found = actual.find(name);
    if (found == actual.end()) {
      ADD_FAILURE() << name << " is missing from the tool's files";
    } else if (found->second != text && ++differing <= 3) {
      ADD_FAILURE() << name << " differs\ntool:\n" << found->second << oracle << ":\n" << text;
    }
  }
  EXPECT_EQ(differing, 0u) << "against " << oracle;
}

// Rewrites `c` with blocktrace, launches original and rewritten with `inputs` over `grid`
// work-items and `block`, and compares the directories.
void check_against_ground_truth(const Case& c, const std::vector<corpus::Argument>& inputs,
                                const corpus::Dim3& grid, const corpus::Dim3& block,
                                const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(WAVEKIT_REWRITE_TEST_DIR) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "rewritten.co").string();
  const Command rewritten = run(std::string(WAVEKIT_CLI) + " rewrite " + c.path + " -o " + out +
                                " --tool blocktrace --kernel " + c.kernel);
  if (rewritten.status != 0) {
    // The refusals bbcount's test accepts: capabilities not done yet.
    if (rewritten.output.find("not instrumented yet") != std::string::npos ||
        rewritten.output.find("not supported yet") != std::string::npos)
      GTEST_SKIP() << rewritten.output;
    FAIL() << rewritten.output;
  }

  std::string launch_args = " --kernel " + c.kernel + " --threads 2";
  launch_args += " --grid " + std::to_string(grid.x) + "," + std::to_string(grid.y) + "," +
                 std::to_string(grid.z);
  launch_args += " --block " + std::to_string(block.x) + "," + std::to_string(block.y) + "," +
                 std::to_string(block.z);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const corpus::Argument& arg = inputs[i];
    if (arg.kind == corpus::Argument::Kind::buffer) {
      const std::string file = (dir / ("arg" + std::to_string(i) + ".in")).string();
      write_file(file, arg.bytes);
      launch_args += " --arg file:" + file;
      continue;
    }
    std::uint64_t value = 0;
    std::memcpy(&value, arg.bytes.data(), arg.bytes.size());
    launch_args += (arg.bytes.size() == 8 ? " --arg u64:" : " --arg u32:") + std::to_string(value);
  }
  const Command truth = run(std::string(WAVEKIT_CLI) + " launch " + c.path + launch_args +
                            " --trace-sequence " + (dir / "truth").string());
  ASSERT_EQ(truth.status, 0) << truth.output;
  const Command tool =
      run(std::string(WAVEKIT_CLI) + " launch " + out + launch_args + " --tool-out " +
          (dir / "files").string() + " --trace-sequence " + (dir / "rewritten_truth").string());
  ASSERT_EQ(tool.status, 0) << tool.output;
  const std::map<std::string, std::string> actual = read_directory(dir / "files");

  // The ground truth of the rewritten run itself, translated to original addresses: the oracle
  // whatever the schedule (compare-and-swap retry loops run as the rewritten waves interleave).
  const codeobj::CodeObject written = codeobj::CodeObject::parse(read_file(out), out);
  const std::optional<RewriteNote> note = find_note(written);
  ASSERT_TRUE(note);
  const codeobj::Section* relocated = written.section(".wavekit.text");
  ASSERT_NE(relocated, nullptr);
  std::map<std::string, std::string> same_run = read_directory(dir / "rewritten_truth");
  for (auto& [name, text] : same_run) text = translate_sequence(text, *note, written, *relocated);
  expect_same_files(actual, same_run, "ground truth of the same run");

  // The ground truth of the original run, whole: the callees' blocks are traced too (they run as
  // instrumented copies), under their original addresses.
  if (!schedule_dependent(c.kernel))
    expect_same_files(actual, read_directory(dir / "truth"), "ground truth");
}

class Blocktrace : public testing::TestWithParam<Case> {};

TEST_P(Blocktrace, EveryWaveFileIsTheGroundTruthSequence) {
  const Case& c = GetParam();
  const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
  check_against_ground_truth(c, k.make_inputs(5), k.grid_size(), k.block,
                             "blocktrace." + c.object + "." + c.kernel);
}

INSTANTIATE_TEST_SUITE_P(Corpus, Blocktrace, testing::ValuesIn(cases()), case_name);

// 320 waves of collatz_steps, whose loop makes each wave's sequence hundreds of lines: about 27
// requests per wave (the buffer flushed many times), 8,768 through one ring.
class BlocktraceManyWaves : public testing::TestWithParam<std::string> {};

TEST_P(BlocktraceManyWaves, LongSequencesStayInOrder) {
  const std::string object = "basic_" + GetParam() + "_O2_cov5";
  const std::string path = corpus::object(object).path;
  const corpus::CorpusKernel& k = corpus::kernel("collatz_steps");
  std::vector<corpus::Argument> inputs = k.make_inputs(9);
  const std::uint32_t n = 320 * 64;
  std::uint32_t state = 12345;
  inputs[0].bytes.resize(n * 4);
  for (std::uint32_t i = 0; i < n; ++i) {
    state = state * 1103515245u + 12345u;
    const std::uint32_t start = (state >> 8) % (1u << 20) + 1;
    std::memcpy(&inputs[0].bytes[i * 4], &start, 4);
  }
  inputs[1].bytes.assign(n * 4, 0);
  std::memcpy(inputs[2].bytes.data(), &n, 4);
  check_against_ground_truth({object, path, GetParam(), "collatz_steps"}, inputs, {n, 1, 1},
                             {256, 1, 1}, "blocktrace.many." + object);
}

INSTANTIATE_TEST_SUITE_P(Targets, BlocktraceManyWaves,
                         testing::Values("gfx908", "gfx90a", "gfx942"));

}  // namespace
}  // namespace wavekit::rewrite
