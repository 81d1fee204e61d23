// The metadata note through LLVM's msgpack::Document.
#include "wavekit/codeobj/metadata.h"

#include <llvm/BinaryFormat/MsgPackReader.h>
#include <llvm/Support/ConvertUTF.h>

#include "wavekit/codeobj/msgpack_shape.h"
#include "wavekit/support/error.h"

namespace wavekit::codeobj {

namespace msgpack = llvm::msgpack;

namespace {

// A map key as a JSON object key. The AMDGPU note only has string keys; anything else (in a
// corrupt note) is spelled out rather than passed to DocNode::toString, which handles scalars only.
std::string key_text(const msgpack::DocNode& key) {
  switch (key.getKind()) {
    case msgpack::Type::String:
      return key.getString().str();
    case msgpack::Type::Int:
      return std::to_string(key.getInt());
    case msgpack::Type::UInt:
      return std::to_string(key.getUInt());
    case msgpack::Type::Boolean:
      return key.getBool() ? "true" : "false";
    default:
      return msgpack_to_json(key).dump();
  }
}

}  // namespace

nlohmann::json msgpack_to_json(const msgpack::DocNode& node) {
  switch (node.getKind()) {
    case msgpack::Type::Int:
      return node.getInt();
    case msgpack::Type::UInt:
      return node.getUInt();
    case msgpack::Type::Boolean:
      return node.getBool();
    case msgpack::Type::Float:
      return node.getFloat();
    case msgpack::Type::String:
      return node.getString().str();
    case msgpack::Type::Binary: {
      auto bytes = node.getBinary().getBuffer();
      return nlohmann::json::binary(std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
    }
    case msgpack::Type::Array: {
      nlohmann::json array = nlohmann::json::array();
      msgpack::DocNode copy = node;
      for (auto& element : copy.getArray()) array.push_back(msgpack_to_json(element));
      return array;
    }
    case msgpack::Type::Map: {
      nlohmann::json object = nlohmann::json::object();
      msgpack::DocNode copy = node;
      for (auto& [key, value] : copy.getMap()) {
        object[key_text(key)] = msgpack_to_json(value);
      }
      return object;
    }
    case msgpack::Type::Nil:
    case msgpack::Type::Extension:
    case msgpack::Type::Empty:
      break;
  }
  return nullptr;
}

// ---- KernelMetadata ----

namespace {

std::string string_field(msgpack::MapDocNode map, const char* key) {
  auto found = map.find(key);
  if (found == map.end() || !found->second.isString()) return "";
  return found->second.getString().str();
}

std::optional<std::uint64_t> integer_of(const msgpack::DocNode& node) {
  if (node.getKind() == msgpack::Type::UInt) return node.getUInt();
  if (node.getKind() == msgpack::Type::Int && node.getInt() >= 0) {
    return static_cast<std::uint64_t>(node.getInt());
  }
  return std::nullopt;
}

// The fields a loader sizes a launch from must have the types AMDGPUUsage gives them: a value
// of another type would otherwise read as 0 (an argument at offset 0, a kernarg segment of 0
// bytes), and the kernel would run with the wrong arguments instead of being refused.
void check_kernel_fields(msgpack::MapDocNode map, const std::string& context) {
  static constexpr const char* kIntegerKeys[] = {".kernarg_segment_size",
                                                 ".kernarg_segment_align",
                                                 ".group_segment_fixed_size",
                                                 ".private_segment_fixed_size",
                                                 ".sgpr_count",
                                                 ".vgpr_count",
                                                 ".agpr_count",
                                                 ".wavefront_size",
                                                 ".max_flat_workgroup_size",
                                                 ".sgpr_spill_count",
                                                 ".vgpr_spill_count"};
  for (const char* key : kIntegerKeys) {
    auto found = map.find(key);
    if (found != map.end() && !integer_of(found->second))
      fail(context, std::string(key) + " is not a non-negative integer");
  }
  auto args = map.find(".args");
  if (args == map.end()) return;
  if (!args->second.isArray()) fail(context, ".args is not an array");
  std::size_t index = 0;
  for (auto& entry : args->second.getArray()) {
    const std::string where = ".args[" + std::to_string(index++) + "]";
    if (!entry.isMap()) fail(context, where + " is not a map");
    msgpack::MapDocNode arg = entry.getMap();
    for (const char* key : {".offset", ".size"}) {
      auto found = arg.find(key);
      if (found == arg.end()) fail(context, where + " has no " + key);
      if (!integer_of(found->second))
        fail(context, where + "." + (key + 1) + " is not a non-negative integer");
    }
    auto kind = arg.find(".value_kind");
    if (kind == arg.end() || !kind->second.isString())
      fail(context, where + " has no string .value_kind");
  }
}

}  // namespace

std::string KernelMetadata::name() const { return string_field(map_, ".name"); }
std::string KernelMetadata::symbol() const { return string_field(map_, ".symbol"); }

std::vector<KernelArg> KernelMetadata::args() const {
  std::vector<KernelArg> result;
  msgpack::MapDocNode map = map_;
  auto found = map.find(".args");
  if (found == map.end() || !found->second.isArray()) return result;
  for (auto& entry : found->second.getArray()) {
    if (!entry.isMap()) continue;
    msgpack::MapDocNode arg = entry.getMap();
    KernelArg parsed;
    parsed.name = string_field(arg, ".name");
    parsed.type_name = string_field(arg, ".type_name");
    parsed.value_kind = string_field(arg, ".value_kind");
    parsed.address_space = string_field(arg, ".address_space");
    auto offset = arg.find(".offset");
    if (offset != arg.end()) parsed.offset = integer_of(offset->second).value_or(0);
    auto size = arg.find(".size");
    if (size != arg.end()) parsed.size = integer_of(size->second).value_or(0);
    result.push_back(std::move(parsed));
  }
  return result;
}

std::optional<std::uint64_t> KernelMetadata::integer(const std::string& key) const {
  msgpack::MapDocNode map = map_;
  auto found = map.find(llvm::StringRef(key));
  if (found == map.end()) return std::nullopt;
  return integer_of(found->second);
}

bool KernelMetadata::uses_dynamic_stack() const {
  msgpack::MapDocNode map = map_;
  auto found = map.find(".uses_dynamic_stack");
  return found != map.end() && found->second.getKind() == msgpack::Type::Boolean &&
         found->second.getBool();
}

void KernelMetadata::set_integer(const std::string& key, std::uint64_t value) {
  msgpack::Document* document = map_.getDocument();
  // operator[](StringRef) keeps the key's bytes by reference: give it the document's copy.
  map_[document->addString(key)] = document->getNode(value);
  *modified_ = true;
}

void KernelMetadata::set_uses_dynamic_stack(bool value) {
  msgpack::Document* document = map_.getDocument();
  map_[".uses_dynamic_stack"] = document->getNode(value);
  *modified_ = true;
}

void KernelMetadata::add_arg(const KernelArg& arg) {
  msgpack::Document* document = map_.getDocument();
  msgpack::ArrayDocNode args = map_[".args"].getArray(/*Convert=*/true);
  msgpack::MapDocNode entry = document->getMapNode();
  auto put_string = [&](const char* key, const std::string& value) {
    if (!value.empty()) entry[key] = document->getNode(value, /*Copy=*/true);
  };
  put_string(".name", arg.name);
  put_string(".type_name", arg.type_name);
  put_string(".address_space", arg.address_space);
  entry[".offset"] = document->getNode(arg.offset);
  entry[".size"] = document->getNode(arg.size);
  entry[".value_kind"] = document->getNode(arg.value_kind, /*Copy=*/true);
  args.push_back(entry);
  *modified_ = true;
}

nlohmann::json KernelMetadata::to_json() const { return msgpack_to_json(map_); }

// ---- Metadata ----

Metadata::Metadata() : document_(std::make_unique<msgpack::Document>()) {}
Metadata::Metadata(Metadata&&) noexcept = default;
Metadata& Metadata::operator=(Metadata&&) noexcept = default;
Metadata::~Metadata() = default;

Metadata Metadata::decode(std::span<const std::uint8_t> bytes, const std::string& context) {
  Metadata result;
  // The document refers to strings inside the blob it was read from: keep the blob with it.
  result.original_.assign(bytes.begin(), bytes.end());
  llvm::StringRef blob(reinterpret_cast<const char*>(result.original_.data()),
                       result.original_.size());
  check_msgpack_shape(blob, context, "AMDGPU metadata note");
  if (!result.document_->readFromBlob(blob, /*Multi=*/false)) {
    fail(context, "the AMDGPU metadata note is not valid MessagePack");
  }
  if (!result.document_->getRoot().isMap()) {
    fail(context, "the AMDGPU metadata note is not a MessagePack map");
  }
  msgpack::MapDocNode root = result.document_->getRoot().getMap();
  auto kernels = root.find("amdhsa.kernels");
  if (kernels != root.end()) {
    if (!kernels->second.isArray()) {
      fail(context, "amdhsa.kernels in the AMDGPU metadata note is not an array");
    }
    for (auto& kernel : kernels->second.getArray()) {
      if (!kernel.isMap()) fail(context, "an entry of amdhsa.kernels is not a map");
      msgpack::MapDocNode map = kernel.getMap();
      auto name = map.find(".name");
      auto symbol = map.find(".symbol");
      if (name == map.end() || !name->second.isString() || symbol == map.end() ||
          !symbol->second.isString()) {
        fail(context, "a kernel in the AMDGPU metadata note lacks a string .name or .symbol");
      }
      check_kernel_fields(map, context + ": kernel " + name->second.getString().str());
    }
  }
  return result;
}

std::vector<std::uint8_t> Metadata::encode() const {
  if (!modified_) return original_;
  std::string blob;
  document_->writeToBlob(blob);
  return std::vector<std::uint8_t>(blob.begin(), blob.end());
}

Metadata Metadata::clone() const {
  Metadata copy;
  copy.modified_ = modified_;
  if (!document_->getRoot().isMap()) return copy;  // no note was read, none made
  copy = decode(encode(), "metadata");
  copy.modified_ = modified_;
  return copy;
}

bool Metadata::empty() const {
  return !document_->getRoot().isMap() || document_->getRoot().getMap().empty();
}

std::pair<unsigned, unsigned> Metadata::version() const {
  if (empty()) return {0, 0};
  msgpack::MapDocNode root = document_->getRoot().getMap();
  auto found = root.find("amdhsa.version");
  if (found == root.end() || !found->second.isArray()) return {0, 0};
  auto& array = found->second.getArray();
  if (array.size() < 2) return {0, 0};
  return {static_cast<unsigned>(integer_of(array[0]).value_or(0)),
          static_cast<unsigned>(integer_of(array[1]).value_or(0))};
}

std::string Metadata::target() const {
  if (empty()) return "";
  return string_field(document_->getRoot().getMap(), "amdhsa.target");
}

std::size_t Metadata::kernel_count() const {
  if (empty()) return 0;
  msgpack::MapDocNode root = document_->getRoot().getMap();
  auto found = root.find("amdhsa.kernels");
  if (found == root.end() || !found->second.isArray()) return 0;
  return found->second.getArray().size();
}

KernelMetadata Metadata::kernel(std::size_t index) {
  if (index >= kernel_count()) {
    throw Error("kernel index " + std::to_string(index) + " is out of range of the metadata note");
  }
  msgpack::MapDocNode root = document_->getRoot().getMap();
  return KernelMetadata(root.find("amdhsa.kernels")->second.getArray()[index].getMap(), &modified_);
}

std::optional<KernelMetadata> Metadata::find_kernel(const std::string& name) {
  for (std::size_t i = 0; i < kernel_count(); ++i) {
    KernelMetadata kernel_metadata = kernel(i);
    if (kernel_metadata.name() == name || kernel_metadata.symbol() == name) return kernel_metadata;
  }
  return std::nullopt;
}

llvm::msgpack::Document& Metadata::document() {
  modified_ = true;
  return *document_;
}

const llvm::msgpack::Document& Metadata::document() const { return *document_; }

nlohmann::json Metadata::to_json() const {
  if (empty()) return nlohmann::json::object();
  return msgpack_to_json(document_->getRoot());
}

}  // namespace wavekit::codeobj
