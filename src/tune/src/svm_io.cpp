// LIBSVM's data and model file formats.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string_view>

#include "wavekit/support/error.h"
#include "wavekit/support/file.h"
#include "wavekit/tune/svm.h"

namespace wavekit::tune {
namespace {

std::string read_text(const std::string& path) {
  auto bytes = read_file(path);
  return std::string(bytes.begin(), bytes.end());
}

// The largest feature index a data or model file may name (rows are kept dense).
constexpr int kMaxFeatureIndex = 100000000;
// The dense copy of a data set is refused beyond this (a clear error, not an allocation failure).
constexpr double kMaxDenseBytes = 2.0 * (1 << 30);

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// %.17g / %.8g as LIBSVM writes them: std::to_chars with a precision is printf's %g in the C
// locale, the same characters, several times faster (most of writing a model's time).
std::string g(double v, int precision) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, precision);
  return std::string(buf, r.ptr);
}
std::string g17(double v) { return g(v, 17); }
// The same appended to `out`, without a string per number (most of a model file is numbers).
void append_g(std::string& out, double v, int precision) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, precision);
  out.append(buf, r.ptr);
}
void append_int(std::string& out, long long v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// strtod(b, end) for a number that ends at a space or at lim, faster: std::from_chars
// (correctly rounded, as glibc's strtod) where it reads such a number, strtod itself otherwise
// (hexadecimal, out of range, a malformed number), so that what is accepted, its value, errno
// and *end are strtod's. A '+' that strtod allows before digits, from_chars does not: it is
// stepped over. Reading a 5,000-row file took 10 ms, mostly strtod.
double fast_strtod(const char* b, const char* lim, char** end) {
  const char* s = b;
  if (s + 1 < lim && s[0] == '+' && (std::isdigit(static_cast<unsigned char>(s[1])) || s[1] == '.'))
    ++s;
  double v;
  auto r = std::from_chars(s, lim, v);
  if (r.ec == std::errc() && r.ptr != s && (r.ptr == lim || is_space(*r.ptr))) {
    errno = 0;
    *end = const_cast<char*>(r.ptr);
    return v;
  }
  errno = 0;
  return std::strtod(b, end);
}

}  // namespace

void Dataset::add_dense_row(double label, const std::vector<double>& features) {
  if (row_start.empty()) row_start.push_back(0);
  y.push_back(label);
  for (std::size_t k = 0; k < features.size(); ++k)
    if (features[k] != 0) {
      index.push_back(static_cast<int>(k + 1));
      value.push_back(features[k]);
    }
  row_start.push_back(static_cast<std::int64_t>(index.size()));
  max_index = std::max(max_index, static_cast<int>(features.size()));
}

void Dataset::densify(const std::string& source) {
  if (row_start.empty()) row_start.push_back(0);
  for (int idx : index) max_index = std::max(max_index, idx);
  double bytes = static_cast<double>(rows()) * static_cast<double>(cols()) * sizeof(double);
  if (bytes > kMaxDenseBytes) {
    char size[32];
    std::snprintf(size, sizeof size, "%.1f GiB", bytes / (1 << 30));
    fail(source, std::to_string(rows()) + " rows with feature indices up to " +
                     std::to_string(max_index) + " take " + size +
                     " as dense rows, more than the " +
                     std::to_string(static_cast<int>(kMaxDenseBytes / (1 << 30))) +
                     " GiB allowed: wavekit's SVM keeps rows "
                     "dense, so very sparse high-dimensional data does not fit");
  }
  dense.assign(rows() * cols(), 0.0);
  for (std::size_t i = 0; i < rows(); ++i)
    for (auto k = row_start[i]; k < row_start[i + 1]; ++k) dense[i * cols() + index[k]] = value[k];
}

Dataset Dataset::subset(const std::vector<std::size_t>& picked) const {
  Dataset out;
  out.max_index = max_index;
  out.row_start.push_back(0);
  out.y.reserve(picked.size());
  out.dense.reserve(picked.size() * cols());
  for (std::size_t r : picked) {
    out.y.push_back(y[r]);
    for (auto k = row_start[r]; k < row_start[r + 1]; ++k) {
      out.index.push_back(index[k]);
      out.value.push_back(value[k]);
    }
    out.row_start.push_back(static_cast<std::int64_t>(out.index.size()));
    out.dense.insert(out.dense.end(), dense.begin() + r * cols(), dense.begin() + (r + 1) * cols());
  }
  return out;
}

