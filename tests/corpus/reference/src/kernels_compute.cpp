// fp64.hip, wave.hip, half.hip, short.hip and mfma.hip.
#include "builders.h"

namespace wavekit::corpus::detail {

void add_compute_kernels(std::vector<CorpusKernel>& out) {
  out.push_back({"dp_divide",
                 "fp64",
                 {4, 1, 1},
                 {128, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   const std::uint32_t n = 512;
                   auto numerator = [&] {
                     return static_cast<double>(random.range(-1000000000, 1000000000)) / 4096.0;
                   };
                   auto denominator = [&] {
                     double magnitude = static_cast<double>(random.range(1, 1000000)) / 1024.0;
                     return random.next() & 1 ? magnitude : -magnitude;
                   };
                   return std::vector<Argument>{buffer("a", generate<double>(n, numerator)),
                                                buffer("b", generate<double>(n, denominator)),
                                                output<double>("out", n), scalar("n", n)};
                 },
                 [](std::vector<Argument>& args) {
                   auto n = scalar_value<std::uint32_t>(args[3]);
                   for (std::uint32_t i = 0; i < n; ++i) {
                     double a = args[0].data<double>()[i], b = args[1].data<double>()[i];
                     // Separate statements: no contraction into an fma (the kernel has none).
                     double quotient = a / b;
                     double product = a * b;
                     args[2].data<double>()[i] = quotient + product;
                   }
                 }});

  out.push_back(
      {"int64_divide",
       "fp64",
       {4, 1, 1},
       {64, 1, 1},
       [](std::uint64_t seed) {
         Random random(seed);
         const std::uint32_t n = 256;
         auto dividend = [&] { return random.next(); };
         // Divisors of every magnitude, never zero.
         auto divisor = [&] { return (random.next() >> random.range(0, 63)) | 1; };
         auto signed_dividend = [&] {
           return static_cast<std::int64_t>(random.next() >> 1) - (std::int64_t{1} << 62);
         };
         auto signed_divisor = [&] {
           auto magnitude = static_cast<std::int64_t>((random.next() >> random.range(1, 63)) | 1);
           return random.next() & 1 ? magnitude : -magnitude;
         };
         return std::vector<Argument>{buffer("a", generate<std::uint64_t>(n, dividend)),
                                      buffer("b", generate<std::uint64_t>(n, divisor)),
                                      buffer("sa", generate<std::int64_t>(n, signed_dividend)),
                                      buffer("sb", generate<std::int64_t>(n, signed_divisor)),
                                      output<std::uint64_t>("quotient", n),
                                      output<std::uint64_t>("remainder", n),
                                      output<std::int64_t>("signed_quotient", n),
                                      scalar("n", n)};
       },
       [](std::vector<Argument>& args) {
         auto n = scalar_value<std::uint32_t>(args[7]);
         for (std::uint32_t i = 0; i < n; ++i) {
           std::uint64_t a = args[0].data<std::uint64_t>()[i], b = args[1].data<std::uint64_t>()[i];
           args[4].data<std::uint64_t>()[i] = a / b;
           args[5].data<std::uint64_t>()[i] = a % b;
           args[6].data<std::int64_t>()[i] =
               args[2].data<std::int64_t>()[i] / args[3].data<std::int64_t>()[i];
         }
       }});

  out.push_back({"wave_ops",
                 "wave",
                 {3, 1, 1},
                 {128, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   const std::uint32_t n = 3 * 128;
                   auto value = [&] { return static_cast<std::int32_t>(random.range(-100, 100)); };
                   return std::vector<Argument>{buffer("in", generate<std::int32_t>(n, value)),
                                                output<std::uint64_t>("ballots", n / 64),
                                                output<std::int32_t>("first", n),
                                                output<std::int32_t>("lane17", n),
                                                output<std::int32_t>("reversed", n),
                                                output<std::int32_t>("shifted", n)};
                 },
                 [](std::vector<Argument>& args) {
                   const std::int32_t* in = args[0].data<std::int32_t>();
                   for (std::size_t wave = 0; wave < args[1].count(); ++wave) {
                     const std::int32_t* lanes = in + wave * 64;
                     std::uint64_t mask = 0;
                     for (unsigned lane = 0; lane < 64; ++lane) {
                       if (lanes[lane] > 0) mask |= std::uint64_t{1} << lane;
                       std::size_t i = wave * 64 + lane;
                       args[2].data<std::int32_t>()[i] = lanes[0];
                       args[3].data<std::int32_t>()[i] = lanes[17];
                       args[4].data<std::int32_t>()[i] = lanes[63 - lane];
                       args[5].data<std::int32_t>()[i] = lane % 16 == 0 ? 0 : lanes[lane - 1];
                     }
                     args[1].data<std::uint64_t>()[wave] = mask;
                   }
                 }});

  out.push_back({"packed_half",
                 "half",
                 {2, 1, 1},
                 {160, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   const std::uint32_t n = 300;  // half2 elements
                   auto value = [&] {
                     return static_cast<_Float16>(static_cast<float>(random.range(-2048, 2048)) /
                                                  256.0f);
                   };
                   return std::vector<Argument>{buffer("a", generate<_Float16>(2 * n, value)),
                                                buffer("b", generate<_Float16>(2 * n, value)),
                                                buffer("c", generate<_Float16>(2 * n, value)),
                                                output<_Float16>("out", 2 * n),
                                                output<_Float16>("maximum", 2 * n),
                                                scalar("n", n)};
                 },
                 [](std::vector<Argument>& args) {
                   auto n = scalar_value<std::uint32_t>(args[5]);
                   for (std::uint32_t i = 0; i < 2 * n; ++i) {
                     _Float16 a = args[0].data<_Float16>()[i], b = args[1].data<_Float16>()[i],
                              c = args[2].data<_Float16>()[i];
                     // Rounded to half after each operation, as v_pk_mul_f16 then v_pk_add_f16.
                     _Float16 product = a * b;
                     _Float16 sum = product + c;
                     args[3].data<_Float16>()[i] = sum;
                     args[4].data<_Float16>()[i] = a > c ? a : c;
                   }
                 }});

  out.push_back({"short_arith",
                 "short",
                 {5, 1, 1},
                 {128, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   const std::uint32_t n_words = 300;  // 600 16-bit values, two per word
                   std::vector<std::uint32_t> a(n_words), b(n_words);
                   auto half = [&]() -> std::uint32_t {
                     // Small shift amounts and values around the signed boundary come often.
                     switch (random.range(0, 5)) {
                       case 0:
                         return 0x7fffu - static_cast<std::uint32_t>(random.range(0, 3));
                       case 1:
                         return 0x8000u + static_cast<std::uint32_t>(random.range(0, 3));
                       case 2:
                         return static_cast<std::uint32_t>(random.range(0, 15));
                       default:
                         return static_cast<std::uint32_t>(random.range(0, 0xffff));
                     }
                   };
                   // One statement per draw: the order of the draws must not depend on the
                   // compiler's order of evaluation.
                   auto word = [&] {
                     std::uint32_t low = half();
                     std::uint32_t high = half();
                     return low | (high << 16);
                   };
                   for (std::uint32_t w = 0; w < n_words; ++w) {
                     a[w] = word();
                     bool equal = random.range(0, 3) == 0;
                     b[w] = equal ? a[w] : word();
                   }
                   return std::vector<Argument>{buffer("a", a), buffer("b", b),
                                                output<std::uint32_t>("unsigned_out", n_words),
                                                output<std::uint32_t>("signed_out", n_words),
                                                scalar("n_words", n_words)};
                 },
                 [](std::vector<Argument>& args) {
                   auto n_words = scalar_value<std::uint32_t>(args[4]);
                   // The kernel's expressions, on the little-endian 16-bit halves of each word.
                   auto halves = [](Argument& arg) {
                     return reinterpret_cast<std::uint16_t*>(arg.data<std::uint32_t>());
                   };
                   const std::uint16_t *a = halves(args[0]), *b = halves(args[1]);
                   std::uint16_t* unsigned_out = halves(args[2]);
                   auto* signed_out = reinterpret_cast<std::int16_t*>(halves(args[3]));
                   for (std::uint32_t i = 0; i < 2 * n_words; ++i) {
                     std::uint16_t x = a[i], y = b[i];
                     // In 32 unsigned bits: uint16_t operands promote to int, whose product
                     // of two large halves overflows.
                     auto r = static_cast<std::uint16_t>(
                         static_cast<std::uint16_t>(std::uint32_t{x} * y) +
                                                         static_cast<std::uint16_t>(x >> (y & 7)));
                     if (x == y) r = static_cast<std::uint16_t>(r - x);
                     r = x < y ? r : static_cast<std::uint16_t>(r << 3);
                     auto p = static_cast<std::int16_t>(x), q = static_cast<std::int16_t>(y);
                     auto s = static_cast<std::int16_t>((p > q ? p : q) - (p < q ? p : q));
                     s = static_cast<std::int16_t>(s >> (y & 3));
                     if (p == q) s = 99;
                     unsigned_out[i] = r;
                     signed_out[i] = s;
                   }
                 }});

  out.push_back({"mfma_16x16x4",
                 "mfma",
                 {3, 1, 1},
                 {64, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   // Small integers: every product and partial sum is exact, so the result does
                   // not depend on the order the matrix core accumulates in.
                   auto value = [&] { return static_cast<float>(random.range(-8, 8)); };
                   return std::vector<Argument>{buffer("a", generate<float>(3 * 64, value)),
                                                buffer("b", generate<float>(3 * 64, value)),
                                                buffer("c", generate<float>(3 * 256, value)),
                                                output<float>("d", 3 * 256)};
                 },
                 [](std::vector<Argument>& args) {
                   for (std::uint32_t g = 0; g < 3; ++g) {
                     const float* a = args[0].data<float>() + g * 64;  // 16 x 4
                     const float* b = args[1].data<float>() + g * 64;  // 4 x 16
                     const float* c = args[2].data<float>() + g * 256;
                     float* d = args[3].data<float>() + g * 256;
                     for (int i = 0; i < 16; ++i) {
                       for (int j = 0; j < 16; ++j) {
                         float sum = c[i * 16 + j];
                         for (int k = 0; k < 4; ++k) sum += a[i * 4 + k] * b[k * 16 + j];
                         d[i * 16 + j] = sum;
                       }
                     }
                   }
                 }});
}

}  // namespace wavekit::corpus::detail
