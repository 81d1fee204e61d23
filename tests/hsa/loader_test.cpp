// The loader against code objects built by clang-22/ld.lld-22, with llvm-readelf-22 as the
// oracle for where symbols and relocations are, and ROCr's rules as the expected behaviour.
#include "wavekit/hsa/loader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <regex>
#include <set>
#include <sstream>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/support/file.h"

namespace {

using wavekit::hsa::Executable;
using wavekit::hsa::LoaderError;
using wavekit::hsa::LoaderErrorKind;

std::string device(const std::string& name) {
  return std::string(WAVEKIT_HSA_DEVICE_DIR) + "/" + name;
}

std::vector<std::uint8_t> bytes_of(const std::string& name) {
  return wavekit::read_file(device(name));
}

std::string readelf(const std::string& options, const std::string& name) {
  std::string command =
      std::string(WAVEKIT_LLVM_READELF) + " --wide " + options + " " + device(name);
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string output;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  if (pclose(pipe) != 0) throw std::runtime_error(command + " failed");
  return output;
}

// st_value of `symbol` as llvm-readelf prints it (first match in .dynsym/.symtab).
std::uint64_t symbol_value(const std::string& object, const std::string& symbol) {
  std::regex line(R"(\d+: ([0-9a-f]+) +\d+ +\w+ +\w+ +\w+ +\w+ )" + symbol + R"(\n)");
  std::smatch match;
  std::string listing = readelf("-s", object);
  if (!std::regex_search(listing, match, line))
    throw std::runtime_error(symbol + " not in " + object);
  return std::stoull(match[1], nullptr, 16);
}

// r_offset of the relocation against `symbol`.
std::uint64_t relocation_offset(const std::string& object, const std::string& symbol) {
  std::regex line(R"(([0-9a-f]{16}) +[0-9a-f]+ +R_AMDGPU_\w+ +[0-9a-f]+ )" + symbol + " ");
  std::smatch match;
  std::string listing = readelf("-r", object);
  if (!std::regex_search(listing, match, line))
    throw std::runtime_error("no relocation against " + symbol);
  return std::stoull(match[1], nullptr, 16);
}

std::uint64_t note_integer(const std::string& object, const std::string& key) {
  std::regex line("\\" + key + R"(: +(\d+))");
  std::smatch match;
  std::string notes = readelf("--notes", object);
  if (!std::regex_search(notes, match, line)) throw std::runtime_error(key + " not in the note");
  return std::stoull(match[1]);
}

std::uint64_t read_u64(std::uint64_t address) {
  std::uint64_t value;
  std::memcpy(&value, reinterpret_cast<const void*>(address), 8);
  return value;
}

LoaderErrorKind error_kind(const std::function<void()>& action, std::string* message = nullptr) {
  try {
    action();
  } catch (const LoaderError& error) {
    if (message) *message = error.what();
    return error.kind();
  }
  ADD_FAILURE() << "no LoaderError thrown";
  return LoaderErrorKind::invalid_code_object;
}

// The probe-library case: the consumer's GOT slot must end up holding the address of the
// provider's function, found through the provider's STT_OBJECT alias, whatever the load order.
void expect_cross_object_call_resolved(bool consumer_first) {
  Executable executable;
  auto consumer_bytes = bytes_of("probe_consumer.co");
  auto provider_bytes = bytes_of("probe_provider.co");
  std::uint64_t consumer_base = 0, provider_base = 0;
  if (consumer_first) {
    consumer_base = executable.load(consumer_bytes, "consumer").load_base;
    provider_base = executable.load(provider_bytes, "provider").load_base;
  } else {
    provider_base = executable.load(provider_bytes, "provider").load_base;
    consumer_base = executable.load(consumer_bytes, "consumer").load_base;
  }
  executable.freeze();
  std::uint64_t slot = consumer_base + relocation_offset("probe_consumer.co", "probe_add");
  std::uint64_t function = provider_base + symbol_value("probe_provider.co", "probe_add_impl");
  EXPECT_EQ(read_u64(slot), function);
  // The alias is a variable of the executable; the function itself is not exported.
  ASSERT_NE(executable.find_variable("probe_add"), nullptr);
  EXPECT_EQ(executable.find_variable("probe_add")->address, function);
  EXPECT_EQ(executable.find_variable("probe_add_impl"), nullptr);
}

TEST(Loader, CrossObjectAbs64ResolvesNotypeToObjectAliasConsumerFirst) {
  expect_cross_object_call_resolved(true);
}

TEST(Loader, CrossObjectAbs64ResolvesNotypeToObjectAliasProviderFirst) {
  expect_cross_object_call_resolved(false);
}

TEST(Loader, UnresolvedAbs64IsVariableUndefinedAtFreeze) {
  Executable executable;
  executable.load(bytes_of("probe_consumer.co"), "consumer");  // loading alone is fine
  std::string message;
  EXPECT_EQ(error_kind([&] { executable.freeze(); }, &message),
            LoaderErrorKind::variable_undefined);
  EXPECT_NE(message.find("probe_add"), std::string::npos) << message;
  EXPECT_FALSE(executable.frozen());
}

TEST(Loader, UndefinedNotypeReferencesAreReported) {
  Executable executable;
  executable.load(bytes_of("probe_consumer.co"), "consumer");
  // llvm-readelf: the consumer's .dynsym has exactly one undefined NOTYPE symbol, probe_add.
  std::string listing = readelf("--dyn-syms", "probe_consumer.co");
  std::regex undefined(R"(NOTYPE +GLOBAL +\w+ +UND (\w+))");
  std::set<std::string, std::less<>> expected;
  for (std::sregex_iterator it(listing.begin(), listing.end(), undefined), end; it != end; ++it)
    expected.insert((*it)[1]);
  EXPECT_EQ(expected, (std::set<std::string, std::less<>>{"probe_add"}));
  EXPECT_EQ(executable.undefined_references(), expected);
  executable.load(bytes_of("probe_provider.co"), "provider");
  EXPECT_EQ(executable.undefined_references(), expected);  // the provider references nothing
}

TEST(Loader, FunctionWithoutObjectAliasIsNotExported) {
  // The plain provider defines probe_add_impl only as a function: ROCr never exports those.
  Executable executable;
  executable.load(bytes_of("probe_consumer.co"), "consumer");
  executable.load(bytes_of("probe_provider_plain.co"), "provider");
  EXPECT_EQ(error_kind([&] { executable.freeze(); }), LoaderErrorKind::variable_undefined);
}

TEST(Loader, AgentGlobalVariableDefinitionResolvesNotype) {
  Executable executable;
  auto base = executable.load(bytes_of("probe_consumer.co"), "consumer").load_base;
  static int stand_in;
  auto address = reinterpret_cast<std::uint64_t>(&stand_in);
  executable.define_global_variable("probe_add", address);
  executable.freeze();
  EXPECT_EQ(read_u64(base + relocation_offset("probe_consumer.co", "probe_add")), address);
  EXPECT_EQ(error_kind([&] { executable.define_global_variable("late", address); }),
            LoaderErrorKind::frozen_executable);
}

TEST(Loader, Relative64IsLoadBasePlusAddend) {
  Executable executable;
  auto base = executable.load(bytes_of("probe_provider.co"), "provider").load_base;
  executable.freeze();
  const auto* pointer = executable.find_variable("provider_table_second");
  const auto* table = executable.find_variable("provider_table");
  ASSERT_NE(pointer, nullptr);
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->address, base + symbol_value("probe_provider.co", "provider_table"));
  EXPECT_EQ(read_u64(pointer->address), table->address + 4);
  EXPECT_EQ(*reinterpret_cast<const int*>(read_u64(pointer->address)), 20);
}

