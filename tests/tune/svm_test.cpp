// The C-SVC against oracles we did not write: Debian's LIBSVM 3.24 (svm-train/svm-predict) on
// sklearn's bundled data sets, the mixed kernel against svm-train -t 4 on a Gram matrix this
// test computes itself and against sklearn's callable-kernel SVC (the ANL study's path); then
// the properties a kernel SVM must have, and the errors a user can cause.
#include "wavekit/tune/svm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

#include "test_util.h"
#include "vector_math.h"  // the tune part's internal header (src/tune/src): the math switch
#include "wavekit/support/error.h"

namespace wavekit::tune {
namespace {

using testing::have;
using testing::read_text;
using testing::run_command;
using testing::sklearn_set;
using testing::temp_path;
using testing::write_text;

std::string wavekit(const std::string& args) { return std::string(WAVEKIT_BINARY) + " " + args; }

// The numbers after "obj = " in svm-train's output, one per class pair.
std::vector<double> objectives(const std::string& output) {
  std::vector<double> out;
  for (std::size_t p = output.find("obj = "); p != std::string::npos;
       p = output.find("obj = ", p + 1))
    out.push_back(std::strtod(output.c_str() + p + 6, nullptr));
  return out;
}

int total_nsv(const std::string& output) {
  auto p = output.find("Total nSV = ");
  return p == std::string::npos ? -1 : std::atoi(output.c_str() + p + 12);
}

// svm-train prints obj with %f: equal within 1e-6 relative, or the printed resolution.
void expect_objectives_match(const std::vector<double>& ref, const std::vector<double>& ours) {
  ASSERT_EQ(ref.size(), ours.size());
  for (std::size_t k = 0; k < ref.size(); ++k)
    EXPECT_NEAR(ours[k], ref[k], std::max(1e-6 * std::fabs(ref[k]), 1.5e-6)) << "pair " << k;
}

struct OracleCase {
  const char* data;
  const char* options;
};

class LibsvmOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(LibsvmOracle, SameModelAsSvmTrain) {
  if (!have(WAVEKIT_SVM_TRAIN) || !have(WAVEKIT_SVM_PREDICT))
    GTEST_SKIP() << "Debian's LIBSVM (libsvm-tools: svm-train, svm-predict) is not installed";
  auto data = sklearn_set(GetParam().data);
  if (!data) GTEST_SKIP() << "sklearn's bundled data sets (python3-sklearn) are not installed";
  std::string file = temp_path(std::string(GetParam().data) + ".txt");
  write_text(file, format_libsvm(*data));
  std::string ref_model = file + ".ref.model", our_model = file + ".our.model";
  std::string opts = GetParam().options;
  auto ref =
      run_command(std::string(WAVEKIT_SVM_TRAIN) + " " + opts + " " + file + " " + ref_model);
  ASSERT_EQ(ref.status, 0) << ref.output;
  auto ours = run_command(wavekit("svm-train " + opts + " " + file + " " + our_model));
  ASSERT_EQ(ours.status, 0) << ours.output;

  expect_objectives_match(objectives(ref.output), objectives(ours.output));
  EXPECT_EQ(total_nsv(ours.output), total_nsv(ref.output));
  EXPECT_GT(total_nsv(ref.output), 0);

  // Debian's svm-predict reads our model and predicts what it predicts with its own.
  auto rp = run_command(std::string(WAVEKIT_SVM_PREDICT) + " " + file + " " + ref_model + " " +
                        file + ".ref.pred");
  auto op = run_command(std::string(WAVEKIT_SVM_PREDICT) + " " + file + " " + our_model + " " +
                        file + ".our.pred");
  ASSERT_EQ(rp.status, 0) << rp.output;
  ASSERT_EQ(op.status, 0) << op.output;
  EXPECT_EQ(read_text(file + ".our.pred"), read_text(file + ".ref.pred"));

