// The mixed kernel's vector tanh/exp (glibc's libmvec) against glibc's scalar functions: close
// on ordinary values, the same on the special ones, the same result wherever in an array a
// value falls, and exactly the scalar functions when the vector path is off.
#include "vector_math.h"  // the tune part's internal header (src/tune/src)

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace wavekit::tune::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// Ordinary values over many scales, the ends of exp's range, subnormals, zeros, infinities.
std::vector<double> probe_values() {
  std::vector<double> v = {0.0,    -0.0,  1e-310, -1e-310, 5e-324, 1e-20,  -1e-20, 0.5,
                           -0.5,   1.0,   -1.0,   19.0,    -19.0,  22.0,   -22.0,  709.7,
                           709.79, 709.8, 710.0,  -708.0,  -745.0, -745.2, -746.0, 1e300,
                           -1e300, kInf,  -kInf,  kNan,    -kNan};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-40, 10);
  for (int k = 0; k < 20000; ++k) v.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  return v;
}

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// Within 4 ulp (libmvec's documented bound), or both the same special value.
void expect_close(double got, double want, double x, const char* what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << "(" << x << ") = " << got;
  } else if (std::isinf(want) || want == 0) {
    EXPECT_EQ(got, want) << what << "(" << x << ")";
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << what << "(" << x << ")";
  } else {
    double ulp = std::nextafter(std::fabs(want), kInf) - std::fabs(want);
    EXPECT_LE(std::fabs(got - want), 4 * ulp) << what << "(" << x << "): " << got << " vs " << want;
  }
}

class VectorMath : public ::testing::Test {
 protected:
  void TearDown() override { enable_vector_math(true); }
};

TEST_F(VectorMath, CloseToGlibcsScalarFunctions) {
  if (!vector_math_active()) GTEST_SKIP() << "no libmvec in this build, or no AVX2 here";
  std::vector<double> x = probe_values(), t = x, e = x;
  tanh_in_place(t.data(), t.size());
  exp_in_place(e.data(), e.size());
  for (std::size_t k = 0; k < x.size(); ++k) {
    expect_close(t[k], std::tanh(x[k]), x[k], "tanh");
    expect_close(e[k], std::exp(x[k]), x[k], "exp");
  }
  // the values where the two libraries' corner cases are decided
  EXPECT_EQ(t[0], 0.0);
  EXPECT_TRUE(std::signbit(t[1]));  // tanh(-0) = -0
  double ends[] = {kInf, -kInf, 710.0, -746.0};
  exp_in_place(ends, 4);
  EXPECT_EQ(ends[0], kInf);
  EXPECT_EQ(ends[1], 0.0);
  EXPECT_EQ(ends[2], kInf);
  EXPECT_EQ(ends[3], 0.0);
}

// A row computed in pieces (a tail shorter than a vector among them) equals the row at once.
TEST_F(VectorMath, ResultDoesNotDependOnPositionOrLength) {
  std::vector<double> x = probe_values();
  x.resize(1003);
  for (auto f : {tanh_in_place, exp_in_place}) {
    std::vector<double> whole = x;
    f(whole.data(), whole.size());
    for (std::size_t k = 0; k < x.size(); ++k) {
      double one = x[k];
      f(&one, 1);
      if (std::isnan(one))
        EXPECT_TRUE(std::isnan(whole[k])) << k;
      else
        EXPECT_EQ(bits(one), bits(whole[k])) << k;
    }
    for (std::size_t n = 0; n <= 9; ++n) {
      std::vector<double> part(x.begin() + 5, x.begin() + 5 + static_cast<long>(n));
      f(part.data(), n);
      for (std::size_t k = 0; k < n; ++k)
        if (!std::isnan(part[k])) EXPECT_EQ(bits(part[k]), bits(whole[5 + k])) << n << " " << k;
    }
  }
}

TEST_F(VectorMath, OffIsGlibcsScalarFunctionsExactly) {
  enable_vector_math(false);
  EXPECT_FALSE(vector_math_active());
  std::vector<double> x = probe_values(), t = x, e = x;
  tanh_in_place(t.data(), t.size());
  exp_in_place(e.data(), e.size());
  for (std::size_t k = 0; k < x.size(); ++k) {
    if (std::isnan(x[k])) continue;
    EXPECT_EQ(bits(t[k]), bits(std::tanh(x[k]))) << x[k];
    EXPECT_EQ(bits(e[k]), bits(std::exp(x[k]))) << x[k];
  }
}

}  // namespace
}  // namespace wavekit::tune::detail
