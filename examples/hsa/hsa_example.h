/* What every example in examples/hsa does the same way, written the way an HSA application
 * writes it: plain C against Debian's <hsa/hsa.h> and <hsa/hsa_ext_amd.h>, linked with
 * -lhsa-runtime64. Nothing here knows about wavekit; at run time the programs get the
 * emulator's runtime through LD_LIBRARY_PATH, or ROCr on a machine with an AMD GPU.
 *
 * Like the HIP runtime, example_kernarg() fills the code-object-v5 hidden arguments the
 * kernels read (block counts, group sizes, remainders, grid dimensions); raw HSA leaves the
 * kernarg segment entirely to the application. */
#ifndef WAVEKIT_EXAMPLES_HSA_EXAMPLE_H
#define WAVEKIT_EXAMPLES_HSA_EXAMPLE_H

#include <fcntl.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call)                                                        \
  do {                                                                     \
    hsa_status_t status_ = (call);                                         \
    if (status_ != HSA_STATUS_SUCCESS) {                                   \
      const char* message_ = NULL;                                         \
      hsa_status_string(status_, &message_);                               \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
              message_ ? message_ : "unknown status");                     \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

typedef struct {
  hsa_agent_t gpu;
  hsa_agent_t cpu;
  hsa_region_t kernarg_region;
  hsa_amd_memory_pool_t device_pool;
  hsa_queue_t* queue;
  char gpu_name[64];
} example_context;

typedef struct {
  uint64_t object;
  uint32_t kernarg_size;
  uint32_t group_segment_size;
  uint32_t private_segment_size;
} example_kernel;

static hsa_status_t example_find_agents(hsa_agent_t agent, void* data) {
  example_context* context = (example_context*)data;
  hsa_device_type_t type;
  CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
  if (type == HSA_DEVICE_TYPE_GPU && context->gpu.handle == 0) context->gpu = agent;
  if (type == HSA_DEVICE_TYPE_CPU && context->cpu.handle == 0) context->cpu = agent;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t example_find_kernarg_region(hsa_region_t region, void* data) {
  hsa_region_segment_t segment;
  uint32_t flags;
  CHECK(hsa_region_get_info(region, HSA_REGION_INFO_SEGMENT, &segment));
  CHECK(hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags));
  if (segment == HSA_REGION_SEGMENT_GLOBAL && (flags & HSA_REGION_GLOBAL_FLAG_KERNARG)) {
    *(hsa_region_t*)data = region;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t example_find_device_pool(hsa_amd_memory_pool_t pool, void* data) {
  hsa_amd_segment_t segment;
  bool allowed;
  CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
  CHECK(
      hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &allowed));
  if (segment == HSA_AMD_SEGMENT_GLOBAL && allowed) {
    *(hsa_amd_memory_pool_t*)data = pool;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static void example_init(example_context* context) {
  memset(context, 0, sizeof *context);
  CHECK(hsa_init());
  CHECK(hsa_iterate_agents(example_find_agents, context));
  if (context->gpu.handle == 0) {
    fprintf(stderr, "no GPU agent\n");
    exit(1);
  }
  CHECK(hsa_agent_get_info(context->gpu, HSA_AGENT_INFO_NAME, context->gpu_name));
  hsa_status_t found = hsa_agent_iterate_regions(context->gpu, example_find_kernarg_region,
                                                 &context->kernarg_region);
  if (found != HSA_STATUS_INFO_BREAK) {
    fprintf(stderr, "no kernarg region\n");
    exit(1);
  }
  found = hsa_amd_agent_iterate_memory_pools(context->gpu, example_find_device_pool,
                                             &context->device_pool);
  if (found != HSA_STATUS_INFO_BREAK) {
    fprintf(stderr, "no device memory pool\n");
    exit(1);
  }
  CHECK(hsa_queue_create(context->gpu, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX,
                         UINT32_MAX, &context->queue));
}

static void example_shut_down(example_context* context) {
  CHECK(hsa_queue_destroy(context->queue));
  CHECK(hsa_shut_down());
}

/* Loads the code objects at `paths` into one executable and freezes it. */
static hsa_executable_t example_load(example_context* context, const char* const* paths,
                                     int count) {
  hsa_executable_t executable;
  CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL,
                                  &executable));
  for (int i = 0; i < count; ++i) {
    int file = open(paths[i], O_RDONLY);
    if (file < 0) {
      perror(paths[i]);
      exit(1);
    }
    hsa_code_object_reader_t reader;
    CHECK(hsa_code_object_reader_create_from_file(file, &reader));
    CHECK(hsa_executable_load_agent_code_object(executable, context->gpu, reader, NULL, NULL));
    CHECK(hsa_code_object_reader_destroy(reader));
    close(file);
  }
  CHECK(hsa_executable_freeze(executable, NULL));
  return executable;
}

static example_kernel example_find_kernel(example_context* context, hsa_executable_t executable,
                                          const char* name) {
  char symbol_name[256];
  snprintf(symbol_name, sizeof symbol_name, "%s.kd", name);
  hsa_executable_symbol_t symbol;
  CHECK(hsa_executable_get_symbol_by_name(executable, symbol_name, &context->gpu, &symbol));
  example_kernel kernel;
  CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                       &kernel.object));
  CHECK(hsa_executable_symbol_get_info(
      symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &kernel.kernarg_size));
  CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                                       &kernel.group_segment_size));
  CHECK(hsa_executable_symbol_get_info(symbol,
                                       HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                       &kernel.private_segment_size));
  return kernel;
}

