// The argument checks of scaled_dot_product_attention, shared by the
// attention kernels (kernels/cpu/attention/) and by the composite path that
// nn/functional_attention.cpp takes for dropout, so both raise the same errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ember/array_ref.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember::attention {

// The attention problem after checking: `batch` is the broadcast of the batch
// dims of query [..., L, E], key [..., S, E] and value [..., S, Ev]; the
// kernels solve n = prod(batch) independent problems.
struct AttentionShape {
  DimVector batch;
  int64_t n = 1, l = 0, s = 0, e = 0, ev = 0;
  double scale = 1;
  bool causal = false;
};

// Checks the arguments of scaled_dot_product_attention (each failure is an
// ember::Error naming `op`, the shapes or dtypes, and what was expected) and
// returns the problem's shape.
AttentionShape check_attention(std::string_view op, const Tensor& query, const Tensor& key, const Tensor& value,
                               const std::optional<Tensor>& attn_mask, bool is_causal,
                               const std::optional<Scalar>& scale);

}  // namespace ember::attention
