// Transforms of one sample's data (an image), as torchvision.transforms:
//
//   Transform t = Compose({ToTensor(), RandomCrop(28, /*padding=*/4), RandomHorizontalFlip(),
//                          Normalize({0.2860}, {0.3530})});
//   Tensor x = t(image_u8, generator);   // image [28, 28] u8 -> [1, 28, 28] f32
//
// Images are CHW tensors (a 2-D HW image counts as one channel), except the
// input of ToTensor, which may also be HWC. A transform takes the Generator
// it draws from as an argument: MapDataset seeds one per (epoch seed, sample
// index), so results do not depend on which thread runs a transform.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember::data {

using Transform = std::function<Tensor(const Tensor& input, Generator& generator)>;

// Applies the transforms in order.
class Compose {
 public:
  Compose(std::vector<Transform> transforms);  // NOLINT: Compose({...}) reads as a list
  Tensor operator()(const Tensor& input, Generator& generator) const;

 private:
  std::vector<Transform> transforms_;
};

// uint8 image -> float32 CHW image with values / 255 in [0, 1]. The input is
// [H, W] (gives [1, H, W]), or [H, W, C] (layout kHWC, torchvision's
// ToTensor on a numpy image) or [C, H, W] (kCHW). The result is contiguous.
class ToTensor {
 public:
  enum class Layout { kHWC, kCHW };
  explicit ToTensor(Layout layout = Layout::kHWC) : layout_(layout) {}
  Tensor operator()(const Tensor& input, Generator& generator) const;

 private:
  Layout layout_;
};

// (x - mean[c]) / std[c] for each channel c of a floating CHW (or [C, ...])
// tensor, computed in the input's dtype. One mean/std value applies to all
// channels; otherwise there must be one per channel.
class Normalize {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std);
  Tensor operator()(const Tensor& input, Generator& generator) const;

 private:
  std::vector<double> mean_;
  std::vector<double> std_;
};

// Pads the last two dims by `padding` zeros on every side, then cuts a
// size[0] x size[1] window at a uniformly drawn (top, left).
class RandomCrop {
 public:
  explicit RandomCrop(int64_t size, int64_t padding = 0) : RandomCrop({size, size}, padding) {}
  RandomCrop(std::array<int64_t, 2> size, int64_t padding = 0);
  Tensor operator()(const Tensor& input, Generator& generator) const;

 private:
  std::array<int64_t, 2> size_;
  int64_t padding_;
};

// Mirrors the last dim (left-right) with probability p.
class RandomHorizontalFlip {
 public:
  explicit RandomHorizontalFlip(double p = 0.5);
  Tensor operator()(const Tensor& input, Generator& generator) const;

 private:
  double p_;
};

}  // namespace ember::data
