// The C-SVC solver: LIBSVM 3.24's SMO (Fan, Chen and Lin 2005: WSS3, the tau safeguard,
// shrinking with one unshrink, gradient reconstruction), its Q cache of floats, its one-vs-one
// training and voting, its Platt scaling and its cross-validation folds. Written from the
// published algorithm; where LIBSVM's floating-point order of operations decides ties or
// rounding (the kernel from squared norms, Q rows in float, >= in the selections), this code
// does the same, so that iterations, objective and support vectors agree with LIBSVM's.
#include "wavekit/tune/svm.h"

#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>

#include "parallel.h"
#include "vector_math.h"
#include "wavekit/support/error.h"

// No a*b+c becomes a fused multiply-add anywhere here (CMakeLists also passes -ffp-contract=off):
// LIBSVM rounds the product and the sum apart, and the AVX-512 functions below, whose target
// has FMA, inline the one-at-a-time loops that must give the scalar loops' bits.
#ifdef __clang__
#pragma clang fp contract(off)
#endif

namespace wavekit::tune {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTau = 1e-12;

// Where a fit's progress text goes: stdout, or a buffer while the fit runs beside others
// (Platt's folds in parallel), printed in LIBSVM's sequential order once they are all done.
thread_local std::string* progress_buffer = nullptr;

__attribute__((format(printf, 1, 2))) void progress(const char* format, ...) {
  va_list args;
  va_start(args, format);
  if (progress_buffer) {
    va_list again;
    va_copy(again, args);
    int n = std::vsnprintf(nullptr, 0, format, again);
    va_end(again);
    std::size_t old = progress_buffer->size();
    progress_buffer->resize(old + static_cast<std::size_t>(n) + 1);
    std::vsnprintf(progress_buffer->data() + old, static_cast<std::size_t>(n) + 1, format, args);
    progress_buffer->resize(old + static_cast<std::size_t>(n));
  } else {
    std::vprintf(format, args);
  }
  va_end(args);
}

double powi(double base, int times) {
  double tmp = base, ret = 1.0;
  for (int t = times; t > 0; t /= 2) {
    if (t % 2 == 1) ret *= tmp;
    tmp = tmp * tmp;
  }
  return ret;
}

double dot(const double* a, const double* b, std::size_t n) {
  double sum = 0;
  for (std::size_t k = 0; k < n; ++k) sum += a[k] * b[k];
  return sum;
}

// One component from the dot product and the squared norms (LIBSVM's training form).
double component(const KernelSpec& s, double d, double xi2, double xj2) {
  switch (s.type) {
    case Kernel::linear:
      return d;
    case Kernel::poly:
      return powi(s.gamma * d + s.coef0, s.degree);
    case Kernel::rbf:
      return std::exp(-s.gamma * (xi2 + xj2 - 2 * d));
    case Kernel::sigmoid:
      return std::tanh(s.gamma * d + s.coef0);
    default:
      return 0;
  }
}

// The same from the dot product and the squared distance (LIBSVM's prediction form).
double component_dist(const KernelSpec& s, double d, double dist2) {
  if (s.type == Kernel::rbf) return std::exp(-s.gamma * dist2);
  return component(s, d, 0, 0);
}

// One component of the mixed kernel over a row: d the dot products, dist2 the squared
// distances (read by rbf only), in whichever form (training or prediction) the caller made
// them. tanh and exp go over the whole row in one call, the part of the row's time that counts.
void component_row(const KernelSpec& s, const double* d, const double* dist2, std::size_t n,
                   double* out) {
  switch (s.type) {
    case Kernel::rbf:
      for (std::size_t j = 0; j < n; ++j) out[j] = -s.gamma * dist2[j];
      return detail::exp_in_place(out, n);
    case Kernel::sigmoid:
      for (std::size_t j = 0; j < n; ++j) out[j] = s.gamma * d[j] + s.coef0;
      return detail::tanh_in_place(out, n);
    default:
      for (std::size_t j = 0; j < n; ++j) out[j] = component(s, d[j], 0, 0);
  }
}

bool needs_distance(const SvmParams& p) {
  return p.kernel.type == Kernel::rbf ||
         (p.kernel.type == Kernel::mixed &&
          (p.first.type == Kernel::rbf || p.second.type == Kernel::rbf));
}

// The study's mixture, K1 sigmoid and K2 RBF with 0 < a < 1, in fewer passes over the row: both
// components' arguments from one read of the dot products and squared distances (dist2(j),
// which may compute them: no row of distances is kept), libmvec's tanh and exp over them, then
// the mixture. The same operations on the same values as component_row's and mixed_row's, so
// the same bits; out may be d itself.
bool sigmoid_rbf(const SvmParams& p) {
  return p.first.type == Kernel::sigmoid && p.second.type == Kernel::rbf && p.mix != 0 &&
         p.mix != 1;
}
template <class Dist2>
[[gnu::always_inline]] inline void sigmoid_rbf_args(const SvmParams& p, const double* d,
                                                    Dist2 dist2, std::size_t n, double* first,
                                                    double* second) {
  const double g1 = p.first.gamma, c1 = p.first.coef0, g2 = -p.second.gamma;
  for (std::size_t j = 0; j < n; ++j) {
    first[j] = g1 * d[j] + c1;
    second[j] = g2 * dist2(j);
  }
}
[[gnu::always_inline]] inline void mix_body(double a, const double* first, const double* second,
                                            std::size_t n, double* out) {
  for (std::size_t j = 0; j < n; ++j) out[j] = (1 - a) * first[j] + a * second[j];
}
template <class Dist2>
void sigmoid_rbf_row(const SvmParams& p, const double* d, Dist2 dist2, std::size_t n, double* out) {
  thread_local std::vector<double> first, second;
  first.resize(n);
  second.resize(n);
  sigmoid_rbf_args(p, d, dist2, n, first.data(), second.data());
  detail::tanh_in_place(first.data(), n);
  detail::exp_in_place(second.data(), n);
  mix_body(p.mix, first.data(), second.data(), n, out);
}

// (1 - a) K1 + a K2 over a row into out[0, n), which may be d itself. Every mixed-kernel value
// comes from here, single ones too (the diagonal, one prediction), so that a value is the
// same wherever it is computed.
void mixed_row(const SvmParams& p, const double* d, const double* dist2, std::size_t n,
               double* out) {
  // At a = 0 or 1 the kernel is one built-in kernel, computed as that kernel is (glibc's
  // functions: LIBSVM's bits); the other component, weighted 0, is not computed.
  if (p.mix == 0 || p.mix == 1) {
    const KernelSpec& only = p.mix == 0 ? p.first : p.second;
    for (std::size_t j = 0; j < n; ++j) out[j] = component_dist(only, d[j], dist2[j]);
    return;
  }
  if (sigmoid_rbf(p))
    return sigmoid_rbf_row(
        p, d, [dist2](std::size_t j) { return dist2[j]; }, n, out);
  thread_local std::vector<double> first, second;
  first.resize(n);
  second.resize(n);
  component_row(p.first, d, dist2, n, first.data());
  component_row(p.second, d, dist2, n, second.data());
  for (std::size_t j = 0; j < n; ++j) out[j] = (1 - p.mix) * first[j] + p.mix * second[j];
}

bool uses_gamma(Kernel k) { return k == Kernel::poly || k == Kernel::rbf || k == Kernel::sigmoid; }

// How many dot products a kernel row's loops keep in registers at once: sixteen are four AVX2
// registers per sum, four chains of additions to overlap (eight: 2-3 % slower).
constexpr std::size_t kDotBlock = 16;

// The training kernel over rows given by pointers (permuted by the solver's swaps), with a
// feature-major copy so that a row of dot products vectorises across samples while each dot
// product still adds its terms in feature order (the same rounding as one dot at a time).
struct TrainKernel {
  const SvmParams* p;
  std::size_t dim;
  std::vector<const double*> x;
  std::vector<double> xsq;
  std::vector<double> xt;  // xt[k * l + j] = x[j][k]
  std::size_t l = 0;
  class SharedGram* gram = nullptr;  // kernel rows shared across sub-problems, or null
  std::vector<int> orig;             // each position's row in the shared Gram matrix

