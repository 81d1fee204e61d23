// The emulated device's answers, against the driver's own header: an unknown request fails as
// the driver fails it, a buffer is host pages at the address asked for, shared with every mmap
// of its offset, registered user memory is reached at the GPU address it was given, and events
// wake their waiters or time out.
#include "wavekit/kfd/device.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <hsa/amd_hsa_queue.h>
#include <hsa/amd_hsa_signal.h>
#include <hsa/hsa.h>
#include <linux/kfd_ioctl.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

namespace {

using wavekit::kfd::Device;
using wavekit::kfd::kGpuId;
using wavekit::kfd::target_named;

TEST(Device, AnswersTheVersionOfTheHeader) {
  Device device(target_named("gfx90a"), nullptr);
  kfd_ioctl_get_version_args version{};
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_GET_VERSION, &version), 0);
  EXPECT_EQ(version.major_version, KFD_IOCTL_MAJOR_VERSION);
  EXPECT_EQ(version.minor_version, KFD_IOCTL_MINOR_VERSION);
}

TEST(Device, UnknownRequestFailsWithEinval) {
  Device device(target_named("gfx90a"), nullptr);
  kfd_ioctl_svm_args svm{};
  errno = 0;
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_SVM, &svm), -1);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(device.kfd_ioctl(_IOWR('K', 0x82, char[40]), &svm), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST(Device, BufferIsHostMemoryAtItsAddressSharedWithItsMapping) {
  Device device(target_named("gfx90a"), nullptr);
  constexpr size_t kSize = 2 * 4096;
  // User space reserves the address range first, as libhsakmt's aperture does.
  void* reserved =
      mmap(nullptr, kSize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(reserved, MAP_FAILED);
  kfd_ioctl_alloc_memory_of_gpu_args alloc{};
  alloc.va_addr = reinterpret_cast<uint64_t>(reserved);
  alloc.size = kSize;
  alloc.gpu_id = kGpuId;
  alloc.flags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc), 0);
  auto* gpu = static_cast<unsigned char*>(reserved);
  gpu[4097] = 0x5a;  // writable at the GPU address itself
  void* cpu =
      device.map(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, off_t(alloc.mmap_offset));
  ASSERT_NE(cpu, MAP_FAILED);
  EXPECT_EQ(static_cast<unsigned char*>(cpu)[4097], 0x5a);
  static_cast<unsigned char*>(cpu)[0] = 0xa5;
  EXPECT_EQ(gpu[0], 0xa5);
  errno = 0;
  EXPECT_EQ(device.map(nullptr, kSize, PROT_READ, MAP_SHARED,
                       off_t(alloc.mmap_offset + (uint64_t(1) << 32))),
            MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  munmap(cpu, kSize);
  kfd_ioctl_free_memory_of_gpu_args release{alloc.handle};
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_FREE_MEMORY_OF_GPU, &release), 0);
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_FREE_MEMORY_OF_GPU, &release), -1);
  munmap(reserved, kSize);
}

TEST(Device, UserMemoryNeedsPageAlignedAddressesAndAFreeGpuAddress) {
  Device device(target_named("gfx90a"), nullptr);
  alignas(4096) static unsigned char page[4096];
  kfd_ioctl_alloc_memory_of_gpu_args alloc{};
  alloc.va_addr = reinterpret_cast<uint64_t>(page) + (uint64_t(1) << 40);
  alloc.mmap_offset = reinterpret_cast<uint64_t>(page) + 8;
  alloc.size = sizeof page;
  alloc.gpu_id = kGpuId;
  alloc.flags = KFD_IOC_ALLOC_MEM_FLAGS_USERPTR;
  errno = 0;
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc), -1);
  EXPECT_EQ(errno, EINVAL);
  alloc.mmap_offset = reinterpret_cast<uint64_t>(page);
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc), 0);
  errno = 0;
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc), -1)
      << "two buffers at one GPU address";
  EXPECT_EQ(errno, EINVAL);
  alloc.va_addr = alloc.mmap_offset;  // the same pages at their own address too
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc), 0);
}

// A buffer of the device at an address reserved the way libhsakmt reserves its aperture.
void* allocate_vram(Device& device, size_t size) {
  void* reserved =
      mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  EXPECT_NE(reserved, MAP_FAILED);
  kfd_ioctl_alloc_memory_of_gpu_args alloc{};
  alloc.va_addr = reinterpret_cast<uint64_t>(reserved);
  alloc.size = size;
  alloc.gpu_id = kGpuId;
  alloc.flags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
                KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE;
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc), 0);
  return reserved;
}

