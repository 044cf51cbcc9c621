// BatchNorm1d/2d, LayerNorm, GroupNorm, RMSNorm (include/ember/nn/modules/norm.h):
// parameters and buffers as PyTorch's, input checks that name the layer, and
// BatchNorm's bookkeeping (num_batches_tracked, the cumulative average when
// momentum is nullopt). The arithmetic is F:: (ember/nn/functional/norm.h).
#include <optional>
#include <ostream>
#include <string>

#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/nn/functional/norm.h"
#include "ember/nn/init.h"
#include "ember/nn/modules/norm.h"
#include "ember/ops.h"

namespace ember::nn {

namespace F = functional;

namespace {

std::optional<Tensor> optional_tensor(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

const char* bool_str(bool b) { return b ? "true" : "false"; }

void check_positive(const char* layer, const char* what, int64_t value) {
  EMBER_CHECK(value > 0, layer, ": ", what, " must be positive, got ", value);
}

void check_shape(const char* layer, const std::vector<int64_t>& normalized_shape) {
  EMBER_CHECK(!normalized_shape.empty(), layer, ": normalized_shape must have at least one dim");
  for (int64_t s : normalized_shape) check_positive(layer, "every dim of normalized_shape", s);
}

// The input's trailing dims must equal normalized_shape.
void check_trailing(const char* layer, const Tensor& input, const std::vector<int64_t>& normalized_shape) {
  const int64_t n = static_cast<int64_t>(normalized_shape.size());
  bool ok = input.dim() >= n;
  for (int64_t i = 0; ok && i < n; ++i)
    ok = input.size(input.dim() - n + i) == normalized_shape[static_cast<size_t>(i)];
  EMBER_CHECK(ok, layer, ": expected an input whose last dims are ", IntArrayRef(normalized_shape),
              " (normalized_shape), got shape ", input.sizes());
}

void check_channels(const std::string& layer, const Tensor& input, const char* what, int64_t channels) {
  EMBER_CHECK(input.size(1) == channels, layer, ": expected an input with ", channels, " channels (", what, "), got ",
              input.size(1), " (input shape ", input.sizes(), ")");
}

}  // namespace

// ---- BatchNorm ----

template <size_t D>
BatchNormNdImpl<D>::BatchNormNdImpl(BatchNormOptions opts)
    : Module("BatchNorm" + std::to_string(D) + "d"),
      options([&] {
        check_positive(name().c_str(), "num_features", opts.num_features());
        const std::optional<double> momentum = opts.momentum();
        EMBER_CHECK(!momentum || (*momentum >= 0 && *momentum <= 1), name(), ": momentum must be in [0, 1], got ",
                    momentum.value_or(0.0));
        return opts;
      }()),
      weight(register_parameter("weight", options.affine() ? empty({options.num_features()}) : Tensor())),
      bias(register_parameter("bias", options.affine() ? empty({options.num_features()}) : Tensor())),
      running_mean(
          register_buffer("running_mean", options.track_running_stats() ? empty({options.num_features()}) : Tensor())),
      running_var(
          register_buffer("running_var", options.track_running_stats() ? empty({options.num_features()}) : Tensor())),
      num_batches_tracked(
          register_buffer("num_batches_tracked", options.track_running_stats() ? zeros({}, kInt64) : Tensor())) {
  reset_parameters();
}

template <size_t D>
void BatchNormNdImpl<D>::reset_running_stats() {
  if (!options.track_running_stats()) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  init::zeros_(num_batches_tracked);
}

template <size_t D>
void BatchNormNdImpl<D>::reset_parameters() {
  reset_running_stats();
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

template <size_t D>
Tensor BatchNormNdImpl<D>::forward(const Tensor& input) {
  if constexpr (D == 1) {
    EMBER_CHECK(input.dim() == 2 || input.dim() == 3, name(),
                ": expected a 2-D (N, C) or 3-D (N, C, L) input, got shape ", input.sizes());
  } else {
    EMBER_CHECK(input.dim() == 4, name(), ": expected a 4-D (N, C, H, W) input, got shape ", input.sizes());
  }
  check_channels(name(), input, "num_features", options.num_features());
  double momentum = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    if (!options.momentum()) momentum = 1.0 / num_batches_tracked.item<double>();
  }
  // Without running statistics the batch's are used in eval mode too; in
  // training they are passed only to be updated.
  const bool use_batch_stats = is_training() || !running_mean.defined();
  const bool pass_running = !is_training() || options.track_running_stats();
  return F::batch_norm(input, pass_running ? optional_tensor(running_mean) : std::nullopt,
                       pass_running ? optional_tensor(running_var) : std::nullopt, optional_tensor(weight),
                       optional_tensor(bias), use_batch_stats, momentum, options.eps());
}

template <size_t D>
void BatchNormNdImpl<D>::pretty_print(std::ostream& os) const {
  os << name() << "(" << options.num_features() << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum()) {
    os << *options.momentum();
  } else {
    os << "nullopt";
  }
  os << ", affine=" << bool_str(options.affine()) << ", track_running_stats=" << bool_str(options.track_running_stats())
     << ")";
}

template class BatchNormNdImpl<1>;
template class BatchNormNdImpl<2>;

// ---- LayerNorm ----

LayerNormImpl::LayerNormImpl(LayerNormOptions opts)
    : Module("LayerNorm"),
      options([&] {
        check_shape("LayerNorm", opts.normalized_shape());
        return opts;
      }()),
      weight(register_parameter("weight",
                                options.elementwise_affine() ? ember::empty(options.normalized_shape()) : Tensor())),
      bias(register_parameter("bias", options.elementwise_affine() && options.bias()
                                          ? ember::empty(options.normalized_shape())
                                          : Tensor())) {
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  check_trailing("LayerNorm", input, options.normalized_shape());
  return F::layer_norm(input, options.normalized_shape(), optional_tensor(weight), optional_tensor(bias),
                       options.eps());
}

void LayerNormImpl::pretty_print(std::ostream& os) const {
  os << "LayerNorm(" << IntArrayRef(options.normalized_shape()) << ", eps=" << options.eps()
     << ", elementwise_affine=" << bool_str(options.elementwise_affine());
  if (options.elementwise_affine() && !options.bias()) os << ", bias=false";
  os << ")";
}

// ---- GroupNorm ----

GroupNormImpl::GroupNormImpl(GroupNormOptions opts)
    : Module("GroupNorm"),
      options([&] {
        check_positive("GroupNorm", "num_groups", opts.num_groups());
        check_positive("GroupNorm", "num_channels", opts.num_channels());
        EMBER_CHECK(opts.num_channels() % opts.num_groups() == 0, "GroupNorm: num_channels (", opts.num_channels(),
                    ") must be divisible by num_groups (", opts.num_groups(), ")");
        return opts;
      }()),
      weight(register_parameter("weight", options.affine() ? empty({options.num_channels()}) : Tensor())),
      bias(register_parameter("bias", options.affine() ? empty({options.num_channels()}) : Tensor())) {
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() >= 2, "GroupNorm: expected an input of shape (N, C, *), got shape ", input.sizes());
  check_channels("GroupNorm", input, "num_channels", options.num_channels());
  return F::group_norm(input, options.num_groups(), optional_tensor(weight), optional_tensor(bias), options.eps());
}

