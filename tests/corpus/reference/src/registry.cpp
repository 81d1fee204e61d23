#include <cmath>
#include <cstring>
#include <sstream>

#include "builders.h"
#include "wavekit/support/error.h"

namespace wavekit::corpus {

std::size_t element_size(ElementType type) {
  switch (type) {
    case ElementType::f16:
      return 2;
    case ElementType::i32:
    case ElementType::u32:
    case ElementType::f32:
      return 4;
    case ElementType::i64:
    case ElementType::u64:
    case ElementType::f64:
      return 8;
  }
  return 1;
}

std::string_view element_type_name(ElementType type) {
  switch (type) {
    case ElementType::i32:
      return "i32";
    case ElementType::u32:
      return "u32";
    case ElementType::i64:
      return "i64";
    case ElementType::u64:
      return "u64";
    case ElementType::f16:
      return "f16";
    case ElementType::f32:
      return "f32";
    case ElementType::f64:
      return "f64";
  }
  return "?";
}

const std::vector<CorpusKernel>& kernels() {
  static const std::vector<CorpusKernel> all = [] {
    std::vector<CorpusKernel> out;
    detail::add_basic_kernels(out);
    detail::add_memory_kernels(out);
    detail::add_compute_kernels(out);
    return out;
  }();
  return all;
}

const CorpusKernel& kernel(std::string_view name) {
  for (const auto& candidate : kernels()) {
    if (candidate.name == name) return candidate;
  }
  fail("corpus", "no kernel named '" + std::string(name) + "'");
}

const CorpusObject& object(std::string_view name) {
  for (const CorpusObject& candidate : objects())
    if (candidate.name == name) return candidate;
  fail("corpus", "no object named '" + std::string(name) + "'");
}

namespace {

// The element as a double (for tolerance checks and messages) and its raw bits (exact checks).
double element_value(const Argument& argument, std::size_t index) {
  const std::uint8_t* at = argument.bytes.data() + index * element_size(argument.type);
  switch (argument.type) {
    case ElementType::i32: {
      std::int32_t v;
      std::memcpy(&v, at, 4);
      return v;
    }
    case ElementType::u32: {
      std::uint32_t v;
      std::memcpy(&v, at, 4);
      return v;
    }
    case ElementType::i64: {
      std::int64_t v;
      std::memcpy(&v, at, 8);
      return static_cast<double>(v);
    }
    case ElementType::u64: {
      std::uint64_t v;
      std::memcpy(&v, at, 8);
      return static_cast<double>(v);
    }
    case ElementType::f16: {
      _Float16 v;
      std::memcpy(&v, at, 2);
      return static_cast<double>(v);
    }
    case ElementType::f32: {
      float v;
      std::memcpy(&v, at, 4);
      return v;
    }
    case ElementType::f64: {
      double v;
      std::memcpy(&v, at, 8);
      return v;
    }
  }
  return 0;
}

std::string element_bits(const Argument& argument, std::size_t index) {
  std::size_t size = element_size(argument.type);
  std::ostringstream text;
  text << "0x" << std::hex;
  for (std::size_t byte = size; byte-- > 0;) {
    text << ((argument.bytes[index * size + byte] >> 4) & 0xf)
         << (argument.bytes[index * size + byte] & 0xf);
  }
  return text.str();
}

}  // namespace

std::optional<std::string> compare_outputs(const CorpusKernel& kernel,
                                           const std::vector<Argument>& expected,
                                           const std::vector<Argument>& actual) {
  if (expected.size() != actual.size()) {
    return kernel.name + ": expected " + std::to_string(expected.size()) + " arguments, got " +
           std::to_string(actual.size());
  }
  for (std::size_t a = 0; a < expected.size(); ++a) {
    const Argument& want = expected[a];
    const Argument& got = actual[a];
    if (!want.is_output) continue;
    if (want.bytes.size() != got.bytes.size()) {
      return kernel.name + ": argument '" + want.name + "' has " +
             std::to_string(got.bytes.size()) + " bytes, expected " +
             std::to_string(want.bytes.size());
    }
    std::size_t size = element_size(want.type);
    for (std::size_t i = 0; i < want.count(); ++i) {
      bool equal =
          std::memcmp(want.bytes.data() + i * size, got.bytes.data() + i * size, size) == 0;
      if (!equal && want.tolerance > 0) {
        double w = element_value(want, i), g = element_value(got, i);
        equal = std::fabs(g - w) <= want.tolerance * std::max(std::fabs(w), 1.0);
      }
      if (!equal) {
        std::ostringstream message;
        message << kernel.name << ": argument '" << want.name << "' element " << i << " ("
                << element_type_name(want.type) << "): expected " << element_value(want, i) << " ("
                << element_bits(want, i) << "), got " << element_value(got, i) << " ("
                << element_bits(got, i) << ")";
        return message.str();
      }
    }
  }
  return std::nullopt;
}

}  // namespace wavekit::corpus
