// isa against independent oracles: llvm-objdump-22's listing of every corpus object (text and
// size of every instruction), the ISA's documented register effects for hand-picked
// instructions, published encodings, and the assembler/decoder round trip.
#include "wavekit/isa/isa.h"

#include <gtest/gtest.h>

#include <regex>

#include "corpus_elf.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"
#include "wavekit/corpus/corpus.h"
#include "wavekit/support/error.h"

namespace wavekit::isa {
// GoogleTest prints register sets in the ISA's own notation.
void PrintTo(const RegisterSet& set, std::ostream* out) { *out << "{" << set.to_string() << "}"; }
}  // namespace wavekit::isa

namespace {

using wavekit::isa::Assembler;
using wavekit::isa::ControlFlow;
using wavekit::isa::Decoder;
using wavekit::isa::Instruction;
using wavekit::isa::MemoryAccess;
using wavekit::isa::MemoryKind;
using wavekit::isa::RegisterSet;

// The registers named in an instruction's printed operands ("v[0:1]", "s5", "vcc", "exec", "m0").
RegisterSet registers_in_text(const std::string& text) {
  RegisterSet set;
  static const std::regex reg(R"(\b([sva])(?:(\d+)|\[(\d+):(\d+)\])(?![\w:]))");
  std::string operands = text.substr(std::min(text.size(), text.find(' ')));
  for (auto it = std::sregex_iterator(operands.begin(), operands.end(), reg);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    unsigned first = std::stoi(m[2].matched ? m[2].str() : m[3].str());
    unsigned last = m[2].matched ? first : std::stoi(m[4].str());
    for (unsigned i = first; i <= last; ++i) {
      if (m[1] == "s") {
        set.sgpr.set(i);
      } else {
        (m[1] == "v" ? set.vgpr : set.agpr).set(i);
      }
    }
  }
  static const std::regex special(R"(\b(vcc|exec|m0)\b)");
  for (auto it = std::sregex_iterator(operands.begin(), operands.end(), special);
       it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1];
    if (name == "m0") {
      set.sgpr.set(wavekit::isa::sgpr_id::m0);
    } else {
      unsigned lo = name == "vcc" ? wavekit::isa::sgpr_id::vcc_lo : wavekit::isa::sgpr_id::exec_lo;
      set.sgpr.set(lo);
      set.sgpr.set(lo + 1);
    }
  }
  return set;
}

TEST(Decoder, EveryCorpusInstructionMatchesObjdump) {
  std::size_t objects = 0, instructions = 0;
  for (const auto& object : wavekit::corpus::objects()) {
    if (object.fat_binary) continue;  // a host ELF: its device code is codeobj's to extract
    SCOPED_TRACE(object.name);
    auto text = wavekit::testing::read_text_section(object.path);
    ASSERT_FALSE(text.bytes.empty());
    auto expected = wavekit::testing::objdump_instructions(object.path);
    ASSERT_FALSE(expected.empty());
    Decoder decoder(object.targets.front());
    auto range = decoder.decode_range(text.bytes, text.address);
    EXPECT_TRUE(range.errors.empty()) << range.errors.front().message;
    ASSERT_EQ(range.instructions.size(), expected.size());
    for (const Instruction& inst : range.instructions) {
      auto found = expected.find(inst.address);
      ASSERT_NE(found, expected.end()) << "objdump has no instruction at " << inst.address;
      ASSERT_EQ(inst.text, found->second.text) << "at 0x" << std::hex << inst.address;
      ASSERT_EQ(inst.size, found->second.size) << inst.text;
      EXPECT_EQ(inst.mnemonic, inst.text.substr(0, inst.text.find(' ')));
      // Every register the text names is read or written (the implicit ones come on top).
      ASSERT_TRUE((inst.reads | inst.writes).contains(registers_in_text(inst.text)))
          << inst.text << ": reads " << inst.reads.to_string() << ", writes "
          << inst.writes.to_string();
      // Vector ALU and memory work runs under EXEC.
      if (inst.mnemonic.starts_with("v_") || inst.memory == MemoryKind::global) {
        ASSERT_TRUE(inst.reads.exec() || inst.mnemonic.starts_with("v_readlane") ||
                    inst.mnemonic.starts_with("v_readfirstlane") ||
                    inst.mnemonic.starts_with("v_writelane"))
            << inst.text;
      }
    }
    ++objects;
    instructions += range.instructions.size();
  }
  EXPECT_GE(objects, 30u);
  RecordProperty("instructions", static_cast<int>(instructions));
}

