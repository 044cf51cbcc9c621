// How DistributedDataParallel groups parameters into buckets (Note
// [Gradient buckets] in ember/nn/parallel/distributed.h): a pure function, so
// the plan is easy to test and to print.
#pragma once

#include <cstddef>
#include <vector>

#include "ember/dtype.h"

namespace ember::distributed {

// Walks the parameters in `order`; a bucket closes once it holds at least its
// cap (first_cap for bucket 0, cap after), and a parameter of another dtype
// starts a new one. Returns parameter indices per bucket.
std::vector<std::vector<size_t>> assign_buckets(const std::vector<size_t>& order, const std::vector<size_t>& bytes,
                                                const std::vector<DType>& dtypes, size_t first_cap, size_t cap);

}  // namespace ember::distributed
