// Test-side ProgramInput built with LLVM's ELF reader (not wavekit's codeobj), so that the
// analysis tests do not depend on the code-object model they would otherwise share a bug with.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "wavekit/analysis/analysis.h"

namespace wavekit::testing {

struct LoadedInput {
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  analysis::ProgramInput input;
};

inline LoadedInput load_program_input(const std::string& path, const std::string& processor) {
  LoadedInput loaded;
  loaded.input.processor = processor;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) return loaded;
  loaded.buffer = std::move(*buffer);
  auto object = llvm::object::ObjectFile::createObjectFile(loaded.buffer->getMemBufferRef());
  if (!object) {
    llvm::consumeError(object.takeError());
    return loaded;
  }
  auto* elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(object->get());
  std::map<std::uint64_t, llvm::StringRef> section_bytes;  // address -> contents
  for (const auto& section : elf->sections()) {
    auto contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    section_bytes[section.getAddress()] = *contents;
    if (section.isText()) {
      loaded.input.code.push_back(
          {section.getAddress(),
           {reinterpret_cast<const std::uint8_t*>(contents->data()), contents->size()}});
    }
  }
  auto read_u64 = [&](std::uint64_t address) -> std::optional<std::int64_t> {
    for (const auto& [base, bytes] : section_bytes) {
      if (address >= base && address + 8 <= base + bytes.size()) {
        std::int64_t value;
        std::memcpy(&value, bytes.data() + (address - base), 8);
        return value;
      }
    }
    return std::nullopt;
  };
  std::set<std::string> seen;
  auto add_symbols = [&](auto symbols) {
    for (const llvm::object::ELFSymbolRef& symbol : symbols) {
      auto name = symbol.getName();
      auto address = symbol.getAddress();
      if (!name || !address) {
        if (!name) llvm::consumeError(name.takeError());
        if (!address) llvm::consumeError(address.takeError());
        continue;
      }
      if (!seen.insert(name->str()).second) continue;
      if (symbol.getELFType() == llvm::ELF::STT_FUNC && symbol.getSize() > 0) {
        loaded.input.functions.push_back({name->str(), *address, symbol.getSize()});
      }
      // A kernel descriptor "<k>.kd": the entry is its address + kernel_code_entry_byte_offset.
      if (symbol.getELFType() == llvm::ELF::STT_OBJECT && name->ends_with(".kd")) {
        if (auto offset = read_u64(*address + 16)) {
          loaded.input.kernels.push_back(
              {name->drop_back(3).str(), *address + static_cast<std::uint64_t>(*offset)});
        }
      }
    }
  };
  add_symbols(elf->symbols());
  add_symbols(elf->getDynamicSymbolIterators());
  return loaded;
}

}  // namespace wavekit::testing
