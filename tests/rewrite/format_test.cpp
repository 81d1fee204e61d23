// The formats other parts rely on: the arena layout, the WAVEKIT note (round trip and every
// rejection), the arena a launcher fills and a reporter reads, the plan JSON, and where the
// hardware puts the entry SGPRs.
#include <gtest/gtest.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>

#include <cstring>

#include "entry_abi.h"  // the engine's internal view of the launch ABI
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
  EXPECT_NE(error_of([&] { decode_note(garbage, "x.co"); }).find("x.co: WAVEKIT note: "),
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

}  // namespace
}  // namespace wavekit::rewrite
