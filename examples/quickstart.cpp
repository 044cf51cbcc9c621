// The README's quick start: tensors, broadcasting, matmul and reductions.
// It fits y = X·w + b by gradient descent, with the gradient written out by
// hand (autograd comes later), and prints what the engine computed.
#include <ember/ember.h>

#include <iostream>

int main() {
  using namespace ember;
  manual_seed(0);

  // A synthetic regression problem: 256 samples, 4 features.
  Tensor X = randn({256, 4});
  Tensor true_w = tensor({2.0f, -1.0f, 0.5f, 3.0f}).view({4, 1});
  Tensor y = X.matmul(true_w) + 0.25 + 0.01 * randn({256, 1});

  Tensor w = zeros({4, 1});
  Tensor b = zeros({1});
  const double lr = 0.1;
  for (int step = 0; step <= 100; ++step) {
    Tensor err = X.matmul(w) + b - y;           // (256, 1)
    Tensor loss = err.pow(2).mean();
    Tensor grad_w = X.t().matmul(err) * (2.0 / 256);  // (4, 1)
    Tensor grad_b = err.mean({0}) * 2.0;              // (1,)
    w.sub_(grad_w * lr);
    b.sub_(grad_b * lr);
    if (step % 25 == 0) std::cout << "step " << step << "  loss " << loss.item<double>() << "\n";
  }
  std::cout << "learned w = " << w.view({4}) << "\n";
  std::cout << "learned b = " << b << "\n";
  std::cout << "true w    = " << true_w.view({4}) << ", b = 0.25\n";
  return 0;
}
