// Training checkpoints as safetensors files with a checksum (see
// include/ember/training_checkpoint.h for the layout).
#include "ember/training_checkpoint.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "ember/error.h"
#include "ember/generator.h"
#include "ember/version.h"
#include "serialize/crc32.h"
#include "serialize/safetensors_format.h"

namespace ember {
namespace {

constexpr std::string_view kFormat = "ember.training_checkpoint.v1";
constexpr std::string_view kInfoPrefix = "info.";

bool valid_part_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// CRC-32 over the metadata (but the checksum itself) and every tensor's name,
// dtype, shape and bytes, each in key order.
uint32_t checksum(const TensorDict& tensors, const std::map<std::string, std::string>& metadata) {
  serialize::Crc32 crc;
  for (const auto& [key, value] : metadata) {
    if (key == "checksum") continue;
    crc.update(key);
    crc.update(std::string_view("\0", 1));
    crc.update(value);
    crc.update(std::string_view("\0", 1));
  }
  for (const auto& [name, t] : tensors) {
    crc.update(name);
    crc.update(std::string_view("\0", 1));
    crc.update(serialize::safetensors_dtype_name(t.dtype()));
    for (int64_t s : t.sizes()) crc.update(&s, sizeof s);
    const Tensor host = t.to(Device::cpu()).contiguous();
    if (host.numel() > 0) crc.update(host.data_ptr(), host.nbytes());
  }
  return crc.value();
}

std::string hex32(uint32_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(8, '0');
  for (int i = 7; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = kDigits[v & 0xF];
  return s;
}

template <class T>
T parse_number(const std::string& path, const std::map<std::string, std::string>& metadata, const char* key) {
  const auto it = metadata.find(key);
  EMBER_CHECK(it != metadata.end(), "load_training_checkpoint(", path, "): the metadata has no '", key, "'");
  T value{};
  const std::string& s = it->second;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  EMBER_CHECK(ec == std::errc() && end == s.data() + s.size(), "load_training_checkpoint(", path, "): '", key,
              "' is '", s.substr(0, 40), "', expected an integer");
  return value;
}

}  // namespace

void save_training_checkpoint(const TrainingCheckpoint& checkpoint, const std::string& path) {
  TensorDict tensors;
  for (const auto& [part, dict] : checkpoint.states) {
    EMBER_CHECK(valid_part_name(part), "save_training_checkpoint(", path, "): part name '", part,
                "' must be letters, digits, '_' or '-'");
    for (const auto& [key, t] : dict) {
      EMBER_CHECK(t.defined(), "save_training_checkpoint(", path, "): ", part, " tensor '", key, "' is undefined");
      tensors.emplace(part + "/" + key, t.to(Device::cpu()).contiguous());
    }
  }
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : checkpoint.info) metadata.emplace(std::string(kInfoPrefix) + key, value);
  metadata["format"] = kFormat;
  metadata["ember_version"] = version();
  metadata["epoch"] = std::to_string(checkpoint.epoch);
  metadata["step"] = std::to_string(checkpoint.step);
  metadata["rng_seed"] = std::to_string(checkpoint.rng_seed);
  metadata["rng_offset"] = std::to_string(checkpoint.rng_offset);
  std::string parts;
  for (const auto& [part, dict] : checkpoint.states) parts += (parts.empty() ? "" : ",") + part;
  metadata["parts"] = parts;  // so that a part with no tensors comes back too
  metadata["checksum"] = hex32(checksum(tensors, metadata));
  save_safetensors(tensors, path, metadata);
}

TrainingCheckpoint load_training_checkpoint(const std::string& path) {
  SafetensorsFile file = load_safetensors(path);
  const auto format = file.metadata.find("format");
  EMBER_CHECK(format != file.metadata.end() && format->second == kFormat, "load_training_checkpoint(", path,
              "): not an ember training checkpoint (metadata 'format' is ",
              format == file.metadata.end() ? std::string("missing") : "'" + format->second.substr(0, 60) + "'",
              ", expected '", kFormat, "')");
  const auto stored = file.metadata.find("checksum");
  EMBER_CHECK(stored != file.metadata.end(), "load_training_checkpoint(", path, "): the metadata has no checksum");
  const std::string actual = hex32(checksum(file.tensors, file.metadata));
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION  // a fuzzer cannot forge a CRC: let it reach the checks below
  EMBER_CHECK(stored->second == actual, "load_training_checkpoint(", path, "): checksum mismatch (stored ",
              stored->second.substr(0, 16), ", computed ", actual, "): the file is corrupted");
#endif

  TrainingCheckpoint out;
  out.epoch = parse_number<int64_t>(path, file.metadata, "epoch");
  out.step = parse_number<int64_t>(path, file.metadata, "step");
  out.rng_seed = parse_number<uint64_t>(path, file.metadata, "rng_seed");
  out.rng_offset = parse_number<uint64_t>(path, file.metadata, "rng_offset");
  const std::string& parts = file.metadata["parts"];
  for (size_t begin = 0; begin < parts.size();) {
    const size_t end = std::min(parts.find(',', begin), parts.size());
    out.states[parts.substr(begin, end - begin)];
    begin = end + 1;
  }
  for (auto& [name, t] : file.tensors) {
    const size_t slash = name.find('/');
    EMBER_CHECK(slash != std::string::npos && out.states.count(name.substr(0, slash)), "load_training_checkpoint(",
                path, "): tensor '", name.substr(0, 80), "' belongs to no part (parts: ", parts, ")");
    out.states[name.substr(0, slash)].emplace(name.substr(slash + 1), std::move(t));
  }
  for (const auto& [key, value] : file.metadata)
    if (key.rfind(kInfoPrefix, 0) == 0) out.info.emplace(key.substr(kInfoPrefix.size()), value);
  return out;
}

void capture_global_rng(TrainingCheckpoint& checkpoint) {
  checkpoint.rng_seed = default_generator().seed();
  checkpoint.rng_offset = default_generator().offset();
}

void restore_global_rng(const TrainingCheckpoint& checkpoint) {
  default_generator().manual_seed(checkpoint.rng_seed);
  default_generator().set_offset(checkpoint.rng_offset);
}

}  // namespace ember