  void build() {
    l = x.size();
    xt.assign(dim * l, 0.0);
    for (std::size_t j = 0; j < l; ++j)
      for (std::size_t k = 0; k < dim; ++k) xt[k * l + j] = x[j][k];
  }
  void swap(int i, int j) {
    std::swap(x[i], x[j]);
    std::swap(xsq[i], xsq[j]);
    if (gram) std::swap(orig[i], orig[j]);
    if (!xt.empty())
      for (std::size_t k = 0; k < dim; ++k) std::swap(xt[k * l + i], xt[k * l + j]);
  }
  // The dot products out[0, n) of row i with rows [b, b + n) become kernel values.
  void finish_row(int i, int b, std::size_t n, double* out) const {
    const SvmParams& q = *p;
    if (q.kernel.type != Kernel::mixed) {
      for (std::size_t j = 0; j < n; ++j)
        out[j] = component(q.kernel, out[j], xsq[i], xsq[b + static_cast<int>(j)]);
      return;
    }
    if (sigmoid_rbf(q)) {
      // dist2 as below, computed where it is read (out[j] is read before it is written)
      const double xi2 = xsq[i], *xj2 = xsq.data() + b;
      return sigmoid_rbf_row(
          q, out, [&](std::size_t j) { return xi2 + xj2[j] - 2 * out[j]; }, n, out);
    }
    thread_local std::vector<double> dist2;
    dist2.resize(n);
    for (std::size_t j = 0; j < n; ++j)
      dist2[j] = xsq[i] + xsq[b + static_cast<int>(j)] - 2 * out[j];
    mixed_row(q, out, dist2.data(), n, out);
  }
  double operator()(int i, int j) const {
    if (p->kernel.type == Kernel::precomputed) return x[i][static_cast<int>(x[j][0])];
    double k = dot(x[i], x[j], dim);
    finish_row(i, j, 1, &k);
    return k;
  }
  // K(i, j) for j in [b, e) into out[0, e - b).
  void compute_row(int i, int b, int e, double* out) const {
    std::size_t n = static_cast<std::size_t>(e - b);
    if (p->kernel.type == Kernel::precomputed) {
      for (std::size_t j = 0; j < n; ++j) out[j] = (*this)(i, b + static_cast<int>(j));
      return;
    }
    if (detail::avx512_loops())
      dots_avx512(i, b, n, out);
    else if (detail::avx2_loops())
      dots_avx2(i, b, n, out);
    else
      dots(i, b, n, out);
    finish_row(i, b, n, out);
  }
  // The dot products of row i with rows [b, b + n), each in feature order. The AVX2 build is
  // the same loop four lanes wide: the same products and sums, none fused, so the same bits.
  [[gnu::always_inline]] void dots_body(int i, std::size_t b, std::size_t n, double* out) const {
    std::size_t j = 0;
    for (; j + kDotBlock <= n; j += kDotBlock) dot_block<kDotBlock>(i, b + j, out + j);
    for (; j < n; ++j) dot_block<1>(i, b + j, out + j);
  }
  void dots(int i, std::size_t b, std::size_t n, double* out) const { dots_body(i, b, n, out); }
  __attribute__((target("avx2"))) void dots_avx2(int i, std::size_t b, std::size_t n,
                                                 double* out) const {
    dots_body(i, b, n, out);
  }
  // The same 32 at a time in four AVX-512 registers (clang's AVX-512 code otherwise keeps to
  // 256-bit vectors): the same products and sums in feature order, none fused; the rest as
  // dots_body.
  __attribute__((target("avx512f"))) void dots_avx512(int i, std::size_t b, std::size_t n,
                                                      double* out) const {
    const __m512d zero = _mm512_setzero_pd();
    const double* xi = x[i];
    std::size_t j = 0;
    for (; j + 32 <= n; j += 32) {
      __m512d sum[4] = {zero, zero, zero, zero};
      for (std::size_t k = 0; k < dim; ++k) {
        double v = xi[k];
        if (v == 0) continue;  // adds only zeros: the sum is unchanged
        const double* col = xt.data() + k * l + b + j;
        __m512d vv = _mm512_set1_pd(v);
        for (std::size_t q = 0; q < 4; ++q)
          sum[q] = _mm512_add_pd(sum[q], _mm512_mul_pd(vv, _mm512_loadu_pd(col + 8 * q)));
      }
      for (std::size_t q = 0; q < 4; ++q) _mm512_storeu_pd(out + j + 8 * q, sum[q]);
    }
    for (; j < n; ++j) dot_block<1>(i, b + j, out + j);
  }
  // The dot products of row i with the M rows from `first` (M sums held in registers across the
  // features, rather than a pass over the whole row per feature), each in feature order.
  template <std::size_t M>
  [[gnu::always_inline]] void dot_block(int i, std::size_t first, double* out) const {
    double sum[M] = {};
    const double* xi = x[i];
    for (std::size_t k = 0; k < dim; ++k) {
      double v = xi[k];
      if (v == 0) continue;  // adds only zeros: the sum is unchanged
      const double* col = xt.data() + k * l + first;
      for (std::size_t m = 0; m < M; ++m) sum[m] += v * col[m];
    }
    for (std::size_t m = 0; m < M; ++m) out[m] = sum[m];
  }
};

// The kernel matrix of a whole training set as floats, each row computed on first use: the
// sub-problems of one train() (one-vs-one pairs, Platt's five folds, -v's folds) read their
// rows from it instead of computing them again. Exact: LIBSVM keeps Q = (float)(y_i y_j K),
// and a sign change commutes with rounding, so y_i y_j (float)K is the same float.
class SharedGram {
 public:
  explicit SharedGram(const Dataset& data, const SvmParams& params)
      : n_(data.rows()), slot_(new float*[data.rows()]), once_(new std::once_flag[data.rows()]) {
    k_.p = &params_;
    params_ = params;
    k_.dim = data.cols();
    for (std::size_t i = 0; i < n_; ++i) k_.x.push_back(data.row(i));
    for (std::size_t i = 0; i < n_; ++i) k_.xsq.push_back(dot(data.row(i), data.row(i), k_.dim));
    k_.build();
    // One block, in 2 MiB pages where the kernel offers them (madvise): a 5,000-row matrix is
    // 100 MB, 24,000 page faults in 4 KiB pages, 50 in 2 MiB ones. Memory is faulted in only
    // for the slots that computed rows take (row()).
    constexpr std::size_t kPage = std::size_t(2) << 20;
    std::size_t bytes = (n_ * n_ * sizeof(float) + kPage - 1) / kPage * kPage;
    rows_.reset(static_cast<float*>(std::aligned_alloc(kPage, bytes)));
    if (!rows_) fail("svm", "no memory for the " + std::to_string(n_) + "-row kernel matrix");
#ifdef MADV_HUGEPAGE
    madvise(rows_.get(), bytes, MADV_HUGEPAGE);
#endif
  }
  std::size_t size() const { return n_; }
  static bool worth_it(const Dataset& data) {
    double n = static_cast<double>(data.rows());
    return n * n * 4 <= 2.0 * (1u << 30);
  }
  // Row r, computed on first use; safe to call from fits running at once. The pool is the
  // caller's (none inside a fit that runs beside others: one pool cannot serve two at once).
  const float* row(int r, detail::ParallelFor* pool) {
    std::call_once(once_[r], [&] {
      // Rows take the block's slots in the order they are first wanted, so that the memory
      // faulted in (and zeroed by the kernel) is that of the rows used only: at 5k -b 1, 3,719
      // of 5,000 rows, 74 of 100 MB. (call_once orders this write before every return.)
      float* row = rows_.get() + next_slot_.fetch_add(1, std::memory_order_relaxed) * n_;
      slot_[r] = row;
      auto fill = [&](std::size_t b, std::size_t e) {
        thread_local std::vector<double> buf;
        buf.resize(std::max(buf.size(), e - b));  // every entry used is written first
        k_.compute_row(r, static_cast<int>(b), static_cast<int>(e), buf.data());
        for (std::size_t j = b; j < e; ++j) row[j] = static_cast<float>(buf[j - b]);
      };
      if (pool && n_ * (k_.dim + 8) >= 4096)
        pool->run(n_, fill);
      else
        fill(0, n_);
    });
    return slot_[r];
  }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::size_t n_;
  SvmParams params_;
  TrainKernel k_;
  std::unique_ptr<float[], Free> rows_;  // n_ slots of n_ floats
  std::unique_ptr<float*[]> slot_;       // row r's slot, once computed
  std::atomic<std::size_t> next_slot_{0};
  std::unique_ptr<std::once_flag[]> once_;
};

// out[j] = y_i y[j] g[index[j]] for j in [0, n): a Q row's entries from the shared matrix (a
// sign change commutes with rounding, so this is the float LIBSVM computes). The AVX2 build
// gathers eight at a time and flips the sign bit where y_i y[j] < 0: the same floats.
[[gnu::always_inline]] inline void gather_q_body(const float* g, const int* index,
                                                 const signed char* y, signed char yi, float* out,
                                                 std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    float v = g[index[j]];
    out[j] = y[j] == yi ? v : -v;
  }
}
void gather_q(const float* g, const int* index, const signed char* y, signed char yi, float* out,
              std::size_t n) {
  gather_q_body(g, index, y, yi, out, n);
}
__attribute__((target("avx2"))) void gather_q_avx2(const float* g, const int* index,
                                                   const signed char* y, signed char yi, float* out,
                                                   std::size_t n) {
  std::size_t j = 0;
  const __m128i vyi = _mm_set1_epi8(yi);
  const __m256i sign = _mm256_set1_epi32(std::numeric_limits<int>::min());
  for (; j + 8 <= n; j += 8) {
    __m256i ix = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(index + j));
    __m256 v = _mm256_i32gather_ps(g, ix, 4);
    // y[j] ^ y_i is 0 for equal signs, -2 for opposite ones: its sign bit, widened, is the flip.
    __m128i yy = _mm_xor_si128(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(y + j)), vyi);
    __m256i flip = _mm256_and_si256(_mm256_cvtepi8_epi32(yy), sign);
    _mm256_storeu_ps(out + j, _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(v), flip)));
  }
  gather_q_body(g, index + j, y + j, yi, out + j, n - j);
}

// Sixteen at a time where the CPU has AVX-512F (the same floats and sign flips).
__attribute__((target("avx512f"))) void gather_q_avx512(const float* g, const int* index,
                                                        const signed char* y, signed char yi,
                                                        float* out, std::size_t n) {
  std::size_t j = 0;
  const __m128i vyi = _mm_set1_epi8(yi);
  const __m512i sign = _mm512_set1_epi32(std::numeric_limits<int>::min());
  for (; j + 16 <= n; j += 16) {
    __m512i ix = _mm512_loadu_si512(index + j);
    __m512 v = _mm512_i32gather_ps(ix, g, 4);
    __m128i yy = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + j)), vyi);
    __m512i flip = _mm512_and_si512(_mm512_cvtepi8_epi32(yy), sign);
    _mm512_storeu_ps(out + j, _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v), flip)));
  }
  gather_q_body(g, index + j, y + j, yi, out + j, n - j);
}

// LIBSVM's kernel cache: rows of Q as floats, each holding its first `len` entries, least
// recently used first out, never fewer than two full rows. LIBSVM applies a shrinking swap to
// every cached row at once (a cache miss per row per swap: most of a long solve's time); here
// swaps go to a log that a row replays when it is next used, with the same effect on its
// entries and the same rule for dropping a row the swap cuts. Which rows stay cached changes
// only what is computed again, never a value, so iterations and results are LIBSVM's.
class Cache {
 public:
  Cache(int l, double megabytes) : head_(l + 1), log_limit_(std::max(l, 64)) {
    long long floats = static_cast<long long>(megabytes * (1 << 20)) / 4;
    floats -= static_cast<long long>(l) * 4;
    size_ = std::max<long long>(floats, 2LL * l);
    lru_ = l;  // the sentinel
    head_[lru_].prev = head_[lru_].next = lru_;
  }
  // The row of `index` holding at least `len` entries; *start is where new entries begin.
  float* get(int index, int len, int* start) {
    Head& h = head_[index];
    if (h.len) {
      unlink(index);
      replay(h);
    }
    int more = len - h.len;
    if (more > 0) {
      while (size_ < more) {
        int old = head_[lru_].next;
        unlink(old);
        drop(head_[old]);
      }
      if (len > h.capacity) {
        // Not value-initialised: entries [h.len, len) are written by the caller.
        auto grown = std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(len));
        std::copy_n(h.data.get(), h.len, grown.get());
        h.data = std::move(grown);
        h.capacity = len;
      }
      size_ -= more;
      *start = h.len;
      h.len = len;
    } else {
      *start = len;
    }
    h.replayed = log_.size();
    link(index);
    return h.data.get();
  }
  void swap_index(int i, int j) {
    if (i == j) return;
    if (head_[i].len) unlink(i);
    if (head_[j].len) unlink(j);
    std::swap(head_[i].data, head_[j].data);
    std::swap(head_[i].capacity, head_[j].capacity);
    std::swap(head_[i].len, head_[j].len);
    std::swap(head_[i].replayed, head_[j].replayed);
    if (head_[i].len) link(i);
    if (head_[j].len) link(j);
    log_.push_back({std::min(i, j), std::max(i, j)});
    // A bounded log: replaying every row now and then costs no more than LIBSVM's own walk.
    if (log_.size() >= log_limit_) {
      for (int h = head_[lru_].next; h != lru_;) {
        int next = head_[h].next;
        replay(head_[h]);
        if (!head_[h].len) unlink(h);
        h = next;
      }
      log_.clear();
      for (auto& h : head_) h.replayed = 0;
    }
  }

 private:
  struct Head {
    int prev = -1, next = -1;
    std::unique_ptr<float[]> data;
    int capacity = 0;          // floats allocated at data
    int len = 0;               // floats held
    std::size_t replayed = 0;  // log_[0, replayed) is applied to data
  };
  // The swaps the row has not seen: entries i and j trade places where the row holds both;
  // a row holding i but not j is dropped, as LIBSVM drops it.
  void replay(Head& h) {
    for (std::size_t k = h.replayed; k < log_.size() && h.len; ++k) {
      auto [i, j] = log_[k];
      if (h.len > i) {
        if (h.len > j)
          std::swap(h.data[i], h.data[j]);
        else
          drop(h);
      }
    }
    h.replayed = log_.size();
  }
  void drop(Head& h) {
    size_ += h.len;
    h.data.reset();
    h.capacity = 0;
    h.len = 0;
  }
  void unlink(int h) {
    head_[head_[h].prev].next = head_[h].next;
    head_[head_[h].next].prev = head_[h].prev;
  }
  void link(int h) {
    head_[h].next = lru_;
    head_[h].prev = head_[lru_].prev;
    head_[head_[h].prev].next = h;
    head_[lru_].prev = h;
  }
  std::vector<Head> head_;
  std::vector<std::pair<int, int>> log_;  // swaps (i < j) in the order they happened
  std::size_t log_limit_;
  long long size_;
  int lru_;
};

// Q_ij = y_i y_j K(x_i, x_j) for C-SVC.
class SvcQ {
 public:
  SvcQ(TrainKernel kernel, std::vector<signed char> y, double cache_mb, detail::ParallelFor* pool)
      : k_(std::move(kernel)),
        y_(std::move(y)),
        cache_(static_cast<int>(y_.size()), cache_mb),
        pool_(pool) {
    int l = static_cast<int>(y_.size());
    qd_.resize(l);
    for (int i = 0; i < l; ++i) qd_[i] = k_(i, i);
  }
  const float* get_q(int i, int len) {
    int start;
    float* data = cache_.get(i, len, &start);
    if (start < len && k_.gram) {
      // A lookup in the shared matrix (a row it lacks is computed with this Q's pool): y_i y_j
      // (float)K is (float)K or its negation, exactly.
      const float* g = k_.gram->row(k_.orig[i], pool_);
      // The gathers read the row in the fit's order, at random; asking for it in memory order
      // first lets the hardware stream it (a 5k -b 1 fit: the gathers' share 15 -> 10 %).
      for (std::size_t k = 0; k < k_.gram->size(); k += 64 / sizeof(float))
        _mm_prefetch(reinterpret_cast<const char*>(g + k), _MM_HINT_T0);
      std::size_t n = static_cast<std::size_t>(len - start);
      auto gather = detail::avx512_loops() ? gather_q_avx512
                    : detail::avx2_loops() ? gather_q_avx2
                                           : gather_q;
      gather(g, k_.orig.data() + start, y_.data() + start, y_[i], data + start, n);
    } else if (start < len) {
      auto fill = [&](std::size_t b, std::size_t e) {
        thread_local std::vector<double> buf;
        buf.resize(e - b);
        int jb = start + static_cast<int>(b), je = start + static_cast<int>(e);
        k_.compute_row(i, jb, je, buf.data());
        for (int jj = jb; jj < je; ++jj)
          data[jj] = static_cast<float>(y_[i] * y_[jj] * buf[jj - jb]);
      };
      std::size_t n = static_cast<std::size_t>(len - start);
      if (pool_ && n * (k_.dim + 8) >= 4096)
        pool_->run(n, fill);
      else
        fill(0, n);
    }
    return data;
  }
  const double* qd() const { return qd_.data(); }
  // The shared matrix's side, for G-bar kept per matrix column (Solver::g_bar_): whether there
  // is one, its size, position i's raw row (K, without y) and column.
  bool shared() const { return k_.gram != nullptr; }
  int shared_size() const { return static_cast<int>(k_.gram->size()); }
  const float* shared_row(int i) { return k_.gram->row(k_.orig[i], pool_); }
  int shared_column(int i) const { return k_.orig[i]; }
  void swap_index(int i, int j) {
    cache_.swap_index(i, j);
    k_.swap(i, j);
    std::swap(y_[i], y_[j]);
    std::swap(qd_[i], qd_[j]);
  }

