// libwavekit-kfd.so: LD_PRELOAD it and the process sees an emulated KFD. The libc calls that
// reach the driver are interposed: paths under the sysfs topology are redirected into a
// generated tree, /dev/kfd and the render node open as fake fds (memfds, so that their numbers
// are the process's own), ioctl and mmap on those fds go to wavekit::kfd::Device. libdrm's
// device set-up (amdgpu_device_initialize and its marketing-name query), which libhsakmt calls
// on the render node, is answered above the ioctl level.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "wavekit/kfd/device.h"
#include "wavekit/kfd/topology.h"

namespace {

using namespace wavekit::kfd;

template <typename F>
F real(const char* name) {
  // The next definition after this library's: libc's (or libdrm's).
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

constexpr const char* kKfdPath = "/dev/kfd";
constexpr const char* kSysfsKfd = "/sys/devices/virtual/kfd";
constexpr const char* kClassKfd = "/sys/class/kfd";

// What amdgpu_device_initialize returns for the emulated render node: told apart from a real
// libdrm handle by its address being in State::drm_devices, never by looking into it.
struct FakeDrmDevice {
  int fd;
};

struct State {
  // Recursive: building the tree or the device calls open and close, which come back here.
  std::recursive_mutex mutex;
  std::set<int> kfd_fds, render_fds;
  std::set<std::FILE*> lsmod_streams;
  std::set<FakeDrmDevice*> drm_devices;
  std::string root;  // the generated tree; it mirrors / for the paths it holds
  pid_t root_owner = 0;
  Device* device = nullptr;
};

State& state() {
  // Never destroyed: interposed calls arrive from other libraries' destructors and atexit
  // handlers after this library's static destructors would have run.
  static State* s = new State;
  return *s;
}

Target configured_target() {
  const char* gfx = std::getenv("WAVEKIT_KFD_TARGET");
  try {
    return target_named(gfx ? gfx : "");
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s; using gfx90a\n", e.what());
    return target_named("gfx90a");
  }
}

Device& device() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.device) {
    std::FILE* log = nullptr;
    if (const char* path = std::getenv("WAVEKIT_KFD_LOG"))
      log = std::strcmp(path, "-") == 0
                ? stderr
                : real<std::FILE* (*)(const char*, const char*)>("fopen")(path, "a");
    s.device = new Device(configured_target(), log);
  }
  return *s.device;
}

bool write_file(const std::string& path, const std::string& contents) {
  auto real_open = real<int (*)(const char*, int, ...)>("open");
  int fd = real_open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = write(fd, contents.data(), contents.size()) == ssize_t(contents.size());
  close(fd);
  return ok;
}

void make_dirs(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1))
    mkdir(path.substr(0, slash).c_str(), 0755);
  mkdir(path.c_str(), 0755);
}

void remove_root() {
  State& s = state();
  if (s.root.empty() || s.root_owner != getpid()) return;
  nftw(
      s.root.c_str(), [](const char* path, const struct stat*, int, FTW*) { return remove(path); },
      16, FTW_DEPTH | FTW_PHYS);
}

// The tree, written on the first access to a redirected path (not at load time: every process
// the preloaded one starts loads this library too, and most never look at the topology).
const std::string& root() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.root.empty()) return s.root;
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/wavekit-kfd-XXXXXX";
  if (!mkdtemp(dir.data())) {
    std::fprintf(stderr, "wavekit: kfd: cannot create the topology tree in %s: %s\n", dir.c_str(),
                 std::strerror(errno));
    return s.root;
  }
  struct sysinfo info {};
  sysinfo(&info);
  std::string topology = dir + kSysfsKfd + "/kfd/topology";
  for (const auto& [relative, contents] : topology_files(
           configured_target(), uint32_t(get_nprocs()), uint64_t(info.totalram) * info.mem_unit)) {
    std::string path = topology + "/" + relative;
    make_dirs(path.substr(0, path.rfind('/')));
    if (!write_file(path, contents))
      std::fprintf(stderr, "wavekit: kfd: cannot write %s: %s\n", path.c_str(),
                   std::strerror(errno));
  }
  // rocminfo asks `lsmod | grep amdgpu` whether the driver is loaded.
  write_file(dir + "/lsmod", "amdgpu              16384  0\n");
  s.root = dir;
  s.root_owner = getpid();
  std::atexit(remove_root);
  return s.root;
}

