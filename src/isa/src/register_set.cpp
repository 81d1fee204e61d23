#include <string>

#include "wavekit/isa/isa.h"

namespace wavekit::isa {

bool RegisterSet::contains(const RegisterSet& other) const {
  return (other.sgpr & ~sgpr).none() && (other.vgpr & ~vgpr).none() &&
         (other.agpr & ~agpr).none() && (!other.scc || scc);
}

RegisterSet& RegisterSet::operator|=(const RegisterSet& other) {
  sgpr |= other.sgpr;
  vgpr |= other.vgpr;
  agpr |= other.agpr;
  scc = scc || other.scc;
  return *this;
}

RegisterSet& RegisterSet::operator&=(const RegisterSet& other) {
  sgpr &= other.sgpr;
  vgpr &= other.vgpr;
  agpr &= other.agpr;
  scc = scc && other.scc;
  return *this;
}

RegisterSet& RegisterSet::operator-=(const RegisterSet& other) {
  sgpr &= ~other.sgpr;
  vgpr &= ~other.vgpr;
  agpr &= ~other.agpr;
  scc = scc && !other.scc;
  return *this;
}

namespace {

// Appends runs of set bits in [first, last) as "p5" or "p[5:8]".
template <std::size_t N>
void append_runs(std::string& text, const std::bitset<N>& bits, unsigned first, unsigned last,
                 const char* prefix) {
  for (unsigned i = first; i < last; ++i) {
    if (!bits[i]) continue;
    unsigned end = i;
    while (end + 1 < last && bits[end + 1]) ++end;
    if (!text.empty()) text += ' ';
    text += prefix;
    text += end == i ? std::to_string(i - first)
                     : "[" + std::to_string(i - first) + ":" + std::to_string(end - first) + "]";
    i = end;
  }
}

void append_pair(std::string& text, const std::bitset<128>& sgpr, unsigned lo, const char* name) {
  if (!sgpr[lo] && !sgpr[lo + 1]) return;
  if (!text.empty()) text += ' ';
  text += name;
  if (!sgpr[lo + 1]) text += "_lo";
  if (!sgpr[lo]) text += "_hi";
}

}  // namespace

std::string RegisterSet::to_string() const {
  std::string text;
  append_runs(text, sgpr, 0, sgpr_id::flat_scratch_lo, "s");
  append_pair(text, sgpr, sgpr_id::flat_scratch_lo, "flat_scratch");
  append_pair(text, sgpr, sgpr_id::xnack_mask_lo, "xnack_mask");
  append_pair(text, sgpr, sgpr_id::vcc_lo, "vcc");
  append_runs(text, sgpr, sgpr_id::ttmp0, sgpr_id::ttmp0 + 16, "ttmp");
  if (sgpr[sgpr_id::m0]) text += text.empty() ? "m0" : " m0";
  append_pair(text, sgpr, sgpr_id::exec_lo, "exec");
  append_runs(text, vgpr, 0, 256, "v");
  append_runs(text, agpr, 0, 256, "a");
  if (scc) text += text.empty() ? "scc" : " scc";
  return text;
}

std::string_view to_string(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::none:
      return "none";
    case MemoryKind::scalar:
      return "scalar";
    case MemoryKind::global:
      return "global";
    case MemoryKind::flat:
      return "flat";
    case MemoryKind::scratch:
      return "scratch";
    case MemoryKind::lds:
      return "lds";
    case MemoryKind::buffer:
      return "buffer";
  }
  return "?";
}

std::string_view to_string(MemoryAccess access) {
  switch (access) {
    case MemoryAccess::none:
      return "none";
    case MemoryAccess::load:
      return "load";
    case MemoryAccess::store:
      return "store";
    case MemoryAccess::atomic:
      return "atomic";
  }
  return "?";
}

std::string_view to_string(ControlFlow flow) {
  switch (flow) {
    case ControlFlow::none:
      return "none";
    case ControlFlow::branch:
      return "branch";
    case ControlFlow::conditional_branch:
      return "conditional_branch";
    case ControlFlow::call:
      return "call";
    case ControlFlow::indirect:
      return "indirect";
    case ControlFlow::end_program:
      return "end_program";
    case ControlFlow::trap:
      return "trap";
  }
  return "?";
}

}  // namespace wavekit::isa
