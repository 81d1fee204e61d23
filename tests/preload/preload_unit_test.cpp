#include <gtest/gtest.h>
#include <stdlib.h>

#include <csignal>
#include <filesystem>

#include "wavekit/preload/config.h"
#include "wavekit/preload/substitution.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::preload {
namespace {

std::string corpus(const std::string& name) { return std::string(WAVEKIT_CORPUS_DIR) + "/" + name; }

std::filesystem::path fresh_directory(const std::string& name) {
  auto path = std::filesystem::temp_directory_path() /
              ("wavekit-preload-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
  return path;
}

TEST(Config, EnvironmentRoundTrip) {
  ShimConfig config;
  config.tool = "bbcount";
  config.tool_out = "/tmp/out";
  config.cache_dir = "/tmp/cache";
  config.kernels = {"a", "b"};
  config.load_time_rewrite = false;
  config.fault = InjectedFault::arena_allocation;
  config.selection = "kernel=^a every=3";
  config.start_enabled = false;
  config.control_file = "/tmp/control";
  config.control_signal = SIGUSR2;
  for (const auto& [name, value] : config_to_environment(config))
    setenv(name.c_str(), value.c_str(), 1);
  ShimConfig read = config_from_environment();
  EXPECT_EQ(read.tool, "bbcount");
  EXPECT_EQ(read.tool_out, "/tmp/out");
  EXPECT_EQ(read.cache_dir, "/tmp/cache");
  EXPECT_EQ(read.kernels, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(read.load_time_rewrite);
  EXPECT_EQ(read.fault, InjectedFault::arena_allocation);
  EXPECT_EQ(read.selection, "kernel=^a every=3");
  EXPECT_FALSE(read.start_enabled);
  EXPECT_EQ(read.control_file, "/tmp/control");
  EXPECT_EQ(read.control_signal, SIGUSR2);
  for (const auto& [name, value] : config_to_environment(config)) unsetenv(name.c_str());
}

TEST(Config, MalformedVariablesAreNamed) {
  setenv("WAVEKIT_INJECT_FAULT", "meteor", 1);
  try {
    config_from_environment();
    FAIL() << "accepted an unknown fault";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("meteor"), std::string::npos);
  }
  unsetenv("WAVEKIT_INJECT_FAULT");
}

TEST(Substitution, LoadTimeRewriteFillsTheCacheAndTheCacheGivesTheSameBytes) {
  auto cache = fresh_directory("cache");
  ShimConfig config;
  config.tool = "bbcount";
  config.cache_dir = cache.string();
  std::vector<std::uint8_t> original = read_file(corpus("basic_gfx90a_O2_cov5.co"));

  auto first = Substituter(config).substitute(original);
  ASSERT_TRUE(std::holds_alternative<Substitution>(first)) << std::get<Declined>(first).reason;
  EXPECT_EQ(std::get<Substitution>(first).origin, "load-time rewrite");

  config.load_time_rewrite = false;  // now only the cache can answer
  auto second = Substituter(config).substitute(original);
  ASSERT_TRUE(std::holds_alternative<Substitution>(second)) << std::get<Declined>(second).reason;
  EXPECT_EQ(std::get<Substitution>(second).origin, "cache");
  EXPECT_EQ(std::get<Substitution>(first).bytes, std::get<Substitution>(second).bytes);
  std::filesystem::remove_all(cache);
}

TEST(Substitution, AnInstrumentedObjectIsAdoptedNotRewrittenAgain) {
  ShimConfig config;
  config.tool = "bbcount";
  auto first = Substituter(config).substitute(read_file(corpus("basic_gfx90a_O2_cov5.co")));
  ASSERT_TRUE(std::holds_alternative<Substitution>(first)) << std::get<Declined>(first).reason;
  const auto& rewritten = std::get<Substitution>(first).bytes;
  auto again = Substituter(config).substitute(rewritten);
  ASSERT_TRUE(std::holds_alternative<Substitution>(again)) << std::get<Declined>(again).reason;
  EXPECT_EQ(std::get<Substitution>(again).origin, "already instrumented");
  EXPECT_EQ(std::get<Substitution>(again).bytes, rewritten);
}

TEST(Substitution, CorruptCacheEntryIsDeclinedWithItsPath) {
  auto cache = fresh_directory("corrupt");
  ShimConfig config;
  config.tool = "bbcount";
  config.cache_dir = cache.string();
  config.load_time_rewrite = false;
  std::vector<std::uint8_t> original = read_file(corpus("basic_gfx90a_O2_cov5.co"));
  std::string entry = cache_path(config.cache_dir, original, plan_for(config));
  write_file(entry, std::string("\x7f"
                                "ELF but not really"));
  auto outcome = Substituter(config).substitute(original);
  ASSERT_TRUE(std::holds_alternative<Declined>(outcome));
  EXPECT_NE(std::get<Declined>(outcome).reason.find(entry), std::string::npos)
      << std::get<Declined>(outcome).reason;
  std::filesystem::remove_all(cache);
}

TEST(Substitution, ProbeLibraryForAnotherTargetIsDeclined) {
  ShimConfig config;
  config.tool = "bbcount";
  config.probe_library = corpus("basic_gfx908_O2_cov5.co");  // any gfx908 object will do
  auto outcome = Substituter(config).substitute(read_file(corpus("basic_gfx90a_O2_cov5.co")));
  ASSERT_TRUE(std::holds_alternative<Declined>(outcome));
  EXPECT_NE(std::get<Declined>(outcome).reason.find("gfx908"), std::string::npos)
      << std::get<Declined>(outcome).reason;
}

TEST(Substitution, GarbageIsDeclinedNotThrown) {
  ShimConfig config;
  config.tool = "bbcount";
  std::vector<std::uint8_t> garbage(100, 0x42);
  auto outcome = Substituter(config).substitute(garbage);
  ASSERT_TRUE(std::holds_alternative<Declined>(outcome));
  EXPECT_FALSE(std::get<Declined>(outcome).reason.empty());
}

}  // namespace
}  // namespace wavekit::preload