bool has_prefix(const char* path, const char* prefix) {
  size_t n = std::strlen(prefix);
  return std::strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

// The path to open instead of path, or path itself.
const char* redirect(const char* path, std::string& storage) {
  if (!path) return path;
  if (has_prefix(path, kSysfsKfd))
    storage = root() + path;
  else if (has_prefix(path, kClassKfd))
    storage = root() + kSysfsKfd + (path + std::strlen(kClassKfd));
  else
    return path;
  return storage.c_str();
}

bool is_render_node(const char* path) {
  return path &&
         std::strcmp(path, ("/dev/dri/renderD" + std::to_string(kDrmRenderMinor)).c_str()) == 0;
}

int open_fake(bool kfd) {
  int fd = memfd_create(kfd ? "wavekit-kfd" : "wavekit-renderD", MFD_CLOEXEC);
  if (fd < 0) return fd;
  device().log("open %s -> fd %d", kfd ? kKfdPath : "render node", fd);
  State& s = state();
  std::lock_guard lock(s.mutex);
  (kfd ? s.kfd_fds : s.render_fds).insert(fd);
  return fd;
}

bool is_fake(int fd, bool kfd) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return (kfd ? s.kfd_fds : s.render_fds).count(fd) != 0;
}

// What every open variant does first: the fake fd for a device path, -2 for any other path.
int open_device(const char* path) {
  if (path && std::strcmp(path, kKfdPath) == 0) return open_fake(true);
  if (is_render_node(path)) return open_fake(false);
  return -2;
}

mode_t mode_argument(int flags, va_list args) {
  return (flags & (O_CREAT | O_TMPFILE)) ? mode_t(va_arg(args, int)) : 0;
}

bool is_fake_handle(void* handle) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.drm_devices.count(static_cast<FakeDrmDevice*>(handle)) != 0;
}

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_argument(flags, args);
  va_end(args);
  if (int fd = open_device(path); fd != -2) return fd;
  std::string storage;
  return real<int (*)(const char*, int, ...)>("open")(redirect(path, storage), flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_argument(flags, args);
  va_end(args);
  if (int fd = open_device(path); fd != -2) return fd;
  std::string storage;
  return real<int (*)(const char*, int, ...)>("open64")(redirect(path, storage), flags, mode);
}

int openat(int dirfd, const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_argument(flags, args);
  va_end(args);
  if (int fd = open_device(path); fd != -2) return fd;
  std::string storage;
  return real<int (*)(int, const char*, int, ...)>("openat")(dirfd, redirect(path, storage), flags,
                                                             mode);
}

int __open_2(const char* path, int flags) { return open(path, flags); }
int __open64_2(const char* path, int flags) { return open64(path, flags); }

std::FILE* fopen(const char* path, const char* mode) {
  std::string storage;
  return real<std::FILE* (*)(const char*, const char*)>("fopen")(redirect(path, storage), mode);
}

std::FILE* fopen64(const char* path, const char* mode) {
  std::string storage;
  return real<std::FILE* (*)(const char*, const char*)>("fopen64")(redirect(path, storage), mode);
}

DIR* opendir(const char* path) {
  std::string storage;
  return real<DIR* (*)(const char*)>("opendir")(redirect(path, storage));
}

int access(const char* path, int mode) {
  if (std::strcmp(path, kKfdPath) == 0 || is_render_node(path)) return 0;
  std::string storage;
  return real<int (*)(const char*, int)>("access")(redirect(path, storage), mode);
}

int stat(const char* path, struct stat* buf) {
  if (std::strcmp(path, kKfdPath) == 0 || is_render_node(path)) {
    // A character device readable and writable by all, as udev's rule for the driver has it.
    std::memset(buf, 0, sizeof *buf);
    buf->st_mode = S_IFCHR | 0666;
    return 0;
  }
  std::string storage;
  return real<int (*)(const char*, struct stat*)>("stat")(redirect(path, storage), buf);
}

