// ember::data::Example: one sample (or one batch) of a data set, and collate,
// which turns a list of samples into a batch.
//
//   Example e = dataset.get(3);                 // e.data: [1, 28, 28], e.target: [] (int64)
//   Example b = default_collate({e0, e1, e2});  // b.data: [3, 1, 28, 28], b.target: [3]
#pragma once

#include <functional>
#include <vector>

#include "ember/tensor.h"

namespace ember::data {

// A sample or a batch of samples: the input and, for supervised data, its
// target. `target` is undefined for data sets without targets.
struct Example {
  Tensor data;
  Tensor target;
};

// Turns the samples of one batch into a batch.
using Collate = std::function<Example(std::vector<Example>&&)>;

// Stacks the samples' data along a new dim 0, and their targets likewise
// (targets must be defined in all samples or in none). All data tensors must
// have one shape and dtype, and so must all targets; otherwise an
// ember::Error names the first sample that differs.
Example default_collate(std::vector<Example>&& examples);

}  // namespace ember::data
