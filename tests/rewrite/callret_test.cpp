// Probe calls end to end, through the callret tool: rewrite the corpus's calling kernels on
// every target, check the object with LLVM's tools (the GOT slot, its R_AMDGPU_ABS64 relocation
// against the undefined NOTYPE alias), run original and rewritten on the emulator with the
// probe library loaded alongside, and compare (a) every output buffer, bit for bit, and (b) the
// return values callret recorded with what the CPU computes the calls return, the calls inside
// device functions (fibonacci's recursion) included.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <sstream>

#include "corpus_runs.h"
#include "negative_controls.h"  // the rewriter's test-only seam (src/rewrite/src)
#include "wavekit/analysis/report.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/rewrite/launch.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/rewrite/probe_library.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::rewrite {
namespace {

// calls.hip's device functions, in wrapping 32-bit arithmetic as the GPU computes them.
std::int32_t polynomial(std::int32_t x, std::int32_t degree) {
  std::uint32_t result = 0;
  for (std::int32_t d = 0; d < degree; ++d)
    result = result * static_cast<std::uint32_t>(x) + static_cast<std::uint32_t>(d + 1);
  return static_cast<std::int32_t>(result);
}
std::int32_t mix(std::int32_t a, std::int32_t b) {
  return static_cast<std::int32_t>((static_cast<std::uint32_t>(a) * 31u) ^
                                   (static_cast<std::uint32_t>(b) + 17u));
}
std::int32_t fibonacci(std::int32_t n) { return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2); }

constexpr const char* kFibonacci = "_Z9fibonaccii";

// What a call to `callee` returns in a work-item whose input is `input`, for the calls of
// calls.hip's kernels; nullopt for other callees (at -O0 the work-item id is a call too).
std::optional<std::int32_t> expected_return(const std::string& callee, std::int32_t input) {
  const std::int32_t inner = polynomial(input, (input & 7) + 1);
  if (callee == "_Z10polynomialii") return inner;
  if (callee == "_Z3mixii") return mix(inner, input);
  if (callee == kFibonacci) return fibonacci(input);
  return std::nullopt;
}

// Every call site of the object, by the analysis library's call graph (names from .symtab):
// the function it lies in and the callee (empty when the target is computed at run time).
struct Site {
  std::string caller;
  std::string callee;
};
std::map<std::uint64_t, Site> call_sites_of(const std::string& path) {
  const codeobj::CodeObject object = codeobj::CodeObject::parse(read_file(path), path);
  const analysis::Program program = analysis::analyze(analysis::make_input(object));
  std::map<std::uint64_t, Site> sites;
  for (const analysis::Function& function : program.functions)
    for (const analysis::CallSite& call : function.calls)
      sites[call.address] = {function.name, call.target_name};
  return sites;
}

// The calls fibonacci makes (calls.hip: only to itself, whether or not the analysis resolves
// the target), by address.
std::vector<std::uint64_t> fibonacci_calls(const std::map<std::uint64_t, Site>& sites) {
  std::vector<std::uint64_t> calls;
  for (const auto& [address, site] : sites)
    if (site.caller == kFibonacci) calls.push_back(address);
  return calls;
}

// Whether callret reports the site: a callee expected_return knows, or a call in fibonacci.
bool checked(const Site& site) {
  return site.caller == kFibonacci || expected_return(site.callee, 0).has_value();
}

// One value per lane of a wave; nullopt where the lane is inactive.
using Lanes = std::array<std::optional<std::int32_t>, 64>;

// A callret record, as the probe folds the returns of one call site in one wave.
struct Record {
  std::uint64_t returns = 0, lanes = 0, hash = 0;
  std::uint32_t first_lane = 0;
  std::int32_t first_value = 0, low = 0, high = 0;
};

// Folds one return of a call (its active lanes' values) into the site's record; a call
// reached with no active lane makes the probe return without recording.
void fold(Record& record, const Lanes& values) {
  bool first_active = true;
  for (std::uint32_t lane = 0; lane < values.size(); ++lane) {
    if (!values[lane]) continue;
    const std::int32_t value = *values[lane];
    if (first_active && record.returns == 0) {
      record.first_lane = lane;
      record.first_value = record.low = record.high = value;
    }
    first_active = false;
    record.low = std::min(record.low, value);
    record.high = std::max(record.high, value);
    record.hash += callret_lane_hash(lane, static_cast<std::uint32_t>(value));
    ++record.lanes;
  }
  if (!first_active) ++record.returns;
}

