// `--json` output of the inspect commands: one document on stdout, indented
// by one space. Strings from files (metadata, names) may not be UTF-8:
// invalid bytes print as U+FFFD instead of failing the command.
#pragma once

#include <iostream>
#include <nlohmann/json.hpp>

namespace ember::cli {

inline void print_json(const nlohmann::json& document) {
  std::cout << document.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace ember::cli
