// Adding symbols and dynamic relocations: what a rewriter needs to make an object refer to a
// function or variable in another object of the same HSA executable.
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELF.h>
#include <llvm/Support/MathExtras.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <tuple>

#include "wavekit/codeobj/code_object.h"

namespace wavekit::codeobj {

namespace ELF = llvm::ELF;

namespace {

template <typename T>
void append(std::vector<std::uint8_t>& out, const T& value) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

bool is_hashed(const Symbol& symbol) {
  return symbol.is_defined() && symbol.binding != ELF::STB_LOCAL;
}

}  // namespace

std::uint32_t CodeObject::add_string(std::size_t string_table_index, const std::string& text) {
  std::vector<std::uint8_t> data = sections_[string_table_index].data;
  auto offset = static_cast<std::uint32_t>(data.size());
  data.insert(data.end(), text.begin(), text.end());
  data.push_back(0);
  set_section_contents(string_table_index, std::move(data));
  return offset;
}

void CodeObject::serialize_symbols(std::size_t table_index, const std::vector<Symbol>& symbols) {
  std::vector<std::uint8_t> data;
  for (const auto& symbol : symbols) {
    ELF::Elf64_Sym sym{};
    sym.st_name = symbol.name_offset;
    sym.st_info = static_cast<unsigned char>((symbol.binding << 4) | (symbol.type & 0xf));
    sym.st_other = symbol.other;
    sym.st_shndx = symbol.section_index;
    sym.st_value = symbol.value;
    sym.st_size = symbol.size;
    append(data, sym);
  }
  // sh_info of a symbol table: one past the last local symbol.
  std::size_t first_global = symbols.size();
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    if (symbols[i].binding != ELF::STB_LOCAL) {
      first_global = i;
      break;
    }
  }
  sections_[table_index].info = static_cast<std::uint32_t>(first_global);
  set_section_contents(table_index, std::move(data));
}

void CodeObject::serialize_relocations(std::size_t section_index) {
  std::vector<std::uint8_t> data;
  for (const auto& relocation : relocations_) {
    if (relocation.section_index != section_index) continue;
    ELF::Elf64_Rela rela{};
    rela.r_offset = relocation.offset;
    rela.setSymbolAndType(relocation.symbol_index, relocation.type);
    rela.r_addend = relocation.addend;
    append(data, rela);
  }
  set_section_contents(section_index, std::move(data));
}