  // Decision values of the two models: LIBSVM's coefficients and rho against ours.
  SvmModel theirs = load_model(ref_model), mine = load_model(our_model);
  EXPECT_EQ(mine.label, theirs.label);
  EXPECT_EQ(mine.nr_sv, theirs.nr_sv);
  std::vector<std::vector<double>> dt, dm;
  predict_all(theirs, *data, &dt);
  predict_all(mine, *data, &dm);
  double worst = 0;
  for (std::size_t i = 0; i < dt.size(); ++i)
    for (std::size_t k = 0; k < dt[i].size(); ++k)
      worst = std::max(worst, std::fabs(dt[i][k] - dm[i][k]));
  EXPECT_LT(worst, 1e-5);
  // Parameters exactly representable in float: the files are byte for byte LIBSVM's.
  EXPECT_EQ(read_text(our_model), read_text(ref_model));
}

// Parameters are exact in single precision (Debian's svm-train rounds -g/-r to float).
INSTANTIATE_TEST_SUITE_P(Kernels, LibsvmOracle,
                         ::testing::Values(OracleCase{"breast_cancer", "-t 2 -c 4"},
                                           OracleCase{"breast_cancer", "-t 0 -c 0.5"},
                                           OracleCase{"breast_cancer",
                                                      "-t 3 -g 0.0625 -r -0.5 -c 2"},
                                           OracleCase{"breast_cancer", "-t 2 -c 16 -h 0 -m 1"},
                                           OracleCase{"wine", "-t 1 -d 3 -g 0.125 -r 1"},
                                           OracleCase{"wine", "-t 2 -c 8 -w1 2 -w3 0.5"},
                                           OracleCase{"iris", "-t 2 -c 2 -b 1"},
                                           // the shared Gram matrix behind a small fit cache
                                           OracleCase{"breast_cancer", "-t 2 -c 4 -b 1"},
                                           OracleCase{"digits", "-t 2 -g 0.015625 -c 4 -m 2"}),
                         [](const auto& info) {
                           std::string n =
                               std::string(info.param.data) + "_" + std::to_string(info.index);
                           return n;
                         });

TEST(LibsvmOracleCli, CrossValidationAccuracy) {
  if (!have(WAVEKIT_SVM_TRAIN)) GTEST_SKIP() << "Debian's svm-train (libsvm-tools) is absent";
  auto data = sklearn_set("wine");
  if (!data) GTEST_SKIP() << "sklearn's bundled data sets (python3-sklearn) are not installed";
  std::string file = temp_path("wine.txt");
  write_text(file, format_libsvm(*data));
  for (std::string opts : {"-v 5 -c 2", "-v 3 -b 1 -t 0"}) {
    auto ref = run_command(std::string(WAVEKIT_SVM_TRAIN) + " -q " + opts + " " + file);
    auto ours = run_command(wavekit("svm-train -q " + opts + " " + file));
    ASSERT_EQ(ours.status, 0) << ours.output;
    EXPECT_NE(ref.output.find("Cross Validation Accuracy"), std::string::npos) << ref.output;
    EXPECT_EQ(ours.output, ref.output) << opts;
  }
}

TEST(LibsvmOracleCli, ProbabilityOutput) {
  if (!have(WAVEKIT_SVM_TRAIN) || !have(WAVEKIT_SVM_PREDICT))
    GTEST_SKIP() << "Debian's LIBSVM (libsvm-tools) is not installed";
  auto data = sklearn_set("iris");
  if (!data) GTEST_SKIP() << "sklearn's bundled data sets (python3-sklearn) are not installed";
  std::string file = temp_path("iris.txt");
  write_text(file, format_libsvm(*data));
  ASSERT_EQ(
      run_command(std::string(WAVEKIT_SVM_TRAIN) + " -q -b 1 " + file + " " + file + ".m").status,
      0);
  auto ref = run_command(std::string(WAVEKIT_SVM_PREDICT) + " -b 1 " + file + " " + file + ".m " +
                         file + ".ref");
  auto ours = run_command(wavekit("svm-predict -b 1 " + file + " " + file + ".m " + file + ".our"));
  ASSERT_EQ(ours.status, 0) << ours.output;
  EXPECT_EQ(ours.output, ref.output);
  EXPECT_EQ(read_text(file + ".our"), read_text(file + ".ref"));
  EXPECT_EQ(read_text(file + ".our").substr(0, 13), "labels 0 1 2\n");
}

// The mixed-kernel oracles run with the vector tanh/exp (vector_math.h) and with it off (glibc's
// scalar functions, the path of a machine without AVX2): both must meet them.
class MixedKernel : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { detail::enable_vector_math(GetParam()); }
  void TearDown() override { detail::enable_vector_math(true); }
};

INSTANTIATE_TEST_SUITE_P(Math, MixedKernel, ::testing::Bool(), [](const auto& info) {
  return std::string(info.param ? "vector" : "scalar");
});

// The mixed kernel from a Gram matrix this test computes by the definition (squared distance,
// not norms), handed to LIBSVM as -t 4: same objective, support vectors and predictions.
TEST_P(MixedKernel, AgainstLibsvmPrecomputed) {
  if (!have(WAVEKIT_SVM_TRAIN) || !have(WAVEKIT_SVM_PREDICT))
    GTEST_SKIP() << "Debian's LIBSVM (libsvm-tools) is not installed";
  auto full = sklearn_set("breast_cancer");
  if (!full) GTEST_SKIP() << "sklearn's bundled data sets (python3-sklearn) are not installed";
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < 300; ++i) rows.push_back(i);
  Dataset data = full->subset(rows);
  const double a = 0.3, s = 0.01, c0 = 0.5, g = 0.05, C = 2;
  std::string gram;
  char buf[64];
  for (std::size_t i = 0; i < data.rows(); ++i) {
    gram += std::to_string(static_cast<int>(data.y[i])) + " 0:" + std::to_string(i + 1);
    for (std::size_t j = 0; j < data.rows(); ++j) {
      double d = 0, d2 = 0;
      for (std::size_t k = 0; k < data.cols(); ++k) {
        d += data.row(i)[k] * data.row(j)[k];
        d2 += (data.row(i)[k] - data.row(j)[k]) * (data.row(i)[k] - data.row(j)[k]);
      }
      std::snprintf(buf, sizeof buf, " %zu:%.17g", j + 1,
                    (1 - a) * std::tanh(s * d + c0) + a * std::exp(-g * d2));
      gram += buf;
    }
    gram += "\n";
  }
  std::string gfile = temp_path("gram.txt");
  write_text(gfile, gram);
  auto ref =
      run_command(std::string(WAVEKIT_SVM_TRAIN) + " -t 4 -c 2 " + gfile + " " + gfile + ".model");
  ASSERT_EQ(ref.status, 0) << ref.output;
  ASSERT_EQ(run_command(std::string(WAVEKIT_SVM_PREDICT) + " " + gfile + " " + gfile + ".model " +
                        gfile + ".pred")
                .status,
            0);

