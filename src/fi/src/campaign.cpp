#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/fi/fi.h"
#include "wavekit/hsa/fault_injection.h"
#include "wavekit/preload/run.h"
#include "wavekit/rewrite/mutator.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"
#include "wavekit/support/process.h"
#include "wavekit/support/text.h"

namespace wavekit::fi {

namespace fs = std::filesystem;

namespace {

constexpr unsigned kNumberedSgprs = 102;

std::string text_of(const std::string& path) {
  if (!fs::exists(path)) return {};
  const std::vector<std::uint8_t> bytes = read_file(path);
  return {bytes.begin(), bytes.end()};
}

// An instruction the campaign may choose: it falls through (an after_instruction point can
// follow it) and writes at least one numbered VGPR or SGPR.
struct Candidate {
  std::uint64_t pc = 0;
  std::string text;
  Group group = Group::all;
  std::vector<std::pair<bool, unsigned>> destinations;  // (vgpr, register)
};

// "v2", "v[2:3]", "s4", "s[4:5]" -> the registers; nothing for anything else.
std::vector<std::pair<bool, unsigned>> registers_named(const std::string& text) {
  unsigned first = 0, last = 0;
  char bank = 0;
  if (std::sscanf(text.c_str(), "%c[%u:%u]", &bank, &first, &last) != 3) {
    char rest = 0;
    if (std::sscanf(text.c_str(), "%c%u%c", &bank, &first, &rest) != 2) return {};
    last = first;
  }
  if ((bank != 'v' && bank != 's') || last < first || last - first > 3 ||
      last >= (bank == 'v' ? 256u : kNumberedSgprs))
    return {};
  std::vector<std::pair<bool, unsigned>> registers;
  for (unsigned r = first; r <= last; ++r) registers.emplace_back(bank == 'v', r);
  return registers;
}

// A store's data registers, from its operands as LLVM prints them: FLAT/GLOBAL/SCRATCH and DS
// put the data after the address, MUBUF/MTBUF and SMEM first.
std::vector<std::pair<bool, unsigned>> store_data(const rewrite::InstructionView& inst) {
  std::vector<std::string> operands;
  std::string rest = inst.text.substr(std::min(inst.text.size(), inst.text.find(' ') + 1));
  for (std::size_t at; (at = rest.find(", ")) != std::string::npos; rest.erase(0, at + 2))
    operands.push_back(rest.substr(0, at));
  operands.push_back(rest);
  const bool data_second =
      inst.mnemonic.rfind("global_", 0) == 0 || inst.mnemonic.rfind("flat_", 0) == 0 ||
      inst.mnemonic.rfind("scratch_", 0) == 0 || inst.mnemonic.rfind("ds_", 0) == 0;
  std::vector<std::pair<bool, unsigned>> data;
  for (std::size_t i = data_second ? 1 : 0; i < operands.size(); ++i) {
    const auto named = registers_named(operands[i]);
    if (named.empty()) break;
    data.insert(data.end(), named.begin(), named.end());
    if (!inst.mnemonic.starts_with("ds_write2")) break;  // two data operands: ds_write2*
  }
  return data;
}

std::optional<Candidate> candidate(const rewrite::InstructionView& inst) {
  if (inst.is_branch || inst.is_call || inst.is_return || inst.is_tail_call || inst.is_end)
    return std::nullopt;
  Candidate c{inst.address, inst.text, Group::all, {}};
  if (inst.memory && inst.stores) {
    c.group = Group::store;
    c.destinations = store_data(inst);
    if (c.destinations.empty()) return std::nullopt;
    return c;
  }
  for (unsigned v = 0; v < 256; ++v)
    if (inst.writes.vgpr[v]) c.destinations.emplace_back(true, v);
  for (unsigned s = 0; s < kNumberedSgprs; ++s)
    if (inst.writes.sgpr[s]) c.destinations.emplace_back(false, s);
  if (c.destinations.empty()) return std::nullopt;
  if (inst.memory)
    c.group = Group::load;
  else
    c.group = inst.mnemonic.rfind("v_", 0) == 0 ? Group::valu : Group::salu;
  return c;
}

// Every (wave, block) of every profiled dispatch with the candidates of its block: the
// population, each block entry weighing its candidates.
struct Weighted {
  std::string kernel;
  std::uint64_t dispatch = 0;
  std::uint64_t wave = 0;
  std::uint64_t entries = 0;                 // times the wave entered the block
  const std::vector<Candidate>* candidates;  // of the block, in the chosen group
};

struct Population {
  std::map<std::pair<std::string, std::uint64_t>, std::vector<Candidate>> blocks;
  std::map<std::string, std::string> processor;  // kernel -> gfx of its object
  std::vector<std::string> excluded;             // kernels of objects with global variables
  std::vector<Weighted> entries;
  std::uint64_t total = 0;
};

std::string regex_escape(const std::string& text) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(text, special, R"(\$&)");
}

// The program alone on the emulator, its output into `stem`.stdout / .stderr (the golden run,
// and the emulator's own injection with --verify).
ChildProgram plain_run(const CampaignOptions& options, const Installation& installation,
                       const fs::path& stem, double timeout) {
  ChildProgram program;
  program.command = options.command;
  program.environment["LD_LIBRARY_PATH"] =
      prepend_path("LD_LIBRARY_PATH", installation.emulator_runtime_dir);
  if (!options.emulated_target.empty())
    program.environment["WAVEKIT_EMU_TARGET"] = options.emulated_target;
  program.tool = "wavekit fi";
  program.stdout_file = stem.string() + ".stdout";
  program.stderr_file = stem.string() + ".stderr";
  program.timeout_seconds = timeout;
  return program;
}

// The program under `wavekit run` (the shim's settings left to the caller), its output into
// DIR/stdout and DIR/stderr (the profile and each injection).
preload::RunOptions instrumented_run(const CampaignOptions& options, const fs::path& dir,
                                     double timeout) {
  preload::RunOptions run;
  run.emulated_target = options.emulated_target;
  run.command = options.command;
  run.stdout_file = (dir / "stdout").string();
  run.stderr_file = (dir / "stderr").string();
  run.timeout_seconds = timeout;
  return run;
}

Population profile(const CampaignOptions& options, const Installation& installation,
                   const std::string& golden_stdout, double timeout) {
  const fs::path dir = fs::path(options.work_directory) / "profile";
  fs::remove_all(dir);  // an earlier campaign's
  fs::create_directories(dir);
  preload::RunOptions run = instrumented_run(options, dir, timeout);
  run.shim.tool = "bbcount";
  run.shim.tool_out = (dir / "bbcount").string();
  run.shim.keep_objects = (dir / "objects").string();
  const preload::RunResult result = preload::run_application(
      run, {installation.preload_library, installation.emulator_runtime_dir});
  if (result.summary.is_null())
    throw Error("the profiling run left no report (does the program use the GPU through HSA?); " +
                run.stderr_file + " has its messages");
  if (result.exit_status != 0 || text_of(run.stdout_file) != golden_stdout)
    throw Error("under bbcount the program ran differently from its golden run (exit status " +
                std::to_string(result.exit_status) + "; " + run.stderr_file + ")");

  Population population;
  std::optional<std::regex> only;
  if (!options.kernel_regex.empty()) only.emplace(options.kernel_regex);
  // Each kernel's blocks, from the objects the program loaded (once each: a kernel rewritten at
  // its first dispatch has an entry of its own, naming its object's copy).
  std::set<std::string> read_objects;
  for (const auto& object : result.summary.value("objects", nlohmann::json::array())) {
    const std::string kept = object.value("kept", "");
    if (kept.empty()) continue;
    // Its kernels cannot run uninstrumented beside the instrumented ones (wavekit run says
    // why): every dispatch of the kernel would carry the probe, and the fault would repeat.
    if (object.value("global_variables", false)) {
      for (const auto& kernel : object.value("kernels", nlohmann::json::array()))
        population.excluded.push_back(kernel.get<std::string>());
      continue;
    }
    if (!read_objects.insert(kept).second) continue;
    const rewrite::Mutator mutator = rewrite::Mutator::open(read_file(kept), kept);
    for (const rewrite::KernelView& kernel : mutator.kernels()) {
      population.processor[kernel.name] = mutator.object().target().processor;
      for (const rewrite::BlockView& block : kernel.blocks) {
        std::vector<Candidate>& chosen = population.blocks[{kernel.name, block.start}];
        for (const rewrite::InstructionView& inst : block.instructions)
          if (auto c = candidate(inst);
              c && (c->group == options.group ||
                    (options.group == Group::all && c->group != Group::store)))
            chosen.push_back(std::move(*c));
      }
    }
  }
  for (const auto& dispatch : result.summary.value("dispatches", nlohmann::json::array())) {
    const std::string kernel = dispatch.value("kernel", "");
    if (only && !std::regex_search(kernel, *only)) continue;
    const std::string file = dispatch.value("file", "");
    if (file.empty() || !fs::exists(file)) continue;
    const nlohmann::json counts = nlohmann::json::parse(text_of(file));
    for (const auto& wave : counts.value("waves", nlohmann::json::array())) {
      const nlohmann::json blocks = wave.value("blocks", nlohmann::json::object());
      for (const auto& [start, entered] : blocks.items()) {
        const auto found = population.blocks.find({kernel, std::stoull(start, nullptr, 16)});
        if (found == population.blocks.end() || found->second.empty()) continue;
        Weighted weighted{kernel, dispatch.value("dispatch", std::uint64_t{0}),
                          wave.value("id", std::uint64_t{0}), entered.get<std::uint64_t>(),
                          &found->second};
        population.total += weighted.entries * found->second.size();
        population.entries.push_back(weighted);
      }
    }
  }
  if (population.total == 0 && !population.excluded.empty())
    throw Error(
        "the profile found no instruction to inject into: the kernels of objects with "
        "global variables (" +
        population.excluded.front() + (population.excluded.size() > 1 ? ", ..." : "") +
        ") are left out, since their other dispatches cannot run the original beside the "
        "instrumented object");
  if (population.total == 0)
    throw Error("the profile found no instruction to inject into" +
                std::string(options.kernel_regex.empty()
                                ? ""
                                : " in kernels matching '" + options.kernel_regex + "'") +
                (options.group == Group::all ? "" : " of group " + to_string(options.group)));
  return population;
}

// Uniform over the population's dynamic instances, then a destination dword, a bit and a lane.
Target choose(const Population& population, std::mt19937_64& random) {
  std::uint64_t pick =
      std::uniform_int_distribution<std::uint64_t>(0, population.total - 1)(random);
  for (const Weighted& entry : population.entries) {
    const std::uint64_t weight = entry.entries * entry.candidates->size();
    if (pick >= weight) {
      pick -= weight;
      continue;
    }
    const Candidate& chosen = (*entry.candidates)[pick % entry.candidates->size()];
    Target target;
    target.kernel = entry.kernel;
    target.dispatch = entry.dispatch;
    target.pc = chosen.pc;
    target.instruction = chosen.text;
    target.group = chosen.group;
    const auto& [vgpr, reg] = chosen.destinations[std::uniform_int_distribution<std::size_t>(
        0, chosen.destinations.size() - 1)(random)];
    target.vgpr = vgpr;
    target.reg = reg;
    target.bit = static_cast<unsigned>(std::uniform_int_distribution<unsigned>(0, 31)(random));
    target.wave = entry.wave;
    target.execution = pick / entry.candidates->size();
    target.lane_pick = static_cast<std::uint32_t>(random());
    target.read = chosen.group == Group::store;
    return target;
  }
  throw Error("internal: the population's weights do not add up");
}

nlohmann::json plan_for(const Target& target, const std::string& probe_library) {
  if (target.wave > 0xffffffffu || target.execution > 0xffffffffu)
    throw Error("fault injection: wave or execution beyond 32 bits");
  const auto constant = [](std::uint64_t value) {
    return nlohmann::json{{"kind", "constant"}, {"value", value}};
  };
  const std::string reg = (target.vgpr ? "v" : "s") + std::to_string(target.reg);
  const nlohmann::json reference = {{"kind", "register_reference"}, {"name", reg}};
  const nlohmann::json state = {{"kind", "variable"}, {"name", "fi"}};
  const nlohmann::json flip = {{"probe", "fi_flip"},
                               {"uniform", true},
                               {"args",
                                {reference,
                                 state,
                                 constant(target.wave),
                                 constant(target.execution),
                                 constant(target.lane_pick),
                                 constant(target.bit),
                                 {{"kind", "exec"}},
                                 constant(target.vgpr ? 1 : 0)}}};
  nlohmann::json points = nlohmann::json::array();
  if (target.read) {
    // Flipped before the store, put back after it: only the stored value is corrupted.
    const nlohmann::json restore = {{"probe", "fi_restore"},
                                    {"uniform", true},
                                    {"args", {reference, state, constant(target.wave)}}};
    points.push_back({{"where", "before_instruction"}, {"addresses", {target.pc}}, {"call", flip}});
    points.push_back(
        {{"where", "after_instruction"}, {"addresses", {target.pc}}, {"call", restore}});
  } else {
    points.push_back({{"where", "after_instruction"}, {"addresses", {target.pc}}, {"call", flip}});
  }
  return {{"tool", "fi"},
          {"kernels", {target.kernel}},
          {"probe_library", probe_library},
          {"variables", {{{"name", "fi"}, {"element_size", 8}, {"count", 5}}}},
          {"points", points}};
}

struct RunEnd {
  std::string stdout_text, stderr_text;
  int status = 0;
  int signal = 0;
  bool timed_out = false;
};

void classify(Injection& injection, const RunEnd& run, const CampaignResult& golden,
              double timeout) {
  if (run.timed_out) {
    injection.outcome = Outcome::due;
    injection.detail = "hang: killed after " + std::to_string(static_cast<int>(timeout)) + " s";
  } else if (run.signal) {
    injection.outcome = Outcome::due;
    injection.detail = "killed by " + describe_signal(run.signal);
  } else if (run.status != golden.golden_status) {
    injection.outcome = Outcome::due;
    injection.detail = "exit status " + std::to_string(run.status);
    if (run.stderr_text.find("wavekit emulator:") != std::string::npos)
      injection.detail += " (the emulator reported a fault)";
  } else if (run.stdout_text != golden.golden_stdout) {
    injection.outcome = Outcome::sdc;
    injection.detail = "stdout differs";
  } else {
    injection.outcome = Outcome::masked;
  }
}

// The probe's record of the chosen wave in the dispatch's result file (fi_probes.hip).
void read_record(Injection& injection, const std::string& result_file) {
  if (!fs::exists(result_file)) return;
  const nlohmann::json report = nlohmann::json::parse(text_of(result_file));
  for (const auto& wave : report.value("waves", nlohmann::json::array())) {
    if (wave.value("id", std::uint64_t{0}) != injection.target.wave) continue;
    const auto& state = wave["variables"]["fi"];
    const std::uint64_t status = state[1].get<std::uint64_t>();
    const std::uint64_t values = state[2].get<std::uint64_t>();
    injection.recorded = (status & 1) != 0;
    injection.flipped = (status & 2) != 0;
    injection.lane = static_cast<std::uint32_t>(status >> 32);
    injection.before = static_cast<std::uint32_t>(values);
    injection.after = static_cast<std::uint32_t>(values >> 32);
  }
}

RunEnd inject_with_probe(Injection& injection, const CampaignOptions& options,
                         const Installation& installation, const Population& population,
                         const fs::path& dir, double timeout) {
  const Target& target = injection.target;
  const std::string library =
      installation.probe_directory + "/fi." + population.processor.at(target.kernel) + ".co";
  write_file((dir / "plan.json").string(), plan_for(target, library).dump(1) + "\n");
  preload::RunOptions run = instrumented_run(options, dir, timeout);
  run.shim.tool = "custom";
  run.shim.plan_path = (dir / "plan.json").string();
  run.shim.probe_library = library;
  run.shim.tool_out = (dir / "out").string();
  run.shim.kernels = {target.kernel};
  run.shim.selection =
      "kernel=^" + regex_escape(target.kernel) + "$ dispatches=" + std::to_string(target.dispatch);
  const preload::RunResult result = preload::run_application(
      run, {installation.preload_library, installation.emulator_runtime_dir});
  read_record(
      injection,
      (dir / "out" / (target.kernel + "." + std::to_string(target.dispatch) + ".json")).string());
  return {text_of(run.stdout_file), text_of(run.stderr_file), result.exit_status, result.signal,
          result.timed_out};
}

// The same injection by the emulator, in a plain run; records where the two disagree.
void verify(Injection& injection, const RunEnd& probed, const CampaignOptions& options,
            const Installation& installation, const fs::path& dir, double timeout) {
  const Target& target = injection.target;
  hsa::KernelFaultInjection emulated{target.kernel,
                                     target.dispatch,
                                     {target.pc, target.wave, target.execution, target.vgpr,
                                      target.reg, target.bit, target.lane_pick, target.read}};
  ChildProgram program = plain_run(options, installation, dir / "emulator", timeout);
  program.environment["WAVEKIT_EMU_INJECT"] = hsa::to_string(emulated);
  const ProgramExit ended = run_program(program);
  const std::string err = text_of(program.stderr_file);
  // The emulator's own account (hsa::describe): which lane, which bit, the value before and
  // after. Values may differ between the two processes where they are addresses (allocations
  // land elsewhere); the lane, the bit and that exactly that bit changed must not.
  const std::string prefix = "wavekit emulator: fault injection in " + target.kernel +
                             " dispatch " + std::to_string(target.dispatch) + ": ";
  const std::size_t at = err.find(prefix);
  const std::string line =
      at == std::string::npos
          ? std::string()
          : err.substr(at + prefix.size(), err.find('\n', at) - at - prefix.size());
  char reg[16] = {};
  unsigned lane = 0, bit = 0, before = 0, after = 0;
  const bool flipped = target.vgpr
                           ? std::sscanf(line.c_str(), "injected: %15s lane %u bit %u: %x -> %x",
                                         reg, &lane, &bit, &before, &after) == 5
                           : std::sscanf(line.c_str(), "injected: %15s bit %u: %x -> %x", reg, &bit,
                                         &before, &after) == 4;
  std::vector<std::string> differences;
  const std::string emulator = line.empty() ? "nothing" : "'" + line + "'";
  if (!injection.recorded) {
    // The probe's record went with its faulting dispatch: the emulator must have flipped
    // something too, and the two runs must end alike.
    if (!flipped)
      differences.push_back("the rewritten run has no record, the emulator did " + emulator);
  } else if (flipped != injection.flipped ||
             (flipped && ((before ^ after) != (1u << target.bit) ||
                          (injection.before ^ injection.after) != (1u << target.bit) ||
                          (target.vgpr && lane != injection.lane)))) {
    emu::InjectedFault probe{true, injection.flipped, injection.lane, injection.before,
                             injection.after};
    differences.push_back("the probe did '" + hsa::describe(emulated, probe) + "', the emulator " +
                          emulator);
  }
  if (ended.timed_out != probed.timed_out || ended.status != probed.status)
    injection.outcome_difference = "exit status " + std::to_string(ended.status) +
                                   " with the emulator's injection, " +
                                   std::to_string(probed.status) + " with the probe's";
  else if (!ended.timed_out && text_of(program.stdout_file) != probed.stdout_text)
    injection.outcome_difference = "stdout differs between the two runs";
  injection.verified = true;
  for (const std::string& difference : differences)
    injection.disagreement += (injection.disagreement.empty() ? "" : "; ") + difference;
}

}  // namespace

