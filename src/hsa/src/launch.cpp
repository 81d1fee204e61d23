#include "wavekit/hsa/launch.h"

#include <hsa/amd_hsa_queue.h>
#include <hsa/hsa.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "dispatch_report.h"
#include "wavekit/emu/emu.h"
#include "wavekit/hostcall/runtime.h"
#include "wavekit/hostcall/services.h"
#include "wavekit/hsa/ground_truth.h"
#include "wavekit/support/file.h"
#include "wavekit/support/text.h"

namespace wavekit::hsa {

namespace {

template <typename T>
std::vector<std::uint8_t> bytes_of(T value) {
  std::vector<std::uint8_t> bytes(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

// Whole-text integer parse, decimal or 0x-hex, with a leading '-' for signed types.
template <typename T>
T parse_integer(const std::string& spec, const std::string& text) {
  std::string_view digits = text;
  int base = 10;
  bool negative = !digits.empty() && digits.front() == '-';
  std::string_view magnitude = negative ? digits.substr(1) : digits;
  if (magnitude.size() > 2 && magnitude[0] == '0' && (magnitude[1] == 'x' || magnitude[1] == 'X')) {
    base = 16;
    magnitude.remove_prefix(2);
  }
  T value{};
  std::string normalized = (negative ? "-" : "") + std::string(magnitude);
  auto [end, error] =
      std::from_chars(normalized.data(), normalized.data() + normalized.size(), value, base);
  if (normalized.empty() || error != std::errc() || end != normalized.data() + normalized.size())
    throw Error("--arg " + spec + ": '" + text + "' is not a " +
                (std::is_signed_v<T> ? "" : "non-negative ") + std::to_string(sizeof(T) * 8) +
                "-bit integer");
  return value;
}

template <typename T>
T parse_float(const std::string& spec, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    throw Error("--arg " + spec + ": '" + text + "' is not a floating-point number");
  return static_cast<T>(value);
}

const char* kind_name(ArgumentSpec::Kind kind) {
  switch (kind) {
    case ArgumentSpec::Kind::by_value_struct:
      return "struct";
    case ArgumentSpec::Kind::file:
      return "file";
    case ArgumentSpec::Kind::zeros:
      return "zeros";
    case ArgumentSpec::Kind::i32:
      return "i32";
    case ArgumentSpec::Kind::u32:
      return "u32";
    case ArgumentSpec::Kind::i64:
      return "i64";
    case ArgumentSpec::Kind::u64:
      return "u64";
    case ArgumentSpec::Kind::f32:
      return "f32";
    case ArgumentSpec::Kind::f64:
      return "f64";
  }
  return "?";
}

std::string describe_argument(std::size_t index, const KernelArgument& arg) {
  std::string text = "argument " + std::to_string(index) + " (";
  if (!arg.name.empty()) text += arg.name + ", ";
  return text + arg.value_kind + ", " + std::to_string(arg.size) + " bytes)";
}

bool takes_pointer(const KernelArgument& arg) {
  if (arg.value_kind == "global_buffer") return true;
  return arg.size == 8 && (arg.address_space == "global" || arg.address_space == "generic");
}

// Memory the emulated kernel may touch, registered with the dispatch's MemoryMap for exactly
// its size so that an access past the end is a reported fault.
// A GPU maps memory in pages: what a kernel's buffers and kernarg segment get is whole pages,
// and an access past the bytes asked for but inside the last page does not fault on hardware.
constexpr std::size_t kAllocationGranule = 4096;

struct DeviceBuffer {
  std::uint8_t* data = nullptr;
  std::size_t size = 0;    // the bytes asked for
  std::size_t mapped = 0;  // the bytes allocated (zeroed): size rounded to the alignment
  DeviceBuffer(std::size_t bytes, std::size_t alignment) : size(bytes) {
    std::size_t rounded = (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
    mapped = rounded;
    data = static_cast<std::uint8_t*>(std::aligned_alloc(alignment, rounded));
    if (!data) throw Error("cannot allocate " + std::to_string(bytes) + " bytes");
    std::memset(data, 0, rounded);
  }
  ~DeviceBuffer() { std::free(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// A hostcall ring in memory the emulated GPU may touch, the cell holding the ring descriptor's
// address (an undefined `wavekit_hostcall_ring` is bound to it; a defined one gets the same
// address stored into it), and the service threads answering it.
struct HostcallService {
  hostcall::RingConfig config = hostcall::kProbeRingConfig;
  DeviceBuffer slots{hostcall::RingBuffer::bytes_for(config), 64};
  DeviceBuffer ticket{8, 64};
  DeviceBuffer cell{8, 64};
  std::unique_ptr<hostcall::RingBuffer> ring;
  std::unique_ptr<hostcall::FileEgress> egress;
  std::unique_ptr<hostcall::Runtime> runtime;  // last: stops (and joins) first

  explicit HostcallService(const std::string& file_root) {
    // Device pointers are host pointers on the emulator.
    ring = std::make_unique<hostcall::RingBuffer>(config, slots.data,
                                                  reinterpret_cast<std::uint64_t>(slots.data),
                                                  reinterpret_cast<std::uint64_t>(ticket.data));
    const hostcall::protocol::Ring* descriptor = &ring->descriptor();
    std::memcpy(cell.data, &descriptor, sizeof descriptor);
    runtime =
        std::make_unique<hostcall::Runtime>(*ring, hostcall::RuntimeOptions{.service_threads = 1});
    hostcall::register_print_service(*runtime);
    if (!file_root.empty()) {
      egress = std::make_unique<hostcall::FileEgress>(file_root);
      egress->register_services(*runtime);
    }
  }
  void map(emu::MemoryMap& memory) const {
    // The probes' traffic, not the program's progress (outside_progress covers the service).
    const unsigned tool = emu::MemoryMap::kReadWrite | emu::MemoryMap::kToolMemory;
    memory.add(slots.data, slots.size, tool, "hostcall ring slots");
    memory.add(ticket.data, ticket.size, tool, "hostcall ticket");
    memory.add(cell.data, cell.size, emu::MemoryMap::kRead, hostcall::kRingSymbol);
    memory.add(&ring->descriptor(), sizeof(hostcall::protocol::Ring), emu::MemoryMap::kRead,
               "hostcall ring");
  }
};

}  // namespace

// struct:FIELD,FIELD,...: the fields' bytes at C's natural alignment, padded to the largest.
std::vector<std::uint8_t> struct_bytes(const std::string& spec, const std::string& fields) {
  std::vector<std::uint8_t> bytes;
  std::size_t largest = 1, start = 0;
  while (start <= fields.size()) {
    const std::size_t comma = fields.find(',', start);
    const std::string field =
        fields.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t colon = field.find(':');
    if (field.empty() || colon == std::string::npos)
      throw Error("--arg " + spec + ": field '" + field +
                  "' is not TYPE:VALUE (types: i8 u8 i16 u16 i32 u32 i64 u64 f32 f64)");
    const std::string type = field.substr(0, colon), value = field.substr(colon + 1);
    std::vector<std::uint8_t> piece;
    if (type == "i8")
      piece = bytes_of(parse_integer<std::int8_t>(spec, value));
    else if (type == "u8")
      piece = bytes_of(parse_integer<std::uint8_t>(spec, value));
    else if (type == "i16")
      piece = bytes_of(parse_integer<std::int16_t>(spec, value));
    else if (type == "u16")
      piece = bytes_of(parse_integer<std::uint16_t>(spec, value));
    else if (type == "i32")
      piece = bytes_of(parse_integer<std::int32_t>(spec, value));
    else if (type == "u32")
      piece = bytes_of(parse_integer<std::uint32_t>(spec, value));
    else if (type == "i64")
      piece = bytes_of(parse_integer<std::int64_t>(spec, value));
    else if (type == "u64")
      piece = bytes_of(parse_integer<std::uint64_t>(spec, value));
    else if (type == "f32")
      piece = bytes_of(parse_float<float>(spec, value));
    else if (type == "f64")
      piece = bytes_of(parse_float<double>(spec, value));
    else
      throw Error("--arg " + spec + ": unknown field type '" + type +
                  "' (types: i8 u8 i16 u16 i32 u32 i64 u64 f32 f64)");
    largest = std::max(largest, piece.size());
    bytes.resize((bytes.size() + piece.size() - 1) / piece.size() * piece.size(), 0);
    bytes.insert(bytes.end(), piece.begin(), piece.end());
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  bytes.resize((bytes.size() + largest - 1) / largest * largest, 0);
  return bytes;
}

ArgumentSpec parse_argument(const std::string& spec) {
  auto colon = spec.find(':');
  if (colon == std::string::npos)
    throw Error("--arg " + spec +
                ": expected KIND:VALUE with KIND one of file, zeros, i32, u32, i64, u64, f32, f64");
  std::string kind = spec.substr(0, colon);
  std::string value = spec.substr(colon + 1);
  ArgumentSpec arg;
  arg.text = spec;
  if (kind == "file") {
    arg.kind = ArgumentSpec::Kind::file;
    try {
      arg.bytes = read_file(value);
    } catch (const std::exception& error) {
      throw Error("--arg " + spec + ": " + error.what());
    }
  } else if (kind == "zeros") {
    arg.kind = ArgumentSpec::Kind::zeros;
    auto size = parse_integer<std::uint64_t>(spec, value);
    if (size > (1ull << 36))
      throw Error("--arg " + spec + ": " + value + " bytes is more than 64 GiB");
    arg.bytes.assign(size, 0);
  } else if (kind == "i32") {
    arg.kind = ArgumentSpec::Kind::i32;
    arg.bytes = bytes_of(parse_integer<std::int32_t>(spec, value));
  } else if (kind == "u32") {
    arg.kind = ArgumentSpec::Kind::u32;
    arg.bytes = bytes_of(parse_integer<std::uint32_t>(spec, value));
  } else if (kind == "i64") {
    arg.kind = ArgumentSpec::Kind::i64;
    arg.bytes = bytes_of(parse_integer<std::int64_t>(spec, value));
  } else if (kind == "u64") {
    arg.kind = ArgumentSpec::Kind::u64;
    arg.bytes = bytes_of(parse_integer<std::uint64_t>(spec, value));
  } else if (kind == "f32") {
    arg.kind = ArgumentSpec::Kind::f32;
    arg.bytes = bytes_of(parse_float<float>(spec, value));
  } else if (kind == "f64") {
    arg.kind = ArgumentSpec::Kind::f64;
    arg.bytes = bytes_of(parse_float<double>(spec, value));
  } else if (kind == "struct") {
    arg.kind = ArgumentSpec::Kind::by_value_struct;
    arg.bytes = struct_bytes(spec, value);
  } else {
    throw Error("--arg " + spec + ": unknown kind '" + kind +
                "' (expected file, zeros, i32, u32, i64, u64, f32, f64 or struct)");
  }
  return arg;
}

Dimensions parse_dimensions(const std::string& option, const std::string& text) {
  Dimensions dims;
  dims.count = 0;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (dims.count == 3) throw Error(option + ": '" + text + "' has more than 3 dimensions");
    std::uint32_t value = 0;
    auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || error != std::errc() || end != part.data() + part.size() || value == 0)
      throw Error(option + ": '" + part + "' in '" + text + "' is not a positive 32-bit integer");
    dims.size[dims.count++] = value;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return dims;
}

void check_arguments(const KernelInfo& kernel, const std::vector<ArgumentSpec>& specs) {
  std::vector<const KernelArgument*> explicit_args;
  for (const auto& arg : kernel.args)
    if (!arg.hidden()) explicit_args.push_back(&arg);
  if (explicit_args.size() != specs.size()) {
    std::string list;
    for (std::size_t i = 0; i < explicit_args.size(); ++i)
      list += (i ? "; " : "") + describe_argument(i, *explicit_args[i]);
    throw Error("kernel " + kernel.name + " takes " + std::to_string(explicit_args.size()) +
                " argument" + (explicit_args.size() == 1 ? "" : "s") +
                (list.empty() ? "" : " (" + list + ")") + " but " + std::to_string(specs.size()) +
                " --arg " + (specs.size() == 1 ? "was" : "were") + " given");
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const KernelArgument& arg = *explicit_args[i];
    const ArgumentSpec& spec = specs[i];
    if (spec.is_buffer() && !takes_pointer(arg))
      throw Error(describe_argument(i, arg) + " of kernel " + kernel.name +
                  " is passed by value; --arg " + spec.text.substr(0, spec.text.find(':')) +
                  ":... gives a buffer pointer");
    if (!spec.is_buffer() && takes_pointer(arg) && arg.value_kind == "global_buffer")
      throw Error(describe_argument(i, arg) + " of kernel " + kernel.name +
                  " takes a buffer (file:PATH or zeros:BYTES), not " + spec.text);
    std::size_t given = spec.is_buffer() ? 8 : spec.bytes.size();
    if (given != arg.size)
      throw Error(describe_argument(i, arg) + " of kernel " + kernel.name +
                  " does not match --arg " + spec.text + " (" + kind_name(spec.kind) + ", " +
                  std::to_string(given) + " bytes)");
  }
}

void fill_hidden_arguments(const KernelInfo& kernel, const Dimensions& grid,
                           const Dimensions& block, const HiddenArgumentValues& values,
                           std::uint8_t* kernarg) {
  auto write = [&](const KernelArgument& arg, std::uint64_t value) {
    // Little-endian truncation to the argument's size (2, 4 or 8 bytes in the note).
    std::memcpy(kernarg + arg.offset, &value, std::min<std::size_t>(arg.size, sizeof value));
  };
  for (const auto& arg : kernel.args) {
    if (!arg.hidden()) continue;
    const std::string& kind = arg.value_kind;
    int axis = kind.back() - 'x';
    auto per_axis = [&](std::string_view prefix) {
      return kind.size() == prefix.size() + 1 && kind.rfind(prefix, 0) == 0 && axis >= 0 &&
             axis < 3;
    };
    if (per_axis("hidden_block_count_"))
      write(arg, (std::uint64_t(grid.size[axis]) + block.size[axis] - 1) / block.size[axis]);
    else if (per_axis("hidden_group_size_"))
      write(arg, block.size[axis]);
    else if (per_axis("hidden_remainder_"))
      write(arg, grid.size[axis] % block.size[axis]);
    else if (per_axis("hidden_global_offset_"))
      write(arg, 0);
    else if (kind == "hidden_grid_dims")
      write(arg, grid.count);
    else if (kind == "hidden_hostcall_buffer")
      write(arg, values.hostcall_buffer);
    else if (kind == "hidden_printf_buffer")
      write(arg, values.printf_buffer);
    else if (kind == "hidden_queue_ptr")
      write(arg, values.queue_ptr);
    else if (kind == "hidden_heap_v1")
      write(arg, values.heap);
    else if (kind == "hidden_private_base")
      write(arg, emu::kPrivateApertureBase >> 32);
    else if (kind == "hidden_shared_base")
      write(arg, emu::kSharedApertureBase >> 32);
    // hidden_default_queue, hidden_completion_action, hidden_multigrid_sync_arg,
    // hidden_dynamic_lds_size (no dynamic LDS) and hidden_none stay 0, as for a plain launch.
  }
}

LaunchOutcome launch(const LaunchRequest& request) {
  Executable executable;
  executable.load(read_file(request.code_object), request.code_object);
  for (const auto& library : request.libraries) executable.load(read_file(library), library);
  // The probes' ring: a variable a loaded object defines (the probe SDK's), filled in after
  // freezing, or an undefined reference, bound to a cell of ours.
  std::unique_ptr<HostcallService> hostcall;
  const VariableInfo* ring_variable = executable.find_variable(hostcall::kRingSymbol);
  if (ring_variable && ring_variable->size != 0 && ring_variable->size != 8)
    throw Error(std::string(hostcall::kRingSymbol) + " is " + std::to_string(ring_variable->size) +
                " bytes in the loaded objects: a ring pointer is 8");
  if (ring_variable || executable.undefined_references().count(hostcall::kRingSymbol))
    hostcall = std::make_unique<HostcallService>(request.hostcall_file_root);
  else if (request.require_hostcall)
    throw Error(request.code_object +
                " needs the hostcall service, but no loaded object defines "
                "or references " +
                hostcall::kRingSymbol + " (load the probe library that uses it with --library)");
  const std::uint64_t ring_variable_address = ring_variable ? ring_variable->address : 0;
  if (hostcall && !ring_variable)
    executable.define_global_variable(hostcall::kRingSymbol,
                                      reinterpret_cast<std::uint64_t>(hostcall->cell.data));
  executable.freeze();
  // Device addresses are host addresses on the emulator: the variable lives in the loaded image.
  if (ring_variable_address)
    std::memcpy(reinterpret_cast<void*>(ring_variable_address), hostcall->cell.data, 8);
  const KernelInfo* kernel = executable.find_kernel(request.kernel);
  if (!kernel) {
    std::string names;
    for (const auto& k : executable.kernels()) names += (names.empty() ? "" : ", ") + k.name;
    throw Error(request.code_object + ": no kernel named '" + request.kernel +
                "' (kernels: " + (names.empty() ? "none" : names) + ")");
  }
  emu::Processor processor = emu::parse_processor(executable.target());
  std::uint64_t block_items =
      std::uint64_t(request.block.size[0]) * request.block.size[1] * request.block.size[2];
  std::uint64_t limit = kernel->max_flat_workgroup_size ? kernel->max_flat_workgroup_size : 1024;
  if (block_items > limit)
    throw Error("--block: " + std::to_string(block_items) +
                " work-items per workgroup exceed kernel " + kernel->name +
                "'s .max_flat_workgroup_size " + std::to_string(limit));
  check_arguments(*kernel, request.arguments);

  emu::MemoryMap memory;
  emu::CodeCache code;
  for (const LoadedObject& object : executable.objects()) {
    memory.add(reinterpret_cast<const void*>(object.load_base), object.load_size,
               emu::MemoryMap::kReadWrite, "code object " + object.name);
    code.add_object(processor, reinterpret_cast<const void*>(object.load_base), object.load_size,
                    0);
  }

  // Buffers, then the kernarg segment with their pointers and the scalars at the note's offsets.
  std::vector<std::unique_ptr<DeviceBuffer>> buffers(request.arguments.size());
  DeviceBuffer kernarg(std::max<std::size_t>(kernel->kernarg_segment_size, 1),
                       std::max<std::size_t>(kernel->kernarg_segment_align, kAllocationGranule));
  std::size_t explicit_index = 0;
  for (const auto& arg : kernel->args) {
    if (arg.hidden()) continue;
    const ArgumentSpec& spec = request.arguments[explicit_index];
    if (spec.is_buffer()) {
      auto buffer = std::make_unique<DeviceBuffer>(spec.bytes.size(), kAllocationGranule);
      std::memcpy(buffer->data, spec.bytes.data(), spec.bytes.size());
      memory.add(buffer->data, buffer->mapped,
                 emu::MemoryMap::kReadWrite | (spec.tool_memory ? emu::MemoryMap::kToolMemory : 0u),
                 "arg" + std::to_string(explicit_index),
                 std::max<std::size_t>(spec.bytes.size(), 1));
      std::uint64_t pointer = reinterpret_cast<std::uint64_t>(buffer->data);
      std::memcpy(kernarg.data + arg.offset, &pointer, 8);
      buffers[explicit_index] = std::move(buffer);
    } else {
      std::memcpy(kernarg.data + arg.offset, spec.bytes.data(), spec.bytes.size());
    }
    ++explicit_index;
  }

  std::unique_ptr<DeviceBuffer> hidden_buffer;
  if (request.hidden_buffer) {
    const LaunchRequest::HiddenBuffer& hidden = *request.hidden_buffer;
    if (hidden.kernarg_offset + 8 > kernel->kernarg_segment_size)
      throw Error("kernel " + kernel->name + ": a hidden buffer at kernarg offset " +
                  std::to_string(hidden.kernarg_offset) + " lies past its " +
                  std::to_string(kernel->kernarg_segment_size) + "-byte kernarg segment");
    hidden_buffer = std::make_unique<DeviceBuffer>(hidden.spec.bytes.size(), kAllocationGranule);
    std::memcpy(hidden_buffer->data, hidden.spec.bytes.data(), hidden.spec.bytes.size());
    memory.add(
        hidden_buffer->data, hidden_buffer->mapped,
        emu::MemoryMap::kReadWrite | (hidden.spec.tool_memory ? emu::MemoryMap::kToolMemory : 0u),
        "hidden buffer", std::max<std::size_t>(hidden.spec.bytes.size(), 1));
    const std::uint64_t pointer = reinterpret_cast<std::uint64_t>(hidden_buffer->data);
    std::memcpy(kernarg.data + hidden.kernarg_offset, &pointer, 8);
  }

  // What the packet processor would hand the waves: the packet and an amd_queue_t.
  auto queue = std::make_unique<DeviceBuffer>(sizeof(amd_queue_t), 64);
  auto* amd_queue = reinterpret_cast<amd_queue_t*>(queue->data);
  amd_queue->group_segment_aperture_base_hi =
      static_cast<std::uint32_t>(emu::kSharedApertureBase >> 32);
  amd_queue->private_segment_aperture_base_hi =
      static_cast<std::uint32_t>(emu::kPrivateApertureBase >> 32);
  amd_queue->hsa_queue.size = 64;
  memory.add(queue->data, sizeof(amd_queue_t), emu::MemoryMap::kRead, "amd_queue_t");

  HiddenArgumentValues hidden;
  hidden.queue_ptr = reinterpret_cast<std::uint64_t>(amd_queue);
  fill_hidden_arguments(*kernel, request.grid, request.block, hidden, kernarg.data);
  memory.add(kernarg.data, kernarg.mapped, emu::MemoryMap::kRead, "kernarg", kernarg.size);

  auto packet_memory = std::make_unique<DeviceBuffer>(sizeof(hsa_kernel_dispatch_packet_t), 64);
  auto* packet = reinterpret_cast<hsa_kernel_dispatch_packet_t*>(packet_memory->data);
  packet->header = HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE;
  packet->setup =
      static_cast<std::uint16_t>(request.grid.count << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS);
  packet->workgroup_size_x = static_cast<std::uint16_t>(request.block.size[0]);
  packet->workgroup_size_y = static_cast<std::uint16_t>(request.block.size[1]);
  packet->workgroup_size_z = static_cast<std::uint16_t>(request.block.size[2]);
  packet->grid_size_x = request.grid.size[0];
  packet->grid_size_y = request.grid.size[1];
  packet->grid_size_z = request.grid.size[2];
  // The runtime sizes scratch and LDS from the metadata note, not from the descriptor.
  packet->private_segment_size = kernel->private_segment_fixed_size;
  const std::uint64_t lds =
      std::uint64_t(kernel->group_segment_fixed_size) + request.dynamic_lds_bytes;
  if (lds > 65536)
    throw Error("kernel " + kernel->name + " uses " +
                std::to_string(kernel->group_segment_fixed_size) + " bytes of LDS; with --lds " +
                std::to_string(request.dynamic_lds_bytes) + " that is " + std::to_string(lds) +
                ", more than the 64 KiB of a workgroup");
  packet->group_segment_size = static_cast<std::uint32_t>(lds);
  packet->kernel_object = kernel->descriptor_address;
  packet->kernarg_address = kernarg.data;
  memory.add(packet, sizeof *packet, emu::MemoryMap::kRead, "dispatch packet");

  emu::DispatchParams params;
  params.processor = processor;
  params.kernel_descriptor = reinterpret_cast<const void*>(kernel->descriptor_address);
  params.kernarg = kernarg.data;
  for (int axis = 0; axis < 3; ++axis) {
    params.grid[axis] = request.grid.size[axis];
    params.workgroup[axis] = request.block.size[axis];
  }
  params.private_segment_size = packet->private_segment_size;
  params.group_segment_size = packet->group_segment_size;
  params.dispatch_packet = packet;
  params.queue = amd_queue;
  params.options.host_threads = request.host_threads;
  params.options.max_resident_waves = request.max_resident_waves;
  params.options.exact_bounds = request.exact_bounds;
  params.options.max_instructions = request.max_instructions;
  params.options.max_seconds = request.max_seconds;
  params.options.record_block_counts = request.record_block_counts;
  params.options.record_block_sequence = request.record_block_sequence;
  params.options.record_memory_accesses = request.record_memory_accesses;
  params.options.record_instruction_counts = request.record_instruction_counts;
  params.options.inject = request.inject;

  if (hostcall) {
    hostcall->map(memory);
    hostcall->runtime->start();
    // Waves that wait on the ring wait on the host: not a deadlock, however slow it is.
    params.options.outside_progress = [&hostcall] { return hostcall->runtime->made_progress(); };
  }
  auto start = std::chrono::steady_clock::now();
  emu::DispatchResult result = emu::dispatch(params, memory, code);
  auto stop = std::chrono::steady_clock::now();
  if (hostcall) hostcall->runtime->stop();  // services every request already published

  LaunchOutcome outcome;
  if (hostcall) outcome.hostcall = hostcall->runtime->statistics();
  outcome.kernel = kernel->name;
  outcome.target = executable.target();
  outcome.ok = result.ok();
  if (!result.ok()) outcome.error = describe_failure(result, kernel->name);
  outcome.seconds = std::chrono::duration<double>(stop - start).count();
  outcome.workgroups = 1;
  for (int axis = 0; axis < 3; ++axis)
    outcome.workgroups *= (std::uint64_t(request.grid.size[axis]) + request.block.size[axis] - 1) /
                          request.block.size[axis];
  outcome.waves = result.total_waves;
  outcome.waves_per_workgroup = result.waves_per_workgroup;
  outcome.instructions = result.total_instructions;
  for (std::size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i])
      outcome.buffers.emplace_back(
          static_cast<unsigned>(i),
          std::vector<std::uint8_t>(buffers[i]->data, buffers[i]->data + buffers[i]->size));
  if (hidden_buffer)
    outcome.hidden_buffer.assign(hidden_buffer->data, hidden_buffer->data + hidden_buffer->size);
  if (request.record_block_counts)
    outcome.block_trace = block_counts_document(kernel->name, result.waves);
  if (request.record_block_sequence) outcome.block_sequences = take_block_sequences(result.waves);
  outcome.injected = result.injected;
  if (request.record_instruction_counts) {
    outcome.instruction_counts = std::move(result.instruction_counts);
    for (const LoadedObject& object : executable.objects())
      outcome.object_bases.emplace_back(object.name, object.load_base);
  }
  if (request.record_memory_accesses && request.keep_memory_records) {
    for (auto& wave : result.waves)
      outcome.memory_records.push_back(std::move(wave.memory_accesses));
  } else if (request.record_memory_accesses) {
    std::map<std::uint64_t, std::string> object_names;  // by load base
    for (const LoadedObject& object : executable.objects())
      object_names[object.load_base] = object.name;
    nlohmann::json waves = nlohmann::json::array();
    for (const auto& wave : result.waves) {
      nlohmann::json accesses = nlohmann::json::array();
      for (const emu::MemoryAccessRecord& access : wave.memory_accesses) {
        nlohmann::json addresses = nlohmann::json::array();
        for (std::uint64_t address : access.addresses) addresses.push_back(hex(address));
        const auto object = object_names.find(access.object);
        accesses.push_back({{"object", object == object_names.end() ? "" : object->second},
                            {"pc", hex(access.pc)},
                            {"kind", emu::memory_access_kind_name(access.kind)},
                            {"exec", hex(access.lanes)},
                            {"addresses", std::move(addresses)}});
      }
      waves.push_back({{"id", wave.linear_wave_id},
                       {"workgroup", {wave.workgroup[0], wave.workgroup[1], wave.workgroup[2]}},
                       {"wave_in_workgroup", wave.wave_in_workgroup},
                       {"accesses", std::move(accesses)}});
    }
    outcome.memory_trace = {{"kernel", kernel->name}, {"waves", std::move(waves)}};
  }
  return outcome;
}

}  // namespace wavekit::hsa
