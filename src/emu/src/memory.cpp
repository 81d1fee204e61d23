#include "memory.h"

#include <sstream>

#include "wavekit/support/text.h"

namespace wavekit::emu::detail {

std::uint8_t* global_pointer(Wave& wave, std::uint64_t address, unsigned size, unsigned access) {
  std::uint64_t end = address + size;
  if (address >= wave.cached_base && end <= wave.cached_end &&
      (wave.cached_access & access) == access &&
      wave.cached_generation == wave.ctx->memory->generation()) {
    return reinterpret_cast<std::uint8_t*>(address + wave.cached_host_offset);
  }
  const bool exact = wave.ctx->options.exact_bounds;
  if (auto range = wave.ctx->memory->find(address)) {
    const std::uint64_t limit =
        range->base + (exact && range->requested ? range->requested : range->size);
    if ((range->access & access) == access && end <= limit && end > address) {
      wave.cached_base = range->base;
      wave.cached_end = limit;
      wave.cached_access = range->access;
      wave.cached_host_offset = range->host_base - range->base;
      wave.cached_generation = wave.ctx->memory->generation();
      return reinterpret_cast<std::uint8_t*>(address + wave.cached_host_offset);
    }
  }
  if (access == MemoryMap::kRead) {
    for (auto [base, limit] : wave.ctx->implicit_ranges) {
      if (address >= base && end <= limit && end > address)
        return reinterpret_cast<std::uint8_t*>(address);
    }
  }
  // The wave's private segment lives in device memory at a global address (the private segment
  // buffer's base addresses it), which global and flat accesses reach as on the hardware: a
  // probe given a stack slot's effective address dereferences it. Only this wave's own segment.
  if (address >= wave.scratch_base && end <= wave.scratch_base + wave.scratch_size && end > address)
    return reinterpret_cast<std::uint8_t*>(address);
  std::string where = "outside every allocation known to the emulator";
  if (auto below = wave.ctx->memory->find_below(end - 1)) {
    const std::uint64_t asked = below->requested ? below->requested : below->size;
    if (end > below->base + asked && address < below->base + asked + 65536)
      where = std::to_string(end - (below->base + asked)) + " bytes past the end of " +
              (below->label.empty() ? hex(below->base) : below->label) + " (" +
              std::to_string(asked) + " bytes" +
              (exact && below->requested ? "; the allocation's padding is reachable on a GPU, "
                                           "exact bounds are checked"
                                         : "") +
              ")";
  }
  fault(wave, ErrorKind::memory_fault, address,
        std::string(access & MemoryMap::kWrite ? "write" : "read") + " of " + std::to_string(size) +
            " bytes at " + hex(address) + ": " + where);
  return nullptr;
}

bool program_write(const Wave& wave, std::uint64_t address) {
  // The accepting global_pointer left the written range in the wave's cache.
  const bool cached = address >= wave.cached_base && address < wave.cached_end;
  return !(cached && (wave.cached_access & MemoryMap::kToolMemory));
}

std::uint8_t* private_pointer(Wave& wave, std::uint32_t lane_address, unsigned lane,
                              unsigned size) {
  // FLAT_SCRATCH holds the wave's scratch base (set by the kernel prologue from the flat
  // scratch init SGPRs on gfx908/gfx90a, by the hardware on gfx942). Private memory is swizzled:
  // 4-byte elements interleaved across the 64 lanes.
  std::uint64_t address = wave.sreg64(kFlatScratchLo) + std::uint64_t(lane_address / 4) * 256 +
                          lane * 4 + lane_address % 4;
  if ((lane_address % 4) + size > 4 || address < wave.scratch_base ||
      address + size > wave.scratch_base + wave.scratch_size) {
    fault(wave, ErrorKind::memory_fault, lane_address,
          "private (scratch) access of " + std::to_string(size) + " bytes at lane offset " +
              hex(lane_address) + " (lane " + std::to_string(lane) +
              ") outside this wave's private segment of " + std::to_string(wave.scratch_size / 64) +
              " bytes per lane");
    return nullptr;
  }
  return reinterpret_cast<std::uint8_t*>(address);
}

std::uint8_t* lds_pointer(Wave& wave, std::uint64_t offset, unsigned size) {
  std::vector<std::uint8_t>& lds = wave.group->lds;
  if (offset + size > lds.size() || offset + size < offset) {
    fault(wave, ErrorKind::memory_fault, offset,
          "LDS access of " + std::to_string(size) + " bytes at offset " + hex(offset) +
              " beyond the workgroup's " + std::to_string(lds.size()) + "-byte LDS allocation");
    return nullptr;
  }
  return lds.data() + offset;
}

std::uint8_t* flat_pointer(Wave& wave, std::uint64_t address, unsigned lane, unsigned size,
                           unsigned access) {
  std::uint64_t aperture = address & 0xffffffff00000000ull;
  if (aperture == kSharedApertureBase) return lds_pointer(wave, address & 0xffffffffu, size);
  if (aperture == kPrivateApertureBase) {
    // Callers split private accesses into pieces within one 4-byte element (the swizzle
    // interleaves elements across lanes).
    return private_pointer(wave, std::uint32_t(address), lane, size);
  }
  return global_pointer(wave, address, size, access);
}

void complete_entry(Wave& wave, Pending& entry) {
  if (entry.width == 0) return;
  if (!entry.vector) {
    for (unsigned i = 0; i < entry.width; ++i) wave.s[(entry.dst + i) & 127] = entry.data[i];
    return;
  }
  for (unsigned d = 0; d < entry.width; ++d) {
    std::uint32_t* reg = wave.vreg((entry.dst + d) % kVectorRegisters);
    const std::uint32_t* data = entry.data + d * 64;
    std::uint64_t lanes = entry.lanes;
    if (entry.d16) {
      std::uint32_t keep = entry.d16_hi ? 0x0000ffffu : 0xffff0000u;
      unsigned shift = entry.d16_hi ? 16 : 0;
      while (lanes) {
        unsigned lane = unsigned(__builtin_ctzll(lanes));
        lanes &= lanes - 1;
        reg[lane] = (reg[lane] & keep) | ((data[lane] & 0xffffu) << shift);
      }
      continue;
    }
    if (lanes == ~0ull) {
      std::memcpy(reg, data, 64 * sizeof(std::uint32_t));
      continue;
    }
    while (lanes) {
      unsigned lane = unsigned(__builtin_ctzll(lanes));
      lanes &= lanes - 1;
      reg[lane] = data[lane];
    }
  }
}

Pending& issue(Wave& wave, PendingQueue& queue) {
  if (queue.count == queue.entries.size()) complete_until(wave, queue, unsigned(queue.count - 1));
  Pending& entry = queue.entries[(queue.head + queue.count) % queue.entries.size()];
  ++queue.count;
  entry.width = 0;
  entry.d16 = entry.d16_hi = false;
  entry.vector = true;
  return entry;
}

void complete_until(Wave& wave, PendingQueue& queue, unsigned remaining) {
  while (queue.count > remaining) {
    complete_entry(wave, queue.entries[queue.head]);
    queue.head = (queue.head + 1) % queue.entries.size();
    --queue.count;
  }
}

}  // namespace wavekit::emu::detail
