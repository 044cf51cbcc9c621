// `ember train` configs: read through the real command (`ember train
// --dry-run`), since the YAML reader lives in the tool. The tool sits next to
// the tests folder of the build (build/<preset>/ember); without it the tests skip.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "ember/training_checkpoint.h"
#include "ember/version.h"
#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr
};

class TrainConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tool_ = fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "ember";
    if (!fs::exists(tool_)) GTEST_SKIP() << "no ember tool at " << tool_ << " (build the ember_cli target)";
    dir_ = fs::temp_directory_path() / ("ember_train_config_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "data");
    // Empty stand-ins: the config check only asks that the files exist.
    for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                             "t10k-labels-idx1-ubyte"}) {
      std::ofstream(dir_ / "data" / name).put('\0');
    }
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Writes `yaml` (with the data path of the stand-ins appended) and runs the dry run.
  CommandResult dry_run(const std::string& yaml, const std::string& extra_args = "") {
    const fs::path config = dir_ / "config.yaml";
    std::ofstream(config) << yaml << "\ndata:\n  path: " << (dir_ / "data").string() << "\n";
    return run(tool_.string() + " train --dry-run --config " + config.string() + " " + extra_args);
  }
  static CommandResult run(const std::string& command) {
    CommandResult result;
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return result;
    std::array<char, 4096> buffer;
    while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) result.output.append(buffer.data(), n);
    const int status = ::pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
  }
  std::string config_path() const { return (dir_ / "config.yaml").string(); }

  fs::path tool_, dir_;
};

#define EXPECT_OUTPUT_HAS(result, text) \
  EXPECT_NE((result).output.find(text), std::string::npos) << "output lacks '" << (text) << "':\n" << (result).output

TEST_F(TrainConfigTest, GoodConfigBuildsTheModel) {
  const CommandResult r = dry_run("model:\n  name: cnn\noptimizer:\n  name: sgd\n  lr: 0.05\n  momentum: 0.9\n"
                                  "epochs: 2\n");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_OUTPUT_HAS(r, "model cnn (225034 parameters), sgd lr 0.05");
  EXPECT_OUTPUT_HAS(r, "Linear(in_features=1600, out_features=128");
}

TEST_F(TrainConfigTest, TheShippedConfigsParse) {
  const fs::path configs = fs::path(EMBER_TEST_DATA_DIR).parent_path().parent_path() / "config";
  for (const char* name : {"fashion_mnist_cnn.yaml", "fashion_mnist_mlp.yaml", "fashion_mnist_transformer.yaml"}) {
    const CommandResult r = run(tool_.string() + " train --dry-run --config " + (configs / name).string() +
                                " --set data.path=" + (dir_ / "data").string());
    EXPECT_EQ(r.status, 0) << name << ":\n" << r.output;
  }
}

TEST_F(TrainConfigTest, UnknownKeyNamesTheKeyAndTheFile) {
  const CommandResult r = dry_run("model:\n  name: cnn\noptimizer:\n  name: adam\n  lrr: 0.1\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_OUTPUT_HAS(r, "unknown key 'optimizer.lrr'");
  EXPECT_OUTPUT_HAS(r, config_path() + ":5");
}

TEST_F(TrainConfigTest, WrongTypeNamesTheKey) {
  const CommandResult r = dry_run("model:\n  name: mlp\n  hidden: [256, wide]\nepochs: 3\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_OUTPUT_HAS(r, config_path() + ":3");
  EXPECT_OUTPUT_HAS(r, "'model.hidden' must be a list of 2 integers, got a list of 2");
  const CommandResult epochs = dry_run("model:\n  name: cnn\nepochs: five\n");
  EXPECT_OUTPUT_HAS(epochs, "'epochs' must be an integer, got 'five'");
}

TEST_F(TrainConfigTest, SetOverridesAndIsNamedInErrors) {
  const CommandResult ok = dry_run("model:\n  name: mlp\n", "--set model.hidden=[32,16] --set optimizer.lr=0.5");
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_OUTPUT_HAS(ok, "model mlp (25818 parameters), adam lr 0.5");  // 784*32+32 + 32*16+16 + 16*10+10
  const CommandResult bad = dry_run("model:\n  name: cnn\n", "--set optimizer.momentum=0.9");
  EXPECT_EQ(bad.status, 1);
  EXPECT_OUTPUT_HAS(bad, "--set optimizer.momentum: unknown key 'optimizer.momentum'");
}

TEST_F(TrainConfigTest, BadValuesAreRejected) {
  EXPECT_OUTPUT_HAS(dry_run("model:\n  name: cnn\namp: fp16\n"), "'amp' is 'fp16'; expected none or bf16");
  EXPECT_OUTPUT_HAS(dry_run("model:\n  name: resnet\n"), "'model.name' is 'resnet'; expected one of: mlp, cnn");
  EXPECT_OUTPUT_HAS(dry_run("optimizer:\n  name: adam\n"), "'model.name' is required");
  const CommandResult missing = run(tool_.string() + " train --dry-run --config " + (dir_ / "absent.yaml").string());
  EXPECT_OUTPUT_HAS(missing, "cannot open");
}

TEST_F(TrainConfigTest, CountsAndRatesOutOfRangeAreRejected) {
  const std::string cnn = "model:\n  name: cnn\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--set threads=100000", "'threads' must be in [1, 1024]"},
      {"--set threads=4294967298", "'threads' must be in [1, 1024]"},
      {"--set threads=0", "'threads' must be in [1, 1024]"},
      {"--set data.num_workers=100000", "'data.num_workers' must be in [0, 256]"},
      {"--set schedule.name=step --set schedule.gamma=-5", "'schedule.gamma' must be > 0"},
      {"--set schedule.name=onecycle --set schedule.max_lr=-1", "'schedule.max_lr' must be > 0"},
      {"--set schedule.name=cosine --set schedule.min_lr=-0.1", "'schedule.min_lr' must be >= 0"},
      {"--set optimizer.eps=-1", "'optimizer.eps' must be >= 0"},
      {"--set optimizer.betas=[1.5,0.9]", "'optimizer.betas' must both be in [0, 1)"},
      {"--set optimizer.name=sgd --set optimizer.momentum=-0.5", "'optimizer.momentum' must be >= 0"}};
  for (const auto& [args, message] : cases) {
    const CommandResult r = dry_run(cnn, args);
    EXPECT_EQ(r.status, 1) << args << ":\n" << r.output;
    EXPECT_OUTPUT_HAS(r, message);
  }
}

