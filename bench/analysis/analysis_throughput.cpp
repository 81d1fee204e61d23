// Throughput of decode, decode + CFG (analyze) and decode + CFG + liveness, in instructions per
// CPU second, on the largest corpus object and on a generated ~1M-instruction program; plus, for
// the corpus object, the ratio to llvm-objdump-22 -d on the same file. All ratios come from one
// run on one machine.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include "../../tests/analysis/program_input.h"
#include "../../tests/isa/corpus_elf.h"
#include "wavekit/analysis/analysis.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/isa/isa.h"

namespace {

// CPU seconds (user + system) of this process and of its finished children: on a machine
// shared by several people, CPU time is far steadier than wall time.
double cpu_seconds() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(self.ru_utime) + seconds(self.ru_stime) + seconds(children.ru_utime) +
         seconds(children.ru_stime);
}

// Best of `repeats` measurements, in CPU seconds per run of `work`: the least disturbed by the
// other users of the machine. Each measurement repeats `work` until it has taken 0.2 s, so that
// small inputs are measured above the clock's resolution.
template <typename Work>
double best_seconds(int repeats, Work&& work) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    double start = cpu_seconds(), elapsed = 0;
    int runs = 0;
    do {
      work();
      ++runs;
      elapsed = cpu_seconds() - start;
    } while (elapsed < 0.2);
    best = std::min(best, elapsed / runs);
  }
  return best;
}

struct Workload {
  std::string name;
  wavekit::analysis::ProgramInput input;
  std::string objdump_command;  // llvm-objdump-22 on the same bytes ("" when it cannot read them)
};

void measure(const Workload& workload, int repeats) {
  wavekit::isa::Decoder decoder(workload.input.processor);
  std::size_t instructions = 0;
  double decode = best_seconds(repeats, [&] {
    instructions = 0;
    for (const auto& range : workload.input.code) {
      instructions += decoder.decode_range(range.bytes, range.address).instructions.size();
    }
  });
  std::size_t functions = 0, blocks = 0;
  double cfg = best_seconds(repeats, [&] {
    auto program = wavekit::analysis::analyze(workload.input);
    functions = program.functions.size();
    blocks = 0;
    for (const auto& f : program.functions) blocks += f.blocks.size();
  });
  double full = best_seconds(repeats, [&] {
    auto program = wavekit::analysis::analyze(workload.input);
    wavekit::analysis::Liveness liveness(program);
  });
  double objdump = 0;
  if (!workload.objdump_command.empty()) {
    objdump = best_seconds(repeats, [&] {
      if (std::system((workload.objdump_command + " > /dev/null").c_str()) != 0) {
        std::cerr << "objdump failed: " << workload.objdump_command << "\n";
      }
    });
  }
  auto rate = [&](double seconds) { return static_cast<double>(instructions) / seconds; };
  std::printf("%s: %zu instructions, %zu functions, %zu blocks\n", workload.name.c_str(),
              instructions, functions, blocks);
  std::printf("  %-34s %12.0f instr/s  (%.3f s)\n", "decode", rate(decode), decode);
  std::printf("  %-34s %12.0f instr/s  (%.3f s)  %.2fx decode time\n", "decode + CFG", rate(cfg),
              cfg, cfg / decode);
  std::printf("  %-34s %12.0f instr/s  (%.3f s)  %.2fx decode time\n", "decode + CFG + liveness",
              rate(full), full, full / decode);
  if (objdump > 0) {
    std::printf("  %-34s %12.0f instr/s  (%.3f s)  decode+CFG+liveness is %.2fx its speed\n",
                "llvm-objdump-22 -d (text output)", rate(objdump), objdump, objdump / full);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  std::string objdump = WAVEKIT_LLVM_OBJDUMP;

  // The largest corpus code object (by .text size).
  const wavekit::corpus::CorpusObject* largest = nullptr;
  std::size_t largest_size = 0;
  for (const auto& object : wavekit::corpus::objects()) {
    if (object.fat_binary) continue;
    auto text = wavekit::testing::read_text_section(object.path);
    if (text.bytes.size() > largest_size) {
      largest_size = text.bytes.size();
      largest = &object;
    }
  }
  auto loaded = wavekit::testing::load_program_input(largest->path, largest->targets.front());
  measure(
      {"largest corpus object " + largest->name, loaded.input, objdump + " -d " + largest->path},
      repeats);

  // ~1M instructions: the largest object's code repeated, each copy's kernels and functions
  // entered at their shifted addresses (branches are PC-relative, so every copy is valid code).
  const std::uint64_t base = loaded.input.code.front().address;
  std::span<const std::uint8_t> text = loaded.input.code.front().bytes;
  std::size_t per_copy =
      wavekit::isa::Decoder(largest->targets.front()).decode_range(text, base).instructions.size();
  std::size_t copies = (1000000 + per_copy - 1) / per_copy;
  std::vector<std::uint8_t> big;
  big.reserve(copies * text.size());
  wavekit::analysis::ProgramInput generated;
  generated.processor = largest->targets.front();
  for (std::size_t c = 0; c < copies; ++c) {
    std::uint64_t shift = c * text.size();
    big.insert(big.end(), text.begin(), text.end());
    for (const auto& kernel : loaded.input.kernels) {
      generated.kernels.push_back({kernel.name + "." + std::to_string(c), kernel.entry + shift});
    }
    for (const auto& function : loaded.input.functions) {
      generated.functions.push_back(
          {function.name + "." + std::to_string(c), function.address + shift, function.size});
    }
  }
  generated.code.push_back({base, big});
  // (llvm-objdump-22 reads only object files, so the generated program has no objdump row.)
  measure(
      {"generated (" + std::to_string(copies) + " copies of " + largest->name + ")", generated, ""},
      repeats);
  return 0;
}
