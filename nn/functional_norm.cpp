// ember::nn::functional normalisations and softmax: each calls its dispatched
// op (core/op_decls_norm.h) and returns the output without the statistics;
// the kernels are in kernels/cpu/norm/norm.cpp; softmax and log_softmax are
// Tensor methods (core/ops_norm.cpp).
#include "ember/nn/functional/norm.h"

#include "core/op_decls_norm.h"

namespace ember::nn::functional {

Tensor softmax(const Tensor& input, int64_t dim, std::optional<DType> dtype) { return input.softmax(dim, dtype); }

Tensor log_softmax(const Tensor& input, int64_t dim, std::optional<DType> dtype) {
  return input.log_softmax(dim, dtype);
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  return std::get<0>(op::layer_norm.call(input, normalized_shape, weight, bias, eps));
}

Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                std::optional<double> eps) {
  const std::optional<Scalar> e = eps ? std::optional<Scalar>(Scalar(*eps)) : std::nullopt;
  return std::get<0>(op::rms_norm.call(input, normalized_shape, weight, e));
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  return std::get<0>(op::group_norm.call(input, num_groups, weight, bias, eps));
}

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, bool training, double momentum, double eps) {
  return std::get<0>(
      op::batch_norm.call(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

}  // namespace ember::nn::functional
