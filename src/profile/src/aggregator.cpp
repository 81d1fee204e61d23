#include "aggregator.h"

#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "wavekit/support/error.h"

namespace wavekit::profile {

namespace {

std::size_t hash_key(const EntryKey& key) {
  std::uint64_t a = (std::uint64_t{key.context} << 32) | key.capture_context;
  std::uint64_t b =
      (std::uint64_t{key.kernel} << 32) | (std::uint64_t{key.device} << 16) | key.captured;
  std::uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return static_cast<std::size_t>(h ^ (h >> 32));
}

std::regex compile_filter(const std::string& pattern, const char* what) {
  try {
    return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    fail(what, "'" + pattern + "' is not a valid regular expression (" + e.what() + ")");
  }
}

}  // namespace

std::string demangle_kernel_name(std::string_view name) {
  std::string text(name);
  int status = 0;
  char* out = abi::__cxa_demangle(text.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !out) return text;
  std::string result(out);
  std::free(out);
  return result;
}

PhaseTable::PhaseTable(std::size_t capacity)
    : slots_(std::bit_ceil(std::max<std::size_t>(capacity, 8))),
      used_(slots_.size(), 0),
      limit_(slots_.size() - slots_.size() / 8) {}

Entry* PhaseTable::find_or_insert(const EntryKey& key) {
  std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash_key(key) & mask;; i = (i + 1) & mask) {
    if (!used_[i]) {
      if (size_ >= limit_) return nullptr;
      used_[i] = 1;
      ++size_;
      slots_[i] = Entry{};
      slots_[i].key = key;
      return &slots_[i];
    }
    if (slots_[i].key == key) return &slots_[i];
  }
}

void PhaseTable::clear() {
  std::fill(used_.begin(), used_.end(), 0);
  size_ = 0;
  phase = 0;
  first_start_ns = ~std::uint64_t{0};
  last_end_ns = 0;
}

Aggregator::Aggregator(ContextTree& tree, const LaunchTable& launches, const GraphRegistry* graphs,
                       AggregatorConfig config, ExportFn on_export)
    : tree_(tree),
      launches_(launches),
      graphs_(graphs),
      config_(std::move(config)),
      on_export_(std::move(on_export)),
      current_(std::make_unique<PhaseTable>(config_.table_capacity)),
      previous_(nullptr),
      spare_(std::make_unique<PhaseTable>(config_.table_capacity)) {
  if (!config_.include_kernels.empty())
    include_ = compile_filter(config_.include_kernels, "kernel include filter");
  if (!config_.exclude_kernels.empty())
    exclude_ = compile_filter(config_.exclude_kernels, "kernel exclude filter");
  if (graphs_) graph_snapshot_ = graphs_->snapshot();
}

void Aggregator::begin_batch() {
  if (graphs_) graph_snapshot_ = graphs_->snapshot();
}

std::optional<NameId> Aggregator::kernel_id(std::string_view name) {
  if (auto it = kernels_.find(name); it != kernels_.end()) return it->second;
  std::optional<NameId> id;
  std::string shown = config_.display_name ? config_.display_name(name) : std::string(name);
  bool included = (!include_ || std::regex_search(shown, *include_)) &&
                  (!exclude_ || !std::regex_search(shown, *exclude_));
  if (included) id = tree_.names().intern(shown);
  // The cache is bounded; past its size names are re-decided each time (slower, not wrong).
  if (kernels_.size() < config_.max_cached_kernel_names) kernels_.emplace(std::string(name), id);
  return id;
}

PhaseTable* Aggregator::table_for(std::uint32_t phase) {
  if (phase == current_->phase) return current_.get();
  if (previous_ && phase == previous_->phase) return previous_.get();
  if (phase > current_->phase) {
    rotate_to(phase, std::chrono::steady_clock::now());
    return current_.get();
  }
  ++self_.late;
  return current_.get();
}

void Aggregator::consume(const KernelActivity& record, std::uint64_t now_ns) {
  std::optional<NameId> kernel = kernel_id(record.kernel_name);
  if (!kernel) {
    ++self_.filtered;
    return;
  }
  EntryKey key;
  key.kernel = *kernel;
  key.device = static_cast<std::uint16_t>(record.device);
  std::uint32_t phase = current_->phase;
  std::optional<LaunchWork> work;
  const std::optional<LaunchInfo> launch =
      record.launch ? record.launch : launches_.lookup(record.correlation);
  if (launch) {
    key.context = launch->context;
    phase = launch->phase;
    if (launch->has_work) work = launches_.lookup_work(record.correlation);
  } else {
    ++self_.unattributed;
  }
  if (record.graph_node_id != 0) {
    auto it = graph_snapshot_ ? graph_snapshot_->nodes.find(record.graph_node_id)
                              : GraphRegistry::NodeMap::const_iterator{};
    if (graph_snapshot_ && it != graph_snapshot_->nodes.end()) {
      key.capture_context = it->second;
      key.captured = 1;
    } else {
      ++self_.graph_unknown;
    }
  }

  add(key, phase, record.start_ns, record.end_ns, record.timed, work, now_ns);
}

