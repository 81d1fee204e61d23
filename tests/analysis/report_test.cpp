// `wavekit inspect` / `wavekit disasm` output checked against llvm-objdump-22 and the corpus
// manifest, through the library and through the installed CLI binary.
#include "wavekit/analysis/report.h"

#include <gtest/gtest.h>

#include <set>

#include "../isa/corpus_elf.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace {

const wavekit::corpus::CorpusObject& corpus_object(const std::string& name) {
  for (const auto& object : wavekit::corpus::objects()) {
    if (object.name == name) return object;
  }
  throw std::runtime_error("no corpus object " + name);
}

// address -> text of every instruction the JSON lists.
std::map<std::uint64_t, std::string> listed_instructions(const nlohmann::json& object) {
  std::map<std::uint64_t, std::string> listed;
  for (const auto& function : object["functions"]) {
    for (const auto& block : function["blocks"]) {
      for (const auto& inst : block["instructions"]) {
        listed[inst["address"].get<std::uint64_t>()] = inst["text"].get<std::string>();
      }
    }
  }
  return listed;
}

TEST(Report, JsonFollowsTheContractAndObjdump) {
  for (const auto& object : wavekit::corpus::objects()) {
    if (object.fat_binary) continue;
    SCOPED_TRACE(object.name);
    auto json = wavekit::analysis::inspect_json(wavekit::read_file(object.path), object.path);
    EXPECT_EQ(json["target"], object.targets.front());
    EXPECT_EQ(json["code_object_version"], object.code_object_version);
    std::set<std::string> kernels;
    for (const auto& kernel : json["kernels"]) {
      kernels.insert(kernel["name"].get<std::string>());
      for (const char* key : {"descriptor_symbol", "entry", "descriptor", "metadata"}) {
        EXPECT_TRUE(kernel.contains(key)) << key;
      }
    }
    EXPECT_EQ(kernels, std::set<std::string>(object.kernels.begin(), object.kernels.end()));
    // Every listed instruction is objdump's; every objdump instruction left out is padding
    // after the function's last instruction (s_nop / s_code_end).
    auto objdump = wavekit::testing::objdump_instructions(object.path);
    auto listed = listed_instructions(json);
    for (const auto& [address, text] : listed) {
      ASSERT_TRUE(objdump.count(address));
      EXPECT_EQ(text, objdump[address].text);
    }
    for (const auto& [address, inst] : objdump) {
      if (listed.count(address)) continue;
      std::string mnemonic = inst.text.substr(0, inst.text.find(' '));
      EXPECT_TRUE(mnemonic == "s_nop" || mnemonic == "s_code_end")
          << inst.text << " at 0x" << std::hex << address << " is in no block";
    }
    for (const auto& function : json["functions"]) {
      for (const char* key : {"name", "kind", "start", "end", "blocks"}) {
        EXPECT_TRUE(function.contains(key)) << key;
      }
      for (const auto& block : function["blocks"]) {
        for (const auto& successor : block["successors"]) EXPECT_TRUE(successor.is_number());
      }
    }
  }
}

TEST(Report, FatBinaryGivesOneObjectPerTargetSameAsTheDeviceOnlyBuild) {
  const auto& fat = corpus_object("basic_fatbin_host");
  auto json = wavekit::analysis::inspect_json(wavekit::read_file(fat.path), fat.path);
  ASSERT_TRUE(json.contains("bundles"));
  std::set<std::string> triples;
  for (const auto& bundle : json["bundles"]) {
    std::string triple = bundle["triple"];
    triples.insert(triple);
    std::string processor = triple.substr(triple.rfind('-') + 1);
    // The same source and flags compiled device-only: the same instructions.
    auto plain = wavekit::analysis::inspect_json(
        wavekit::read_file(corpus_object("basic_" + processor + "_O2_cov5").path), "plain");
    std::vector<std::string> a, b;
    for (const auto& [address, text] : listed_instructions(bundle["object"])) a.push_back(text);
    for (const auto& [address, text] : listed_instructions(plain)) b.push_back(text);
    EXPECT_EQ(a, b) << triple;
  }
  EXPECT_EQ(triples, (std::set<std::string>{"hipv4-amdgcn-amd-amdhsa--gfx908",
                                            "hipv4-amdgcn-amd-amdhsa--gfx942"}));
}

