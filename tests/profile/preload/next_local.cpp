// Opened with dlopen(RTLD_LOCAL) after the C library: dlsym(RTLD_NEXT) from here must still find
// the C library's strlen, which was loaded before this object.
#include <dlfcn.h>

extern "C" void* wavekit_probe_local_next() {
  void* found = dlsym(RTLD_NEXT, "strlen");
  // Not a tail call: dlsym must see this library as its caller.
  asm volatile("" ::: "memory");
  return found;
}
