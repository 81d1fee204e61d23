// protocol.h compiled for AMDGPU (gfx908, gfx90a, gfx942) by clang-22; llvm-objdump-22 is the
// oracle for what the code does: one fetch-and-add to claim (no compare-and-swap loop), the
// leader elected through mbcnt/readfirstlane, the publish sequence (s_dcache_wb, then the
// target's system-scope release: buffer_wbl2 on gfx90a/gfx942, the vmcnt wait, then the store
// of the slot's sequence word), the s_sleep spin on a coherent load, and s_dcache_inv after
// the reply arrives. The expected sequences are AMDGPUUsage's memory model tables for each
// target ("release fence/store, system scope").
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string run(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return {};
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0;) output.append(buffer, n);
  return output;
}

// Function name -> its instructions (mnemonic and operands, comments dropped).
std::map<std::string, std::vector<std::string>> disassemble(const std::string& code_object) {
  std::map<std::string, std::vector<std::string>> functions;
  std::istringstream lines(
      run(std::string(WAVEKIT_LLVM_OBJDUMP) + " -d --no-show-raw-insn " + code_object));
  std::vector<std::string>* current = nullptr;
  static const std::regex label(R"(^[0-9a-f]+ <([^>]+)>:)");
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, label)) {
      current = &functions[match[1]];
    } else if (current && !line.empty() && line[0] == '\t') {
      std::string instruction = line.substr(
          1, line.find("//") == std::string::npos ? std::string::npos : line.find("//") - 1);
      while (!instruction.empty() && instruction.back() == ' ') instruction.pop_back();
      current->push_back(instruction);
    }
  }
  return functions;
}

bool starts(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}
bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

size_t count_if_prefix(const std::vector<std::string>& code, const std::string& prefix) {
  size_t n = 0;
  for (const auto& i : code) n += starts(i, prefix);
  return n;
}

std::string code_object(const std::string& name, const std::string& target) {
  return std::string(WAVEKIT_HOSTCALL_DEVICE_DIR) + "/" + name + "-" + target + ".co";
}

class DeviceCode : public testing::TestWithParam<std::string> {};

TEST_P(DeviceCode, ClaimIsOneFetchAddAndLeaderComesFromExec) {
  const auto functions = disassemble(code_object("hostcall_kernels", GetParam()));
  ASSERT_TRUE(functions.count("hostcall_blocking_call"))
      << "no disassembly from " << WAVEKIT_LLVM_OBJDUMP;
  const auto& code = functions.at("hostcall_blocking_call");
  EXPECT_EQ(
      count_if_prefix(code, "flat_atomic_add_x2") + count_if_prefix(code, "global_atomic_add_x2"),
      1u);
  for (const auto& i : code) EXPECT_FALSE(has(i, "cmpswap")) << i;
  EXPECT_GE(count_if_prefix(code, "v_mbcnt_lo_u32_b32"), 1u);
  EXPECT_GE(count_if_prefix(code, "v_mbcnt_hi_u32_b32"), 1u);
  EXPECT_GE(count_if_prefix(code, "v_readfirstlane_b32"), 2u);  // the 64-bit ticket, in halves
  // The file kernel makes three calls: three claims.
  const auto& files = functions.at("hostcall_wave_files");
  EXPECT_EQ(
      count_if_prefix(files, "flat_atomic_add_x2") + count_if_prefix(files, "global_atomic_add_x2"),
      3u);
}

