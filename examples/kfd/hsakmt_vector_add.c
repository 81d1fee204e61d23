/* hsakmt_vector_add: c = a + b on the GPU through the kernel driver's user-space interface
 * alone — libhsakmt (the "thunk") and /dev/kfd, no HSA runtime. It does by hand what ROCr does
 * for a dispatch: finds the GPU node in the topology, allocates and maps GPU memory, places the
 * code object's segments in it, creates an AQL queue, writes a kernel-dispatch packet, rings the
 * doorbell, waits on the KFD event its completion signal names, and checks c on the CPU.
 *
 * The HSA headers are used for the layouts the command processor reads (the AQL packet,
 * amd_queue_t, amd_signal_t: the hardware's ABI); nothing of libhsa-runtime64 is linked.
 * usage: hsakmt_vector_add [CODE_OBJECT]   (default: vector_add.co next to this program's build) */
#include <elf.h>
#include <hsa/amd_hsa_queue.h>
#include <hsa/amd_hsa_signal.h>
#include <hsa/hsa.h>
#include <hsakmt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    HSAKMT_STATUS status_ = (call);                                                              \
    if (status_ != HSAKMT_STATUS_SUCCESS) {                                                      \
      fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #call, (int)status_); \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

enum { kPage = 4096, kQueueBytes = 64 * 64, kWaitMilliseconds = 60000 };

static size_t page_align(size_t size) { return (size + kPage - 1) & ~(size_t)(kPage - 1); }

/* Memory the GPU node can reach and the CPU can read and write: VRAM with host access (a
 * large-BAR GPU; the emulated one) when vram is set, else the system node's memory. Mapped to
 * the GPUs, as ROCr maps what it allocates; on a dGPU the GPU address is the CPU address. */
static void* allocate(HSAuint32 node, size_t size, int vram) {
  HsaMemFlags flags;
  memset(&flags, 0, sizeof flags);
  flags.ui32.HostAccess = 1;
  flags.ui32.NonPaged = (unsigned)vram;
  flags.ui32.ExecuteAccess = 1;
  flags.ui32.NoSubstitute = 1;
  void* memory = NULL;
  size = page_align(size);
  CHECK(hsaKmtAllocMemory(node, size, flags, &memory));
  HSAuint64 gpu_address = 0;
  CHECK(hsaKmtMapMemoryToGPU(memory, size, &gpu_address));
  memset(memory, 0, size);
  return memory;
}

static void release(void* memory, size_t size) {
  CHECK(hsaKmtUnmapMemoryToGPU(memory));
  CHECK(hsaKmtFreeMemory(memory, page_align(size)));
}

typedef struct {
  uint8_t* image; /* the loaded segments, from the object's vaddr 0 */
  size_t size;
  uint64_t kernel_object; /* the kernel descriptor's GPU address */
  uint32_t group_segment_size, private_segment_size, kernarg_size;
} loaded_kernel;

static uint8_t* read_file(const char* path, size_t* size) {
  FILE* file = fopen(path, "rb");
  if (!file) {
    perror(path);
    exit(1);
  }
  fseek(file, 0, SEEK_END);
  long length = ftell(file);
  fseek(file, 0, SEEK_SET);
  uint8_t* bytes = malloc(length > 0 ? (size_t)length : 1);
  if (length <= 0 || !bytes || fread(bytes, 1, (size_t)length, file) != (size_t)length) {
    fprintf(stderr, "%s: cannot read the code object\n", path);
    exit(1);
  }
  fclose(file);
  *size = (size_t)length;
  return bytes;
}

/* The smallest loader that does what ROCr's does for an object without relocations: its
 * PT_LOAD segments copied into GPU memory at their vaddrs from one base, the kernel descriptor
 * found through .dynsym. An object that needs relocating is refused, not half-loaded. */
static loaded_kernel load_kernel(HSAuint32 gpu_node, const char* path, const char* name) {
  size_t file_size = 0;
  uint8_t* file = read_file(path, &file_size);
  const Elf64_Ehdr* header = (const Elf64_Ehdr*)file;
  if (file_size < sizeof *header || memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
      header->e_machine != EM_AMDGPU ||
      header->e_phoff + (uint64_t)header->e_phnum * sizeof(Elf64_Phdr) > file_size ||
      header->e_shoff + (uint64_t)header->e_shnum * sizeof(Elf64_Shdr) > file_size) {
    fprintf(stderr, "%s: not an AMDGPU code object\n", path);
    exit(1);
  }
  const Elf64_Phdr* segments = (const Elf64_Phdr*)(file + header->e_phoff);
  const Elf64_Shdr* sections = (const Elf64_Shdr*)(file + header->e_shoff);
  loaded_kernel kernel;
  memset(&kernel, 0, sizeof kernel);
  for (unsigned i = 0; i < header->e_phnum; ++i)
    if (segments[i].p_type == PT_LOAD && segments[i].p_vaddr + segments[i].p_memsz > kernel.size)
      kernel.size = segments[i].p_vaddr + segments[i].p_memsz;
  for (unsigned i = 0; i < header->e_shnum; ++i)
    if (sections[i].sh_type == SHT_RELA && (sections[i].sh_flags & SHF_ALLOC) &&
        sections[i].sh_size) {
      fprintf(stderr, "%s: the code object has dynamic relocations; this loader applies none\n",
              path);
      exit(1);
    }
  kernel.image = allocate(gpu_node, kernel.size, 1);
  for (unsigned i = 0; i < header->e_phnum; ++i) {
    const Elf64_Phdr* segment = &segments[i];
    if (segment->p_type != PT_LOAD) continue;
    if (segment->p_offset + segment->p_filesz > file_size) {
      fprintf(stderr, "%s: a segment lies outside the file\n", path);
      exit(1);
    }
    memcpy(kernel.image + segment->p_vaddr, file + segment->p_offset, segment->p_filesz);
  }
  char descriptor_name[256];
  snprintf(descriptor_name, sizeof descriptor_name, "%s.kd", name);
  for (unsigned i = 0; i < header->e_shnum && !kernel.kernel_object; ++i) {
    if (sections[i].sh_type != SHT_DYNSYM || sections[i].sh_link >= header->e_shnum) continue;
    const Elf64_Sym* symbols = (const Elf64_Sym*)(file + sections[i].sh_offset);
    const char* strings = (const char*)(file + sections[sections[i].sh_link].sh_offset);
    for (size_t s = 0; s < sections[i].sh_size / sizeof(Elf64_Sym); ++s)
      if (strcmp(strings + symbols[s].st_name, descriptor_name) == 0 &&
          symbols[s].st_value + 64 <= kernel.size)
        kernel.kernel_object = (uint64_t)(uintptr_t)(kernel.image + symbols[s].st_value);
  }
  free(file);
  if (!kernel.kernel_object) {
    fprintf(stderr, "%s: no kernel descriptor %s in .dynsym\n", path, descriptor_name);
    exit(1);
  }
  /* The kernel descriptor's first words (AMDGPU ABI): group, private and kernarg sizes. */
  const uint32_t* descriptor = (const uint32_t*)(uintptr_t)kernel.kernel_object;
  kernel.group_segment_size = descriptor[0];
  kernel.private_segment_size = descriptor[1];
  kernel.kernarg_size = descriptor[2];
  return kernel;
}

/* The first GPU node of the topology: its ID, and its name as "gfx90a" in `name`. */
static HSAuint32 find_gpu_node(char* name, size_t name_size) {
  HsaSystemProperties system;
  CHECK(hsaKmtAcquireSystemProperties(&system));
  for (HSAuint32 node = 0; node < system.NumNodes; ++node) {
    HsaNodeProperties properties;
    CHECK(hsaKmtGetNodeProperties(node, &properties));
    if (properties.NumFComputeCores == 0) continue;
    snprintf(name, name_size, "gfx%u%u%x", properties.EngineId.ui32.Major,
             properties.EngineId.ui32.Minor, properties.EngineId.ui32.Stepping);
    return node;
  }
  fprintf(stderr, "no GPU node in the KFD topology\n");
  exit(1);
}

int main(int argc, char** argv) {
  char default_object[4096];
  snprintf(default_object, sizeof default_object, "%s/vector_add.co", WAVEKIT_EXAMPLE_OBJECT_DIR);
  const char* object = argc > 1 ? argv[1] : default_object;

  CHECK(hsaKmtOpenKFD());
  HsaVersionInfo version;
  CHECK(hsaKmtGetVersion(&version));
  char gpu_name[32];
  HSAuint32 gpu = find_gpu_node(gpu_name, sizeof gpu_name);
  loaded_kernel kernel = load_kernel(gpu, object, "vector_add");

  /* The operands in VRAM, the kernarg segment, queue and signal in system memory, as ROCr
   * places them. */
  const unsigned n = 1000, block = 256; /* the last workgroup is partial */
  float* a = allocate(gpu, n * sizeof(float), 1);
  float* b = allocate(gpu, n * sizeof(float), 1);
  float* c = allocate(gpu, n * sizeof(float), 1);
  for (unsigned i = 0; i < n; ++i) {
    a[i] = (float)i * 0.5f;
    b[i] = 1000.0f - (float)i;
    c[i] = -1.0f;
  }
  /* The explicit arguments, then the code-object-v5 hidden arguments of a 1-D launch that the
   * kernel reads for its global ID (block counts at +0, group sizes at +12, remainders at +18,
   * the grid's dimensions at +64 of the 8-aligned implicit block), as the HIP runtime fills them.
   */
  struct {
    const float* a;
    const float* b;
    float* c;
    unsigned n;
  } args = {a, b, c, n};
  uint8_t* kernarg = allocate(0, kernel.kernarg_size > sizeof args ? kernel.kernarg_size : 256, 0);
  memcpy(kernarg, &args, sizeof args);
  size_t implicit = (sizeof args + 7) & ~(size_t)7;
  if (kernel.kernarg_size >= implicit + 66) {
    uint32_t block_count[3] = {(n + block - 1) / block, 1, 1};
    uint16_t group_size[3] = {(uint16_t)block, 1, 1};
    uint16_t remainder[3] = {(uint16_t)(n % block), 0, 0};
    uint16_t dimensions = 1;
    memcpy(kernarg + implicit + 0, block_count, sizeof block_count);
    memcpy(kernarg + implicit + 12, group_size, sizeof group_size);
    memcpy(kernarg + implicit + 18, remainder, sizeof remainder);
    memcpy(kernarg + implicit + 64, &dimensions, sizeof dimensions);
  }

  /* The completion signal raises a KFD event when the command processor decrements it: the
   * signal names the event's ID and its mailbox slot in the event page, as ROCr's interrupt
   * signals do. */
  HsaEventDescriptor event_descriptor;
  memset(&event_descriptor, 0, sizeof event_descriptor);
  event_descriptor.EventType = HSA_EVENTTYPE_SIGNAL;
  event_descriptor.NodeId = gpu;
  HsaEvent* event = NULL;
  CHECK(hsaKmtCreateEvent(&event_descriptor, false, false, &event));
  amd_signal_t* signal = allocate(0, sizeof(amd_signal_t), 0);
  signal->kind = AMD_SIGNAL_KIND_USER;
  signal->value = 1;
  signal->event_mailbox_ptr = event->EventData.HWData2;
  signal->event_id = event->EventId;

  /* The queue: the ring, and an amd_queue_t whose dispatch IDs are the read and write pointers
   * the command processor follows (the queue-pointer SGPRs of a dispatch point at it). */
  hsa_kernel_dispatch_packet_t* ring = allocate(0, kQueueBytes, 0);
  for (unsigned i = 0; i < kQueueBytes / sizeof *ring; ++i)
    ring[i].header = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;
  amd_queue_t* queue = allocate(0, sizeof(amd_queue_t), 0);
  queue->hsa_queue.type = HSA_QUEUE_TYPE_SINGLE;
  queue->hsa_queue.base_address = ring;
  queue->hsa_queue.size = kQueueBytes / sizeof *ring;
  HsaQueueResource resource;
  memset(&resource, 0, sizeof resource);
  resource.Queue_read_ptr_aql = (HSAuint64*)&queue->read_dispatch_id;
  resource.Queue_write_ptr_aql = (HSAuint64*)&queue->write_dispatch_id;
  CHECK(hsaKmtCreateQueue(gpu, HSA_QUEUE_COMPUTE_AQL, 100, HSA_QUEUE_PRIORITY_NORMAL, ring,
                          kQueueBytes, NULL, &resource));

  /* The packet: everything but its first word, then the header and setup in one release store
   * (the packet processor may read the slot at any time), then the write index and doorbell. */
  uint64_t index = queue->write_dispatch_id;
  hsa_kernel_dispatch_packet_t* packet = &ring[index % queue->hsa_queue.size];
  packet->workgroup_size_x = (uint16_t)block;
  packet->workgroup_size_y = 1;
  packet->workgroup_size_z = 1;
  packet->grid_size_x = n;
  packet->grid_size_y = 1;
  packet->grid_size_z = 1;
  packet->private_segment_size = kernel.private_segment_size;
  packet->group_segment_size = kernel.group_segment_size;
  packet->kernel_object = kernel.kernel_object;
  packet->kernarg_address = kernarg;
  packet->completion_signal.handle = (uint64_t)(uintptr_t)signal;
  uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                    (1 << HSA_PACKET_HEADER_BARRIER) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  __atomic_store_n((uint32_t*)packet, header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
  __atomic_store_n(&queue->write_dispatch_id, index + 1, __ATOMIC_RELEASE);
  __atomic_store_n(resource.Queue_DoorBell_aql, index, __ATOMIC_RELEASE);

  /* The event wakes the wait; the signal's value says whether the dispatch completed. */
  HSAKMT_STATUS waited = hsaKmtWaitOnEvent(event, kWaitMilliseconds);
  int64_t remaining = __atomic_load_n(&signal->value, __ATOMIC_ACQUIRE);
  if (waited != HSAKMT_STATUS_SUCCESS || remaining != 0) {
    fprintf(stderr, "the dispatch did not complete within %d ms (wait status %d, signal %lld)\n",
            kWaitMilliseconds, (int)waited, (long long)remaining);
    return 1;
  }

  unsigned wrong = 0;
  for (unsigned i = 0; i < n; ++i)
    if (c[i] != a[i] + b[i] && wrong++ < 5)
      fprintf(stderr, "c[%u] = %g, expected %g\n", i, c[i], a[i] + b[i]);
  printf(
      "hsakmt_vector_add on %s (KFD %u.%u, no HSA runtime): %u elements, read index %llu, %u "
      "wrong\n",
      gpu_name, version.KernelInterfaceMajorVersion, version.KernelInterfaceMinorVersion, n,
      (unsigned long long)__atomic_load_n(&queue->read_dispatch_id, __ATOMIC_ACQUIRE), wrong);

  CHECK(hsaKmtDestroyQueue(resource.QueueId));
  CHECK(hsaKmtDestroyEvent(event));
  release(queue, sizeof(amd_queue_t));
  release(ring, kQueueBytes);
  release(signal, sizeof(amd_signal_t));
  release(kernarg, kernel.kernarg_size > sizeof args ? kernel.kernarg_size : 256);
  release(a, n * sizeof(float));
  release(b, n * sizeof(float));
  release(c, n * sizeof(float));
  release(kernel.image, kernel.size);
  CHECK(hsaKmtReleaseSystemProperties());
  CHECK(hsaKmtCloseKFD());
  return wrong == 0 ? 0 : 1;
}