// vector_add.co's segments placed in a VRAM buffer from vaddr 0; its kernel descriptor's address.
uint64_t load_vector_add(Device& device) {
  std::ifstream file(WAVEKIT_KFD_TEST_VECTOR_ADD, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_GT(bytes.size(), sizeof(Elf64_Ehdr));
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(bytes.data());
  const auto* segments = reinterpret_cast<const Elf64_Phdr*>(bytes.data() + header->e_phoff);
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(bytes.data() + header->e_shoff);
  uint64_t image_size = 0;
  for (unsigned i = 0; i < header->e_phnum; ++i)
    if (segments[i].p_type == PT_LOAD)
      image_size = std::max<uint64_t>(image_size, segments[i].p_vaddr + segments[i].p_memsz);
  auto* image = static_cast<char*>(allocate_vram(device, (image_size + 4095) & ~uint64_t(4095)));
  for (unsigned i = 0; i < header->e_phnum; ++i)
    if (segments[i].p_type == PT_LOAD)
      std::memcpy(image + segments[i].p_vaddr, bytes.data() + segments[i].p_offset,
                  segments[i].p_filesz);
  for (unsigned i = 0; i < header->e_shnum; ++i) {
    if (sections[i].sh_type != SHT_DYNSYM) continue;
    const auto* symbols = reinterpret_cast<const Elf64_Sym*>(bytes.data() + sections[i].sh_offset);
    const char* names = bytes.data() + sections[sections[i].sh_link].sh_offset;
    for (size_t s = 0; s < sections[i].sh_size / sizeof(Elf64_Sym); ++s)
      if (std::strcmp(names + symbols[s].st_name, "vector_add.kd") == 0)
        return reinterpret_cast<uint64_t>(image + symbols[s].st_value);
  }
  ADD_FAILURE() << "no vector_add.kd in " << WAVEKIT_KFD_TEST_VECTOR_ADD;
  return 0;
}

// Memory registered after allocation gets a GPU address of its own from libhsakmt (CLR's staging
// and pinned buffers): a kernel given only GPU addresses reads and writes the user's pages. The
// GPU addresses stay PROT_NONE on the host, so an access that skipped the translation would
// fault the test rather than pass it.
TEST(Device, KernelReachesRegisteredUserMemoryThroughItsOwnGpuAddress) {
  Device device(target_named("gfx90a"), nullptr);
  constexpr unsigned kElements = 3000;  // three pages of floats, the last partly used
  constexpr size_t kBytes = (kElements * sizeof(float) + 4095) & ~size_t(4095);
  float* host[3];
  uint64_t gpu[3];
  void* aperture = mmap(nullptr, 3 * (kBytes + 4096), PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(aperture, MAP_FAILED);
  for (unsigned i = 0; i < 3; ++i) {
    host[i] = static_cast<float*>(std::aligned_alloc(4096, kBytes));
    gpu[i] = reinterpret_cast<uint64_t>(aperture) + i * (kBytes + 4096);  // a guard page apart
    kfd_ioctl_alloc_memory_of_gpu_args alloc{};
    alloc.va_addr = gpu[i];
    alloc.mmap_offset = reinterpret_cast<uint64_t>(host[i]);
    alloc.size = kBytes;
    alloc.gpu_id = kGpuId;
    alloc.flags = KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
    ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc), 0);
  }
  for (unsigned i = 0; i < kElements; ++i) {
    host[0][i] = float(i) * 0.25f;
    host[1][i] = 7.0f - float(i);
    host[2][i] = -1.0f;
  }
  uint64_t kernel_object = load_vector_add(device);
  ASSERT_NE(kernel_object, 0u);
  // The explicit arguments (GPU addresses only), then the COV5 hidden group sizes and counts.
  constexpr unsigned kBlock = 256;
  auto* kernarg = static_cast<unsigned char*>(allocate_vram(device, 4096));
  std::memcpy(kernarg, gpu, sizeof gpu);
  std::memcpy(kernarg + 24, &kElements, 4);
  const uint32_t block_count[3] = {(kElements + kBlock - 1) / kBlock, 1, 1};
  const uint16_t group_size[3] = {kBlock, 1, 1}, remainder[3] = {kElements % kBlock, 0, 0};
  const uint16_t dimensions = 1;
  std::memcpy(kernarg + 32, block_count, sizeof block_count);
  std::memcpy(kernarg + 32 + 12, group_size, sizeof group_size);
  std::memcpy(kernarg + 32 + 18, remainder, sizeof remainder);
  std::memcpy(kernarg + 32 + 64, &dimensions, sizeof dimensions);

  kfd_ioctl_create_event_args create{};
  create.event_type = KFD_IOC_EVENT_SIGNAL;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_CREATE_EVENT, &create), 0);
  alignas(64) static hsa_kernel_dispatch_packet_t ring[4];
  for (auto& slot : ring) slot.header = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;
  alignas(64) static amd_queue_t queue{};
  alignas(64) static amd_signal_t done{};
  done.value = 1;
  done.event_id = create.event_id;
  kfd_ioctl_create_queue_args args{};
  args.ring_base_address = reinterpret_cast<uint64_t>(ring);
  args.ring_size = sizeof ring;
  args.read_pointer_address = reinterpret_cast<uint64_t>(&queue.read_dispatch_id);
  args.write_pointer_address = reinterpret_cast<uint64_t>(&queue.write_dispatch_id);
  args.gpu_id = kGpuId;
  args.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_CREATE_QUEUE, &args), 0);

  hsa_kernel_dispatch_packet_t& packet = ring[0];
  packet.workgroup_size_x = kBlock;
  packet.workgroup_size_y = packet.workgroup_size_z = 1;
  packet.grid_size_x = kElements;
  packet.grid_size_y = packet.grid_size_z = 1;
  packet.kernel_object = kernel_object;
  packet.kernarg_address = kernarg;
  packet.completion_signal.handle = reinterpret_cast<uint64_t>(&done);
  const uint32_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                          (1u << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS) << 16;
  __atomic_store_n(reinterpret_cast<uint32_t*>(&packet), header, __ATOMIC_RELEASE);
  __atomic_store_n(&queue.write_dispatch_id, 1, __ATOMIC_RELEASE);

  kfd_event_data data{};
  data.event_id = create.event_id;
  kfd_ioctl_wait_events_args wait{};
  wait.events_ptr = reinterpret_cast<uint64_t>(&data);
  wait.num_events = 1;
  wait.timeout = 60000;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_WAIT_EVENTS, &wait), 0);
  ASSERT_EQ(wait.wait_result, uint32_t(KFD_IOC_WAIT_RESULT_COMPLETE));
  unsigned wrong = 0;
  for (unsigned i = 0; i < kElements; ++i) wrong += host[2][i] != host[0][i] + host[1][i];
  EXPECT_EQ(wrong, 0u);
  kfd_ioctl_destroy_queue_args destroy{args.queue_id, 0};
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_DESTROY_QUEUE, &destroy), 0);
  for (float* memory : host) std::free(memory);
}

