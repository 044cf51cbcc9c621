#include "ember/error.h"

#include <cstdlib>
#include <sstream>

namespace ember::detail {

std::string format_message(void (*write)(std::ostream& os, const void* parts), const void* parts) {
  std::ostringstream os;
  write(os, parts);
  return os.str();
}

// The source location is appended only when EMBER_ERROR_LOCATION is set: users
// read the message, developers may want to know which check fired.
[[noreturn]] void throw_error(const std::string& msg, const char* file, int line) {
  static const bool with_location = std::getenv("EMBER_ERROR_LOCATION") != nullptr;
  if (with_location) throw Error(msg + " (at " + file + ":" + std::to_string(line) + ")");
  throw Error(msg);
}

}  // namespace ember::detail
