/* What kernels/divergent.hip computes for one input, on the CPU: the examples' oracle. */
#ifndef WAVEKIT_EXAMPLES_DIVERGENT_REFERENCE_H
#define WAVEKIT_EXAMPLES_DIVERGENT_REFERENCE_H

static unsigned divergent_reference(unsigned value) {
  unsigned result;
  switch (value & 3) {
    case 0:
      result = value * 3;
      break;
    case 1:
      result = value ^ 0x5a5a5a5au;
      break;
    case 2:
      result = value >> 2;
      break;
    default:
      result = value + 12345;
      break;
  }
  unsigned steps = 0;
  for (unsigned x = (value % 97) + 1; x != 1 && steps < 1000; ++steps)
    x = (x & 1) ? 3 * x + 1 : x / 2;
  return result + steps;
}

#endif
