// The formats other parts rely on: the arena layout, the WAVEKIT note (round trip and every
// rejection), the arena a launcher fills and a reporter reads, the plan JSON, and where the
// hardware puts the entry SGPRs.
#include <gtest/gtest.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>

#include <cstring>
#include <map>
#include <regex>
#include <sstream>

#include "entry_abi.h"  // the engine's internal view of the launch ABI
#include "wavekit/codeobj/code_object.h"
#include "wavekit/isa/isa.h"
#include "wavekit/probe/capture.h"
#include "wavekit/rewrite/arena.h"
#include "wavekit/rewrite/plan.h"
#include "wavekit/rewrite/tools.h"
#include "wavekit/support/error.h"

namespace wavekit::rewrite {
namespace {

PerWaveVariable variable(std::string name, std::uint32_t element_size, std::uint32_t count,
                         std::uint32_t alignment = 8) {
  PerWaveVariable v;
  v.name = std::move(name);
  v.element_size = element_size;
  v.count = count;
  v.alignment = alignment;
  return v;
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(Arena, CaptureRegionComesFirstAndVariablesAreAligned) {
  ArenaLayout layout;
  EXPECT_EQ(layout.stride(), probe::kCaptureSize);
  EXPECT_EQ(layout.add(variable("flag", 1, 3)).offset, 64u);
  EXPECT_EQ(layout.add(variable("counts", 8, 5)).offset, 72u);  // 67 rounded up to 8
  EXPECT_EQ(layout.add(variable("big", 4, 1, 64)).offset, 128u);
  EXPECT_EQ(layout.stride(), 192u);  // a multiple of the largest alignment
}

TEST(Arena, RejectsBadVariables) {
  ArenaLayout layout;
  layout.add(variable("a", 8, 1));
  EXPECT_NE(error_of([&] { layout.add(variable("a", 8, 1)); }).find("declared twice"),
            std::string::npos);
  EXPECT_NE(error_of([&] { layout.add(variable("z", 0, 1)); }).find("size 0"), std::string::npos);
  EXPECT_NE(error_of([&] { layout.add(variable("b", 8, 1, 24)); }).find("power of two"),
            std::string::npos);
  PerWaveVariable keyed = variable("k", 8, 2);
  keyed.keys = {0x100};
  EXPECT_NE(error_of([&] { layout.add(keyed); }).find("1 keys for 2 elements"), std::string::npos);
}

RewriteNote sample_note() {
  RewriteNote note;
  note.tool = "bbcount";
  note.original_sha256 = std::string(64, 'a');
  InstrumentedKernel kernel;
  kernel.name = "k";
  kernel.descriptor_symbol = "k.kd";
  kernel.arena_arg_offset = 288;
  PerWaveVariable counts = variable("block_counts", 8, 3);
  counts.keys = {0x1900, 0x1a10, 0x1a40};
  kernel.layout.add(counts);
  note.kernels.push_back(kernel);
  note.address_map = {{0x3000, 0x1900, 0x20}, {0x3040, 0x1920, 0x10}};
  return note;
}

TEST(Note, RoundTripsThroughMessagePack) {
  const RewriteNote note = sample_note();
  const RewriteNote back = decode_note(encode_note(note), "test");
  EXPECT_EQ(note_to_json(back), note_to_json(note));
  EXPECT_EQ(back.kernels.at(0).layout.stride(), 64u + 24u);
  EXPECT_EQ(back.original_address(0x3044), 0x1924u);
  EXPECT_EQ(back.original_address(0x3020), std::nullopt);  // inserted code
  EXPECT_EQ(back.find_kernel("k.kd"), &back.kernels[0]);
}

// Re-encodes a note after `edit` changed its MessagePack document.
std::vector<std::uint8_t> edited(const std::function<void(llvm::msgpack::MapDocNode)>& edit) {
  const std::vector<std::uint8_t> bytes = encode_note(sample_note());
  llvm::msgpack::Document document;
  EXPECT_TRUE(document.readFromBlob(
      llvm::StringRef(reinterpret_cast<const char*>(bytes.data()), bytes.size()), false));
  edit(document.getRoot().getMap());
  std::string blob;
  document.writeToBlob(blob);
  return {blob.begin(), blob.end()};
}

TEST(Note, RejectionsNameTheProblem) {
  const std::vector<std::uint8_t> garbage = {0xc1, 0x00, 0x13};
  EXPECT_NE(error_of([&] {
              decode_note(garbage, "x.co");
            }).find("x.co: the WAVEKIT note is not valid MessagePack"),
            std::string::npos);
  // A map as a map key crashed LLVM's msgpack::Document reader (found by rewrite_fuzz).
  const std::vector<std::uint8_t> map_key = {0x81, 0x81, 0xa1, 'k', 0x01, 0x01};
  EXPECT_NE(error_of([&] {
              decode_note(map_key, "x.co");
            }).find("x.co: the WAVEKIT note has a map key that is not a string"),
            std::string::npos);
  auto kernel = [](llvm::msgpack::MapDocNode root) {
    return root["wavekit.kernels"].getArray()[0].getMap();
  };
  EXPECT_NE(error_of([&] {
              decode_note(edited([&](auto root) { root.erase(root.find("wavekit.tool")); }), "t");
            }).find("missing key 'wavekit.tool'"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              decode_note(edited([&](auto root) { kernel(root)[".stride"] = 8u; }), "t");
            }).find(".stride disagrees"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              decode_note(edited([&](auto root) { root["wavekit.version"].getArray()[0] = 7u; }),
                          "t");
            }).find("unsupported wavekit.version"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              decode_note(edited([&](auto root) { kernel(root)[".name"] = 5u; }), "t");
            }).find("'.name' is not a string"),
            std::string::npos);
}

