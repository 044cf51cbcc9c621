// Text inside a double-quoted Graphviz DOT label: '"' and '\\' escaped. Shared
// by the autograd graph (autograd/to_dot.cpp) and traced graphs (jit/).
#pragma once

#include <string>
#include <string_view>

namespace ember {

inline std::string dot_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace ember
