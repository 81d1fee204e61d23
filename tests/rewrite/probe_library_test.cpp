// The probe-library build (cmake/ProbeLibrary.cmake + `wavekit probe-lib`): aliases the loader
// can resolve, checked with llvm-readelf-22, and footprints checked against what clang-22 itself
// reports for the same source (its `.set .L<fn>.num_vgpr / numbered_sgpr / private_seg_size`
// symbols in `-S` output).
#include "wavekit/rewrite/probe_library.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/support/file.h"

namespace wavekit::rewrite {
namespace {

std::string run(const std::string& command) {
  std::string output;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen((command + " 2>&1").c_str(), "r"), pclose);
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0) output.append(buffer, n);
  return output;
}

// A numeric `.set .L<function>.<what>, N` from the compiler's assembly (-1 when absent or an
// expression).
long compiler_says(const std::string& function, const std::string& what) {
  std::ifstream in(WAVEKIT_SAMPLE_PROBES_ASM);
  std::stringstream text;
  text << in.rdbuf();
  const std::regex pattern("\\.set \\.L" + function + "\\." + what + ", (\\d+)\\n");
  std::smatch match;
  const std::string s = text.str();
  if (!std::regex_search(s, match, pattern)) return -1;
  return std::stol(match[1]);
}

const ProbeFootprint& probe(const std::vector<ProbeFootprint>& probes, const std::string& name) {
  for (const ProbeFootprint& p : probes)
    if (p.name == name) return p;
  throw std::runtime_error("no probe " + name);
}

TEST(ProbeLibrary, AliasesAreObjectsAtTheProbes) {
  const std::string listing =
      run(std::string(WAVEKIT_LLVM_READELF) + " --dyn-syms -W " + WAVEKIT_SAMPLE_PROBES);
  for (const std::string name : {"count_hits", "record_scrambled", "tail_spread"}) {
    const std::regex function("([0-9a-f]{16}) +\\d+ FUNC +GLOBAL +DEFAULT +\\d+ " + name + "\\n");
    const std::regex alias("([0-9a-f]{16}) +\\d+ OBJECT +GLOBAL +DEFAULT +\\d+ __wavekit_probe\\." +
                           name + "\\n");
    std::smatch f, a;
    ASSERT_TRUE(std::regex_search(listing, f, function)) << listing;
    ASSERT_TRUE(std::regex_search(listing, a, alias)) << listing;
    EXPECT_EQ(f[1], a[1]) << name;
  }
  EXPECT_EQ(listing.find("__wavekit_probe._ZL"), std::string::npos)
      << "a static helper is no probe";
}

TEST(ProbeLibrary, FootprintsAgreeWithTheCompiler) {
  const codeobj::CodeObject library =
      codeobj::CodeObject::parse(read_file(WAVEKIT_SAMPLE_PROBES), WAVEKIT_SAMPLE_PROBES);
  const std::optional<std::vector<ProbeFootprint>> probes = find_probe_note(library);
  ASSERT_TRUE(probes);
  ASSERT_EQ(probes->size(), 3u);

  const ProbeFootprint& leaf = probe(*probes, "count_hits");
  EXPECT_EQ(long(leaf.vgpr_count), compiler_says("count_hits", "num_vgpr"));
  EXPECT_EQ(long(leaf.sgpr_count), compiler_says("count_hits", "numbered_sgpr"));
  EXPECT_FALSE(leaf.calls);
  EXPECT_EQ(leaf.scratch_bytes, 0u);

  const ProbeFootprint& caller = probe(*probes, "record_scrambled");
  EXPECT_TRUE(caller.calls);
  ASSERT_EQ(caller.callees.size(), 1u);
  EXPECT_NE(caller.callees[0].find("scramble"), std::string::npos);
  // The helper's array is address-taken: clang reserves a frame for it, and the footprint
  // must not claim a bound it cannot see.
  EXPECT_GT(compiler_says("_ZL8scramblejj", "private_seg_size"), 0);
  EXPECT_TRUE(caller.scratch_unbounded);
  EXPECT_FALSE(leaf.scratch_unbounded);
  EXPECT_TRUE(caller.writes_scc);

  // A sibling call (s_setpc_b64 to the helper) is a call: the helper's registers are the
  // probe's footprint, though the probe itself touches fewer.
  const ProbeFootprint& tail = probe(*probes, "tail_spread");
  ASSERT_EQ(tail.callees.size(), 1u);
  EXPECT_NE(tail.callees[0].find("spread"), std::string::npos);
  const long helper_vgprs = compiler_says("_ZL6spreadPmj", "num_vgpr");
  ASSERT_GT(helper_vgprs, 0);
  EXPECT_GE(long(tail.vgpr_count), helper_vgprs);
  EXPECT_GE(long(tail.sgpr_count), compiler_says("_ZL6spreadPmj", "numbered_sgpr"));
}

}  // namespace
}  // namespace wavekit::rewrite
