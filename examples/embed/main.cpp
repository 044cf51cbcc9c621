// Embedding ember in your own program: link ember::ember, include one header.
#include <ember/ember.h>

#include <iostream>

int main() {
  ember::Tensor a = ember::arange(6, ember::kFloat32).view({2, 3});
  ember::Tensor b = ember::ones({3, 2});
  ember::Tensor c = a.matmul(b).relu();  // (2, 2)
  std::cout << c << "\n";
  // Each row of `a` sums to 3 and 12: check the engine computed it.
  const bool ok = c.index({0, 0}).item<float>() == 3.0f && c.index({1, 1}).item<float>() == 12.0f;
  std::cout << (ok ? "embed example: ok" : "embed example: WRONG RESULT") << "\n";
  return ok ? 0 : 1;
}
