// `ember train` configs: read through the real command (`ember train
// --dry-run`), since the YAML reader lives in the tool. The tool sits next to
// the tests folder of the build (build/<preset>/ember); without it the tests skip.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

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
  EXPECT_OUTPUT_HAS(missing, "cannot open the file");
}

TEST_F(TrainConfigTest, MissingDataFilesNameTheKeyAndTheFile) {
  const CommandResult r = dry_run("model:\n  name: cnn\n", "--set data.path=/nonexistent/fmnist");
  EXPECT_EQ(r.status, 1);
  EXPECT_OUTPUT_HAS(r, "'data.path' names a folder without /nonexistent/fmnist/train-images-idx3-ubyte");
}

}  // namespace
