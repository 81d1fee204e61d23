// Kernel descriptors against llvm-objdump-22's .amdhsa_* directives, and encode/decode.
#include <gtest/gtest.h>

#include "test_support.h"
#include "wavekit/codeobj/code_object.h"

namespace wavekit::codeobj {
namespace {

using testing::file_name;
using testing::load;

class EveryObjectDescriptors : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryObjectDescriptors, DirectivesEqualObjdump) {
  CodeObject object = CodeObject::parse(load(GetParam()), GetParam());
  // objdump finds descriptors through .symtab only; for a stripped object ask it about the
  // object it was stripped from ("<name>_stripped.co" <- "<name>.co"), whose descriptors are
  // the same bytes that we found through .dynsym and the note.
  std::string oracle_path = GetParam();
  if (object.symbols().empty()) {
    auto position = oracle_path.rfind("_stripped.co");
    ASSERT_NE(position, std::string::npos) << "a stripped object without its unstripped twin";
    oracle_path.replace(position, std::string("_stripped.co").size(), ".co");
  }
  auto expected = testing::objdump_directives(oracle_path, object.target().processor);
  ASSERT_EQ(expected.size(), object.kernels().size());
  for (const auto& kernel : object.kernels()) {
    SCOPED_TRACE(kernel.name);
    ASSERT_TRUE(expected.count(kernel.descriptor_symbol));
    EXPECT_EQ(amdhsa_directives(kernel.descriptor, object.target()),
              expected[kernel.descriptor_symbol]);
  }
}

TEST_P(EveryObjectDescriptors, EncodeOfDecodeIsIdentity) {
  CodeObject object = CodeObject::parse(load(GetParam()), GetParam());
  for (const auto& kernel : object.kernels()) {
    auto original = object.read(kernel.descriptor_address, KernelDescriptor::kSize);
    auto encoded = KernelDescriptor::decode(original).encode();
    EXPECT_TRUE(std::equal(encoded.begin(), encoded.end(), original.begin()));
  }
}

INSTANTIATE_TEST_SUITE_P(Descriptor, EveryObjectDescriptors,
                         ::testing::ValuesIn(testing::test_inputs()), [](const auto& info) {
                           std::string name = file_name(info.param);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// Change every settable field, write the object, and let objdump read the result back.
TEST(Descriptor, SettersAreSeenByObjdump) {
  CodeObject object = CodeObject::parse(load(WAVEKIT_CODEOBJ_UNSTRIPPED), "gfx942");
  KernelDescriptor kd = object.kernels()[0].descriptor;
  kd.group_segment_fixed_size = 4096;
  kd.private_segment_fixed_size = 272;
  kd.set_granulated_workitem_vgpr_count(5);   // 48 VGPRs on gfx942 (granule 8)
  kd.set_granulated_wavefront_sgpr_count(7);  // 64 SGPRs
  kd.set_enable_sgpr_workgroup_id_y(true);
  kd.set_enable_sgpr_workgroup_id_z(true);
  kd.set_enable_vgpr_workitem_id(2);
  kd.set_enable_private_segment(true);
  kd.set_enable_sgpr_dispatch_ptr(true);
  kd.set_enable_sgpr_queue_ptr(true);
  // The two pointers take four more user SGPRs (the parser refuses a count that disagrees).
  kd.set_user_sgpr_count(kd.user_sgpr_count() + 4);
  kd.set_accum_offset_field(7);  // AGPRs from v32
  kd.set_uses_dynamic_stack(true);
  object.set_descriptor(0, kd);
  EXPECT_EQ(object.kernels()[0].descriptor, kd);
  std::string path = testing::scratch_path("descriptor_setters.co");
  testing::save(path, object.write());
  auto directives =
      testing::objdump_directives(path, "gfx942")[object.kernels()[0].descriptor_symbol];
  std::map<std::string, std::int64_t> seen(directives.begin(), directives.end());
  EXPECT_EQ(seen["group_segment_fixed_size"], 4096);
  EXPECT_EQ(seen["private_segment_fixed_size"], 272);
  EXPECT_EQ(seen["next_free_vgpr"], 48);
  EXPECT_EQ(seen["next_free_sgpr"], 64);
  EXPECT_EQ(seen["system_sgpr_workgroup_id_y"], 1);
  EXPECT_EQ(seen["system_sgpr_workgroup_id_z"], 1);
  EXPECT_EQ(seen["system_vgpr_workitem_id"], 2);
  EXPECT_EQ(seen["enable_private_segment"], 1);
  EXPECT_EQ(seen["user_sgpr_dispatch_ptr"], 1);
  EXPECT_EQ(seen["user_sgpr_queue_ptr"], 1);
  EXPECT_EQ(seen["accum_offset"], 32);
  EXPECT_EQ(seen["uses_dynamic_stack"], 1);
  // And our decoder reads back what objdump reads.
  CodeObject reread = CodeObject::parse(load(path), path);
  EXPECT_EQ(amdhsa_directives(reread.kernels()[0].descriptor, reread.target()), directives);
}

TEST(Descriptor, DecodedAccessorsOnAKnownDescriptor) {
  // A gfx908 descriptor written field by field: rsrc1 = vgpr gran 3, sgpr gran 4, denorm modes 3/3,
  // dx10 clamp, ieee; rsrc2 = private segment, user sgpr count 6, wgid x y, workitem id 1;
  // properties = PSB, kernarg ptr, flat scratch init.
  std::array<std::uint8_t, 64> bytes{};
  auto put32 = [&](std::size_t offset, std::uint32_t value) {
    std::memcpy(&bytes[offset], &value, 4);
  };
  put32(0, 1024);
  put32(4, 16);
  put32(8, 24);
  std::int64_t entry = 0x1200;
  std::memcpy(&bytes[16], &entry, 8);
  put32(48, 3 | (4 << 6) | (3 << 16) | (3 << 18) | (1 << 21) | (1 << 23));
  put32(52, 1 | (6 << 1) | (1 << 7) | (1 << 8) | (1 << 11));
  std::uint16_t properties = 1 | (1 << 3) | (1 << 5);
  std::memcpy(&bytes[56], &properties, 2);
  KernelDescriptor kd = KernelDescriptor::decode(bytes);
  EXPECT_EQ(kd.group_segment_fixed_size, 1024u);
  EXPECT_EQ(kd.private_segment_fixed_size, 16u);
  EXPECT_EQ(kd.kernarg_size, 24u);
  EXPECT_EQ(kd.kernel_code_entry_byte_offset, 0x1200);
  EXPECT_EQ(kd.granulated_workitem_vgpr_count(), 3u);
  EXPECT_EQ(kd.granulated_wavefront_sgpr_count(), 4u);
  EXPECT_EQ(kd.float_denorm_mode_32(), 3u);
  EXPECT_TRUE(kd.enable_dx10_clamp());
  EXPECT_TRUE(kd.enable_ieee_mode());
  EXPECT_TRUE(kd.enable_private_segment());
  EXPECT_EQ(kd.user_sgpr_count(), 6u);
  EXPECT_TRUE(kd.enable_sgpr_workgroup_id_x());
  EXPECT_TRUE(kd.enable_sgpr_workgroup_id_y());
  EXPECT_FALSE(kd.enable_sgpr_workgroup_id_z());
  EXPECT_EQ(kd.enable_vgpr_workitem_id(), 1u);
  EXPECT_TRUE(kd.enable_sgpr_private_segment_buffer());
  EXPECT_FALSE(kd.enable_sgpr_dispatch_ptr());
  EXPECT_TRUE(kd.enable_sgpr_kernarg_segment_ptr());
  EXPECT_TRUE(kd.enable_sgpr_flat_scratch_init());
  EXPECT_FALSE(kd.wave32());
  Target gfx908 = decode_target(0x530, 2, "test");
  EXPECT_EQ(kd.vgpr_grant(gfx908), 16u);
  EXPECT_EQ(kd.sgpr_grant(), 40u);
  Target gfx90a = decode_target(0x53f, 3, "test");
  EXPECT_EQ(kd.vgpr_grant(gfx90a), 32u);
  EXPECT_TRUE(kd.encode() == bytes);
  EXPECT_THROW(KernelDescriptor::decode(std::span(bytes).first(63)), Error);
}

// AMDGPUUsage's target-ID rule: a feature that is Any in one object agrees with any setting in the
// other (a library for plain gfx90a and CLR's blit kernels for gfx90a:sramecc-:xnack- load into
// one executable on ROCr: kfd.run_callret_blit_kernels); On and Off do not.
TEST(Target, CompatibleWhereEachFeatureAgreesOrIsAny) {
  const Target any = decode_target(0x3f | 0x100 | 0x400, 2, "any");         // gfx90a
  const Target off = decode_target(0x3f | 0x200 | 0x800, 2, "off");         // :sramecc-:xnack-
  const Target xnack_on = decode_target(0x3f | 0x300 | 0x800, 2, "xnack");  // :sramecc-:xnack+
  const Target gfx908 = decode_target(0x530 | 0x100 | 0x400, 2, "gfx908");
  EXPECT_EQ(any.target_id(), "gfx90a");
  EXPECT_EQ(off.target_id(), "gfx90a:sramecc-:xnack-");
  EXPECT_TRUE(any.compatible_with(off));
  EXPECT_TRUE(off.compatible_with(any));
  EXPECT_TRUE(xnack_on.compatible_with(any));
  EXPECT_FALSE(xnack_on.compatible_with(off));
  EXPECT_FALSE(off.compatible_with(xnack_on));
  EXPECT_FALSE(gfx908.compatible_with(any));
}

TEST(Target, DecodesFlagsAndRefusesWave32) {
  Target target = decode_target(0xe30, 2, "x");
  EXPECT_EQ(target.processor, "gfx908");
  EXPECT_EQ(target.code_object_version, 4u);
  EXPECT_EQ(target.xnack, Target::Feature::Off);
  EXPECT_EQ(target.sramecc, Target::Feature::On);
  EXPECT_EQ(target.target_id(), "gfx908:sramecc+:xnack-");
  EXPECT_FALSE(target.has_architected_flat_scratch());
  Target mi300 = decode_target(0x34c, 4, "x");
  EXPECT_EQ(mi300.processor, "gfx942");
  EXPECT_EQ(mi300.code_object_version, 6u);
  EXPECT_EQ(mi300.target_id(), "gfx942:xnack+");
  EXPECT_TRUE(mi300.has_architected_flat_scratch());
  EXPECT_EQ(decode_target(0x51, 4, "x").processor, "gfx9-generic");
  EXPECT_EQ(decode_target(0x4f, 4, "x").processor, "gfx950");
  EXPECT_EQ(decode_target(0x40, 3, "x").processor, "gfx940");
  try {
    decode_target(0x36, 3, "rdna.co");
    FAIL() << "gfx1030 accepted";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "rdna.co: gfx1030 is not supported yet (wave32)");
  }
  try {
    decode_target(0x2c, 3, "vega.co");  // gfx900
    FAIL() << "gfx900 accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("EF_AMDGPU_MACH 0x2c"), std::string::npos);
  }
  EXPECT_THROW(decode_target(0x30, 1, "v3.co"), Error);  // code object v3
  EXPECT_EQ(mach_of_processor("gfx90a"), 0x3fu);
}

}  // namespace
}  // namespace wavekit::codeobj
