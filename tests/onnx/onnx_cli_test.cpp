// `ember export`: a checkpoint of `ember train` written as ONNX (run in
// onnxruntime) and as a graph archive (run by jit::load) gives the model's
// outputs; a path of no known format is refused. `ember train --set
// export=...` exports the best model.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "ember/ember.h"
#include "ember/jit.h"
#include "tests/onnx/onnxruntime_runner.h"
#include "tools/ember/train_models.h"

namespace ember {
namespace {

using testing::ScratchDir;

// Runs the ember CLI with `args`; its exit status, its output in `log`.
int run_cli(const std::string& args, const std::string& log) {
  const std::string command = "'" + std::string(EMBER_CLI) + "' " + args + " > '" + log + "' 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(OnnxExportCli, CheckpointToOnnxAndArchive) {
  ScratchDir dir;
  manual_seed(11);
  cli::ModelConfig config;
  config.name = "cnn";
  TrainableModel model = cli::make_model(config);
  model.module->eval();
  TrainingCheckpoint checkpoint;
  checkpoint.states["model"] = model.module->state_dict();
  checkpoint.info["config"] = "model:\n  name: cnn\n";  // `ember export` builds the model the run saved
  const std::string ckpt = dir.path("best.ckpt");
  save_training_checkpoint(checkpoint, ckpt);

  const std::string onnx = dir.path("cnn.onnx"), archive = dir.path("cnn.emb"), log = dir.path("cli.log");
  ASSERT_EQ(run_cli("export --checkpoint '" + ckpt + "' --output '" + onnx + "'", log), 0) << testing::read_text(log);
  ASSERT_EQ(run_cli("export --checkpoint '" + ckpt + "' --output '" + archive + "'", log), 0)
      << testing::read_text(log);
  testing::expect_checker_accepts(onnx);

  NoGradGuard no_grad;
  const Tensor x = randn({3, 1, 28, 28});
  const Tensor expected = model.forward(x);
  const TensorDict got = testing::run_onnxruntime(onnx, {{"x", x}}, dir);
  ASSERT_EQ(got.count("output"), 1u);
  EXPECT_LE(testing::max_error(got.at("output"), expected), 1e-5);
  const jit::GraphModule loaded = jit::load(archive);
  EXPECT_EQ(testing::max_abs_diff(loaded(x), expected), 0.0);  // the archive runs ember's own ops
  // Traced as inference runs: max pooling without the indices only backward needs.
  EXPECT_NE(loaded.graph_text().find("max_pool2d("), std::string::npos) << loaded.graph_text();
  EXPECT_EQ(loaded.graph_text().find("max_pool2d_with_indices"), std::string::npos) << loaded.graph_text();
}

// One short epoch of a small MLP; the exported model is best.ckpt's.
TEST(OnnxExportCli, TrainExportsTheBestModel) {
  ScratchDir dir;
  const std::string onnx = dir.path("run/mlp.onnx"), log = dir.path("train.log");
  ASSERT_EQ(run_cli("train --config '" + std::string(EMBER_SOURCE_DIR) +
                        "/config/fashion_mnist_mlp.yaml' --set epochs=1 --set 'model.hidden=[32, 16]' --set threads=1 "
                        "--set output='" + dir.path("run") + "' --set export='" + onnx + "'",
                    log),
            0)
      << testing::read_text(log);
  EXPECT_NE(testing::read_text(log).find("export: the best model written to " + onnx), std::string::npos)
      << testing::read_text(log);
  testing::expect_checker_accepts(onnx);

  cli::ModelConfig config;
  config.name = "mlp";
  config.hidden = {32, 16};
  TrainableModel model = cli::make_model(config);
  model.module->load_state_dict(load_training_checkpoint(dir.path("run/best.ckpt")).states.at("model"));
  model.module->eval();
  NoGradGuard no_grad;
  const Tensor x = randn({5, 1, 28, 28});
  const TensorDict got = testing::run_onnxruntime(onnx, {{"x", x}}, dir);
  ASSERT_EQ(got.count("output"), 1u);
  EXPECT_LE(testing::max_error(got.at("output"), model.forward(x)), 1e-5);
}

TEST(OnnxExportCli, UnknownFormatIsRefused) {
  ScratchDir dir;
  const std::string log = dir.path("cli.log");
  EXPECT_EQ(run_cli("export --config any.yaml --output '" + dir.path("model.bin") + "'", log), 1);
  EXPECT_NE(testing::read_text(log).find("cannot tell the format of"), std::string::npos) << testing::read_text(log);
  EXPECT_EQ(run_cli("export --format tflite --checkpoint x --output '" + dir.path("m.onnx") + "'", log), 1);
  EXPECT_NE(testing::read_text(log).find("expected onnx or archive"), std::string::npos) << testing::read_text(log);
  EXPECT_EQ(run_cli("train --config '" + std::string(EMBER_SOURCE_DIR) +
                        "/config/fashion_mnist_mlp.yaml' --dry-run --set export=model.bin",
                    log),
            1);
  EXPECT_NE(testing::read_text(log).find("expected a path ending in .onnx (ONNX) or .emb"), std::string::npos)
      << testing::read_text(log);
}

}  // namespace
}  // namespace ember
