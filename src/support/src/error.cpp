#include "wavekit/support/error.h"

namespace wavekit {

void fail(const std::string& context, const std::string& message) {
  throw Error(context + ": " + message);
}

}  // namespace wavekit
