// basic.hip and grid.hip.
#include <cmath>

#include "builders.h"

namespace wavekit::corpus::detail {

void add_basic_kernels(std::vector<CorpusKernel>& out) {
  out.push_back({"vector_add",
                 "basic",
                 {8, 1, 1},
                 {256, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   auto value = [&] {
                     return static_cast<float>(random.range(-8000, 8000)) / 64.0f;
                   };
                   const std::uint32_t n = 2000;  // the last 48 work-items are idle
                   return std::vector<Argument>{buffer("a", generate<float>(n, value)),
                                                buffer("b", generate<float>(n, value)),
                                                output<float>("c", n), scalar("n", n)};
                 },
                 [](std::vector<Argument>& args) {
                   auto n = scalar_value<std::uint32_t>(args[3]);
                   for (std::uint32_t i = 0; i < n; ++i) {
                     args[2].data<float>()[i] = args[0].data<float>()[i] + args[1].data<float>()[i];
                   }
                 }});

  out.push_back(
      {"saxpy_fma",
       "basic",
       {10, 1, 1},
       {100, 1, 1},
       [](std::uint64_t seed) {
         Random random(seed);
         auto value = [&] { return static_cast<float>(random.range(-100000, 100000)) / 1000.0f; };
         const std::uint32_t n = 1000;
         Argument y = buffer("y", generate<float>(n, value));
         y.is_output = true;
         return std::vector<Argument>{scalar("alpha", 1.75f),
                                      buffer("x", generate<float>(n, value)), y, scalar("n", n)};
       },
       [](std::vector<Argument>& args) {
         auto alpha = scalar_value<float>(args[0]);
         auto n = scalar_value<std::uint32_t>(args[3]);
         for (std::uint32_t i = 0; i < n; ++i) {
           float& y = args[2].data<float>()[i];
           y = std::fma(alpha, args[1].data<float>()[i], y);
         }
       }});

  out.push_back({"collatz_steps",
                 "basic",
                 {4, 1, 1},
                 {128, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   const std::uint32_t n = 500;
                   auto start = [&] { return static_cast<std::uint32_t>(random.range(1, 10000)); };
                   return std::vector<Argument>{buffer("start", generate<std::uint32_t>(n, start)),
                                                output<std::uint32_t>("steps", n), scalar("n", n)};
                 },
                 [](std::vector<Argument>& args) {
                   auto n = scalar_value<std::uint32_t>(args[2]);
                   for (std::uint32_t i = 0; i < n; ++i) {
                     std::uint32_t value = args[0].data<std::uint32_t>()[i], count = 0;
                     while (value > 1 && count < 1000) {
                       value = (value & 1) ? 3 * value + 1 : value / 2;
                       ++count;
                     }
                     args[1].data<std::uint32_t>()[i] = count;
                   }
                 }});

  out.push_back({"branchy",
                 "basic",
                 {4, 1, 1},
                 {192, 1, 1},
                 [](std::uint64_t seed) {
                   Random random(seed);
                   const std::uint32_t n = 700;
                   auto value = [&] {
                     return static_cast<std::int32_t>(random.range(-1000, 1000));
                   };
                   return std::vector<Argument>{buffer("in", generate<std::int32_t>(n, value)),
                                                output<std::int32_t>("out", n), scalar("n", n)};
                 },
                 [](std::vector<Argument>& args) {
                   auto n = scalar_value<std::uint32_t>(args[2]);
                   for (std::uint32_t i = 0; i < n; ++i) {
                     std::int32_t v = args[0].data<std::int32_t>()[i], r;
                     switch (v & 3) {
                       case 0:
                         r = v * 7 - 3;
                         break;
                       case 1:
                         r = v ^ 0x5a5a;
                         break;
                       case 2:
                         r = v > 100 ? v / 3 : -v;
                         break;
                       default:
                         r = static_cast<std::int32_t>(static_cast<std::uint32_t>(v) << 2) | 1;
                         break;
                     }
                     args[1].data<std::int32_t>()[i] = r;
                   }
                 }});

  out.push_back(
      {"transpose_2d",
       "grid",
       {5, 6, 1},
       {13, 7, 1},
       [](std::uint64_t seed) {
         Random random(seed);
         const std::uint32_t width = 64, height = 40;  // the grid is 65 x 42
         auto value = [&] { return static_cast<float>(random.range(-1000, 1000)) / 8.0f; };
         return std::vector<Argument>{buffer("in", generate<float>(width * height, value)),
                                      output<float>("out", width * height), scalar("width", width),
                                      scalar("height", height)};
       },
       [](std::vector<Argument>& args) {
         auto width = scalar_value<std::uint32_t>(args[2]);
         auto height = scalar_value<std::uint32_t>(args[3]);
         for (std::uint32_t y = 0; y < height; ++y) {
           for (std::uint32_t x = 0; x < width; ++x) {
             args[1].data<float>()[x * height + y] = args[0].data<float>()[y * width + x];
           }
         }
       }});

  out.push_back(
      {"stencil_3d",
       "grid",
       {3, 3, 4},
       {5, 4, 3},
       [](std::uint64_t seed) {
         Random random(seed);
         const std::uint32_t nx = 14, ny = 12, nz = 11;  // the grid is 15 x 12 x 12
         auto value = [&] { return static_cast<float>(random.range(-100000, 100000)) / 1024.0f; };
         return std::vector<Argument>{buffer("in", generate<float>(nx * ny * nz, value)),
                                      output<float>("out", nx * ny * nz), scalar("nx", nx),
                                      scalar("ny", ny), scalar("nz", nz)};
       },
       [](std::vector<Argument>& args) {
         auto nx = scalar_value<std::uint32_t>(args[2]);
         auto ny = scalar_value<std::uint32_t>(args[3]);
         auto nz = scalar_value<std::uint32_t>(args[4]);
         const float* in = args[0].data<float>();
         auto at = [&](std::uint32_t x, std::uint32_t y, std::uint32_t z) {
           return in[(z * ny + y) * nx + x];
         };
         for (std::uint32_t z = 0; z < nz; ++z) {
           for (std::uint32_t y = 0; y < ny; ++y) {
             for (std::uint32_t x = 0; x < nx; ++x) {
               // Same association order as the kernel: one rounding per addition.
               float sum = at(x, y, z);
               sum += at(x > 0 ? x - 1 : x, y, z);
               sum += at(x + 1 < nx ? x + 1 : x, y, z);
               sum += at(x, y > 0 ? y - 1 : y, z);
               sum += at(x, y + 1 < ny ? y + 1 : y, z);
               sum += at(x, y, z > 0 ? z - 1 : z);
               sum += at(x, y, z + 1 < nz ? z + 1 : z);
               args[1].data<float>()[(z * ny + y) * nx + x] = sum;
             }
           }
         }
       }});
}

}  // namespace wavekit::corpus::detail