 private:
  TrainKernel k_;
  std::vector<signed char> y_;
  std::vector<double> qd_;
  Cache cache_;
  detail::ParallelFor* pool_;
};

struct SolutionInfo {
  double obj = 0, rho = 0, upper_bound_p = 0, upper_bound_n = 0;
  int iterations = 0;
};

// The solver's row updates: g[k] += q1[k] d1 + q2[k] d2 (the gradient after a step) and
// g[k] += c q[k] (G-bar as an alpha reaches or leaves its bound; a subtraction is the addition
// of -c, exactly). The AVX2 builds are the same loops four lanes wide, unfused: the same bits.
[[gnu::always_inline]] inline void add_two_rows_body(double* g, const float* q1, double d1,
                                                     const float* q2, double d2, int n) {
  for (int k = 0; k < n; ++k) g[k] += q1[k] * d1 + q2[k] * d2;
}
[[gnu::always_inline]] inline void add_row_body(double* g, const float* q, double c, int n) {
  for (int k = 0; k < n; ++k) g[k] += c * q[k];
}
__attribute__((target("avx2"))) void add_two_rows_avx2(double* g, const float* q1, double d1,
                                                       const float* q2, double d2, int n) {
  add_two_rows_body(g, q1, d1, q2, d2, n);
}
__attribute__((target("avx2"))) void add_row_avx2(double* g, const float* q, double c, int n) {
  add_row_body(g, q, c, n);
}
void add_two_rows(double* g, const float* q1, double d1, const float* q2, double d2, int n) {
  if (detail::avx2_loops()) return add_two_rows_avx2(g, q1, d1, q2, d2, n);
  add_two_rows_body(g, q1, d1, q2, d2, n);
}
void add_row(double* g, const float* q, double c, int n) {
  if (detail::avx2_loops()) return add_row_avx2(g, q, c, n);
  add_row_body(g, q, c, n);
}

// LIBSVM's Solver for  min 0.5 a'Qa + p'a  s.t.  y'a = 0, 0 <= a_i <= C_i.
class Solver {
 public:
  Solver(int l, SvcQ& q, std::vector<double> p, std::vector<signed char> y,
         std::vector<double>& alpha, double cp, double cn, double eps, bool shrinking, bool quiet)
      : l_(l),
        q_(q),
        p_(std::move(p)),
        y_(std::move(y)),
        alpha_(alpha),
        cp_(cp),
        cn_(cn),
        eps_(eps),
        shrinking_(shrinking),
        quiet_(quiet) {}

  SolutionInfo solve() {
    qd_ = q_.qd();
    status_.resize(l_);
    up_sign_.resize(l_);
    low_sign_.resize(l_);
    for (int i = 0; i < l_; ++i) update_status(i);
    active_set_.resize(l_);
    std::iota(active_set_.begin(), active_set_.end(), 0);
    active_size_ = l_;
    unshrink_ = false;
    g_.assign(l_, 0);
    shared_bar_ = q_.shared();
    g_bar_.assign(shared_bar_ ? q_.shared_size() : l_, 0);
    for (int i = 0; i < l_; ++i) g_[i] = p_[i];
    for (int i = 0; i < l_; ++i) {
      if (is_lower(i)) continue;
      const float* qi = q_.get_q(i, l_);
      double ai = alpha_[i];
      for (int j = 0; j < l_; ++j) g_[j] += ai * qi[j];
      if (is_upper(i)) add_bar(i, c(i), qi);
    }

    long long max_iter = std::max<long long>(10000000, 100LL * l_);
    long long iter = 0;
    int counter = std::min(l_, 1000) + 1;
    while (iter < max_iter) {
      if (--counter == 0) {
        counter = std::min(l_, 1000);
        if (shrinking_) do_shrinking();
        info(".");
      }
      int i, j;
      if (select_working_set(&i, &j)) {
        reconstruct_gradient();
        active_size_ = l_;
        info("*");
        if (select_working_set(&i, &j))
          break;
        else
          counter = 1;
      }
      ++iter;
      const float* qi = q_.get_q(i, active_size_);
      const float* qj = q_.get_q(j, active_size_);
      double ci = c(i), cj = c(j);
      double old_ai = alpha_[i], old_aj = alpha_[j];
      if (y_[i] != y_[j]) {
        double quad = qd_[i] + qd_[j] + 2 * qi[j];
        if (quad <= 0) quad = kTau;
        double delta = (-g_[i] - g_[j]) / quad;
        double diff = alpha_[i] - alpha_[j];
        alpha_[i] += delta;
        alpha_[j] += delta;
        if (diff > 0) {
          if (alpha_[j] < 0) {
            alpha_[j] = 0;
            alpha_[i] = diff;
          }
        } else {
          if (alpha_[i] < 0) {
            alpha_[i] = 0;
            alpha_[j] = -diff;
          }
        }
        if (diff > ci - cj) {
          if (alpha_[i] > ci) {
            alpha_[i] = ci;
            alpha_[j] = ci - diff;
          }
        } else {
          if (alpha_[j] > cj) {
            alpha_[j] = cj;
            alpha_[i] = cj + diff;
          }
        }
      } else {
        double quad = qd_[i] + qd_[j] - 2 * qi[j];
        if (quad <= 0) quad = kTau;
        double delta = (g_[i] - g_[j]) / quad;
        double sum = alpha_[i] + alpha_[j];
        alpha_[i] -= delta;
        alpha_[j] += delta;
        if (sum > ci) {
          if (alpha_[i] > ci) {
            alpha_[i] = ci;
            alpha_[j] = sum - ci;
          }
        } else {
          if (alpha_[j] < 0) {
            alpha_[j] = 0;
            alpha_[i] = sum;
          }
        }
        if (sum > cj) {
          if (alpha_[j] > cj) {
            alpha_[j] = cj;
            alpha_[i] = sum - cj;
          }
        } else {
          if (alpha_[i] < 0) {
            alpha_[i] = 0;
            alpha_[j] = sum;
          }
        }
      }
      double dai = alpha_[i] - old_ai, daj = alpha_[j] - old_aj;
      add_two_rows(g_.data(), qi, dai, qj, daj, active_size_);

      bool ui = is_upper(i), uj = is_upper(j);
      update_status(i);
      update_status(j);
      if (ui != is_upper(i)) add_bar(i, ui ? -ci : ci, nullptr);
      if (uj != is_upper(j)) add_bar(j, uj ? -cj : cj, nullptr);
    }
    if (iter >= max_iter) {
      if (active_size_ < l_) {
        reconstruct_gradient();
        active_size_ = l_;
        info("*");
      }
      if (!quiet_) std::fprintf(stderr, "\nWARNING: reaching max number of iterations\n");
    }

    SolutionInfo si;
    si.rho = calculate_rho();
    double v = 0;
    for (int i = 0; i < l_; ++i) v += alpha_[i] * (g_[i] + p_[i]);
    si.obj = v / 2;
    std::vector<double> out(l_);
    for (int i = 0; i < l_; ++i) out[active_set_[i]] = alpha_[i];
    alpha_ = out;
    si.upper_bound_p = cp_;
    si.upper_bound_n = cn_;
    si.iterations = static_cast<int>(iter);
    if (!quiet_) progress("\noptimization finished, #iter = %d\n", si.iterations);
    return si;
  }

 private:
  enum Status : unsigned char { kLower, kUpper, kFree };
  double c(int i) const { return y_[i] > 0 ? cp_ : cn_; }
  void update_status(int i) {
    if (alpha_[i] >= c(i))
      status_[i] = kUpper;
    else if (alpha_[i] <= 0)
      status_[i] = kLower;
    else
      status_[i] = kFree;
    constexpr double kOut = std::numeric_limits<double>::quiet_NaN();
    bool pos = y_[i] == +1;
    up_sign_[i] = (pos ? !is_upper(i) : !is_lower(i)) ? -y_[i] : kOut;
    low_sign_[i] = (pos ? !is_lower(i) : !is_upper(i)) ? y_[i] : kOut;
  }
  bool is_upper(int i) const { return status_[i] == kUpper; }
  bool is_lower(int i) const { return status_[i] == kLower; }
  bool is_free(int i) const { return status_[i] == kFree; }
  void info(const char* s) const {
    if (quiet_) return;
    if (progress_buffer) {
      *progress_buffer += s;
    } else {
      std::fputs(s, stdout);
      std::fflush(stdout);
    }
  }

  void swap_index(int i, int j) {
    q_.swap_index(i, j);
    std::swap(y_[i], y_[j]);
    std::swap(g_[i], g_[j]);
    std::swap(status_[i], status_[j]);
    std::swap(alpha_[i], alpha_[j]);
    std::swap(p_[i], p_[j]);
    std::swap(active_set_[i], active_set_[j]);
    if (!shared_bar_) std::swap(g_bar_[i], g_bar_[j]);
    std::swap(up_sign_[i], up_sign_[j]);
    std::swap(low_sign_[i], low_sign_[j]);
  }

  // G-bar += c Q_i (c = +-C_i as alpha_i reaches or leaves its bound), with qi row i of Q or
  // null to fetch it. With the shared matrix G-bar is kept per matrix column, G'[col] = y G-bar,
  // so that the update reads the matrix's raw row in order instead of gathering a full Q row
  // (most of a Q row's entries serve only this): each term y_i y_k C K becomes y_i C K (exact:
  // signs), and y_k (a + b) = y_k a + y_k b in floating point, so bar(k) is LIBSVM's G-bar_k.
  void add_bar(int i, double c, const float* qi) {
    if (shared_bar_) return add_row(g_bar_.data(), q_.shared_row(i), c * y_[i], q_.shared_size());
    add_row(g_bar_.data(), qi ? qi : q_.get_q(i, l_), c, l_);
  }
  double bar(int j) const { return shared_bar_ ? y_[j] * g_bar_[q_.shared_column(j)] : g_bar_[j]; }

  void reconstruct_gradient() {
    if (active_size_ == l_) return;
    int nr_free = 0;
    for (int j = active_size_; j < l_; ++j) g_[j] = bar(j) + p_[j];
    for (int j = 0; j < active_size_; ++j)
      if (is_free(j)) ++nr_free;
    if (2 * nr_free < active_size_) info("\nWARNING: using -h 0 may be faster\n");
    if (static_cast<long long>(nr_free) * l_ > 2LL * active_size_ * (l_ - active_size_)) {
      for (int i = active_size_; i < l_; ++i) {
        const float* qi = q_.get_q(i, active_size_);
        for (int j = 0; j < active_size_; ++j)
          if (is_free(j)) g_[i] += alpha_[j] * qi[j];
      }
    } else {
      for (int i = 0; i < active_size_; ++i) {
        if (!is_free(i)) continue;
        const float* qi = q_.get_q(i, l_);
        double ai = alpha_[i];
        for (int j = active_size_; j < l_; ++j) g_[j] += ai * qi[j];
      }
    }
  }

  // Returns true when already optimal.
  bool select_working_set(int* out_i, int* out_j) {
    if (detail::avx512_loops()) return select_avx512(out_i, out_j);
    return detail::avx2_loops() ? select_avx2(out_i, out_j) : select(out_i, out_j);
  }

