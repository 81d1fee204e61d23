#include "wavekit/rewrite/plan.h"

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <utility>

#include "wavekit/support/error.h"

namespace wavekit::rewrite {
namespace {

constexpr std::array<std::pair<PointKind, const char*>, 10> kPointNames{{
    {PointKind::kernel_entry, "kernel_entry"},
    {PointKind::kernel_exit, "kernel_exit"},
    {PointKind::block_entry, "block_entry"},
    {PointKind::before_instruction, "before_instruction"},
    {PointKind::after_instruction, "after_instruction"},
    {PointKind::memory, "memory"},
    {PointKind::call_site, "call_site"},
    {PointKind::call_return, "call_return"},
    {PointKind::function_entry, "function_entry"},
    {PointKind::function_return, "function_return"},
}};
constexpr std::array<std::pair<ArgumentKind, const char*>, 9> kArgumentNames{{
    {ArgumentKind::constant, "constant"},
    {ArgumentKind::point_id, "point_id"},
    {ArgumentKind::original_address, "original_address"},
    {ArgumentKind::register_value, "register"},
    {ArgumentKind::register_reference, "register_reference"},
    {ArgumentKind::effective_address, "effective_address"},
    {ArgumentKind::exec, "exec"},
    {ArgumentKind::return_value, "return_value"},
    {ArgumentKind::variable, "variable"},
}};
constexpr std::array<std::pair<MemoryKind, const char*>, 5> kMemoryNames{{
    {MemoryKind::global, "global"},
    {MemoryKind::scratch, "scratch"},
    {MemoryKind::lds, "lds"},
    {MemoryKind::scalar, "scalar"},
    {MemoryKind::flat, "flat"},
}};

template <typename Enum, std::size_t N>
std::string name_of(const std::array<std::pair<Enum, const char*>, N>& table, Enum value) {
  for (const auto& [candidate, name] : table)
    if (candidate == value) return name;
  return "?";
}

// Walks the JSON with a path, so every error says where it is ("plan.json: points[2].call:
// missing 'probe'").
class Walker {
 public:
  explicit Walker(std::string context) : context_(std::move(context)) {}

  [[noreturn]] void bad(const std::string& path, const std::string& what) const {
    fail(context_, (path.empty() ? "" : path + ": ") + what);
  }

  void only_keys(const nlohmann::json& object, const std::string& path,
                 std::initializer_list<const char*> allowed) const {
    if (!object.is_object()) bad(path, "expected an object");
    for (const auto& [key, value] : object.items()) {
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* k) { return key == k; }))
        bad(path, "unknown key '" + key + "'");
    }
  }
  std::string string(const nlohmann::json& object, const std::string& path, const char* key) const {
    if (!object.contains(key)) bad(path, std::string("missing '") + key + "'");
    if (!object[key].is_string()) bad(path + "." + key, "expected a string");
    return object[key].get<std::string>();
  }
  std::uint64_t unsigned_value(const nlohmann::json& value, const std::string& path) const {
    if (value.is_number_unsigned()) return value.get<std::uint64_t>();
    if (value.is_number_integer() && value.get<std::int64_t>() >= 0)
      return value.get<std::uint64_t>();
    // Addresses are easier to read in hex: accept "0x1a00".
    if (value.is_string()) {
      const std::string text = value.get<std::string>();
      std::size_t used = 0;
      try {
        const std::uint64_t parsed = std::stoull(text, &used, 0);
        if (used == text.size()) return parsed;
      } catch (const std::exception&) {
      }
    }
    bad(path, "expected an unsigned integer (or a \"0x...\" string)");
  }
  template <typename Enum, std::size_t N>
  Enum kind(const std::array<std::pair<Enum, const char*>, N>& table, const std::string& text,
            const std::string& path) const {
    for (const auto& [value, name] : table)
      if (text == name) return value;
    std::string known;
    for (const auto& [value, name] : table) known += std::string(known.empty() ? "" : ", ") + name;
    bad(path, "unknown kind '" + text + "' (known: " + known + ")");
  }

 private:
  std::string context_;
};

Argument parse_argument(const Walker& walker, const nlohmann::json& json, const std::string& path) {
  walker.only_keys(json, path, {"kind", "value", "name", "indexed_by_call_site"});
  Argument argument;
  argument.kind = walker.kind(kArgumentNames, walker.string(json, path, "kind"), path + ".kind");
  if (argument.kind == ArgumentKind::constant) {
    if (!json.contains("value")) walker.bad(path, "a constant needs 'value'");
    argument.value = walker.unsigned_value(json["value"], path + ".value");
  }
  if (argument.kind == ArgumentKind::register_value ||
      argument.kind == ArgumentKind::register_reference || argument.kind == ArgumentKind::variable)
    argument.name = walker.string(json, path, "name");
  if (json.contains("indexed_by_call_site")) {
    if (argument.kind != ArgumentKind::variable)
      walker.bad(path + ".indexed_by_call_site", "only a variable argument can be indexed");
    if (!json["indexed_by_call_site"].is_boolean())
      walker.bad(path + ".indexed_by_call_site", "expected true or false");
    argument.indexed_by_call_site = json["indexed_by_call_site"].get<bool>();
  }
  return argument;
}

}  // namespace

