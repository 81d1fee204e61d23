// libFuzzer over the parsers a user feeds: LIBSVM data files, model files (then a prediction
// with the parsed model) and search-space JSON (then decoding a point). Every input must end
// in a result or a wavekit::Error, never a crash, a hang or undefined behaviour.
#include <cstdint>
#include <string>

#include "wavekit/support/error.h"
#include "wavekit/tune/svm.h"
#include "wavekit/tune/tuner.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0: {
        auto d = wavekit::tune::parse_libsvm(text, "fuzz");
        (void)wavekit::tune::format_libsvm(d);
        break;
      }
      case 1: {
        auto m = wavekit::tune::parse_model(text, "fuzz");
        if (m.total_sv() < 64 && m.sv.cols() < 64) {
          std::vector<double> x(8, 0.5), dec;
          wavekit::tune::predict(m, x.data(), x.size(), &dec);
        }
        break;
      }
      default: {
        auto s = wavekit::tune::Space::from_json(text, "fuzz");
        std::vector<double> u(s.dims(), 0.3);
        (void)s.decode(u);
        (void)s.canonical(u);
        break;
      }
    }
  } catch (const wavekit::Error&) {
  }
  return 0;
}