TEST(Decoder, BranchTargetsMatchObjdumpAnnotations) {
  // objdump annotates a branch with "<symbol+0xOFF>"; the symbol's address comes from llvm-nm.
  const auto& object = wavekit::corpus::objects().front();
  auto text = wavekit::testing::read_text_section(object.path);
  auto expected = wavekit::testing::objdump_instructions(object.path);
  std::string symbols =
      wavekit::testing::run_command(std::string(WAVEKIT_LLVM_NM) + " " + object.path);
  Decoder decoder(object.targets.front());
  std::size_t branches = 0;
  for (const Instruction& inst : decoder.decode_all(text.bytes, text.address)) {
    if (!inst.branch_target) continue;
    const std::string& annotation = expected[inst.address].annotation;
    ASSERT_FALSE(annotation.empty()) << inst.text;
    std::string symbol = annotation.substr(1, annotation.find_first_of("+>") - 1);
    std::uint64_t offset = 0;
    if (annotation.find('+') != std::string::npos) {
      offset = std::stoull(annotation.substr(annotation.find('+') + 1), nullptr, 16);
    }
    std::size_t at = symbols.find(" " + symbol + "\n");
    ASSERT_NE(at, std::string::npos) << symbol;
    std::uint64_t base = std::stoull(symbols.substr(symbols.rfind('\n', at) + 1, 16), nullptr, 16);
    EXPECT_EQ(*inst.branch_target, base + offset) << inst.text;
    ++branches;
  }
  EXPECT_GT(branches, 5u);
}

// Assembles one instruction for gfx90a and decodes it back.
Instruction one(const std::string& text, const std::string& processor = "gfx90a") {
  auto bytes = Assembler(processor).assemble(text);
  auto decoded = Decoder(processor).decode_all(bytes, 0x1000);
  if (decoded.size() != 1) throw std::runtime_error("expected one instruction for " + text);
  return decoded.front();
}

RegisterSet registers(std::initializer_list<unsigned> sgprs, std::initializer_list<unsigned> vgprs,
                      std::initializer_list<unsigned> agprs = {}, bool scc = false) {
  RegisterSet set;
  for (unsigned s : sgprs) set.sgpr.set(s);
  for (unsigned v : vgprs) set.vgpr.set(v);
  for (unsigned a : agprs) set.agpr.set(a);
  set.scc = scc;
  return set;
}

namespace id = wavekit::isa::sgpr_id;

