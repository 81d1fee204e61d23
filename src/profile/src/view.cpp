#include "wavekit/profile/view.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "json_text.h"
#include "peaks.h"
#include "wavekit/support/error.h"

namespace wavekit::profile {

using nlohmann::json;

namespace {

std::optional<std::regex> compile(const std::string& pattern, const char* option) {
  if (pattern.empty()) return std::nullopt;
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    fail(option, "'" + pattern + "' is not a valid regular expression (" + e.what() + ")");
  }
}

std::unique_ptr<ProfileNode> filter_node(const ProfileNode& node,
                                         const std::optional<std::regex>& include,
                                         const std::optional<std::regex>& exclude, bool included) {
  if (exclude && std::regex_search(node.name, *exclude)) return nullptr;
  bool self_included = included || !include || std::regex_search(node.name, *include);
  auto copy = std::make_unique<ProfileNode>();
  copy->name = node.name;
  copy->is_kernel = node.is_kernel;
  copy->device = node.device;
  if (node.is_kernel) {
    if (!self_included) return nullptr;
    copy->metrics = node.metrics;
    return copy;
  }
  for (const auto& c : node.children)
    if (auto kept = filter_node(*c, include, exclude, self_included))
      copy->children.push_back(std::move(kept));
  if (copy->children.empty() && !self_included) return nullptr;
  return copy;
}

struct Peaks {
  std::optional<DevicePeaks> device;
  double clock_mhz = 0;
};

Peaks peaks_for(const Profile& profile, const ViewOptions& options) {
  Peaks peaks;
  peaks.clock_mhz = options.clock_mhz;
  if (!options.device_model.empty()) {
    peaks.device = find_device(options.device_model);
    if (!peaks.device)
      fail("--device",
           "unknown GPU '" + options.device_model + "' (known: H100, H200, A100, MI250X, MI300X)");
  } else if (!profile.devices.empty()) {
    const DeviceInfo& d = profile.devices.begin()->second;
    peaks.device = find_device(d.model);
    if (peaks.clock_mhz == 0 && d.clock_khz) peaks.clock_mhz = d.clock_khz / 1000.0;
  }
  return peaks;
}

std::string format_time(std::uint64_t ns) {
  char buf[32];
  if (ns >= 1000000000ull)
    std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  else if (ns >= 1000000ull)
    std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  else if (ns >= 1000ull)
    std::snprintf(buf, sizeof buf, "%.3f us", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%" PRIu64 " ns", ns);
  return buf;
}

// A time, marked "~" when it is an estimate (not every launch was timed; Metrics).
std::string format_time(std::uint64_t ns, const Metrics& m) {
  return (m.estimated() ? "~" : "") + format_time(ns);
}

std::string format_rate(double flops_per_s) {
  char buf[32];
  if (flops_per_s <= 0) return "-";
  if (flops_per_s >= 1e12)
    std::snprintf(buf, sizeof buf, "%.1f TF/s", flops_per_s / 1e12);
  else if (flops_per_s >= 1e9)
    std::snprintf(buf, sizeof buf, "%.1f GF/s", flops_per_s / 1e9);
  else
    std::snprintf(buf, sizeof buf, "%.3g F/s", flops_per_s);
  return buf;
}

double flops_rate(const Metrics& m) {
  return m.time_ns ? m.total_flops() / (static_cast<double>(m.time_ns) * 1e-9) : 0;
}

std::optional<double> util_of(const Metrics& m, const Peaks& peaks) {
  if (!peaks.device || (m.total_flops() == 0 && m.bytes == 0)) return std::nullopt;
  return utilisation(m, *peaks.device, peaks.clock_mhz);
}

std::string format_util(std::optional<double> u) {
  if (!u) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f%%", *u * 100);
  return buf;
}

void tree_lines(const ProfileNode& node, std::size_t depth, const ViewOptions& options,
                const Peaks& peaks, std::uint64_t total, std::string& out) {
  if (depth > options.max_depth) return;
  if (total && static_cast<double>(node.metrics.time_ns) < options.min_fraction * total) return;
  char line[512];
  std::string label = std::string(depth * 2, ' ') + node.name;
  std::snprintf(
      line, sizeof line, "%14s %10" PRIu64 " %12s %11s %7s  %s\n",
      format_time(node.metrics.time_ns, node.metrics).c_str(), node.metrics.count,
      format_time(node.metrics.count ? node.metrics.time_ns / node.metrics.count : 0, node.metrics)
          .c_str(),
      format_rate(flops_rate(node.metrics)).c_str(),
      format_util(util_of(node.metrics, peaks)).c_str(), label.c_str());
  out += line;
  std::vector<const ProfileNode*> children;
  for (const auto& c : node.children) children.push_back(c.get());
  // std::sort with a name tie-break: deterministic output (stable_sort trips a deprecation
  // warning in this libstdc++ under clang).
  std::sort(children.begin(), children.end(), [](auto* a, auto* b) {
    if (a->metrics.time_ns != b->metrics.time_ns) return a->metrics.time_ns > b->metrics.time_ns;
    return a->name < b->name;
  });
  for (const ProfileNode* c : children) tree_lines(*c, depth + 1, options, peaks, total, out);
}

// Kernels aggregated by name over all contexts.
std::vector<std::pair<std::string, Metrics>> by_kernel(const Profile& profile) {
  std::map<std::string, Metrics> kernels;
  std::vector<const ProfileNode*> stack{&profile.root};
  while (!stack.empty()) {
    const ProfileNode* n = stack.back();
    stack.pop_back();
    if (n->is_kernel) kernels[n->name].merge(n->metrics);
    for (const auto& c : n->children) stack.push_back(c.get());
  }
  std::vector<std::pair<std::string, Metrics>> sorted(kernels.begin(), kernels.end());
  std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) {
    if (a.second.time_ns != b.second.time_ns) return a.second.time_ns > b.second.time_ns;
    return a.first < b.first;
  });
  return sorted;
}