TEST_F(TrainConfigTest, DuplicateAndComplexKeysAreRejected) {
  const CommandResult dup = dry_run("model:\n  name: cnn\nepochs: 1\nepochs: 2\n");
  EXPECT_EQ(dup.status, 1);
  EXPECT_OUTPUT_HAS(dup, config_path() + ":4: duplicate key 'epochs' (first given on line 3)");
  const CommandResult nested = dry_run("model:\n  name: cnn\n  name: mlp\n");
  EXPECT_OUTPUT_HAS(nested, "duplicate key 'model.name'");
  const CommandResult complex = dry_run("? {a: 1}\n: x\nmodel:\n  name: cnn\n");
  EXPECT_EQ(complex.status, 1);
  EXPECT_OUTPUT_HAS(complex, "is not a plain name");
}

TEST_F(TrainConfigTest, CommandLineMistakesAreNamed) {
  const CommandResult version = run(tool_.string() + " --version");
  EXPECT_EQ(version.status, 0);
  EXPECT_OUTPUT_HAS(version, std::string("ember ") + ember::version());
  const CommandResult unknown = run(tool_.string() + " trian");
  EXPECT_NE(unknown.status, 0);
  EXPECT_OUTPUT_HAS(unknown, "unknown command 'trian' (commands: inspect, run, train, profile, launch");
  const CommandResult bare = run(tool_.string() + " train");
  EXPECT_EQ(bare.status, 1);
  EXPECT_EQ(bare.output, "ember: train: give --config FILE, or --resume CHECKPOINT\n");
  const CommandResult device = run(tool_.string() + " inspect checkpoint /dev/zero");
  EXPECT_EQ(device.status, 1);
  EXPECT_OUTPUT_HAS(device, "not a regular file");
  const CommandResult config_device = run(tool_.string() + " train --dry-run --config /dev/zero");
  EXPECT_EQ(config_device.status, 1);
  EXPECT_OUTPUT_HAS(config_device, "not a regular file");
}

TEST_F(TrainConfigTest, InspectIndentsAMultiLineConfig) {
  ember::TrainingCheckpoint ckpt;
  ckpt.states["model"]["w"] = ember::ones({2});
  ckpt.info["config"] = "model:\n  name: mlp\nepochs: 3\n";
  ckpt.info["seed"] = "0";
  const std::string path = (dir_ / "x.ckpt").string();
  ember::save_training_checkpoint(ckpt, path);
  const CommandResult r = run(tool_.string() + " inspect checkpoint " + path);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_OUTPUT_HAS(r, "    config:\n      model:\n        name: mlp\n      epochs: 3\n    seed: 0\n");
}

TEST_F(TrainConfigTest, AnOutputThatCannotBeAFolderFailsBeforeTraining) {
  std::ofstream(dir_ / "a_file") << "x";
  const std::string yaml = "model:\n  name: mlp\n";
  for (const std::string& output : {(dir_ / "a_file").string(), (dir_ / "a_file" / "sub").string(),
                                    std::string("/proc/ember_cannot_be_here"), (dir_ / std::string(5000, 'a')).string()}) {
    const fs::path config = dir_ / "config.yaml";
    std::ofstream(config) << yaml << "data:\n  path: " << (dir_ / "data").string() << "\noutput: " << output << "\n";
    const CommandResult r = run(tool_.string() + " train --config " + config.string());
    EXPECT_EQ(r.status, 1) << output.substr(0, 80) << ":\n" << r.output.substr(0, 400);
    EXPECT_TRUE(r.output.find("train: output '") != std::string::npos ||
                r.output.find("'output' is longer than 4096 characters") != std::string::npos)
        << r.output.substr(0, 400);
  }
}

TEST_F(TrainConfigTest, MissingDataFilesNameTheKeyAndTheFile) {
  const CommandResult r = dry_run("model:\n  name: cnn\n", "--set data.path=/nonexistent/fmnist");
  EXPECT_EQ(r.status, 1);
  EXPECT_OUTPUT_HAS(r, "'data.path' names a folder without /nonexistent/fmnist/train-images-idx3-ubyte");
}

}  // namespace