TEST(Loader, KernelInfoComesFromTheMetadataNote) {
  for (const char* object : {"probe_provider.co", "probe_provider_cov4.co"}) {
    SCOPED_TRACE(object);
    Executable executable;
    auto base = executable.load(bytes_of(object), object).load_base;
    const auto* by_name = executable.find_kernel("provider_kernel");
    ASSERT_NE(by_name, nullptr);
    EXPECT_EQ(executable.find_kernel("provider_kernel.kd"), by_name);
    EXPECT_EQ(executable.find_kernel("probe_add_impl"), nullptr);
    EXPECT_EQ(by_name->descriptor_address, base + symbol_value(object, "provider_kernel.kd"));
    EXPECT_EQ(executable.kernel_at(by_name->descriptor_address), by_name);
    EXPECT_EQ(by_name->kernarg_segment_size, note_integer(object, ".kernarg_segment_size"));
    EXPECT_EQ(by_name->kernarg_segment_align, note_integer(object, ".kernarg_segment_align"));
    EXPECT_EQ(by_name->private_segment_fixed_size,
              note_integer(object, ".private_segment_fixed_size"));
    EXPECT_EQ(by_name->group_segment_fixed_size, note_integer(object, ".group_segment_fixed_size"));
    ASSERT_GE(by_name->args.size(), 2u);
    EXPECT_EQ(by_name->args[0].value_kind, "global_buffer");
    EXPECT_EQ(by_name->args[1].value_kind, "by_value");
    EXPECT_EQ(by_name->args[1].offset, 8u);
    EXPECT_EQ(by_name->args[1].size, 4u);
    std::string notes = readelf("--notes", object);
    const std::regex value_kind(R"(\.value_kind:)");
    std::ptrdiff_t arg_count = std::distance(
        std::sregex_iterator(notes.begin(), notes.end(), value_kind), std::sregex_iterator());
    EXPECT_EQ(static_cast<std::ptrdiff_t>(by_name->args.size()), arg_count);
    EXPECT_EQ(executable.target(), "gfx90a");
  }
}