// Paths ("a / b / kernel") of every frame with its metrics.
void flatten(const ProfileNode& node, const std::string& prefix,
             std::map<std::string, Metrics>& out) {
  for (const auto& c : node.children) {
    std::string path = prefix.empty() ? c->name : prefix + " / " + c->name;
    out[path].merge(c->metrics);
    flatten(*c, path, out);
  }
}

// Frames of both profiles by path, with each side's metrics (zero where absent).
std::map<std::string, std::pair<Metrics, Metrics>> diff_rows(const Profile& base,
                                                             const Profile& other,
                                                             const ViewOptions& options) {
  std::map<std::string, Metrics> a, b;
  flatten(filter_profile(base, options).root, "", a);
  flatten(filter_profile(other, options).root, "", b);
  std::map<std::string, std::pair<Metrics, Metrics>> all;
  for (auto& [k, m] : a) all[k].first = m;
  for (auto& [k, m] : b) all[k].second = m;
  return all;
}

const char* kHeader = "          time      count          avg      FLOP/s    util  frame\n";

// Says what "~" means, under a view with estimated times.
std::string estimate_note(const Metrics& total) {
  if (!total.estimated()) return "";
  char line[256];
  std::snprintf(line, sizeof line,
                "~ estimated: %" PRIu64 " of %" PRIu64
                " launches timed (--time-every); each kernel's mean times its count\n",
                total.timed, total.count);
  return line;
}

}  // namespace

Profile filter_profile(const Profile& profile, const ViewOptions& options) {
  auto include = compile(options.include, "--include");
  auto exclude = compile(options.exclude, "--exclude");
  Profile out;
  out.devices = profile.devices;
  out.self = profile.self;
  out.first_phase = profile.first_phase;
  out.last_phase = profile.last_phase;
  out.start_ns = profile.start_ns;
  out.end_ns = profile.end_ns;
  for (const auto& c : profile.root.children)
    if (auto kept = filter_node(*c, include, exclude, false))
      out.root.children.push_back(std::move(kept));
  out.sum_up();
  return out;
}

std::string render_tree(const Profile& profile, const ViewOptions& options) {
  Profile filtered = filter_profile(profile, options);
  Peaks peaks = peaks_for(filtered, options);
  std::string out = kHeader;
  tree_lines(filtered.root, 0, options, peaks, filtered.root.metrics.time_ns, out);
  return out + estimate_note(filtered.root.metrics);
}

std::string render_top(const Profile& profile, const ViewOptions& options) {
  Profile filtered = filter_profile(profile, options);
  Peaks peaks = peaks_for(filtered, options);
  auto kernels = by_kernel(filtered);
  std::uint64_t total = filtered.root.metrics.time_ns;
  std::string out = "          time  share      count          avg      FLOP/s    util  kernel\n";
  for (std::size_t i = 0; i < kernels.size() && i < options.top; ++i) {
    const auto& [name, m] = kernels[i];
    char line[512];
    std::snprintf(line, sizeof line, "%14s %5.1f%% %10" PRIu64 " %12s %11s %7s  %s\n",
                  format_time(m.time_ns, m).c_str(), total ? 100.0 * m.time_ns / total : 0.0,
                  m.count, format_time(m.count ? m.time_ns / m.count : 0, m).c_str(),
                  format_rate(flops_rate(m)).c_str(), format_util(util_of(m, peaks)).c_str(),
                  name.c_str());
    out += line;
  }
  return out + estimate_note(filtered.root.metrics);
}