bool Plan::has_calls() const {
  return std::any_of(points.begin(), points.end(), [](const PointSpec& p) { return p.call; });
}

std::string to_string(PointKind kind) { return name_of(kPointNames, kind); }
std::string to_string(ArgumentKind kind) { return name_of(kArgumentNames, kind); }
std::string to_string(MemoryKind kind) { return name_of(kMemoryNames, kind); }

Plan parse_plan(const nlohmann::json& json, const std::string& context) {
  Walker walker(context);
  walker.only_keys(json, "", {"tool", "kernels", "variables", "points", "probe_library"});
  Plan plan;
  if (json.contains("tool")) plan.tool = walker.string(json, "", "tool");
  if (json.contains("probe_library")) plan.probe_library = walker.string(json, "", "probe_library");
  if (json.contains("kernels")) {
    if (!json["kernels"].is_array()) walker.bad("kernels", "expected an array of names");
    for (const auto& name : json["kernels"]) {
      if (!name.is_string()) walker.bad("kernels", "expected an array of names");
      plan.kernels.push_back(name.get<std::string>());
    }
  }

  std::set<std::string> declared;
  if (json.contains("variables")) {
    if (!json["variables"].is_array()) walker.bad("variables", "expected an array");
    for (std::size_t i = 0; i < json["variables"].size(); ++i) {
      const std::string path = "variables[" + std::to_string(i) + "]";
      const nlohmann::json& entry = json["variables"][i];
      walker.only_keys(entry, path, {"name", "element_size", "count", "alignment"});
      PerWaveVariable variable;
      variable.name = walker.string(entry, path, "name");
      // The arena's fields are 32-bit: a larger value is refused, never cut to its low bits.
      const auto field = [&](const char* key, std::uint32_t& into) {
        if (!entry.contains(key)) return;
        const std::string where = path + "." + key;
        const std::uint64_t value = walker.unsigned_value(entry[key], where);
        if (value > std::numeric_limits<std::uint32_t>::max())
          walker.bad(where, std::to_string(value) + " is larger than 4294967295");
        into = static_cast<std::uint32_t>(value);
      };
      field("element_size", variable.element_size);
      field("count", variable.count);
      field("alignment", variable.alignment);
      if (!declared.insert(variable.name).second)
        walker.bad(path, "variable '" + variable.name + "' is declared twice");
      plan.variables.push_back(std::move(variable));
    }
  }

  if (!json.contains("points") || !json["points"].is_array() || json["points"].empty())
    walker.bad("points", "expected a non-empty array");
  for (std::size_t i = 0; i < json["points"].size(); ++i) {
    const std::string path = "points[" + std::to_string(i) + "]";
    const nlohmann::json& entry = json["points"][i];
    walker.only_keys(entry, path,
                     {"where", "memory_kinds", "addresses", "snippet", "call", "replace"});
    PointSpec point;
    point.where = walker.kind(kPointNames, walker.string(entry, path, "where"), path + ".where");
    if (entry.contains("memory_kinds")) {
      for (const auto& kind : entry["memory_kinds"]) {
        if (!kind.is_string()) walker.bad(path + ".memory_kinds", "expected names");
        point.memory_kinds.push_back(
            walker.kind(kMemoryNames, kind.get<std::string>(), path + ".memory_kinds"));
      }
    }
    if (entry.contains("addresses")) {
      for (const auto& address : entry["addresses"])
        point.addresses.push_back(walker.unsigned_value(address, path + ".addresses"));
    }
    if ((point.where == PointKind::before_instruction ||
         point.where == PointKind::after_instruction) &&
        point.addresses.empty())
      walker.bad(path, "an instruction point needs 'addresses'");
    if (entry.contains("snippet") == entry.contains("call"))
      walker.bad(path, "give exactly one of 'snippet' and 'call'");
    if (entry.contains("replace")) {
      if (!entry["replace"].is_boolean()) walker.bad(path + ".replace", "expected true or false");
      point.replace = entry["replace"].get<bool>();
      if (point.replace &&
          (point.where != PointKind::before_instruction || !entry.contains("call")))
        walker.bad(path + ".replace",
                   "only a before_instruction probe call can replace its "
                   "instruction");
    }

    if (entry.contains("snippet")) {
      const std::string spath = path + ".snippet";
      const nlohmann::json& s = entry["snippet"];
      walker.only_keys(s, spath, {"op", "variable", "indexed_by_block", "value"});
      Snippet snippet;
      const std::string op = walker.string(s, spath, "op");
      if (op == "increment") {
        snippet.op = SnippetOp::increment;
      } else if (op == "store") {
        snippet.op = SnippetOp::store;
        if (!s.contains("value")) walker.bad(spath, "a store needs 'value'");
        snippet.value = parse_argument(walker, s["value"], spath + ".value");
        if (snippet.value->kind == ArgumentKind::register_reference)
          walker.bad(spath + ".value",
                     "a snippet cannot change a register; a probe call's register_reference can");
      } else {
        walker.bad(spath + ".op", "unknown op '" + op + "' (known: increment, store)");
      }
      snippet.variable = walker.string(s, spath, "variable");
      if (!declared.count(snippet.variable))
        walker.bad(spath + ".variable", "variable '" + snippet.variable + "' is not declared");
      if (s.contains("indexed_by_block")) {
        if (!s["indexed_by_block"].is_boolean())
          walker.bad(spath + ".indexed_by_block", "expected true or false");
        snippet.indexed_by_block = s["indexed_by_block"].get<bool>();
      }
      point.snippet = std::move(snippet);
    } else {
      const std::string cpath = path + ".call";
      const nlohmann::json& c = entry["call"];
      walker.only_keys(c, cpath, {"probe", "args", "uniform"});
      ProbeCall call;
      call.probe = walker.string(c, cpath, "probe");
      if (c.contains("args")) {
        if (!c["args"].is_array()) walker.bad(cpath + ".args", "expected an array");
        for (std::size_t a = 0; a < c["args"].size(); ++a) {
          Argument argument =
              parse_argument(walker, c["args"][a], cpath + ".args[" + std::to_string(a) + "]");
          if (argument.kind == ArgumentKind::variable && !declared.count(argument.name))
            walker.bad(cpath + ".args[" + std::to_string(a) + "]",
                       "variable '" + argument.name + "' is not declared");
          if (argument.kind == ArgumentKind::return_value && point.where != PointKind::call_return)
            walker.bad(cpath + ".args[" + std::to_string(a) + "]",
                       "return_value is only available at call_return points");
          if (argument.kind == ArgumentKind::register_reference &&
              std::any_of(call.args.begin(), call.args.end(), [](const Argument& earlier) {
                return earlier.kind == ArgumentKind::register_reference;
              }))
            walker.bad(cpath + ".args[" + std::to_string(a) + "]",
                       "a call passes at most one register_reference (the probe's one return "
                       "value is its new value)");
          call.args.push_back(std::move(argument));
        }
      }
      if (c.contains("uniform")) {
        if (!c["uniform"].is_boolean()) walker.bad(cpath + ".uniform", "expected true or false");
        call.uniform = c["uniform"].get<bool>();
      }
      point.call = std::move(call);
    }
    plan.points.push_back(std::move(point));
  }
  return plan;
}

