// An owning, value-semantics wrapper around hwloc's bitmap, so CPU, NUMA and GPU sets can be
// copied, compared and returned without manual hwloc_bitmap_free calls. Formatting and parsing
// go through hwloc itself, so lists read and print exactly as hwloc (and mpibind) do.
#pragma once

#include <hwloc.h>

#include <string>
#include <string_view>
#include <vector>

namespace wavekit::bind {

class Bitmap {
 public:
  Bitmap();
  explicit Bitmap(hwloc_const_bitmap_t source);  // copies; a null source gives an empty set
  Bitmap(const Bitmap& other);
  Bitmap(Bitmap&& other);
  Bitmap& operator=(const Bitmap& other);
  Bitmap& operator=(Bitmap&& other) noexcept;
  ~Bitmap();

  // Parses an hwloc list ("0-3,8,10-11"); throws wavekit::Error naming `what` on bad syntax.
  static Bitmap parse_list(std::string_view text, std::string_view what);
  // mpibind's restrict ids: a list, or the name of a file that holds one (as Flux and Slurm
  // pass an allocation); errors name `what`.
  static Bitmap parse_list_or_file(std::string_view text, std::string_view what);

  hwloc_bitmap_t get() { return bitmap_; }
  hwloc_const_bitmap_t get() const { return bitmap_; }

  int weight() const { return hwloc_bitmap_weight(bitmap_); }
  bool empty() const { return hwloc_bitmap_iszero(bitmap_) != 0; }
  bool contains(unsigned index) const { return hwloc_bitmap_isset(bitmap_, index) != 0; }
  bool includes(const Bitmap& subset) const {
    return hwloc_bitmap_isincluded(subset.bitmap_, bitmap_) != 0;
  }
  bool intersects(const Bitmap& other) const {
    return hwloc_bitmap_intersects(bitmap_, other.bitmap_) != 0;
  }
  int first() const { return hwloc_bitmap_first(bitmap_); }
  int next(int previous) const { return hwloc_bitmap_next(bitmap_, previous); }

  void set(unsigned index) { hwloc_bitmap_set(bitmap_, index); }
  Bitmap& operator|=(const Bitmap& other);
  Bitmap& operator&=(const Bitmap& other);
  friend Bitmap operator|(Bitmap a, const Bitmap& b) { return a |= b; }
  friend Bitmap operator&(Bitmap a, const Bitmap& b) { return a &= b; }
  friend bool operator==(const Bitmap& a, const Bitmap& b) {
    return hwloc_bitmap_isequal(a.bitmap_, b.bitmap_) != 0;
  }

  // hwloc list syntax, e.g. "0-7,64-71"; "" for the empty set.
  std::string list() const;
  std::vector<unsigned> indexes() const;

 private:
  hwloc_bitmap_t bitmap_;
};

}  // namespace wavekit::bind