TEST(Device, WaitTimesOutUnlessTheEventIsSet) {
  Device device(target_named("gfx90a"), nullptr);
  kfd_ioctl_create_event_args create{};
  create.event_type = KFD_IOC_EVENT_SIGNAL;
  create.auto_reset = 1;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_CREATE_EVENT, &create), 0);
  kfd_event_data data{};
  data.event_id = create.event_id;
  kfd_ioctl_wait_events_args wait{};
  wait.events_ptr = reinterpret_cast<uint64_t>(&data);
  wait.num_events = 1;
  wait.timeout = 10;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_WAIT_EVENTS, &wait), 0);
  EXPECT_EQ(wait.wait_result, uint32_t(KFD_IOC_WAIT_RESULT_TIMEOUT));

  std::thread setter([&] {
    kfd_ioctl_set_event_args set{create.event_id, 0};
    device.kfd_ioctl(AMDKFD_IOC_SET_EVENT, &set);
  });
  wait.timeout = 0xffffffffu;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_WAIT_EVENTS, &wait), 0);
  setter.join();
  EXPECT_EQ(wait.wait_result, uint32_t(KFD_IOC_WAIT_RESULT_COMPLETE));
  // Auto-reset: the wait consumed it.
  wait.timeout = 0;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_WAIT_EVENTS, &wait), 0);
  EXPECT_EQ(wait.wait_result, uint32_t(KFD_IOC_WAIT_RESULT_TIMEOUT));
}

