// A graph archive: trace a model once, save it, then load and run it in a
// program that has none of the model's code (docs/graphs.md).
//
//   graph_archive              traces a small MLP into mlp.emb, then runs it
//   graph_archive model.emb    runs an archive made elsewhere (e.g. by ember's own tests or tools)
#include <ember/ember.h>
#include <ember/jit.h>

#include <iostream>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "mlp.emb";
  if (argc <= 1) {  // no archive given: make one
    ember::nn::Sequential net(ember::nn::Flatten(), ember::nn::Linear(784, 64), ember::nn::ReLU(),
                              ember::nn::Linear(64, 10));
    net->eval();
    ember::jit::save(ember::jit::trace(net, ember::randn({8, 1, 28, 28})), path);
  }

  // Loading and running needs only the archive.
  ember::jit::GraphModule model = ember::jit::load(path);
  std::cout << model.graph_text();
  const ember::Tensor images = ember::randn({4, 1, 28, 28});  // any batch size
  const ember::Tensor logits = model(images);
  std::cout << "logits " << logits.sizes() << ", classes " << logits.argmax(1) << "\n";
  return 0;
}