TEST(Arena, LauncherHeaderAndReporterAgree) {
  const RewriteNote note = sample_note();
  const InstrumentedKernel& kernel = note.kernels[0];
  // 2 x 1 x 1 workgroups of 100 work-items: two waves each, the second partly empty.
  const std::uint32_t grid[3] = {200, 1, 1};
  const std::uint16_t block[3] = {100, 1, 1};
  EXPECT_EQ(dispatch_wave_count(grid, block), 4u);
  std::vector<std::uint8_t> arena(arena_size(kernel, grid, block), 0);
  EXPECT_EQ(arena.size(), 64u + 4u * kernel.layout.stride());
  fill_arena_header(arena, kernel, grid, block);
  probe::ArenaHeader header;
  std::memcpy(&header, arena.data(), sizeof header);
  EXPECT_EQ(header.waves_per_workgroup, 2);
  EXPECT_EQ(header.grid_workgroups[0], 2u);
  EXPECT_EQ(header.wave_count, 4u);

  EXPECT_EQ(header.next_slot, 64u);

  // What two waves' prologues and counters would leave: waves 3 and 1 ran and claimed slots in
  // that order; each is its workgroup's second wave, whose lane 0 is work-item 64.
  std::uint64_t claimed = 0;
  for (std::uint64_t wave : {3u, 1u}) {
    probe::CaptureRegion capture{};
    capture.workgroup_id[0] = static_cast<std::uint32_t>(wave / 2);
    capture.first_workitem = 64;
    std::uint8_t* slot = arena.data() + 64 + claimed++ * kernel.layout.stride();
    std::memcpy(slot, &capture, sizeof capture);
    const std::uint64_t count = 10 * wave;
    std::memcpy(slot + kernel.layout.find("block_counts")->offset + 8, &count, 8);
  }
  header.next_slot = 64 + claimed * kernel.layout.stride();
  std::memcpy(arena.data(), &header, sizeof header);
  const nlohmann::json report = tool_report("bbcount", kernel, arena);
  const nlohmann::json expected = {{"kernel", "k"},
                                   {"waves",
                                    {{{"id", 1},
                                      {"workgroup", {0, 0, 0}},
                                      {"wave_in_workgroup", 1},
                                      {"blocks", {{"0x1a10", 10}}}},
                                     {{"id", 3},
                                      {"workgroup", {1, 0, 0}},
                                      {"wave_in_workgroup", 1},
                                      {"blocks", {{"0x1a10", 30}}}}}}};
  EXPECT_EQ(report, expected);

  EXPECT_NE(error_of([&] {
              read_arena(std::span<const std::uint8_t>(arena).first(100), kernel);
            }).find("cannot hold the 4 waves"),
            std::string::npos);
  std::vector<std::uint8_t> wrong_stride = arena;
  wrong_stride[32] = 8;
  EXPECT_NE(error_of([&] { read_arena(wrong_stride, kernel); }).find("header stride 8"),
            std::string::npos);
  std::vector<std::uint8_t> torn = arena;
  torn[probe::kArenaNextSlot] += 8;
  EXPECT_NE(error_of([&] { read_arena(torn, kernel); }).find("is not the end of one of its"),
            std::string::npos);
  std::vector<std::uint8_t> twice = arena;  // the second slot claims wave 3 as well
  twice[64 + kernel.layout.stride() + probe::kCaptureWorkgroupId] = 1;
  EXPECT_NE(error_of([&] { read_arena(twice, kernel); }).find("two slots hold wave 3"),
            std::string::npos);
  std::vector<std::uint8_t> misaligned = arena;  // lane 0 of a wave is a multiple of 64
  misaligned[64 + probe::kCaptureFirstWorkitem] = 63;
  EXPECT_NE(error_of([&] { read_arena(misaligned, kernel); }).find("slot 0 holds no wave"),
            std::string::npos);
}

