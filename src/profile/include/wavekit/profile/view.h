// Text and JSON views of a profile for `wavekit profile-view`: the context tree with time,
// count, FLOP/s and utilisation; the top kernels; the difference between two profiles.
#pragma once

#include <cstddef>
#include <limits>
#include <string>

#include "wavekit/profile/profile_data.h"

namespace wavekit::profile {

struct ViewOptions {
  std::string include;  // regex: keep frames on a path to a matching frame
  std::string exclude;  // regex: drop matching frames and their subtrees
  std::size_t max_depth = std::numeric_limits<std::size_t>::max();
  double min_fraction = 0;  // hide frames below this share of total time
  std::size_t top = 20;
  std::string device_model;  // overrides the profile's device for peaks ("H200")
  double clock_mhz = 0;      // scales peaks; 0: the profile's clock, else the boost clock
};

// Applies include/exclude filters (regex errors throw wavekit::Error naming the option).
Profile filter_profile(const Profile& profile, const ViewOptions& options);

std::string render_tree(const Profile& profile, const ViewOptions& options);
std::string render_top(const Profile& profile, const ViewOptions& options);
std::string render_diff(const Profile& base, const Profile& other, const ViewOptions& options);
std::string render_self(const Profile& profile);

// The same views for machines.
std::string tree_json(const Profile& profile, const ViewOptions& options);
std::string top_json(const Profile& profile, const ViewOptions& options);
std::string diff_json(const Profile& base, const Profile& other, const ViewOptions& options);

}  // namespace wavekit::profile