Group parse_group(const std::string& name) {
  for (Group group : {Group::all, Group::valu, Group::salu, Group::load, Group::store})
    if (to_string(group) == name) return group;
  throw Error("unknown instruction group '" + name + "' (known: all, valu, salu, load, store)");
}

std::string to_string(Group group) {
  switch (group) {
    case Group::all:
      return "all";
    case Group::valu:
      return "valu";
    case Group::salu:
      return "salu";
    case Group::load:
      return "load";
    case Group::store:
      return "store";
  }
  return "?";
}

std::string to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::masked:
      return "masked";
    case Outcome::sdc:
      return "SDC";
    case Outcome::due:
      return "DUE";
  }
  return "?";
}

CampaignResult run_campaign(const CampaignOptions& options, const Installation& installation,
                            const std::function<void(const CampaignResult&)>& progress) {
  if (options.command.empty()) throw Error("no application to run");
  if (options.work_directory.empty()) throw Error("no work directory");
  fs::create_directories(options.work_directory);
  const fs::path work = options.work_directory;

  // 1. The golden run.
  CampaignResult result;
  const ChildProgram golden = plain_run(options, installation, work / "golden", 0);
  const auto started = std::chrono::steady_clock::now();
  const ProgramExit ended = run_program(golden);
  const double golden_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (ended.status != 0)
    throw Error("the golden run (the program alone on the emulator) ended with status " +
                std::to_string(ended.status) + "; see " + golden.stderr_file);
  result.golden_stdout = text_of(golden.stdout_file);
  result.golden_status = ended.status;
  const double timeout =
      options.timeout_seconds > 0 ? options.timeout_seconds : std::max(20.0, 10 * golden_seconds);

  // 2. The profile, and the injections' targets (drawn up front: the campaign is the seed's).
  const Population population = profile(options, installation, result.golden_stdout, timeout);
  result.population = population.total;
  result.excluded_kernels = population.excluded;
  std::mt19937_64 random(options.seed);
  result.injections.resize(options.injections);
  for (Injection& injection : result.injections) injection.target = choose(population, random);

  // 3. The runs, `jobs` at a time.
  const unsigned jobs =
      options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::atomic<std::size_t> next{0};
  std::mutex reporting;
  std::exception_ptr failure;
  CampaignResult partial = result;
  partial.injections.clear();
  const auto worker = [&] {
    for (std::size_t i; (i = next++) < result.injections.size();) {
      Injection& injection = result.injections[i];
      try {
        const fs::path dir = work / ("injection-" + std::to_string(i));
        fs::remove_all(dir);  // an earlier campaign's
        fs::create_directories(dir);
        const RunEnd probed =
            inject_with_probe(injection, options, installation, population, dir, timeout);
        classify(injection, probed, result, timeout);
        if (options.verify) verify(injection, probed, options, installation, dir, timeout);
      } catch (...) {
        std::lock_guard lock(reporting);
        if (!failure) failure = std::current_exception();
        next = result.injections.size();
      }
      std::lock_guard lock(reporting);
      partial.injections.push_back(injection);
      if (progress) progress(partial);
    }
  };
  std::vector<std::thread> workers;
  for (unsigned j = 0; j < jobs; ++j) workers.emplace_back(worker);
  for (std::thread& thread : workers) thread.join();
  if (failure) std::rethrow_exception(failure);
  return result;
}