  // LIBSVM's WSS3 as LIBSVM writes it.
  bool select(int* out_i, int* out_j) {
    double gmax = -kInf, gmax2 = -kInf;
    int gmax_idx = -1, gmin_idx = -1;
    double obj_diff_min = kInf;
    for (int t = 0; t < active_size_; ++t) {
      if (y_[t] == +1) {
        if (!is_upper(t) && -g_[t] >= gmax) {
          gmax = -g_[t];
          gmax_idx = t;
        }
      } else {
        if (!is_lower(t) && g_[t] >= gmax) {
          gmax = g_[t];
          gmax_idx = t;
        }
      }
    }
    int i = gmax_idx;
    const float* qi = nullptr;
    if (i != -1) qi = q_.get_q(i, active_size_);
    for (int j = 0; j < active_size_; ++j) {
      if (y_[j] == +1) {
        if (!is_lower(j)) {
          double grad_diff = gmax + g_[j];
          if (g_[j] >= gmax2) gmax2 = g_[j];
          if (grad_diff > 0) {
            double quad = qd_[i] + qd_[j] - 2.0 * y_[i] * qi[j];
            double obj_diff =
                quad > 0 ? -(grad_diff * grad_diff) / quad : -(grad_diff * grad_diff) / kTau;
            if (obj_diff <= obj_diff_min) {
              gmin_idx = j;
              obj_diff_min = obj_diff;
            }
          }
        }
      } else {
        if (!is_upper(j)) {
          double grad_diff = gmax - g_[j];
          if (-g_[j] >= gmax2) gmax2 = -g_[j];
          if (grad_diff > 0) {
            double quad = qd_[i] + qd_[j] + 2.0 * y_[i] * qi[j];
            double obj_diff =
                quad > 0 ? -(grad_diff * grad_diff) / quad : -(grad_diff * grad_diff) / kTau;
            if (obj_diff <= obj_diff_min) {
              gmin_idx = j;
              obj_diff_min = obj_diff;
            }
          }
        }
      }
    }
    if (gmax + gmax2 < eps_ || gmin_idx == -1) return true;
    *out_i = gmax_idx;
    *out_j = gmin_idx;
    return false;
  }

  // The same choice without branches, four candidates a step. Per element, with y = +-1:
  // LIBSVM's two branches are one expression (-g for y = +1 and g for y = -1 is -y g, taken
  // as g times up_sign_, NaN outside the set; a - b is a + (-b) exactly), so every value is
  // LIBSVM's. Its scans keep the last of equal extremes (>=, <=); so does each lane, and of the
  // lanes holding the extreme the one with the last index wins: the same index. Where the data
  // make branches unpredictable (most alphas at a bound, in a random order) LIBSVM's loops
  // were a sixth of a fit's time.
  __attribute__((target("avx2"))) bool select_avx2(int* out_i, int* out_j) {
    const int n = active_size_, n4 = n / 4 * 4;
    const signed char* y = y_.data();
    const double* g = g_.data();
    const __m256d zero = _mm256_setzero_pd();
    // i: the last t in I_up with -y_t g_t largest.
    __m256d best = _mm256_set1_pd(-kInf);
    __m256i best_idx = _mm256_set1_epi64x(-1), idx = _mm256_setr_epi64x(0, 1, 2, 3);
    const __m256i four = _mm256_set1_epi64x(4);
    for (int t = 0; t < n4; t += 4, idx = _mm256_add_epi64(idx, four)) {
      __m256d v = _mm256_mul_pd(_mm256_loadu_pd(g + t), _mm256_loadu_pd(up_sign_.data() + t));
      __m256d take = _mm256_cmp_pd(v, best, _CMP_GE_OQ);
      best = _mm256_blendv_pd(best, v, take);
      best_idx = _mm256_castpd_si256(
          _mm256_blendv_pd(_mm256_castsi256_pd(best_idx), _mm256_castsi256_pd(idx), take));
    }
    double gmax = -kInf;
    int i = last_of_extreme(best, best_idx, false);
    if (i != -1) gmax = y[i] == +1 ? -g[i] : g[i];
    select_i_tail(n4, gmax, i);
    // No i: no j either (LIBSVM's second scan then finds no grad_diff > 0): optimal.
    if (i == -1) return true;

    const float* qi = q_.get_q(i, n);
    const __m256d vgmax = _mm256_set1_pd(gmax), qdi = _mm256_set1_pd(qd_[i]),
                  two_yi = _mm256_set1_pd(2.0 * y[i]), tau = _mm256_set1_pd(kTau);
    __m256d gmax2v = _mm256_set1_pd(-kInf), least = _mm256_set1_pd(kInf);
    __m256i least_idx = _mm256_set1_epi64x(-1);
    idx = _mm256_setr_epi64x(0, 1, 2, 3);
    for (int j = 0; j < n4; j += 4, idx = _mm256_add_epi64(idx, four)) {
      __m256d sign = _mm256_loadu_pd(low_sign_.data() + j);
      __m256d yg = _mm256_mul_pd(_mm256_loadu_pd(g + j), sign);  // y_j g_j
      gmax2v = _mm256_blendv_pd(gmax2v, yg, _mm256_cmp_pd(yg, gmax2v, _CMP_GE_OQ));
      __m256d grad_diff = _mm256_add_pd(vgmax, yg);
      __m256d cand = _mm256_cmp_pd(grad_diff, zero, _CMP_GT_OQ);
      if (_mm256_movemask_pd(cand) == 0) continue;
      // qd_i + qd_j - 2 y_i Q_ij for y_j = +1, + for y_j = -1
      __m256d t2 = _mm256_mul_pd(two_yi, _mm256_cvtps_pd(_mm_loadu_ps(qi + j)));
      __m256d quad =
          _mm256_sub_pd(_mm256_add_pd(qdi, _mm256_loadu_pd(qd_ + j)), _mm256_mul_pd(t2, sign));
      __m256d denom = _mm256_blendv_pd(tau, quad, _mm256_cmp_pd(quad, zero, _CMP_GT_OQ));
      __m256d obj = _mm256_div_pd(
          _mm256_xor_pd(_mm256_mul_pd(grad_diff, grad_diff), _mm256_set1_pd(-0.0)), denom);
      __m256d take = _mm256_and_pd(cand, _mm256_cmp_pd(obj, least, _CMP_LE_OQ));
      least = _mm256_blendv_pd(least, obj, take);
      least_idx = _mm256_castpd_si256(
          _mm256_blendv_pd(_mm256_castsi256_pd(least_idx), _mm256_castsi256_pd(idx), take));
    }
    // gmax2 serves only gmax + gmax2 < eps, where the sign of a zero changes nothing.
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, gmax2v);
    double gmax2 = std::max(std::max(lanes[0], lanes[1]), std::max(lanes[2], lanes[3]));
    int j_best = last_of_extreme(least, least_idx, true);
    double obj_min = kInf;
    if (j_best != -1) {
      _mm256_store_pd(lanes, least);
      alignas(32) long long at[4];
      _mm256_store_si256(reinterpret_cast<__m256i*>(at), least_idx);
      for (int k = 0; k < 4; ++k)
        if (at[k] == j_best) obj_min = lanes[k];
    }
    select_j_tail(n4, i, qi, gmax, gmax2, j_best, obj_min);
    if (gmax + gmax2 < eps_ || j_best == -1) return true;
    *out_i = i;
    *out_j = j_best;
    return false;
  }

  // select_avx2 eight candidates a step in AVX-512 registers: the same values, the same
  // comparisons per lane, and the same choice among lanes (the last index holding the extreme).
  __attribute__((target("avx512f"))) bool select_avx512(int* out_i, int* out_j) {
    const int n = active_size_, n8 = n / 8 * 8;
    const signed char* y = y_.data();
    const double* g = g_.data();
    const __m512d zero = _mm512_setzero_pd();
    const __m512i eight = _mm512_set1_epi64(8), negative_zero = _mm512_set1_epi64(1LL << 63);
    __m512d best = _mm512_set1_pd(-kInf);
    __m512i best_idx = _mm512_set1_epi64(-1), idx = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    for (int t = 0; t < n8; t += 8, idx = _mm512_add_epi64(idx, eight)) {
      __m512d v = _mm512_mul_pd(_mm512_loadu_pd(g + t), _mm512_loadu_pd(up_sign_.data() + t));
      __mmask8 take = _mm512_cmp_pd_mask(v, best, _CMP_GE_OQ);
      best = _mm512_mask_blend_pd(take, best, v);
      best_idx = _mm512_mask_blend_epi64(take, best_idx, idx);
    }
    alignas(64) double lanes[8];
    alignas(64) long long at[8];
    _mm512_store_pd(lanes, best);
    _mm512_store_si512(at, best_idx);
    double gmax = -kInf;
    int i = last_of_lanes(lanes, at, 8, false);
    if (i != -1) gmax = y[i] == +1 ? -g[i] : g[i];
    select_i_tail(n8, gmax, i);
    if (i == -1) return true;

    const float* qi = q_.get_q(i, n);
    const __m512d vgmax = _mm512_set1_pd(gmax), qdi = _mm512_set1_pd(qd_[i]),
                  two_yi = _mm512_set1_pd(2.0 * y[i]), tau = _mm512_set1_pd(kTau);
    __m512d gmax2v = _mm512_set1_pd(-kInf), least = _mm512_set1_pd(kInf);
    __m512i least_idx = _mm512_set1_epi64(-1);
    idx = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    for (int j = 0; j < n8; j += 8, idx = _mm512_add_epi64(idx, eight)) {
      __m512d sign = _mm512_loadu_pd(low_sign_.data() + j);
      __m512d yg = _mm512_mul_pd(_mm512_loadu_pd(g + j), sign);  // y_j g_j
      gmax2v = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(yg, gmax2v, _CMP_GE_OQ), gmax2v, yg);
      __m512d grad_diff = _mm512_add_pd(vgmax, yg);
      __mmask8 cand = _mm512_cmp_pd_mask(grad_diff, zero, _CMP_GT_OQ);
      if (cand == 0) continue;
      __m512d t2 = _mm512_mul_pd(two_yi, _mm512_cvtps_pd(_mm256_loadu_ps(qi + j)));
      __m512d quad =
          _mm512_sub_pd(_mm512_add_pd(qdi, _mm512_loadu_pd(qd_ + j)), _mm512_mul_pd(t2, sign));
      __m512d denom = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(quad, zero, _CMP_GT_OQ), tau, quad);
      __m512d neg = _mm512_castsi512_pd(_mm512_xor_si512(
          _mm512_castpd_si512(_mm512_mul_pd(grad_diff, grad_diff)), negative_zero));
      __m512d obj = _mm512_div_pd(neg, denom);
      __mmask8 take = cand & _mm512_cmp_pd_mask(obj, least, _CMP_LE_OQ);
      least = _mm512_mask_blend_pd(take, least, obj);
      least_idx = _mm512_mask_blend_epi64(take, least_idx, idx);
    }
    _mm512_store_pd(lanes, gmax2v);
    double gmax2 = lanes[0];
    for (int k = 1; k < 8; ++k) gmax2 = std::max(gmax2, lanes[k]);
    _mm512_store_pd(lanes, least);
    _mm512_store_si512(at, least_idx);
    int j_best = last_of_lanes(lanes, at, 8, true);
    double obj_min = kInf;
    for (int k = 0; k < 8; ++k)
      if (j_best != -1 && at[k] == j_best) obj_min = lanes[k];
    select_j_tail(n8, i, qi, gmax, gmax2, j_best, obj_min);
    if (gmax + gmax2 < eps_ || j_best == -1) return true;
    *out_i = i;
    *out_j = j_best;
    return false;
  }

  // The vector scans' remainders, element by element as select() takes them: i's scan from
  // `from` on (the largest -y_t g_t in I_up, the last of equals) ...
  void select_i_tail(int from, double& gmax, int& i) const {
    const signed char* y = y_.data();
    const double* g = g_.data();
    for (int t = from; t < active_size_; ++t) {
      double v = y[t] == +1 ? -g[t] : g[t];
      if ((y[t] == +1 ? !is_upper(t) : !is_lower(t)) && v >= gmax) {
        gmax = v;
        i = t;
      }
    }
  }
  // ... and j's for that i (the least objective in I_low, the last of equals).
  void select_j_tail(int from, int i, const float* qi, double gmax, double& gmax2, int& j_best,
                     double& obj_min) const {
    const signed char* y = y_.data();
    const double* g = g_.data();
    for (int j = from; j < active_size_; ++j) {
      if (!(y[j] == +1 ? !is_lower(j) : !is_upper(j))) continue;
      double yg = y[j] == +1 ? g[j] : -g[j];
      if (yg >= gmax2) gmax2 = yg;
      double grad_diff = gmax + yg;
      if (grad_diff > 0) {
        double quad = y[j] == +1 ? qd_[i] + qd_[j] - 2.0 * y[i] * qi[j]
                                 : qd_[i] + qd_[j] + 2.0 * y[i] * qi[j];
        double obj_diff =
            quad > 0 ? -(grad_diff * grad_diff) / quad : -(grad_diff * grad_diff) / kTau;
        if (obj_diff <= obj_min) {
          j_best = j;
          obj_min = obj_diff;
        }
      }
    }
  }

  // last_of_extreme over `lanes` lanes held in arrays (index -1: the lane took none).
  static int last_of_lanes(const double* v, const long long* at, int lanes, bool least) {
    int found = -1;
    double ext = 0;
    for (int k = 0; k < lanes; ++k) {
      if (at[k] < 0) continue;
      if (found == -1 || (least ? v[k] < ext : v[k] > ext) || (v[k] == ext && at[k] > found)) {
        found = static_cast<int>(at[k]);
        ext = v[k];
      }
    }
    return found;
  }

  // Of four lanes' running extremes (each the last of its lane's equal ones) the index that a
  // sequential scan keeps: the largest index among the lanes holding the overall extreme; -1
  // where no lane took any.
  __attribute__((target("avx2"))) static int last_of_extreme(__m256d value, __m256i index,
                                                             bool least) {
    alignas(32) double v[4];
    alignas(32) long long at[4];
    _mm256_store_pd(v, value);
    _mm256_store_si256(reinterpret_cast<__m256i*>(at), index);
    return last_of_lanes(v, at, 4, least);
  }

  bool be_shrunk(int i, double gmax1, double gmax2) const {
    if (is_upper(i)) {
      if (y_[i] == +1) return -g_[i] > gmax1;
      return -g_[i] > gmax2;
    }
    if (is_lower(i)) {
      if (y_[i] == +1) return g_[i] > gmax2;
      return g_[i] > gmax1;
    }
    return false;
  }

  void do_shrinking() {
    double gmax1 = -kInf, gmax2 = -kInf;
    for (int i = 0; i < active_size_; ++i) {
      if (y_[i] == +1) {
        if (!is_upper(i) && -g_[i] >= gmax1) gmax1 = -g_[i];
        if (!is_lower(i) && g_[i] >= gmax2) gmax2 = g_[i];
      } else {
        if (!is_upper(i) && -g_[i] >= gmax2) gmax2 = -g_[i];
        if (!is_lower(i) && g_[i] >= gmax1) gmax1 = g_[i];
      }
    }
    if (!unshrink_ && gmax1 + gmax2 <= eps_ * 10) {
      unshrink_ = true;
      reconstruct_gradient();
      active_size_ = l_;
      info("*");
    }
    for (int i = 0; i < active_size_; ++i) {
      if (be_shrunk(i, gmax1, gmax2)) {
        --active_size_;
        while (active_size_ > i) {
          if (!be_shrunk(active_size_, gmax1, gmax2)) {
            swap_index(i, active_size_);
            break;
          }
          --active_size_;
        }
      }
    }
  }

  double calculate_rho() const {
    int nr_free = 0;
    double ub = kInf, lb = -kInf, sum_free = 0;
    for (int i = 0; i < active_size_; ++i) {
      double yg = y_[i] * g_[i];
      if (is_upper(i)) {
        if (y_[i] == -1)
          ub = std::min(ub, yg);
        else
          lb = std::max(lb, yg);
      } else if (is_lower(i)) {
        if (y_[i] == +1)
          ub = std::min(ub, yg);
        else
          lb = std::max(lb, yg);
      } else {
        ++nr_free;
        sum_free += yg;
      }
    }
    return nr_free > 0 ? sum_free / nr_free : (ub + lb) / 2;
  }

  int l_;
  SvcQ& q_;
  std::vector<double> p_;
  std::vector<signed char> y_;
  std::vector<double>& alpha_;
  double cp_, cn_, eps_;
  bool shrinking_, quiet_;
  const double* qd_ = nullptr;
  std::vector<Status> status_;
  // Per position, for the vector selection: -y where the element is in I_up (LIBSVM's first
  // scan: not (+1, upper) nor (-1, lower)), y where it is in I_low (its second: not (+1, lower)
  // nor (-1, upper)), NaN where it is not, so that g times it is LIBSVM's value (-y g, y g:
  // exact) or a NaN that no comparison takes.
  std::vector<double> up_sign_, low_sign_;
  std::vector<int> active_set_;
  int active_size_ = 0;
  bool unshrink_ = false;
  std::vector<double> g_, g_bar_;  // g_bar_ per position, or per shared matrix column
  bool shared_bar_ = false;
};

