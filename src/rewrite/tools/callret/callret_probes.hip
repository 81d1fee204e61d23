// callret's probe: one record per call site per wave (CallRecord below, laid out as the
// reporter in callret.cpp reads it), updated at each return of the call with every active
// lane's 32-bit return value (v0).
#include "wavekit/probe/probe.h"

namespace {

struct CallRecord {
  uint64_t returns;     // how many times the call returned in this wave
  uint64_t lanes;       // active lanes, summed over those returns
  uint32_t first_lane;  // the lowest active lane at the first return
  int32_t first_value;  // its value
  int32_t min;          // over every active lane of every return
  int32_t max;
  uint64_t hash;  // sum of lane_hash(lane, value) over every active lane of every return
};

// splitmix64's finaliser: a well-mixed 64-bit function of (lane, value), summed so that the
// result does not depend on the order lanes are visited in.
__attribute__((device)) uint64_t lane_hash(uint32_t lane, uint32_t value) {
  uint64_t z = (static_cast<uint64_t>(lane) << 32 | value) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

WAVEKIT_PROBE void callret_record(wavekit::probe::Slot, CallRecord* record, uint32_t value) {
  // The active lanes' values are read lane by lane in a uniform loop, so that the first active
  // lane can update the record alone.
  uint64_t active = wavekit::probe::Wave::exec();
  if (active == 0) return;
  const uint32_t first_lane = static_cast<uint32_t>(__builtin_ctzll(active));
  const int32_t first_value = static_cast<int32_t>(__builtin_amdgcn_readlane(value, first_lane));
  // Each lane hashes its own value (vector code, once), the loop only gathers.
  const uint64_t own_hash = lane_hash(wavekit::probe::Wave::lane(), value);
  const uint32_t own_hash_lo = static_cast<uint32_t>(own_hash);
  const uint32_t own_hash_hi = static_cast<uint32_t>(own_hash >> 32);
  int32_t low = first_value, high = first_value;
  uint64_t hash = 0, lanes = 0;
  for (uint64_t left = active; left != 0; left &= left - 1) {
    const uint32_t lane = static_cast<uint32_t>(__builtin_ctzll(left));
    const int32_t lane_value = static_cast<int32_t>(__builtin_amdgcn_readlane(value, lane));
    low = lane_value < low ? lane_value : low;
    high = lane_value > high ? lane_value : high;
    // readlane returns int: widen through uint32_t, or the low half would be sign-extended.
    const uint32_t hash_hi = static_cast<uint32_t>(__builtin_amdgcn_readlane(own_hash_hi, lane));
    const uint32_t hash_lo = static_cast<uint32_t>(__builtin_amdgcn_readlane(own_hash_lo, lane));
    hash += static_cast<uint64_t>(hash_hi) << 32 | hash_lo;
    ++lanes;
  }
  if (wavekit::probe::Wave::lane() != first_lane) return;
  if (record->returns == 0) {
    record->first_lane = first_lane;
    record->first_value = first_value;
    record->min = low;
    record->max = high;
  } else {
    record->min = low < record->min ? low : record->min;
    record->max = high > record->max ? high : record->max;
  }
  record->returns += 1;
  record->lanes += lanes;
  record->hash += hash;
}