Dataset parse_libsvm(const std::string& text, const std::string& name) {
  Dataset d;
  d.row_start.push_back(0);
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    ++line_no;
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    auto where = [&](std::size_t col) {
      return name + ":" + std::to_string(line_no) + ":" + std::to_string(col + 1);
    };
    std::size_t c = 0;
    while (c < line.size() && is_space(line[c])) ++c;
    if (c == line.size() || line[c] == '#') continue;  // blank line (LIBSVM rejects; we skip)
    // label
    const char* begin = line.c_str() + c;
    char* end;
    errno = 0;
    double label = std::strtod(begin, &end);
    if (end == begin || (end[0] && !is_space(end[0])) || errno == ERANGE || !std::isfinite(label))
      fail(where(c), "the label is not a number");
    c += end - begin;
    int last = -1;
    for (;;) {
      while (c < line.size() && is_space(line[c])) ++c;
      if (c == line.size()) break;
      std::size_t start = c;
      const char* b = line.c_str() + c;
      errno = 0;
      long idx = std::strtol(b, &end, 10);
      if (end == b || *end != ':')
        fail(where(start), "expected index:value, found '" +
                               line.substr(start, line.find_first_of(" \t", start) - start) + "'");
      if (errno == ERANGE || idx < 0 || idx > kMaxFeatureIndex)
        fail(where(start), "feature index " + std::string(b, static_cast<std::size_t>(end - b)) +
                               " is out of range");
      if (idx <= last)
        fail(where(start), "feature indices must be in increasing order (" + std::to_string(idx) +
                               " after " + std::to_string(last) + ")");
      c += end - b + 1;
      b = line.c_str() + c;
      double v = fast_strtod(b, line.c_str() + line.size(), &end);
      if (end == b || (end[0] && !is_space(end[0])))
        fail(where(c), "the value of feature " + std::to_string(idx) + " is not a number");
      if ((errno == ERANGE && std::fabs(v) > 1) || !std::isfinite(v))
        fail(where(c), "the value of feature " + std::to_string(idx) + " is out of range");
      c += end - b;
      d.index.push_back(static_cast<int>(idx));
      d.value.push_back(v);
      d.max_index = std::max(d.max_index, static_cast<int>(idx));
      last = static_cast<int>(idx);
    }
    d.y.push_back(label);
    d.row_start.push_back(static_cast<std::int64_t>(d.index.size()));
  }
  d.densify(name);
  return d;
}

Dataset read_libsvm(const std::string& path) { return parse_libsvm(read_text(path), path); }

std::string format_libsvm(const Dataset& data) {
  std::string out;
  for (std::size_t i = 0; i < data.rows(); ++i) {
    out += g17(data.y[i]);
    for (auto k = data.row_start[i]; k < data.row_start[i + 1]; ++k)
      out += " " + std::to_string(data.index[k]) + ":" + g17(data.value[k]);
    out += "\n";
  }
  return out;
}

std::string format_model(const SvmModel& m) {
  const SvmParams& p = m.params;
  std::string o = "svm_type c_svc\nkernel_type ";
  o += kernel_name(p.kernel.type);
  o += "\n";
  auto spec = [&](const KernelSpec& s, const std::string& suffix) {
    if (s.type == Kernel::poly) o += "degree" + suffix + " " + std::to_string(s.degree) + "\n";
    if (s.type == Kernel::poly || s.type == Kernel::rbf || s.type == Kernel::sigmoid)
      o += "gamma" + suffix + " " + g17(s.gamma) + "\n";
    if (s.type == Kernel::poly || s.type == Kernel::sigmoid)
      o += "coef0" + suffix + " " + g17(s.coef0) + "\n";
  };
  if (p.kernel.type == Kernel::mixed) {
    o += std::string("mixed_kernels ") + kernel_name(p.first.type) + " " +
         kernel_name(p.second.type) + "\nmix_weight " + g17(p.mix) + "\n";
    spec(p.first, "");
    spec(p.second, "_2");
  } else {
    spec(p.kernel, "");
  }
  o += "nr_class " + std::to_string(m.nr_class) + "\ntotal_sv " + std::to_string(m.total_sv()) +
       "\nrho";
  for (double r : m.rho) o += " " + g17(r);
  o += "\nlabel";
  for (int l : m.label) o += " " + std::to_string(l);
  o += "\n";
  if (!m.prob_a.empty()) {
    o += "probA";
    for (double v : m.prob_a) o += " " + g17(v);
    o += "\nprobB";
    for (double v : m.prob_b) o += " " + g17(v);
    o += "\n";
  }
  o += "nr_sv";
  for (int n : m.nr_sv) o += " " + std::to_string(n);
  o += "\nSV\n";
  o.reserve(o.size() + m.sv.index.size() * 18 + m.total_sv() * 24 * m.sv_coef.size());
  for (std::size_t i = 0; i < m.total_sv(); ++i) {
    for (int j = 0; j < m.nr_class - 1; ++j) {
      append_g(o, m.sv_coef[j][i], 17);
      o += ' ';
    }
    if (p.kernel.type == Kernel::precomputed) {
      o += "0:";
      append_int(o, static_cast<int>(m.sv.row(i)[0]));
      o += ' ';
    } else {
      for (auto k = m.sv.row_start[i]; k < m.sv.row_start[i + 1]; ++k) {
        append_int(o, m.sv.index[k]);
        o += ':';
        append_g(o, m.sv.value[k], 8);
        o += ' ';
      }
    }
    o += '\n';
  }
  return o;
}

