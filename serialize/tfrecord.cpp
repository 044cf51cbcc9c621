// TFRecord framing (Note [TFRecord framing] in tfrecord.h).
#include "serialize/tfrecord.h"

#include <cerrno>
#include <cstring>

#include "ember/error.h"
#include "serialize/crc32c.h"
#include "serialize/safetensors_format.h"

namespace ember::serialize {
namespace {

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

}  // namespace

std::string frame_tfrecord(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  put_le(out, data.size(), 8);
  put_le(out, mask_crc32c(crc32c(out.data(), 8)), 4);
  out.append(data);
  put_le(out, mask_crc32c(crc32c(data)), 4);
  return out;
}

TFRecordWriter::TFRecordWriter(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "wb");
  EMBER_CHECK(file_ != nullptr, "TFRecordWriter: cannot create ", path_, ": ", std::strerror(errno));
}

TFRecordWriter::~TFRecordWriter() {
  if (file_) std::fclose(file_);
}

void TFRecordWriter::write(std::string_view data) {
  const std::string record = frame_tfrecord(data);
  EMBER_CHECK(std::fwrite(record.data(), 1, record.size(), file_) == record.size(), "TFRecordWriter: writing ",
              record.size(), " bytes to ", path_, " failed: ", std::strerror(errno));
}

void TFRecordWriter::flush() {
  EMBER_CHECK(std::fflush(file_) == 0, "TFRecordWriter: flushing ", path_, " failed: ", std::strerror(errno));
}

std::vector<std::string> read_tfrecords(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  std::vector<std::string> records;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t left = bytes.size() - at;
    EMBER_CHECK(left >= 12, "TFRecord ", path, ": record at byte ", at, " is cut off inside its 12-byte header (",
                left, " bytes left)");
    const uint8_t* header = bytes.data() + at;
    const uint64_t length = get_le(header, 8);
    const auto length_crc = static_cast<uint32_t>(get_le(header + 8, 4));
    EMBER_CHECK(length_crc == mask_crc32c(crc32c(header, 8)), "TFRecord ", path, ": record at byte ", at,
                ": the checksum of its length does not match (a corrupt file, or not a TFRecord file)");
    EMBER_CHECK(left >= 16 && length <= left - 16, "TFRecord ", path, ": record at byte ", at, " says it holds ", length,
                " bytes but only ", left - 12, " follow its header (4 of them for the data's checksum)");
    const uint8_t* data = header + 12;
    const auto data_crc = static_cast<uint32_t>(get_le(data + length, 4));
    EMBER_CHECK(data_crc == mask_crc32c(crc32c(data, length)), "TFRecord ", path, ": record at byte ", at,
                ": the checksum of its ", length, " data bytes does not match");
    records.emplace_back(reinterpret_cast<const char*>(data), length);
    at += 16 + length;
  }
  return records;
}

}  // namespace ember::serialize
