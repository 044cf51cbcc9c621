// ember::Error: the one error type ember raises.
//
// Every check goes through EMBER_CHECK(cond, parts...), which formats the
// parts with operator<< (shapes, dtypes and devices print readably) into a
// message that names the op, what it got and what it expected, e.g.
//   add: shapes [2, 3] and [4] cannot be broadcast (dim -1: 3 vs 4)
#pragma once

#include <ostream>
#include <stdexcept>
#include <string>

namespace ember {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

namespace detail {
// Runs write(os, parts) on a string stream and returns what it wrote. The
// stream lives in core/error.cpp, so this header needs <ostream> only (not
// <sstream>), and a check site holds no stream code.
std::string format_message(void (*write)(std::ostream& os, const void* parts), const void* parts);

template <class... Parts>
std::string str_cat(const Parts&... parts) {
  const auto write_parts = [&](std::ostream& os) { (os << ... << parts); };
  using WriteParts = decltype(write_parts);
  return format_message([](std::ostream& os, const void* w) { (*static_cast<const WriteParts*>(w))(os); },
                        &write_parts);
}
[[noreturn]] void throw_error(const std::string& msg, const char* file, int line);
}  // namespace detail

}  // namespace ember

#define EMBER_CHECK(cond, ...)                                                                    \
  do {                                                                                            \
    if (__builtin_expect(!(cond), 0)) {                                                           \
      ::ember::detail::throw_error(::ember::detail::str_cat(__VA_ARGS__), __FILE__, __LINE__);    \
    }                                                                                             \
  } while (0)

#define EMBER_FAIL(...) ::ember::detail::throw_error(::ember::detail::str_cat(__VA_ARGS__), __FILE__, __LINE__)
