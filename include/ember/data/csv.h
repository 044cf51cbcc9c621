// Reading numeric CSV files into tensors:
//
//   CsvTable t = load_csv("iris.csv", {.target_name = "species", .target_dtype = kInt64});
//   auto ds = std::make_shared<TensorDataset>(t.features, t.targets);   // [N, 4] f32, [N] int64
//
// Every field must be a number (as std::from_chars reads it: "1", "-2.5e3",
// "nan", "inf"), maybe in double quotes; surrounding spaces are ignored and
// empty lines skipped. A file without data rows is an error.
// A bad file is an ember::Error naming the file, the line and the column
// (and its header name when there is one).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ember/tensor.h"

namespace ember::data {

struct CsvOptions {
  // The first line holds column names.
  bool header = true;
  char delimiter = ',';
  // The target column, by 0-based index (negative counts from the end) or by
  // header name; at most one of the two. Without either, there is no target.
  std::optional<int64_t> target_index{};
  std::optional<std::string> target_name{};
  // Feature dtype: float32 or float64.
  DType dtype = kFloat32;
  // Target dtype: float32, float64 or int64 (each value must then be an
  // integer). Defaults to `dtype`.
  std::optional<DType> target_dtype{};
};

struct CsvTable {
  Tensor features;                         // [rows, feature columns]
  Tensor targets;                          // [rows], undefined without a target column
  std::vector<std::string> feature_names;  // from the header; empty without one
  std::string target_name;                 // likewise
};

CsvTable load_csv(const std::string& path, const CsvOptions& options = {});

}  // namespace ember::data
