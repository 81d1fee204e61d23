// Element-wise tanh and exp over arrays, for the mixed kernel's rows: glibc's libmvec AVX2
// functions (four doubles a call) where the build found libmvec and the CPU has AVX2, glibc's
// scalar tanh/exp otherwise. libmvec is within 4 ulp of the scalar functions, not equal to
// them, so the built-in kernels never come here: their rows must stay LIBSVM's to the bit.
#pragma once

#include <cstddef>

namespace wavekit::tune::detail {

// x[k] = tanh(x[k]) and x[k] = exp(x[k]) for k in [0, n).
void tanh_in_place(double* x, std::size_t n);
void exp_in_place(double* x, std::size_t n);

// Whether the CPU runs AVX2 code.
bool cpu_has_avx2();

// Whether the kernel rows', the Q gathers' and the working-set selection's loops take their
// AVX2 builds: the CPU has AVX2 and tests have not turned them off. Those builds do the scalar
// loops' operations, unfused, on the same values: the same bits, which tests check by turning
// them off (unlike libmvec, below, which changes bits).
bool avx2_loops();
void enable_avx2_loops(bool enable);

// Whether the dot-product loops (kernel rows, predictions) and the Q rows' gathers take their
// AVX-512 builds: the AVX2 loops are on, the CPU (and the OS) run AVX-512F, and tests have not
// turned them off. The same operations per lane as the AVX2 and scalar loops, unfused: the
// same bits.
bool avx512_loops();
void enable_avx512_loops(bool enable);

// Whether the functions above take the vector path. Tests turn it off to check the scalar
// fallback and to compare the two; `enable` true still needs the build's libmvec and AVX2.
bool vector_math_active();
void enable_vector_math(bool enable);

}  // namespace wavekit::tune::detail