/* Device memory the host can also read and write (true on the emulator and on APUs; on a
 * discrete GPU the examples would stage through system memory). */
static void* example_allocate(example_context* context, size_t size) {
  void* pointer = NULL;
  CHECK(hsa_amd_memory_pool_allocate(context->device_pool, size, 0, &pointer));
  CHECK(hsa_amd_agents_allow_access(1, &context->cpu, NULL, pointer));
  return pointer;
}

/* A kernarg segment: the explicit arguments, then the COV5 hidden arguments of a 1-D launch
 * (offsets from LLVM's AMDGPUHSAMetadataStreamer: block counts at +0, group sizes at +12,
 * remainders at +18, grid dimensions at +64 of the implicit block, which starts 8-aligned
 * after the explicit arguments). */
static void* example_kernarg(example_context* context, const example_kernel* kernel,
                             const void* explicit_args, size_t explicit_size, uint32_t grid,
                             uint32_t block) {
  void* kernarg = NULL;
  CHECK(hsa_memory_allocate(context->kernarg_region, kernel->kernarg_size, &kernarg));
  memset(kernarg, 0, kernel->kernarg_size);
  memcpy(kernarg, explicit_args, explicit_size);
  size_t implicit = (explicit_size + 7) & ~(size_t)7;
  if (kernel->kernarg_size >= implicit + 66) {
    uint8_t* base = (uint8_t*)kernarg + implicit;
    uint32_t block_count[3] = {(grid + block - 1) / block, 1, 1};
    uint16_t group_size[3] = {(uint16_t)block, 1, 1};
    uint16_t remainder[3] = {(uint16_t)(grid % block), 0, 0};
    uint16_t dimensions = 1;
    memcpy(base + 0, block_count, sizeof block_count);
    memcpy(base + 12, group_size, sizeof group_size);
    memcpy(base + 18, remainder, sizeof remainder);
    memcpy(base + 64, &dimensions, sizeof dimensions);
  }
  return kernarg;
}

/* Writes a 1-D kernel-dispatch packet into the queue and rings the doorbell. */
static void example_dispatch(example_context* context, const example_kernel* kernel, void* kernarg,
                             uint32_t grid, uint32_t block, hsa_signal_t completion) {
  hsa_queue_t* queue = context->queue;
  uint64_t index = hsa_queue_add_write_index_relaxed(queue, 1);
  while (index - hsa_queue_load_read_index_scacquire(queue) >= queue->size) {
    /* the ring is full: wait for the packet processor */
  }
  hsa_kernel_dispatch_packet_t* packet =
      (hsa_kernel_dispatch_packet_t*)queue->base_address + (index % queue->size);
  memset((uint8_t*)packet + 4, 0, sizeof *packet - 4);
  packet->workgroup_size_x = (uint16_t)block;
  packet->workgroup_size_y = 1;
  packet->workgroup_size_z = 1;
  packet->grid_size_x = grid;
  packet->grid_size_y = 1;
  packet->grid_size_z = 1;
  packet->private_segment_size = kernel->private_segment_size;
  packet->group_segment_size = kernel->group_segment_size;
  packet->kernel_object = kernel->object;
  packet->kernarg_address = kernarg;
  packet->completion_signal = completion;
  uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  __atomic_store_n((uint32_t*)packet, header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
  hsa_signal_store_screlease(queue->doorbell_signal, (hsa_signal_value_t)index);
}

static void example_wait(hsa_signal_t signal, hsa_signal_value_t until_below) {
  while (hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_LT, until_below, UINT64_MAX,
                                   HSA_WAIT_STATE_BLOCKED) >= until_below) {
  }
}

/* A fixed pseudo-random input (an LCG), the same on every run. */
static inline void example_fill_pseudo_random(unsigned* values, unsigned n) {
  unsigned state = 12345;
  for (unsigned i = 0; i < n; ++i) {
    state = state * 1103515245u + 12345u;
    values[i] = state >> 8;
  }
}

/* One dispatch of a kernel(const unsigned* input, unsigned* output, unsigned n) over n
 * work-items in workgroups of `block`, waited for. */
static inline void example_run_unary(example_context* context, const example_kernel* kernel,
                                     const unsigned* input, unsigned* output, unsigned n,
                                     unsigned block) {
  struct {
    const unsigned* input;
    unsigned* output;
    unsigned n;
  } args = {input, output, n};
  void* kernarg = example_kernarg(context, kernel, &args, sizeof args, n, block);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  example_dispatch(context, kernel, kernarg, n, block, done);
  example_wait(done, 1);
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_memory_free(kernarg));
}

/* The code object named `file` next to the examples (their build directory), or argv's. */
static const char* example_code_object(int argc, char** argv, int index, const char* file) {
  static char paths[4][4096];
  if (argc > index) return argv[index];
  snprintf(paths[index % 4], sizeof paths[0], "%s/%s", WAVEKIT_EXAMPLE_OBJECT_DIR, file);
  return paths[index % 4];
}

#endif
