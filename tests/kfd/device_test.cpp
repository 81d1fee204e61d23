// The emulated device's answers, against the driver's own header: an unknown request fails as
// the driver fails it, a buffer is host pages at the address asked for, shared with every mmap
// of its offset, and events wake their waiters or time out.
#include "wavekit/kfd/device.h"

#include <gtest/gtest.h>
#include <hsa/amd_hsa_queue.h>
#include <hsa/amd_hsa_signal.h>
#include <hsa/hsa.h>
#include <linux/kfd_ioctl.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <thread>

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

TEST(Device, UserMemoryElsewhereThanItsGpuAddressIsRefused) {
  Device device(target_named("gfx90a"), nullptr);
  alignas(4096) static unsigned char page[4096];
  kfd_ioctl_alloc_memory_of_gpu_args alloc{};
  alloc.va_addr = reinterpret_cast<uint64_t>(page) + (uint64_t(1) << 40);
  alloc.mmap_offset = reinterpret_cast<uint64_t>(page);
  alloc.size = sizeof page;
  alloc.gpu_id = kGpuId;
  alloc.flags = KFD_IOC_ALLOC_MEM_FLAGS_USERPTR;
  errno = 0;
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc), -1);
  EXPECT_EQ(errno, EINVAL);
  alloc.va_addr = alloc.mmap_offset;
  EXPECT_EQ(device.kfd_ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc), 0);
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

  __atomic_store_n(&dependency.value, 0, __ATOMIC_RELEASE);
  wait.timeout = 10000;
  ASSERT_EQ(device.kfd_ioctl(AMDKFD_IOC_WAIT_EVENTS, &wait), 0);
  EXPECT_EQ(wait.wait_result, uint32_t(KFD_IOC_WAIT_RESULT_COMPLETE));
  EXPECT_EQ(__atomic_load_n(&done.value, __ATOMIC_ACQUIRE), 0);
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