struct Decision {
  std::vector<double> alpha;  // signed: y_i * alpha_i
  double rho = 0;
  double obj = 0;
  int iterations = 0;
};

// One binary C-SVC on the rows `x` (class +1 first, then -1).
Decision train_one(const std::vector<const double*>& x, const std::vector<signed char>& y,
                   std::size_t dim, const SvmParams& params, double cp, double cn,
                   detail::ParallelFor* pool, SharedGram* gram, const std::vector<int>& orig) {
  int l = static_cast<int>(x.size());
  TrainKernel k{&params, dim, x, std::vector<double>(l), {}, 0, gram, orig};
  for (int i = 0; i < l; ++i) k.xsq[i] = dot(x[i], x[i], dim);
  if (!gram) k.build();
  // With the shared matrix a fit's cache only saves gathers from it, and a row is mostly wanted
  // in the iteration that picks it: a cache that stays in the CPU's caches serves better than
  // -m's, whose fresh memory each fit faults in (a 5k -b 1 fit: page faults 49,600 -> 3,100,
  // CPU time 0.56 -> 0.46 s with the gathers below). Which rows are cached never changes a value.
  constexpr double kGramFitCacheMb = 1;
  SvcQ q(std::move(k), y, gram ? std::min(params.cache_mb, kGramFitCacheMb) : params.cache_mb,
         pool);
  std::vector<double> alpha(l, 0.0);
  Solver solver(l, q, std::vector<double>(l, -1.0), y, alpha, cp, cn, params.eps, params.shrinking,
                params.quiet);
  SolutionInfo si = solver.solve();
  Decision d;
  if (!params.quiet) {
    double sum_alpha = 0;
    for (double a : alpha) sum_alpha += a;
    if (cp == cn) progress("nu = %f\n", sum_alpha / (cp * l));
  }
  for (int i = 0; i < l; ++i) alpha[i] *= y[i];
  if (!params.quiet) {
    progress("obj = %f, rho = %f\n", si.obj, si.rho);
    int nsv = 0, nbsv = 0;
    for (int i = 0; i < l; ++i) {
      if (std::fabs(alpha[i]) > 0) {
        ++nsv;
        if (y[i] > 0) {
          if (std::fabs(alpha[i]) >= si.upper_bound_p) ++nbsv;
        } else {
          if (std::fabs(alpha[i]) >= si.upper_bound_n) ++nbsv;
        }
      }
    }
    progress("nSV = %d, nBSV = %d\n", nsv, nbsv);
  }
  d.alpha = std::move(alpha);
  d.rho = si.rho;
  d.obj = si.obj;
  d.iterations = si.iterations;
  return d;
}

// Platt's sigmoid fit with Lin, Lin and Weng's Newton method.
void sigmoid_train(const std::vector<double>& dec, const std::vector<double>& labels, double* a,
                   double* b, bool quiet) {
  double prior1 = 0, prior0 = 0;
  std::size_t l = dec.size();
  for (std::size_t i = 0; i < l; ++i) (labels[i] > 0 ? prior1 : prior0) += 1;
  const int max_iter = 100;
  const double min_step = 1e-10, sigma = 1e-12, eps = 1e-5;
  double hi = (prior1 + 1.0) / (prior1 + 2.0), lo = 1 / (prior0 + 2.0);
  std::vector<double> t(l);
  for (std::size_t i = 0; i < l; ++i) t[i] = labels[i] > 0 ? hi : lo;
  double A = 0.0, B = std::log((prior0 + 1.0) / (prior1 + 1.0)), fval = 0.0;
  for (std::size_t i = 0; i < l; ++i) {
    double f = dec[i] * A + B;
    fval +=
        f >= 0 ? t[i] * f + std::log(1 + std::exp(-f)) : (t[i] - 1) * f + std::log(1 + std::exp(f));
  }
  int iter;
  for (iter = 0; iter < max_iter; ++iter) {
    double h11 = sigma, h22 = sigma, h21 = 0.0, g1 = 0.0, g2 = 0.0;
    for (std::size_t i = 0; i < l; ++i) {
      double f = dec[i] * A + B, p, q;
      if (f >= 0) {
        p = std::exp(-f) / (1.0 + std::exp(-f));
        q = 1.0 / (1.0 + std::exp(-f));
      } else {
        p = 1.0 / (1.0 + std::exp(f));
        q = std::exp(f) / (1.0 + std::exp(f));
      }
      double d2 = p * q;
      h11 += dec[i] * dec[i] * d2;
      h22 += d2;
      h21 += dec[i] * d2;
      double d1 = t[i] - p;
      g1 += dec[i] * d1;
      g2 += d1;
    }
    if (std::fabs(g1) < eps && std::fabs(g2) < eps) break;
    double det = h11 * h22 - h21 * h21;
    double dA = -(h22 * g1 - h21 * g2) / det;
    double dB = -(-h21 * g1 + h11 * g2) / det;
    double gd = g1 * dA + g2 * dB;
    double step = 1;
    while (step >= min_step) {
      double na = A + step * dA, nb = B + step * dB, nf = 0.0;
      for (std::size_t i = 0; i < l; ++i) {
        double f = dec[i] * na + nb;
        nf += f >= 0 ? t[i] * f + std::log(1 + std::exp(-f))
                     : (t[i] - 1) * f + std::log(1 + std::exp(f));
      }
      if (nf < fval + 0.0001 * step * gd) {
        A = na;
        B = nb;
        fval = nf;
        break;
      }
      step = step / 2.0;
    }
    if (step < min_step) {
      if (!quiet) progress("Line search fails in two-class probability estimates\n");
      break;
    }
  }
  if (iter >= max_iter && !quiet)
    progress("Reaching maximal iterations in two-class probability estimates\n");
  *a = A;
  *b = B;
}

double sigmoid_predict(double dec, double a, double b) {
  double f = dec * a + b;
  return f >= 0 ? std::exp(-f) / (1.0 + std::exp(-f)) : 1.0 / (1 + std::exp(f));
}

