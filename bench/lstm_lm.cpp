// An LSTM language-model training step, ember's side of the comparison with
// PyTorch 2.x that bench/lstm_lm_torch.py drives:
//   embedding(10000, 256) -> 2-layer LSTM(256 -> 512) -> linear(512 -> 10000),
//   tokens (seq 35, batch 32), cross entropy against the next tokens, SGD step
//   (zero_grad, forward, loss, backward, step).
//
//   build/<dir>/bench/lstm_lm --threads 2 --steps 20        # alone: median, min, max
//   build/<dir>/bench/lstm_lm --threads 2 --serve           # driven: reads "N\n", runs N steps,
//                                                           # prints their times in ms; "0\n" ends
//   --part lstm: the recurrent part alone, the 2-layer LSTM on the embedded
//   tokens with loss sum(output) (no embedding, head or cross entropy).
// --serve is what lstm_lm_torch.py uses to interleave the two sides (A/B/A/B)
// in one run, each process idle while the other measures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/optim.h"

namespace nn = ember::nn;
namespace F = ember::nn::functional;

namespace {

constexpr int64_t kVocab = 10000, kEmbed = 256, kHidden = 512, kLayers = 2, kSeq = 35, kBatch = 32;

struct LanguageModel {
  nn::Embedding embed{kVocab, kEmbed};
  nn::LSTM lstm{nn::LSTMOptions(kEmbed, kHidden).num_layers(kLayers)};
  nn::Linear head{kHidden, kVocab};

  std::vector<ember::Tensor> parameters() const {
    std::vector<ember::Tensor> p;
    for (const nn::Module* m : {static_cast<const nn::Module*>(embed.get()), static_cast<const nn::Module*>(lstm.get()),
                                static_cast<const nn::Module*>(head.get())})
      for (const ember::Tensor& t : m->parameters()) p.push_back(t);
    return p;
  }
};

double step_ms(LanguageModel& model, ember::optim::SGD& opt, const ember::Tensor& ids, const ember::Tensor& targets,
               const ember::Tensor& embedded) {
  const auto t0 = std::chrono::steady_clock::now();
  opt.zero_grad();
  if (embedded.defined()) {
    std::get<0>(model.lstm(embedded)).sum().backward();
  } else {
    const auto [out, state] = model.lstm(model.embed(ids));  // (35, 32, 512)
    const ember::Tensor logits = model.head(out.reshape({kSeq * kBatch, kHidden}));
    F::cross_entropy(logits, targets).backward();
  }
  opt.step();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, steps = 20;
  bool serve = false, lstm_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i], value = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--threads" && !value.empty()) threads = std::atoi(argv[++i]);
    else if (a == "--steps" && !value.empty()) steps = std::atoi(argv[++i]);
    else if (a == "--serve") serve = true;
    else if (a == "--part" && (value == "all" || value == "lstm")) lstm_only = argv[++i] == std::string("lstm");
    else {
      std::cerr << "usage: lstm_lm [--threads N] [--steps N] [--serve] [--part all|lstm]\n";
      return 2;
    }
  }
  ember::set_num_threads(threads);
  ember::manual_seed(0);
  LanguageModel model;
  ember::optim::SGD opt(lstm_only ? model.lstm->parameters() : model.parameters(), ember::optim::SGDOptions(0.1));
  const ember::Tensor tokens = ember::randint(0, kVocab, {kSeq + 1, kBatch});
  const ember::Tensor ids = tokens.narrow(0, 0, kSeq), targets = tokens.narrow(0, 1, kSeq).reshape({-1});
  const ember::Tensor embedded = lstm_only ? model.embed(ids).detach() : ember::Tensor();
  auto step = [&] { return step_ms(model, opt, ids, targets, embedded); };
  for (int k = 0; k < 3; ++k) step();  // warm-up: allocator cache, pool threads

  if (serve) {
    std::cout << "ready" << std::endl;
    int n = 0;
    while (std::cin >> n && n > 0) {
      for (int k = 0; k < n; ++k) std::cout << (k ? " " : "") << step();
      std::cout << std::endl;
    }
    return 0;
  }
  std::vector<double> t;
  for (int k = 0; k < steps; ++k) t.push_back(step());
  std::sort(t.begin(), t.end());
  std::printf("ember %s step, %d thread(s): median %.1f ms (min %.1f, max %.1f, %d steps)\n",
              lstm_only ? "LSTM (fwd + bwd)" : "LSTM LM", threads,
              t[t.size() / 2], t.front(), t.back(), steps);
  return 0;
}