// Block counts derived from edge counters (bbcount; src/rewrite/src/flow.h): the note carries
// each element's sum and is version 3, which a 2.x reader refuses instead of misreading; a
// note without derived elements stays 2.0. The reporter solves every block's count from the
// counters, and refuses counters that would make one negative.
RewriteNote derived_note() {
  RewriteNote note = sample_note();
  InstrumentedKernel& kernel = note.kernels[0];
  PerWaveVariable counts = variable("block_counts", 8, 3);
  counts.keys = {0x1900, 0x1a10, 0x1a40};
  counts.counters = 2;
  // The entry once; block 1 on counter 0; block 2 = entry - counter 0 + counter 1 (a loop).
  counts.sums = {{1, {}}, {0, {{0, 1}}}, {1, {{0, -1}, {1, 1}}}};
  kernel.layout = ArenaLayout();
  kernel.layout.add(counts);
  return note;
}

std::vector<std::uint64_t> version_of(const std::vector<std::uint8_t>& bytes) {
  const nlohmann::json json = note_to_json(decode_note(bytes, "test"));
  return json["wavekit.version"].get<std::vector<std::uint64_t>>();
}

TEST(Note, DerivedElementsRoundTripAsVersion3) {
  EXPECT_EQ(version_of(encode_note(sample_note())), (std::vector<std::uint64_t>{2, 0}));
  const RewriteNote note = derived_note();
  const std::vector<std::uint8_t> bytes = encode_note(note);
  EXPECT_EQ(version_of(bytes), (std::vector<std::uint64_t>{3, 0}));
  const RewriteNote back = decode_note(bytes, "test");
  EXPECT_EQ(note_to_json(back), note_to_json(note));
  const PlacedVariable& counts = *back.kernels[0].layout.find("block_counts");
  EXPECT_EQ(counts.variable.sums, note.kernels[0].layout.find("block_counts")->variable.sums);
  EXPECT_EQ(back.kernels[0].layout.stride(), 64u + 16u);  // two counters, not three elements

  llvm::msgpack::Document document;
  ASSERT_TRUE(document.readFromBlob(
      llvm::StringRef(reinterpret_cast<const char*>(bytes.data()), bytes.size()), false));
  document.getRoot().getMap()["wavekit.version"].getArray()[0] = 2u;
  std::string blob;
  document.writeToBlob(blob);
  EXPECT_NE(error_of([&] {
              decode_note(std::vector<std::uint8_t>(blob.begin(), blob.end()), "t");
            }).find("derived elements in a 2.x note"),
            std::string::npos);
  PerWaveVariable bad = variable("b", 8, 1);
  bad.counters = 1;
  bad.sums = {{0, {{1, 1}}}};
  EXPECT_NE(error_of([&] { ArenaLayout().add(bad); }).find("names counter 1 of 1"),
            std::string::npos);
}

