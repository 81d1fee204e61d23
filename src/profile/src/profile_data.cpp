#include "wavekit/profile/profile_data.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "aggregator.h"
#include "json_text.h"
#include "wavekit/support/error.h"
#include "wavekit/support/file.h"

namespace wavekit::profile {

std::string graph_leaf_name(std::uint32_t graph_id) {
  return "<cuda graph " + std::to_string(graph_id) + ">";
}

using nlohmann::json;

ProfileNode* ProfileNode::child(const std::string& child_name, bool kernel,
                                std::uint32_t child_device) {
  for (auto& c : children)
    if (c->name == child_name && c->is_kernel == kernel && (!kernel || c->device == child_device))
      return c.get();
  auto node = std::make_unique<ProfileNode>();
  node->name = child_name;
  node->is_kernel = kernel;
  node->device = child_device;
  children.push_back(std::move(node));
  return children.back().get();
}

const ProfileNode* ProfileNode::find(const std::string& child_name) const {
  for (const auto& c : children)
    if (c->name == child_name) return c.get();
  return nullptr;
}

namespace {

void sum_node(ProfileNode& node) {
  if (node.children.empty()) return;
  Metrics sum;
  // A kernel node never has children; a frame's own metrics are only its children's.
  for (auto& c : node.children) {
    sum_node(*c);
    sum.merge(c->metrics);
  }
  node.metrics = sum;
}

void merge_node(ProfileNode& into, const ProfileNode& from) {
  for (const auto& c : from.children) {
    ProfileNode* target = into.child(c->name, c->is_kernel, c->device);
    if (c->is_kernel) target->metrics.merge(c->metrics);
    merge_node(*target, *c);
  }
}

}  // namespace

void Profile::sum_up() { sum_node(root); }

void Profile::merge(const Profile& other) {
  bool was_empty = root.children.empty() && self.records == 0;
  merge_node(root, other.root);
  for (const auto& [id, info] : other.devices) devices.emplace(id, info);
  self.merge(other.self);
  if (was_empty) {
    first_phase = other.first_phase;
    start_ns = other.start_ns;
  } else {
    first_phase = std::min(first_phase, other.first_phase);
    start_ns = std::min(start_ns, other.start_ns);
  }
  last_phase = std::max(last_phase, other.last_phase);
  end_ns = std::max(end_ns, other.end_ns);
  sum_up();
}

Profile build_profile(const PhaseTable& table, const ContextTree& tree, const SelfMetrics& self) {
  Profile profile;
  profile.self = self;
  profile.first_phase = profile.last_phase = table.phase;
  profile.start_ns = table.first_start_ns == ~std::uint64_t{0} ? 0 : table.first_start_ns;
  profile.end_ns = table.last_end_ns;
  // Context paths repeat across entries; resolve each node once.
  std::unordered_map<NodeId, std::vector<std::string>> paths;
  auto path_of = [&](NodeId id) -> const std::vector<std::string>& {
    auto it = paths.find(id);
    if (it == paths.end()) it = paths.emplace(id, tree.path(id)).first;
    return it->second;
  };
  table.for_each([&](const Entry& entry) {
    ProfileNode* node = &profile.root;
    for (const auto& name : path_of(entry.key.context)) node = node->child(name, false, 0);
    if (entry.key.captured) {
      node = node->child(std::string(kCapturedAtFrame), false, 0);
      for (const auto& name : path_of(entry.key.capture_context))
        node = node->child(name, false, 0);
    }
    node = node->child(tree.names().name(entry.key.kernel), true, entry.key.device);
    node->metrics.merge(entry.metrics);
  });
  profile.sum_up();
  return profile;
}

// ---- hatchet JSON -------------------------------------------------------------------------

namespace {

std::string flops_metric_name(Precision p) {
  switch (p) {
    case Precision::fp8:
      return "flops8";
    case Precision::fp16:
      return "flops16";
    case Precision::fp32:
      return "flops32";
    case Precision::fp64:
      return "flops64";
    default:
      return "flops_" + std::string(precision_name(p));
  }
}

// Proton's device types: "HIP" for AMD GPUs (gfx* architectures), "CUDA" otherwise.
const char* device_type(const std::map<std::uint32_t, DeviceInfo>& devices, std::uint32_t id) {
  auto it = devices.find(id);
  return it != devices.end() && it->second.arch.rfind("gfx", 0) == 0 ? "HIP" : "CUDA";
}

json node_to_json(const ProfileNode& node, const std::map<std::uint32_t, DeviceInfo>& devices) {
  json metrics = json::object();
  metrics["count"] = node.metrics.count;
  metrics["time (ns)"] = node.metrics.time_ns;
  // Only where the time is an estimate (Metrics): Proton's files and ours without it read as
  // every launch timed.
  if (node.metrics.estimated()) metrics["timed"] = node.metrics.timed;
  if (node.metrics.timed) {
    metrics["min_time (ns)"] = node.metrics.min_ns;
    metrics["max_time (ns)"] = node.metrics.max_ns;
  }
  for (std::size_t p = 0; p < kPrecisionCount; ++p)
    if (node.metrics.flops[p] != 0)
      metrics[flops_metric_name(static_cast<Precision>(p))] = node.metrics.flops[p];
  if (node.metrics.bytes != 0) metrics["bytes"] = node.metrics.bytes;
  if (node.is_kernel) {
    json histogram = json::object();  // log2(ns) bucket -> kernels, non-empty buckets only
    for (std::size_t b = 0; b < kHistogramBuckets; ++b)
      if (node.metrics.histogram[b]) histogram[std::to_string(b)] = node.metrics.histogram[b];
    metrics["time_log2_histogram"] = std::move(histogram);
    metrics["device_id"] = std::to_string(node.device);
    metrics["device_type"] = device_type(devices, node.device);
  }
  json children = json::array();
  for (const auto& c : node.children) children.push_back(node_to_json(*c, devices));
  return json{{"frame", {{"name", node.name}, {"type", "function"}}},
              {"metrics", std::move(metrics)},
              {"children", std::move(children)}};
}

std::uint64_t as_u64(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number()) {
    // A float outside [0, 2^64) has no unsigned value (converting it would be undefined).
    const double number = value.get<double>();
    if (!(number >= 0.0 && number < 18446744073709551616.0))
      throw Error("a metric value " + value.dump() +
                  " is not an unsigned 64-bit integer (negative, too large or not finite)");
    return static_cast<std::uint64_t>(number);
  }
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    std::uint64_t parsed = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (text.empty() || error != std::errc() || end != text.data() + text.size())
      throw Error("a metric value '" + text + "' is not an unsigned integer");
    return parsed;
  }
  return 0;
}

