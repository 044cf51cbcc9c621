#include "ember/device.h"

#include <ostream>

#include "ember/error.h"

namespace ember {

namespace detail {
void bad_device_index(DeviceType t, long long index) {
  if (t == DeviceType::CPU) EMBER_FAIL("Device: the cpu device has only index 0, got ", index);
  EMBER_FAIL("Device: a cuda device index must be in [0, ", kMaxDeviceIndex, "], got ", index);
}
}  // namespace detail

namespace {
constexpr const char* kExpected = "expected 'cpu', 'cpu:0', 'cuda' or 'cuda:N' with N a decimal index in [0, 127]";
}  // namespace

Device::Device(const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string type_name = spec.substr(0, colon);
  EMBER_CHECK(type_name == "cpu" || type_name == "cuda", "Device: unknown device type in '", spec, "': ",
              kExpected);
  const DeviceType t = type_name == "cpu" ? DeviceType::CPU : DeviceType::CUDA;
  if (colon == std::string::npos) {
    *this = Device(t, 0);
    return;
  }
  // The index: digits only (no sign, space or suffix), no leading zero, at most 3 digits parsed.
  const std::string digits = spec.substr(colon + 1);
  const bool well_formed = !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos &&
                           (digits.size() == 1 || digits[0] != '0');
  EMBER_CHECK(well_formed, "Device: malformed device index in '", spec, "': ", kExpected);
  int idx = 0;
  for (char c : digits) {
    idx = idx * 10 + (c - '0');
    EMBER_CHECK(idx <= kMaxDeviceIndex, "Device: device index out of range in '", spec, "': ", kExpected);
  }
  EMBER_CHECK(t == DeviceType::CUDA || idx == 0, "Device: the cpu device has only index 0, got '", spec, "': ",
              kExpected);
  *this = Device(t, idx);
}

std::string Device::str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }

std::ostream& operator<<(std::ostream& os, Device d) { return os << d.str(); }

}  // namespace ember
