// TensorBoard event files: CRC-32C against RFC 3720's answers and the
// bit-at-a-time definition, TFRecord framing and its checks, the hand-encoded
// Event protos byte for byte, histograms, SummaryWriter and TensorBoardLogger
// files read back. tests/tensorboard/check_events.py reads the same kind of
// files with the tensorboard Python package (ctest label tensorboard).
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "ember/data.h"
#include "ember/nn.h"
#include "ember/ops.h"
#include "ember/optim.h"
#include "ember/summary_writer.h"
#include "ember/trainer.h"
#include "profiler/tensorboard_event.h"
#include "serialize/crc32c.h"
#include "serialize/tfrecord.h"
#include "tests/test_util.h"
#include "tools/ember/train_config.h"

namespace ember {
namespace {

namespace fs = std::filesystem;
using serialize::crc32c;
using serialize::crc32c_reference;

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("ember_tensorboard_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string bytes_of(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}

TEST(Crc32c, KnownAnswers) {
  // RFC 3720, appendix B.4, and the common check value of "123456789".
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c(descending), 0x113FDB5Cu);
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c_reference("123456789", 9), 0xE3069283u);
}

TEST(Crc32c, MatchesTheBitwiseDefinitionAtEveryLengthAndAlignment) {
  std::mt19937 rng(5);
  std::vector<unsigned char> buffer(300);
  for (auto& b : buffer) b = static_cast<unsigned char>(rng());
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t n = 0; n + offset <= buffer.size(); n += 1 + n / 16) {
      ASSERT_EQ(crc32c(buffer.data() + offset, n), crc32c_reference(buffer.data() + offset, n))
          << "offset " << offset << ", " << n << " bytes";
    }
  }
}

TEST(TFRecord, FramesLengthDataAndMaskedChecksums) {
  const std::string record = serialize::frame_tfrecord("hello");
  ASSERT_EQ(record.size(), 5u + 16u);
  EXPECT_EQ(record.substr(0, 8), bytes_of({5, 0, 0, 0, 0, 0, 0, 0}));
  auto u32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(record[at + i])} << (8 * i);
    return v;
  };
  EXPECT_EQ(u32(8), serialize::mask_crc32c(crc32c_reference(record.data(), 8)));
  EXPECT_EQ(record.substr(12, 5), "hello");
  EXPECT_EQ(u32(17), serialize::mask_crc32c(crc32c_reference("hello", 5)));
  // The mask: rotate right by 15, add 0xa282ead8.
  EXPECT_EQ(serialize::mask_crc32c(0), 0xa282ead8u);
  EXPECT_EQ(serialize::mask_crc32c(0x00008000u), 1u + 0xa282ead8u);
}

TEST(TFRecord, WrittenRecordsReadBackAndCorruptionIsNamed) {
  TempDir dir("tfrecord");
  const std::string path = (dir.path / "records").string();
  const std::vector<std::string> records = {"", "a", std::string(1000, 'x'), bytes_of({0, 1, 2, 255})};
  {
    serialize::TFRecordWriter writer(path);
    for (const std::string& r : records) writer.write(r);
  }
  EXPECT_EQ(serialize::read_tfrecords(path), records);

  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto rewrite = [&](const std::string& content) { std::ofstream(path, std::ios::binary | std::ios::trunc) << content; };
  std::string flipped = bytes;
  flipped[16 + 12] ^= 1;  // the data byte of the second record ("a")
  rewrite(flipped);
  EXPECT_EMBER_ERROR(serialize::read_tfrecords(path), "record at byte 16", "data bytes does not match");
  std::string bad_length = bytes;
  bad_length[16] = 7;  // the second record's length
  rewrite(bad_length);
  EXPECT_EMBER_ERROR(serialize::read_tfrecords(path), "record at byte 16", "checksum of its length");
  rewrite(bytes.substr(0, bytes.size() - 3));
  EXPECT_EMBER_ERROR(serialize::read_tfrecords(path), "says it holds 4 bytes");
  rewrite(bytes.substr(0, 16 + 5));
  EXPECT_EMBER_ERROR(serialize::read_tfrecords(path), "cut off inside its 12-byte header");
}

TEST(TensorBoardEvent, ScalarEventBytes) {
  // Event{wall_time: 0, step: 3, summary: Summary{value: [Value{tag: "a", simple_value: 1}]}}
  const std::string expected = bytes_of({0x09, 0, 0, 0, 0, 0, 0, 0, 0,         // 1: wall_time, fixed64
                                         0x10, 0x03,                           // 2: step, varint
                                         0x2A, 10,                             // 5: summary, 10 bytes
                                         0x0A, 8,                              //   1: value, 8 bytes
                                         0x0A, 1, 'a',                         //     1: tag
                                         0x15, 0x00, 0x00, 0x80, 0x3F});       //     2: simple_value, fixed32
  EXPECT_EQ(tensorboard::scalar_event(0.0, 3, "a", 1.0f), expected);
}