void node_from_json(const json& j, ProfileNode& node, const std::string& origin, int depth) {
  if (depth > 4096) fail(origin, "the profile tree is nested deeper than 4096 frames");
  if (!j.is_object() || !j.contains("frame") || !j["frame"].contains("name"))
    fail(origin, "a node lacks frame.name (not a hatchet profile?)");
  node.name = j["frame"]["name"].get<std::string>();
  const json empty_object = json::object();
  const json& metrics = j.contains("metrics") ? j["metrics"] : empty_object;
  const json empty = json::array();
  const json& children = j.contains("children") ? j["children"] : empty;
  if (!children.is_array()) fail(origin, "'children' of '" + node.name + "' is not a list");
  // Leaves carry what was measured; a leaf with a device id (or a count) is a kernel.
  node.is_kernel = children.empty() && (metrics.contains("device_id") || metrics.contains("count"));
  if (metrics.contains("device_id"))
    node.device = static_cast<std::uint32_t>(as_u64(metrics["device_id"]));
  if (metrics.contains("time_log2_histogram") && metrics["time_log2_histogram"].is_object()) {
    for (auto& [bucket, count] : metrics["time_log2_histogram"].items()) {
      std::size_t b = 0;
      try {
        b = std::stoul(bucket);
      } catch (const std::exception&) {
        b = kHistogramBuckets;
      }
      if (b >= kHistogramBuckets)
        fail(origin, "histogram bucket '" + bucket + "' of '" + node.name + "' is out of range");
      node.metrics.histogram[b] = as_u64(count);
    }
  }
  for (auto it = metrics.begin(); it != metrics.end(); ++it) {
    const std::string& key = it.key();
    if (!it.value().is_number()) continue;
    if (key == "count")
      node.metrics.count = as_u64(it.value());
    else if (key == "timed")
      node.metrics.timed = as_u64(it.value());
    else if (key == "time (ns)")
      node.metrics.time_ns = as_u64(it.value());
    else if (key == "min_time (ns)")
      node.metrics.min_ns = as_u64(it.value());
    else if (key == "max_time (ns)")
      node.metrics.max_ns = as_u64(it.value());
    else if (key == "bytes")
      node.metrics.bytes = it.value().get<double>();
    else if (key.rfind("flops", 0) == 0) {
      std::string precision = key.rfind("flops_", 0) == 0 ? key.substr(6) : key;
      if (auto p = parse_precision(precision))
        node.metrics.flops[static_cast<std::size_t>(*p)] += it.value().get<double>();
    }
  }
  if (!metrics.contains("timed") || !metrics["timed"].is_number())
    node.metrics.timed = node.metrics.count;
  else if (node.metrics.timed > node.metrics.count)
    fail(origin, "'" + node.name + "' has " + std::to_string(node.metrics.timed) +
                     " timed launches of " + std::to_string(node.metrics.count));
  for (const auto& c : children) {
    auto child = std::make_unique<ProfileNode>();
    node_from_json(c, *child, origin, depth + 1);
    node.children.push_back(std::move(child));
  }
}

}  // namespace

