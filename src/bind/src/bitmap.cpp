#include "wavekit/bind/bitmap.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>
#include <utility>

#include "wavekit/support/error.h"

namespace wavekit::bind {
namespace {

// The largest index a list may name: beyond any machine's CPUs or NUMA nodes. hwloc itself
// truncates larger numbers to int (silently naming another index) or allocates the bitmap up
// to them (256 MiB for one index near 2^31).
constexpr unsigned long kMaxListIndex = (1ul << 20) - 1;

hwloc_bitmap_t allocate() {
  hwloc_bitmap_t bitmap = hwloc_bitmap_alloc();
  if (bitmap == nullptr) throw std::bad_alloc();
  return bitmap;
}

}  // namespace

Bitmap::Bitmap() : bitmap_(allocate()) {}

Bitmap::Bitmap(hwloc_const_bitmap_t source) : bitmap_(allocate()) {
  if (source != nullptr) hwloc_bitmap_copy(bitmap_, source);
}

Bitmap::Bitmap(const Bitmap& other) : Bitmap(other.bitmap_) {}

// A moved-from Bitmap keeps a valid (fresh, empty) bitmap so every member stays callable.
Bitmap::Bitmap(Bitmap&& other) : bitmap_(std::exchange(other.bitmap_, allocate())) {}

Bitmap& Bitmap::operator=(const Bitmap& other) {
  if (this != &other) hwloc_bitmap_copy(bitmap_, other.bitmap_);
  return *this;
}

Bitmap& Bitmap::operator=(Bitmap&& other) noexcept {
  std::swap(bitmap_, other.bitmap_);
  return *this;
}

Bitmap::~Bitmap() { hwloc_bitmap_free(bitmap_); }

Bitmap Bitmap::parse_list(std::string_view text, std::string_view what) {
  // hwloc's list parser is lenient about trailing junk, so check the characters first: digits,
  // ',' and '-' only, and no empty items.
  std::string list(text);
  bool item_has_digit = false;
  unsigned long number = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    char c = list[i];
    if (c >= '0' && c <= '9') {
      number = item_has_digit ? number * 10 + static_cast<unsigned long>(c - '0')
                              : static_cast<unsigned long>(c - '0');
      if (number > kMaxListIndex) {
        const std::size_t begin = list.find_last_of(",-", i) + 1;  // npos + 1 == 0
        const std::size_t stop = list.find_first_of(",-", i);
        fail(std::string(what), "'" + list + "': index " + list.substr(begin, stop - begin) +
                                    " is out of range (at most " + std::to_string(kMaxListIndex) +
                                    ")");
      }
      item_has_digit = true;
    } else if (c == '-' && item_has_digit && i + 1 < list.size() && list[i + 1] >= '0' &&
               list[i + 1] <= '9') {
      item_has_digit = false;
    } else if (c == ',' && item_has_digit) {
      item_has_digit = false;
    } else {
      fail(std::string(what), "'" + list + "' is not a list of indexes like 0-3,8");
    }
  }
  if (!item_has_digit)
    fail(std::string(what), "'" + list + "' is not a list of indexes like 0-3,8");
  Bitmap result;
  if (hwloc_bitmap_list_sscanf(result.bitmap_, list.c_str()) < 0)
    fail(std::string(what), "'" + list + "' is not a list of indexes like 0-3,8");
  return result;
}

Bitmap Bitmap::parse_list_or_file(std::string_view text, std::string_view what) {
  std::ifstream file{std::string(text)};
  if (!file) return parse_list(text, what);
  std::stringstream content;
  content << file.rdbuf();
  std::string list = content.str();
  while (!list.empty() && std::isspace(static_cast<unsigned char>(list.back()))) list.pop_back();
  return parse_list(list, std::string(what) + " (file " + std::string(text) + ")");
}

Bitmap& Bitmap::operator|=(const Bitmap& other) {
  hwloc_bitmap_or(bitmap_, bitmap_, other.bitmap_);
  return *this;
}

Bitmap& Bitmap::operator&=(const Bitmap& other) {
  hwloc_bitmap_and(bitmap_, bitmap_, other.bitmap_);
  return *this;
}

std::string Bitmap::list() const {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, bitmap_) < 0 || text == nullptr) throw std::bad_alloc();
  std::string result(text);
  std::free(text);
  return result;
}

std::vector<unsigned> Bitmap::indexes() const {
  std::vector<unsigned> result;
  for (int i = first(); i >= 0; i = next(i)) result.push_back(static_cast<unsigned>(i));
  return result;
}

}  // namespace wavekit::bind
