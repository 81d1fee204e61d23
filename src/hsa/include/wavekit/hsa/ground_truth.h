// The emulator's ground truth of one dispatch, in the two formats every consumer shares:
// `wavekit launch --trace-blocks` / `--trace-sequence`, the emulator runtime's per-dispatch
// WAVEKIT_EMU_TRACE_BLOCKS / WAVEKIT_EMU_TRACE_SEQUENCE (docs/hsa.md), and the bbcount and
// blocktrace tools, whose reports the tests compare with these byte for byte or value for value.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "wavekit/emu/emu.h"

namespace wavekit::hsa {

// {"kernel": NAME, "waves": [{"id", "workgroup": [x, y, z], "wave_in_workgroup",
// "blocks": {"0x<original block address>": times entered}}]}, waves in linear id order.
// Needs the dispatch to have run with record_block_counts.
nlohmann::json block_counts_document(const std::string& kernel,
                                     const std::vector<emu::WaveRecord>& waves);

// Per wave (linear id), every block start it executed, in order.
using BlockSequences = std::vector<std::pair<std::uint64_t, std::vector<std::uint64_t>>>;

// Takes the sequences out of `waves` (run with record_block_sequence).
BlockSequences take_block_sequences(std::vector<emu::WaveRecord>& waves);

// Writes DIRECTORY/wave_<id>.txt per wave, one "0x<address>" line per block entered, creating
// the directory. Throws wavekit::Error (or std::filesystem_error) when it cannot.
void write_block_sequences(const std::string& directory, const BlockSequences& sequences);

}  // namespace wavekit::hsa