TEST(Loader, CodeObjectVersionFromTheElfHeader) {
  Executable cov5, cov4;
  EXPECT_EQ(cov5.load(bytes_of("probe_provider.co"), "cov5").code_object_version, 5u);
  EXPECT_EQ(cov4.load(bytes_of("probe_provider_cov4.co"), "cov4").code_object_version, 4u);
}

TEST(Loader, SegmentsHoldTheFileBytes) {
  Executable executable;
  auto bytes = bytes_of("probe_provider.co");
  const auto& object = executable.load(bytes, "provider");
  ASSERT_NE(object.code_address, 0u);
  std::uint64_t text = symbol_value("probe_provider.co", "provider_kernel");
  // The kernel's first instruction word in memory equals the file's (.text offset == vaddr
  // minus the segment delta; llvm-readelf gives the section's file offset).
  std::regex section(R"(\.text +PROGBITS +([0-9a-f]+) ([0-9a-f]+))");
  std::smatch match;
  std::string sections = readelf("-S", "probe_provider.co");
  ASSERT_TRUE(std::regex_search(sections, match, section));
  std::uint64_t text_vaddr = std::stoull(match[1], nullptr, 16),
                text_offset = std::stoull(match[2], nullptr, 16);
  EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(object.load_base + text),
                        bytes.data() + text_offset + (text - text_vaddr), 64),
            0);
  EXPECT_GE(object.code_address, object.load_base);
  EXPECT_LE(object.load_base + text, object.code_address + object.code_size);
}

TEST(Loader, StrippedObjectStillLoadsFromDynsym) {
  Executable executable;
  executable.load(bytes_of("probe_provider_stripped.co"), "stripped");
  executable.freeze();
  const auto* kernel = executable.find_kernel("provider_kernel");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->descriptor_address,
            executable.objects()[0].load_base +
                symbol_value("probe_provider_plain.co", "provider_kernel.kd"));
  EXPECT_NE(executable.find_variable("provider_table"), nullptr);
}

TEST(Loader, DuplicateDefinitionIsRejectedAndLeavesTheExecutableUsable) {
  Executable executable;
  executable.load(bytes_of("probe_provider.co"), "first");
  std::string message;
  EXPECT_EQ(error_kind([&] { executable.load(bytes_of("probe_provider.co"), "second"); }, &message),
            LoaderErrorKind::variable_already_defined);
  EXPECT_NE(message.find("second"), std::string::npos) << message;
  EXPECT_EQ(executable.objects().size(), 1u);
  EXPECT_EQ(executable.kernels().size(), 1u);
  executable.freeze();
}

TEST(Loader, MixedTargetsAreIncompatible) {
  Executable executable;
  executable.load(bytes_of("probe_provider.co"), "gfx90a object");
  std::string message;
  EXPECT_EQ(
      error_kind([&] { executable.load(bytes_of("probe_provider_gfx908.co"), "gfx908 object"); },
                 &message),
      LoaderErrorKind::incompatible_code_object);
  EXPECT_NE(message.find("gfx908"), std::string::npos) << message;
}

