#include "wavekit/model/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "wavekit/support/error.h"

namespace wavekit::model {

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        row.push_back(field);
        rows.push_back(row);
      }
      row.clear();
      field.clear();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (any || !field.empty()) {
    row.push_back(field);
    rows.push_back(row);
  }
  return rows;
}

std::string kernel_base_name(const std::string& name) {
  std::string base = name.substr(0, name.find('('));
  // Drop a leading return type ("void kern") and template arguments.
  int depth = 0;
  std::string untemplated;
  for (char c : base) {
    if (c == '<')
      ++depth;
    else if (c == '>')
      --depth;
    else if (depth == 0)
      untemplated += c;
  }
  auto space = untemplated.rfind(' ');
  if (space != std::string::npos) untemplated = untemplated.substr(space + 1);
  auto scope = untemplated.rfind("::");
  if (scope != std::string::npos) untemplated = untemplated.substr(scope + 2);
  return untemplated;
}

namespace {

double to_number(const std::string& text, const std::string& where) {
  std::string t;
  for (char c : text)
    if (c != ',') t += c;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end) throw Error(where + ": '" + text + "' is not a number");
  return v;
}

double unit_scale(const std::string& unit) {
  static const std::map<std::string, double> scales = {
      {"", 1},        {"nsecond", 1e-9}, {"usecond", 1e-6}, {"msecond", 1e-3}, {"second", 1},
      {"ns", 1e-9},   {"us", 1e-6},      {"ms", 1e-3},      {"s", 1},          {"KB", 1e3},
      {"MB", 1e6},    {"GB", 1e9},       {"byte", 1},       {"Kbyte", 1e3},    {"Mbyte", 1e6},
      {"Gbyte", 1e9}, {"Tbyte", 1e12},   {"inst", 1},       {"Kinst", 1e3},    {"Minst", 1e6},
      {"Ginst", 1e9}, {"cycle", 1}};
  auto found = scales.find(unit);
  return found == scales.end() ? 1 : found->second;
}

}  // namespace

namespace {

// A hatchet profile (`wavekit profile`'s profile.hatchet, Proton's .hatchet): every leaf frame
// with launches is a kernel; its per-launch time, FLOPs and bytes are the sums over count.
void hatchet_leaves(const nlohmann::json& frame, std::vector<Measurement>& out) {
  if (!frame.is_object()) return;
  const nlohmann::json* children = frame.contains("children") ? &frame["children"] : nullptr;
  if (children && children->is_array() && !children->empty()) {
    for (const auto& child : *children) hatchet_leaves(child, out);
    return;
  }
  if (!frame.contains("metrics") || !frame.contains("frame")) return;
  const auto& metrics = frame["metrics"];
  double count = metrics.value("count", 0.0);
  if (count <= 0) return;
  Measurement m;
  m.kernel = frame["frame"].value("name", "");
  m.seconds = metrics.value("time (ns)", 0.0) * 1e-9 / count;
  if (metrics.contains("flops32")) m.fp32_flops = metrics["flops32"].get<double>() / count;
  if (metrics.contains("flops64")) m.fp64_flops = metrics["flops64"].get<double>() / count;
  if (metrics.contains("bytes")) m.dram_bytes = metrics["bytes"].get<double>() / count;
  out.push_back(m);
}

}  // namespace

