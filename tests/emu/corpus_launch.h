// Runs a corpus kernel through the hsa part's `wavekit launch` library entry (shared loader,
// kernarg with hidden arguments, dispatch packet) and copies its buffers back.
#pragma once

#include <optional>

#include "wavekit/corpus/corpus.h"
#include "wavekit/hsa/launch.h"

namespace wavekit::emu::test {

inline wavekit::hsa::ArgumentSpec to_spec(const wavekit::corpus::Argument& argument) {
  using wavekit::corpus::ElementType;
  using Kind = wavekit::hsa::ArgumentSpec::Kind;
  wavekit::hsa::ArgumentSpec spec;
  spec.bytes = argument.bytes;
  spec.text = argument.name;
  if (argument.kind == wavekit::corpus::Argument::Kind::buffer) {
    spec.kind = Kind::file;
    return spec;
  }
  switch (argument.type) {
    case ElementType::i32:
      spec.kind = Kind::i32;
      break;
    case ElementType::u32:
      spec.kind = Kind::u32;
      break;
    case ElementType::i64:
      spec.kind = Kind::i64;
      break;
    case ElementType::u64:
      spec.kind = Kind::u64;
      break;
    case ElementType::f32:
      spec.kind = Kind::f32;
      break;
    case ElementType::f64:
      spec.kind = Kind::f64;
      break;
    case ElementType::f16:
      spec.kind = Kind::u32;
      break;  // no scalar f16 argument exists
  }
  return spec;
}

// Launches `kernel` of the object at `path` on `args` (buffers updated in place), with the
// emulator's fault injection when `inject` is given.
inline wavekit::hsa::LaunchOutcome launch_corpus_kernel(
    const std::string& path, const wavekit::corpus::CorpusKernel& kernel,
    std::vector<wavekit::corpus::Argument>& args, bool record_blocks = false,
    std::optional<wavekit::emu::FaultInjection> inject = std::nullopt) {
  wavekit::hsa::LaunchRequest request;
  request.code_object = path;
  request.kernel = kernel.name;
  auto grid = kernel.grid_size();
  request.grid.size = {grid.x, grid.y, grid.z};
  request.grid.count = grid.z > 1 ? 3 : grid.y > 1 ? 2 : 1;
  request.block.size = {kernel.block.x, kernel.block.y, kernel.block.z};
  request.block.count = request.grid.count;
  request.host_threads = 2;
  request.record_block_counts = record_blocks;
  request.inject = inject;
  for (const auto& argument : args) request.arguments.push_back(to_spec(argument));
  wavekit::hsa::LaunchOutcome outcome = wavekit::hsa::launch(request);
  for (const auto& [index, bytes] : outcome.buffers)
    if (bytes.size() == args[index].bytes.size()) args[index].bytes = bytes;
  return outcome;
}

}  // namespace wavekit::emu::test