std::string render_diff(const Profile& base, const Profile& other, const ViewOptions& options) {
  auto all = diff_rows(base, other, options);
  std::vector<std::pair<std::string, std::pair<Metrics, Metrics>>> rows(all.begin(), all.end());
  auto delta = [](const auto& r) {
    return static_cast<double>(r.second.second.time_ns) -
           static_cast<double>(r.second.first.time_ns);
  };
  std::sort(rows.begin(), rows.end(), [&](auto& x, auto& y) {
    if (std::abs(delta(x)) != std::abs(delta(y))) return std::abs(delta(x)) > std::abs(delta(y));
    return x.first < y.first;
  });
  std::string out = "     base time    other time        delta   change  base n  other n  frame\n";
  for (std::size_t i = 0; i < rows.size() && i < options.top; ++i) {
    const auto& [path, pair] = rows[i];
    double d = delta(rows[i]);
    char change[16] = "new";
    if (pair.first.time_ns)
      std::snprintf(change, sizeof change, "%+.1f%%", 100.0 * d / pair.first.time_ns);
    char line[1024];
    std::snprintf(line, sizeof line, "%14s %13s %12s %8s %7" PRIu64 " %8" PRIu64 "  %s\n",
                  format_time(pair.first.time_ns).c_str(), format_time(pair.second.time_ns).c_str(),
                  (d < 0 ? "-" + format_time(static_cast<std::uint64_t>(-d))
                         : "+" + format_time(static_cast<std::uint64_t>(d)))
                      .c_str(),
                  change, pair.first.count, pair.second.count, path.c_str());
    out += line;
  }
  return out;
}

std::string render_self(const Profile& p) {
  const SelfMetrics& s = p.self;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "phases %u..%u: %" PRIu64 " records, %" PRIu64 " unattributed, %" PRIu64
                " dropped, %" PRIu64 " late, %" PRIu64 " table-full, %" PRIu64 " filtered, %" PRIu64
                " graph-unknown; max consumer lag %s; peak RSS %.1f MiB\n",
                p.first_phase, p.last_phase, s.records, s.unattributed, s.dropped, s.late,
                s.table_full, s.filtered, s.graph_unknown, format_time(s.max_lag_ns).c_str(),
                s.rss_bytes / 1048576.0);
  return buf;
}

namespace {
json metrics_json(const Metrics& m, const Peaks& peaks) {
  json j = {{"time_ns", m.time_ns},
            {"count", m.count},
            {"timed", m.timed},
            {"flops", m.total_flops()},
            {"flop_per_s", flops_rate(m)},
            {"bytes", m.bytes}};
  if (auto u = util_of(m, peaks)) j["utilisation"] = *u;
  return j;
}

json node_json(const ProfileNode& n, std::size_t depth, const ViewOptions& o, const Peaks& peaks) {
  json j = {{"name", n.name}, {"kernel", n.is_kernel}, {"metrics", metrics_json(n.metrics, peaks)}};
  if (depth < o.max_depth) {
    json children = json::array();
    for (const auto& c : n.children) children.push_back(node_json(*c, depth + 1, o, peaks));
    j["children"] = children;
  }
  return j;
}
}  // namespace

std::string tree_json(const Profile& profile, const ViewOptions& options) {
  Profile filtered = filter_profile(profile, options);
  return json_text(node_json(filtered.root, 0, options, peaks_for(filtered, options)), 1);
}

std::string top_json(const Profile& profile, const ViewOptions& options) {
  Profile filtered = filter_profile(profile, options);
  Peaks peaks = peaks_for(filtered, options);
  json rows = json::array();
  auto kernels = by_kernel(filtered);
  for (std::size_t i = 0; i < kernels.size() && i < options.top; ++i)
    rows.push_back(
        {{"kernel", kernels[i].first}, {"metrics", metrics_json(kernels[i].second, peaks)}});
  return json_text(rows, 1);
}

std::string diff_json(const Profile& base, const Profile& other, const ViewOptions& options) {
  json rows = json::array();
  for (auto& [path, pair] : diff_rows(base, other, options))
    rows.push_back({{"path", path},
                    {"base", {{"time_ns", pair.first.time_ns}, {"count", pair.first.count}}},
                    {"other", {{"time_ns", pair.second.time_ns}, {"count", pair.second.count}}}});
  return json_text(rows, 1);
}

}  // namespace wavekit::profile
