// The whole-program path, `wavekit model run`: an unmodified HIP program (tests/model/hip/
// model_program.hip, built with Debian's hipcc, run through Debian's libamdhip64 on the
// emulator) modelled dispatch by dispatch. The oracle is the program's source: its comment
// gives every kernel's FLOPs and bytes per launch, and the program checks its own results.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace {

constexpr double kElements = 10000;

struct Output {
  int status = -1;
  std::string text;
};

// stdout, and stderr too when `with_errors`.
Output run(const std::string& arguments, bool with_errors = false) {
  const std::string command = std::string(WAVEKIT_CLI) + " model run " + arguments +
                              (with_errors ? " 2>&1" : " 2>/dev/null");
  Output out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    out.text.append(buffer, n);
  const int status = pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

nlohmann::json summary_of(const nlohmann::json& document, const std::string& kernel) {
  for (const auto& row : document["summary"])
    if (row["kernel"].get<std::string>().rfind(kernel, 0) == 0) return row;
  ADD_FAILURE() << "no " << kernel << " in " << document["summary"].dump();
  return {};
}

TEST(Program, EveryLaunchIsCountedAsTheSourceSays) {
  Output out = run(std::string("--json -- ") + WAVEKIT_MODEL_PROGRAM);
  ASSERT_EQ(out.status, 0) << out.text;
  const nlohmann::json document = nlohmann::json::parse(out.text);
  EXPECT_EQ(document["exit_status"], 0);
  const nlohmann::json saxpy = summary_of(document, "saxpy");
  EXPECT_EQ(saxpy["launches"], 3);
  EXPECT_EQ(saxpy["counted"], 3);
  EXPECT_EQ(saxpy["fp32_flops"].get<double>(), 3 * 2 * kElements);
  EXPECT_EQ(saxpy["fp64_flops"].get<double>(), 0);
  EXPECT_EQ(saxpy["global_load_bytes"].get<double>(), 3 * 8 * kElements);
  EXPECT_EQ(saxpy["global_store_bytes"].get<double>(), 3 * 4 * kElements);
  // Each launch is modelled from a cold L2: the buffers once in, the results once out.
  EXPECT_EQ(saxpy["dram_bytes"].get<double>(), 3 * 12 * kElements);
  const nlohmann::json scale = summary_of(document, "scale_double");
  EXPECT_EQ(scale["launches"], 1);
  EXPECT_EQ(scale["fp64_flops"].get<double>(), kElements);
  EXPECT_EQ(scale["fp32_flops"].get<double>(), 0);
  EXPECT_EQ(scale["global_load_bytes"].get<double>(), 8 * kElements);
  EXPECT_EQ(scale["global_store_bytes"].get<double>(), 8 * kElements);
  EXPECT_EQ(scale["dram_bytes"].get<double>(), 16 * kElements);

  const nlohmann::json fill_float = summary_of(document, "void fill<float>");
  EXPECT_EQ(fill_float["global_store_bytes"].get<double>(), 4 * kElements);
  EXPECT_EQ(fill_float["global_load_bytes"].get<double>(), 0);
  EXPECT_EQ(summary_of(document, "void fill<double>")["global_store_bytes"].get<double>(),
            8 * kElements);

  // One model per launch, each with its launch index among the kernels of its base name, which
  // `model compare` matches on: fill<double> is the second "fill".
  ASSERT_EQ(document["kernels"].size(), 6u);
  std::vector<std::uint64_t> saxpy_launches, fill_launches;
  for (const auto& launch : document["kernels"]) {
    EXPECT_EQ(launch["model"]["launch"]["blocks"][0], 40);
    EXPECT_EQ(launch["model"]["launch"]["threads_per_block"][0], 256);
    ASSERT_EQ(launch["predictions"].size(), 1u);
    EXPECT_EQ(launch["predictions"][0]["machine"], "h200");
    EXPECT_GT(launch["predictions"][0]["seconds"].get<double>(), 0);
    const std::string name = launch["model"]["name"];
    if (name.rfind("saxpy", 0) == 0) saxpy_launches.push_back(launch["predictions"][0]["launch"]);
    if (name.rfind("void fill<", 0) == 0)
      fill_launches.push_back(launch["predictions"][0]["launch"]);
  }
  EXPECT_EQ(saxpy_launches, (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_EQ(fill_launches, (std::vector<std::uint64_t>{0, 1}));
}

TEST(Program, UncountedLaunchesAreEstimatedFromTheCountedOnes) {
  Output out = run(std::string("--json --launches 1 --machine h200 --machine mi250x -- ") +
                   WAVEKIT_MODEL_PROGRAM);
  ASSERT_EQ(out.status, 0) << out.text;
  const nlohmann::json document = nlohmann::json::parse(out.text);
  const nlohmann::json saxpy = summary_of(document, "saxpy");
  EXPECT_EQ(saxpy["launches"], 3);
  EXPECT_EQ(saxpy["counted"], 1);
  EXPECT_EQ(saxpy["fp32_flops"].get<double>(), 3 * 2 * kElements);
  ASSERT_EQ(document["kernels"].size(), 4u);
  const auto& first = document["kernels"][0]["predictions"];
  ASSERT_EQ(first.size(), 2u);
  EXPECT_DOUBLE_EQ(saxpy["seconds"]["h200"].get<double>(), 3 * first[0]["seconds"].get<double>());
  EXPECT_DOUBLE_EQ(saxpy["seconds"]["mi250x"].get<double>(), 3 * first[1]["seconds"].get<double>());
}

TEST(Program, OnlyTheKernelsNamedAreCounted) {
  Output out =
      run(std::string("--json --kernels ^scale --no-cache-model -- ") + WAVEKIT_MODEL_PROGRAM);
  ASSERT_EQ(out.status, 0) << out.text;
  const nlohmann::json document = nlohmann::json::parse(out.text);
  EXPECT_EQ(summary_of(document, "saxpy")["counted"], 0);
  EXPECT_EQ(summary_of(document, "saxpy")["launches"], 3);
  EXPECT_EQ(summary_of(document, "scale_double")["counted"], 1);
  EXPECT_EQ(summary_of(document, "scale_double")["dram_bytes"].get<double>(), 0);
}

TEST(Program, TheTableNamesEveryKernelAndTheSavedModelPassesTheEvaluator) {
  const std::string saved = testing::TempDir() + "model_program.json";
  Output out = run("--save-model " + saved + " -- " + WAVEKIT_MODEL_PROGRAM);
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("model_program: 10000 elements, 0 wrong"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("4 kernel(s), 6 launch(es), 6 counted"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("3/3"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("total"), std::string::npos) << out.text;
  const std::string check = std::string(WAVEKIT_CLI) + " model check " + saved + " 2>&1";
  FILE* pipe = popen(check.c_str(), "r");
  ASSERT_TRUE(pipe);
  char line[512] = {};
  std::string text;
  while (std::fgets(line, sizeof line, pipe)) text += line;
  EXPECT_EQ(pclose(pipe), 0) << text;
  EXPECT_NE(text.find("6 kernel(s), 0 problem(s)"), std::string::npos) << text;
}

TEST(Program, AProgramThatFailsGivesItsExitStatusAndOneThatCannotStartIsNamed) {
  EXPECT_EQ(run("-- false").status, 1);
  Output missing = run("-- /nonexistent/program");
  EXPECT_EQ(missing.status, 127);
  Output none = run("--json");
  EXPECT_NE(none.status, 0);
  // Refused by wavekit model before the program starts (not by the observer inside it).
  for (const char* bad : {"--kernels '(' -- ", "--timeout -1 -- "}) {
    Output refused = run(std::string(bad) + WAVEKIT_MODEL_PROGRAM, true);
    EXPECT_NE(refused.status, 0) << bad;
    EXPECT_EQ(refused.text.rfind("wavekit model: ", 0), 0u) << refused.text;
    EXPECT_EQ(refused.text.find("wavekit emulator"), std::string::npos) << refused.text;
  }
}

// The runtime's side: an observer module that cannot be opened ends the program with a message
// that names the variable, rather than a measurement that measured nothing.
TEST(Program, AnObserverThatCannotBeOpenedEndsTheProgramNamingIt) {
  const std::string command = std::string("LD_LIBRARY_PATH=") + WAVEKIT_EMULATOR_RUNTIME_DIR +
                              " WAVEKIT_EMU_OBSERVER=/nonexistent/observer.so " +
                              WAVEKIT_MODEL_PROGRAM + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_TRUE(pipe);
  std::string text;
  char line[512];
  while (std::fgets(line, sizeof line, pipe)) text += line;
  const int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << text;
  EXPECT_NE(text.find("wavekit emulator: WAVEKIT_EMU_OBSERVER=/nonexistent/observer.so: "),
            std::string::npos)
      << text;
}

}  // namespace