TEST(Decoder, RegisterEffectsFollowTheIsa) {
  // VALU: explicit operands plus EXEC; a VOPC/carry-out e32 form writes VCC.
  // The text oracle used over the corpus finds what it should.
  EXPECT_EQ(registers_in_text("global_load_dwordx2 v[4:5], v3, s[2:3] offset:16"),
            registers({2, 3}, {3, 4, 5}));
  EXPECT_EQ(registers_in_text("s_and_saveexec_b64 s[0:1], vcc"),
            registers({0, 1, id::vcc_lo, id::vcc_hi}, {}));
  auto add = one("v_add_co_u32_e32 v0, vcc, v1, v2");
  EXPECT_EQ(add.writes, registers({id::vcc_lo, id::vcc_hi}, {0}));
  EXPECT_EQ(add.reads, registers({id::exec_lo, id::exec_hi}, {1, 2}));
  // s_and_saveexec_b64: reads its source and EXEC, writes the destination, EXEC and SCC.
  auto saveexec = one("s_and_saveexec_b64 s[0:1], vcc");
  EXPECT_EQ(saveexec.writes, registers({0, 1, id::exec_lo, id::exec_hi}, {}, {}, true));
  EXPECT_EQ(saveexec.reads, registers({id::vcc_lo, id::vcc_hi, id::exec_lo, id::exec_hi}, {}));
  auto cselect = one("s_cselect_b32 s5, s6, 0");
  EXPECT_TRUE(cselect.reads.scc);
  EXPECT_EQ(cselect.writes, registers({5}, {}));
  auto mfma = one("v_mfma_f32_16x16x4f32 a[0:3], v0, v1, a[4:7]");
  EXPECT_EQ(mfma.writes, registers({}, {}, {0, 1, 2, 3}));
  EXPECT_TRUE(mfma.reads.contains(registers({}, {0, 1}, {4, 5, 6, 7})));
  auto m0 = one("s_mov_b32 m0, s2");
  EXPECT_EQ(m0.writes, registers({id::m0}, {}));
  auto flat_scratch = one("s_add_u32 flat_scratch_lo, s4, s7");
  EXPECT_TRUE(flat_scratch.writes.flat_scratch());
  EXPECT_TRUE(flat_scratch.writes.scc);
  auto readlane = one("v_readlane_b32 s3, v7, 17");
  EXPECT_EQ(readlane.writes, registers({3}, {}));
  EXPECT_TRUE(readlane.reads.vgpr[7]);
}

TEST(Decoder, MemoryAndControlFlowKinds) {
  struct Case {
    const char* text;
    MemoryKind memory;
    MemoryAccess access;
    ControlFlow flow;
  } cases[] = {
      {"s_load_dwordx2 s[0:1], s[4:5], 0x0", MemoryKind::scalar, MemoryAccess::load,
       ControlFlow::none},
      {"global_load_dword v1, v[2:3], off", MemoryKind::global, MemoryAccess::load,
       ControlFlow::none},
      {"global_store_dword v[2:3], v1, off", MemoryKind::global, MemoryAccess::store,
       ControlFlow::none},
      {"global_atomic_add v1, v0, s[4:5]", MemoryKind::global, MemoryAccess::atomic,
       ControlFlow::none},
      {"flat_load_dword v0, v[2:3]", MemoryKind::flat, MemoryAccess::load, ControlFlow::none},
      {"scratch_store_dword off, v1, s44 offset:40 glc", MemoryKind::scratch, MemoryAccess::store,
       ControlFlow::none},
      {"buffer_store_dword v0, off, s[0:3], 0", MemoryKind::buffer, MemoryAccess::store,
       ControlFlow::none},
      {"ds_read_b32 v0, v1", MemoryKind::lds, MemoryAccess::load, ControlFlow::none},
      {"ds_add_u32 v0, v1", MemoryKind::lds, MemoryAccess::atomic, ControlFlow::none},
      {"ds_bpermute_b32 v0, v1, v2", MemoryKind::none, MemoryAccess::none, ControlFlow::none},
      {"s_branch 3", MemoryKind::none, MemoryAccess::none, ControlFlow::branch},
      {"s_cbranch_execz 65535", MemoryKind::none, MemoryAccess::none,
       ControlFlow::conditional_branch},
      {"s_swappc_b64 s[30:31], s[4:5]", MemoryKind::none, MemoryAccess::none, ControlFlow::call},
      {"s_setpc_b64 s[30:31]", MemoryKind::none, MemoryAccess::none, ControlFlow::indirect},
      {"s_endpgm", MemoryKind::none, MemoryAccess::none, ControlFlow::end_program},
      {"s_trap 2", MemoryKind::none, MemoryAccess::none, ControlFlow::trap},
      {"v_add_f32_e32 v0, v1, v2", MemoryKind::none, MemoryAccess::none, ControlFlow::none},
  };
  for (const auto& c : cases) {
    auto inst = one(c.text);
    EXPECT_EQ(inst.text, c.text);
    EXPECT_EQ(inst.memory, c.memory) << c.text;
    EXPECT_EQ(inst.access, c.access) << c.text;
    EXPECT_EQ(inst.flow, c.flow) << c.text;
  }
  // simm16 is a signed dword offset from the next instruction.
  EXPECT_EQ(one("s_branch 3").branch_target, 0x1000u + 4 + 12);
  EXPECT_EQ(one("s_cbranch_execz 65535").branch_target, 0x1000u);  // -1: back onto itself
  EXPECT_FALSE(one("s_swappc_b64 s[30:31], s[4:5]").branch_target);
}