void Aggregator::consume_graph(const GraphActivity& record, std::uint64_t now_ns) {
  std::optional<NameId> leaf = kernel_id(graph_leaf_name(record.graph_id));
  if (!leaf) {
    ++self_.filtered;
    return;
  }
  EntryKey key;
  key.kernel = *leaf;
  key.device = static_cast<std::uint16_t>(record.device);
  std::uint32_t phase = current_->phase;
  std::optional<NodeId> capture;
  if (auto launch = launches_.lookup(record.correlation)) {
    key.context = launch->context;
    phase = launch->phase;
    if (auto exec = launches_.lookup_graph_exec(record.correlation); exec && graph_snapshot_) {
      auto it = graph_snapshot_->execs.find(*exec);
      if (it != graph_snapshot_->execs.end()) capture = it->second;
    }
  } else {
    ++self_.unattributed;
  }
  // Without the launch's exec id, the record's own graph id, read as the source graph's.
  if (!capture && graph_snapshot_ && record.capture_tracked) {
    auto it = graph_snapshot_->graphs.find(record.graph_id);
    if (it != graph_snapshot_->graphs.end()) capture = it->second;
  }
  if (capture) {
    key.capture_context = *capture;
    key.captured = 1;
  } else if (record.capture_tracked) {
    ++self_.graph_unknown;
  }
  add(key, phase, record.start_ns, record.end_ns, true, std::nullopt, now_ns);
}

void Aggregator::add(const EntryKey& key, std::uint32_t phase, std::uint64_t start_ns,
                     std::uint64_t end_ns, bool timed, const std::optional<LaunchWork>& work,
                     std::uint64_t now_ns) {
  PhaseTable* table = table_for(phase);
  Entry* entry = table->find_or_insert(key);
  if (!entry) {
    ++self_.table_full;
    return;
  }
  if (timed) {
    std::uint64_t duration = end_ns > start_ns ? end_ns - start_ns : 0;
    entry->metrics.add_duration(duration);
    if (config_.untimed_launches) {
      TimedSum& sum = kernel_timed_[key.kernel];
      sum.time_ns += duration;
      ++sum.launches;
    }
  } else {
    entry->metrics.add_untimed();
  }
  if (work) {
    for (std::size_t p = 0; p < kPrecisionCount; ++p) entry->metrics.flops[p] += work->flops[p];
    entry->metrics.bytes += work->bytes;
  }
  ++self_.records;
  if (!timed) return;  // no times to span the phase or to measure the consumer's lag by
  table->first_start_ns = std::min(table->first_start_ns, start_ns);
  table->last_end_ns = std::max(table->last_end_ns, end_ns);
  if (now_ns > end_ns) self_.max_lag_ns = std::max(self_.max_lag_ns, now_ns - end_ns);
}

void Aggregator::rotate_to(std::uint32_t phase, std::chrono::steady_clock::time_point now) {
  if (current_->size() == 0) {  // nothing to keep open: relabel instead of exporting nothing
    current_->phase = phase;
    return;
  }
  if (previous_) export_table(previous_);
  previous_ = std::move(current_);
  current_ = std::move(spare_);
  current_->clear();
  current_->phase = phase;
  rotated_at_ = now;
}

void Aggregator::maybe_close_phases(std::uint32_t launch_phase,
                                    std::chrono::steady_clock::time_point now) {
  if (launch_phase > current_->phase) rotate_to(launch_phase, now);
  if (previous_ && now - rotated_at_ >= config_.phase_grace) export_table(previous_);
}

void Aggregator::estimate_untimed(PhaseTable& table) const {
  table.for_each([&](Entry& entry) {
    Metrics& m = entry.metrics;
    if (!m.estimated()) return;
    double mean = 0;
    if (m.timed) {
      mean = static_cast<double>(m.time_ns) / static_cast<double>(m.timed);
    } else if (auto it = kernel_timed_.find(entry.key.kernel); it != kernel_timed_.end()) {
      mean = static_cast<double>(it->second.time_ns) / static_cast<double>(it->second.launches);
    }
    m.time_ns = static_cast<std::uint64_t>(std::llround(mean * static_cast<double>(m.count)));
  });
}

void Aggregator::export_table(std::unique_ptr<PhaseTable>& table) {
  if (config_.untimed_launches) estimate_untimed(*table);
  self_.rss_bytes = resident_set_bytes();
  if (on_export_) on_export_(*table, self_);
  totals_.merge(self_);
  self_ = SelfMetrics{};
  table->clear();
  spare_ = std::move(table);  // the exported table becomes the spare: three tables, ever
}

void Aggregator::finish() {
  if (previous_) export_table(previous_);
  std::uint32_t phase = current_->phase;
  export_table(current_);
  current_ = std::move(spare_);
  current_->phase = phase + 1;
  spare_ = std::make_unique<PhaseTable>(config_.table_capacity);
}

std::uint64_t resident_set_bytes() {
  std::FILE* file = std::fopen("/proc/self/statm", "r");
  if (!file) return 0;
  unsigned long long pages_total = 0, pages_resident = 0;
  int fields = std::fscanf(file, "%llu %llu", &pages_total, &pages_resident);
  std::fclose(file);
  if (fields != 2) return 0;
  return pages_resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace wavekit::profile