TEST(Arena, DerivedCountsAreSolvedAndNegativeOnesRefused) {
  const RewriteNote note = derived_note();
  const InstrumentedKernel& kernel = note.kernels[0];
  const std::uint32_t grid[3] = {64, 1, 1};
  const std::uint16_t block[3] = {64, 1, 1};
  std::vector<std::uint8_t> arena(arena_size(kernel, grid, block), 0);
  fill_arena_header(arena, kernel, grid, block);
  probe::ArenaHeader header;
  std::memcpy(&header, arena.data(), sizeof header);
  header.next_slot = 64 + kernel.layout.stride();
  std::memcpy(arena.data(), &header, sizeof header);
  const std::uint64_t offset = 64 + kernel.layout.find("block_counts")->offset;
  auto set_counters = [&](std::uint64_t c0, std::uint64_t c1) {
    std::memcpy(arena.data() + offset, &c0, 8);
    std::memcpy(arena.data() + offset + 8, &c1, 8);
  };
  set_counters(1, 6);  // block 1 entered once, block 2 1 - 1 + 6 times
  EXPECT_EQ(tool_report("bbcount", kernel, arena)["waves"][0]["blocks"],
            (nlohmann::json{{"0x1900", 1}, {"0x1a10", 1}, {"0x1a40", 6}}));
  set_counters(0, 0);
  EXPECT_EQ(tool_report("bbcount", kernel, arena)["waves"][0]["blocks"],
            (nlohmann::json{{"0x1900", 1}, {"0x1a40", 1}}));
  set_counters(3, 1);  // 1 - 3 + 1 < 0: not the counters of a wave that ran this code
  EXPECT_NE(error_of([&] {
              tool_report("bbcount", kernel, arena);
            }).find("element 2 of wave 0 derives to -1 from its counters"),
            std::string::npos);
}

TEST(Plan, ParsesAndRoundTrips) {
  const nlohmann::json json = nlohmann::json::parse(R"({
    "kernels": ["k"],
    "variables": [{"name": "hits", "element_size": 8, "count": 1}],
    "points": [
      {"where": "block_entry", "snippet": {"op": "increment", "variable": "hits"}},
      {"where": "before_instruction", "addresses": ["0x1a04", 6700],
       "call": {"probe": "on_inst", "args": [{"kind": "point_id"}, {"kind": "register", "name": "v3"},
                                              {"kind": "constant", "value": 7}]}}]})");
  const Plan plan = parse_plan(json, "p.json");
  ASSERT_EQ(plan.points.size(), 2u);
  EXPECT_EQ(plan.points[1].addresses, (std::vector<std::uint64_t>{0x1a04, 6700}));
  EXPECT_EQ(plan.points[1].call->args[1].name, "v3");
  EXPECT_TRUE(plan.has_calls());
  EXPECT_EQ(plan_to_json(parse_plan(plan_to_json(plan), "again")), plan_to_json(plan));
}

TEST(Plan, RejectionsNameThePlace) {
  auto parse = [](const char* text) {
    return error_of([&] { parse_plan(nlohmann::json::parse(text), "p.json"); });
  };
  EXPECT_EQ(parse(R"({"points": [{"where": "block_entry", "snippet": {"op": "increment",
            "variable": "nope"}}]})"),
            "p.json: points[0].snippet.variable: variable 'nope' is not declared");
  EXPECT_EQ(parse(R"({"points": [{"where": "somewhere", "snippet": {}}]})")
                .rfind("p.json: points[0].where: unknown kind 'somewhere'", 0),
            0u);
  EXPECT_EQ(parse(R"({"points": [{"where": "block_entry"}]})"),
            "p.json: points[0]: give exactly one of 'snippet' and 'call'");
  EXPECT_EQ(parse(R"({"pionts": []})"), "p.json: unknown key 'pionts'");
  EXPECT_EQ(parse(R"({"points": [{"where": "kernel_entry", "call": {"probe": "f",
            "args": [{"kind": "return_value"}]}}]})"),
            "p.json: points[0].call.args[0]: return_value is only available at call_return points");
  EXPECT_NE(error_of([] { tool_plan("bbcnt"); }).find("has: bbcount"), std::string::npos);
  // The arena's fields are 32-bit: 2^32 + 1 used to become 1.
  for (const char* key : {"count", "element_size", "alignment"})
    EXPECT_EQ(
        parse((std::string(R"({"variables": [{"name": "v", ")") + key +
               R"(": 4294967297}], "points": [{"where": "block_entry", "snippet": {"op":
                     "increment", "variable": "v"}}]})")
                  .c_str()),
        std::string("p.json: variables[0].") + key + ": 4294967297 is larger than 4294967295");
}

// A variable that would make a wave's slot larger than a launcher can provision is refused,
// naming it, instead of wrapping or asking for terabytes at launch.
TEST(Arena, RefusesASlotNoLauncherCanProvision) {
  ArenaLayout layout;
  EXPECT_NE(error_of([&] { layout.add(variable("huge", 8, 0xffffffffu)); })
                .find("per-wave variable 'huge': 8 x 4294967295 bytes would make a wave's arena "
                      "slot larger than the 256 MiB"),
            std::string::npos);
  EXPECT_NE(error_of([&] { layout.add(variable("aligned", 8, 1, 1u << 31)); }).find("256 MiB"),
            std::string::npos);
}

