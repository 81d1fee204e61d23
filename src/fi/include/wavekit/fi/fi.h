// `wavekit fi`: a fault-injection campaign on an unmodified GPU application, NVBitFI's method on
// wavekit's state-changing instrumentation:
//
//   1. a golden run (the program alone on the emulator: its stdout and exit status);
//   2. a profiling run under `wavekit run --tool bbcount`: every wave's block counts in every
//      dispatch, which with the code of the objects it loaded give each instruction's dynamic
//      executions per wave;
//   3. N injections, each into one dynamic instance chosen uniformly over every execution, by
//      any wave of any dispatch, of an instruction of the chosen group that writes a register:
//      one bit of one 32-bit destination register (of one lane, for a VGPR) flipped right after
//      it, through a rewritten kernel whose probe takes the register by reference
//      (register_reference), in that one dispatch only (per-dispatch selection);
//   4. each run classified against the golden one: masked (same output and exit status),
//      silent data corruption (same exit status, other stdout), or detected/unrecoverable (other
//      exit status, a signal, an emulator fault, or a hang cut off by the time limit).
//
// With `verify`, each injection is also made by the emulator itself (WAVEKIT_EMU_INJECT,
// wavekit/hsa/fault_injection.h) in a plain run: the two runs must flip the same value to the
// same value and end alike, which proves that the rewriter changed exactly the chosen bit of
// the chosen instance.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace wavekit::fi {

// Instruction groups (NVBitFI's G_GP / G_FP32 / G_LD ...): what may be chosen. `all` is every
// instruction that writes a register (valu, salu, load); `store` flips the value a store writes
// to memory, the register keeping its own.
enum class Group { all, valu, salu, load, store };
Group parse_group(const std::string& name);  // throws wavekit::Error naming the known ones
std::string to_string(Group group);

enum class Outcome { masked, sdc, due };
std::string to_string(Outcome outcome);

// One dynamic instance and the bit to flip in it.
struct Target {
  std::string kernel;
  std::uint64_t dispatch = 0;  // the kernel's dispatch number, from 0
  std::uint64_t pc = 0;        // the instruction's original address
  std::string instruction;     // its text
  Group group = Group::all;    // its group (never `all`)
  bool vgpr = true;
  unsigned reg = 0;
  unsigned bit = 0;
  std::uint64_t wave = 0;       // linear wave id
  std::uint64_t execution = 0;  // the wave's execution of it, from 0
  std::uint32_t lane_pick = 0;  // a VGPR's lane: the (lane_pick mod n)-th of n active lanes
  bool read = false;            // store: the value the instruction reads, not its result
};

struct Injection {
  Target target;
  Outcome outcome = Outcome::masked;
  std::string detail;  // why it is not masked ("stdout differs", "exit status 1", ...)
  // The probe's record of what it did; lost (recorded false) when the dispatch it was in
  // faulted, since a faulting dispatch's per-wave memory is not read back.
  bool recorded = false;
  bool flipped = false;    // the probe flipped a bit (false: no lane was active there)
  std::uint32_t lane = 0;  // the lane it flipped (VGPRs)
  std::uint32_t before = 0, after = 0;
  // verify: whether the emulator's own injection flipped the same bit of the same value in the
  // same lane (`disagreement` says how not), and whether the two runs ended alike (they may
  // not where the faulty program's result depends on the schedule: a racy write after a
  // corrupted index, which the instrumented kernel's other timing resolves differently).
  bool verified = false;
  std::string disagreement;        // empty when the flips agree
  std::string outcome_difference;  // empty when both runs ended alike
};

struct CampaignOptions {
  std::vector<std::string> command;
  unsigned injections = 100;
  unsigned jobs = 0;  // parallel runs (0: the cores)
  std::uint64_t seed = 1;
  Group group = Group::all;
  std::string kernel_regex;    // only kernels it matches (ECMAScript, anywhere)
  double timeout_seconds = 0;  // per run (0: 10x the golden run, at least 20 s)
  bool verify = false;
  std::string work_directory;   // profile, plans and per-run files (kept)
  std::string emulated_target;  // WAVEKIT_EMU_TARGET ("" = the emulator's default)
};

struct CampaignResult {
  std::string golden_stdout;
  int golden_status = 0;
  std::uint64_t population = 0;  // dynamic instances it chose from
  // Kernels left out: their objects define global variables, so their other dispatches cannot
  // run the original kernel (docs/preload.md) and a fault would repeat in every dispatch.
  std::vector<std::string> excluded_kernels;
  std::vector<Injection> injections;
  nlohmann::json to_json() const;
};

// Where the runs find wavekit's parts (the CLI fills it from its installation).
struct Installation {
  std::string preload_library;
  std::string emulator_runtime_dir;
  std::string probe_directory;  // fi.<processor>.co
};

// Runs the campaign; `progress` (may be empty) is called after each injection. Throws
// wavekit::Error when the golden run fails, the profile finds nothing to inject into, or a run
// cannot be started.
CampaignResult run_campaign(const CampaignOptions& options, const Installation& installation,
                            const std::function<void(const CampaignResult&)>& progress = {});

// The outcome rates of a set of injections with Wilson 95 % intervals, per kernel and per
// group, as a readable table.
std::string summary_table(const CampaignResult& result);

// Wilson score interval of `successes` in `trials` at 95 %: {low, high}.
std::pair<double, double> wilson_interval(std::uint64_t successes, std::uint64_t trials);

}  // namespace wavekit::fi
