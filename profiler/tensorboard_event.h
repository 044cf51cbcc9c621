// TensorBoard's Event protos, encoded by hand: the few messages and fields a
// SummaryWriter writes (include/ember/summary_writer.h), with no protobuf
// library. Field numbers are those of TensorBoard's event.proto and
// summary.proto:
//   Event          1 wall_time (double), 2 step (int64), 3 file_version (string), 5 summary (Summary)
//   Summary        1 value (repeated Value)
//   Summary.Value  1 tag (string), 2 simple_value (float), 5 histo (HistogramProto)
//   HistogramProto 1 min, 2 max, 3 num, 4 sum, 5 sum_squares (double),
//                  6 bucket_limit, 7 bucket (packed repeated double)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ember::tensorboard {

// A protobuf message being written: each call appends one field (its key,
// then its value in the field's wire type).
class ProtoWriter {
 public:
  void varint_field(int field, uint64_t value);        // wire type 0 (int64: two's complement)
  void double_field(int field, double value);          // wire type 1
  void float_field(int field, float value);            // wire type 5
  void bytes_field(int field, std::string_view bytes);  // wire type 2: strings, bytes, nested messages
  void packed_doubles(int field, const std::vector<double>& values);  // wire type 2
  const std::string& bytes() const { return out_; }

 private:
  void varint(uint64_t value);
  void fixed(uint64_t bits, int bytes);
  std::string out_;
};

// The first event of every file: file_version "brain.Event:2".
std::string file_version_event(double wall_time);

std::string scalar_event(double wall_time, int64_t step, std::string_view tag, float value);

// Counts of values per bucket; bucket i holds the values v with
// bucket_limit[i-1] < v <= bucket_limit[i] (the first bucket: v <= bucket_limit[0]).
struct Histogram {
  double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
  std::vector<double> bucket_limit, bucket;
};

// `bins` equal-width buckets from the smallest value to the largest (one
// bucket when all values are equal). The values must be finite; n may be 0.
Histogram make_histogram(const double* values, size_t n, int64_t bins);

std::string histogram_event(double wall_time, int64_t step, std::string_view tag, const Histogram& h);

}  // namespace ember::tensorboard
