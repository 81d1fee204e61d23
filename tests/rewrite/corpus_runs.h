// What the rewriter's corpus tests share: running an oracle tool, and a launch request for a
// corpus kernel with its generated inputs.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/hsa/launch.h"
#include "wavekit/rewrite/launch.h"
#include "wavekit/rewrite/mutator.h"

namespace wavekit::rewrite {

// One kernel of one corpus object: the parameter of the rewriter's corpus tests.
struct Case {
  std::string object;  // corpus object name
  std::string path;
  std::string processor;
  std::string kernel;
};
inline void PrintTo(const Case& c, std::ostream* out) { *out << c.object << " " << c.kernel; }

// The kernels of every corpus object that `keep_object` accepts, and of those the ones
// `keep_kernel` accepts (default: all).
inline std::vector<Case> corpus_cases(
    const std::function<bool(const corpus::CorpusObject&)>& keep_object,
    const std::function<bool(const std::string&)>& keep_kernel = {}) {
  std::vector<Case> all;
  for (const corpus::CorpusObject& object : corpus::objects()) {
    if (!keep_object(object)) continue;
    for (const std::string& kernel : object.kernels)
      if (!keep_kernel || keep_kernel(kernel))
        all.push_back({object.name, object.path, object.targets.at(0), kernel});
  }
  return all;
}

inline std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string name = info.param.object + "_" + info.param.kernel;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

struct Command {
  int status = -1;
  std::string output;
};
inline Command run(const std::string& command) {
  Command result;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen((command + " 2>&1").c_str(), "r"), pclose);
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0) result.output.append(buffer, n);
  result.status = pclose(pipe.release());
  return result;
}

inline hsa::LaunchRequest request_for(const corpus::CorpusKernel& kernel,
                                      const std::vector<corpus::Argument>& args,
                                      const std::string& path) {
  hsa::LaunchRequest request;
  request.code_object = path;
  request.kernel = kernel.name;
  const corpus::Dim3 grid = kernel.grid_size();
  request.grid.size = {grid.x, grid.y, grid.z};
  request.grid.count = 3;
  request.block.size = {kernel.block.x, kernel.block.y, kernel.block.z};
  request.block.count = 3;
  for (const corpus::Argument& arg : args) {
    hsa::ArgumentSpec spec;
    spec.kind = arg.kind == corpus::Argument::Kind::buffer ? hsa::ArgumentSpec::Kind::file
                : arg.bytes.size() == 8                    ? hsa::ArgumentSpec::Kind::u64
                                                           : hsa::ArgumentSpec::Kind::u32;
    spec.text = arg.name;
    spec.bytes = arg.bytes;
    request.arguments.push_back(spec);
  }
  request.host_threads = 1;
  return request;
}

// Instrumentation must not change what a kernel computes: the rewritten run's buffers equal
// the original run's, argument by argument (every differing one is named).
inline testing::AssertionResult same_buffers(const hsa::LaunchOutcome& original,
                                             const hsa::LaunchOutcome& rewritten) {
  if (rewritten.buffers.size() != original.buffers.size())
    return testing::AssertionFailure()
           << rewritten.buffers.size() << " buffers after the rewritten run, "
           << original.buffers.size() << " after the original";
  std::string differing;
  for (std::size_t i = 0; i < original.buffers.size(); ++i)
    if (rewritten.buffers[i].first != original.buffers[i].first ||
        !(rewritten.buffers[i].second == original.buffers[i].second))
      differing += (differing.empty() ? "" : ", ") + std::to_string(original.buffers[i].first);
  if (differing.empty()) return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << "argument(s) " << differing << " differ after the rewritten run";
}

// The blocks a kernel's block points instrument, in the order of its block keys (and point
// ids): the kernel's own, then those of each device function relocated with it
// (KernelView::relocated_callees), by entry address. Device functions are relocated and
// instrumented with the kernel, so their blocks count too.
struct ReachedBlock {
  BlockView block;
  bool in_kernel = false;  // the kernel's own code (not a callee's)
};
inline std::vector<ReachedBlock> reached_blocks(const codeobj::CodeObject& object,
                                                const KernelView& kernel) {
  std::vector<ReachedBlock> reached;
  for (const BlockView& block : kernel.blocks) reached.push_back({block, true});
  const std::vector<FunctionView> functions = analyse_functions(object);
  for (std::uint64_t entry : kernel.relocated_callees)
    for (const FunctionView& function : functions)
      if (function.entry == entry)
        for (const BlockView& block : function.blocks) reached.push_back({block, false});
  return reached;
}

inline std::string block_key(std::uint64_t address) {
  char key[24];
  std::snprintf(key, sizeof key, "0x%llx", static_cast<unsigned long long>(address));
  return key;
}

// A directed kernel's two runs: the original at `original_path` with the emulator's ground
// truth, and the rewritten object at `rewritten_path` instrumented; both must succeed.
struct DirectedRuns {
  hsa::LaunchOutcome truth;
  ToolLaunchOutcome tool;
};
inline DirectedRuns run_directed(const hsa::LaunchRequest& request,
                                 const std::string& original_path,
                                 const std::string& rewritten_path) {
  DirectedRuns runs;
  hsa::LaunchRequest original = request;
  original.code_object = original_path;
  original.record_block_counts = true;
  runs.truth = hsa::launch(original);
  EXPECT_TRUE(runs.truth.ok) << runs.truth.error;
  hsa::LaunchRequest rewritten = request;
  rewritten.code_object = rewritten_path;
  runs.tool = launch_instrumented(rewritten);
  EXPECT_TRUE(runs.tool.launch.ok) << runs.tool.launch.error;
  return runs;
}

// Each of the `count` u32 words of both runs' only buffer is `expected(i)`.
inline void expect_words(const DirectedRuns& runs, unsigned count,
                         const std::function<std::uint32_t(unsigned)>& expected) {
  for (const hsa::LaunchOutcome* outcome : {&runs.truth, &runs.tool.launch}) {
    ASSERT_EQ(outcome->buffers.size(), 1u);
    const std::vector<std::uint8_t>& bytes = outcome->buffers[0].second;
    ASSERT_EQ(bytes.size(), 4u * count);
    for (unsigned i = 0; i < count; ++i) {
      std::uint32_t value;
      std::memcpy(&value, bytes.data() + 4 * i, 4);
      EXPECT_EQ(value, expected(i)) << "word " << i;
    }
  }
}

}  // namespace wavekit::rewrite
