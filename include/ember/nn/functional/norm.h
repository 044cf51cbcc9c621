// ember::nn::functional normalisations and softmax, as torch.nn.functional:
//
//   namespace F = ember::nn::functional;
//   Tensor p = F::softmax(logits, -1);                         // rows sum to 1
//   Tensor h = F::layer_norm(x, {1024}, gamma, beta);          // x: (*, 1024)
//   Tensor y = F::batch_norm(x, running_mean, running_var, gamma, beta, /*training=*/true);
//
// Each takes a floating-point input (float32, float64, float16, bfloat16),
// returns a new tensor of the input's shape and dtype (softmax: of `dtype`
// when given), and is twice differentiable. Statistics are computed in float32 for f16/bf16 and float32 inputs,
// in float64 for float64 inputs. Results do not depend on the thread count.
// Bad arguments raise an ember::Error naming the op and the shapes.
#pragma once

#include <optional>

#include "ember/tensor.h"

namespace ember::nn::functional {

// exp(x) / sum(exp(x)) along `dim`, shifted by the max so it never overflows;
// a row of all -inf gives NaN, as in PyTorch. `dtype`: cast the input first.
Tensor softmax(const Tensor& input, int64_t dim, std::optional<DType> dtype = std::nullopt);
// x - max - log(sum(exp(x - max))) along `dim`.
Tensor log_softmax(const Tensor& input, int64_t dim, std::optional<DType> dtype = std::nullopt);

// (x - mean) / sqrt(var + eps) * weight + bias over the trailing dims
// `normalized_shape` (var biased); weight and bias have that shape.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);

// x / sqrt(mean(x^2) + eps) * weight over the trailing dims `normalized_shape`
// (torch >= 2.4). eps nullopt: the machine epsilon of the input's dtype.
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                std::optional<double> eps = std::nullopt);

// Input (N, C, *): each sample's C channels split into `num_groups` groups,
// each normalised over its channels and spatial dims; weight, bias (C).
// C must be divisible by num_groups.
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);

// Input (N, C), (N, C, L) or (N, C, H, W), normalised per channel. training:
// with the batch's mean and biased variance, and running_mean/running_var
// (when given) updated in place: r = (1 - momentum) r + momentum * batch stat,
// with the unbiased variance; needs more than one value per channel.
// Evaluation: with running_mean/running_var (both required).
Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, bool training = false, double momentum = 0.1,
                  double eps = 1e-5);

}  // namespace ember::nn::functional