// AMDGPUUsage's order: private segment buffer, dispatch ptr, queue ptr, kernarg ptr, dispatch
// id, flat scratch init, private segment size; then workgroup ids x y z, workgroup info, wave
// offset.
TEST(EntryAbi, SgprsFollowTheLaunchOrder) {
  codeobj::Target gfx908;
  gfx908.processor = "gfx908";
  gfx908.mach = 0x30;
  codeobj::KernelDescriptor kd;
  kd.set_enable_sgpr_private_segment_buffer(true);
  kd.set_enable_sgpr_kernarg_segment_ptr(true);
  kd.set_enable_sgpr_flat_scratch_init(true);
  kd.set_user_sgpr_count(8);
  kd.set_enable_sgpr_workgroup_id_x(true);
  kd.set_enable_sgpr_workgroup_id_z(true);
  kd.set_enable_private_segment(true);
  const auto layout = detail::entry_sgprs(kd, gfx908, "k");
  using detail::EntryValue;
  ASSERT_EQ(layout.size(), 6u);
  EXPECT_EQ(detail::find_entry(layout, EntryValue::kernarg_ptr)->first, 4u);
  EXPECT_EQ(detail::find_entry(layout, EntryValue::flat_scratch_init)->first, 6u);
  EXPECT_EQ(detail::find_entry(layout, EntryValue::workgroup_id_x)->first, 8u);
  EXPECT_EQ(detail::find_entry(layout, EntryValue::workgroup_id_z)->first, 9u);
  EXPECT_EQ(detail::find_entry(layout, EntryValue::private_segment_wave_offset)->first, 10u);
  kd.set_user_sgpr_count(6);
  EXPECT_NE(error_of([&] { detail::entry_sgprs(kd, gfx908, "k"); }).find("USER_SGPR_COUNT (6)"),
            std::string::npos);
}