std::vector<Measurement> read_measurements(const std::string& given) {
  std::string path = given;
  if (std::filesystem::is_directory(path))
    path = (std::filesystem::path(path) / "profile.hatchet").string();
  {
    std::ifstream in(path);
    if (!in) throw Error("cannot open " + path);
    char first = 0;
    while (in.get(first) && std::isspace(static_cast<unsigned char>(first))) {
    }
    if (first == '[') {
      in.seekg(0);
      nlohmann::json document;
      try {
        document = nlohmann::json::parse(in);
      } catch (const nlohmann::json::parse_error& e) {
        throw Error(path + ": " + e.what());
      }
      std::vector<Measurement> out;
      if (!document.empty()) hatchet_leaves(document[0], out);
      if (out.empty()) throw Error(path + ": a hatchet profile without kernel launches");
      return out;
    }
  }
  auto rows = read_csv(path);
  // ncu prints "==PROF==" lines before the CSV when not run with --log-file: skip them.
  while (!rows.empty() && !rows.front().empty() && rows.front()[0].rfind("==", 0) == 0)
    rows.erase(rows.begin());
  if (rows.empty()) throw Error(path + ": empty CSV");
  const auto& header = rows.front();
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  auto has = [&](const char* name) { return column.count(name) != 0; };
  auto field = [&](const std::vector<std::string>& row, const std::string& name) -> std::string {
    auto found = column.find(name);
    if (found == column.end() || found->second >= row.size()) return "";
    return row[found->second];
  };
  std::vector<Measurement> out;
  if (has("spPerf") && has("xtime") && has("traffic")) {  // gpuFLOPBench
    for (std::size_t r = 1; r < rows.size(); ++r) {
      const auto& row = rows[r];
      std::string where = path + ":" + std::to_string(r + 1);
      Measurement m;
      m.program = field(row, "targetName");
      m.kernel = has("kernelName") ? field(row, "kernelName") : field(row, "Kernel Name");
      m.arguments = field(row, "exeArgs");
      double xtime_ns = to_number(field(row, "xtime"), where);
      m.seconds = xtime_ns * 1e-9;
      m.fp32_flops = to_number(field(row, "spPerf"), where) * xtime_ns * 1e-9;
      m.fp64_flops = to_number(field(row, "dpPerf"), where) * xtime_ns * 1e-9;
      m.dram_bytes = to_number(field(row, "traffic"), where) * xtime_ns * 1e-9;
      out.push_back(m);
    }
    return out;
  }
  if (has("gpu__time_duration.sum") && has("Kernel Name")) {  // ncu --csv --page raw
    std::size_t first = 1;
    std::vector<std::string> units(header.size());
    if (rows.size() > 1 &&
        field(rows[1], "gpu__time_duration.sum").find_first_of("0123456789") == std::string::npos) {
      units = rows[1];  // the units row
      first = 2;
    }
    auto value = [&](const std::vector<std::string>& row, const std::string& name,
                     const std::string& where) -> std::optional<double> {
      auto found = column.find(name);
      if (found == column.end() || found->second >= row.size() || row[found->second].empty())
        return std::nullopt;
      double scale = found->second < units.size() ? unit_scale(units[found->second]) : 1;
      return to_number(row[found->second], where) * scale;
    };
    for (std::size_t r = first; r < rows.size(); ++r) {
      const auto& row = rows[r];
      std::string where = path + ":" + std::to_string(r + 1);
      Measurement m;
      m.kernel = field(row, "Kernel Name");
      m.program = has("Program") ? field(row, "Program") : field(row, "Process Name");
      auto t = value(row, "gpu__time_duration.sum", where);
      if (!t) continue;
      m.seconds = *t;
      // Nsight Compute's default unit for durations is the nanosecond.
      if (column["gpu__time_duration.sum"] >= units.size() ||
          units[column["gpu__time_duration.sum"]].empty())
        m.seconds *= 1e-9;
      auto sum = [&](std::initializer_list<std::pair<const char*, double>> metrics)
          -> std::optional<double> {
        double total = 0;
        bool any = false;
        for (const auto& [name, weight] : metrics)
          if (auto v = value(row, name, where)) {
            total += weight * *v;
            any = true;
          }
        return any ? std::optional<double>(total) : std::nullopt;
      };
      m.fp32_flops = sum({{"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 1},
                          {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 1},
                          {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2}});
      m.fp64_flops = sum({{"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", 1},
                          {"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", 1},
                          {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 2}});
      m.dram_bytes = sum({{"dram__bytes_read.sum", 1}, {"dram__bytes_write.sum", 1}});
      out.push_back(m);
    }
    return out;
  }
  if (has("kernel") && has("seconds")) {  // ours
    for (std::size_t r = 1; r < rows.size(); ++r) {
      const auto& row = rows[r];
      std::string where = path + ":" + std::to_string(r + 1);
      Measurement m;
      m.kernel = field(row, "kernel");
      m.program = field(row, "program");
      m.arguments = field(row, "arguments");
      m.seconds = to_number(field(row, "seconds"), where);
      auto optional = [&](const char* name) -> std::optional<double> {
        std::string text = field(row, name);
        if (text.empty()) return std::nullopt;
        return to_number(text, where);
      };
      m.fp32_flops = optional("fp32_flops");
      m.fp64_flops = optional("fp64_flops");
      m.dram_bytes = optional("dram_bytes");
      out.push_back(m);
    }
    return out;
  }
  throw Error(path +
              ": not a measurement CSV wavekit knows: expected gpuFLOPBench's columns "
              "(spPerf, dpPerf, traffic, xtime), Nsight Compute's raw page (Kernel Name, "
              "gpu__time_duration.sum, ...) or kernel,seconds[,fp32_flops,fp64_flops,dram_bytes]");
}

std::vector<ComparisonRow> compare(const std::vector<nlohmann::json>& predictions,
                                   const std::vector<Measurement>& measurements) {
  std::vector<ComparisonRow> rows;
  for (const auto& p : predictions) {
    std::string kernel = p.value("kernel", "");
    std::string program = p.value("program", "");
    std::string base = kernel_base_name(kernel);
    double seconds = 0, f32 = 0, f64 = 0, bytes = 0;
    std::size_t n = 0, nf = 0, nb = 0;
    // The launch of the kernel that the prediction is of (a whole program's, `wavekit model
    // run`), else the first: later launches of a program may run other sizes.
    std::uint64_t skip = p.value("launch", std::uint64_t{0});
    for (const auto& m : measurements) {
      if (kernel_base_name(m.kernel) != base) continue;
      if (!program.empty() && !m.program.empty() && m.program != program) continue;
      if (skip > 0) {
        --skip;
        continue;
      }
      if (n > 0) break;
      seconds += m.seconds;
      ++n;
      if (m.fp32_flops || m.fp64_flops) {
        f32 += m.fp32_flops.value_or(0);
        f64 += m.fp64_flops.value_or(0);
        ++nf;
      }
      if (m.dram_bytes) {
        bytes += *m.dram_bytes;
        ++nb;
      }
    }
    if (!n) continue;
    ComparisonRow row;
    row.program = program;
    row.kernel = base;
    row.machine = p.value("machine", "");
    row.bound = p.value("bound", "");
    row.measured_seconds = seconds / double(n);
    row.predicted_seconds = p.value("seconds", 0.0);
    if (nf) {
      row.measured_flops = (f32 + f64) / double(nf);
      row.predicted_flops = p.value("fp32_flops", 0.0) + p.value("fp64_flops", 0.0);
    }
    if (nb) {
      row.measured_bytes = bytes / double(nb);
      row.predicted_bytes = p.value("dram_bytes", 0.0);
    }
    rows.push_back(row);
  }
  return rows;
}

ComparisonSummary summarise(const std::vector<ComparisonRow>& rows) {
  ComparisonSummary s;
  std::vector<double> errors;
  for (const auto& row : rows) {
    ++s.kernels;
    if (row.measured_flops && *row.measured_flops > 0) {
      ++s.flop_kernels;
      if (std::fabs(*row.predicted_flops / *row.measured_flops - 1) <= 0.05) ++s.flops_within_5;
    }
    if (row.measured_bytes && *row.measured_bytes > 0) {
      ++s.byte_kernels;
      if (std::fabs(*row.predicted_bytes / *row.measured_bytes - 1) <= 0.30) ++s.bytes_within_30;
    }
    if (row.measured_seconds > 0) {
      double r = row.predicted_seconds / row.measured_seconds;
      errors.push_back(std::fabs(r - 1));
      if (r >= 0.5 && r <= 2) ++s.time_within_2x;
    }
  }
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    std::size_t n = errors.size();
    s.time_median_abs_error = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
  }
  return s;
}