TEST(Loader, BadInputIsAnInvalidCodeObjectNamingTheProblem) {
  auto good = bytes_of("probe_provider.co");
  struct Case {
    const char* what;
    std::vector<std::uint8_t> bytes;
    std::string expected;
  };
  std::vector<Case> cases;
  cases.push_back({"empty", {}, "not an ELF file"});
  cases.push_back(
      {"text",
       {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!', '!', '!', '!', '!', '!'},
       "not an ELF file"});
  auto truncated = good;
  truncated.resize(200);
  cases.push_back({"truncated", truncated, ""});
  auto wrong_machine = good;
  wrong_machine[18] = 62;  // e_machine = EM_X86_64
  cases.push_back({"x86 machine", wrong_machine, "not an AMDGPU code object"});
  auto old_version = good;
  old_version[8] = 1;  // EI_ABIVERSION 1 = code object v3
  cases.push_back({"cov3", old_version, "code object version 3"});
  auto huge_segment = good;
  // The first PT_LOAD's p_filesz set past the end of the file.
  for (std::size_t phdr = 0x40;; phdr += 56) {
    std::uint32_t type;
    std::memcpy(&type, &huge_segment[phdr], 4);
    if (type != 1) continue;
    std::uint64_t huge = 1ull << 40;
    std::memcpy(&huge_segment[phdr + 32], &huge, 8);
    break;
  }
  cases.push_back({"segment past end", huge_segment, ""});
  // What `wavekit inspect` refuses, the loader refuses too (one validation, codeobj's): these
  // used to load and run (as gfx90a, the descriptor bytes as code, with wrong results).
  auto with_mach = [&](std::uint32_t mach) {
    auto bytes = good;
    std::uint32_t flags;
    std::memcpy(&flags, &bytes[48], 4);  // e_flags
    flags = (flags & ~0xffu) | mach;
    std::memcpy(&bytes[48], &flags, 4);
    return bytes;
  };
  cases.push_back({"gfx1100", with_mach(0x41), "gfx1100 is not supported yet (wave32)"});
  cases.push_back({"unknown processor", with_mach(0x7e), "unsupported AMDGPU processor"});
  const wavekit::codeobj::CodeObject parsed = wavekit::codeobj::CodeObject::parse(good, "good");
  const wavekit::codeobj::Kernel& kernel = parsed.kernels().front();
  const auto descriptor_offset = [&] {
    for (const auto& section : parsed.sections())
      if (section.contains_address(kernel.descriptor_address))
        return section.offset + (kernel.descriptor_address - section.address);
    throw std::runtime_error("no section holds the descriptor");
  }();
  auto entry_zero = good;
  std::memset(&entry_zero[descriptor_offset + 16], 0, 8);  // kernel_code_entry_byte_offset
  cases.push_back({"entry zero", entry_zero, "is not in executable code"});
  auto user_sgprs = good;
  std::uint32_t rsrc2;
  std::memcpy(&rsrc2, &user_sgprs[descriptor_offset + 52], 4);
  const std::uint32_t count = (rsrc2 >> 1) & 31;
  rsrc2 = (rsrc2 & ~(31u << 1)) | ((count + 1) << 1);
  std::memcpy(&user_sgprs[descriptor_offset + 52], &rsrc2, 4);
  cases.push_back({"user sgprs", user_sgprs, "USER_SGPR_COUNT is " + std::to_string(count + 1)});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Executable executable;
    std::string message;
    EXPECT_EQ(error_kind([&] { executable.load(c.bytes, c.what); }, &message),
              LoaderErrorKind::invalid_code_object);
    EXPECT_NE(message.find(c.what), std::string::npos) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
}

TEST(Loader, EveryTruncationIsRejectedCleanly) {
  // No prefix of a valid object may crash the loader; each is either an error or (never)
  // a successful load.
  auto good = bytes_of("probe_provider.co");
  for (std::size_t size = 0; size < good.size(); size += 97) {
    Executable executable;
    std::vector<std::uint8_t> prefix(good.begin(), good.begin() + size);
    EXPECT_THROW(executable.load(prefix, "prefix"), LoaderError) << size;
  }
}

}  // namespace
