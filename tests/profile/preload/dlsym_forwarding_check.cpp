// Run with the profiler library preloaded: its dlsym must answer as the C library's would,
// for plain handles and for RTLD_NEXT (resolved from the caller, not from the preloaded
// library), and must not start anything without WAVEKIT_PROFILE_OUTPUT. Exit status 0: fine.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>

extern "C" void* wavekit_probe_next();
extern "C" int wavekit_probe_second_loaded();

int main() {
  int failures = 0;
  auto expect = [&](bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "dlsym_forwarding_check: %s\n", what);
      ++failures;
    }
  };
  expect(wavekit_probe_second_loaded() == 1, "the second library is not loaded");
  using Value = int (*)();
  auto next = reinterpret_cast<Value>(wavekit_probe_next());
  expect(next && next() == 2, "RTLD_NEXT from the first library did not find the second's");
  // A library opened later with RTLD_LOCAL asks for the next strlen: the C library's.
  void* local = dlopen(WAVEKIT_NEXT_LOCAL_PATH, RTLD_NOW | RTLD_LOCAL);
  auto local_next =
      local ? reinterpret_cast<void* (*)()>(dlsym(local, "wavekit_probe_local_next")) : nullptr;
  expect(local_next && local_next() == reinterpret_cast<void*>(&std::strlen),
         "RTLD_NEXT from a dlopen'ed library did not find the C library's strlen");
  auto strlen_default = reinterpret_cast<decltype(&std::strlen)>(dlsym(RTLD_DEFAULT, "strlen"));
  expect(strlen_default && strlen_default("abc") == 3, "RTLD_DEFAULT lookup of strlen failed");
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  expect(libc && dlsym(libc, "strlen"), "handle lookup of strlen in libc failed");
  expect(!dlsym(RTLD_DEFAULT, "wavekit_no_such_symbol"), "a missing symbol was found");
  expect(!dlsym(RTLD_NEXT, "wavekit_no_such_symbol"), "a missing RTLD_NEXT symbol was found");
  // The preloaded library's own dlsym is the one in use (else the test proves nothing).
  Dl_info info{};
  void* used = dlsym(RTLD_DEFAULT, "dlsym");
  expect(used && dladdr(used, &info) && std::strstr(info.dli_fname, "wavekit_profile_events"),
         "dlsym is not the preloaded profiler's");
  return failures == 0 ? 0 : 1;
}
