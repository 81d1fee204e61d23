// Counts, per wave, the blocks a kernel enters (lane 0 of the calling wave counts).
#include "wavekit/probe/probe.h"

WAVEKIT_PROBE void count_entry(wavekit::probe::Slot, uint64_t* entries) {
  if (wavekit::probe::Wave::lane() == 0) *entries += 1;
}
