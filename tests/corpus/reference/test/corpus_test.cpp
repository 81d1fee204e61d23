// The corpus's own checks: the manifest, the objects on disk (read with llvm-readelf-22) and the
// C++ registry agree, and every reference does real work that compare_outputs can see.
#include "wavekit/corpus/corpus.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

namespace {

using wavekit::corpus::Argument;

std::string run(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char chunk[4096];
  while (std::size_t got = fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, got);
  pclose(pipe);
  return output;
}

TEST(Corpus, EveryObjectExistsWithTheKernelsTheManifestNames) {
  ASSERT_GE(wavekit::corpus::objects().size(), 30u);
  for (const auto& object : wavekit::corpus::objects()) {
    ASSERT_TRUE(std::filesystem::exists(object.path)) << object.path;
    std::string sections = run(std::string(WAVEKIT_LLVM_READELF) + " -S " + object.path);
    if (object.fat_binary) {
      EXPECT_NE(sections.find(".hip_fatbin"), std::string::npos) << object.name;
      continue;
    }
    bool has_symtab = sections.find(" .symtab ") != std::string::npos;
    EXPECT_EQ(has_symtab, !object.stripped)
        << object.name << (object.stripped ? " should have no .symtab" : " should have .symtab");
    std::string notes = run(std::string(WAVEKIT_LLVM_READELF) + " --notes " + object.path);
    std::set<std::string> kernels_in_note;
    for (std::size_t at = notes.find(".name:"); at != std::string::npos;
         at = notes.find(".name:", at + 1)) {
      std::size_t begin = notes.find_first_not_of(' ', at + 6);
      kernels_in_note.insert(notes.substr(begin, notes.find('\n', begin) - begin));
    }
    std::set<std::string> expected(object.kernels.begin(), object.kernels.end());
    EXPECT_EQ(kernels_in_note, expected) << object.name;
  }
}

TEST(Corpus, ManifestAndRegistryAgree) {
  std::set<std::string> in_objects;
  for (const auto& object : wavekit::corpus::objects()) {
    for (const auto& name : object.kernels) {
      in_objects.insert(name);
      EXPECT_EQ(wavekit::corpus::kernel(name).source, object.source) << name;
    }
  }
  for (const auto& kernel : wavekit::corpus::kernels()) {
    EXPECT_TRUE(in_objects.count(kernel.name)) << kernel.name << " is in no object";
  }
  EXPECT_THROW(wavekit::corpus::kernel("no_such_kernel"), std::runtime_error);
}

TEST(Corpus, InputsAreDeterministicAndReferencesWriteEveryOutput) {
  for (const auto& kernel : wavekit::corpus::kernels()) {
    std::vector<Argument> first = kernel.make_inputs(1), again = kernel.make_inputs(1),
                          other = kernel.make_inputs(2);
    ASSERT_EQ(first.size(), again.size());
    bool seeds_differ = false;
    for (std::size_t a = 0; a < first.size(); ++a) {
      EXPECT_EQ(first[a].bytes, again[a].bytes) << kernel.name << " " << first[a].name;
      seeds_differ |= first[a].bytes != other[a].bytes;
    }
    EXPECT_TRUE(seeds_differ) << kernel.name;

    std::vector<Argument> expected = first;
    kernel.reference(expected);
    ASSERT_FALSE(wavekit::corpus::compare_outputs(kernel, expected, expected));
    // The untouched outputs must not pass: a reference that does nothing is caught here, and a
    // single wrong element is reported.
    auto mismatch = wavekit::corpus::compare_outputs(kernel, expected, first);
    ASSERT_TRUE(mismatch.has_value()) << kernel.name << ": reference changed no output";
    EXPECT_NE(mismatch->find(kernel.name), std::string::npos);
  }
}

TEST(Corpus, PublishedAnswers) {
  // Fibonacci(15) = 610; Collatz(27) takes 111 steps (OEIS A006577).
  const auto& fib = wavekit::corpus::kernel("recursive_fib");
  auto args = fib.make_inputs(3);
  args[0].data<std::int32_t>()[0] = 15;
  fib.reference(args);
  EXPECT_EQ(args[1].data<std::int32_t>()[0], 610);
  const auto& collatz = wavekit::corpus::kernel("collatz_steps");
  args = collatz.make_inputs(3);
  args[0].data<std::uint32_t>()[0] = 27;
  collatz.reference(args);
  EXPECT_EQ(args[1].data<std::uint32_t>()[0], 111u);
}

}  // namespace