TEST(Assembler, PublishedEncodings) {
  // From ../shared/design/amdgpu-codeobject.md section 8 (llvm-mc -show-encoding, gfx908).
  Assembler gfx908("gfx908");
  EXPECT_EQ(gfx908.assemble("s_swappc_b64 s[30:31], s[4:5]"),
            (std::vector<std::uint8_t>{0x04, 0x1e, 0x9e, 0xbe}));
  EXPECT_EQ(gfx908.assemble("scratch_store_dword off, v1, s44 offset:40 glc"),
            (std::vector<std::uint8_t>{0x28, 0x40, 0x71, 0xdc, 0x00, 0x01, 0x2c, 0x00}));
}

TEST(Assembler, RoundTripsThroughTheDecoderWithLabels) {
  const std::string source =
      "s_mov_b32 s0, 0\n"
      "loop:\n"
      "s_add_u32 s0, s0, 1\n"
      "s_cmp_lt_u32 s0, 10\n"
      "s_cbranch_scc1 loop\n"
      "v_mov_b32_e32 v0, 0x12345678\n"
      "s_endpgm\n";
  for (const char* processor : {"gfx908", "gfx90a", "gfx942"}) {
    auto bytes = Assembler(processor).assemble(source);
    auto decoded = Decoder(processor).decode_all(bytes, 0);
    std::vector<std::string> texts;
    for (const auto& inst : decoded) texts.push_back(inst.text);
    EXPECT_EQ(texts, (std::vector<std::string>{"s_mov_b32 s0, 0", "s_add_u32 s0, s0, 1",
                                               "s_cmp_lt_u32 s0, 10", "s_cbranch_scc1 65533",
                                               "v_mov_b32_e32 v0, 0x12345678", "s_endpgm"}))
        << processor;
    EXPECT_EQ(decoded[3].branch_target, decoded[1].address);
  }
}

TEST(Assembler, ReencodesEveryCorpusInstruction) {
  for (const auto& object : wavekit::corpus::objects()) {
    if (object.fat_binary) continue;
    SCOPED_TRACE(object.name);
    auto text = wavekit::testing::read_text_section(object.path);
    Decoder decoder(object.targets.front());
    Assembler assembler(object.targets.front());
    for (const Instruction& inst : decoder.decode_all(text.bytes, text.address)) {
      auto bytes = assembler.encode(inst.mc);
      ASSERT_EQ(bytes, std::vector<std::uint8_t>(inst.bytes().begin(), inst.bytes().end()))
          << inst.text << " at 0x" << std::hex << inst.address;
    }
  }
}

TEST(Assembler, ErrorsNameTheLine) {
  try {
    Assembler("gfx90a").assemble("s_nop 0\nv_no_such_instruction v0\n");
    FAIL() << "no error";
  } catch (const wavekit::Error& error) {
    EXPECT_NE(std::string(error.what()).find("line 2"), std::string::npos) << error.what();
  }
  EXPECT_THROW(Assembler("gfx90a").assemble("s_branch undefined_label"), wavekit::Error);
}