// fibonacci as one wave runs it, lanes in lockstep: `n` for the active lanes; gives their
// results and folds every return of the calls it makes (recursively) into `records`, in the
// order the wave makes them. The compiled code has one of two shapes, told apart by its number
// of call sites (`sites`, by address):
// - two (-O0): the source's, fib(n - 1) at the first, fib(n - 2) at the second, each made by
//   the lanes with n >= 2;
// - one (-O2: LLVM turns the second call into a loop): while n >= 2, acc += fib(n - 1) and
//   n -= 2; the result is acc + n. Each iteration's call is made by the lanes still looping.
Lanes wave_fibonacci(const Lanes& n, const std::vector<std::uint64_t>& sites,
                     std::map<std::uint64_t, Record>& records) {
  auto minus = [](const Lanes& values, std::int32_t d) {
    Lanes result;
    for (std::size_t lane = 0; lane < values.size(); ++lane)
      if (values[lane] && *values[lane] >= 2) result[lane] = *values[lane] - d;
    return result;
  };
  auto any = [](const Lanes& values) {
    return std::any_of(values.begin(), values.end(), [](const auto& v) { return v.has_value(); });
  };
  Lanes result = n;  // n < 2 returns n
  if (sites.size() == 2) {
    const Lanes first_arguments = minus(n, 1), second_arguments = minus(n, 2);
    if (!any(first_arguments)) return result;
    const Lanes first = wave_fibonacci(first_arguments, sites, records);
    fold(records[sites[0]], first);
    const Lanes second = wave_fibonacci(second_arguments, sites, records);
    fold(records[sites[1]], second);
    for (std::size_t lane = 0; lane < n.size(); ++lane)
      if (first[lane]) result[lane] = *first[lane] + *second[lane];
    return result;
  }
  Lanes accumulated;
  for (std::size_t lane = 0; lane < n.size(); ++lane)
    if (n[lane]) accumulated[lane] = 0;
  Lanes current = n;
  for (Lanes arguments = minus(current, 1); any(arguments); arguments = minus(current, 1)) {
    const Lanes returned = wave_fibonacci(arguments, sites, records);
    fold(records[sites[0]], returned);
    for (std::size_t lane = 0; lane < n.size(); ++lane)
      if (returned[lane]) {
        *accumulated[lane] += *returned[lane];
        *current[lane] -= 2;
      }
  }
  for (std::size_t lane = 0; lane < n.size(); ++lane)
    if (n[lane]) result[lane] = *accumulated[lane] + *current[lane];
  return result;
}

std::vector<Case> cases() {
  return corpus_cases(
      [](const corpus::CorpusObject& o) {
        return o.source.find("calls") != std::string::npos && !o.fat_binary && !o.stripped;
      },
      [](const std::string& kernel) {
        return kernel == "call_chain" || kernel == "recursive_fib";
      });
}