void multiclass_probability(int k, const std::vector<std::vector<double>>& r,
                            std::vector<double>& p) {
  int max_iter = std::max(100, k);
  std::vector<std::vector<double>> Q(k, std::vector<double>(k));
  std::vector<double> qp(k);
  double eps = 0.005 / k;
  for (int t = 0; t < k; ++t) {
    p[t] = 1.0 / k;
    Q[t][t] = 0;
    for (int j = 0; j < t; ++j) {
      Q[t][t] += r[j][t] * r[j][t];
      Q[t][j] = Q[j][t];
    }
    for (int j = t + 1; j < k; ++j) {
      Q[t][t] += r[j][t] * r[j][t];
      Q[t][j] = -r[j][t] * r[t][j];
    }
  }
  for (int iter = 0; iter < max_iter; ++iter) {
    double pqp = 0;
    for (int t = 0; t < k; ++t) {
      qp[t] = 0;
      for (int j = 0; j < k; ++j) qp[t] += Q[t][j] * p[j];
      pqp += p[t] * qp[t];
    }
    double max_error = 0;
    for (int t = 0; t < k; ++t) max_error = std::max(max_error, std::fabs(qp[t] - pqp));
    if (max_error < eps) break;
    for (int t = 0; t < k; ++t) {
      double diff = (-qp[t] + pqp) / Q[t][t];
      p[t] += diff;
      pqp = (pqp + diff * (diff * Q[t][t] + 2 * qp[t])) / (1 + diff) / (1 + diff);
      for (int j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * Q[t][j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
}

void check_params(const SvmParams& p) {
  auto check_spec = [](const KernelSpec& s, const char* what) {
    if (uses_gamma(s.type) && s.gamma < 0) fail(what, "gamma < 0");
    if (s.type == Kernel::poly && s.degree < 0) fail(what, "degree of polynomial kernel < 0");
    if (s.type == Kernel::mixed || s.type == Kernel::precomputed)
      fail(what, std::string("a mixed kernel's components are built-in kernels, not ") +
                     kernel_name(s.type));
  };
  if (p.kernel.type == Kernel::mixed) {
    check_spec(p.first, "mixed kernel, first component");
    check_spec(p.second, "mixed kernel, second component");
    if (!(p.mix >= 0 && p.mix <= 1)) fail("mixed kernel", "the weight a must be in [0, 1]");
  } else if (p.kernel.type != Kernel::precomputed) {
    check_spec(p.kernel, "kernel");
  }
  if (!(p.C > 0)) fail("svm", "C <= 0");
  if (!(p.eps > 0)) fail("svm", "eps <= 0");
  if (!(p.cache_mb > 0)) fail("svm", "cache_size <= 0");
  if (p.threads < 1) fail("svm", "threads < 1");
}

struct Grouped {
  int nr_class = 0;
  std::vector<int> label, start, count, perm;
};

Grouped group_classes(const Dataset& data) {
  Grouped g;
  std::size_t l = data.rows();
  std::vector<int> data_label(l);
  for (std::size_t i = 0; i < l; ++i) {
    int this_label = static_cast<int>(data.y[i]);
    int j;
    for (j = 0; j < g.nr_class; ++j)
      if (this_label == g.label[j]) {
        ++g.count[j];
        break;
      }
    data_label[i] = j;
    if (j == g.nr_class) {
      g.label.push_back(this_label);
      g.count.push_back(1);
      ++g.nr_class;
    }
  }
  // LIBSVM: for two classes labelled -1 and +1 with -1 first, +1 becomes the first class.
  if (g.nr_class == 2 && g.label[0] == -1 && g.label[1] == 1) {
    std::swap(g.label[0], g.label[1]);
    std::swap(g.count[0], g.count[1]);
    for (auto& d : data_label) d = d == 0 ? 1 : 0;
  }
  g.start.assign(g.nr_class, 0);
  for (int i = 1; i < g.nr_class; ++i) g.start[i] = g.start[i - 1] + g.count[i - 1];
  g.perm.resize(l);
  std::vector<int> pos = g.start;
  for (std::size_t i = 0; i < l; ++i) g.perm[pos[data_label[i]]++] = static_cast<int>(i);
  return g;
}

SvmModel train_impl(const Dataset& data, const SvmParams& given, GlibcRand& rng,
                    detail::ParallelFor* pool, SharedGram* gram, const std::vector<int>& origin);
std::vector<double> feature_major(const Dataset& d);
void first_decision_values(const SvmModel& m, const std::vector<double>& svt, const Dataset& data,
                           const int* rows, std::size_t n, double* out);

// LIBSVM's svm_binary_svc_probability: 5-fold decision values, then the sigmoid fit; and the
// pair's own fit (`fit`, which LIBSVM runs next). The folds' order is the one draw from `rng`;
// after it the six fits are independent, so with a pool they run at once, their text in order,
// and each fold's decision values are split into pieces that any thread with no fit left to
// start takes (so that the last fits do not leave a thread idle). Every value is the one a
// single thread computes: a row's decision value does not depend on who computes it.
Decision binary_probability(const Dataset& sub, const SvmParams& params, double cp, double cn,
                            GlibcRand& rng, detail::ParallelFor* pool, SharedGram* gram,
                            const std::vector<int>& origin, double* a, double* b,
                            const std::function<Decision(detail::ParallelFor*)>& fit) {
  const int nr_fold = 5;
  int l = static_cast<int>(sub.rows());
  std::vector<int> perm(l);
  std::iota(perm.begin(), perm.end(), 0);
  for (int i = 0; i < l; ++i) {
    int j = i + rng() % (l - i);
    std::swap(perm[i], perm[j]);
  }
  std::vector<double> dec(l, 0.0);
  // A fold's model and what its decision values need; held-out rows perm[begin, end).
  struct Trained {
    SvmModel m;
    std::vector<double> svt;
    int begin = 0, end = 0;
  };
  // Fold f writes dec only at its own rows; a fold's train_impl draws nothing from rng (its
  // params have no probability), so folds may share it. Null where the fold's training part
  // has one class (its decision values are then written here).
  auto train_fold = [&](int f) -> std::shared_ptr<Trained> {
    int begin = f * l / nr_fold, end = (f + 1) * l / nr_fold;
    std::vector<std::size_t> rows;
    for (int j = 0; j < begin; ++j) rows.push_back(perm[j]);
    for (int j = end; j < l; ++j) rows.push_back(perm[j]);
    Dataset part = sub.subset(rows);
    std::vector<int> part_origin;
    if (gram)
      for (auto r : rows) part_origin.push_back(origin[r]);
    int p_count = 0, n_count = 0;
    for (double y : part.y) (y > 0 ? p_count : n_count)++;
    if (p_count == 0 && n_count == 0) {
      for (int j = begin; j < end; ++j) dec[perm[j]] = 0;
    } else if (p_count > 0 && n_count == 0) {
      for (int j = begin; j < end; ++j) dec[perm[j]] = 1;
    } else if (p_count == 0 && n_count > 0) {
      for (int j = begin; j < end; ++j) dec[perm[j]] = -1;
    } else {
      SvmParams sp = params;
      sp.probability = false;
      sp.balanced = false;
      sp.C = 1.0;
      sp.weights = {{1, cp}, {-1, cn}};
      auto t = std::make_shared<Trained>();
      t->m = train_impl(part, sp, rng, nullptr, gram, part_origin);
      t->svt = feature_major(t->m.sv);
      t->begin = begin;
      t->end = end;
      return t;
    }
    return nullptr;
  };
  // Held-out rows perm[t.begin + i] for i in [b, e).
  auto decide_fold = [&](const Trained& t, std::size_t b, std::size_t e) {
    std::vector<double> dv(e - b);
    first_decision_values(t.m, t.svt, sub, perm.data() + t.begin + b, e - b, dv.data());
    for (std::size_t i = b; i < e; ++i) dec[perm[t.begin + i]] = dv[i - b] * t.m.label[0];
  };
  if (!pool) {
    for (int f = 0; f < nr_fold; ++f)
      if (auto t = train_fold(f)) decide_fold(*t, 0, static_cast<std::size_t>(t->end - t->begin));
    sigmoid_train(dec, sub.y, a, b, params.quiet);
    return fit(nullptr);
  }
  // Task 0 is the pair's fit (the largest, first so that no thread is left with it at the
  // end), tasks 1-5 the folds' fits; its text comes after the folds' and the sigmoid's, as in
  // LIBSVM. A piece of decision values is 64 rows.
  constexpr std::size_t kPiece = 64;
  const int tasks = nr_fold + 1;
  Decision d;
  std::vector<std::string> text(tasks);
  std::vector<std::exception_ptr> error(tasks + 1);
  std::atomic<int> next{0};
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::pair<std::shared_ptr<Trained>, std::size_t>> pieces;  // fold, first row
  int running = tasks;                                                  // fits not finished
  pool->run(static_cast<std::size_t>(pool->threads()), [&](std::size_t, std::size_t) {
    for (int t; (t = next++) < tasks;) {
      progress_buffer = &text[t];
      try {
        if (t == 0) {
          d = fit(nullptr);
        } else if (auto trained = train_fold(t - 1)) {
          std::lock_guard lock(mutex);
          for (std::size_t r = 0; r < static_cast<std::size_t>(trained->end - trained->begin);
               r += kPiece)
            pieces.emplace_back(trained, r);
        }
      } catch (...) {
        error[t] = std::current_exception();
      }
      progress_buffer = nullptr;
      std::lock_guard lock(mutex);
      --running;
      ready.notify_all();
    }
    for (;;) {
      std::unique_lock lock(mutex);
      ready.wait(lock, [&] { return !pieces.empty() || running == 0; });
      if (pieces.empty()) return;
      auto [trained, r] = pieces.front();
      pieces.pop_front();
      lock.unlock();
      try {
        auto n = static_cast<std::size_t>(trained->end - trained->begin);
        decide_fold(*trained, r, std::min(r + kPiece, n));
      } catch (...) {
        std::lock_guard again(mutex);
        if (!error[tasks]) error[tasks] = std::current_exception();
      }
    }
  });
  for (auto& e : error)
    if (e) std::rethrow_exception(e);
  for (int f = 1; f <= nr_fold; ++f) progress("%s", text[f].c_str());
  sigmoid_train(dec, sub.y, a, b, params.quiet);
  progress("%s", text[0].c_str());
  std::fflush(stdout);
  return d;
}

SvmParams resolved(const SvmParams& given, const Dataset& data) {
  SvmParams params = given;
  auto resolve = [&](KernelSpec& s) {
    if (uses_gamma(s.type) && s.gamma == 0 && data.max_index > 0) s.gamma = 1.0 / data.max_index;
  };
  resolve(params.kernel);
  if (params.kernel.type == Kernel::mixed) {
    resolve(params.first);
    resolve(params.second);
  }
  return params;
}

SvmModel train_impl(const Dataset& data, const SvmParams& given, GlibcRand& rng,
                    detail::ParallelFor* pool, SharedGram* gram, const std::vector<int>& origin) {
  check_params(given);
  if (data.rows() == 0) fail("svm", "no training data");
  SvmParams params = resolved(given, data);
  if (params.kernel.type == Kernel::precomputed) {
    for (std::size_t i = 0; i < data.rows(); ++i) {
      double serial = data.row(i)[0];
      if (!(serial >= 1 && serial <= static_cast<double>(data.max_index)))
        fail("precomputed kernel",
             "row " + std::to_string(i + 1) + ": sample serial number (index 0) out of range");
    }
  }
  for (double y : data.y)
    if (y != std::floor(y) || std::fabs(y) > 2e9)
      fail("svm", "class label " + std::to_string(y) + " is not an integer");

  Grouped g = group_classes(data);
  if (g.nr_class == 1 && !params.quiet)
    progress("WARNING: training data in only one class. See README for details.\n");
  int nr_class = g.nr_class;
  std::size_t l = data.rows(), dim = data.cols();
  std::vector<const double*> x(l);
  for (std::size_t i = 0; i < l; ++i) x[i] = data.row(g.perm[i]);

  std::vector<double> weighted_c(nr_class, params.C);
  if (params.balanced)
    for (int c = 0; c < nr_class; ++c)
      weighted_c[c] *= static_cast<double>(l) / (static_cast<double>(nr_class) * g.count[c]);
  for (auto [wl, w] : params.weights) {
    int j = 0;
    while (j < nr_class && wl != g.label[j]) ++j;
    if (j == nr_class) {
      if (!params.quiet)
        std::fprintf(stderr, "WARNING: class label %d specified in weight is not found\n", wl);
    } else {
      weighted_c[j] *= w;
    }
  }

  std::vector<bool> nonzero(l, false);
  int pairs = nr_class * (nr_class - 1) / 2;
  std::vector<Decision> f(pairs);
  SvmModel model;
  model.params = params;
  if (params.probability) {
    model.prob_a.resize(pairs);
    model.prob_b.resize(pairs);
  }
  int p = 0;
  for (int i = 0; i < nr_class; ++i)
    for (int j = i + 1; j < nr_class; ++j, ++p) {
      int si = g.start[i], sj = g.start[j], ci = g.count[i], cj = g.count[j];
      std::vector<const double*> sx;
      std::vector<signed char> sy;
      for (int k = 0; k < ci; ++k) {
        sx.push_back(x[si + k]);
        sy.push_back(+1);
      }
      for (int k = 0; k < cj; ++k) {
        sx.push_back(x[sj + k]);
        sy.push_back(-1);
      }
      Dataset sub;
      std::vector<int> sub_origin;
      if (params.probability) {
        std::vector<std::size_t> rows;
        for (int k = 0; k < ci; ++k) rows.push_back(g.perm[si + k]);
        for (int k = 0; k < cj; ++k) rows.push_back(g.perm[sj + k]);
        sub = data.subset(rows);
        for (std::size_t k = 0; k < sub.rows(); ++k) sub.y[k] = k < std::size_t(ci) ? 1 : -1;
        if (gram)
          for (auto r : rows) sub_origin.push_back(origin[r]);
      }
      std::vector<int> orig;
      if (gram) {
        for (int k = 0; k < ci; ++k) orig.push_back(origin[g.perm[si + k]]);
        for (int k = 0; k < cj; ++k) orig.push_back(origin[g.perm[sj + k]]);
      }
      auto fit = [&](detail::ParallelFor* fit_pool) {
        return train_one(sx, sy, dim, params, weighted_c[i], weighted_c[j], fit_pool, gram, orig);
      };
      f[p] = params.probability
                 ? binary_probability(sub, params, weighted_c[i], weighted_c[j], rng, pool, gram,
                                      sub_origin, &model.prob_a[p], &model.prob_b[p], fit)
                 : fit(pool);
      for (int k = 0; k < ci; ++k)
        if (!nonzero[si + k] && std::fabs(f[p].alpha[k]) > 0) nonzero[si + k] = true;
      for (int k = 0; k < cj; ++k)
        if (!nonzero[sj + k] && std::fabs(f[p].alpha[ci + k]) > 0) nonzero[sj + k] = true;
    }

  model.nr_class = nr_class;
  model.label = g.label;
  for (auto& d : f) {
    model.rho.push_back(d.rho);
    model.obj.push_back(d.obj);
    model.iterations.push_back(d.iterations);
  }
  model.nr_sv.assign(nr_class, 0);
  std::vector<std::size_t> sv_rows;
  for (int c = 0; c < nr_class; ++c)
    for (int k = 0; k < g.count[c]; ++k)
      if (nonzero[g.start[c] + k]) {
        ++model.nr_sv[c];
        sv_rows.push_back(g.perm[g.start[c] + k]);
        model.sv_indices.push_back(g.perm[g.start[c] + k] + 1);
      }
  if (!params.quiet) progress("Total nSV = %zu\n", sv_rows.size());
  model.sv = data.subset(sv_rows);
  std::vector<int> nz_start(nr_class, 0);
  for (int c = 1; c < nr_class; ++c) nz_start[c] = nz_start[c - 1] + model.nr_sv[c - 1];
  model.sv_coef.assign(std::max(nr_class - 1, 0), std::vector<double>(sv_rows.size(), 0.0));
  p = 0;
  for (int i = 0; i < nr_class; ++i)
    for (int j = i + 1; j < nr_class; ++j, ++p) {
      int si = g.start[i], sj = g.start[j], ci = g.count[i], cj = g.count[j];
      int q = nz_start[i];
      for (int k = 0; k < ci; ++k)
        if (nonzero[si + k]) model.sv_coef[j - 1][q++] = f[p].alpha[k];
      q = nz_start[j];
      for (int k = 0; k < cj; ++k)
        if (nonzero[sj + k]) model.sv_coef[i][q++] = f[p].alpha[ci + k];
    }
  return model;
}

// K(x, sv) in LIBSVM's prediction form (RBF from the squared distance).
double predict_kernel(const SvmParams& p, const double* x, std::size_t xdim, const double* sv,
                      std::size_t svdim) {
  if (p.kernel.type == Kernel::precomputed) {
    auto col = static_cast<std::size_t>(sv[0]);
    return col < xdim ? x[col] : 0.0;
  }
  std::size_t n = std::min(xdim, svdim);
  bool need_dist = needs_distance(p);
  double d = 0, dist = 0;
  if (need_dist) {
    for (std::size_t k = 0; k < n; ++k) {
      double t = x[k] - sv[k];
      dist += t * t;
      d += x[k] * sv[k];
    }
    for (std::size_t k = n; k < xdim; ++k) dist += x[k] * x[k];
    for (std::size_t k = n; k < svdim; ++k) dist += sv[k] * sv[k];
  } else {
    d = dot(x, sv, n);
  }
  if (p.kernel.type == Kernel::mixed) {
    mixed_row(p, &d, &dist, 1, &d);
    return d;
  }
  return component_dist(p.kernel, d, dist);
}

}  // namespace

const char* kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::linear:
      return "linear";
    case Kernel::poly:
      return "polynomial";
    case Kernel::rbf:
      return "rbf";
    case Kernel::sigmoid:
      return "sigmoid";
    case Kernel::precomputed:
      return "precomputed";
    case Kernel::mixed:
      return "mixed";
  }
  return "?";
}

Kernel kernel_from_name(const std::string& name) {
  for (int k = 0; k <= 5; ++k)
    if (name == kernel_name(static_cast<Kernel>(k))) return static_cast<Kernel>(k);
  fail("kernel", "unknown kernel type '" + name + "'");
}

GlibcRand::GlibcRand(unsigned seed) {
  std::int32_t r[34];
  r[0] = static_cast<std::int32_t>(seed == 0 ? 1 : seed);
  for (int i = 1; i < 31; ++i) {
    long long v = (16807LL * r[i - 1]) % 2147483647LL;
    if (v < 0) v += 2147483647LL;
    r[i] = static_cast<std::int32_t>(v);
  }
  for (int i = 31; i < 34; ++i) r[i] = r[i - 31];
  for (int i = 0; i < 34; ++i) ring_[i] = static_cast<std::uint32_t>(r[i]);
  pos_ = 0;  // ring_[pos_] is r[i-34] for the next i = 34
  for (int i = 34; i < 344; ++i) (*this)();
}

int GlibcRand::operator()() {
  // r[i] = r[i-31] + r[i-3]; slot pos_ holds r[i-34], (pos_+3) holds r[i-31], (pos_+31) r[i-3].
  std::uint32_t v = ring_[(pos_ + 3) % 34] + ring_[(pos_ + 31) % 34];
  ring_[pos_] = v;
  pos_ = (pos_ + 1) % 34;
  return static_cast<int>(v >> 1);
}

SvmModel train(const Dataset& data, const SvmParams& params) {
  GlibcRand rng(1);
  detail::ParallelFor pool(std::max(params.threads, 1));
  detail::ParallelFor* pp = params.threads > 1 ? &pool : nullptr;
  check_params(params);
  // Sub-problems share kernel rows when there are several: Platt's folds, or class pairs.
  std::unique_ptr<SharedGram> gram;
  std::vector<int> origin;
  bool several = data.rows() > 0 && (params.probability || group_classes(data).nr_class > 2);
  if (several && params.kernel.type != Kernel::precomputed && data.rows() > 0 &&
      SharedGram::worth_it(data)) {
    gram = std::make_unique<SharedGram>(data, resolved(params, data));
    origin.resize(data.rows());
    std::iota(origin.begin(), origin.end(), 0);
  }
  return train_impl(data, params, rng, pp, gram.get(), origin);
}

namespace {

// The one-vs-one votes from the kernel values against every support vector.
int decide(const SvmModel& model, const std::vector<double>& kvalue,
           std::vector<double>* decision_values) {
  int nr_class = model.nr_class;
  std::vector<int> start(nr_class, 0);
  for (int i = 1; i < nr_class; ++i) start[i] = start[i - 1] + model.nr_sv[i - 1];
  std::vector<int> vote(nr_class, 0);
  std::vector<double> dec;
  int p = 0;
  for (int i = 0; i < nr_class; ++i)
    for (int j = i + 1; j < nr_class; ++j, ++p) {
      double sum = 0;
      int si = start[i], sj = start[j], ci = model.nr_sv[i], cj = model.nr_sv[j];
      const auto& coef1 = model.sv_coef[j - 1];
      const auto& coef2 = model.sv_coef[i];
      for (int k = 0; k < ci; ++k) sum += coef1[si + k] * kvalue[si + k];
      for (int k = 0; k < cj; ++k) sum += coef2[sj + k] * kvalue[sj + k];
      sum -= model.rho[p];
      dec.push_back(sum);
      if (sum > 0)
        ++vote[i];
      else
        ++vote[j];
    }
  int best = 0;
  for (int i = 1; i < nr_class; ++i)
    if (vote[i] > vote[best]) best = i;
  if (decision_values) *decision_values = std::move(dec);
  return nr_class > 0 ? model.label[best] : 0;
}

// Dot products and squared distances of x with the M support vectors from `first` (of `l`, in
// the feature-major copy `svt` of `svdim` columns), the sums in registers and in feature order.
template <std::size_t M>
[[gnu::always_inline]] inline void sv_block(const std::vector<double>& svt, std::size_t svdim,
                                            std::size_t l, std::size_t first, const double* x,
                                            std::size_t xdim, bool need_dist, double* dot_out,
                                            double* dist_out) {
  double d[M] = {}, d2[M] = {};
  std::size_t n = std::max(xdim, svdim);
  for (std::size_t k = 0; k < n; ++k) {
    double v = k < xdim ? x[k] : 0.0;
    const double* col = k < svdim ? svt.data() + k * l + first : nullptr;
    if (need_dist) {
      if (col) {
        for (std::size_t m = 0; m < M; ++m) {
          double t = v - col[m];
          d2[m] += t * t;
        }
      } else if (v != 0) {
        for (std::size_t m = 0; m < M; ++m) d2[m] += v * v;
      }
    }
    if (col && v != 0)
      for (std::size_t m = 0; m < M; ++m) d[m] += v * col[m];
  }
  for (std::size_t m = 0; m < M; ++m) {
    dot_out[m] = d[m];
    dist_out[m] = d2[m];
  }
}

// sv_block over all l support vectors; the AVX2 build is the same loop four lanes wide (the
// same products and sums, none fused: the same bits).
[[gnu::always_inline]] inline void sv_dots_body(const std::vector<double>& svt, std::size_t svdim,
                                                std::size_t l, const double* x, std::size_t xdim,
                                                bool need_dist, double* dot_out, double* dist_out) {
  std::size_t j = 0;
  for (; j + kDotBlock <= l; j += kDotBlock)
    sv_block<kDotBlock>(svt, svdim, l, j, x, xdim, need_dist, dot_out + j, dist_out + j);
  for (; j < l; ++j) sv_block<1>(svt, svdim, l, j, x, xdim, need_dist, dot_out + j, dist_out + j);
}
void sv_dots(const std::vector<double>& svt, std::size_t svdim, std::size_t l, const double* x,
             std::size_t xdim, bool need_dist, double* dot_out, double* dist_out) {
  sv_dots_body(svt, svdim, l, x, xdim, need_dist, dot_out, dist_out);
}
__attribute__((target("avx2"))) void sv_dots_avx2(const std::vector<double>& svt, std::size_t svdim,
                                                  std::size_t l, const double* x, std::size_t xdim,
                                                  bool need_dist, double* dot_out,
                                                  double* dist_out) {
  sv_dots_body(svt, svdim, l, x, xdim, need_dist, dot_out, dist_out);
}

// sv_dots_body 32 support vectors at a time in AVX-512 registers: sv_block's operations per
// lane, unfused, in feature order (the same bits); the rest one at a time as there.
__attribute__((target("avx512f"))) void sv_dots_avx512(const std::vector<double>& svt,
                                                       std::size_t svdim, std::size_t l,
                                                       const double* x, std::size_t xdim,
                                                       bool need_dist, double* dot_out,
                                                       double* dist_out) {
  const __m512d zero = _mm512_setzero_pd();
  std::size_t n = std::max(xdim, svdim), j = 0;
  for (; j + 32 <= l; j += 32) {
    __m512d d[4] = {zero, zero, zero, zero}, d2[4] = {zero, zero, zero, zero};
    for (std::size_t k = 0; k < n; ++k) {
      double v = k < xdim ? x[k] : 0.0;
      __m512d vv = _mm512_set1_pd(v);
      if (k < svdim) {
        const double* col = svt.data() + k * l + j;
        for (std::size_t q = 0; q < 4; ++q) {
          __m512d c = _mm512_loadu_pd(col + 8 * q);
          if (need_dist) {
            __m512d t = _mm512_sub_pd(vv, c);
            d2[q] = _mm512_add_pd(d2[q], _mm512_mul_pd(t, t));
          }
          if (v != 0) d[q] = _mm512_add_pd(d[q], _mm512_mul_pd(vv, c));
        }
      } else if (need_dist && v != 0) {
        __m512d vsq = _mm512_mul_pd(vv, vv);
        for (std::size_t q = 0; q < 4; ++q) d2[q] = _mm512_add_pd(d2[q], vsq);
      }
    }
    for (std::size_t q = 0; q < 4; ++q) {
      _mm512_storeu_pd(dot_out + j + 8 * q, d[q]);
      _mm512_storeu_pd(dist_out + j + 8 * q, d2[q]);
    }
  }
  for (; j < l; ++j) sv_block<1>(svt, svdim, l, j, x, xdim, need_dist, dot_out + j, dist_out + j);
}
void sv_dots_any(const std::vector<double>& svt, std::size_t svdim, std::size_t l, const double* x,
                 std::size_t xdim, bool need_dist, double* dot_out, double* dist_out) {
  if (detail::avx512_loops())
    sv_dots_avx512(svt, svdim, l, x, xdim, need_dist, dot_out, dist_out);
  else if (detail::avx2_loops())
    sv_dots_avx2(svt, svdim, l, x, xdim, need_dist, dot_out, dist_out);
  else
    sv_dots(svt, svdim, l, x, xdim, need_dist, dot_out, dist_out);
}

// Kernel values of one row against all support vectors, vectorised across the support
// vectors (feature-major copy `svt`, `dim` features), each sum still in feature order.
void kernel_values(const SvmModel& model, const std::vector<double>& svt, std::size_t dim,
                   const double* x, std::size_t xdim, std::vector<double>& kvalue,
                   std::vector<double>& dist) {
  const SvmParams& p = model.params;
  std::size_t l = model.total_sv();
  kvalue.resize(l);  // every entry is written below
  if (p.kernel.type == Kernel::precomputed) {
    for (std::size_t i = 0; i < l; ++i)
      kvalue[i] = predict_kernel(p, x, xdim, model.sv.row(i), model.sv.cols());
    return;
  }
  bool need_dist = needs_distance(p);
  dist.resize(l);
  sv_dots_any(svt, model.sv.cols(), l, x, xdim, need_dist, kvalue.data(), dist.data());
  (void)dim;
  if (p.kernel.type == Kernel::mixed) {
    mixed_row(p, kvalue.data(), dist.data(), l, kvalue.data());
    return;
  }
  for (std::size_t k = 0; k < l; ++k)
    kvalue[k] = component_dist(p.kernel, kvalue[k], need_dist ? dist[k] : 0.0);
}

std::vector<double> feature_major(const Dataset& d) {
  std::size_t l = d.rows(), c = d.cols();
  std::vector<double> t(l * c);
  for (std::size_t j = 0; j < l; ++j)
    for (std::size_t k = 0; k < c; ++k) t[k * l + j] = d.row(j)[k];
  return t;
}

// Rows predicted together: their decision sums share one AVX2 register, a lane a row (each
// lane's sum still in support vector order, LIBSVM's), instead of one chain of dependent
// additions per row (a fifth of a prediction's time before).
constexpr std::size_t kRows = 4;

// The two-class decision sums of kRows rows from their kernel values kv[r * l + j] (row r,
// support vector j): decide()'s sum for one pair (coef[j] kv_j added in support vector order),
// then - rho.
[[gnu::always_inline]] inline void two_class_sums_body(const double* coef, const double* kv,
                                                       std::size_t l, std::size_t from,
                                                       double* sum) {
  for (std::size_t j = from; j < l; ++j)
    for (std::size_t r = 0; r < kRows; ++r) sum[r] += coef[j] * kv[r * l + j];
}
void two_class_sums(const double* coef, const double* kv, std::size_t l, double rho, double* out) {
  double sum[kRows] = {};
  two_class_sums_body(coef, kv, l, 0, sum);
  for (std::size_t r = 0; r < kRows; ++r) out[r] = sum[r] - rho;
}
// Four support vectors a step: the four rows' values loaded and transposed in registers, then
// added one support vector after another (the same products and sums, unfused).
__attribute__((target("avx2"))) void two_class_sums_avx2(const double* coef, const double* kv,
                                                         std::size_t l, double rho, double* out) {
  static_assert(kRows == 4);
  __m256d acc = _mm256_setzero_pd();
  std::size_t j = 0;
  for (; j + 4 <= l; j += 4) {
    __m256d r0 = _mm256_loadu_pd(kv + j), r1 = _mm256_loadu_pd(kv + l + j),
            r2 = _mm256_loadu_pd(kv + 2 * l + j), r3 = _mm256_loadu_pd(kv + 3 * l + j);
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    __m256d c0 = _mm256_permute2f128_pd(t0, t2, 0x20), c1 = _mm256_permute2f128_pd(t1, t3, 0x20);
    __m256d c2 = _mm256_permute2f128_pd(t0, t2, 0x31), c3 = _mm256_permute2f128_pd(t1, t3, 0x31);
    acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_broadcast_sd(coef + j), c0));
    acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_broadcast_sd(coef + j + 1), c1));
    acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_broadcast_sd(coef + j + 2), c2));
    acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_broadcast_sd(coef + j + 3), c3));
  }
  alignas(32) double sum[kRows];
  _mm256_store_pd(sum, acc);
  two_class_sums_body(coef, kv, l, j, sum);
  for (std::size_t r = 0; r < kRows; ++r) out[r] = sum[r] - rho;
}