TEST(Decoder, BadBytesAreErrorsNotCrashes) {
  Decoder decoder("gfx90a");
  wavekit::isa::DecodeError error;
  std::vector<std::uint8_t> truncated{0x00, 0x00};  // half a dword
  EXPECT_FALSE(decoder.decode(truncated, 0x40, &error));
  EXPECT_NE(error.message.find("0x40"), std::string::npos) << error.message;
  EXPECT_FALSE(decoder.decode({}, 0x44, &error));
  // A 64-bit encoding cut after its first dword.
  auto load = Assembler("gfx90a").assemble("global_load_dword v1, v[2:3], off");
  EXPECT_FALSE(decoder.decode(std::span(load).first(4), 0x48, &error));
  // Every 32-bit pattern family: decode never crashes, and failures name their address.
  std::vector<std::uint8_t> words;
  for (std::uint32_t high = 0; high < 256; ++high) {
    std::uint32_t word = (high << 24) | 0x00ffffu;
    for (int b = 0; b < 4; ++b) words.push_back(static_cast<std::uint8_t>(word >> (8 * b)));
  }
  auto range = decoder.decode_range(words, 0x2000);
  EXPECT_FALSE(range.errors.empty());
  for (const auto& e : range.errors) {
    EXPECT_NE(e.message.find("cannot decode"), std::string::npos);
  }
  // Words that crash LLVM 22's own disassembler (literal operand fields of 64-bit encodings).
  for (std::vector<std::uint8_t> crasher :
       {std::vector<std::uint8_t>{0xd0, 0xb6, 0xa0, 0xd3, 0x62, 0xfe, 0x31, 0x07},
        std::vector<std::uint8_t>{0xa2, 0x53, 0x48, 0xe0, 0x46, 0x14, 0x49, 0xff}}) {
    EXPECT_FALSE(decoder.decode(crasher, 0x50, &error));
    EXPECT_NE(error.message.find("literal"), std::string::npos) << error.message;
  }
  // Random 64-bit words (deterministic): every one decodes or is an error naming its address.
  std::uint64_t state = 88172645463325252ull;
  std::vector<std::uint8_t> random(8 * 20000);
  for (std::size_t i = 0; i < random.size(); i += 8) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    for (int b = 0; b < 8; ++b) random[i + b] = static_cast<std::uint8_t>(state >> (8 * b));
  }
  auto random_range = decoder.decode_range(random, 0x10000);
  EXPECT_GT(random_range.instructions.size(), 0u);
  EXPECT_GT(random_range.errors.size(), 0u);
  std::vector<std::uint8_t> undecodable{0xff, 0xff, 0xff, 0xff};
  try {
    decoder.decode_all(undecodable, 0x1234);
    FAIL() << "0xffffffff decoded";
  } catch (const wavekit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("0x1234"), std::string::npos) << e.what();
  }
}

TEST(Decoder, ProcessorsAreCheckedByName) {
  EXPECT_THROW(Decoder("gfx999"), wavekit::Error);
  EXPECT_THROW(Decoder("x86-64"), wavekit::Error);
  try {
    Decoder("gfx1100");
    FAIL() << "gfx1100 accepted";
  } catch (const wavekit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not supported yet"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(Decoder("gfx90a:sramecc+:xnack-"));
}

TEST(RegisterSet, OperationsAndText) {
  auto a = registers({0, 1, 2, 3, id::vcc_lo, id::vcc_hi, id::exec_lo, id::exec_hi}, {0, 1, 5}, {7},
                     true);
  EXPECT_EQ(a.to_string(), "s[0:3] vcc exec v[0:1] v5 a7 scc");
  auto b = registers({2, 3}, {5});
  EXPECT_TRUE(a.contains(b));
  EXPECT_FALSE(b.contains(a));
  EXPECT_EQ((a - b).to_string(), "s[0:1] vcc exec v[0:1] a7 scc");
  EXPECT_EQ((a & b), b);
  EXPECT_EQ((b | registers({}, {}, {}, true)).to_string(), "s[2:3] v5 scc");
  EXPECT_TRUE(RegisterSet{}.empty());
}

}  // namespace
