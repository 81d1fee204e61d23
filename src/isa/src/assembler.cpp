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

std::vector<std::uint8_t> Assembler::assemble(std::string_view source) const {
  const Toolchain& t = impl_->tools;
  // The text goes through llvm-mc's path: parser -> ELF object streamer; the bytes are the
  // resulting .text, with branches to local labels resolved by the assembler's layout.
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(source.data(), source.size()),
                                           "<wavekit assembly>"),
      llvm::SMLoc());
  std::string diagnostics;
  sources.setDiagHandler(
      [](const llvm::SMDiagnostic& diagnostic, void* context) {
        auto* out = static_cast<std::string*>(context);
        if (diagnostic.getKind() != llvm::SourceMgr::DK_Error) return;
        if (!out->empty()) *out += "; ";
        *out += "line " + std::to_string(diagnostic.getLineNo()) + ": " +
                diagnostic.getMessage().str() + " ('" + diagnostic.getLineContents().trim().str() +
                "')";
      },
      &diagnostics);

  llvm::MCContext context(t.triple, t.asm_info.get(), t.register_info.get(), t.subtarget.get(),
                          &sources, &t.options);
  std::unique_ptr<llvm::MCObjectFileInfo> file_info(
      t.target->createMCObjectFileInfo(context, /*PIC=*/true));
  context.setObjectFileInfo(file_info.get());

  llvm::SmallString<1024> object;
  {
    llvm::raw_svector_ostream object_stream(object);
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
    if (!target_parser) fail(impl_->processor, "LLVM's AMDGPU assembler is not available");
    parser->setTargetParser(*target_parser);
    bool failed = parser->Run(/*NoInitialTextSection=*/true);
    if (failed || !diagnostics.empty()) {
      fail(
          impl_->processor,
          "cannot assemble: " + (diagnostics.empty() ? std::string("unknown error") : diagnostics));
    }
  }

  auto parsed = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(llvm::StringRef(object.data(), object.size()), "assembled"));
  if (!parsed) {
    fail(impl_->processor,
         "cannot read the assembled object: " + llvm::toString(parsed.takeError()));
  }
  std::vector<std::uint8_t> text;
  for (const llvm::object::SectionRef& section : (*parsed)->sections()) {
    auto name = section.getName();
    if (!name || *name != ".text") continue;
    if (!section.relocations().empty()) {
      fail(impl_->processor,
           "cannot assemble: the code refers to symbols it does not define (it would need "
           "relocations)");
    }
    auto contents = section.getContents();
    if (!contents) {
      fail(impl_->processor, "cannot read .text: " + llvm::toString(contents.takeError()));
    }
    text.assign(contents->begin(), contents->end());
  }
  return text;
}

}  // namespace wavekit::isa