// Decision values of many rows, kRows at a time where the model allows it (a built-in or mixed
// kernel, the rows as wide as the support vectors), one at a time otherwise: every row's values
// are those of kernel_values() and decide(), whichever way they were computed.
class BatchPredictor {
 public:
  // svt: feature_major(m.sv).
  BatchPredictor(const SvmModel& m, const std::vector<double>& svt) : m_(m), svt_(svt) {}
  // Row x's decision values into *dec (decide()'s), its label returned.
  int one(const double* x, std::size_t xdim, std::vector<double>* dec) {
    kernel_values(m_, svt_, m_.sv.cols(), x, xdim, kvalue_, dist_);
    return decide(m_, kvalue_, dec);
  }
  bool batched(std::size_t xdim) const {
    return m_.params.kernel.type != Kernel::precomputed && xdim == m_.sv.cols() && m_.nr_class == 2;
  }
  // The decision value of each of the kRows rows x[r] into dec[r], its label into label[r].
  void rows(const double* const* x, double* dec, int* label) {
    const SvmParams& p = m_.params;
    std::size_t l = m_.total_sv(), n = l * kRows;
    bool need_dist = needs_distance(p);
    kvalue_.resize(n);  // every entry is written below
    dist_.resize(n);
    for (std::size_t r = 0; r < kRows; ++r) {
      double* kv = kvalue_.data() + r * l;
      double* dist = dist_.data() + r * l;
      sv_dots_any(svt_, m_.sv.cols(), l, x[r], m_.sv.cols(), need_dist, kv, dist);
      if (p.kernel.type == Kernel::mixed) {
        mixed_row(p, kv, dist, l, kv);
      } else {
        for (std::size_t k = 0; k < l; ++k)
          kv[k] = component_dist(p.kernel, kv[k], need_dist ? dist[k] : 0.0);
      }
    }
    (detail::avx2_loops() ? two_class_sums_avx2 : two_class_sums)(
        m_.sv_coef[0].data(), kvalue_.data(), l, m_.rho[0], dec);
    // decide(): a vote for the first class where the value is > 0, for the second otherwise.
    for (std::size_t r = 0; r < kRows; ++r) label[r] = m_.label[dec[r] > 0 ? 0 : 1];
  }

