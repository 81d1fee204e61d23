// CodeCache internals shared with the dispatcher: per-object slot tables for O(1) fetch.
#pragma once

#include <deque>
#include <map>
#include <set>
#include <vector>

#include "internal.h"

namespace wavekit::emu::detail {

struct CodeObject {
  Processor processor = Processor::gfx90a;
  std::uint64_t host_base = 0;
  std::uint64_t size = 0;
  std::uint64_t vaddr_base = 0;
  // One slot per 4-byte word: the decoded instruction starting there, or nullptr.
  std::unique_ptr<std::atomic<const Inst*>[]> slots;
  std::deque<Inst> pool;  // stable addresses
  bool explicit_blocks = false;
  std::set<std::uint64_t> explored;  // entries already walked from by prepare_entry
  // Per 4-byte word: an instruction some prepare_entry walk has passed, whose leaders are
  // known. A walk stops there, so that each instruction is walked once, however many entries
  // (every return point of a rewritten kernel's probe calls is one) reach it.
  std::vector<bool> walked;
  std::set<std::uint64_t> block_starts;  // original vaddrs (explicit, or found leaders)
};

}  // namespace wavekit::emu::detail

namespace wavekit::emu {

struct CodeCache::Impl {
  mutable std::mutex mutex;
  std::map<std::uint64_t, std::unique_ptr<detail::CodeObject>> objects;  // by host_base
  std::deque<std::string> names;                                         // mnemonics
  std::vector<std::uint64_t> block_vaddrs;  // global block id -> original vaddr

  detail::CodeObject* object_at(std::uint64_t host_pc);
  // The decoded instruction at host_pc. On failure returns nullptr and fills `kind`/`message`.
  const detail::Inst* fetch_slow(std::uint64_t host_pc, ErrorKind& kind, std::string& message);
  // Decodes everything reachable from `entry` (a kernel or function entry) and marks its leaders
  // as block starts when the object has no explicit block starts.
  void prepare_entry(std::uint64_t entry);
  std::uint64_t block_vaddr(std::uint32_t id) const;

  // With `mutex` held.
  const detail::Inst* decode_locked(detail::CodeObject& object, std::uint64_t host_pc,
                                    ErrorKind& kind, std::string& message);
  void mark_block_start_locked(detail::CodeObject& object, detail::Inst& inst);
};

}  // namespace wavekit::emu