std::string comparison_table(const std::vector<ComparisonRow>& rows, const ComparisonSummary& s) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %-28s %12s %12s %7s %12s %12s %7s %10s %10s %6s %-8s\n",
                "program", "kernel", "FLOP meas", "FLOP pred", "ratio", "DRAM B meas",
                "DRAM B pred", "ratio", "t meas us", "t pred us", "ratio", "bound");
  out << line;
  auto ratio = [](const std::optional<double>& p, const std::optional<double>& m) -> std::string {
    if (!p || !m || *m <= 0) return "-";
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", *p / *m);
    return b;
  };
  auto num = [](const std::optional<double>& v) -> std::string {
    if (!v) return "-";
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", *v);
    return b;
  };
  for (const auto& r : rows) {
    std::snprintf(
        line, sizeof line, "%-24s %-28s %12s %12s %7s %12s %12s %7s %10.2f %10.2f %6.2f %-8s\n",
        r.program.substr(0, 24).c_str(), r.kernel.substr(0, 28).c_str(),
        num(r.measured_flops).c_str(), num(r.predicted_flops).c_str(),
        ratio(r.predicted_flops, r.measured_flops).c_str(), num(r.measured_bytes).c_str(),
        num(r.predicted_bytes).c_str(), ratio(r.predicted_bytes, r.measured_bytes).c_str(),
        r.measured_seconds * 1e6, r.predicted_seconds * 1e6,
        r.measured_seconds > 0 ? r.predicted_seconds / r.measured_seconds : 0.0, r.bound.c_str());
    out << line;
  }
  std::snprintf(
      line, sizeof line,
      "\n%zu kernels: FLOPs within 5 %% for %zu of %zu; DRAM bytes within 30 %% for %zu of %zu; "
      "time median |error| %.1f %%, within 2x for %zu of %zu\n",
      s.kernels, s.flops_within_5, s.flop_kernels, s.bytes_within_30, s.byte_kernels,
      s.time_median_abs_error * 100, s.time_within_2x, s.kernels);
  out << line;
  return out.str();
}

nlohmann::json to_json(const std::vector<ComparisonRow>& rows, const ComparisonSummary& s) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json row = {{"program", r.program},
                          {"kernel", r.kernel},
                          {"machine", r.machine},
                          {"measured_seconds", r.measured_seconds},
                          {"predicted_seconds", r.predicted_seconds},
                          {"bound", r.bound}};
    if (r.measured_flops)
      row["measured_flops"] = *r.measured_flops, row["predicted_flops"] = *r.predicted_flops;
    if (r.measured_bytes)
      row["measured_dram_bytes"] = *r.measured_bytes,
      row["predicted_dram_bytes"] = *r.predicted_bytes;
    list.push_back(row);
  }
  return {{"rows", list},
          {"summary",
           {{"kernels", s.kernels},
            {"flop_kernels", s.flop_kernels},
            {"flops_within_5_percent", s.flops_within_5},
            {"byte_kernels", s.byte_kernels},
            {"bytes_within_30_percent", s.bytes_within_30},
            {"time_median_abs_error", s.time_median_abs_error},
            {"time_within_2x", s.time_within_2x}}}};
}

}  // namespace wavekit::model
