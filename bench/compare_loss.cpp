// The loss family, ember against libtorch (harness: compare_harness.h):
// cross_entropy on [4096, 1000] logits with int64 targets (forward, and
// forward+backward), embedding backward for a [32768, 512] table with 8192
// ids, and mse_loss and dropout on [4096, 1000].
// Rates count the bytes of the big tensors read and written once:
// cross_entropy forward reads the logits (4 bytes per element), forward +
// backward reads them twice and writes the gradient (12 bytes per element);
// embedding backward reads the gradient rows and writes the whole table.
#include "bench/compare_harness.h"
#include "core/op_decls_loss.h"  // the op objects give the embedding backward kernel alone
#include "ember/nn/functional/loss.h"

using namespace ember_bench;
namespace F = ember::nn::functional;

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  std::vector<Case> cases;

  {  // cross_entropy [4096, 1000]
    const int64_t rows = 4096, classes = 1000;
    const double n = static_cast<double>(rows * classes);
    auto ex = ember::randn({rows, classes});
    auto et = ember::randint(0, classes, {rows});
    auto tx = torch::randn({rows, classes});
    auto tt = torch::randint(0, classes, {rows}, torch::kLong);
    cases.push_back({"cross_entropy [4096,1000] fwd", [=] { keep(F::cross_entropy(ex, et)); },
                     [=] { keep(torch::nn::functional::cross_entropy(tx, tt)); }, 4 * n, "GB/s"});
    auto exg = ex.detach().requires_grad_();
    auto txg = tx.detach().requires_grad_();
    cases.push_back({"cross_entropy [4096,1000] fwd+bwd",
                     [=] { keep(ember::autograd::grad({F::cross_entropy(exg, et)}, {exg})); },
                     [=] { keep(torch::autograd::grad({torch::nn::functional::cross_entropy(txg, tt)}, {txg})); },
                     12 * n, "GB/s"});
    namespace TF = torch::nn::functional;
    cases.push_back({"cross_entropy [4096,1000] ls=0.1 fwd+bwd",
                     [=] {
                       keep(ember::autograd::grad({F::cross_entropy(exg, et, std::nullopt, -100, "mean", 0.1)}, {exg}));
                     },
                     [=] {
                       keep(torch::autograd::grad(
                           {TF::cross_entropy(txg, tt, TF::CrossEntropyFuncOptions().label_smoothing(0.1))}, {txg}));
                     },
                     12 * n, "GB/s"});
    auto ey = ember::randn({rows, classes});  // mse reads two tensors: 8 bytes per element
    auto ty = torch::randn({rows, classes});
    cases.push_back({"mse_loss [4096,1000] fwd", [=] { keep(F::mse_loss(ex, ey)); },
                     [=] { keep(torch::mse_loss(tx, ty)); }, 8 * n, "GB/s"});
    cases.push_back({"dropout p=0.5 [4096,1000] fwd", [=] { keep(F::dropout(ex, 0.5)); },
                     [=] { keep(torch::dropout(tx, 0.5, true)); }, 8 * n, "GB/s"});
  }
  {  // embedding backward: [8192, 512] gradient rows into a [32768, 512] table
    const int64_t vocab = 32768, dim = 512, ids = 8192;
    const double bytes = 4.0 * static_cast<double>(ids * dim + vocab * dim);
    auto eg = ember::randn({ids, dim});
    auto ei = ember::randint(0, vocab, {ids});
    auto tg = torch::randn({ids, dim});
    auto ti = torch::randint(0, vocab, {ids}, torch::kLong);
    cases.push_back({"embedding_backward [32768,512] 8k ids",
                     [=] { keep(ember::op::embedding_backward.call(eg, ei, vocab, std::nullopt)); },
                     [=] { keep(torch::embedding_backward(tg, ti, vocab, -1, false, false)); }, bytes, "GB/s"});
    auto ew = ember::randn({vocab, dim});
    auto tw = torch::randn({vocab, dim});
    cases.push_back({"embedding [32768,512] 8k ids fwd", [=] { keep(F::embedding(ei, ew)); },
                     [=] { keep(torch::embedding(tw, ti)); }, 8.0 * static_cast<double>(ids * dim), "GB/s"});
  }
  run_cases(cases, only);
}
