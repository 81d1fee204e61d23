// libFuzzer over the two formats the rewriter reads from outside: instrumentation plans (JSON
// a user writes) and WAVEKIT notes (MessagePack in objects a user hands to a launcher). The
// first byte picks the format: 'P' plan, 'N' note. Bad input may only end in wavekit::Error
// (malformed JSON is dropped before the plan parser); anything else escapes and is a finding. What
// parses must survive a round trip unchanged.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <span>

#include "wavekit/rewrite/arena.h"
#include "wavekit/rewrite/plan.h"
#include "wavekit/support/error.h"

namespace {

void fuzz_plan(std::span<const std::uint8_t> bytes) {
  // As `wavekit rewrite --plan` reads it: without exceptions, malformed JSON is "discarded".
  const nlohmann::json json = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (json.is_discarded()) return;
  wavekit::rewrite::Plan plan;
  try {
    plan = wavekit::rewrite::parse_plan(json, "fuzz");
  } catch (const wavekit::Error&) {
    return;
  }
  const nlohmann::json written = wavekit::rewrite::plan_to_json(plan);
  if (wavekit::rewrite::plan_to_json(wavekit::rewrite::parse_plan(written, "round trip")) !=
      written)
    std::abort();
}

void fuzz_note(std::span<const std::uint8_t> bytes) {
  wavekit::rewrite::RewriteNote note;
  try {
    note = wavekit::rewrite::decode_note(bytes, "fuzz");
  } catch (const wavekit::Error&) {
    return;
  }
  const std::vector<std::uint8_t> written = wavekit::rewrite::encode_note(note);
  if (wavekit::rewrite::encode_note(wavekit::rewrite::decode_note(written, "round trip")) !=
      written)
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  if (data[0] == 'P') fuzz_plan(rest);
  if (data[0] == 'N') fuzz_note(rest);
  return 0;
}
