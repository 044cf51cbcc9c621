// Note [Memory overlap] is in core/memory_overlap.h.
#include "core/memory_overlap.h"

#include <algorithm>

#include "core/tensor_util.h"

namespace ember {

bool is_non_overlapping_and_dense(const Tensor& t) {
  if (t.is_contiguous() || t.numel() == 0) return true;
  const IntArrayRef sizes = t.sizes(), strides = t.strides();
  // Dims by increasing stride, dims of size < 2 (whose stride is never used) last.
  DimVector order;
  for (int64_t d = 0; d < t.dim(); ++d) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t expected = 1;
  for (int64_t d : order) {
    if (sizes[d] < 2) break;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

MemOverlap has_internal_overlap(const Tensor& t) {
  if (is_non_overlapping_and_dense(t)) return MemOverlap::No;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.strides()[d] == 0 && t.sizes()[d] > 1) return MemOverlap::Yes;
  return MemOverlap::TooHard;
}

MemOverlapStatus get_overlap_status(const Tensor& a, const Tensor& b) {
  if (a.is_same(b)) return MemOverlapStatus::Full;
  if (a.numel() == 0 || b.numel() == 0) return MemOverlapStatus::None;
  // Checked before density (PyTorch checks density first): both orders raise
  // in the same cases, and this one answers most calls without a sort.
  if (a.impl()->storage().get() != b.impl()->storage().get()) return MemOverlapStatus::None;
  if (!is_non_overlapping_and_dense(a) || !is_non_overlapping_and_dense(b)) return MemOverlapStatus::TooHard;
  // Dense: each occupies the bytes [data, data + nbytes).
  const char* a_begin = a.impl()->data();
  const char* b_begin = b.impl()->data();
  const char* a_end = a_begin + a.nbytes();
  const char* b_end = b_begin + b.nbytes();
  if (a_begin == b_begin && a_end == b_end)
    return a.strides() == b.strides() ? MemOverlapStatus::Full : MemOverlapStatus::Partial;
  if (a_begin < b_end && b_begin < a_end) return MemOverlapStatus::Partial;
  return MemOverlapStatus::None;
}

void assert_no_internal_overlap(const Tensor& t, std::string_view op) {
  EMBER_CHECK(has_internal_overlap(t) != MemOverlap::Yes, op,
              ": unsupported operation: more than one element of the written-to tensor refers to a single memory "
              "location. Please clone() the tensor before performing the operation.");
}

void assert_no_partial_overlap(const Tensor& out, const Tensor& in, std::string_view op) {
  EMBER_CHECK(get_overlap_status(out, in) != MemOverlapStatus::Partial, op,
              ": unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
              "memory location. Please clone() the tensor before performing the operation.");
}

}  // namespace ember