  SvmParams p;
  p.kernel.type = Kernel::mixed;
  p.first = {Kernel::sigmoid, 3, s, c0};
  p.second = {Kernel::rbf, 3, g, 0};
  p.mix = a;
  p.C = C;
  SvmModel m = train(data, p);
  expect_objectives_match(objectives(ref.output), m.obj);
  EXPECT_EQ(static_cast<int>(m.total_sv()), total_nsv(ref.output));
  std::vector<std::vector<double>> dec;
  auto pred = predict_all(m, data, &dec);
  std::istringstream in(read_text(gfile + ".pred"));
  SvmModel theirs = load_model(gfile + ".model");
  Dataset grams = read_libsvm(gfile);
  for (std::size_t i = 0; i < data.rows(); ++i) {
    int label;
    in >> label;
    EXPECT_EQ(pred[i], label) << "row " << i;
    std::vector<double> dv;
    predict(theirs, grams.row(i), grams.cols(), &dv);
    EXPECT_NEAR(dec[i][0], dv[0], 1e-5) << "row " << i;
  }
  // The mixed model round-trips through its file.
  std::string mfile = temp_path("mixed.model");
  save_model(mfile, m);
  SvmModel back = load_model(mfile);
  EXPECT_EQ(back.params.kernel.type, Kernel::mixed);
  EXPECT_EQ(back.params.first.type, Kernel::sigmoid);
  EXPECT_DOUBLE_EQ(back.params.second.gamma, g);
  EXPECT_EQ(predict_all(back, data), pred);
}

// The study's own path: sklearn's SVC with the mixed kernel as a Python callable.
TEST_P(MixedKernel, AgainstSklearnCallable) {
  if (!have(WAVEKIT_SYSTEM_PYTHON) ||
      run_command(std::string(WAVEKIT_SYSTEM_PYTHON) + " -c 'import sklearn'").status != 0)
    GTEST_SKIP() << "/usr/bin/python3 with Debian's python3-sklearn is not installed";
  auto data = sklearn_set("breast_cancer");
  if (!data) GTEST_SKIP() << "sklearn's bundled data sets (python3-sklearn) are not installed";
  std::string file = temp_path("bc.txt");
  write_text(file, format_libsvm(*data));
  auto sk = run_command(std::string(WAVEKIT_SYSTEM_PYTHON) +
                        " " WAVEKIT_TUNE_TEST_DIR "/sklearn_mixed.py " + file + " " + file +
                        " 0.4 0.02 -0.3 0.1 3");
  ASSERT_EQ(sk.status, 0) << sk.output;
  SvmParams p;
  p.kernel.type = Kernel::mixed;
  p.first = {Kernel::sigmoid, 3, 0.02, -0.3};
  p.second = {Kernel::rbf, 3, 0.1, 0};
  p.mix = 0.4;
  p.C = 3;
  SvmModel m = train(*data, p);
  std::vector<std::vector<double>> dec;
  auto pred = predict_all(m, *data, &dec);
  std::istringstream in(sk.output);
  std::string word;
  int c0, c1;
  in >> word >> c0 >> c1;
  ASSERT_EQ(word, "classes");
  // sklearn's decision value is positive for its second (sorted) class.
  double sign = m.label[0] == c1 ? 1 : -1;
  for (std::size_t i = 0; i < data->rows(); ++i) {
    int label;
    double d;
    in >> label >> d;
    ASSERT_TRUE(in) << "sklearn printed fewer rows";
    EXPECT_EQ(pred[i], label) << "row " << i;
    EXPECT_NEAR(sign * dec[i][0], d, 1e-5) << "row " << i;
  }
}

// ---- properties ----

Dataset small_task() {
  auto d = sklearn_set("breast_cancer");
  if (d) return *d;
  // A synthetic task when sklearn's data is absent: two overlapping Gaussians.
  Dataset out;
  unsigned s = 7;
  auto u = [&] {
    s = s * 1103515245u + 12345u;
    return ((s >> 8) & 0xffff) / 65536.0;
  };
  for (int i = 0; i < 300; ++i) {
    std::vector<double> x(6);
    for (auto& v : x) v = u() + u() + u() - 1.5 + (i % 2 ? 0.4 : -0.4);
    out.add_dense_row(i % 2 ? 1 : -1, x);
  }
  out.densify();
  return out;
}

SvmParams with_kernel(KernelSpec k, double C = 1) {
  SvmParams p;
  p.kernel = k;
  p.C = C;
  p.eps = 1e-6;
  return p;
}

TEST(SvmProperties, AddingAConstantToTheKernelChangesNoPrediction) {
  Dataset d = small_task();
  SvmModel lin = train(d, with_kernel({Kernel::linear}));
  // poly of degree 1, gamma 1, coef0 3: K + 3
  SvmModel shifted = train(d, with_kernel({Kernel::poly, 1, 1.0, 3.0}));
  std::vector<std::vector<double>> a, b;
  EXPECT_EQ(predict_all(lin, d, &a), predict_all(shifted, d, &b));
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i][0], b[i][0], 1e-3);
}

