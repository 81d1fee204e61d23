#include "wavekit/hsa/ground_truth.h"

#include <cstdio>
#include <filesystem>

#include "wavekit/support/file.h"
#include "wavekit/support/text.h"

namespace wavekit::hsa {

nlohmann::json block_counts_document(const std::string& kernel,
                                     const std::vector<emu::WaveRecord>& waves) {
  nlohmann::json documented = nlohmann::json::array();
  for (const auto& wave : waves) {
    nlohmann::json blocks = nlohmann::json::object();
    for (const auto& [address, count] : wave.block_counts) blocks[hex(address)] = count;
    documented.push_back({{"id", wave.linear_wave_id},
                          {"workgroup", {wave.workgroup[0], wave.workgroup[1], wave.workgroup[2]}},
                          {"wave_in_workgroup", wave.wave_in_workgroup},
                          {"blocks", blocks}});
  }
  return {{"kernel", kernel}, {"waves", documented}};
}

BlockSequences take_block_sequences(std::vector<emu::WaveRecord>& waves) {
  BlockSequences sequences;
  sequences.reserve(waves.size());
  for (auto& wave : waves)
    sequences.emplace_back(wave.linear_wave_id, std::move(wave.block_sequence));
  return sequences;
}

void write_block_sequences(const std::string& directory, const BlockSequences& sequences) {
  std::filesystem::create_directories(directory);
  char line[32];
  for (const auto& [wave, blocks] : sequences) {
    std::string text;
    text.reserve(blocks.size() * 12);
    for (std::uint64_t address : blocks) {
      std::snprintf(line, sizeof line, "0x%llx\n", static_cast<unsigned long long>(address));
      text += line;
    }
    write_file(directory + "/wave_" + std::to_string(wave) + ".txt", text);
  }
}

}  // namespace wavekit::hsa