// Rebuilds .gnu.hash and .hash for the current .dynsym. GNU hash needs the hashed symbols
// (defined, non-local) at the end of .dynsym sorted by bucket, so .dynsym is reordered first
// and the relocations that refer to it are renumbered.
void CodeObject::rebuild_dynamic_hashes() {
  auto dynsym_index = *section_index(".dynsym");
  auto gnu_hash_index = section_index(".gnu.hash");
  auto sysv_hash_index = section_index(".hash");

  std::vector<std::size_t> order(dynamic_symbols_.size());
  std::iota(order.begin(), order.end(), 0);
  std::uint32_t bucket_count = 1;
  if (gnu_hash_index) {
    std::size_t hashed = std::count_if(dynamic_symbols_.begin(), dynamic_symbols_.end(), is_hashed);
    bucket_count = static_cast<std::uint32_t>(std::max<std::size_t>(hashed / 4, 1));
    // Index 0 stays first; unhashed symbols, then hashed ones by bucket, keeping their order.
    // (A sort with the original index as the last key: std::stable_sort trips a deprecation
    // warning inside libstdc++ 12 under clang 22.)
    auto key = [&](std::size_t index) {
      const Symbol& symbol = dynamic_symbols_[index];
      std::uint32_t bucket =
          is_hashed(symbol) ? llvm::object::hashGnu(symbol.name) % bucket_count : 0;
      return std::make_tuple(is_hashed(symbol), bucket, index);
    };
    std::sort(order.begin() + 1, order.end(),
              [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  }
  std::vector<std::uint32_t> new_index_of(dynamic_symbols_.size());
  std::vector<Symbol> reordered;
  for (std::size_t position = 0; position < order.size(); ++position) {
    new_index_of[order[position]] = static_cast<std::uint32_t>(position);
    reordered.push_back(dynamic_symbols_[order[position]]);
  }
  dynamic_symbols_ = std::move(reordered);
  for (auto& relocation : relocations_) {
    if (sections_[relocation.section_index].link == dynsym_index && relocation.symbol_index != 0) {
      relocation.symbol_index = new_index_of[relocation.symbol_index];
    }
  }
  std::vector<std::size_t> relocation_sections;
  for (const auto& relocation : relocations_) {
    if (sections_[relocation.section_index].link == dynsym_index) {
      relocation_sections.push_back(relocation.section_index);
    }
  }
  std::sort(relocation_sections.begin(), relocation_sections.end());
  relocation_sections.erase(std::unique(relocation_sections.begin(), relocation_sections.end()),
                            relocation_sections.end());
  for (std::size_t index : relocation_sections) serialize_relocations(index);
  serialize_symbols(dynsym_index, dynamic_symbols_);

  if (gnu_hash_index) {
    const std::size_t count = dynamic_symbols_.size();
    std::size_t first_hashed = count;
    for (std::size_t i = 1; i < count; ++i) {
      if (is_hashed(dynamic_symbols_[i])) {
        first_hashed = i;
        break;
      }
    }
    const std::size_t hashed = count - first_hashed;
    const std::uint32_t shift2 = 26;  // what lld uses for ELF64
    const auto mask_words =
        static_cast<std::uint32_t>(llvm::PowerOf2Ceil(std::max<std::size_t>(hashed / 64, 1)));
    std::vector<std::uint64_t> bloom(mask_words, 0);
    std::vector<std::uint32_t> buckets(bucket_count, 0);
    std::vector<std::uint32_t> chain(hashed, 0);
    for (std::size_t i = first_hashed; i < count; ++i) {
      std::uint32_t hash = llvm::object::hashGnu(dynamic_symbols_[i].name);
      bloom[(hash / 64) % mask_words] |= (1ull << (hash % 64)) | (1ull << ((hash >> shift2) % 64));
      std::uint32_t bucket = hash % bucket_count;
      if (buckets[bucket] == 0) buckets[bucket] = static_cast<std::uint32_t>(i);
      bool last_in_bucket =
          i + 1 == count ||
          llvm::object::hashGnu(dynamic_symbols_[i + 1].name) % bucket_count != bucket;
      chain[i - first_hashed] = (hash & ~1u) | (last_in_bucket ? 1u : 0u);
    }
    std::vector<std::uint8_t> data;
    append(data, bucket_count);
    append(data, static_cast<std::uint32_t>(first_hashed));
    append(data, mask_words);
    append(data, shift2);
    for (auto word : bloom) append(data, word);
    for (auto bucket : buckets) append(data, bucket);
    for (auto link : chain) append(data, link);
    set_section_contents(*gnu_hash_index, std::move(data));
  }
  if (sysv_hash_index) {
    const auto count = static_cast<std::uint32_t>(dynamic_symbols_.size());
    std::uint32_t bucket_total = 0;
    std::memcpy(&bucket_total, sections_[*sysv_hash_index].data.data(),
                std::min<std::size_t>(4, sections_[*sysv_hash_index].data.size()));
    if (bucket_total == 0) bucket_total = count;
    std::vector<std::uint32_t> buckets(bucket_total, 0);
    std::vector<std::uint32_t> chain(count, 0);
    for (std::uint32_t i = 1; i < count; ++i) {
      std::uint32_t bucket = llvm::object::hashSysV(dynamic_symbols_[i].name) % bucket_total;
      chain[i] = buckets[bucket];
      buckets[bucket] = i;
    }
    std::vector<std::uint8_t> data;
    append(data, bucket_total);
    append(data, count);
    for (auto bucket : buckets) append(data, bucket);
    for (auto link : chain) append(data, link);
    set_section_contents(*sysv_hash_index, std::move(data));
  }
}

std::uint32_t CodeObject::add_dynamic_symbol(Symbol symbol) {
  auto dynsym_index = section_index(".dynsym");
  if (!dynsym_index)
    throw Error(name_ + ": cannot add a dynamic symbol: the object has no .dynsym");
  symbol.name_offset = add_string(sections_[*dynsym_index].link, symbol.name);
  symbol.visibility = symbol.other & 3;
  const std::string name = symbol.name;
  dynamic_symbols_.push_back(std::move(symbol));
  const std::size_t added = dynamic_symbols_.size() - 1;
  rebuild_dynamic_hashes();
  // Find where the new symbol went (names may repeat: the last one with this name that was not
  // there before is the new one; reordering is stable, so it is the last such).
  for (std::size_t i = dynamic_symbols_.size(); i-- > 0;) {
    if (dynamic_symbols_[i].name == name) return static_cast<std::uint32_t>(i);
  }
  return static_cast<std::uint32_t>(added);
}

std::uint32_t CodeObject::add_symbol(Symbol symbol) {
  auto symtab_index = section_index(".symtab");
  if (!symtab_index) throw Error(name_ + ": cannot add a symbol: the object has no .symtab");
  symbol.name_offset = add_string(sections_[*symtab_index].link, symbol.name);
  symbol.visibility = symbol.other & 3;
  std::size_t position = symbols_.size();
  if (symbol.binding == ELF::STB_LOCAL) {
    // Locals come before every global.
    position = sections_[*symtab_index].info;
    for (auto& relocation : relocations_) {
      if (sections_[relocation.section_index].link == *symtab_index &&
          relocation.symbol_index >= position) {
        ++relocation.symbol_index;
      }
    }
  }
  symbols_.insert(symbols_.begin() + static_cast<std::ptrdiff_t>(position), std::move(symbol));
  serialize_symbols(*symtab_index, symbols_);
  return static_cast<std::uint32_t>(position);
}

void CodeObject::add_dynamic_relocation(std::uint64_t offset, std::uint32_t type,
                                        std::uint32_t symbol_index, std::int64_t addend) {
  auto dynsym_index = section_index(".dynsym");
  if (!dynsym_index) throw Error(name_ + ": cannot add a dynamic relocation: no .dynsym");
  if (symbol_index >= dynamic_symbols_.size()) {
    throw Error(name_ + ": dynamic symbol " + std::to_string(symbol_index) + " does not exist");
  }
  auto rela_index = section_index(".rela.dyn");
  if (!rela_index) {
    NewSection rela;
    rela.name = ".rela.dyn";
    rela.type = ELF::SHT_RELA;
    rela.flags = ELF::SHF_ALLOC;
    rela.alignment = 8;
    rela_index = add_loaded_section(std::move(rela));
    sections_[*rela_index].link = static_cast<std::uint32_t>(*dynsym_index);
    sections_[*rela_index].entry_size = sizeof(ELF::Elf64_Rela);
    // DT_RELA/DT_RELASZ/DT_RELAENT go before the terminating DT_NULL.
    auto end = std::find_if(dynamic_.begin(), dynamic_.end(),
                            [](const DynamicEntry& entry) { return entry.tag == ELF::DT_NULL; });
    dynamic_.insert(end, {DynamicEntry{ELF::DT_RELA, sections_[*rela_index].address},
                          DynamicEntry{ELF::DT_RELASZ, 0},
                          DynamicEntry{ELF::DT_RELAENT, sizeof(ELF::Elf64_Rela)}});
    serialize_dynamic();
  }
  Relocation relocation;
  relocation.section_index = static_cast<std::uint32_t>(*rela_index);
  relocation.offset = offset;
  relocation.type = type;
  relocation.symbol_index = symbol_index;
  relocation.addend = addend;
  relocation.symbol_name = symbol_index == 0 ? "" : dynamic_symbols_[symbol_index].name;
  relocations_.push_back(std::move(relocation));
  serialize_relocations(*rela_index);
}

}  // namespace wavekit::codeobj