TEST_P(DeviceCode, PublishWritesBackScalarCacheThenReleasesAtSystemScope) {
  const std::string target = GetParam();
  const auto functions = disassemble(code_object("hostcall_kernels", target));
  for (const char* name :
       {"hostcall_blocking_call", "hostcall_fire_and_forget", "hostcall_print_odd_lanes"}) {
    ASSERT_TRUE(functions.count(name)) << name;
    const auto& code = functions.at(name);
    size_t wb = 0;
    while (wb < code.size() && code[wb] != "s_dcache_wb") ++wb;
    ASSERT_LT(wb, code.size()) << name << ": no s_dcache_wb before publishing";
    // After the write-back: the L2 write-back where the target has one, the wait for all
    // outstanding stores, then a store (the sequence word) - with nothing else stored between.
    bool saw_wbl2 = false, saw_wait = false, saw_store = false;
    for (size_t i = wb + 1; i < code.size() && i < wb + 16 && !saw_store; ++i) {
      if (starts(code[i], "buffer_wbl2")) saw_wbl2 = true;
      if (starts(code[i], "s_waitcnt") && has(code[i], "vmcnt(0)")) saw_wait = true;
      if (starts(code[i], "flat_store") || starts(code[i], "global_store")) {
        saw_store = true;
        EXPECT_TRUE(saw_wait) << name << ": store before the vmcnt(0) wait";
        if (target == "gfx942") EXPECT_TRUE(has(code[i], "sc0 sc1")) << name << ": " << code[i];
      }
    }
    EXPECT_TRUE(saw_store) << name << ": no publishing store after s_dcache_wb";
    if (target != "gfx908")
      EXPECT_TRUE(saw_wbl2) << name << ": no buffer_wbl2 (system-scope release)";
  }
}

TEST_P(DeviceCode, WaitSpinsWithSleepAndInvalidatesScalarCacheAfterReply) {
  const std::string target = GetParam();
  const auto functions = disassemble(code_object("hostcall_kernels", target));
  const auto& code = functions.at("hostcall_blocking_call");
  // Every s_sleep is followed, before the loop's branch, by a coherent reload of the slot
  // (glc on gfx908/gfx90a, sc0 sc1 on gfx942: bypassing the non-coherent caches).
  const std::string coherent = target == "gfx942" ? "sc0 sc1" : "glc";
  size_t sleeps = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    if (!starts(code[i], "s_sleep")) continue;
    ++sleeps;
    bool reload = false;
    for (size_t j = i + 1; j < code.size() && !starts(code[j], "s_cbranch"); ++j)
      reload |= (starts(code[j], "flat_load_dwordx2") || starts(code[j], "global_load_dwordx2")) &&
                has(code[j], coherent);
    EXPECT_TRUE(reload) << "s_sleep at " << i << " not followed by a coherent reload";
  }
  EXPECT_EQ(sleeps, 2u) << "two waits: for the slot's turn and for the reply";
  // The reply wait ends with the acquire invalidation and then s_dcache_inv.
  size_t inv = 0;
  while (inv < code.size() && code[inv] != "s_dcache_inv") ++inv;
  ASSERT_LT(inv, code.size()) << "no s_dcache_inv after the reply";
  size_t last_sleep = 0;
  for (size_t i = 0; i < code.size(); ++i)
    if (starts(code[i], "s_sleep")) last_sleep = i;
  EXPECT_GT(inv, last_sleep);
  const std::string acquire = target == "gfx942" ? "buffer_inv" : "buffer_wbinvl1_vol";
  bool invalidated = false;
  for (size_t i = last_sleep; i < inv; ++i) invalidated |= starts(code[i], acquire);
  EXPECT_TRUE(invalidated) << "no " << acquire << " before s_dcache_inv";
}

TEST_P(DeviceCode, ExternRingPointerStaysUndefined) {
  const std::string object = code_object("hostcall_extern_ring", GetParam());
  const std::string symbols = run(std::string(WAVEKIT_LLVM_READELF) + " --dyn-syms " + object);
  EXPECT_TRUE(
      std::regex_search(symbols, std::regex(R"(GLOBAL\s+DEFAULT\s+UND\s+wavekit_hostcall_ring)")))
      << symbols;
  const std::string relocations = run(std::string(WAVEKIT_LLVM_READELF) + " -r " + object);
  EXPECT_TRUE(has(relocations, "wavekit_hostcall_ring")) << relocations;
}

INSTANTIATE_TEST_SUITE_P(hostcall, DeviceCode, testing::Values("gfx908", "gfx90a", "gfx942"));

}  // namespace
