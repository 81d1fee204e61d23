// lds.hip, atomics.hip, calls.hip and addressing.hip.
#include <algorithm>
#include <climits>

#include "builders.h"

namespace wavekit::corpus::detail {

namespace {

int polynomial(int x, int degree) {
  int result = 0;
  for (int d = 0; d < degree; ++d) result = result * x + (d + 1);
  return result;
}

int mix(int a, int b) { return (a * 31) ^ (b + 17); }

int fibonacci(int n) { return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2); }

int scaled_sum(int x, int k) {
  int result = 0;
  for (int d = 0; d < k; ++d) result = result * 3 + x;
  return result;
}

}  // namespace

void add_memory_kernels(std::vector<CorpusKernel>& out) {
  out.push_back(
      {"block_reduce_sum",
       "lds",
       {6, 1, 1},
       {256, 1, 1},
       [](std::uint64_t seed) {
         Random random(seed);
         auto value = [&] { return static_cast<std::uint32_t>(random.range(0, 1 << 20)); };
         return std::vector<Argument>{buffer("in", generate<std::uint32_t>(6 * 256, value)),
                                      output<std::uint32_t>("block_sums", 6)};
       },
       [](std::vector<Argument>& args) {
         for (std::uint32_t block = 0; block < 6; ++block) {
           std::uint32_t sum = 0;
           for (std::uint32_t t = 0; t < 256; ++t)
             sum += args[0].data<std::uint32_t>()[block * 256 + t];
           args[1].data<std::uint32_t>()[block] = sum;
         }
       }});

  out.push_back({"lds_reverse",
                 "lds",
                 {5, 1, 1},
                 {200, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   auto value = [&] { return static_cast<std::int32_t>(random.next()); };
                   return std::vector<Argument>{buffer("in", generate<std::int32_t>(1000, value)),
                                                output<std::int32_t>("out", 1000)};
                 },
                 [](std::vector<Argument>& args) {
                   for (std::uint32_t block = 0; block < 5; ++block) {
                     for (std::uint32_t t = 0; t < 200; ++t) {
                       args[1].data<std::int32_t>()[block * 200 + t] =
                           args[0].data<std::int32_t>()[block * 200 + 199 - t];
                     }
                   }
                 }});

  out.push_back({"lds_histogram",
                 "lds",
                 {7, 1, 1},
                 {128, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   const std::uint32_t n = 850;
                   auto value = [&] { return static_cast<std::uint32_t>(random.next()); };
                   return std::vector<Argument>{buffer("in", generate<std::uint32_t>(n, value)),
                                                output<std::uint32_t>("histogram", 64),
                                                scalar("n", n)};
                 },
                 [](std::vector<Argument>& args) {
                   auto n = scalar_value<std::uint32_t>(args[2]);
                   for (std::uint32_t i = 0; i < n; ++i)
                     ++args[1].data<std::uint32_t>()[args[0].data<std::uint32_t>()[i] % 64];
                 }});

  out.push_back(
      {"global_atomics",
       "atomics",
       {5, 1, 1},
       {96, 1, 1},
       [](std::uint64_t seed) {
         Random random(seed);
         const std::uint32_t n = 450;
         auto value = [&] { return static_cast<std::int32_t>(random.range(-1000, 1000)); };
         // The maximum and minimum counters start at the identities of max and min.
         Argument counters = buffer("counters", std::vector<std::int32_t>{0, INT_MIN, INT_MAX});
         counters.is_output = true;
         return std::vector<Argument>{buffer("in", generate<std::int32_t>(n, value)), counters,
                                      output<float>("float_sum", 1),
                                      output<std::uint64_t>("sum64", 1), scalar("n", n)};
       },
       [](std::vector<Argument>& args) {
         auto n = scalar_value<std::uint32_t>(args[4]);
         std::int32_t* counters = args[1].data<std::int32_t>();
         for (std::uint32_t i = 0; i < n; ++i) {
           std::int32_t v = args[0].data<std::int32_t>()[i];
           if (v > 0) ++counters[0];
           counters[1] = std::max(counters[1], v);
           counters[2] = std::min(counters[2], v);
           // Integers below 2^24 in magnitude: float sums are exact in any order.
           args[2].data<float>()[0] += static_cast<float>(v);
           args[3].data<std::uint64_t>()[0] +=
               static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
         }
       }});

  out.push_back({"call_chain",
                 "calls",
                 {4, 1, 1},
                 {80, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   const std::uint32_t n = 320;
                   // |x| <= 9 and degree <= 8 keep every intermediate inside int.
                   auto value = [&] { return static_cast<std::int32_t>(random.range(-9, 9)); };
                   return std::vector<Argument>{buffer("in", generate<std::int32_t>(n, value)),
                                                output<std::int32_t>("out", n), scalar("n", n)};
                 },
                 [](std::vector<Argument>& args) {
                   auto n = scalar_value<std::uint32_t>(args[2]);
                   for (std::uint32_t i = 0; i < n; ++i) {
                     int v = args[0].data<std::int32_t>()[i];
                     args[1].data<std::int32_t>()[i] = mix(polynomial(v, (v & 7) + 1), v);
                   }
                 }});

  out.push_back({"recursive_fib",
                 "calls",
                 {2, 1, 1},
                 {64, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   const std::uint32_t n = 128;
                   auto value = [&] { return static_cast<std::int32_t>(random.range(0, 15)); };
                   return std::vector<Argument>{buffer("in", generate<std::int32_t>(n, value)),
                                                output<std::int32_t>("out", n), scalar("n", n)};
                 },
                 [](std::vector<Argument>& args) {
                   auto n = scalar_value<std::uint32_t>(args[2]);
                   for (std::uint32_t i = 0; i < n; ++i)
                     args[1].data<std::int32_t>()[i] = fibonacci(args[0].data<std::int32_t>()[i]);
                 }});

  // Inputs in [0, 63]: k = (v >> 4) & 3 takes all four trip counts, so lanes diverge.
  out.push_back({"tail_call",
                 "calls",
                 {2, 1, 1},
                 {96, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   const std::uint32_t n = 150;
                   auto value = [&] { return static_cast<std::int32_t>(random.range(0, 63)); };
                   return std::vector<Argument>{buffer("in", generate<std::int32_t>(n, value)),
                                                output<std::int32_t>("out", n), scalar("n", n)};
                 },
                 [](std::vector<Argument>& args) {
                   auto n = scalar_value<std::uint32_t>(args[2]);
                   for (std::uint32_t i = 0; i < n; ++i) {
                     int v = args[0].data<std::int32_t>()[i];
                     args[1].data<std::int32_t>()[i] = scaled_sum(v + 7, (v >> 4) & 3) + 1;
                   }
                 }});

  out.push_back({"scratch_array",
                 "calls",
                 {3, 1, 1},
                 {64, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   const std::uint32_t n = 192;
                   auto value = [&] { return static_cast<std::int32_t>(random.range(0, 1000)); };
                   return std::vector<Argument>{
                       buffer("indices", generate<std::int32_t>(4 * n, value)),
                       output<std::int32_t>("out", n), scalar("n", n)};
                 },
                 [](std::vector<Argument>& args) {
                   auto n = scalar_value<std::uint32_t>(args[2]);
                   for (std::uint32_t i = 0; i < n; ++i) {
                     int sum = 0;
                     for (int k = 0; k < 4; ++k) {
                       int index = args[0].data<std::int32_t>()[i * 4 + k] & 31;
                       sum += index * index + static_cast<int>(i);
                     }
                     args[1].data<std::int32_t>()[i] = sum;
                   }
                 }});

  // 200 work-items in 4 workgroups of 64: the last wave has 8 active lanes.
  out.push_back({"address_kinds",
                 "addressing",
                 {4, 1, 1},
                 {64, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   const std::uint32_t n = 200;
                   auto value = [&] {
                     return static_cast<std::int32_t>(random.range(-1000, 1000));
                   };
                   return std::vector<Argument>{buffer("in", generate<std::int32_t>(n, value)),
                                                output<std::int32_t>("out", n), scalar("n", n)};
                 },
                 [](std::vector<Argument>& args) {
                   auto n = scalar_value<std::uint32_t>(args[2]);
                   const std::int32_t* in = args[0].data<std::int32_t>();
                   for (std::uint32_t i = 0; i < n; ++i)
                     args[1].data<std::int32_t>()[i] = in[i] + in[1] + 3 * (in[i] & 15) +
                                                       static_cast<std::int32_t>(i) + 2 * in[i] + 4;
                 }});
}

}  // namespace wavekit::corpus::detail