std::string hex_key(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

// The report callret must give: per wave of the dispatch, per call site the returns the CPU
// simulation of the wave makes there: the kernel's calls, made once by the lanes inside the
// workgroup and below n, and fibonacci's recursive calls (wave_fibonacci). Sites that `checked`
// rejects are left out.
nlohmann::json expected_report(const corpus::CorpusKernel& k,
                               const std::vector<corpus::Argument>& args,
                               const std::vector<std::uint64_t>& sites,
                               const std::map<std::uint64_t, Site>& all_sites) {
  const std::int32_t* in = args[0].data<std::int32_t>();
  const std::uint32_t n = *args[2].data<std::uint32_t>();
  const std::uint32_t waves_per_group = (k.block.x + 63) / 64;
  const std::vector<std::uint64_t> in_fibonacci = fibonacci_calls(all_sites);
  nlohmann::json waves = nlohmann::json::array();
  for (std::uint32_t group = 0; group < k.grid.x; ++group)
    for (std::uint32_t wave = 0; wave < waves_per_group; ++wave) {
      Lanes inputs;
      for (std::uint32_t lane = 0; lane < 64; ++lane) {
        const std::uint32_t local = wave * 64 + lane, i = group * k.block.x + local;
        if (local < k.block.x && i < n) inputs[lane] = in[i];
      }
      std::map<std::uint64_t, Record> records;
      for (std::uint64_t site : sites) {
        const Site& call = all_sites.at(site);
        if (call.caller != k.name || !expected_return(call.callee, 0)) continue;
        Lanes returned;
        if (call.callee == kFibonacci) {
          // The model's results must be the function's: a wrong shape would not compute it.
          returned = wave_fibonacci(inputs, in_fibonacci, records);
          for (std::size_t lane = 0; lane < inputs.size(); ++lane)
            if (inputs[lane] && returned[lane] != fibonacci(*inputs[lane]))
              ADD_FAILURE() << "the wave model of fibonacci gives lane " << lane << " "
                            << returned[lane].value_or(-1) << ", not fibonacci(" << *inputs[lane]
                            << ")";
        } else {
          for (std::size_t lane = 0; lane < inputs.size(); ++lane)
            if (inputs[lane]) returned[lane] = *expected_return(call.callee, *inputs[lane]);
        }
        fold(records[site], returned);
      }
      nlohmann::json calls = nlohmann::json::object();
      for (const auto& [site, record] : records) {
        if (record.returns == 0) continue;
        calls[hex_key(site)] = {{"returns", record.returns},
                                {"lanes", record.lanes},
                                {"first_lane", record.first_lane},
                                {"first_value", record.first_value},
                                {"min", record.low},
                                {"max", record.high},
                                {"hash", hex_key(record.hash)}};
      }
      waves.push_back({{"id", group * waves_per_group + wave},
                       {"workgroup", {group, 0, 0}},
                       {"wave_in_workgroup", wave},
                       {"calls", calls}});
    }
  return {{"kernel", k.name}, {"waves", waves}};
}

std::string rewritten_path(const Case& c, const std::string& suffix) {
  const std::filesystem::path dir = WAVEKIT_REWRITE_TEST_DIR;
  std::filesystem::create_directories(dir);
  return (dir / (c.object + "." + c.kernel + suffix)).string();
}

// Rewrites with callret (its probe library for the case's processor); skips a refusal this
// build knows about.
std::optional<RewriteResult> rewrite_callret(const Case& c, const NegativeControls& options = {}) {
  const codeobj::CodeObject input = codeobj::CodeObject::parse(read_file(c.path), c.path);
  Plan plan = tool_plan("callret");
  plan.kernels = {c.kernel};
  plan.probe_library = tool_probe_library("callret", c.processor);
  return rewrite(input, plan, options);
}

class Callret : public testing::TestWithParam<Case> {};

TEST_P(Callret, RecordsWhatTheCallsReturnAndKeepsOutputs) {
  const Case& c = GetParam();
  RewriteResult result;
  try {
    result = *rewrite_callret(c);
  } catch (const Error& error) {
    FAIL() << error.what();
  }
  const std::string out = rewritten_path(c, ".callret.co");
  write_file(out, result.bytes);

  // Structure: the GOT slot lies in the new segment, its relocation is an R_AMDGPU_ABS64
  // against the probe's alias, which is an undefined NOTYPE GLOBAL dynamic symbol.
  const Command readelf =
      run(std::string(WAVEKIT_LLVM_READELF) + " -S -l -r --dyn-syms --notes -W " + out);
  ASSERT_EQ(readelf.status, 0) << readelf.output;
  EXPECT_EQ(readelf.output.find("warning"), std::string::npos) << readelf.output;
  const std::string alias = std::string(kProbeAliasPrefix) + "callret_record";
  EXPECT_NE(readelf.output.find("R_AMDGPU_ABS64"), std::string::npos) << readelf.output;
  bool undefined_notype = false;
  std::istringstream lines(readelf.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find(alias) != std::string::npos && line.find("NOTYPE") != std::string::npos &&
        line.find("GLOBAL") != std::string::npos && line.find("UND") != std::string::npos)
      undefined_notype = true;
  EXPECT_TRUE(undefined_notype) << readelf.output;
  codeobj::CodeObject written = codeobj::CodeObject::parse(result.bytes, out);
  const codeobj::Section* text = written.section(".wavekit.text");
  ASSERT_NE(text, nullptr);
  std::size_t relocations = 0;
  for (const codeobj::Relocation& relocation : written.relocations()) {
    if (relocation.symbol_name != alias) continue;
    ++relocations;
    EXPECT_EQ(relocation.type_name(), "R_AMDGPU_ABS64");
    EXPECT_TRUE(text->contains_address(relocation.offset));
    EXPECT_EQ(relocation.offset % 8, 0u);
  }
  EXPECT_EQ(relocations, 1u);
  const Command objdump = run(std::string(WAVEKIT_LLVM_OBJDUMP) + " -d --mcpu=" + c.processor +
                              " -j .wavekit.text " + out);
  ASSERT_EQ(objdump.status, 0) << objdump.output;
  EXPECT_NE(objdump.output.find("s_swappc_b64 s[30:31]"), std::string::npos);
  // Descriptor and note agree on what the probe calls grew.
  const codeobj::Kernel* kernel = written.find_kernel(c.kernel);
  ASSERT_NE(kernel, nullptr);
  const std::optional<codeobj::KernelMetadata> meta = written.metadata().find_kernel(c.kernel);
  ASSERT_TRUE(meta);
  EXPECT_EQ(meta->private_segment_fixed_size(), kernel->descriptor.private_segment_fixed_size);
  EXPECT_LE(meta->sgpr_count(), kernel->descriptor.sgpr_grant());
  EXPECT_LE(meta->vgpr_count(), kernel->descriptor.vgpr_grant(written.target()));
  EXPECT_TRUE(kernel->descriptor.enable_private_segment());
  const std::optional<RewriteNote> note = find_note(written);
  ASSERT_TRUE(note);
  EXPECT_EQ(note->probe_library, tool_probe_library("callret", c.processor));

  // Behaviour.
  const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
  const std::vector<corpus::Argument> inputs = k.make_inputs(11);
  const hsa::LaunchOutcome original = hsa::launch(request_for(k, inputs, c.path));
  ASSERT_TRUE(original.ok) << original.error;
  const ToolLaunchOutcome tool = launch_instrumented(request_for(k, inputs, out));
  ASSERT_TRUE(tool.launch.ok) << tool.launch.error;
  EXPECT_TRUE(same_buffers(original, tool.launch));
  const InstrumentedKernel* instrumented = note->find_kernel(c.kernel);
  ASSERT_NE(instrumented, nullptr);
  // The records: the kernel's call sites, then those of the functions it reaches (fibonacci's
  // recursive calls for recursive_fib: one site at -O2, two at -O0; see wave_fibonacci).
  const std::vector<std::uint64_t>& sites =
      instrumented->layout.find("call_returns")->variable.keys;
  const std::map<std::uint64_t, Site> all_sites = call_sites_of(c.path);
  const std::vector<std::uint64_t> in_fibonacci = fibonacci_calls(all_sites);
  std::size_t known = 0;
  for (std::uint64_t site : sites) known += checked(all_sites.at(site));
  if (c.kernel == "call_chain") {
    EXPECT_EQ(known, 2u);
  } else {
    ASSERT_TRUE(in_fibonacci.size() == 1 || in_fibonacci.size() == 2)
        << "fibonacci has " << in_fibonacci.size() << " call sites: a shape the CPU model lacks";
    EXPECT_EQ(known, 1 + in_fibonacci.size());
    for (std::uint64_t site : in_fibonacci)
      EXPECT_NE(std::find(sites.begin(), sites.end(), site), sites.end())
          << "fibonacci's call at " << hex_key(site) << " has no record";
  }
  nlohmann::json report = tool.report;
  for (nlohmann::json& wave : report["waves"])
    for (std::uint64_t site : sites)
      if (!checked(all_sites.at(site))) wave["calls"].erase(hex_key(site));
  const nlohmann::json expected = expected_report(k, inputs, sites, all_sites);
  EXPECT_EQ(report, expected) << "callret:\n"
                              << report.dump(1) << "\nexpected:\n"
                              << expected.dump(1);
}

INSTANTIATE_TEST_SUITE_P(Corpus, Callret, testing::ValuesIn(cases()), case_name);

// Negative control: an envelope that forgets to restore one register it saved must be noticed
// by the checks above (outputs or recorded values differ, or the run faults).
TEST(CallretNegativeControl, DroppingOneEnvelopeRestoreIsDetected) {
  for (const Case& c : cases()) {
    if (c.object != "calls_gfx90a_O2_cov5" || c.kernel != "call_chain") continue;
    NegativeControls broken;
    broken.test_skip_envelope_restore = true;
    const std::string out = rewritten_path(c, ".no_restore.co");
    write_file(out, rewrite_callret(c, broken)->bytes);
    const corpus::CorpusKernel& k = corpus::kernel(c.kernel);
    const std::vector<corpus::Argument> inputs = k.make_inputs(11);
    const hsa::LaunchOutcome original = hsa::launch(request_for(k, inputs, c.path));
    ASSERT_TRUE(original.ok) << original.error;
    const ToolLaunchOutcome tool = launch_instrumented(request_for(k, inputs, out));
    bool detected = !tool.launch.ok || !same_buffers(original, tool.launch);
    if (!detected) {
      const RewriteNote note = *find_note(codeobj::CodeObject::parse(read_file(out), out));
      const std::vector<std::uint64_t>& sites =
          note.find_kernel(c.kernel)->layout.find("call_returns")->variable.keys;
      detected = tool.report != expected_report(k, inputs, sites, call_sites_of(c.path));
    }
    EXPECT_TRUE(detected) << "an envelope without one of its restores went unnoticed";
    return;
  }
  FAIL() << "calls_gfx90a_O2_cov5 is not in the corpus";
}

}  // namespace
}  // namespace wavekit::rewrite