int close(int fd) {
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    if (s.kfd_fds.erase(fd) + s.render_fds.erase(fd) && s.device) s.device->log("close fd %d", fd);
  }
  return real<int (*)(int)>("close")(fd);
}

int ioctl(int fd, unsigned long request, ...) {
  va_list args;
  va_start(args, request);
  void* arg = va_arg(args, void*);
  va_end(args);
  if (is_fake(fd, true)) return device().kfd_ioctl(request, arg);
  if (is_fake(fd, false)) return device().render_ioctl(request, arg);
  return real<int (*)(int, unsigned long, void*)>("ioctl")(fd, request, arg);
}

void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  if (fd >= 0 && (is_fake(fd, true) || is_fake(fd, false)))
    return device().map(addr, length, prot, flags, offset);
  return real<void* (*)(void*, size_t, int, int, int, off_t)>("mmap")(addr, length, prot, flags, fd,
                                                                      offset);
}

void* mmap64(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  return mmap(addr, length, prot, flags, fd, offset);
}

std::FILE* popen(const char* command, const char* type) {
  if (command && std::strstr(command, "lsmod") && std::strstr(command, "amdgpu")) {
    std::FILE* stream =
        real<std::FILE* (*)(const char*, const char*)>("fopen")((root() + "/lsmod").c_str(), "r");
    if (stream) {
      State& s = state();
      std::lock_guard lock(s.mutex);
      s.lsmod_streams.insert(stream);
    }
    return stream;
  }
  return real<std::FILE* (*)(const char*, const char*)>("popen")(command, type);
}

int pclose(std::FILE* stream) {
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    if (s.lsmod_streams.erase(stream)) return std::fclose(stream) == 0 ? 0 : -1;
  }
  return real<int (*)(std::FILE*)>("pclose")(stream);
}

// libdrm (libhsakmt 5.2 opens the render node with drmOpenRender and asks libdrm_amdgpu for
// the marketing name). Real devices, if any, still reach the real libraries.
int drmOpenRender(int minor) {
  if (uint32_t(minor) == kDrmRenderMinor) return open_fake(false);
  auto next = real<int (*)(int)>("drmOpenRender");
  if (!next) {
    errno = ENOENT;
    return -ENOENT;
  }
  return next(minor);
}

int drmClose(int fd) {
  if (is_fake(fd, false)) return close(fd);
  auto next = real<int (*)(int)>("drmClose");
  return next ? next(fd) : close(fd);
}

int amdgpu_device_initialize(int fd, uint32_t* major, uint32_t* minor, void** handle) {
  if (is_fake(fd, false)) {
    *major = 3;
    *minor = 42;
    auto* fake = new FakeDrmDevice{fd};
    *handle = fake;
    State& s = state();
    {
      std::lock_guard lock(s.mutex);
      s.drm_devices.insert(fake);
    }
    device().log("amdgpu_device_initialize fd %d", fd);
    return 0;
  }
  auto next = real<int (*)(int, uint32_t*, uint32_t*, void**)>("amdgpu_device_initialize");
  return next ? next(fd, major, minor, handle) : -ENODEV;
}

const char* amdgpu_get_marketing_name(void* handle) {
  if (is_fake_handle(handle)) return device().target().marketing_name.c_str();
  auto next = real<const char* (*)(void*)>("amdgpu_get_marketing_name");
  return next ? next(handle) : nullptr;
}

int amdgpu_device_deinitialize(void* handle) {
  if (is_fake_handle(handle)) {
    State& s = state();
    {
      std::lock_guard lock(s.mutex);
      s.drm_devices.erase(static_cast<FakeDrmDevice*>(handle));
    }
    delete static_cast<FakeDrmDevice*>(handle);
    return 0;
  }
  auto next = real<int (*)(void*)>("amdgpu_device_deinitialize");
  return next ? next(handle) : -ENODEV;
}

}  // extern "C"