std::pair<double, double> wilson_interval(std::uint64_t successes, std::uint64_t trials) {
  if (trials == 0) return {0, 1};
  const double z = 1.959963984540054;
  const double n = static_cast<double>(trials), p = static_cast<double>(successes) / n;
  const double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n);
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

namespace {

struct Tally {
  std::uint64_t counts[3] = {0, 0, 0};
  std::uint64_t total() const { return counts[0] + counts[1] + counts[2]; }
};

std::string rate(std::uint64_t k, std::uint64_t n) {
  const auto [low, high] = wilson_interval(k, n);
  char text[64];
  std::snprintf(text, sizeof text, "%5.1f %% [%4.1f, %5.1f]", n ? 100.0 * k / n : 0.0, 100 * low,
                100 * high);
  return text;
}

}  // namespace

std::string summary_table(const CampaignResult& result) {
  std::map<std::string, Tally> by_kernel, by_group;
  Tally all;
  for (const Injection& injection : result.injections) {
    const int o = static_cast<int>(injection.outcome);
    ++by_kernel[injection.target.kernel].counts[o];
    ++by_group[to_string(injection.target.group)].counts[o];
    ++all.counts[o];
  }
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%-28s %6s  %-24s %-24s %-24s\n", "", "runs", "masked [95% CI]",
                "SDC [95% CI]", "DUE [95% CI]");
  out << line;
  const auto row = [&](const std::string& name, const Tally& tally) {
    std::snprintf(line, sizeof line, "%-28s %6llu  %-24s %-24s %-24s\n", name.c_str(),
                  static_cast<unsigned long long>(tally.total()),
                  rate(tally.counts[0], tally.total()).c_str(),
                  rate(tally.counts[1], tally.total()).c_str(),
                  rate(tally.counts[2], tally.total()).c_str());
    out << line;
  };
  for (const auto& [kernel, tally] : by_kernel) row("kernel " + kernel, tally);
  for (const auto& [group, tally] : by_group) row("group " + group, tally);
  row("all", all);
  return out.str();
}