TEST(SvmProperties, ScalingTheKernelIsScalingC) {
  Dataset d = small_task();
  SvmModel base = train(d, with_kernel({Kernel::linear}, 2.0));
  SvmModel scaled = train(d, with_kernel({Kernel::poly, 1, 4.0, 0.0}, 0.5));  // 4K, C/4
  std::vector<std::vector<double>> a, b;
  EXPECT_EQ(predict_all(base, d, &a), predict_all(scaled, d, &b));
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i][0], b[i][0], 1e-3);
  EXPECT_NEAR(scaled.obj[0] * 4, base.obj[0], 1e-3 * std::fabs(base.obj[0]));
}

TEST(SvmProperties, MixedKernelEndsAreItsComponents) {
  Dataset d = small_task();
  SvmParams mixed;
  mixed.kernel.type = Kernel::mixed;
  mixed.first = {Kernel::sigmoid, 3, 0.01, 0.2};
  mixed.second = {Kernel::rbf, 3, 0.05, 0};
  for (double a : {0.0, 1.0}) {
    mixed.mix = a;
    SvmModel m = train(d, mixed);
    SvmParams q;
    q.kernel = a == 0 ? mixed.first : mixed.second;
    SvmModel pure = train(d, q);
    EXPECT_EQ(m.obj, pure.obj) << "a = " << a;
    EXPECT_EQ(m.sv_coef, pure.sv_coef) << "a = " << a;
    EXPECT_EQ(m.rho, pure.rho) << "a = " << a;
  }
}

TEST(SvmProperties, NonPsdSigmoidTerminatesWithoutNan) {
  Dataset d = small_task();
  for (auto [g, r] : {std::pair{5.0, -8.0}, {2.0, 3.0}, {0.5, -15.0}}) {
    SvmModel m = train(d, with_kernel({Kernel::sigmoid, 3, g, r}, 100));
    for (double rho : m.rho) EXPECT_TRUE(std::isfinite(rho));
    for (double o : m.obj) EXPECT_TRUE(std::isfinite(o));
    for (auto& row : m.sv_coef)
      for (double c : row) EXPECT_TRUE(std::isfinite(c));
  }
}

TEST(SvmProperties, EqualClassWeightsAreAScaledC) {
  Dataset d = small_task();
  SvmParams w = with_kernel({Kernel::rbf, 3, 0.1, 0}, 1);
  w.weights = {{static_cast<int>(d.y[0]), 3.0}};
  for (double y : d.y)
    if (static_cast<int>(y) != w.weights[0].first) {
      w.weights.push_back({static_cast<int>(y), 3.0});
      break;
    }
  SvmModel weighted = train(d, w);
  SvmModel scaled = train(d, with_kernel({Kernel::rbf, 3, 0.1, 0}, 3));
  EXPECT_EQ(weighted.sv_coef, scaled.sv_coef);
  EXPECT_EQ(weighted.rho, scaled.rho);
  // balanced on a balanced two-class subset is the identity
  std::vector<std::size_t> rows;
  int n0 = 0, n1 = 0;
  for (std::size_t i = 0; i < d.rows(); ++i) {
    bool first = static_cast<int>(d.y[i]) == static_cast<int>(d.y[0]);
    if (first && n0 < 100) rows.push_back(i), ++n0;
    if (!first && n1 < 100) rows.push_back(i), ++n1;
  }
  Dataset even = d.subset(rows);
  SvmParams b = with_kernel({Kernel::rbf, 3, 0.1, 0}, 1);
  SvmModel plain = train(even, b);
  b.balanced = true;
  SvmModel bal = train(even, b);
  EXPECT_EQ(plain.sv_coef, bal.sv_coef);
}

TEST(SvmProperties, BalancedWeightsFavourTheMinorityClass) {
  Dataset d = small_task();
  std::vector<std::size_t> rows;
  int minority = 0;
  int first = static_cast<int>(d.y[0]);
  for (std::size_t i = 0; i < d.rows(); ++i) {
    if (static_cast<int>(d.y[i]) == first) {
      rows.push_back(i);
    } else if (minority < 15) {
      rows.push_back(i);
      ++minority;
    }
  }
  Dataset skew = d.subset(rows);
  SvmParams p = with_kernel({Kernel::linear}, 0.05);
  auto recall = [&](const SvmModel& m) {
    auto pred = predict_all(m, skew);
    int hit = 0, n = 0;
    for (std::size_t i = 0; i < pred.size(); ++i)
      if (static_cast<int>(skew.y[i]) != first) ++n, hit += pred[i] != first;
    return static_cast<double>(hit) / n;
  };
  double plain = recall(train(skew, p));
  p.balanced = true;
  double bal = recall(train(skew, p));
  EXPECT_GT(bal, plain);
}

