// Loaded before next_second: asks dlsym(RTLD_NEXT) for a function both define, which must
// give next_second's (the next definition after this object), whoever defines dlsym.
#include <dlfcn.h>

extern "C" int wavekit_probe_value() { return 1; }

extern "C" void* wavekit_probe_next() {
  void* found = dlsym(RTLD_NEXT, "wavekit_probe_value");
  // Not a tail call: dlsym must see this library as its caller.
  asm volatile("" ::: "memory");
  return found;
}
