// `wavekit fi` end to end. The oracles are the emulator's own fault injection (a second,
// independent mechanism: WAVEKIT_EMU_INJECT flips the bit inside the emulator, in a plain run
// of the unmodified program), which must flip the same bit in the same lane of the same dynamic
// instance as the rewritten kernel's probe, and the programs' own checks (many_dispatches
// names every element that came out wrong and its expected value).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "wavekit/hsa/fault_injection.h"
#include "wavekit/support/error.h"

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Outcome shell(const std::string& command) {
  const fs::path err = fs::temp_directory_path() / ("wavekit-fi-err-" + std::to_string(getpid()));
  Outcome outcome;
  FILE* pipe = popen(("timeout 280 " + command + " 2>" + err.string()).c_str(), "r");
  if (!pipe) return outcome;
  char buffer[4096];
  while (std::size_t got = fread(buffer, 1, sizeof buffer, pipe)) outcome.out.append(buffer, got);
  const int status = pclose(pipe);
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.err = slurp(err);
  fs::remove(err);
  return outcome;
}

fs::path scratch(const std::string& name) {
  const fs::path path =
      fs::temp_directory_path() / ("wavekit-fi-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(path);
  fs::create_directories(path);
  return path;
}

std::string example(const std::string& name) {
  return std::string(WAVEKIT_HSA_EXAMPLES) + "/" + name;
}

// Runs a verified campaign and returns its JSON.
nlohmann::json campaign(const std::string& name, const std::string& options,
                        const std::string& program) {
  const fs::path dir = scratch(name);
  const Outcome run =
      shell(std::string(WAVEKIT_CLI) + " fi --verify --jobs 2 --out " + (dir / "work").string() +
            " --json " + (dir / "fi.json").string() + " " + options + " -- " + program);
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("against the emulator's own injection"), std::string::npos) << run.out;
  if (!fs::exists(dir / "fi.json")) return nullptr;
  nlohmann::json result = nlohmann::json::parse(slurp(dir / "fi.json"));
  fs::remove_all(dir);
  return result;
}

// Every injection: the emulator flipped the same bit (same lane for a VGPR); where the probe's
// record survived, exactly the chosen bit changed.
void expect_flips_agree(const nlohmann::json& result) {
  ASSERT_FALSE(result.is_null());
  for (const auto& injection : result["injections"]) {
    EXPECT_TRUE(injection.value("emulator_agrees", false)) << injection.dump();
    if (!injection.value("flipped", false)) continue;
    const auto value = [&](const char* key) {
      return std::stoul(injection[key].get<std::string>(), nullptr, 16);
    };
    EXPECT_EQ(value("before") ^ value("after"), 1ul << injection["bit"].get<unsigned>())
        << injection.dump();
  }
}

TEST(Campaign, EveryFlipIsTheEmulatorsOwn) {
  const nlohmann::json result =
      campaign("many", "--injections 24 --seed 7", example("many_dispatches"));
  expect_flips_agree(result);
  ASSERT_EQ(result["injections"].size(), 24u);
  std::set<std::string> outcomes, groups;
  for (const auto& injection : result["injections"]) {
    outcomes.insert(injection["outcome"].get<std::string>());
    groups.insert(injection["group"].get<std::string>());
    EXPECT_EQ(injection["kernel"], "scale_add");
    EXPECT_LT(injection["dispatch"].get<unsigned>(), 300u);
  }
  // many_dispatches checks every element and exits 1 when one is wrong: most flips are caught
  // (DUE), some are masked (a dead register, a bit the arithmetic drops).
  EXPECT_TRUE(outcomes.count("masked")) << result.dump(1);
  EXPECT_TRUE(outcomes.count("DUE")) << result.dump(1);
  EXPECT_EQ(groups, (std::set<std::string>{"load", "salu", "valu"}));
}

TEST(Campaign, AGroupLimitsTheChoice) {
  const nlohmann::json result =
      campaign("salu", "--injections 6 --group salu", example("divergent"));
  expect_flips_agree(result);
  for (const auto& injection : result["injections"]) {
    EXPECT_EQ(injection["group"], "salu") << injection.dump();
    EXPECT_EQ(injection["register"].get<std::string>()[0], 's') << injection.dump();
  }
}

// Store faults: the value a store writes is flipped (before the store, put back after it), in
// the emulator's read mode as in the probes'.
TEST(Campaign, StoreFaultsCorruptWhatIsStored) {
  const nlohmann::json result =
      campaign("store", "--injections 8 --group store", example("divergent"));
  expect_flips_agree(result);
  for (const auto& injection : result["injections"]) {
    EXPECT_EQ(injection["group"], "store") << injection.dump();
    EXPECT_EQ(injection["mode"], "read") << injection.dump();
    EXPECT_EQ(injection["instruction"].get<std::string>().rfind("global_store", 0), 0u);
    EXPECT_FALSE(injection.contains("outcome_difference")) << injection.dump();
  }
}

// An unmodified HIP program (Debian's hipcc and libamdhip64): its kernels, and CLR's own blit
// kernels for its copies, are injected into like any other.
TEST(Campaign, HipProgram) {
  const fs::path program = fs::path(WAVEKIT_HIP_PROGRAMS) / "vector_add";
  if (!fs::exists(program)) GTEST_SKIP() << program << " was not built (no hipcc)";
  expect_flips_agree(campaign("hip", "--injections 8", program.string()));
}