 private:
  const SvmModel& m_;
  const std::vector<double>& svt_;
  std::vector<double> kvalue_, dist_;
};

// Rows [b, e) of `row(i)`: their labels into label[i] and decision values into dec(i) (a
// vector, or null), kRows at a time where the model allows.
template <class Row, class Dec>
void predict_rows(BatchPredictor& bp, std::size_t xdim, std::size_t b, std::size_t e, Row row,
                  Dec dec, int* label) {
  std::size_t i = b;
  if (bp.batched(xdim)) {
    for (; i + kRows <= e; i += kRows) {
      const double* x[kRows];
      double value[kRows];
      int lab[kRows];
      for (std::size_t r = 0; r < kRows; ++r) x[r] = row(i + r);
      bp.rows(x, value, lab);
      for (std::size_t r = 0; r < kRows; ++r) {
        if (label) label[i + r] = lab[r];
        if (std::vector<double>* d = dec(i + r)) d->assign(1, value[r]);
      }
    }
  }
  std::vector<double> value;
  for (; i < e; ++i) {
    std::vector<double>* d = dec(i);
    int lab = bp.one(row(i), xdim, d ? d : &value);
    if (label) label[i] = lab;
  }
}

// The first pair's decision values of rows rows[0, n) of `data` into out (svt:
// feature_major(m.sv)).
void first_decision_values(const SvmModel& m, const std::vector<double>& svt, const Dataset& data,
                           const int* rows, std::size_t n, double* out) {
  std::vector<std::vector<double>> dec(n);
  BatchPredictor bp(m, svt);
  predict_rows(
      bp, data.cols(), 0, n, [&](std::size_t i) { return data.row(rows[i]); },
      [&](std::size_t i) { return &dec[i]; }, nullptr);
  for (std::size_t i = 0; i < n; ++i) out[i] = dec[i].empty() ? 0.0 : dec[i][0];
}

}  // namespace

int predict(const SvmModel& model, const double* x, std::size_t dim,
            std::vector<double>* decision_values) {
  std::size_t l = model.total_sv();
  std::vector<double> kvalue(l);
  for (std::size_t i = 0; i < l; ++i)
    kvalue[i] = predict_kernel(model.params, x, dim, model.sv.row(i), model.sv.cols());
  return decide(model, kvalue, decision_values);
}

int predict_probability(const SvmModel& model, const double* x, std::size_t dim,
                        std::vector<double>* probabilities) {
  if (model.prob_a.empty() || model.prob_b.empty())
    fail("svm", "the model has no probability information (train with -b 1)");
  int k = model.nr_class;
  std::vector<double> dec;
  predict(model, x, dim, &dec);
  const double min_prob = 1e-7;
  std::vector<std::vector<double>> pairwise(k, std::vector<double>(k, 0.0));
  int p = 0;
  for (int i = 0; i < k; ++i)
    for (int j = i + 1; j < k; ++j, ++p) {
      pairwise[i][j] =
          std::min(std::max(sigmoid_predict(dec[p], model.prob_a[p], model.prob_b[p]), min_prob),
                   1 - min_prob);
      pairwise[j][i] = 1 - pairwise[i][j];
    }
  std::vector<double> prob(k);
  if (k == 2) {
    prob[0] = pairwise[0][1];
    prob[1] = pairwise[1][0];
  } else {
    multiclass_probability(k, pairwise, prob);
  }
  int best = 0;
  for (int i = 1; i < k; ++i)
    if (prob[i] > prob[best]) best = i;
  if (probabilities) *probabilities = std::move(prob);
  return model.label[best];
}

std::vector<int> predict_all(const SvmModel& model, const Dataset& data,
                             std::vector<std::vector<double>>* decision_values) {
  std::size_t n = data.rows();
  std::vector<int> out(n);
  if (decision_values) decision_values->assign(n, {});
  detail::ParallelFor pool(std::max(model.params.threads, 1));
  std::vector<double> svt = feature_major(model.sv);
  pool.run(n, [&](std::size_t b, std::size_t e) {
    BatchPredictor bp(model, svt);
    predict_rows(
        bp, data.cols(), b, e, [&](std::size_t i) { return data.row(i); },
        [&](std::size_t i) { return decision_values ? &(*decision_values)[i] : nullptr; },
        out.data());
  });
  return out;
}

std::vector<int> cross_validation(const Dataset& data, const SvmParams& params, int nr_fold) {
  std::size_t l = data.rows();
  if (nr_fold < 2) fail("cross validation", "n-fold cross validation: n must >= 2");
  std::vector<int> target(l, 0);
  GlibcRand rng(1);
  detail::ParallelFor pool(std::max(params.threads, 1));
  detail::ParallelFor* pp = params.threads > 1 ? &pool : nullptr;
  check_params(params);
  std::unique_ptr<SharedGram> gram;
  if (params.kernel.type != Kernel::precomputed && l > 0 && SharedGram::worth_it(data))
    gram = std::make_unique<SharedGram>(data, resolved(params, data));
  std::vector<int> perm(l), fold_start(nr_fold + 1);
  if (static_cast<std::size_t>(nr_fold) > l) {
    nr_fold = static_cast<int>(l);
    if (!params.quiet)
      std::fprintf(stderr,
                   "WARNING: # folds > # data. Will use # folds = # data instead (i.e., "
                   "leave-one-out cross validation)\n");
    fold_start.assign(nr_fold + 1, 0);
  }
  if (static_cast<std::size_t>(nr_fold) < l) {
    Grouped g = group_classes(data);
    std::vector<int> index = g.perm;
    for (int c = 0; c < g.nr_class; ++c)
      for (int i = 0; i < g.count[c]; ++i) {
        int j = i + rng() % (g.count[c] - i);
        std::swap(index[g.start[c] + j], index[g.start[c] + i]);
      }
    std::vector<int> fold_count(nr_fold, 0);
    for (int i = 0; i < nr_fold; ++i)
      for (int c = 0; c < g.nr_class; ++c)
        fold_count[i] += (i + 1) * g.count[c] / nr_fold - i * g.count[c] / nr_fold;
    fold_start[0] = 0;
    for (int i = 1; i <= nr_fold; ++i) fold_start[i] = fold_start[i - 1] + fold_count[i - 1];
    for (int c = 0; c < g.nr_class; ++c)
      for (int i = 0; i < nr_fold; ++i) {
        int begin = g.start[c] + i * g.count[c] / nr_fold;
        int end = g.start[c] + (i + 1) * g.count[c] / nr_fold;
        for (int j = begin; j < end; ++j) perm[fold_start[i]++] = index[j];
      }
    fold_start[0] = 0;
    for (int i = 1; i <= nr_fold; ++i) fold_start[i] = fold_start[i - 1] + fold_count[i - 1];
  } else {
    std::iota(perm.begin(), perm.end(), 0);
    for (std::size_t i = 0; i < l; ++i) {
      int j = static_cast<int>(i) + rng() % static_cast<int>(l - i);
      std::swap(perm[i], perm[j]);
    }
    for (int i = 0; i <= nr_fold; ++i) fold_start[i] = static_cast<int>(i * l / nr_fold);
  }
  for (int i = 0; i < nr_fold; ++i) {
    int begin = fold_start[i], end = fold_start[i + 1];
    std::vector<std::size_t> rows;
    for (int j = 0; j < begin; ++j) rows.push_back(perm[j]);
    for (int j = end; j < static_cast<int>(l); ++j) rows.push_back(perm[j]);
    std::vector<int> fold_origin;
    if (gram)
      for (auto r : rows) fold_origin.push_back(static_cast<int>(r));
    SvmModel m = train_impl(data.subset(rows), params, rng, pp, gram.get(), fold_origin);
    for (int j = begin; j < end; ++j) {
      std::vector<double> prob;
      target[perm[j]] = params.probability
                            ? predict_probability(m, data.row(perm[j]), data.cols(), &prob)
                            : predict(m, data.row(perm[j]), data.cols());
    }
  }
  return target;
}

}  // namespace wavekit::tune
