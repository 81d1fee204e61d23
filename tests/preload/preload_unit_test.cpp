#include <gtest/gtest.h>
#include <stdlib.h>

#include <csignal>
#include <filesystem>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/preload/config.h"
#include "wavekit/preload/substitution.h"
#include "wavekit/rewrite/arena.h"
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
  config.rewrite_at_dispatch = false;
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
  EXPECT_FALSE(read.rewrite_at_dispatch);
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
  setenv("WAVEKIT_REWRITE_AT", "lunch", 1);
  try {
    config_from_environment();
    FAIL() << "accepted WAVEKIT_REWRITE_AT=lunch";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("WAVEKIT_REWRITE_AT must be dispatch or load"),
              std::string::npos)
        << error.what();
  }
  unsetenv("WAVEKIT_REWRITE_AT");
}

TEST(Substitution, LoadTimeRewriteFillsTheCacheAndTheCacheGivesTheSameBytes) {
  auto cache = fresh_directory("cache");
  ShimConfig config;
  config.tool = "bbcount";
  config.cache_dir = cache.string();
  config.rewrite_at_dispatch = false;
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
  config.rewrite_at_dispatch = false;
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
  const std::vector<std::uint8_t> original = read_file(corpus("basic_gfx90a_O2_cov5.co"));
  auto deferred = Substituter(config).substitute_kernel(original, "vector_add");
  ASSERT_TRUE(std::holds_alternative<Declined>(deferred));
  EXPECT_NE(std::get<Declined>(deferred).reason.find("gfx908"), std::string::npos)
      << std::get<Declined>(deferred).reason;
  config.rewrite_at_dispatch = false;
  auto outcome = Substituter(config).substitute(original);
  ASSERT_TRUE(std::holds_alternative<Declined>(outcome));
  EXPECT_NE(std::get<Declined>(outcome).reason.find("gfx908"), std::string::npos)
      << std::get<Declined>(outcome).reason;
}

// Rewriting at the first dispatch: the object is named kernel by kernel, each rewrite holds
// that kernel alone, comes from the cache the second time, and instruments the kernel exactly as
// the whole object's rewrite does (the same note entry: blocks, layout, arena).
TEST(Substitution, DeferredObjectsAreRewrittenKernelByKernel) {
  auto cache = fresh_directory("deferred");
  ShimConfig config;
  config.tool = "bbcount";
  config.cache_dir = cache.string();
  const std::vector<std::uint8_t> original = read_file(corpus("basic_gfx90a_O2_cov5.co"));
  auto outcome = Substituter(config).substitute(original);
  ASSERT_TRUE(std::holds_alternative<Deferred>(outcome));
  const Deferred& deferred = std::get<Deferred>(outcome);
  const codeobj::CodeObject object = codeobj::CodeObject::parse(original, "basic");
  ASSERT_EQ(deferred.kernels.size(), object.kernels().size());
  EXPECT_TRUE(std::filesystem::is_empty(cache));  // nothing rewritten yet

  ShimConfig whole = config;
  whole.rewrite_at_dispatch = false;
  whole.cache_dir.clear();
  auto all = Substituter(whole).substitute(original);
  ASSERT_TRUE(std::holds_alternative<Substitution>(all)) << std::get<Declined>(all).reason;
  for (const Deferred::Kernel& kernel : deferred.kernels) {
    SCOPED_TRACE(kernel.name);
    auto first = Substituter(config).substitute_kernel(original, kernel.name);
    ASSERT_TRUE(std::holds_alternative<Substitution>(first)) << std::get<Declined>(first).reason;
    const Substitution& rewritten = std::get<Substitution>(first);
    EXPECT_EQ(rewritten.origin, "load-time rewrite");
    ASSERT_EQ(rewritten.note.kernels.size(), 1u);
    EXPECT_EQ(rewritten.note.kernels[0].name, kernel.name);
    const rewrite::RewriteNote& whole_note = std::get<Substitution>(all).note;
    const rewrite::InstrumentedKernel* same = whole_note.find_kernel(kernel.name);
    ASSERT_NE(same, nullptr);
    EXPECT_EQ(
        rewrite::note_to_json(rewritten.note)["wavekit.kernels"][0],
        rewrite::note_to_json(whole_note)["wavekit.kernels"][same - whole_note.kernels.data()]);
    auto again = Substituter(config).substitute_kernel(original, kernel.name);
    ASSERT_TRUE(std::holds_alternative<Substitution>(again)) << std::get<Declined>(again).reason;
    EXPECT_EQ(std::get<Substitution>(again).origin, "cache");
    EXPECT_EQ(std::get<Substitution>(again).bytes, rewritten.bytes);
  }
  std::filesystem::remove_all(cache);
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