std::string to_hatchet_json(const Profile& profile) {
  json devices = {{"CUDA", json::object()}};
  for (const auto& [id, d] : profile.devices)
    devices[device_type(profile.devices, id)][std::to_string(id)] = {
        {"arch", d.arch},
        {"model", d.model},
        {"num_sms", d.num_sms},
        {"clock_rate", d.clock_khz},
        {"memory_clock_rate", d.memory_clock_khz},
        {"bus_width", d.bus_width_bits}};
  const SelfMetrics& s = profile.self;
  json wavekit = {{"first_phase", profile.first_phase},
                  {"last_phase", profile.last_phase},
                  {"start_ns", profile.start_ns},
                  {"end_ns", profile.end_ns},
                  {"self",
                   {{"records", s.records},
                    {"unattributed", s.unattributed},
                    {"dropped", s.dropped},
                    {"late", s.late},
                    {"table_full", s.table_full},
                    {"filtered", s.filtered},
                    {"graph_unknown", s.graph_unknown},
                    {"max_lag_ns", s.max_lag_ns},
                    {"rss_bytes", s.rss_bytes}}}};
  json document =
      json::array({node_to_json(profile.root, profile.devices), devices, {{"wavekit", wavekit}}});
  return json_text(document, 1);
}

namespace {
Profile parse_hatchet(const std::string& text, const std::string& origin);
}  // namespace

Profile from_hatchet_json(const std::string& text, const std::string& origin) {
  try {
    return parse_hatchet(text, origin);
  } catch (const json::exception& e) {
    // A field of the wrong type (a name that is a number, say): name the file, not the parser.
    fail(origin, std::string("not a hatchet profile: ") + e.what());
  } catch (const Error& e) {
    // A value out of range (as_u64): name the file too, once.
    const std::string message = e.what();
    if (message.rfind(origin + ": ", 0) == 0) throw;
    fail(origin, message);
  }
}

