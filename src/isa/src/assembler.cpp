#include <algorithm>
#include <cstring>
#include <functional>

#include "llvm/ADT/SmallString.h"
#include "llvm/MC/MCAsmBackend.h"
#include "llvm/MC/MCCodeEmitter.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCFixup.h"
#include "llvm/MC/MCObjectFileInfo.h"
#include "llvm/MC/MCObjectWriter.h"
#include "llvm/MC/MCParser/MCAsmParser.h"
#include "llvm/MC/MCParser/MCTargetAsmParser.h"
#include "llvm/MC/MCStreamer.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "target.h"
#include "wavekit/isa/isa.h"
#include "wavekit/support/error.h"

namespace wavekit::isa {

struct Assembler::Impl {
  std::string processor;
  Toolchain tools;
};

Assembler::Assembler(std::string_view processor) : impl_(std::make_unique<Impl>()) {
  impl_->processor = std::string(processor);
  impl_->tools = make_toolchain(processor);
}

Assembler::~Assembler() = default;
Assembler::Assembler(Assembler&&) noexcept = default;
Assembler& Assembler::operator=(Assembler&&) noexcept = default;

std::vector<std::uint8_t> Assembler::encode(const llvm::MCInst& inst) const {
  const Toolchain& t = impl_->tools;
  llvm::MCContext context(t.triple, t.asm_info.get(), t.register_info.get(), t.subtarget.get());
  std::unique_ptr<llvm::MCCodeEmitter> emitter(
      t.target->createMCCodeEmitter(*t.instr_info, context));
  llvm::SmallVector<char, 16> bytes;
  llvm::SmallVector<llvm::MCFixup, 1> fixups;
  emitter->encodeInstruction(inst, bytes, fixups, *t.subtarget);
  if (!fixups.empty()) {
    fail(impl_->processor,
         "encode: the instruction needs a fixup (a symbolic operand); use "
         "assemble() for code with labels");
  }
  return {bytes.begin(), bytes.end()};
}

namespace {

// The object LLVM assembles from `source` (llvm-mc's path: parser -> ELF object streamer).
// Errors throw wavekit::Error quoting each of LLVM's diagnostics as "WHERE: message ('line')",
// WHERE from `where(line number)`.
struct Assembled {
  llvm::SmallString<1024> object;
  std::unique_ptr<llvm::object::ObjectFile> file;
};

Assembled run_assembler(const Toolchain& t, const std::string& processor, std::string_view source,
                        const std::function<std::string(unsigned)>& where) {
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(source.data(), source.size()),
                                           "<wavekit assembly>"),
      llvm::SMLoc());
  struct Diagnostics {
    const std::function<std::string(unsigned)>& where;
    std::string text;
  } diagnostics{where, {}};
  sources.setDiagHandler(
      [](const llvm::SMDiagnostic& diagnostic, void* context) {
        auto* out = static_cast<Diagnostics*>(context);
        if (diagnostic.getKind() != llvm::SourceMgr::DK_Error) return;
        if (!out->text.empty()) out->text += "; ";
        out->text += out->where(static_cast<unsigned>(diagnostic.getLineNo())) + ": " +
                     diagnostic.getMessage().str() + " ('" +
                     diagnostic.getLineContents().trim().str() + "')";
      },
      &diagnostics);

  llvm::MCContext context(t.triple, t.asm_info.get(), t.register_info.get(), t.subtarget.get(),
                          &sources, &t.options);
  std::unique_ptr<llvm::MCObjectFileInfo> file_info(
      t.target->createMCObjectFileInfo(context, /*PIC=*/true));
  context.setObjectFileInfo(file_info.get());

  Assembled result;
  {
    llvm::raw_svector_ostream object_stream(result.object);
    std::unique_ptr<llvm::MCAsmBackend> backend(
        t.target->createMCAsmBackend(*t.subtarget, *t.register_info, t.options));
    std::unique_ptr<llvm::MCObjectWriter> writer = backend->createObjectWriter(object_stream);
    std::unique_ptr<llvm::MCStreamer> streamer(t.target->createMCObjectStreamer(
        t.triple, context, std::move(backend), std::move(writer),
        std::unique_ptr<llvm::MCCodeEmitter>(t.target->createMCCodeEmitter(*t.instr_info, context)),
        *t.subtarget));
    streamer->initSections(/*NoExecStack=*/false, *t.subtarget);
    std::unique_ptr<llvm::MCAsmParser> parser(
        llvm::createMCAsmParser(sources, context, *streamer, *t.asm_info));
    std::unique_ptr<llvm::MCTargetAsmParser> target_parser(
        t.target->createMCAsmParser(*t.subtarget, *parser, *t.instr_info, t.options));
    if (!target_parser) fail(processor, "LLVM's AMDGPU assembler is not available");
    parser->setTargetParser(*target_parser);
    bool failed = parser->Run(/*NoInitialTextSection=*/true);
    if (failed || !diagnostics.text.empty()) {
      fail(processor, "cannot assemble: " + (diagnostics.text.empty() ? std::string("unknown error")
                                                                      : diagnostics.text));
    }
  }

