#include "ember/error.h"

#include <cstdlib>

namespace ember::detail {

// The source location is appended only when EMBER_ERROR_LOCATION is set: users
// read the message, developers may want to know which check fired.
[[noreturn]] void throw_error(const std::string& msg, const char* file, int line) {
  static const bool with_location = std::getenv("EMBER_ERROR_LOCATION") != nullptr;
  if (with_location) throw Error(msg + " (at " + file + ":" + std::to_string(line) + ")");
  throw Error(msg);
}

}  // namespace ember::detail
