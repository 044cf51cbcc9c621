// Indexing like libtorch's Tensor::index:
//   t.index({Slice(0, 2), 1})            // t[0:2, 1]
//   t.index({Ellipsis, None, Slice(None, None, 2)})
//   t.index({mask}) / t.index({idx_tensor})  // advanced indexing (copies)
//   t.index_put_({Slice(), 0}, 1.0)      // t[:, 0] = 1
#pragma once

#include <optional>

#include "ember/tensor.h"

namespace ember {

struct NoneIndex {};
struct EllipsisIndex {};
inline constexpr NoneIndex None{};
inline constexpr EllipsisIndex Ellipsis{};

// start:stop:step; None (the default) means "from the start" / "to the end".
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  Slice() = default;
  Slice(std::optional<int64_t> start_, std::optional<int64_t> stop_ = std::nullopt, int64_t step_ = 1)
      : start(start_), stop(stop_), step(step_) {}
  Slice(NoneIndex, std::optional<int64_t> stop_ = std::nullopt, int64_t step_ = 1) : stop(stop_), step(step_) {}
  Slice(NoneIndex, NoneIndex, int64_t step_ = 1) : step(step_) {}
  Slice(std::optional<int64_t> start_, NoneIndex, int64_t step_ = 1) : start(start_), step(step_) {}
};

class TensorIndex {
 public:
  enum class Kind { Integer, Slice, None, Ellipsis, Boolean, Tensor };
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}  // NOLINT
  TensorIndex(int i) : kind_(Kind::Integer), integer_(i) {}      // NOLINT
  TensorIndex(bool b) : kind_(Kind::Boolean), boolean_(b) {}     // NOLINT
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}        // NOLINT
  TensorIndex(NoneIndex) : kind_(Kind::None) {}                  // NOLINT
  TensorIndex(EllipsisIndex) : kind_(Kind::Ellipsis) {}          // NOLINT
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return boolean_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
};

}  // namespace ember