namespace {
Profile parse_hatchet(const std::string& text, const std::string& origin) {
  json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) fail(origin, "not valid JSON");
  // Proton writes [tree, device_info]; a bare tree object is accepted too.
  const json& tree = document.is_array() && !document.empty() ? document[0] : document;
  Profile profile;
  node_from_json(tree, profile.root, origin, 0);
  if (document.is_array() && document.size() > 1 && document[1].is_object()) {
    for (auto& [type, by_index] : document[1].items()) {
      if (!by_index.is_object()) continue;
      for (auto& [index, info] : by_index.items()) {
        if (!info.is_object()) continue;
        DeviceInfo d;
        if (info.contains("arch") && info["arch"].is_string()) d.arch = info["arch"];
        if (info.contains("model") && info["model"].is_string()) d.model = info["model"];
        if (info.contains("num_sms"))
          d.num_sms = static_cast<std::uint32_t>(as_u64(info["num_sms"]));
        if (info.contains("clock_rate"))
          d.clock_khz = static_cast<std::uint32_t>(as_u64(info["clock_rate"]));
        if (info.contains("memory_clock_rate"))
          d.memory_clock_khz = static_cast<std::uint32_t>(as_u64(info["memory_clock_rate"]));
        if (info.contains("bus_width"))
          d.bus_width_bits = static_cast<std::uint32_t>(as_u64(info["bus_width"]));
        try {
          profile.devices[static_cast<std::uint32_t>(std::stoul(index))] = d;
        } catch (const std::exception&) {
          fail(origin, "device index '" + index + "' is not a number");
        }
      }
    }
  }
  if (document.is_array() && document.size() > 2 && document[2].contains("wavekit")) {
    const json& w = document[2]["wavekit"];
    profile.first_phase = static_cast<std::uint32_t>(as_u64(w.value("first_phase", json(0))));
    profile.last_phase = static_cast<std::uint32_t>(as_u64(w.value("last_phase", json(0))));
    profile.start_ns = as_u64(w.value("start_ns", json(0)));
    profile.end_ns = as_u64(w.value("end_ns", json(0)));
    if (w.contains("self")) {
      const json& s = w["self"];
      auto get = [&](const char* key) { return as_u64(s.value(key, json(0))); };
      profile.self = {get("records"),       get("unattributed"), get("dropped"),
                      get("late"),          get("table_full"),   get("filtered"),
                      get("graph_unknown"), get("max_lag_ns"),   get("rss_bytes")};
    }
  }
  profile.sum_up();
  return profile;
}
}  // namespace

// ---- compact binary -----------------------------------------------------------------------

namespace {

// Format 2 added histograms, 3 the timed-launch count; 2 is still read (every launch timed).
constexpr char kMagic[8] = {'W', 'K', 'P', 'R', 'O', 'F', 0, 3};
constexpr std::size_t kFormatByte = sizeof kMagic - 1;

class Writer {
 public:
  void u8(std::uint8_t v) { out.push_back(v); }
  void u32(std::uint32_t v) { raw(&v, 4); }
  void u64(std::uint64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void raw(const void* p, std::size_t n) {
    static_assert(std::endian::native == std::endian::little, "the format is little-endian");
    auto b = static_cast<const std::uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  }
  std::vector<std::uint8_t> out;
};

class Reader {
 public:
  Reader(const std::vector<std::uint8_t>& bytes, const std::string& origin)
      : bytes_(bytes), origin_(origin) {}
  void need(std::size_t n) {
    if (bytes_.size() - pos_ < n)
      fail(origin_,
           "truncated at byte " + std::to_string(pos_) + " (needs " + std::to_string(n) + " more)");
  }
  template <typename T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string str() {
    auto n = get<std::uint32_t>();
    need(n);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }
  [[noreturn]] void bad(const std::string& what) {
    fail(origin_, what + " at byte " + std::to_string(pos_));
  }

