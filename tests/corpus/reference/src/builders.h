// Helpers shared by the kernel definitions: a portable random source (std::*_distribution
// differ between standard libraries; the corpus inputs must not) and argument constructors.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "wavekit/corpus/corpus.h"

namespace wavekit::corpus::detail {

// SplitMix64: tiny, fully specified, good enough for test inputs.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [low, high] (inclusive); the tiny modulo bias is irrelevant here.
  std::int64_t range(std::int64_t low, std::int64_t high) {
    return low + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(high - low + 1));
  }

 private:
  std::uint64_t state_;
};

template <typename T>
ElementType element_type_of();
template <>
inline ElementType element_type_of<std::int32_t>() {
  return ElementType::i32;
}
template <>
inline ElementType element_type_of<std::uint32_t>() {
  return ElementType::u32;
}
template <>
inline ElementType element_type_of<std::int64_t>() {
  return ElementType::i64;
}
template <>
inline ElementType element_type_of<std::uint64_t>() {
  return ElementType::u64;
}
template <>
inline ElementType element_type_of<_Float16>() {
  return ElementType::f16;
}
template <>
inline ElementType element_type_of<float>() {
  return ElementType::f32;
}
template <>
inline ElementType element_type_of<double>() {
  return ElementType::f64;
}

template <typename T>
Argument buffer(std::string name, const std::vector<T>& values) {
  Argument argument{std::move(name), Argument::Kind::buffer, element_type_of<T>(), {}, false, 0};
  argument.bytes.resize(values.size() * sizeof(T));
  std::memcpy(argument.bytes.data(), values.data(), argument.bytes.size());
  return argument;
}

template <typename T>
Argument output(std::string name, std::size_t count) {
  Argument argument = buffer(std::move(name), std::vector<T>(count));
  argument.is_output = true;
  return argument;
}

template <typename T>
Argument scalar(std::string name, T value) {
  Argument argument{std::move(name), Argument::Kind::scalar, element_type_of<T>(), {}, false, 0};
  argument.bytes.resize(sizeof(T));
  std::memcpy(argument.bytes.data(), &value, sizeof(T));
  return argument;
}

template <typename T>
T scalar_value(const Argument& argument) {
  T value;
  std::memcpy(&value, argument.bytes.data(), sizeof(T));
  return value;
}

template <typename T, typename Generate>
std::vector<T> generate(std::size_t count, Generate&& generate_one) {
  std::vector<T> values(count);
  for (auto& value : values) value = generate_one();
  return values;
}

// Definitions live in one file per group of sources; registry.cpp collects them.
void add_basic_kernels(std::vector<CorpusKernel>& out);
void add_memory_kernels(std::vector<CorpusKernel>& out);
void add_compute_kernels(std::vector<CorpusKernel>& out);

}  // namespace wavekit::corpus::detail