TEST(SvmProperties, ThreadsChangeNothing) {
  Dataset d = small_task();
  SvmParams p = with_kernel({Kernel::rbf, 3, 0.05, 0}, 10);
  p.eps = 1e-3;
  SvmModel one = train(d, p);
  p.threads = 3;
  SvmModel three = train(d, p);
  EXPECT_EQ(format_model(one), format_model(three));
  // with the shared Gram matrix (probabilities, several classes) and in cross-validation
  auto wine = sklearn_set("wine");
  if (!wine) GTEST_SKIP() << "sklearn's bundled data sets (python3-sklearn) are not installed";
  p.probability = true;
  p.threads = 1;
  SvmModel w1 = train(*wine, p);
  auto cv1 = cross_validation(*wine, p, 3);
  p.threads = 3;
  EXPECT_EQ(format_model(train(*wine, p)), format_model(w1));
  EXPECT_EQ(cross_validation(*wine, p, 3), cv1);
}

// The AVX2 builds of the kernel rows' dot products, the Q rows' gathers from the shared Gram
// matrix and the working-set selection, and the AVX-512 builds of the dot products (where the
// CPU has AVX-512F), give the scalar loops' models bit for bit: one fit, the shared matrix
// (Platt's folds, several classes, small and large C) and cross-validation.
TEST(SvmProperties, Avx2LoopsAreTheScalarLoops) {
  if (!detail::avx2_loops()) GTEST_SKIP() << "the CPU has no AVX2";
  auto bc = sklearn_set("breast_cancer");
  auto wine = sklearn_set("wine");
  if (!bc || !wine)
    GTEST_SKIP() << "sklearn's bundled data sets (python3-sklearn) are not installed";
  SvmParams mixed;
  mixed.kernel.type = Kernel::mixed;
  mixed.first = {Kernel::sigmoid, 3, 0.01, 0.2};
  mixed.second = {Kernel::rbf, 3, 0.05, 0};
  mixed.mix = 0.3;
  mixed.balanced = true;
  std::vector<std::pair<const Dataset*, SvmParams>> cases;
  // wine five times over: equal gradients and kernel values, so that the selection's ties (the
  // last of equal candidates wins) decide, within a lane and across lanes
  std::vector<std::size_t> copies;
  for (int k = 0; k < 5; ++k)
    for (std::size_t i = 0; i < wine->rows(); ++i) copies.push_back(i);
  Dataset repeated = wine->subset(copies);
  for (double c : {0.5, 100.0}) {
    SvmParams p = mixed;
    p.C = c;
    cases.push_back({&*bc, p});
    cases.push_back({&repeated, p});
    p.probability = true;
    cases.push_back({&*bc, p});
    SvmParams r = with_kernel({Kernel::rbf, 3, 0.05, 0}, c);
    r.eps = 1e-3;
    cases.push_back({&*wine, r});
    r.probability = true;
    r.threads = 2;
    cases.push_back({&*wine, r});
  }
  for (auto& [data, p] : cases) {
    auto fit = [&, data = data, p = p] {
      std::vector<std::vector<double>> dec;
      SvmModel m = train(*data, p);
      predict_all(m, *data, &dec);
      return std::pair{format_model(m), dec};
    };
    auto wide = fit();  // the AVX-512 dot products where the CPU has them
    auto cv_wide = cross_validation(*data, p, 3);
    detail::enable_avx512_loops(false);
    auto avx2 = fit();
    auto cv_avx2 = cross_validation(*data, p, 3);
    detail::enable_avx2_loops(false);
    auto narrow = fit();
    auto cv_narrow = cross_validation(*data, p, 3);
    detail::enable_avx2_loops(true);
    detail::enable_avx512_loops(true);
    EXPECT_EQ(wide.first, narrow.first) << "C = " << p.C << ", -b " << p.probability;
    EXPECT_EQ(wide.second, narrow.second) << "C = " << p.C << ", -b " << p.probability;
    EXPECT_EQ(cv_wide, cv_narrow) << "C = " << p.C << ", -b " << p.probability;
    EXPECT_EQ(avx2.first, narrow.first) << "C = " << p.C << ", -b " << p.probability;
    EXPECT_EQ(avx2.second, narrow.second) << "C = " << p.C << ", -b " << p.probability;
    EXPECT_EQ(cv_avx2, cv_narrow) << "C = " << p.C << ", -b " << p.probability;
  }
}

