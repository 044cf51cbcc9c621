// The indexing and activation families, ember against libtorch (harness:
// compare_harness.h): gather on [4096, 1000] along dim 1 (forward, and its
// backward scatter_add), index_select of 2048 rows of a [8192, 512] table,
// flip and roll of a [4096, 1000] tensor, and activations on 16M floats
// (forward, and forward + backward through autograd, whose backward is the
// fused <name>_backward op).
// Rates count the bytes read and written once: a gather reads the index (8
// bytes) and one value (4) per output and writes it (4); an activation reads
// and writes 4 bytes per element; forward + backward reads 12 and writes 8.
#include "bench/compare_harness.h"
#include "ember/nn/functional/activation.h"

using namespace ember_bench;
namespace F = ember::nn::functional;

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  std::vector<Case> cases;

  {  // gather [4096, 1000] along dim 1, an index of the same shape
    const int64_t rows = 4096, cols = 1000;
    const double n = static_cast<double>(rows * cols);
    auto ex = ember::randn({rows, cols});
    auto ei = ember::randint(0, cols, {rows, cols});
    auto tx = torch::randn({rows, cols});
    auto ti = torch::randint(0, cols, {rows, cols}, torch::kLong);
    cases.push_back({"gather [4096,1000] dim 1", [=] { keep(ember::gather(ex, 1, ei)); },
                     [=] { keep(torch::gather(tx, 1, ti)); }, 16 * n, "GB/s"});
    auto ez = ember::zeros({rows, cols});
    auto tz = torch::zeros({rows, cols});
    cases.push_back({"scatter_add [4096,1000] dim 1 (gather bwd)", [=] { keep(ember::scatter_add(ez, 1, ei, ex)); },
                     [=] { keep(torch::scatter_add(tz, 1, ti, tx)); }, 24 * n, "GB/s"});
  }
  {  // index_select of rows, flip, roll
    auto et = ember::randn({8192, 512});
    auto tt = torch::randn({8192, 512});
    auto er = ember::randint(0, 8192, {2048});
    auto tr = torch::randint(0, 8192, {2048}, torch::kLong);
    cases.push_back({"index_select [8192,512] 2048 rows", [=] { keep(ember::index_select(et, 0, er)); },
                     [=] { keep(torch::index_select(tt, 0, tr)); }, 8.0 * 2048 * 512, "GB/s"});
    auto ex = ember::randn({4096, 1000});
    auto tx = torch::randn({4096, 1000});
    cases.push_back({"flip [4096,1000] dims (0,1)", [=] { keep(ember::flip(ex, {0, 1})); },
                     [=] { keep(torch::flip(tx, {0, 1})); }, 8.0 * 4096 * 1000, "GB/s"});
    cases.push_back({"roll [4096,1000] (3,-7) dims (0,1)", [=] { keep(ember::roll(ex, {3, -7}, {0, 1})); },
                     [=] { keep(torch::roll(tx, {3, -7}, {0, 1})); }, 8.0 * 4096 * 1000, "GB/s"});
  }
  {  // activations on 16M floats
    const int64_t n = 16 << 20;
    auto ex = ember::randn({n});
    auto eg = ember::randn({n});
    auto tx = torch::randn({n});
    auto tg = torch::randn({n});
    auto exg = ex.detach().requires_grad_();
    auto txg = tx.detach().requires_grad_();
    const double fwd = 8.0 * static_cast<double>(n), bwd = 20.0 * static_cast<double>(n);
    cases.push_back({"leaky_relu 16M", [=] { keep(F::leaky_relu(ex)); },
                     [=] { keep(torch::leaky_relu(tx, 0.01)); }, fwd, "GB/s"});
    cases.push_back({"leaky_relu 16M fwd+bwd", [=] { keep(ember::autograd::grad({F::leaky_relu(exg)}, {exg}, {eg})); },
                     [=] { keep(torch::autograd::grad({torch::leaky_relu(txg, 0.01)}, {txg}, {tg})); }, bwd, "GB/s"});
    cases.push_back({"mish 16M", [=] { keep(F::mish(ex)); }, [=] { keep(torch::mish(tx)); }, fwd, "GB/s"});
    cases.push_back({"mish 16M fwd+bwd", [=] { keep(ember::autograd::grad({F::mish(exg)}, {exg}, {eg})); },
                     [=] { keep(torch::autograd::grad({torch::mish(txg)}, {txg}, {tg})); }, bwd, "GB/s"});
    cases.push_back({"log_sigmoid 16M", [=] { keep(F::log_sigmoid(ex)); },
                     [=] { keep(torch::log_sigmoid(tx)); }, fwd, "GB/s"});
    cases.push_back({"hardswish 16M", [=] { keep(F::hardswish(ex)); },
                     [=] { keep(torch::hardswish(tx)); }, fwd, "GB/s"});
  }
  run_cases(cases, only);
}