TEST(Device, QueueRunsABarrierAndRaisesTheCompletionSignalsEvent) {
  Device device(target_named("gfx90a"), nullptr);
  kfd_ioctl_create_event_args create{};
  create.event_type = KFD_IOC_EVENT_SIGNAL;
  create.auto_reset = 1;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_CREATE_EVENT, &create), 0);

  alignas(64) static hsa_barrier_and_packet_t ring[4];
  for (auto& slot : ring) slot.header = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;
  alignas(64) static amd_queue_t queue{};
  alignas(64) static amd_signal_t done{};
  alignas(64) static amd_signal_t dependency{};
  done.value = 1;
  done.event_id = create.event_id;
  dependency.value = 1;  // not met yet: the barrier must wait for it
  // Profiling on, as ROCr sets it for HIP's timing events: the completion signal gets stamps.
  queue.queue_properties = AMD_QUEUE_PROPERTIES_ENABLE_PROFILING;

  kfd_ioctl_create_queue_args args{};
  args.ring_base_address = reinterpret_cast<uint64_t>(ring);
  args.ring_size = sizeof ring;
  args.read_pointer_address = reinterpret_cast<uint64_t>(&queue.read_dispatch_id);
  args.write_pointer_address = reinterpret_cast<uint64_t>(&queue.write_dispatch_id);
  args.gpu_id = kGpuId;
  args.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_CREATE_QUEUE, &args), 0);

  ring[0].dep_signal[0].handle = reinterpret_cast<uint64_t>(&dependency);
  ring[0].completion_signal.handle = reinterpret_cast<uint64_t>(&done);
  __atomic_store_n(&ring[0].header, uint16_t(HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE),
                   __ATOMIC_RELEASE);
  __atomic_store_n(&queue.write_dispatch_id, 1, __ATOMIC_RELEASE);

  kfd_event_data data{};
  data.event_id = create.event_id;
  kfd_ioctl_wait_events_args wait{};
  wait.events_ptr = reinterpret_cast<uint64_t>(&data);
  wait.num_events = 1;
  wait.timeout = 50;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_WAIT_EVENTS, &wait), 0);
  EXPECT_EQ(wait.wait_result, uint32_t(KFD_IOC_WAIT_RESULT_TIMEOUT))
      << "the barrier ran before its dependency";
  EXPECT_EQ(__atomic_load_n(&done.value, __ATOMIC_ACQUIRE), 1);

  kfd_ioctl_get_clock_counters_args before{};
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_GET_CLOCK_COUNTERS, &before), 0);
  __atomic_store_n(&dependency.value, 0, __ATOMIC_RELEASE);
  wait.timeout = 10000;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_WAIT_EVENTS, &wait), 0);
  EXPECT_EQ(wait.wait_result, uint32_t(KFD_IOC_WAIT_RESULT_COMPLETE));
  EXPECT_EQ(__atomic_load_n(&done.value, __ATOMIC_ACQUIRE), 0);
  kfd_ioctl_get_clock_counters_args after{};
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_GET_CLOCK_COUNTERS, &after), 0);
  // Stamped on the GPU clock GET_CLOCK_COUNTERS reports, once the dependency was met.
  EXPECT_GE(done.start_ts, before.gpu_clock_counter);
  EXPECT_LE(done.start_ts, done.end_ts);
  EXPECT_LE(done.end_ts, after.gpu_clock_counter);
  EXPECT_EQ(__atomic_load_n(&queue.read_dispatch_id, __ATOMIC_ACQUIRE), 1u);
  EXPECT_EQ(ring[0].header, HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE);

  kfd_ioctl_destroy_queue_args destroy{args.queue_id, 0};
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_DESTROY_QUEUE, &destroy), 0);
  kfd_ioctl_create_queue_args sdma = args;
  sdma.queue_type = KFD_IOC_QUEUE_TYPE_SDMA;
  errno = 0;
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_CREATE_QUEUE, &sdma), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST(Topology, GpuNodeNamesTheTargetAndItsRenderNode) {
  auto files = wavekit::kfd::topology_files(target_named("gfx908"), 2, uint64_t(1) << 30);
  EXPECT_EQ(files.at("nodes/1/gpu_id"), std::to_string(kGpuId) + "\n");
  const std::string& props = files.at("nodes/1/properties");
  EXPECT_NE(props.find("\ndevice_id 29580\n"), std::string::npos) << props;  // 0x738c, MI100
  EXPECT_NE(props.find("\ngfx_target_version 90008\n"), std::string::npos);
  EXPECT_NE(props.find("\ndrm_render_minor 128\n"), std::string::npos);
  EXPECT_NE(props.find("\nsimd_count 480\n"), std::string::npos);
  EXPECT_EQ(files.at("nodes/0/gpu_id"), "0\n");
  EXPECT_THROW(target_named("gfx1100"), std::invalid_argument);
}

}  // namespace
