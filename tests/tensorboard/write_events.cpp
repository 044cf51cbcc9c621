// Writes the event files tests/tensorboard/check_events.py reads back with
// the tensorboard Python package:
//   OUT/scalars  SummaryWriter: test/square = step^2 at steps 0..9 (wall time
//                1000 + step), test/third = 1/3 at step 7, and a 10-bucket
//                histogram test/hist of 0..99 at step 5;
//   OUT/train    TensorBoardLogger on a 2-epoch Trainer run: 32 samples in
//                batches of 8, a point every 2 batches, SGD at lr 0.1, a test
//                loader, histograms of the model's parameters.
// usage: ember_tensorboard_writer OUT
#include <iostream>
#include <string>

#include "ember/data.h"
#include "ember/nn.h"
#include "ember/ops.h"
#include "ember/optim.h"
#include "ember/summary_writer.h"
#include "ember/trainer.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " OUT\n";
    return 2;
  }
  const std::string out = argv[1];
  try {
    {
      ember::SummaryWriter writer(out + "/scalars");
      for (int64_t step = 0; step < 10; ++step)
        writer.add_scalar("test/square", static_cast<double>(step * step), step, 1000.0 + static_cast<double>(step));
      writer.add_scalar("test/third", 1.0 / 3.0, 7);
      writer.add_histogram("test/hist", ember::arange(100, ember::kFloat32), 5, 10);
    }
    ember::manual_seed(0);
    ember::Generator g(7);
    ember::Tensor x = ember::randn({32, 4}, {}, &g);
    ember::Tensor y = (x.narrow(1, 0, 1).squeeze(1) > 0).to(ember::kInt64);
    auto set = std::make_shared<ember::data::TensorDataset>(x, y);
    ember::data::DataLoader train(set, {.batch_size = 8});
    ember::data::DataLoader test(set, {.batch_size = 16});
    ember::nn::Sequential model(ember::nn::Linear(4, 2));
    ember::optim::SGD opt(model->parameters(), ember::optim::SGDOptions(0.1));
    ember::TrainerOptions options;
    options.epochs = 2;
    options.callbacks = {std::make_shared<ember::TensorBoardLogger>(out + "/train", 2, model.ptr())};
    ember::Trainer trainer(options);
    trainer.fit(model, opt, nullptr, train, &test);
  } catch (const std::exception& e) {
    std::cerr << "ember_tensorboard_writer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