TEST(Report, KernelFilterKeepsTheKernelAndItsCallees) {
  const auto& object = corpus_object("calls_gfx942_O2_cov5");
  auto json = wavekit::analysis::inspect_json(wavekit::read_file(object.path), object.path,
                                              {"recursive_fib"});
  std::set<std::string> functions;
  for (const auto& function : json["functions"]) functions.insert(function["name"]);
  EXPECT_EQ(functions, (std::set<std::string>{"recursive_fib", "_Z9fibonaccii"}));
  ASSERT_EQ(json["kernels"].size(), 1u);
  EXPECT_EQ(json["kernels"][0]["name"], "recursive_fib");
  try {
    wavekit::analysis::inspect_json(wavekit::read_file(object.path), object.path, {"nope"});
    FAIL() << "unknown kernel accepted";
  } catch (const wavekit::Error& error) {
    EXPECT_NE(std::string(error.what()).find("recursive_fib"), std::string::npos) << error.what();
  }
}

TEST(Report, TextDotAndListing) {
  const auto& object = corpus_object("calls_gfx90a_O2_cov5");
  auto bytes = wavekit::read_file(object.path);
  std::string text = wavekit::analysis::inspect_text(bytes, object.path);
  for (const auto& kernel : object.kernels) EXPECT_NE(text.find(kernel), std::string::npos);
  EXPECT_NE(text.find("call at"), std::string::npos);
  // One dot edge per CFG successor and per resolved call.
  auto json = wavekit::analysis::inspect_json(bytes, object.path);
  std::size_t edges = 0;
  for (const auto& function : json["functions"]) {
    for (const auto& block : function["blocks"]) edges += block["successors"].size();
    edges += function["calls"].size();
  }
  std::string dot = wavekit::analysis::inspect_dot(bytes, object.path);
  std::size_t arrows = 0;
  for (std::size_t at = dot.find(" -> "); at != std::string::npos; at = dot.find(" -> ", at + 1)) {
    ++arrows;
  }
  EXPECT_EQ(arrows, edges);
  EXPECT_EQ(dot.rfind("digraph", 0), 0u);
  // The listing holds every instruction objdump prints, except padding.
  std::string listing = wavekit::analysis::disassemble(bytes, object.path);
  for (const auto& [address, inst] : wavekit::testing::objdump_instructions(object.path)) {
    if (inst.text.rfind("s_nop", 0) == 0 || inst.text.rfind("s_code_end", 0) == 0) continue;
    EXPECT_NE(listing.find(inst.text), std::string::npos) << inst.text;
  }
}

TEST(Report, BadFilesAreClearErrors) {
  auto bytes = wavekit::read_file(corpus_object("basic_gfx908_O2_cov5").path);
  std::vector<std::uint8_t> truncated(bytes.begin(), bytes.begin() + 100);
  EXPECT_THROW(wavekit::analysis::inspect_json(truncated, "truncated.co"), wavekit::Error);
  std::vector<std::uint8_t> text{'h', 'e', 'l', 'l', 'o'};
  try {
    wavekit::analysis::disassemble(text, "hello.txt");
    FAIL() << "text accepted";
  } catch (const wavekit::Error& error) {
    EXPECT_NE(std::string(error.what()).find("hello.txt"), std::string::npos) << error.what();
  }
}

int run(const std::string& arguments) {
  int status =
      std::system((std::string(WAVEKIT_CLI) + " " + arguments + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Report, CommandLine) {
  const std::string path = corpus_object("wave_gfx942_O2_cov5").path;
  EXPECT_EQ(run("inspect " + path), 0);
  EXPECT_EQ(run("inspect --json --kernel wave_ops " + path), 0);
  EXPECT_EQ(run("inspect --cfg dot " + path), 0);
  EXPECT_EQ(run("disasm " + path), 0);
  EXPECT_EQ(run("inspect --help"), 0);
  EXPECT_EQ(run("inspect --cfg svg " + path), 2);  // usage error
  EXPECT_EQ(run("inspect"), 2);
  EXPECT_EQ(run("inspect /nonexistent.co"), 1);
  EXPECT_EQ(run("disasm --kernel x " + path), 2);
}

}  // namespace
