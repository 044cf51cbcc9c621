// The README's quick start: tensors, broadcasting, matmul, reductions and
// autograd. It fits y = X·w + b by gradient descent: the loss's gradient comes
// from backward(), the update runs under NoGradGuard, and the engine shows
// the graph it recorded.
#include <ember/ember.h>

#include <iostream>

int main() {
  using namespace ember;
  manual_seed(0);

  // A synthetic regression problem: 256 samples, 4 features.
  Tensor X = randn({256, 4});
  Tensor true_w = tensor({2.0f, -1.0f, 0.5f, 3.0f}).view({4, 1});
  Tensor y = X.matmul(true_w) + 0.25 + 0.01 * randn({256, 1});

  Tensor w = zeros({4, 1}).requires_grad_();
  Tensor b = zeros({1}).requires_grad_();
  const double lr = 0.1;
  for (int step = 0; step <= 100; ++step) {
    Tensor loss = (X.matmul(w) + b - y).pow(2).mean();
    if (step == 0) std::cout << "loss = " << loss << "\nits graph:\n" << autograd::to_dot(loss) << "\n";
    loss.backward();  // fills w.grad() and b.grad()
    {
      NoGradGuard no_grad;  // the update itself is not recorded
      w.sub_(w.grad() * lr);
      b.sub_(b.grad() * lr);
      w.grad().zero_();
      b.grad().zero_();
    }
    if (step % 25 == 0) std::cout << "step " << step << "  loss " << loss.item<double>() << "\n";
  }
  std::cout << "learned w = " << w.detach().view({4}) << "\n";
  std::cout << "learned b = " << b.detach() << "\n";
  std::cout << "true w    = " << true_w.view({4}) << ", b = 0.25\n";
  return 0;
}
