// save_safetensors / load_safetensors: tensors to and from the byte layer in
// serialize/safetensors_format.h (which validates every header).
#include <bit>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/tensor_util.h"
#include "ember/serialize.h"
#include "serialize/safetensors_format.h"

namespace ember {

// safetensors data is little-endian; tensors are copied byte for byte.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

void save_safetensors(const TensorDict& tensors, const std::string& path,
                      const std::map<std::string, std::string>& metadata) {
  std::vector<Tensor> hosts;  // keep the contiguous CPU copies alive until written
  std::vector<serialize::TensorView> views;
  hosts.reserve(tensors.size());
  views.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    EMBER_CHECK(t.defined(), "save_safetensors(", path, "): tensor '", name, "' is undefined");
    Tensor host = t.to(Device::cpu()).contiguous();
    const std::vector<int64_t> shape = host.sizes().vec();
    views.push_back({name, host.dtype(), shape, host.numel() ? host.data_ptr() : nullptr, host.nbytes()});
    hosts.push_back(std::move(host));
  }
  std::vector<uint8_t> bytes;
  try {
    bytes = serialize::write_safetensors(views, metadata);
  } catch (const Error& e) {
    // The byte layer does not know the path; put it where the op name is.
    constexpr std::string_view kOp = "save_safetensors: ";
    const std::string_view msg = e.what();
    EMBER_FAIL("save_safetensors(", path, "): ", msg.substr(msg.rfind(kOp, 0) == 0 ? kOp.size() : 0));
  }
  serialize::write_file_atomic(path, bytes.data(), bytes.size());
}

SafetensorsFile load_safetensors(const std::string& path) {
  const std::vector<uint8_t> bytes = serialize::read_file_bytes(path);
  const serialize::SafetensorsHeader header = serialize::parse_safetensors(bytes.data(), bytes.size(), path);
  SafetensorsFile out;
  out.metadata = header.metadata;
  for (const serialize::TensorRecord& r : header.tensors) {
    const uint8_t* src = bytes.data() + header.data_start + r.offset_begin;
    const size_t nbytes = r.offset_end - r.offset_begin;
    if (r.dtype == DType::Bool) {
      // Any byte but 0 and 1 would be an invalid C++ bool in every kernel.
      for (size_t i = 0; i < nbytes; ++i)
        EMBER_CHECK(src[i] <= 1, "load_safetensors(", path, "): tensor '", r.name.substr(0, 80), "': BOOL element ", i,
                    " has byte value ", static_cast<int>(src[i]), " (expected 0 or 1)");
    }
    Tensor t = make_empty(r.shape, r.dtype, Device::cpu());
    if (nbytes) std::memcpy(t.data_ptr(), src, nbytes);
    out.tensors.emplace(r.name, std::move(t));
  }
  return out;
}

}  // namespace ember