  auto parsed = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(
      llvm::StringRef(result.object.data(), result.object.size()), "assembled"));
  if (!parsed) {
    fail(processor, "cannot read the assembled object: " + llvm::toString(parsed.takeError()));
  }
  result.file = std::move(*parsed);
  return result;
}

std::vector<std::uint8_t> section_bytes(const llvm::object::SectionRef& section,
                                        const std::string& processor) {
  if (!section.relocations().empty()) {
    fail(processor,
         "cannot assemble: the code refers to symbols it does not define (it would need "
         "relocations)");
  }
  auto contents = section.getContents();
  if (!contents) {
    fail(processor, "cannot read .text: " + llvm::toString(contents.takeError()));
  }
  return {contents->begin(), contents->end()};
}

}  // namespace

std::vector<std::uint8_t> Assembler::assemble(std::string_view source) const {
  // The bytes are the resulting .text, with branches to local labels resolved by the
  // assembler's layout.
  const Assembled assembled =
      run_assembler(impl_->tools, impl_->processor, source,
                    [](unsigned line) { return "line " + std::to_string(line); });
  std::vector<std::uint8_t> text;
  for (const llvm::object::SectionRef& section : assembled.file->sections()) {
    auto name = section.getName();
    if (name && *name == ".text") text = section_bytes(section, impl_->processor);
  }
  return text;
}

std::vector<std::vector<std::uint8_t>> Assembler::assemble_each(
    std::span<const std::string> sources) const {
  // The sources one after the other in .text, a label before each and one after the last; a
  // section of their sizes (label differences, which the assembler resolves itself) says where
  // each one's bytes end. No gfx9 instruction's encoding depends on where it lies, so each
  // source gets the bytes assemble() gives it.
  std::string all;
  std::vector<unsigned> first_line;  // of each source in `all`, 1-based
  unsigned lines = 0;
  auto label = [](std::size_t i) { return ".Lwavekit_source_" + std::to_string(i); };
  for (std::size_t i = 0; i < sources.size(); ++i) {
    all += label(i) + ":\n";
    first_line.push_back(lines + 2);
    all += sources[i];
    const bool unterminated = !sources[i].empty() && sources[i].back() != '\n';
    if (unterminated) all += '\n';
    lines += 1 + static_cast<unsigned>(std::count(sources[i].begin(), sources[i].end(), '\n')) +
             (unterminated ? 1 : 0);
  }
  all += label(sources.size()) + ":\n.section .wavekit.sizes,\"a\",@progbits\n";
  for (std::size_t i = 0; i < sources.size(); ++i)
    all += ".long " + label(i + 1) + "-" + label(i) + "\n";
  const Assembled assembled =
      run_assembler(impl_->tools, impl_->processor, all, [&](unsigned line) {
        const auto next = std::upper_bound(first_line.begin(), first_line.end(), line);
        if (next == first_line.begin()) return "line " + std::to_string(line);
        const std::size_t source = static_cast<std::size_t>(next - first_line.begin()) - 1;
        return "source " + std::to_string(source) + " line " +
               std::to_string(line - first_line[source] + 1);
      });
  std::vector<std::uint8_t> text, sizes;
  for (const llvm::object::SectionRef& section : assembled.file->sections()) {
    auto name = section.getName();
    if (name && *name == ".text") text = section_bytes(section, impl_->processor);
    if (name && *name == ".wavekit.sizes") sizes = section_bytes(section, impl_->processor);
  }
  if (sizes.size() != 4 * sources.size())
    fail(impl_->processor, "cannot assemble: the sources' sizes are missing from the object");
  std::vector<std::vector<std::uint8_t>> pieces(sources.size());
  std::size_t offset = 0;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    std::uint32_t size = 0;
    std::memcpy(&size, sizes.data() + 4 * i, 4);
    if (offset + size > text.size())
      fail(impl_->processor, "cannot assemble: the sources' sizes exceed the code");
    pieces[i].assign(text.begin() + static_cast<std::ptrdiff_t>(offset),
                     text.begin() + static_cast<std::ptrdiff_t>(offset + size));
    offset += size;
  }
  return pieces;
}

}  // namespace wavekit::isa
