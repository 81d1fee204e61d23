#include "wavekit/hsa/fault_injection.h"

#include <charconv>
#include <map>

#include "wavekit/support/error.h"
#include "wavekit/support/text.h"

namespace wavekit::hsa {

namespace {

std::uint64_t number(std::string_view text, const std::string& field) {
  int base = 10;
  if (text.starts_with("0x")) {
    text.remove_prefix(2);
    base = 16;
  }
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    throw Error("fault injection: " + field + "='" + std::string(text) + "' is not a number");
  return value;
}

}  // namespace

KernelFaultInjection parse_fault_injection(std::string_view text) {
  std::map<std::string, std::string, std::less<>> fields;
  while (!text.empty()) {
    const std::size_t start = text.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    text.remove_prefix(start);
    const std::size_t end = std::min(text.find(' '), text.size());
    const std::string_view field = text.substr(0, end);
    text.remove_prefix(end);
    const std::size_t equals = field.find('=');
    if (equals == std::string_view::npos)
      throw Error("fault injection: '" + std::string(field) + "' is not NAME=VALUE");
    fields[std::string(field.substr(0, equals))] = std::string(field.substr(equals + 1));
  }
  const auto take = [&](const char* name) {
    const auto found = fields.find(name);
    if (found == fields.end())
      throw Error(std::string("fault injection: missing ") + name +
                  "= (kernel, dispatch, pc, wave, execution, register, bit, lane)");
    std::string value = found->second;
    fields.erase(found);
    return value;
  };
  KernelFaultInjection injection;
  injection.kernel = take("kernel");
  if (injection.kernel.empty()) throw Error("fault injection: kernel= is empty");
  injection.dispatch = number(take("dispatch"), "dispatch");
  emu::FaultInjection& fault = injection.fault;
  fault.pc = number(take("pc"), "pc");
  fault.wave = number(take("wave"), "wave");
  fault.execution = number(take("execution"), "execution");
  const std::string reg = take("register");
  if (reg.size() < 2 || (reg[0] != 'v' && reg[0] != 's'))
    throw Error("fault injection: register='" + reg + "' is not vN or sN");
  fault.vgpr = reg[0] == 'v';
  const std::uint64_t index = number(std::string_view(reg).substr(1), "register");
  if (index > (fault.vgpr ? 255u : 101u))
    throw Error("fault injection: register='" + reg + "' is beyond v255 / s101");
  fault.reg = static_cast<unsigned>(index);
  const std::uint64_t bit = number(take("bit"), "bit");
  if (bit > 31) throw Error("fault injection: bit=" + std::to_string(bit) + " is beyond 31");
  fault.bit = static_cast<unsigned>(bit);
  const std::uint64_t lane = number(take("lane"), "lane");
  if (lane > 0xffffffffu) throw Error("fault injection: lane= is beyond 32 bits");
  fault.lane_pick = static_cast<std::uint32_t>(lane);
  if (const auto mode = fields.find("mode"); mode != fields.end()) {
    if (mode->second != "after" && mode->second != "read")
      throw Error("fault injection: mode='" + mode->second + "' is not after or read");
    fault.read = mode->second == "read";
    fields.erase(mode);
  }
  if (!fields.empty())
    throw Error("fault injection: unknown field '" + fields.begin()->first + "'");
  return injection;
}

std::string to_string(const KernelFaultInjection& injection) {
  const emu::FaultInjection& fault = injection.fault;
  return "kernel=" + injection.kernel + " dispatch=" + std::to_string(injection.dispatch) +
         " pc=" + hex(fault.pc) + " wave=" + std::to_string(fault.wave) +
         " execution=" + std::to_string(fault.execution) + " register=" + (fault.vgpr ? "v" : "s") +
         std::to_string(fault.reg) + " bit=" + std::to_string(fault.bit) +
         " lane=" + std::to_string(fault.lane_pick) + (fault.read ? " mode=read" : "");
}

std::string describe(const KernelFaultInjection& injection, const emu::InjectedFault& done) {
  const emu::FaultInjection& fault = injection.fault;
  const std::string reg = (fault.vgpr ? "v" : "s") + std::to_string(fault.reg);
  if (!done.reached)
    return "not reached: wave " + std::to_string(fault.wave) + " ran the instruction at " +
           hex(fault.pc) + " fewer than " + std::to_string(fault.execution + 1) + " times";
  if (!done.flipped) return "not flipped: no lane of the wave was active there";
  return "injected: " + reg + (fault.vgpr ? " lane " + std::to_string(done.lane) : "") + " bit " +
         std::to_string(fault.bit) + ": " + hex(done.before) + " -> " + hex(done.after);
}

}  // namespace wavekit::hsa