TEST(TensorBoardEvent, FileVersionAndVarints) {
  const std::string v = tensorboard::file_version_event(0.0);
  EXPECT_EQ(v.substr(9), bytes_of({0x1A, 13}) + "brain.Event:2");
  tensorboard::ProtoWriter w;
  w.varint_field(2, 300);                      // 300 = 0b10'0101100: 0xAC 0x02
  w.varint_field(2, static_cast<uint64_t>(-1));  // a negative int64 takes ten bytes
  EXPECT_EQ(w.bytes(), bytes_of({0x10, 0xAC, 0x02, 0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
}

TEST(TensorBoardEvent, HistogramBuckets) {
  const std::vector<double> values = {0, 1, 2, 3, 4};
  const tensorboard::Histogram h = tensorboard::make_histogram(values.data(), values.size(), 4);
  EXPECT_EQ(h.min, 0);
  EXPECT_EQ(h.max, 4);
  EXPECT_EQ(h.num, 5);
  EXPECT_EQ(h.sum, 10);
  EXPECT_EQ(h.sum_squares, 30);
  EXPECT_EQ(h.bucket_limit, (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(h.bucket, (std::vector<double>{2, 1, 1, 1}));  // (-inf, 1], (1, 2], (2, 3], (3, 4]
  const std::vector<double> same = {2.5, 2.5};
  const tensorboard::Histogram one = tensorboard::make_histogram(same.data(), same.size(), 30);
  EXPECT_EQ(one.bucket_limit, (std::vector<double>{2.5}));
  EXPECT_EQ(one.bucket, (std::vector<double>{2}));
  const std::vector<double> nan = {1, std::nan("")};
  EXPECT_EMBER_ERROR(tensorboard::make_histogram(nan.data(), nan.size(), 3), "value 1 of 2", "finite");
}

TEST(SummaryWriter, WritesTheFileVersionThenOneRecordPerCall) {
  TempDir dir("writer");
  std::string file;
  {
    SummaryWriter writer((dir.path / "logs").string());
    file = writer.file_path();
    writer.add_scalar("loss", 0.5, 1, 100.0);
    writer.add_scalar("loss", 0.25, 2, 101.0);
    writer.add_histogram("w", arange(10, kFloat32), 2);
    // Handed to the OS at once: readable before the writer closes.
    EXPECT_EQ(serialize::read_tfrecords(file).size(), 4u);
  }
  EXPECT_NE(fs::path(file).filename().string().find("events.out.tfevents."), std::string::npos);
  const std::vector<std::string> records = serialize::read_tfrecords(file);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_NE(records[0].find("brain.Event:2"), std::string::npos);
  EXPECT_EQ(records[1], tensorboard::scalar_event(100.0, 1, "loss", 0.5f));
  EXPECT_EQ(records[2], tensorboard::scalar_event(101.0, 2, "loss", 0.25f));
  EXPECT_NE(records[3].find("w"), std::string::npos);
  EXPECT_EMBER_ERROR(SummaryWriter((dir.path / "logs").string()).add_scalar("", 1, 0), "tag is empty");
}

TEST(TensorBoardLogger, LogsTrainAndEpochTagsAtTheOptimiserStep) {
  TempDir dir("logger");
  manual_seed(0);
  Generator g(7);
  Tensor x = randn({32, 4}, {}, &g);
  Tensor y = (x.narrow(1, 0, 1).squeeze(1) > 0).to(kInt64);
  data::DataLoader loader(std::make_shared<data::TensorDataset>(x, y), {.batch_size = 8});
  data::DataLoader test(std::make_shared<data::TensorDataset>(x, y), {.batch_size = 16});
  nn::Sequential model(nn::Linear(4, 2));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  auto logger = std::make_shared<TensorBoardLogger>((dir.path / "tb").string(), 2, model.ptr());
  TrainerOptions options;
  options.epochs = 2;
  options.callbacks = {logger};
  Trainer trainer(options);
  trainer.fit(model, opt, nullptr, loader, &test);

  const std::vector<std::string> records = serialize::read_tfrecords(logger->file_path());
  // Per epoch: 2 points of 4 train scalars, 6 epoch scalars, 2 histograms.
  ASSERT_EQ(records.size(), 1u + 2 * (2 * 4 + 6 + 2));
  auto count = [&](const std::string& tag) {
    int n = 0;
    for (const std::string& r : records) n += r.find(tag) != std::string::npos;
    return n;
  };
  EXPECT_EQ(count("train/loss"), 4);
  EXPECT_EQ(count("train/samples_per_second"), 4);
  EXPECT_EQ(count("epoch/test_acc"), 2);
  EXPECT_EQ(count("parameters/0.weight"), 2);
  EXPECT_EQ(count("parameters/0.bias"), 2);
}

TEST(TrainConfigTensorBoard, TrueMeansTheOutputsTensorboardFolder) {
  TempDir dir("config");
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"}) {
    std::ofstream(dir.path / name).put('\0');  // the config check asks only that they exist
  }
  const std::string yaml = "model:\n  name: mlp\ndata:\n  path: " + dir.path.string() + "\noutput: out/run\n";
  auto folder = [&](const std::vector<std::string>& overrides) {
    return cli::parse_train_config(yaml, "test.yaml", overrides).tensorboard;
  };
  EXPECT_EQ(folder({}), "");
  EXPECT_EQ(folder({"tensorboard=true"}), "out/run/tensorboard");
  EXPECT_EQ(folder({"tensorboard=True"}), "out/run/tensorboard");
  EXPECT_EQ(folder({"tensorboard=false"}), "");
  EXPECT_EQ(folder({"tensorboard=logs/tb"}), "logs/tb");
  EXPECT_EMBER_ERROR(folder({"tensorboard=[1, 2]"}), "'tensorboard' must be a string");
}

}  // namespace
}  // namespace ember
