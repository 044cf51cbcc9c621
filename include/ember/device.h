// Where a tensor's memory lives.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace ember {

enum class DeviceType : uint8_t { CPU, CUDA };

// The index is stored in an int8_t, as in PyTorch, so it is in [0, kMaxDeviceIndex];
// anything else (cuda:300, cuda:-1) raises an ember::Error instead of wrapping.
inline constexpr int kMaxDeviceIndex = 127;

namespace detail {
[[noreturn]] void bad_device_index(DeviceType t, long long index);
}  // namespace detail

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = 0;

  constexpr Device() = default;
  constexpr Device(DeviceType t, int i = 0) : type(t), index(static_cast<int8_t>(i)) {  // NOLINT
    if (i < 0 || i > kMaxDeviceIndex || (t == DeviceType::CPU && i != 0)) detail::bad_device_index(t, i);
  }
  // Parses "cpu", "cpu:0", "cuda", "cuda:N" (N in decimal, no sign or leading
  // zero, at most kMaxDeviceIndex); anything else raises an ember::Error that
  // names the string and the accepted forms.
  explicit Device(const std::string& spec);

  static constexpr Device cpu() { return Device(DeviceType::CPU, 0); }
  static constexpr Device cuda(int i = 0) { return Device(DeviceType::CUDA, i); }
  constexpr bool is_cpu() const { return type == DeviceType::CPU; }
  constexpr bool is_cuda() const { return type == DeviceType::CUDA; }
  std::string str() const;
  friend constexpr bool operator==(Device a, Device b) { return a.type == b.type && a.index == b.index; }
};

inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;

std::ostream& operator<<(std::ostream& os, Device d);

}  // namespace ember
