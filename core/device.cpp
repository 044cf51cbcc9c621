#include "ember/device.h"

#include <ostream>

#include "ember/error.h"

namespace ember {

Device::Device(const std::string& spec) {
  if (spec == "cpu") {
    *this = Device::cpu();
    return;
  }
  if (spec.rfind("cuda", 0) == 0) {
    int idx = 0;
    if (spec.size() > 4) {
      EMBER_CHECK(spec[4] == ':' && spec.size() > 5 && spec.find_first_not_of("0123456789", 5) == std::string::npos,
                  "Device: expected 'cpu', 'cuda' or 'cuda:N', got '", spec, "'");
      idx = std::stoi(spec.substr(5));
    }
    *this = Device::cuda(idx);
    return;
  }
  EMBER_FAIL("Device: expected 'cpu', 'cuda' or 'cuda:N', got '", spec, "'");
}

std::string Device::str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }

std::ostream& operator<<(std::ostream& os, Device d) { return os << d.str(); }

}  // namespace ember