void save_model(const std::string& path, const SvmModel& model) {
  write_file(path, format_model(model));
}

SvmModel parse_model(const std::string& text, const std::string& name) {
  SvmModel m;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  auto bad = [&](const std::string& why) {
    fail(name + ":" + std::to_string(line_no), "bad model file: " + why);
  };
  auto num = [&](const std::string& s) {
    char* end;
    double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end) bad("'" + s + "' is not a number");
    return v;
  };
  // A number that fills `t` (strtod's value, from_chars' speed: most of a model file is numbers).
  auto num_view = [&](std::string_view t) {
    char* end;
    double v = fast_strtod(t.data(), t.data() + t.size(), &end);
    if (end != t.data() + t.size()) return num(std::string(t));  // num names what is wrong
    return v;
  };
  // A count, label or index: a whole number in [lo, hi], checked before it is converted. Plain
  // decimal digits in range are read as an integer directly (the same value).
  auto whole = [&](std::string_view s, double lo, double hi) {
    int n;
    auto r = std::from_chars(s.data(), s.data() + s.size(), n);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size() && n >= lo && n <= hi) return n;
    double v = num_view(s);
    if (!(v >= lo && v <= hi) || v != std::floor(v))
      bad("'" + std::string(s) + "' is not a whole number in [" + std::to_string(std::int64_t(lo)) +
          ", " + std::to_string(std::int64_t(hi)) + "]");
    return static_cast<int>(v);
  };
  constexpr double kIntMax = std::numeric_limits<int>::max();
  constexpr double kIntMin = std::numeric_limits<int>::min();
  auto pairs = [&] {
    return static_cast<std::size_t>(m.nr_class) * static_cast<std::size_t>(m.nr_class - 1) / 2;
  };
  int total = -1;
  bool sv_section = false;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (key.empty()) continue;
    std::vector<std::string> vals;
    for (std::string v; ls >> v;) vals.push_back(v);
    auto need = [&](std::size_t n) {
      if (vals.size() != n)
        bad(key + " needs " + std::to_string(n) + " values, has " + std::to_string(vals.size()));
    };
    if (key == "svm_type") {
      need(1);
      if (vals[0] != "c_svc") bad("svm_type " + vals[0] + " is not supported (only c_svc)");
    } else if (key == "kernel_type") {
      need(1);
      m.params.kernel.type = kernel_from_name(vals[0]);
    } else if (key == "mixed_kernels") {
      need(2);
      m.params.first.type = kernel_from_name(vals[0]);
      m.params.second.type = kernel_from_name(vals[1]);
    } else if (key == "mix_weight") {
      need(1);
      m.params.mix = num(vals[0]);
    } else if (key == "degree" || key == "gamma" || key == "coef0" || key == "degree_2" ||
               key == "gamma_2" || key == "coef0_2") {
      need(1);
      bool second = key.back() == '2';
      KernelSpec& s = m.params.kernel.type == Kernel::mixed
                          ? (second ? m.params.second : m.params.first)
                          : m.params.kernel;
      std::string base = key.substr(0, key.find('_'));
      double v = num(vals[0]);
      if (base == "degree") s.degree = whole(vals[0], 0, kIntMax);
      if (base == "gamma") s.gamma = v;
      if (base == "coef0") s.coef0 = v;
    } else if (key == "nr_class") {
      need(1);
      m.nr_class = whole(vals[0], 1, 100000);
    } else if (key == "total_sv") {
      need(1);
      total = whole(vals[0], 0, kIntMax);
    } else if (key == "rho") {
      need(pairs());
      for (auto& v : vals) m.rho.push_back(num(v));
    } else if (key == "label") {
      need(m.nr_class);
      for (auto& v : vals) m.label.push_back(whole(v, kIntMin, kIntMax));
    } else if (key == "probA" || key == "probB") {
      need(pairs());
      for (auto& v : vals) (key == "probA" ? m.prob_a : m.prob_b).push_back(num(v));
    } else if (key == "nr_sv") {
      need(m.nr_class);
      for (auto& v : vals) m.nr_sv.push_back(whole(v, 0, kIntMax));
    } else if (key == "SV") {
      sv_section = true;
      break;
    } else {
      bad("unknown text in model file: '" + key + "'");
    }
  }
  if (!sv_section) bad("no SV section");
  if (total < 0 || m.label.size() != std::size_t(m.nr_class) || m.nr_sv.size() != m.label.size())
    bad("missing nr_class, total_sv, label or nr_sv");
  std::int64_t sum = 0;
  for (int n : m.nr_sv) sum += n;
  if (sum != total) bad("nr_sv does not add up to total_sv");
  if (static_cast<std::size_t>(total) >
      static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1)
    bad("total_sv " + std::to_string(total) + " is more than the file's lines");
  m.sv_coef.assign(std::max(m.nr_class - 1, 0), std::vector<double>(total));
  m.sv.row_start.push_back(0);
  // The support vectors, most of a model file, split on white space as the header's lines are
  // (istream >>) but without a string per token.
  auto token = [](const char*& c, const char* e, std::string_view* out) {
    while (c < e && std::isspace(static_cast<unsigned char>(*c))) ++c;
    const char* b = c;
    while (c < e && !std::isspace(static_cast<unsigned char>(*c))) ++c;
    *out = std::string_view(b, static_cast<std::size_t>(c - b));
    return c > b;
  };
  // The support vector lines read in place from `text` (as getline would: up to each '\n').
  std::size_t at = static_cast<std::size_t>(in.tellg());
  for (int i = 0; i < total; ++i) {
    if (at >= text.size()) bad("fewer support vectors than total_sv");
    std::size_t eol = text.find('\n', at);
    if (eol == std::string::npos) eol = text.size();
    ++line_no;
    const char *c = text.data() + at, *e = text.data() + eol;
    at = eol + 1;
    std::string_view tok;
    for (int j = 0; j < m.nr_class - 1; ++j) {
      if (!token(c, e, &tok)) bad("missing coefficient");
      m.sv_coef[j][i] = num_view(tok);
    }
    int last = -1;
    while (token(c, e, &tok)) {
      auto colon = tok.find(':');
      if (colon == std::string_view::npos)
        bad("expected index:value, found '" + std::string(tok) + "'");
      int idx = whole(tok.substr(0, colon), 0, kMaxFeatureIndex);
      if (idx <= last) bad("feature indices must increase");
      last = idx;
      double value = num_view(tok.substr(colon + 1));
      // A precomputed kernel's support vector is "0:N", N the training sample's serial number.
      if (m.params.kernel.type == Kernel::precomputed &&
          (idx != 0 || !(value >= 1 && value <= kMaxFeatureIndex) || value != std::floor(value)))
        bad("a precomputed kernel's support vector is 0:SERIAL (a whole number >= 1), found '" +
            std::string(tok) + "'");
      m.sv.index.push_back(idx);
      m.sv.value.push_back(value);
    }
    if (m.params.kernel.type == Kernel::precomputed && last != 0)
      bad("a precomputed kernel's support vector is 0:SERIAL, found no entry");
    m.sv.y.push_back(0);
    m.sv.row_start.push_back(static_cast<std::int64_t>(m.sv.index.size()));
  }
  m.sv.densify(name);
  return m;
}

SvmModel load_model(const std::string& path) { return parse_model(read_text(path), path); }

}  // namespace wavekit::tune