// predict_all() and Platt's fold decision values take several rows at once (each support
// vector's features loaded once for four rows, four decision sums in one register): every
// row's decision values and label are predict()'s, one row at a time, bit for bit, for each
// kernel, the AVX2 and the scalar loops, a row count that leaves a remainder, threads, and a
// test set narrower than the support vectors (one row at a time there).
TEST(SvmProperties, BatchedPredictionsAreOneRowPredictions) {
  Dataset d = small_task();
  SvmParams mixed;
  mixed.kernel.type = Kernel::mixed;
  mixed.first = {Kernel::sigmoid, 3, 0.01, 0.2};
  mixed.second = {Kernel::rbf, 3, 0.05, 0};
  mixed.mix = 0.3;
  std::vector<SvmParams> cases = {
      mixed, with_kernel({Kernel::linear, 3, 0, 0}, 0.5), with_kernel({Kernel::poly, 2, 0.1, 1}, 1),
      with_kernel({Kernel::rbf, 3, 0.05, 0}, 10), with_kernel({Kernel::sigmoid, 3, 0.01, 0.1}, 1)};
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i + 1 < d.rows() && rows.size() < 203; i += 2) rows.push_back(i);
  Dataset test = d.subset(rows);  // 203 rows: 50 batches of four and three single rows
  // the same rows one feature narrower: a model's support vectors wider than the rows
  Dataset narrow;
  for (std::size_t i = 0; i < test.rows(); ++i)
    narrow.add_dense_row(test.y[i],
                         std::vector<double>(test.row(i) + 1, test.row(i) + test.cols() - 1));
  narrow.densify();
  for (int wide : {2, 1, 0}) {  // AVX-512 where the CPU has it, AVX2, scalar
    detail::enable_avx512_loops(wide == 2);
    detail::enable_avx2_loops(wide >= 1);
    for (SvmParams p : cases) {
      SvmModel m = train(d, p);
      for (const Dataset* t : {&test, &narrow}) {
        for (int threads : {1, 3}) {
          m.params.threads = threads;
          std::vector<std::vector<double>> dec;
          std::vector<int> labels = predict_all(m, *t, &dec);
          ASSERT_EQ(labels.size(), t->rows());
          for (std::size_t i = 0; i < t->rows(); ++i) {
            std::vector<double> one;
            int label = predict(m, t->row(i), t->cols(), &one);
            EXPECT_EQ(label, labels[i]) << kernel_name(p.kernel.type) << " row " << i;
            EXPECT_EQ(one, dec[i]) << kernel_name(p.kernel.type) << " row " << i;
          }
        }
      }
    }
  }
  detail::enable_avx2_loops(true);
  detail::enable_avx512_loops(true);
}

// The study's mixture (sigmoid then RBF) takes its own, fused loops; the components the other
// way round take the general ones. At a = 0.5 both are 0.5 S + 0.5 R, the same sum either way
// (addition commutes), so the two must give the same models and decision values bit for bit:
// one fit, the shared matrix (-b 1) and predictions, AVX2 and scalar.
TEST(SvmProperties, FusedSigmoidRbfIsTheGeneralMixture) {
  Dataset d = small_task();
  SvmParams sr;
  sr.kernel.type = Kernel::mixed;
  sr.first = {Kernel::sigmoid, 3, 0.01, 0.2};
  sr.second = {Kernel::rbf, 3, 0.05, 0};
  sr.mix = 0.5;
  SvmParams rs = sr;
  std::swap(rs.first, rs.second);
  for (bool avx2 : {true, false}) {
    detail::enable_avx2_loops(avx2);
    for (bool probability : {false, true}) {
      sr.probability = rs.probability = probability;
      SvmModel a = train(d, sr), b = train(d, rs);
      EXPECT_EQ(a.sv_coef, b.sv_coef) << "-b " << probability;
      EXPECT_EQ(a.rho, b.rho) << "-b " << probability;
      EXPECT_EQ(a.prob_a, b.prob_a) << "-b " << probability;
      EXPECT_EQ(a.prob_b, b.prob_b) << "-b " << probability;
      EXPECT_EQ(a.iterations, b.iterations) << "-b " << probability;
      std::vector<std::vector<double>> da, db;
      predict_all(a, d, &da);
      predict_all(b, d, &db);
      EXPECT_EQ(da, db) << "-b " << probability;
    }
  }
  detail::enable_avx2_loops(true);
}

TEST(GlibcRandTest, IsGlibcRand) {
  GlibcRand r(1);
  std::srand(1);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(r(), std::rand()) << i;
  GlibcRand r7(7);
  std::srand(7);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(r7(), std::rand()) << i;
}

// ---- errors ----

