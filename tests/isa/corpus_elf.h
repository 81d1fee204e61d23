// Test-side access to corpus code objects through LLVM's own ELF reader and llvm-objdump-22,
// independent of wavekit's codeobj and isa: the oracles for the isa and analysis tests.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

namespace wavekit::testing {

struct TextSection {
  std::uint64_t address = 0;
  std::vector<std::uint8_t> bytes;
};

inline TextSection read_text_section(const std::string& path) {
  TextSection text;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) return text;
  auto object = llvm::object::ObjectFile::createObjectFile((*buffer)->getMemBufferRef());
  if (!object) {
    llvm::consumeError(object.takeError());
    return text;
  }
  for (const auto& section : (*object)->sections()) {
    auto name = section.getName();
    if (!name || *name != ".text") continue;
    auto contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    text.address = section.getAddress();
    text.bytes.assign(contents->begin(), contents->end());
  }
  return text;
}

inline std::string run_command(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char chunk[65536];
  while (std::size_t got = fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, got);
  pclose(pipe);
  return output;
}

struct ObjdumpInstruction {
  std::string text;        // mnemonic and operands
  std::uint64_t size = 0;  // from the printed encoding words
  std::string annotation;  // "<k+0x88>" after a branch, if any
};

// llvm-objdump-22 -d: "\t<text>  // <ADDR>: <WORD> <WORD> [<sym+off>]" per instruction.
inline std::map<std::uint64_t, ObjdumpInstruction> objdump_instructions(const std::string& path) {
  std::map<std::uint64_t, ObjdumpInstruction> out;
  std::string listing = run_command(std::string(WAVEKIT_LLVM_OBJDUMP) + " -d " + path);
  std::size_t start = 0;
  while (start < listing.size()) {
    std::size_t end = listing.find('\n', start);
    if (end == std::string::npos) end = listing.size();
    std::string line = listing.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] != '\t') continue;
    std::size_t comment = line.find("// ");
    if (comment == std::string::npos) continue;
    ObjdumpInstruction inst;
    inst.text = line.substr(1, comment - 1);
    inst.text.erase(inst.text.find_last_not_of(' ') + 1);
    std::string rest = line.substr(comment + 3);
    std::size_t colon = rest.find(':');
    if (colon == std::string::npos) continue;
    std::uint64_t address = std::stoull(rest.substr(0, colon), nullptr, 16);
    std::size_t at = colon + 1;
    while (at < rest.size()) {
      while (at < rest.size() && rest[at] == ' ') ++at;
      if (at >= rest.size()) break;
      if (rest[at] == '<') {
        inst.annotation = rest.substr(at);
        break;
      }
      std::size_t word_end = rest.find(' ', at);
      if (word_end == std::string::npos) word_end = rest.size();
      inst.size += (word_end - at) / 2;
      at = word_end;
    }
    out[address] = inst;
  }
  return out;
}

}  // namespace wavekit::testing
