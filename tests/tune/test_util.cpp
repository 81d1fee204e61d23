#include "test_util.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

namespace wavekit::tune::testing {

CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string temp_path(const std::string& name) {
  static std::atomic<int> counter{0};
  return ::testing::TempDir() + "tune_" + std::to_string(getpid()) + "_" +
         std::to_string(counter++) + "_" + name;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

bool have(const char* program) { return program[0] && access(program, X_OK) == 0; }

std::optional<Dataset> sklearn_set(const std::string& name) {
  std::string dir = WAVEKIT_SKLEARN_DATA;
  std::string file = dir + "/" + (name == "wine" ? "wine_data.csv" : name + ".csv");
  std::string text;
  if (name == "digits") {
    if (access((dir + "/digits.csv.gz").c_str(), R_OK) != 0) return std::nullopt;
    text = run_command("gzip -dc " + dir + "/digits.csv.gz").output;
  } else {
    if (access(file.c_str(), R_OK) != 0) return std::nullopt;
    text = read_text(file);
  }
  std::vector<std::vector<double>> rows;
  std::vector<double> labels;
  std::istringstream in(text);
  std::string line;
  bool first = name != "digits";  // the others start with a "n,d,names..." line
  while (std::getline(in, line)) {
    if (first) {
      first = false;
      continue;
    }
    if (line.empty()) continue;
    std::vector<double> v;
    std::stringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) v.push_back(std::stod(cell));
    labels.push_back(v.back());
    v.pop_back();
    rows.push_back(v);
  }
  std::size_t d = rows.at(0).size();
  for (std::size_t k = 0; k < d; ++k) {
    double lo = rows[0][k], hi = rows[0][k];
    for (auto& r : rows) lo = std::min(lo, r[k]), hi = std::max(hi, r[k]);
    for (auto& r : rows) r[k] = hi > lo ? -1 + 2 * (r[k] - lo) / (hi - lo) : 0;
  }
  Dataset out;
  for (std::size_t i = 0; i < rows.size(); ++i) out.add_dense_row(labels[i], rows[i]);
  out.densify();
  // Round-trip through the text format so that LIBSVM reads exactly these values.
  return parse_libsvm(format_libsvm(out), name);
}

}  // namespace wavekit::tune::testing
