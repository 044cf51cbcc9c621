// TensorIterator: the one loop driver for elementwise ops.
//
// Note [TensorIterator]
// build() takes outputs and inputs and works out, once per call:
//  - that no given output overlaps itself or partially overlaps an input
//    (Note [Memory overlap] in core/memory_overlap.h);
//  - the broadcast shape of the inputs (an output given by the caller, as in
//    an in-place op, must already have that shape);
//  - the common dtype (PyTorch's result_type, core/result_type.h); inputs of
//    another dtype are converted first, so kernels see one dtype per operand
//    class; an output given in another dtype receives a converted copy;
//  - per-operand byte strides over the broadcast shape (0 on broadcast dims),
//    reversed so dim 0 is the innermost, then coalesced: neighbouring dims
//    that are laid out contiguously for every operand merge into one, so a
//    contiguous op becomes a single 1-D loop of numel elements.
// for_each(loop) then calls loop(data, strides, n) for runs of the innermost
// dim, in fixed chunks of `grain` elements handed to the thread pool. A
// kernel's inner loop checks the strides to pick its contiguous (vectorised)
// or strided path.
#pragma once

#include <algorithm>
#include <array>

#include "core/tensor_util.h"
#include "ember/parallel.h"

namespace ember {

class TensorIterator {
 public:
  static constexpr int kMaxOperands = 5;
  // Elements per parallel chunk for cheap elementwise work.
  static constexpr int64_t kDefaultGrain = 32768;

  struct Config {
    std::string_view op = "op";
    Tensor outputs[2];
    int num_outputs = 1;
    std::array<Tensor, kMaxOperands> inputs;
    int num_inputs = 0;
    // Convert inputs to the common dtype (else each input keeps its dtype).
    bool promote_inputs = true;
    // Integer common dtypes become float32 (exp(int) is float, as in PyTorch).
    bool int_to_float = false;
    // Forces the common dtype instead of computing it.
    std::optional<DType> common_dtype;
    // Dtype of allocated outputs (comparisons: bool); defaults to the common dtype.
    std::optional<DType> output_dtype;
    // Raise for a given output that overlaps itself (an expanded tensor) or
    // partially overlaps an input. Off only where PyTorch allows the overlap:
    // fill_ (one value for every element) and masked_fill_ (deprecated there).
    bool check_mem_overlap = true;

    Config& name(std::string_view n) {
      op = n;
      return *this;
    }
    Config& output(const Tensor& t) {
      outputs[0] = t;
      return *this;
    }
    Config& input(const Tensor& t) {
      inputs[num_inputs++] = t;
      return *this;
    }
  };

  static TensorIterator build(Config config);

  // Unary and binary shortcuts used by most kernels.
  static TensorIterator unary(std::string_view op, const Tensor& out, const Tensor& a);
  static TensorIterator binary(std::string_view op, const Tensor& out, const Tensor& a, const Tensor& b);

  int num_operands() const { return num_operands_; }
  int num_outputs() const { return num_outputs_; }
  int64_t numel() const { return numel_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  IntArrayRef shape() const { return shape_; }  // innermost first
  DType common_dtype() const { return common_dtype_; }
  DType dtype(int operand) const { return operands_[operand].dtype(); }
  const Tensor& operand(int i) const { return operands_[i]; }
  // The result to return; for a caller-given output of another dtype, that output after the copy-back.
  const Tensor& output(int i = 0) const { return results_[i]; }
  // True when every operand is contiguous in a single coalesced dim.
  bool is_contiguous() const;
  // Byte stride of operand `op` along iteration dim `d` (innermost first).
  int64_t stride(int op, int d) const { return strides_[op][d]; }

  // loop(char** data, const int64_t* strides, int64_t n): n elements of the
  // innermost dim; data[i] and strides[i] are operand i's pointer and byte stride.
  template <class Loop>
  void for_each(Loop&& loop, int64_t grain = kDefaultGrain);
  // Runs the loop over all elements serially (for kernels that parallelise themselves).
  template <class Loop>
  void serial_for_each(Loop&& loop, int64_t begin, int64_t end) const;

  // Writes outputs computed in the common dtype back into caller-given outputs of another dtype.
  void finish();

 private:
  int num_operands_ = 0;
  int num_outputs_ = 0;
  int64_t numel_ = 0;
  DType common_dtype_ = DType::Float32;
  DimVector shape_;
  std::array<DimVector, kMaxOperands> strides_;
  std::array<Tensor, kMaxOperands> operands_;
  std::array<Tensor, 2> results_;
  std::array<bool, 2> needs_copy_back_{};
};

template <class Loop>
void TensorIterator::serial_for_each(Loop&& loop, int64_t begin, int64_t end) const {
  const int nd = ndim();
  const int nops = num_operands_;
  char* data[kMaxOperands];
  int64_t inner_strides[kMaxOperands];
  for (int o = 0; o < nops; ++o) inner_strides[o] = strides_[o][0];
  // Counter of the position `begin` over the outer dims.
  int64_t counter[16] = {};
  int64_t rest = begin;
  for (int d = 0; d < nd; ++d) {
    counter[d] = rest % shape_[d];
    rest /= shape_[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    for (int o = 0; o < nops; ++o) {
      char* p = static_cast<char*>(operands_[o].impl()->data());
      for (int d = 0; d < nd; ++d) p += counter[d] * strides_[o][d];
      data[o] = p;
    }
    const int64_t n = std::min(shape_[0] - counter[0], end - pos);
    loop(data, inner_strides, n);
    pos += n;
    counter[0] += n;
    for (int d = 0; d + 1 < nd && counter[d] == shape_[d]; ++d) {
      counter[d] = 0;
      ++counter[d + 1];
    }
  }
}

template <class Loop>
void TensorIterator::for_each(Loop&& loop, int64_t grain) {
  if (numel_ == 0) return;
  parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) { serial_for_each(loop, b, e); });
}

}  // namespace ember