nlohmann::json CampaignResult::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const Injection& injection : injections) {
    const Target& t = injection.target;
    nlohmann::json entry = {{"kernel", t.kernel},
                            {"dispatch", t.dispatch},
                            {"pc", hex(t.pc)},
                            {"instruction", t.instruction},
                            {"group", to_string(t.group)},
                            {"register", (t.vgpr ? "v" : "s") + std::to_string(t.reg)},
                            {"bit", t.bit},
                            {"wave", t.wave},
                            {"execution", t.execution},
                            {"lane_pick", t.lane_pick},
                            {"mode", t.read ? "read" : "after"},
                            {"flipped", injection.flipped},
                            {"outcome", to_string(injection.outcome)}};
    entry["recorded"] = injection.recorded;
    if (injection.flipped) {
      if (t.vgpr) entry["lane"] = injection.lane;
      entry["before"] = hex(injection.before);
      entry["after"] = hex(injection.after);
    }
    if (!injection.detail.empty()) entry["detail"] = injection.detail;
    if (injection.verified) entry["emulator_agrees"] = injection.disagreement.empty();
    if (!injection.disagreement.empty()) entry["disagreement"] = injection.disagreement;
    if (!injection.outcome_difference.empty())
      entry["outcome_difference"] = injection.outcome_difference;
    list.push_back(entry);
  }
  return {{"golden_status", golden_status},
          {"population", population},
          {"excluded_kernels", excluded_kernels},
          {"injections", list}};
}

}  // namespace wavekit::fi
