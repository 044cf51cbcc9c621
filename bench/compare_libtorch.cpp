// ember against libtorch: per-op overhead, autograd overhead, matmul, and
// memory-bound elementwise ops and reductions (harness: compare_harness.h).
#include <array>

#include "bench/compare_harness.h"

using namespace ember_bench;

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  std::vector<Case> cases;

  // Per-op eager overhead on 1-element tensors.
  {
    auto ea = ember::ones({1}), eb = ember::ones({1});
    auto ta = torch::ones({1}), tb = torch::ones({1});
    cases.push_back({"a + b, 1 element (overhead)", [=] { keep(ea + eb); }, [=] { keep(ta + tb); }});
    cases.push_back({"a.relu(), 1 element (overhead)", [=] { keep(ea.relu()); }, [=] { keep(ta.relu()); }});
    cases.push_back({"a.sum(), 1 element (overhead)", [=] { keep(ea.sum()); }, [=] { keep(ta.sum()); }});
  }
  // Autograd overhead: recording a node per op, and a backward pass over a
  // chain of 1,000 tiny nodes (the leaf's .grad is reset each time on both sides).
  {
    auto ea = ember::ones({1}).requires_grad_(), eb = ember::ones({1}).requires_grad_();
    auto ta = torch::ones({1}, torch::requires_grad()), tb = torch::ones({1}, torch::requires_grad());
    cases.push_back({"a + b, 1 element, requires grad", [=] { keep(ea + eb); }, [=] { keep(ta + tb); }});
    auto ember_chain = [ex = ember::ones({1}).requires_grad_()] {
      ember::Tensor h = ex;
      for (int i = 0; i < 1000; ++i) h = i % 2 == 0 ? h * 1.0001 : h + 0.5;
      h.backward();
      ex.set_grad(ember::Tensor());
    };
    auto torch_chain = [tx = torch::ones({1}, torch::requires_grad())] {
      torch::Tensor h = tx;
      for (int i = 0; i < 1000; ++i) h = i % 2 == 0 ? h * 1.0001 : h + 0.5;
      h.backward();
      tx.mutable_grad().reset();
    };
    cases.push_back({"1,000-op chain, forward+backward", ember_chain, torch_chain});
  }
  // Matmul.
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024},
                                                            {2048, 2048, 2048}, {128, 784, 512}}) {
    auto ea = ember::randn({m, k}), eb = ember::randn({k, n});
    auto ta = torch::randn({m, k}), tb = torch::randn({k, n});
    char name[64];
    std::snprintf(name, sizeof name, "mm f32 %ldx%ldx%ld", m, k, n);
    cases.push_back({name, [=] { keep(ea.mm(eb)); }, [=] { keep(ta.mm(tb)); }, 2.0 * m * k * n, "GFLOP/s"});
  }
  // Memory-bound elementwise and reductions on 16M floats (allocating results).
  {
    const int64_t n = 16 << 20;
    auto ea = ember::randn({n}), eb = ember::randn({n});
    auto ta = torch::randn({n}), tb = torch::randn({n});
    const double rw2 = 3.0 * 4 * n, rw1 = 2.0 * 4 * n, r1 = 4.0 * n;
    cases.push_back({"add 16M", [=] { keep(ea + eb); }, [=] { keep(ta + tb); }, rw2, "GB/s"});
    cases.push_back({"relu 16M", [=] { keep(ea.relu()); }, [=] { keep(ta.relu()); }, rw1, "GB/s"});
    cases.push_back({"gelu 16M", [=] { keep(ea.gelu()); }, [=] { keep(torch::gelu(ta)); }, rw1, "GB/s"});
    cases.push_back({"exp 16M", [=] { keep(ea.exp()); }, [=] { keep(ta.exp()); }, rw1, "GB/s"});
    cases.push_back({"sum 16M", [=] { keep(ea.sum()); }, [=] { keep(ta.sum()); }, r1, "GB/s"});
    cases.push_back({"logsumexp 16M", [=] { keep(ea.logsumexp({0})); }, [=] { keep(ta.logsumexp(0)); }, r1, "GB/s"});
  }
  run_cases(cases, only);
  return 0;
}