namespace {
nlohmann::json argument_to_json(const Argument& argument) {
  nlohmann::json json = {{"kind", to_string(argument.kind)}};
  if (argument.kind == ArgumentKind::constant) json["value"] = argument.value;
  if (!argument.name.empty()) json["name"] = argument.name;
  if (argument.indexed_by_call_site) json["indexed_by_call_site"] = true;
  return json;
}
}  // namespace

nlohmann::json plan_to_json(const Plan& plan) {
  nlohmann::json variables = nlohmann::json::array();
  for (const PerWaveVariable& v : plan.variables)
    variables.push_back({{"name", v.name},
                         {"element_size", v.element_size},
                         {"count", v.count},
                         {"alignment", v.alignment}});
  nlohmann::json points = nlohmann::json::array();
  for (const PointSpec& point : plan.points) {
    nlohmann::json json = {{"where", to_string(point.where)}};
    if (!point.memory_kinds.empty()) {
      json["memory_kinds"] = nlohmann::json::array();
      for (MemoryKind kind : point.memory_kinds) json["memory_kinds"].push_back(to_string(kind));
    }
    if (!point.addresses.empty()) json["addresses"] = point.addresses;
    if (point.replace) json["replace"] = true;
    if (point.snippet) {
      nlohmann::json s = {{"op", point.snippet->op == SnippetOp::increment ? "increment" : "store"},
                          {"variable", point.snippet->variable},
                          {"indexed_by_block", point.snippet->indexed_by_block}};
      if (point.snippet->value) s["value"] = argument_to_json(*point.snippet->value);
      json["snippet"] = s;
    }
    if (point.call) {
      nlohmann::json args = nlohmann::json::array();
      for (const Argument& argument : point.call->args) args.push_back(argument_to_json(argument));
      json["call"] = {
          {"probe", point.call->probe}, {"args", args}, {"uniform", point.call->uniform}};
    }
    points.push_back(json);
  }
  nlohmann::json json = {{"tool", plan.tool}, {"variables", variables}, {"points", points}};
  if (!plan.kernels.empty()) json["kernels"] = plan.kernels;
  if (!plan.probe_library.empty()) json["probe_library"] = plan.probe_library;
  return json;
}

}  // namespace wavekit::rewrite
