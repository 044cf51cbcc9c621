// Whether a written-to tensor overlaps itself or another operand in memory.
//
// Note [Memory overlap]
// An op that writes a tensor element by element reads stale or half-written
// values when the written-to tensor aliases itself (x.expand({3, 3}).add_(1):
// three elements share one address) or partially aliases an input
// (x.slice(0, 1).copy_(x.slice(0, 0, -1)), i.e. x[1:].copy_(x[:-1])): the
// result depends on the loop order and the thread split. ember raises in
// both cases, as PyTorch does; the checks are conservative (exact in the
// cases they answer, silent where the question is hard):
//  - has_internal_overlap(t): No for a tensor whose elements tile a
//    contiguous block (non-overlapping and dense: a permutation of a
//    contiguous tensor), Yes when a dim of size > 1 has stride 0 (expand),
//    TooHard otherwise (x[::2] has gaps; as_strided may or may not overlap).
//  - get_overlap_status(a, b): Full when a and b are the same view (same
//    data pointer, extent and strides: an ordinary in-place op, x.add_(x)),
//    Partial when both are dense over the same storage and their byte ranges
//    intersect otherwise (x[1:] and x[:-1]; x and x.t()), None when they are
//    disjoint or on different storages, TooHard when either is not dense.
// Only Yes and Partial raise. TensorIterator checks every output it is
// given against itself and every input (Config::check_mem_overlap opts out:
// fill_ and masked_fill_ may write an expanded tensor, as in PyTorch), and
// ops that write without an iterator call the assert_ functions themselves.
#pragma once

#include <string_view>

#include "ember/tensor.h"

namespace ember {

enum class MemOverlap : uint8_t { No, Yes, TooHard };
enum class MemOverlapStatus : uint8_t { None, Full, Partial, TooHard };

// True when t's elements cover a block of numel() elements exactly once:
// some permutation of its dims is contiguous (size-1 dims ignored).
bool is_non_overlapping_and_dense(const Tensor& t);

MemOverlap has_internal_overlap(const Tensor& t);
MemOverlapStatus get_overlap_status(const Tensor& a, const Tensor& b);

// Raise "<op>: unsupported operation: ..." for an output with internal
// overlap (Yes), and for an input that partially overlaps an output.
void assert_no_internal_overlap(const Tensor& t, std::string_view op);
void assert_no_partial_overlap(const Tensor& out, const Tensor& in, std::string_view op);

}  // namespace ember
