// C-SVC by SMO, following LIBSVM 3.24's algorithm (second-order working-set selection with
// the tau safeguard for non-PSD kernels, shrinking, an LRU kernel-row cache of Q values in
// single precision, one-vs-one multiclass with LIBSVM's label order and voting, Platt
// probabilities), so that on the same data and options the model, the decision values and
// the predictions are LIBSVM's. Besides LIBSVM's kernels, a mixed kernel (1-a)*K1 + a*K2 of
// any two built-in kernels, computed from one dot product per pair and cached squared norms.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace wavekit::tune {

enum class Kernel { linear = 0, poly = 1, rbf = 2, sigmoid = 3, precomputed = 4, mixed = 5 };

// The name LIBSVM's model file uses ("linear", "polynomial", "rbf", "sigmoid",
// "precomputed"; "mixed" is wavekit's), and the reverse.
const char* kernel_name(Kernel kernel);
Kernel kernel_from_name(const std::string& name);

// One kernel function with its parameters (a component of the mixed kernel, or the kernel).
struct KernelSpec {
  Kernel type = Kernel::rbf;
  int degree = 3;
  double gamma = 0;  // 0: 1/num_features (resolved by train())
  double coef0 = 0;
};

struct SvmParams {
  KernelSpec kernel;                  // for Kernel::mixed: first/second below, kernel.type == mixed
  KernelSpec first{Kernel::sigmoid};  // K1 of the mixed kernel
  KernelSpec second{Kernel::rbf};     // K2 of the mixed kernel
  double mix = 0.5;                   // a in (1-a)*K1 + a*K2
  double C = 1;
  double eps = 1e-3;
  double cache_mb = 100;
  bool shrinking = true;
  bool probability = false;
  std::vector<std::pair<int, double>> weights;  // -wLABEL WEIGHT: C of class LABEL *= WEIGHT
  bool balanced = false;  // also C_c *= n / (classes * n_c), sklearn's "balanced"
  int threads = 1;        // threads computing kernel rows and predictions
  bool quiet = true;      // false: LIBSVM's progress text on stdout
};

// Rows as read from a LIBSVM data file: the sparse entries (for writing models exactly as
// LIBSVM does) and a dense copy (for the kernels). Indices are >= 0 and strictly increasing.
struct Dataset {
  std::vector<double> y;
  std::vector<std::int64_t> row_start;  // CSR: entries of row i are [row_start[i], row_start[i+1])
  std::vector<int> index;
  std::vector<double> value;
  int max_index = 0;  // the largest feature index seen (LIBSVM's num_features)
  // dense row-major copy, columns 0..max_index
  std::vector<double> dense;
  std::size_t rows() const { return y.size(); }
  std::size_t cols() const { return static_cast<std::size_t>(max_index) + 1; }
  const double* row(std::size_t i) const { return dense.data() + i * cols(); }
  // Append a dense row (features 1..n, zeros omitted from the sparse part), as from a CSV.
  void add_dense_row(double label, const std::vector<double>& features);
  // Rebuild `dense` from the sparse part (after adding rows by hand). Throws wavekit::Error
  // naming `source` when the dense rows would take more than 2 GiB.
  void densify(const std::string& source = "data set");
  // A subset, in the order given.
  Dataset subset(const std::vector<std::size_t>& rows) const;
};

// LIBSVM's data format: "label index:value ...", one sample a line. Errors name the file,
// the line and the column.
Dataset read_libsvm(const std::string& path);
Dataset parse_libsvm(const std::string& text, const std::string& name);
std::string format_libsvm(const Dataset& data);

struct SvmModel {
  SvmParams params;  // gamma resolved
  int nr_class = 0;
  std::vector<int> label;                    // class labels, LIBSVM's order
  std::vector<int> nr_sv;                    // support vectors per class
  std::vector<double> rho;                   // one per pair (i<j)
  std::vector<double> prob_a, prob_b;        // Platt, one per pair (empty without -b 1)
  std::vector<std::vector<double>> sv_coef;  // (nr_class-1) x total
  Dataset sv;                                // the support vectors, grouped by class
  std::vector<int> sv_indices;               // 1-based indices into the training set
  // training report (not in the model file)
  std::vector<double> obj;      // dual objective per pair
  std::vector<int> iterations;  // SMO iterations per pair
  std::size_t total_sv() const { return sv.rows(); }
};

// Trains a C-SVC. Throws wavekit::Error for bad parameters (C <= 0, eps <= 0, ...).
SvmModel train(const Dataset& data, const SvmParams& params);

// Decision values (one per class pair, LIBSVM's order) and the voted label.
int predict(const SvmModel& model, const double* x, std::size_t dim,
            std::vector<double>* decision_values = nullptr);
// Platt probabilities per class (model.label order); needs a model trained with probability.
int predict_probability(const SvmModel& model, const double* x, std::size_t dim,
                        std::vector<double>* probabilities);
// Predicts every row of `data` (threads from the model's params).
std::vector<int> predict_all(const SvmModel& model, const Dataset& data,
                             std::vector<std::vector<double>>* decision_values = nullptr);

// LIBSVM's -v: stratified folds shuffled with LIBSVM's generator (glibc rand() from seed 1, as
// svm-train leaves it), so the folds, and the accuracy, are LIBSVM's.
std::vector<int> cross_validation(const Dataset& data, const SvmParams& params, int folds);

// LIBSVM's model file (readable by LIBSVM's svm-predict for the built-in kernels).
std::string format_model(const SvmModel& model);
void save_model(const std::string& path, const SvmModel& model);
SvmModel parse_model(const std::string& text, const std::string& name);
SvmModel load_model(const std::string& path);

// glibc's rand() (TYPE_3 additive feedback, seeded like srand(seed)), which LIBSVM uses for
// its cross-validation folds and Platt folds; its own instance, not the process's.
class GlibcRand {
 public:
  explicit GlibcRand(unsigned seed = 1);
  int operator()();

 private:
  std::uint32_t ring_[34];
  int pos_ = 0;  // the slot of r[i-34], to be overwritten by r[i]
};

}  // namespace wavekit::tune
