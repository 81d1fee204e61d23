#include "wavekit/rewrite/mutator.h"

#include "wavekit/codeobj/bundle.h"
#include "wavekit/codeobj/code_object.h"
#include "wavekit/rewrite/arena.h"
#include "wavekit/support/error.h"

namespace wavekit::rewrite {

struct Mutator::State {
  codeobj::CodeObject object;
  Plan plan;
  mutable std::optional<std::vector<KernelView>> kernels;
  mutable std::optional<std::vector<FunctionView>> functions;
};

Mutator::Mutator(std::unique_ptr<State> state) : state_(std::move(state)) {}
Mutator::Mutator(Mutator&&) noexcept = default;
Mutator& Mutator::operator=(Mutator&&) noexcept = default;
Mutator::~Mutator() = default;

Mutator Mutator::open(std::span<const std::uint8_t> bytes, std::string name,
                      std::string processor) {
  std::vector<codeobj::BundleEntry> entries = codeobj::find_code_objects(bytes, name);
  std::vector<const codeobj::BundleEntry*> matching;
  std::string available;
  for (const codeobj::BundleEntry& entry : entries) {
    available += (available.empty() ? "" : ", ") + entry.processor();
    if (processor.empty() || entry.processor() == processor ||
        entry.processor().rfind(processor + ":", 0) == 0)
      matching.push_back(&entry);
  }
  if (matching.empty())
    fail(name, processor.empty()
                   ? "holds no AMDGPU code object"
                   : "holds no code object for " + processor + " (it has: " + available + ")");
  if (matching.size() > 1)
    fail(name, "holds code objects for several processors (" + available + "): choose one");
  codeobj::CodeObject object = codeobj::CodeObject::parse(matching.front()->bytes, name);
  // Rewriting a rewritten object would nest tools (two notes, two arena arguments): the
  // original is what a tool instruments. (`wavekit run` adopts such an object as it is.)
  if (const std::optional<RewriteNote> note = find_note(object))
    fail(name, "is already instrumented by wavekit (tool " + note->tool +
                   "): rewrite the original object instead, or run this one as it is");
  auto state =
      std::make_unique<State>(State{std::move(object), Plan{}, std::nullopt, std::nullopt});
  return Mutator(std::move(state));
}

const codeobj::CodeObject& Mutator::object() const { return state_->object; }

const std::vector<KernelView>& Mutator::kernels() const {
  if (!state_->kernels) state_->kernels = analyse_kernels(state_->object);
  return *state_->kernels;
}

const KernelView* Mutator::kernel(const std::string& name) const {
  for (const KernelView& view : kernels())
    if (view.name == name || view.descriptor_symbol == name) return &view;
  return nullptr;
}

const std::vector<FunctionView>& Mutator::functions() const {
  if (!state_->functions) state_->functions = analyse_functions(state_->object);
  return *state_->functions;
}

const FunctionView* Mutator::function(const std::string& name) const {
  for (const FunctionView& view : functions())
    if (view.name == name) return &view;
  return nullptr;
}

void Mutator::select_kernels(std::vector<std::string> names) {
  state_->plan.kernels = std::move(names);
}
void Mutator::declare(PerWaveVariable variable) {
  state_->plan.variables.push_back(std::move(variable));
}
void Mutator::at(PointSpec point) { state_->plan.points.push_back(std::move(point)); }
void Mutator::set_tool_name(std::string tool) { state_->plan.tool = std::move(tool); }
Plan Mutator::plan() const { return state_->plan; }

RewriteResult Mutator::write() const {
  // Round-trip through the JSON form, so that a plan built here is checked by the same rules
  // as one read from a file.
  const Plan checked = parse_plan(plan_to_json(state_->plan), state_->object.name() + " (plan)");
  return rewrite(state_->object, checked);
}

}  // namespace wavekit::rewrite