// The emulator's injection alone, against the program's own check: lane 3 of wave 2 of the
// last dispatch is element 131; bit 4 of the sum adds 16.
TEST(EmulatorInjection, FlipsExactlyTheNamedBitOfTheNamedLane) {
  const std::string runtime =
      std::string("env LD_LIBRARY_PATH=") + WAVEKIT_EMULATOR_RUNTIME_DIR_FOR_TESTS;
  // The last instruction before the store (v_add_u32 v2, s1, v2): find it the way a user
  // would, from the disassembly.
  const Outcome run = shell(runtime +
                            " WAVEKIT_EMU_INJECT='kernel=scale_add dispatch=299 pc=0x1968 wave=2 "
                            "execution=0 register=v2 bit=4 lane=3' " +
                            example("many_dispatches"));
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.out.find("1 wrong"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("fault injection in scale_add dispatch 299: injected: v2 lane 3 bit 4"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("data[131] = 447, expected 431"), std::string::npos) << run.err;
  const Outcome missed = shell(runtime +
                               " WAVEKIT_EMU_INJECT='kernel=scale_add dispatch=299 pc=0x1968 "
                               "wave=2 execution=1 register=v2 bit=4 lane=3' " +
                               example("many_dispatches"));
  EXPECT_EQ(missed.status, 0);
  EXPECT_NE(missed.err.find("not reached: wave 2 ran the instruction at 0x1968 fewer than 2 times"),
            std::string::npos)
      << missed.err;
}

TEST(EmulatorInjection, MalformedSpecificationsAreNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {"kernel=k dispatch=0 pc=0x10 wave=0 execution=0 register=v2 bit=4", "missing lane="},
      {"kernel=k dispatch=x pc=0x10 wave=0 execution=0 register=v2 bit=4 lane=0",
       "dispatch='x' is not a number"},
      {"kernel=k dispatch=0 pc=0x10 wave=0 execution=0 register=q2 bit=4 lane=0",
       "register='q2' is not vN or sN"},
      {"kernel=k dispatch=0 pc=0x10 wave=0 execution=0 register=s102 bit=4 lane=0",
       "beyond v255 / s101"},
      {"kernel=k dispatch=0 pc=0x10 wave=0 execution=0 register=v2 bit=32 lane=0",
       "bit=32 is beyond 31"},
      {"kernel=k dispatch=0 pc=0x10 wave=0 execution=0 register=v2 bit=3 lane=0 colour=red",
       "unknown field 'colour'"},
      {"kernel", "'kernel' is not NAME=VALUE"},
  };
  for (const auto& [text, why] : cases) {
    try {
      wavekit::hsa::parse_fault_injection(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const wavekit::Error& error) {
      EXPECT_NE(std::string(error.what()).find(why), std::string::npos) << error.what();
    }
  }
  const auto parsed = wavekit::hsa::parse_fault_injection(
      "kernel=k dispatch=3 pc=0x1a2c wave=5 execution=2 register=s7 bit=17 lane=9");
  EXPECT_EQ(wavekit::hsa::to_string(parsed),
            "kernel=k dispatch=3 pc=0x1a2c wave=5 execution=2 register=s7 bit=17 lane=9");
  // The runtime refuses it by name before the program runs any kernel.
  const Outcome run =
      shell(std::string("env LD_LIBRARY_PATH=") + WAVEKIT_EMULATOR_RUNTIME_DIR_FOR_TESTS +
            " WAVEKIT_EMU_INJECT='kernel=k' " + example("many_dispatches"));
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("WAVEKIT_EMU_INJECT: fault injection: missing dispatch="),
            std::string::npos)
      << run.err;
}

TEST(Cli, BadOptionsAreRefusedBeforeAnythingRuns) {
  const Outcome group = shell(std::string(WAVEKIT_CLI) + " fi --group fpu -- echo RAN");
  EXPECT_EQ(group.status, 2);
  EXPECT_NE(group.err.find("unknown instruction group 'fpu' (known: all, valu, salu, load, store)"),
            std::string::npos)
      << group.err;
  EXPECT_EQ(group.out.find("RAN"), std::string::npos);
  const Outcome none = shell(std::string(WAVEKIT_CLI) + " fi --injections 0 -- echo RAN");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("--injections must be a whole number of at least 1"), std::string::npos)
      << none.err;
  const Outcome regex = shell(std::string(WAVEKIT_CLI) + " fi --kernel-regex '(' -- echo RAN");
  EXPECT_EQ(regex.status, 2);
  EXPECT_NE(regex.err.find("--kernel-regex '(' is not a regular expression"), std::string::npos)
      << regex.err;
  EXPECT_EQ(regex.out.find("RAN"), std::string::npos);
  // A program that fails on its own has no golden run to compare with.
  const fs::path dir = scratch("false");
  const Outcome failing =
      shell(std::string(WAVEKIT_CLI) + " fi --out " + dir.string() + " -- false");
  EXPECT_EQ(failing.status, 1);
  EXPECT_NE(
      failing.err.find("the golden run (the program alone on the emulator) ended with status 1"),
      std::string::npos)
      << failing.err;
  fs::remove_all(dir);
}

}  // namespace
