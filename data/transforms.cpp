// The image transforms of <ember/data/transforms.h>.
#include "ember/data/transforms.h"

#include <utility>

#include "ember/error.h"
#include "ember/ops.h"
#include "data/random_bits.h"

namespace ember::data {

Compose::Compose(std::vector<Transform> transforms) : transforms_(std::move(transforms)) {
  for (size_t i = 0; i < transforms_.size(); ++i)
    EMBER_CHECK(static_cast<bool>(transforms_[i]), "Compose: transform ", i, " is empty");
}

Tensor Compose::operator()(const Tensor& input, Generator& generator) const {
  Tensor x = input;
  for (const Transform& t : transforms_) x = t(x, generator);
  return x;
}

Tensor ToTensor::operator()(const Tensor& input, Generator& /*generator*/) const {
  EMBER_CHECK(input.dtype() == kUInt8, "ToTensor: expected a uint8 image, got ", input.dtype(), " ",
              input.sizes());
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, "ToTensor: expected an image of 2 dims (H, W) or 3 dims (",
              layout_ == Layout::kHWC ? "H, W, C" : "C, H, W", "), got ", input.sizes());
  Tensor chw = input.dim() == 2 ? input.unsqueeze(0) : layout_ == Layout::kHWC ? input.permute({2, 0, 1}) : input;
  return chw.to(kFloat32).div(255).contiguous();
}

Normalize::Normalize(std::vector<double> mean, std::vector<double> std) : mean_(std::move(mean)), std_(std::move(std)) {
  EMBER_CHECK(!mean_.empty() && mean_.size() == std_.size(), "Normalize: mean and std need the same, non-zero "
              "number of values, got ", mean_.size(), " and ", std_.size());
  for (size_t c = 0; c < std_.size(); ++c)
    EMBER_CHECK(std_[c] != 0, "Normalize: std[", c, "] is 0 (division by zero)");
}

Tensor Normalize::operator()(const Tensor& input, Generator& /*generator*/) const {
  EMBER_CHECK(input.is_floating_point(), "Normalize: expected a floating tensor (C, ...), got ", input.dtype(),
              " (convert uint8 images with ToTensor first)");
  EMBER_CHECK(input.dim() >= 1, "Normalize: expected a tensor (C, ...), got a scalar");
  const int64_t channels = input.size(0);
  const auto values = static_cast<int64_t>(mean_.size());
  EMBER_CHECK(values == 1 || values == channels, "Normalize: ", values, " mean/std values for an input with ",
              channels, " channels (shape ", input.sizes(), "); give 1 value or one per channel");
  // Per-channel constants shaped (C, 1, ..., 1) in the input's dtype, so the
  // arithmetic happens in that dtype, as torchvision's does.
  std::vector<int64_t> shape(static_cast<size_t>(input.dim()), 1);
  shape[0] = values;
  auto per_channel = [&](const std::vector<double>& v) {
    return from_blob(const_cast<double*>(v.data()), {values}, kFloat64).to(input.device(), input.dtype()).view(shape);
  };
  return input.sub(per_channel(mean_)).div(per_channel(std_));
}

RandomCrop::RandomCrop(std::array<int64_t, 2> size, int64_t padding) : size_(size), padding_(padding) {
  EMBER_CHECK(size_[0] > 0 && size_[1] > 0, "RandomCrop: size must be positive, got (", size_[0], ", ", size_[1],
              ")");
  EMBER_CHECK(padding_ >= 0, "RandomCrop: padding must be >= 0, got ", padding_);
}

Tensor RandomCrop::operator()(const Tensor& input, Generator& generator) const {
  EMBER_CHECK(input.dim() >= 2, "RandomCrop: expected an image (..., H, W), got ", input.sizes());
  const int64_t h = input.size(-2) + 2 * padding_, w = input.size(-1) + 2 * padding_;
  EMBER_CHECK(size_[0] <= h && size_[1] <= w, "RandomCrop: crop (", size_[0], ", ", size_[1],
              ") is larger than the padded image (", h, ", ", w, ") of input ", input.sizes());
  Tensor padded = input;
  if (padding_ > 0) {
    std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end());
    shape[shape.size() - 2] = h;
    shape[shape.size() - 1] = w;
    padded = zeros(shape, input.options());
    padded.narrow(-2, padding_, input.size(-2)).narrow(-1, padding_, input.size(-1)).copy_(input);
  }
  // Both offsets from one Philox block: top from its low word, left from its high word.
  const Philox4x32 block = detail::next_block(generator);
  const auto top = static_cast<int64_t>(detail::low_word(block) % static_cast<uint64_t>(h - size_[0] + 1));
  const auto left = static_cast<int64_t>(detail::high_word(block) % static_cast<uint64_t>(w - size_[1] + 1));
  return padded.narrow(-2, top, size_[0]).narrow(-1, left, size_[1]).contiguous();
}

RandomHorizontalFlip::RandomHorizontalFlip(double p) : p_(p) {
  EMBER_CHECK(p_ >= 0 && p_ <= 1, "RandomHorizontalFlip: p must be in [0, 1], got ", p_);
}

Tensor RandomHorizontalFlip::operator()(const Tensor& input, Generator& generator) const {
  EMBER_CHECK(input.dim() >= 1, "RandomHorizontalFlip: expected an image (..., W), got a scalar");
  const Philox4x32 block = detail::next_block(generator);
  const double u = uniform_double(block.c[0], block.c[1]);
  return u < p_ ? input.flip({-1}) : input;
}

}  // namespace ember::data