// The prologue's capture-region stores for launch layouts the corpus does not have yet (queue
// pointer between the dispatch and kernarg pointers, workgroup ids at odd SGPRs, a system SGPR
// or the reserved block right after workgroup_id_z): every capture dword is stored once, from
// the register the hardware launched its value in (or the one v_readfirstlane filled), before
// any move overwrites a launch register; and LLVM's assembler takes the text on every target.
TEST(EntryAbi, PrologueStoresTheCaptureRegionForEveryLayout) {
  using detail::EntrySgpr;
  using V = detail::EntryValue;
  struct Layout {
    const char* what;
    std::vector<EntrySgpr> launched;
    unsigned reserved_base;
    std::vector<EntrySgpr> original;  // before the rewrite added SGPRs: moves follow the stores
  };
  const std::vector<Layout> layouts = {
      {"private buffer, workgroup ids at s8",
       {{V::private_segment_buffer, 0, 4},
        {V::dispatch_ptr, 4, 2},
        {V::kernarg_ptr, 6, 2},
        {V::workgroup_id_x, 8, 1},
        {V::workgroup_id_y, 9, 1},
        {V::workgroup_id_z, 10, 1}},
       12,
       {{V::private_segment_buffer, 0, 4}, {V::kernarg_ptr, 4, 2}, {V::workgroup_id_x, 6, 1}}},
      {"queue pointer, workgroup info after the ids",
       {{V::dispatch_ptr, 0, 2},
        {V::queue_ptr, 2, 2},
        {V::kernarg_ptr, 4, 2},
        {V::workgroup_id_x, 6, 1},
        {V::workgroup_id_y, 7, 1},
        {V::workgroup_id_z, 8, 1},
        {V::workgroup_info, 9, 1}},
       12,
       {{V::queue_ptr, 0, 2},
        {V::kernarg_ptr, 2, 2},
        {V::workgroup_id_x, 4, 1},
        {V::workgroup_info, 5, 1}}},
      {"workgroup ids at s7, scratch wave offset after them",
       {{V::dispatch_ptr, 0, 2},
        {V::kernarg_ptr, 2, 2},
        {V::dispatch_id, 4, 2},
        {V::private_segment_size, 6, 1},
        {V::workgroup_id_x, 7, 1},
        {V::workgroup_id_y, 8, 1},
        {V::workgroup_id_z, 9, 1},
        {V::private_segment_wave_offset, 10, 1}},
       12,
       {{V::kernarg_ptr, 0, 2},
        {V::dispatch_id, 2, 2},
        {V::private_segment_size, 4, 1},
        {V::workgroup_id_x, 5, 1},
        {V::private_segment_wave_offset, 6, 1}}},
      {"reserved block right after the ids",
       {{V::dispatch_ptr, 0, 2},
        {V::kernarg_ptr, 2, 2},
        {V::private_segment_size, 4, 1},
        {V::workgroup_id_x, 5, 1},
        {V::workgroup_id_y, 6, 1},
        {V::workgroup_id_z, 7, 1}},
       8,
       {{V::dispatch_ptr, 0, 2},
        {V::kernarg_ptr, 2, 2},
        {V::private_segment_size, 4, 1},
        {V::workgroup_id_x, 5, 1}}},
  };
  for (const char* processor : {"gfx908", "gfx90a", "gfx942"}) {
    const isa::Assembler assembler(processor);
    for (const Layout& layout : layouts) {
      SCOPED_TRACE(std::string(processor) + ": " + layout.what);
      detail::PrologueInput in;
      in.target = codeobj::decode_target(
          std::string(processor) == "gfx908"   ? llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX908
          : std::string(processor) == "gfx90a" ? llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A
                                               : llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX942,
          llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V5, "test");
      in.launched = layout.launched;
      in.original = layout.original;
      in.reserved = detail::ReservedSgprs::block(layout.reserved_base, false);
      in.arena_arg_offset = 0x120;
      in.stride = 0x58;
      const std::string text = detail::entry_prologue(in);
      EXPECT_NO_THROW(assembler.assemble(text)) << text;

      // What each launch register holds, by capture dword.
      std::map<unsigned, std::string> holds;
      for (const EntrySgpr& e : layout.launched)
        for (unsigned i = 0; i < e.count; ++i)
          holds[e.first + i] = std::to_string(int(e.value)) + "." + std::to_string(i);
      const std::vector<std::string> expected = {
          holds[find_entry(in.launched, V::dispatch_ptr)->first],
          holds[find_entry(in.launched, V::dispatch_ptr)->first + 1],
          holds[find_entry(in.launched, V::kernarg_ptr)->first],
          holds[find_entry(in.launched, V::kernarg_ptr)->first + 1],
          holds[find_entry(in.launched, V::workgroup_id_x)->first],
          holds[find_entry(in.launched, V::workgroup_id_y)->first],
          holds[find_entry(in.launched, V::workgroup_id_z)->first],
          "first work-item"};
      std::vector<std::string> stored(8);
      std::vector<int> times(8, 0);
      bool moved = false;
      std::istringstream lines(text);
      const std::regex readfirstlane(R"(v_readfirstlane_b32 s(\d+), v0)");
      const std::regex store(
          R"(s_store_dword(x2|x4)? s\[?(\d+)(:\d+)?\]?, s\[\d+:\d+\], 0x([0-9a-f]+))");
      const std::regex move(R"(s_mov_b(32|64) s\[?(\d+))");
      for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (std::regex_search(line, m, readfirstlane)) holds[std::stoul(m[1])] = "first work-item";
        if (std::regex_search(line, m, move) && std::stoul(m[2]) < layout.reserved_base)
          moved = true;
        if (!std::regex_search(line, m, store)) continue;
        EXPECT_FALSE(moved) << "a store after a move: " << line;
        const unsigned width = m[1] == "x4" ? 4 : m[1] == "x2" ? 2 : 1;
        const unsigned first = std::stoul(m[2]);
        const unsigned offset = std::stoul(m[4], nullptr, 16);
        EXPECT_EQ(width == 1 ? 0 : first % width, 0u) << "misaligned source: " << line;
        for (unsigned i = 0; i < width; ++i) {
          ASSERT_LT(offset / 4 + i, 8u) << line;
          stored[offset / 4 + i] = holds[first + i];
          ++times[offset / 4 + i];
        }
      }
      EXPECT_EQ(stored, expected) << text;
      EXPECT_EQ(times, std::vector<int>(8, 1)) << text;
    }
  }
}

}  // namespace
}  // namespace wavekit::rewrite
