// A small convolutional network written with ember::nn::functional alone:
// conv2d -> relu -> max_pool2d -> conv2d -> relu -> max_pool2d -> linear,
// trained with cross_entropy by plain gradient descent. The task is made up
// here so the example needs no files: each 16x16 image holds noise and one
// faint 4x4 square (as bright as the noise), and the label says which quadrant the square is in.
#include <ember/ember.h>

#include <cmath>
#include <iostream>

namespace F = ember::nn::functional;
using ember::Tensor;

// N noisy images (N, 1, 16, 16) and their labels (N) in {0, 1, 2, 3}.
std::pair<Tensor, Tensor> make_images(int64_t n) {
  Tensor images = ember::randn({n, 1, 16, 16});
  Tensor labels = ember::randint(0, 4, {n});
  Tensor offsets = ember::randint(0, 5, {n, 2});  // where the square sits inside its quadrant
  for (int64_t i = 0; i < n; ++i) {
    const int64_t quadrant = labels[i].item<int64_t>();
    const int64_t top = 8 * (quadrant / 2) + offsets[i][0].item<int64_t>();
    const int64_t left = 8 * (quadrant % 2) + offsets[i][1].item<int64_t>();
    images[i][0].narrow(0, top, 4).narrow(1, left, 4).add_(1.0);  // a view: writes into images
  }
  return {images, labels};
}

// A weight with PyTorch's default scale, uniform in +-1/sqrt(fan_in).
Tensor parameter(ember::IntArrayRef sizes, int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return ((ember::rand(sizes) * 2 - 1) * bound).requires_grad_();
}

int main() {
  ember::manual_seed(0);
  auto [train_x, train_y] = make_images(512);
  auto [test_x, test_y] = make_images(256);

  Tensor w1 = parameter({8, 1, 3, 3}, 9), b1 = parameter({8}, 9);
  Tensor w2 = parameter({16, 8, 3, 3}, 72), b2 = parameter({16}, 72);
  Tensor w3 = parameter({4, 16 * 4 * 4}, 256), b3 = parameter({4}, 256);
  std::vector<Tensor> params = {w1, b1, w2, b2, w3, b3};

  auto forward = [&](const Tensor& x) {
    Tensor h = F::max_pool2d(F::conv2d(x, w1, b1, 1, "same").relu(), {2, 2});  // (N, 8, 8, 8)
    h = F::max_pool2d(F::conv2d(h, w2, b2, 1, 1).relu(), {2, 2});            // (N, 16, 4, 4)
    return F::linear(h.flatten(1), w3, b3);                                    // (N, 4) logits
  };
  auto accuracy = [&](const Tensor& x, const Tensor& y) {
    ember::NoGradGuard no_grad;
    return forward(x).argmax(1).eq(y).to(ember::kFloat32).mean().item<double>();
  };

  const double lr = 0.1;
  const int64_t batch = 64;
  for (int epoch = 1; epoch <= 6; ++epoch) {
    double epoch_loss = 0;
    for (int64_t start = 0; start < 512; start += batch) {
      Tensor loss = F::cross_entropy(forward(train_x.narrow(0, start, batch)), train_y.narrow(0, start, batch));
      loss.backward();
      ember::NoGradGuard no_grad;
      for (Tensor& p : params) {
        p.sub_(p.grad() * lr);
        p.grad().zero_();
      }
      epoch_loss += loss.item<double>() * batch / 512;
    }
    std::cout << "epoch " << epoch << "  loss " << epoch_loss << "  test accuracy " << accuracy(test_x, test_y)
              << "\n";
  }
  return 0;
}