void GroupNormImpl::pretty_print(std::ostream& os) const {
  os << "GroupNorm(" << options.num_groups() << ", " << options.num_channels() << ", eps=" << options.eps()
     << ", affine=" << bool_str(options.affine()) << ")";
}

// ---- RMSNorm ----

RMSNormImpl::RMSNormImpl(RMSNormOptions opts)
    : Module("RMSNorm"),
      options([&] {
        check_shape("RMSNorm", opts.normalized_shape());
        return opts;
      }()),
      weight(register_parameter("weight",
                                options.elementwise_affine() ? ember::empty(options.normalized_shape()) : Tensor())) {
  reset_parameters();
}

void RMSNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
}

Tensor RMSNormImpl::forward(const Tensor& input) {
  check_trailing("RMSNorm", input, options.normalized_shape());
  return F::rms_norm(input, options.normalized_shape(), optional_tensor(weight), options.eps());
}

void RMSNormImpl::pretty_print(std::ostream& os) const {
  os << "RMSNorm(" << IntArrayRef(options.normalized_shape()) << ", eps=";
  if (options.eps()) {
    os << *options.eps();
  } else {
    os << "nullopt";
  }
  os << ", elementwise_affine=" << bool_str(options.elementwise_affine()) << ")";
}

}  // namespace ember::nn