void expect_error(const std::string& text, const std::string& part) {
  try {
    parse_libsvm(text, "f.txt");
    ADD_FAILURE() << "no error for: " << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(SvmData, MalformedFilesNameLineAndColumn) {
  expect_error("1 1:0.5\nx 1:2\n", "f.txt:2:1: the label is not a number");
  expect_error("1 1:0.5 2:abc\n", "f.txt:1:11: the value of feature 2 is not a number");
  expect_error("1 2:0.5 1:1\n", "f.txt:1:9: feature indices must be in increasing order");
  expect_error("1 1:0.5\n-1 3=4\n", "f.txt:2:4: expected index:value, found '3=4'");
  expect_error("1 -2:1\n", "f.txt:1:3: feature index -2 is out of range");
  Dataset ok = parse_libsvm("1 1:0.5 3:2\n\n# comment\n-1 2:1\n", "ok");
  EXPECT_EQ(ok.rows(), 2u);
  EXPECT_EQ(ok.max_index, 3);
  EXPECT_EQ(ok.row(0)[3], 2.0);
  EXPECT_EQ(ok.row(1)[2], 1.0);
}

// Numbers in data and model files are read as strtod reads them (the readers take a faster
// path for plain decimals): signs, exponents, hexadecimal, subnormals, white space after ':'.
TEST(SvmData, NumbersAreStrtodsNumbers) {
  const char* spellings[] = {"0.5",
                             "+0.5",
                             "-.25",
                             "+.5",
                             "1e-3",
                             "1E+2",
                             "0x1.8p1",
                             "0X10",
                             "1e-310",
                             "4.9e-324",
                             "1e-400",
                             "-0",
                             "123456789012345678901234567890",
                             "0.1000000000000000055511151231257827"};
  for (const char* v : spellings) {
    double want = std::strtod(v, nullptr);
    Dataset d = parse_libsvm(std::string("+1 1:") + v + "\n-1 1: " + v + "\n", "n");
    EXPECT_EQ(std::signbit(d.row(0)[1]), std::signbit(want)) << v;
    EXPECT_EQ(d.row(0)[1], want) << v;
    EXPECT_EQ(d.row(1)[1], want) << v;
    EXPECT_EQ(d.y[0], 1.0);
    std::string model =
        std::string("svm_type c_svc\nkernel_type linear\nnr_class 2\ntotal_sv 1\n") +
        "rho 0\nlabel 1 -1\nnr_sv 1 0\nSV\n" + v + " 0x1p0:" + v + "\n";
    SvmModel m = parse_model(model, "m");
    EXPECT_EQ(m.sv_coef[0][0], want) << v;
    EXPECT_EQ(m.sv.row(0)[1], want) << v;
  }
  for (const char* bad : {"1e400", "-1e999", "1.5e", "0x", "+-1", "++1", ".", "1..2", "nan"}) {
    EXPECT_THROW(parse_libsvm(std::string("1 1:") + bad + "\n", "n"), Error) << bad;
    std::string model =
        std::string("svm_type c_svc\nkernel_type linear\nnr_class 2\ntotal_sv 1\n") +
        "rho 0\nlabel 1 -1\nnr_sv 1 0\nSV\n1 1:" + bad + "\n";
    if (std::string(bad) != "1e400" && std::string(bad) != "-1e999" && std::string(bad) != "nan")
      EXPECT_THROW(parse_model(model, "m"), Error) << bad;
  }
}

TEST(SvmData, BadParametersAreRefused) {
  Dataset d = parse_libsvm("1 1:1\n-1 1:-1\n", "d");
  SvmParams p;
  p.C = 0;
  EXPECT_THROW(train(d, p), Error);
  p.C = 1;
  p.kernel.gamma = -1;
  EXPECT_THROW(train(d, p), Error);
  p.kernel = {Kernel::mixed};
  p.mix = 1.5;
  EXPECT_THROW(train(d, p), Error);
  p.mix = 0.5;
  p.first.type = Kernel::precomputed;
  EXPECT_THROW(train(d, p), Error);
  EXPECT_THROW(parse_model("svm_type nu_svc\n", "m"), Error);
  EXPECT_THROW(parse_model("svm_type c_svc\nkernel_type rbf\nnr_class 2\ntotal_sv 3\nrho 0\n"
                           "label 1 -1\nnr_sv 1 1\nSV\n",
                           "m"),
               Error);
}

void expect_has(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << text;
}

// Counts, labels and indices in a model file are whole numbers in range, checked before they
// are converted (a fuzzer found 1e21 as a label and nr_sv that overflowed their sum).
TEST(SvmData, ModelFileNumbersAreCheckedBeforeTheyAreUsed) {
  auto model = [](const std::string& header, const std::string& sv = "1 1:1\n-1 1:-1\n") {
    return "svm_type c_svc\nkernel_type linear\n" + header + "SV\n" + sv;
  };
  auto message = [](const std::string& text) {
    try {
      parse_model(text, "m");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  std::string good = "nr_class 2\ntotal_sv 2\nrho 0\nlabel 1 -1\nnr_sv 1 1\n";
  EXPECT_EQ(parse_model(model(good), "m").total_sv(), 2u);
  expect_has(message(model("nr_class 2\ntotal_sv 2\nrho 0\nlabel 1e21 -1\nnr_sv 1 1\n")),
             "'1e21' is not a whole number");
  expect_has(message(model("nr_class 2.5\n")), "'2.5' is not a whole number in [1");
  expect_has(message(model("nr_class 2\ntotal_sv 2\nrho 0\nlabel 1 -1\n"
                           "nr_sv 2147483647 2147483647\n")),
             "nr_sv does not add up to total_sv");
  expect_has(message(model("nr_class 2\ntotal_sv 5555511111\n")),
             "'5555511111' is not a whole number");
  expect_has(message(model("nr_class 99999\nrho 0\n")), "rho needs 4999850001 values");
  expect_has(message(model(good, "1 1e30:1\n-1 1:-1\n")), "'1e30' is not a whole");
  std::string pre = "svm_type c_svc\nkernel_type precomputed\n" + good + "SV\n";
  EXPECT_EQ(parse_model(pre + "1 0:1\n-1 0:2\n", "m").total_sv(), 2u);
  expect_has(message(pre + "1 0:-7\n-1 0:2\n"), "0:SERIAL");
  expect_has(message(pre + "1 0:1e300\n-1 0:2\n"), "0:SERIAL");
  expect_has(message(pre + "1\n-1 0:2\n"), "found no entry");
}

// Rows are dense: a file whose indices would need more than 2 GiB that way is refused by name.
TEST(SvmData, DataTooSparseToKeepDenseIsRefusedClearly) {
  std::string text;
  for (int i = 0; i < 3; ++i) text += "1 100000000:1\n";
  try {
    parse_libsvm(text, "wide.txt");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    expect_has(e.what(), "wide.txt: 3 rows with feature indices up to 100000000 take 2.2 GiB");
  }
}

TEST(SvmCli, MixedKernelOptions) {
  auto data = sklearn_set("wine");
  if (!data) GTEST_SKIP() << "sklearn's bundled data sets (python3-sklearn) are not installed";
  std::string file = temp_path("wine.txt");
  write_text(file, format_libsvm(*data));
  // a = 0 is K1 exactly, a = 1 is K2 exactly (given by -k, -G, -R, -D)
  auto run = [&](const std::string& opts) {
    auto r = run_command(wavekit("svm-train -q " + opts + " " + file + " " + file + ".m"));
    EXPECT_EQ(r.status, 0) << r.output;
    return load_model(file + ".m");
  };
  SvmModel k1 = run("-t 5 -a 0 -g 0.25 -r -0.5 -G 2");
  SvmModel sig = run("-t 3 -g 0.25 -r -0.5");
  EXPECT_EQ(k1.sv_coef, sig.sv_coef);
  EXPECT_EQ(k1.rho, sig.rho);
  SvmModel k2 = run("-t 5 -a 1 -k 0,1 -G 0.5 -R 1 -D 2");
  SvmModel poly = run("-t 1 -g 0.5 -r 1 -d 2");
  EXPECT_EQ(k2.sv_coef, poly.sv_coef);
  EXPECT_EQ(k2.params.first.type, Kernel::linear);
  EXPECT_EQ(k2.params.second.degree, 2);
  SvmModel half = run("-t 5 -a 0.5 -g 0.25 -r -0.5 -G 2");
  EXPECT_NE(half.sv_coef, sig.sv_coef);
  EXPECT_EQ(run_command(wavekit("svm-train -t 5 -k 4,2 " + file)).status, 2);
}

// With threads, a -b 1 fit runs Platt's five folds and the final fit at once: the model file,
// the progress text (each fit's, in LIBSVM's order) and the probabilities are the one-thread ones.
TEST(SvmCli, ThreadedProbabilityFitIsTheOneThreadFit) {
  for (auto [set, opts] : {std::pair{"breast_cancer", "-t 5 -a 0.3 -g 0.01 -r 0 -G 0.05 -B 1"},
                           std::pair{"wine", "-t 2 -g 0.05 -c 10"}}) {
    auto data = sklearn_set(set);
    if (!data) GTEST_SKIP() << "sklearn's bundled data sets (python3-sklearn) are not installed";
    std::string file = temp_path(std::string(set) + "_threads.txt");
    write_text(file, format_libsvm(*data));
    auto fit = [&](const std::string& threads) {
      std::string model = file + ".j" + threads;
      auto train = run_command(
          wavekit("svm-train -b 1 -j " + threads + " " + opts + " " + file + " " + model));
      EXPECT_EQ(train.status, 0) << train.output;
      auto predict =
          run_command(wavekit("svm-predict -b 1 " + file + " " + model + " " + model + ".out"));
      EXPECT_EQ(predict.status, 0) << predict.output;
      auto cv = run_command(wavekit("svm-train -b 1 -v 3 -j " + threads + " " + opts + " " + file));
      EXPECT_EQ(cv.status, 0) << cv.output;
      return std::vector<std::string>{train.output, read_text(model), read_text(model + ".out"),
                                      cv.output};
    };
    auto one = fit("1");
    EXPECT_NE(one[0].find("optimization finished"), std::string::npos) << set;
    EXPECT_EQ(fit("2"), one) << set;
    EXPECT_EQ(fit("3"), one) << set;
  }
}

TEST(SvmCli, ErrorsAndHelp) {
  auto help = run_command(wavekit("svm-train --help"));
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.output.find("5 -- mixed"), std::string::npos) << help.output;
  EXPECT_EQ(run_command(wavekit("svm-train -s 3 x")).status, 2);
  EXPECT_EQ(run_command(wavekit("svm-train -t 9 x")).status, 2);
  EXPECT_EQ(run_command(wavekit("svm-train -c")).status, 2);
  std::string bad = temp_path("bad.txt");
  write_text(bad, "1 1:1\n2 1:x\n");
  auto r = run_command(wavekit("svm-train " + bad));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find(":2:5: the value of feature 1 is not a number"), std::string::npos)
      << r.output;
  // a test file with a label the model does not know: a warning naming it, counted as wrong
  std::string train_file = temp_path("t.txt"), test_file = temp_path("u.txt");
  write_text(train_file, "1 1:1\n1 1:0.9\n-1 1:-1\n-1 1:-0.8\n");
  write_text(test_file, "1 1:1\n7 1:-1\n");
  ASSERT_EQ(run_command(wavekit("svm-train -q " + train_file + " " + train_file + ".m")).status, 0);
  auto p = run_command(
      wavekit("svm-predict " + test_file + " " + train_file + ".m " + test_file + ".out"));
  EXPECT_EQ(p.status, 0);
  EXPECT_NE(p.output.find("labels the model does not know (counted as wrong): 7 (1)"),
            std::string::npos)
      << p.output;
  EXPECT_NE(p.output.find("Accuracy = 50% (1/2)"), std::string::npos) << p.output;
}

}  // namespace
}  // namespace wavekit::tune
