// Descriptions of a code object for `wavekit inspect`: JSON for machines, text for people.
#include <sstream>

#include "wavekit/codeobj/code_object.h"
#include "wavekit/support/text.h"

namespace wavekit::codeobj {

nlohmann::json describe_json(const CodeObject& object) {
  nlohmann::json result;
  result["target"] = object.target().processor;
  result["target_id"] = object.target().target_id();
  result["code_object_version"] = object.target().code_object_version;
  nlohmann::json kernels = nlohmann::json::array();
  auto& metadata = const_cast<Metadata&>(object.metadata());
  for (const auto& kernel : object.kernels()) {
    nlohmann::json entry;
    entry["name"] = kernel.name;
    entry["descriptor_symbol"] = kernel.descriptor_symbol;
    entry["descriptor_address"] = kernel.descriptor_address;
    entry["entry"] = kernel.entry_address;
    nlohmann::json descriptor = nlohmann::json::object();
    for (const auto& [name, value] : amdhsa_directives(kernel.descriptor, object.target())) {
      descriptor[name] = value;
    }
    entry["descriptor"] = std::move(descriptor);
    // kernel() hands out a mutable view; to_json only reads through it.
    entry["metadata"] = kernel.metadata_index ? metadata.kernel(*kernel.metadata_index).to_json()
                                              : nlohmann::json::object();
    kernels.push_back(std::move(entry));
  }
  result["kernels"] = std::move(kernels);
  return result;
}

std::string describe_text(const CodeObject& object) {
  std::ostringstream out;
  const Target& target = object.target();
  out << object.name() << ": " << target.target_id() << ", code object v"
      << target.code_object_version << ", " << object.kernels().size()
      << (object.kernels().size() == 1 ? " kernel\n" : " kernels\n");
  auto& metadata = const_cast<Metadata&>(object.metadata());
  for (const auto& kernel : object.kernels()) {
    const KernelDescriptor& kd = kernel.descriptor;
    out << "\nkernel " << kernel.name << "\n";
    out << "  descriptor  " << kernel.descriptor_symbol << " at " << hex(kernel.descriptor_address)
        << ", entry " << hex(kernel.entry_address) << "\n";
    out << "  registers   " << kd.vgpr_grant(target) << " VGPRs granted";
    if (target.has_unified_vgpr_file()) out << " (AGPRs from v" << kd.accum_offset() << ")";
    out << ", " << kd.sgpr_grant() << " SGPRs granted, " << kd.user_sgpr_count() << " user SGPRs\n";
    out << "  memory      LDS " << kd.group_segment_fixed_size << " B, scratch "
        << kd.private_segment_fixed_size << " B per lane, kernarg " << kd.kernarg_size << " B";
    if (kd.uses_dynamic_stack()) out << ", dynamic stack";
    out << "\n";
    out << "  inputs      work-group id" << (kd.enable_sgpr_workgroup_id_x() ? " x" : "")
        << (kd.enable_sgpr_workgroup_id_y() ? " y" : "")
        << (kd.enable_sgpr_workgroup_id_z() ? " z" : "") << ", work-item id "
        << (kd.enable_vgpr_workitem_id() == 0   ? "x"
            : kd.enable_vgpr_workitem_id() == 1 ? "x y"
                                                : "x y z")
        << "\n";
    if (!kernel.metadata_index) {
      out << "  (not listed in the metadata note)\n";
      continue;
    }
    KernelMetadata md = metadata.kernel(*kernel.metadata_index);
    out << "  note        " << md.sgpr_count() << " SGPRs, " << md.vgpr_count() << " VGPRs, "
        << md.agpr_count() << " AGPRs, spills " << md.sgpr_spill_count() << " SGPR / "
        << md.vgpr_spill_count() << " VGPR, max work-group " << md.max_flat_workgroup_size()
        << "\n";
    auto args = md.args();
    out << "  arguments   " << md.kernarg_segment_size() << " B";
    if (args.empty()) out << ", none";
    out << "\n";
    for (const auto& arg : args) {
      out << "    +" << arg.offset << "  " << arg.size << " B  " << arg.value_kind;
      if (!arg.name.empty()) out << "  " << arg.name;
      if (!arg.type_name.empty()) out << " (" << arg.type_name << ")";
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace wavekit::codeobj
