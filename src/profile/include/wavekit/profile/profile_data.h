// A profile as a tree of named frames with metrics, the shape every output shares: the
// hatchet JSON that Proton's viewer and hatchet read, the compact binary written per phase,
// and what `wavekit profile-view` prints. Kernel leaves hold measured metrics; inner frames
// hold the sums of their subtrees.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wavekit/profile/metrics.h"

namespace wavekit::profile {

inline constexpr std::string_view kCapturedAtFrame = "<captured_at>";
// The leaf name a whole graph launch is aggregated under ("<cuda graph N>").
std::string graph_leaf_name(std::uint32_t graph_id);

struct ProfileNode {
  std::string name;
  bool is_kernel = false;
  std::uint32_t device = 0;  // kernels only
  Metrics metrics;
  std::vector<std::unique_ptr<ProfileNode>> children;

  ProfileNode* child(const std::string& child_name, bool kernel, std::uint32_t child_device);
  const ProfileNode* find(const std::string& child_name) const;
};

struct DeviceInfo {
  std::string arch;   // "sm_90", "gfx942"
  std::string model;  // "NVIDIA H200"
  std::uint32_t num_sms = 0;
  std::uint32_t clock_khz = 0;  // SM clock the peaks are scaled to (0: unknown)
  std::uint32_t memory_clock_khz = 0;
  std::uint32_t bus_width_bits = 0;
};

struct Profile {
  Profile() { root.name = "ROOT"; }
  ProfileNode root;
  std::map<std::uint32_t, DeviceInfo> devices;
  SelfMetrics self;
  std::uint32_t first_phase = 0;
  std::uint32_t last_phase = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;

  // Recomputes inner frames' metrics as the sums of their children.
  void sum_up();
  // Adds another profile's kernels (phases of one run, or several runs).
  void merge(const Profile& other);
};

// Proton/hatchet JSON: [tree, device_info, {"wavekit": ...}]. Reads Proton's files too.
std::string to_hatchet_json(const Profile& profile);
Profile from_hatchet_json(const std::string& text, const std::string& origin);

// Compact binary (".wkp"): little-endian, names table then pre-order nodes.
std::vector<std::uint8_t> to_binary(const Profile& profile);
Profile from_binary(const std::vector<std::uint8_t>& bytes, const std::string& origin);

// Reads a .hatchet / .json / .wkp file, or a directory of phase files (merged).
Profile load_profile(const std::string& path);

// Chrome trace (Perfetto reads it): one complete event per kernel record.
struct TraceEvent {
  std::string name;
  std::string context;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
};
std::string to_chrome_trace(const std::vector<TraceEvent>& events);

}  // namespace wavekit::profile
