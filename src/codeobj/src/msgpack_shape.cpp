#include "wavekit/codeobj/msgpack_shape.h"

#include <llvm/BinaryFormat/MsgPackReader.h>
#include <llvm/Support/ConvertUTF.h>

#include <vector>

#include "wavekit/support/error.h"

namespace wavekit::codeobj {

void check_msgpack_shape(std::string_view text, const std::string& context,
                         const std::string& what) {
  const llvm::StringRef blob(text.data(), text.size());
  constexpr std::size_t kMaxDepth = 32;
  struct Open {
    std::uint64_t remaining;  // objects still to come in this array/map (keys and values)
    bool is_map;
  };
  std::vector<Open> open;
  llvm::msgpack::Reader reader(blob);
  bool done = false;
  while (!done) {
    llvm::msgpack::Object object;
    llvm::Expected<bool> read = reader.read(object);
    if (!read)
      fail(context,
           "the " + what + " is not valid MessagePack: " + llvm::toString(read.takeError()));
    if (!*read) fail(context, "the " + what + " ends inside an array or map");
    if (!open.empty()) {
      bool is_key = open.back().is_map && open.back().remaining % 2 == 0;
      if (is_key && object.Kind != llvm::msgpack::Type::String) {
        fail(context, "the " + what + " has a map key that is not a string");
      }
      --open.back().remaining;
    }
    if (object.Kind == llvm::msgpack::Type::String) {
      // JSON output (inspect --json) needs text; the note's strings are names and identifiers.
      const auto* begin = reinterpret_cast<const llvm::UTF8*>(object.Raw.data());
      if (!llvm::isLegalUTF8String(&begin, begin + object.Raw.size())) {
        fail(context, "the " + what + " has a string that is not UTF-8");
      }
    }
    if (object.Kind == llvm::msgpack::Type::Extension) {
      fail(context, "the " + what + " holds a MessagePack extension type");
    }
    if (object.Kind == llvm::msgpack::Type::Array || object.Kind == llvm::msgpack::Type::Map) {
      if (open.size() == kMaxDepth) fail(context, "the " + what + " is nested too deeply");
      bool is_map = object.Kind == llvm::msgpack::Type::Map;
      // Each element is at least one byte: a longer claim cannot be real.
      if (object.Length > blob.size()) fail(context, "the " + what + " is truncated");
      open.push_back(Open{static_cast<std::uint64_t>(object.Length) * (is_map ? 2 : 1), is_map});
    }
    while (!open.empty() && open.back().remaining == 0) open.pop_back();
    done = open.empty();
  }
  llvm::msgpack::Object trailing;
  llvm::Expected<bool> more = reader.read(trailing);
  if (!more) llvm::consumeError(more.takeError());
  if (!more || *more) fail(context, "the " + what + " has bytes after its MessagePack map");
}

}  // namespace wavekit::codeobj
