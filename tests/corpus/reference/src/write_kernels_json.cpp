// Writes kernels.json: the launch configuration and the arguments of every corpus kernel, for
// users that do not link wavekit_corpus_reference (scripts, other languages).
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "wavekit/corpus/corpus.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: write_kernels_json OUTPUT.json\n";
    return 2;
  }
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& kernel : wavekit::corpus::kernels()) {
    nlohmann::json arguments = nlohmann::json::array();
    for (const auto& argument : kernel.make_inputs(1)) {
      arguments.push_back(
          {{"name", argument.name},
           {"kind", argument.kind == wavekit::corpus::Argument::Kind::buffer ? "buffer" : "scalar"},
           {"type", wavekit::corpus::element_type_name(argument.type)},
           {"count", argument.count()},
           {"output", argument.is_output},
           {"tolerance", argument.tolerance}});
    }
    kernels.push_back({{"name", kernel.name},
                       {"source", kernel.source},
                       {"grid", {kernel.grid.x, kernel.grid.y, kernel.grid.z}},
                       {"block", {kernel.block.x, kernel.block.y, kernel.block.z}},
                       {"arguments", arguments}});
  }
  std::ofstream(argv[1]) << nlohmann::json{{"kernels", kernels}}.dump(2) << "\n";
  return 0;
}
