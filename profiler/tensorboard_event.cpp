// Hand-encoded TensorBoard Event protos (tensorboard_event.h). A field is a
// key, (field number << 3) | wire type, as a varint, then the value:
// varints 7 bits a byte, low bits first; fixed-width values little-endian;
// length-delimited values as a varint length and the bytes.
#include "profiler/tensorboard_event.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ember/error.h"

namespace ember::tensorboard {

void ProtoWriter::varint(uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void ProtoWriter::fixed(uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

void ProtoWriter::varint_field(int field, uint64_t value) {
  varint(static_cast<uint64_t>(field) << 3 | 0);
  varint(value);
}

void ProtoWriter::double_field(int field, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, 8);
  varint(static_cast<uint64_t>(field) << 3 | 1);
  fixed(bits, 8);
}

void ProtoWriter::float_field(int field, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  varint(static_cast<uint64_t>(field) << 3 | 5);
  fixed(bits, 4);
}

void ProtoWriter::bytes_field(int field, std::string_view bytes) {
  varint(static_cast<uint64_t>(field) << 3 | 2);
  varint(bytes.size());
  out_.append(bytes);
}

void ProtoWriter::packed_doubles(int field, const std::vector<double>& values) {
  ProtoWriter payload;
  for (double v : values) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    payload.fixed(bits, 8);
  }
  bytes_field(field, payload.bytes());
}

namespace {

// An Event holding a Summary with one Value.
std::string summary_event(double wall_time, int64_t step, const ProtoWriter& value) {
  ProtoWriter summary;
  summary.bytes_field(1, value.bytes());
  ProtoWriter event;
  event.double_field(1, wall_time);
  event.varint_field(2, static_cast<uint64_t>(step));
  event.bytes_field(5, summary.bytes());
  return event.bytes();
}

}  // namespace

std::string file_version_event(double wall_time) {
  ProtoWriter event;
  event.double_field(1, wall_time);
  event.bytes_field(3, "brain.Event:2");
  return event.bytes();
}

std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value) {
  ProtoWriter v;
  v.bytes_field(1, tag);
  v.float_field(2, value);
  return summary_event(wall_time, step, v);
}

Histogram make_histogram(const double* values, size_t n, int64_t bins) {
  EMBER_CHECK(bins >= 1, "make_histogram: bins must be >= 1, got ", bins);
  Histogram h;
  if (n == 0) return h;
  h.min = h.max = values[0];
  for (size_t i = 0; i < n; ++i) {
    const double v = values[i];
    EMBER_CHECK(std::isfinite(v), "make_histogram: value ", i, " of ", n, " is ", v, "; a histogram needs finite values");
    h.min = std::min(h.min, v);
    h.max = std::max(h.max, v);
    h.sum += v;
    h.sum_squares += v * v;
  }
  h.num = static_cast<double>(n);
  if (h.min == h.max) bins = 1;
  const double width = (h.max - h.min) / static_cast<double>(bins);
  h.bucket.assign(static_cast<size_t>(bins), 0.0);
  for (int64_t b = 0; b < bins; ++b)
    h.bucket_limit.push_back(b + 1 == bins ? h.max : h.min + width * static_cast<double>(b + 1));
  for (size_t i = 0; i < n; ++i) {
    // Bucket b covers (limit[b-1], limit[b]]: the first limit at or above the value.
    const auto it = std::lower_bound(h.bucket_limit.begin(), h.bucket_limit.end(), values[i]);
    const auto b = std::min<size_t>(static_cast<size_t>(it - h.bucket_limit.begin()), h.bucket.size() - 1);
    h.bucket[b] += 1;
  }
  return h;
}

std::string histogram_event(double wall_time, int64_t step, std::string_view tag, const Histogram& h) {
  ProtoWriter histo;
  histo.double_field(1, h.min);
  histo.double_field(2, h.max);
  histo.double_field(3, h.num);
  histo.double_field(4, h.sum);
  histo.double_field(5, h.sum_squares);
  histo.packed_doubles(6, h.bucket_limit);
  histo.packed_doubles(7, h.bucket);
  ProtoWriter v;
  v.bytes_field(1, tag);
  v.bytes_field(5, histo.bytes());
  return summary_event(wall_time, step, v);
}

}  // namespace ember::tensorboard