 private:
  const std::vector<std::uint8_t>& bytes_;
  const std::string& origin_;
  std::size_t pos_ = 0;
};

void write_metrics(Writer& w, const Metrics& m) {
  w.u64(m.count);
  w.u64(m.timed);
  w.u64(m.time_ns);
  w.u64(m.min_ns);
  w.u64(m.max_ns);
  for (double f : m.flops) w.f64(f);
  w.f64(m.bytes);
  // Histogram: the number of non-empty buckets, then (bucket, count) pairs.
  std::uint8_t used = 0;
  for (auto c : m.histogram) used += c != 0;
  w.u8(used);
  for (std::size_t b = 0; b < kHistogramBuckets; ++b) {
    if (!m.histogram[b]) continue;
    w.u8(static_cast<std::uint8_t>(b));
    w.u64(m.histogram[b]);
  }
}

Metrics read_metrics(Reader& r, int format) {
  Metrics m;
  m.count = r.get<std::uint64_t>();
  m.timed = format >= 3 ? r.get<std::uint64_t>() : m.count;
  if (m.timed > m.count)
    r.bad(std::to_string(m.timed) + " timed launches of " + std::to_string(m.count));
  m.time_ns = r.get<std::uint64_t>();
  m.min_ns = r.get<std::uint64_t>();
  m.max_ns = r.get<std::uint64_t>();
  for (double& f : m.flops) f = r.get<double>();
  m.bytes = r.get<double>();
  auto used = r.get<std::uint8_t>();
  if (used > kHistogramBuckets) r.bad("histogram with " + std::to_string(used) + " buckets");
  for (std::uint8_t i = 0; i < used; ++i) {
    auto bucket = r.get<std::uint8_t>();
    if (bucket >= kHistogramBuckets) r.bad("histogram bucket " + std::to_string(bucket));
    m.histogram[bucket] = r.get<std::uint64_t>();
  }
  return m;
}

}  // namespace

std::vector<std::uint8_t> to_binary(const Profile& profile) {
  Writer w;
  w.raw(kMagic, sizeof kMagic);
  w.u32(profile.first_phase);
  w.u32(profile.last_phase);
  w.u64(profile.start_ns);
  w.u64(profile.end_ns);
  const SelfMetrics& s = profile.self;
  for (std::uint64_t v : {s.records, s.unattributed, s.dropped, s.late, s.table_full, s.filtered,
                          s.graph_unknown, s.max_lag_ns, s.rss_bytes})
    w.u64(v);
  w.u32(static_cast<std::uint32_t>(profile.devices.size()));
  for (const auto& [id, d] : profile.devices) {
    w.u32(id);
    w.str(d.arch);
    w.str(d.model);
    w.u32(d.num_sms);
    w.u32(d.clock_khz);
    w.u32(d.memory_clock_khz);
    w.u32(d.bus_width_bits);
  }
  // Names once, nodes refer to them by index: contexts repeat a handful of names many times.
  std::unordered_map<std::string, std::uint32_t> name_index;
  std::vector<const std::string*> names;
  std::vector<std::pair<const ProfileNode*, std::uint32_t>> order;  // node, parent index
  std::vector<std::pair<const ProfileNode*, std::uint32_t>> stack{{&profile.root, ~0u}};
  while (!stack.empty()) {
    auto [node, parent] = stack.back();
    stack.pop_back();
    auto index = static_cast<std::uint32_t>(order.size());
    order.emplace_back(node, parent);
    if (name_index.emplace(node->name, static_cast<std::uint32_t>(names.size())).second)
      names.push_back(&node->name);
    for (auto it = node->children.rbegin(); it != node->children.rend(); ++it)
      stack.emplace_back(it->get(), index);
  }
  w.u32(static_cast<std::uint32_t>(names.size()));
  for (const std::string* n : names) w.str(*n);
  w.u32(static_cast<std::uint32_t>(order.size()));
  for (auto [node, parent] : order) {
    w.u32(parent);
    w.u32(name_index.at(node->name));
    w.u8(node->is_kernel ? 1 : 0);
    w.u32(node->device);
    // Inner frames are sums; only kernels' metrics are stored.
    if (node->is_kernel) write_metrics(w, node->metrics);
  }
  return std::move(w.out);
}

Profile from_binary(const std::vector<std::uint8_t>& bytes, const std::string& origin) {
  Reader r(bytes, origin);
  r.need(sizeof kMagic);
  if (std::memcmp(bytes.data(), kMagic, kFormatByte) != 0)
    fail(origin, "not a wavekit profile (bad magic; expected a .wkp file)");
  const int format = bytes[kFormatByte];
  if (format != 2 && format != 3)
    fail(origin, "a .wkp file of format " + std::to_string(format) +
                     ", which this wavekit does not read (it reads formats 2 and 3)");
  for (std::size_t i = 0; i < sizeof kMagic; ++i) r.get<std::uint8_t>();
  Profile p;
  p.first_phase = r.get<std::uint32_t>();
  p.last_phase = r.get<std::uint32_t>();
  p.start_ns = r.get<std::uint64_t>();
  p.end_ns = r.get<std::uint64_t>();
  SelfMetrics& s = p.self;
  for (std::uint64_t* v : {&s.records, &s.unattributed, &s.dropped, &s.late, &s.table_full,
                           &s.filtered, &s.graph_unknown, &s.max_lag_ns, &s.rss_bytes})
    *v = r.get<std::uint64_t>();
  auto device_count = r.get<std::uint32_t>();
  if (device_count > 4096) r.bad("implausible device count " + std::to_string(device_count));
  for (std::uint32_t i = 0; i < device_count; ++i) {
    auto id = r.get<std::uint32_t>();
    DeviceInfo d;
    d.arch = r.str();
    d.model = r.str();
    d.num_sms = r.get<std::uint32_t>();
    d.clock_khz = r.get<std::uint32_t>();
    d.memory_clock_khz = r.get<std::uint32_t>();
    d.bus_width_bits = r.get<std::uint32_t>();
    p.devices[id] = d;
  }
  auto name_count = r.get<std::uint32_t>();
  if (name_count > r.remaining() / 4)
    r.bad("name count " + std::to_string(name_count) + " exceeds the file");
  std::vector<std::string> names(name_count);
  for (auto& n : names) n = r.str();
  auto node_count = r.get<std::uint32_t>();
  if (node_count == 0 || node_count > r.remaining() / 13)
    r.bad("node count " + std::to_string(node_count) + " does not fit the file");
  std::vector<ProfileNode*> nodes;
  nodes.reserve(node_count);
  for (std::uint32_t i = 0; i < node_count; ++i) {
    auto parent = r.get<std::uint32_t>();
    auto name = r.get<std::uint32_t>();
    auto is_kernel = r.get<std::uint8_t>();
    auto device = r.get<std::uint32_t>();
    if (name >= names.size()) r.bad("name index " + std::to_string(name) + " out of range");
    ProfileNode* node;
    if (i == 0) {
      if (parent != ~0u) r.bad("the first node is not the root");
      node = &p.root;
      node->name = names[name];
    } else {
      if (parent >= i)
        r.bad("node " + std::to_string(i) + " names a parent that does not precede it");
      if (nodes[parent]->is_kernel) r.bad("a kernel node has children");
      auto child = std::make_unique<ProfileNode>();
      child->name = names[name];
      node = child.get();
      nodes[parent]->children.push_back(std::move(child));
    }
    node->is_kernel = is_kernel != 0;
    node->device = device;
    if (node->is_kernel) node->metrics = read_metrics(r, format);
    nodes.push_back(node);
  }
  if (r.remaining() != 0) r.bad("trailing bytes after the last node");
  p.sum_up();
  return p;
}

Profile load_profile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    fs::path merged = fs::path(path) / "profile.hatchet";
    if (fs::exists(merged)) return load_profile(merged.string());
    std::vector<fs::path> parts;
    for (const auto& e : fs::directory_iterator(path))
      if (e.path().extension() == ".wkp") parts.push_back(e.path());
    if (parts.empty()) fail(path, "holds neither profile.hatchet nor any .wkp phase file");
    std::sort(parts.begin(), parts.end());
    Profile total = load_profile(parts.front().string());
    for (std::size_t i = 1; i < parts.size(); ++i) total.merge(load_profile(parts[i].string()));
    return total;
  }
  std::vector<std::uint8_t> bytes = read_file(path);
  if (bytes.size() >= sizeof kMagic && std::memcmp(bytes.data(), kMagic, kFormatByte) == 0)
    return from_binary(bytes, path);
  return from_hatchet_json(std::string(bytes.begin(), bytes.end()), path);
}

std::string to_chrome_trace(const std::vector<TraceEvent>& events) {
  json trace = json::array();
  for (const auto& e : events) {
    trace.push_back(
        {{"name", e.name},
         {"ph", "X"},
         {"cat", "kernel"},
         {"ts", static_cast<double>(e.start_ns) / 1000.0},
         {"dur", static_cast<double>(e.end_ns - std::min(e.end_ns, e.start_ns)) / 1000.0},
         {"pid", e.device},
         {"tid", e.stream},
         {"args", {{"context", e.context}}}});
  }
  return json_text(json{{"traceEvents", trace}, {"displayTimeUnit", "ns"}}, -1);
}

}  // namespace wavekit::profile
