// save_safetensors / load_safetensors: tensors survive a round trip bit for
// bit, whatever their dtype, layout or shape, and a damaged file is an
// ember::Error that names the file.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "tests/test_util.h"

namespace ember {
namespace {

using ember::testing::values;

// A fresh directory per test, removed with its files afterwards.
class Serialize : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "ember_serialize_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const std::string& f : files()) ::unlink((dir_ + "/" + f).c_str());
    ::rmdir(dir_.c_str());
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    if (DIR* d = ::opendir(dir_.c_str())) {
      while (dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.push_back(e->d_name);
      ::closedir(d);
    }
    return out;
  }
  static std::vector<char> read_bytes(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(f), {});
  }
  static void write_bytes(const std::string& p, const std::vector<char>& b) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(b.data(), static_cast<std::streamsize>(b.size()));
  }

  std::string dir_;
};

// The raw bytes of a tensor's elements in row-major order.
std::vector<uint8_t> raw_bytes(const Tensor& t) {
  Tensor c = t.cpu().contiguous();
  const auto* p = static_cast<const uint8_t*>(c.data_ptr());
  return std::vector<uint8_t>(p, p + c.nbytes());
}

void expect_same_tensor(const Tensor& loaded, const Tensor& original) {
  EXPECT_EQ(loaded.dtype(), original.dtype());
  EXPECT_EQ(loaded.sizes(), original.sizes());
  EXPECT_TRUE(loaded.device().is_cpu());
  EXPECT_TRUE(loaded.is_contiguous());
  EXPECT_EQ(raw_bytes(loaded), raw_bytes(original));
}

TEST_F(Serialize, RoundTripsEveryDTypeBitForBit) {
  const Tensor f32 = tensor({1.5f, -0.0f, NAN, INFINITY, -3e38f, 1e-45f});
  TensorDict in = {
      {"f32", f32.view({2, 3})},
      {"f64", tensor({0.1, -1e308, 4.9e-324, -0.0})},
      {"f16", f32.to(kFloat16)},
      {"bf16", f32.to(kBFloat16)},
      {"i32", tensor({-2147483647 - 1, 0, 2147483647}, kInt32)},
      {"i64", tensor({int64_t{-1234567890123456789}, int64_t{42}})},
      {"u8", tensor({0, 1, 254, 255}, kUInt8)},
      {"bool", tensor({true, false, true})},
  };
  save_safetensors(in, path("all.safetensors"));
  SafetensorsFile out = load_safetensors(path("all.safetensors"));
  ASSERT_EQ(out.tensors.size(), in.size());
  EXPECT_TRUE(out.metadata.empty());
  for (const auto& [name, t] : in) {
    SCOPED_TRACE(name);
    ASSERT_EQ(out.tensors.count(name), 1u);
    expect_same_tensor(out.tensors.at(name), t);
  }
}

TEST_F(Serialize, NonContiguousTensorsAreSavedInLogicalOrder) {
  const Tensor base = arange(24.0).reshape({2, 3, 4});
  TensorDict in = {
      {"transposed", base.transpose(0, 2)},                     // (4, 3, 2)
      {"sliced", base.slice(2, 1, 4, 2)},                        // (2, 3, 2), step 2
      {"expanded", tensor({7, 8}, kInt32).unsqueeze(0).expand({3, 2})},  // stride 0
      {"offset", base.select(0, 1).narrow(0, 1, 2)},             // storage offset 16
  };
  for (const auto& [name, t] : in) ASSERT_FALSE(t.is_contiguous() && t.storage_offset() == 0) << name;
  save_safetensors(in, path("views.safetensors"));
  SafetensorsFile out = load_safetensors(path("views.safetensors"));
  for (const auto& [name, t] : in) {
    SCOPED_TRACE(name);
    expect_same_tensor(out.tensors.at(name), t);
  }
  EXPECT_EQ(values(out.tensors.at("transposed").select(0, 1).select(0, 2)), (std::vector<double>{9, 21}));
  EXPECT_EQ(values(out.tensors.at("expanded")), (std::vector<double>{7, 8, 7, 8, 7, 8}));
}

TEST_F(Serialize, ZeroDimAndEmptyTensors) {
  TensorDict in = {
      {"scalar_f64", scalar_tensor(2.5, kFloat64)},
      {"scalar_bool", scalar_tensor(true)},
      {"empty_1d", zeros({0}, kFloat32)},
      {"empty_2d_i64", zeros({3, 0}, kInt64)},
      {"empty_3d_bool", zeros({0, 2, 5}, kBool)},
  };
  save_safetensors(in, path("shapes.safetensors"));
  SafetensorsFile out = load_safetensors(path("shapes.safetensors"));
  for (const auto& [name, t] : in) {
    SCOPED_TRACE(name);
    expect_same_tensor(out.tensors.at(name), t);
  }
  EXPECT_EQ(out.tensors.at("scalar_f64").dim(), 0);
  EXPECT_EQ(out.tensors.at("scalar_f64").item<double>(), 2.5);
  EXPECT_EQ(out.tensors.at("empty_3d_bool").numel(), 0);
}

TEST_F(Serialize, MetadataRoundTrips) {
  const std::map<std::string, std::string> meta = {
      {"format", "pt"}, {"note", "quotes \" and \\ and a\nnewline"}, {"utf8", "\xc3\xa9\xe2\x82\xac"}, {"", ""}};
  save_safetensors({{"w", ones({2}, kFloat32)}}, path("meta.safetensors"), meta);
  SafetensorsFile out = load_safetensors(path("meta.safetensors"));
  EXPECT_EQ(out.metadata, meta);
  EXPECT_EQ(values(out.tensors.at("w")), (std::vector<double>{1, 1}));

  save_safetensors({}, path("nothing.safetensors"), {{"only", "metadata"}});
  out = load_safetensors(path("nothing.safetensors"));
  EXPECT_TRUE(out.tensors.empty());
  EXPECT_EQ(out.metadata.at("only"), "metadata");
}

TEST_F(Serialize, LoadedTensorsOwnTheirMemory) {
  save_safetensors({{"a", tensor({1.f, 2.f})}, {"b", tensor({3.f})}}, path("own.safetensors"));
  SafetensorsFile out = load_safetensors(path("own.safetensors"));
  ASSERT_EQ(::unlink(path("own.safetensors").c_str()), 0);
  Tensor a = out.tensors.at("a");
  Tensor b = out.tensors.at("b");
  EXPECT_NE(a.impl()->storage().get(), b.impl()->storage().get());
  a.fill_(9);
  EXPECT_EQ(values(a), (std::vector<double>{9, 9}));
  EXPECT_EQ(values(b), (std::vector<double>{3}));
}

TEST_F(Serialize, SavingReplacesTheFileAndLeavesNoTemporaryBehind) {
  save_safetensors({{"x", ones({3})}}, path("m.safetensors"));
  save_safetensors({{"y", zeros({2}, kInt32)}}, path("m.safetensors"));
  SafetensorsFile out = load_safetensors(path("m.safetensors"));
  ASSERT_EQ(out.tensors.size(), 1u);
  EXPECT_EQ(out.tensors.at("y").dtype(), kInt32);
  EXPECT_EQ(files(), (std::vector<std::string>{"m.safetensors"}));
}

TEST_F(Serialize, TruncatedFileNamesTheFile) {
  save_safetensors({{"weight", arange(64.0)}}, path("t.safetensors"));
  std::vector<char> bytes = read_bytes(path("t.safetensors"));
  for (size_t keep : {size_t{0}, size_t{5}, size_t{20}, bytes.size() - 1}) {
    SCOPED_TRACE(keep);
    write_bytes(path("cut.safetensors"), std::vector<char>(bytes.begin(), bytes.begin() + static_cast<long>(keep)));
    EXPECT_EMBER_ERROR(load_safetensors(path("cut.safetensors")), "load_safetensors(", "cut.safetensors");
  }
  // Cut inside the data: the tensor's byte range runs past the end.
  write_bytes(path("cut.safetensors"), std::vector<char>(bytes.begin(), bytes.end() - 8));
  EXPECT_EMBER_ERROR(load_safetensors(path("cut.safetensors")), "cut.safetensors", "weight");
}

TEST_F(Serialize, CorruptHeaderNamesTheFile) {
  save_safetensors({{"weight", arange(4.0)}}, path("c.safetensors"));
  std::vector<char> bytes = read_bytes(path("c.safetensors"));
  std::vector<char> bad = bytes;
  bad[8] = '[';  // the header must be a JSON object
  write_bytes(path("c.safetensors"), bad);
  EXPECT_EMBER_ERROR(load_safetensors(path("c.safetensors")), "load_safetensors(", "c.safetensors");

  bad = bytes;
  const std::string header(bytes.begin() + 8, bytes.end());
  const size_t at = header.find("F32");
  ASSERT_NE(at, std::string::npos);
  bad[8 + at] = 'X';  // an unknown dtype
  write_bytes(path("c.safetensors"), bad);
  EXPECT_EMBER_ERROR(load_safetensors(path("c.safetensors")), "c.safetensors", "weight", "dtype");

  bad = bytes;
  bad[0] = static_cast<char>(0xff);  // a header length past the end of the file
  write_bytes(path("c.safetensors"), bad);
  EXPECT_EMBER_ERROR(load_safetensors(path("c.safetensors")), "c.safetensors");
}

TEST_F(Serialize, BoolBytesOtherThanZeroOrOneAreRejected) {
  save_safetensors({{"mask", tensor({true, false, true})}}, path("b.safetensors"));
  std::vector<char> bytes = read_bytes(path("b.safetensors"));
  bytes[bytes.size() - 2] = 2;  // the middle element
  write_bytes(path("b.safetensors"), bytes);
  EXPECT_EMBER_ERROR(load_safetensors(path("b.safetensors")), "b.safetensors", "mask", "byte value 2");
}

TEST_F(Serialize, MissingFileNamesTheFile) {
  EXPECT_EMBER_ERROR(load_safetensors(path("absent.safetensors")), "absent.safetensors");
}

TEST_F(Serialize, BadInputsToSaveNameTheFile) {
  EXPECT_EMBER_ERROR(save_safetensors({{"w", Tensor()}}, path("u.safetensors")), "save_safetensors(",
                     "u.safetensors", "'w'", "undefined");
  EXPECT_EMBER_ERROR(save_safetensors({{"__metadata__", ones({1})}}, path("m.safetensors")),
                     "save_safetensors(", "m.safetensors", "__metadata__");
  EXPECT_EMBER_ERROR(save_safetensors({{"w", ones({1})}}, path("no_such_dir/w.safetensors")),
                     "no_such_dir/w.safetensors");
  EXPECT_TRUE(files().empty());
}

// ember::save / ember::load: name -> tensor maps, as a safetensors file.
TEST_F(Serialize, SaveAndLoadNameToTensorMaps) {
  const TensorDict tensors = {{"weight", randn({3, 4})}, {"steps", full({}, 7, kInt64)}};
  save(tensors, path("state.safetensors"));
  EXPECT_EQ(files(), std::vector<std::string>{"state.safetensors"});  // written atomically, no leftovers
  const TensorDict back = load(path("state.safetensors"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(values(back.at("weight")), values(tensors.at("weight")));
  EXPECT_EQ(back.at("steps").dtype(), kInt64);
  EXPECT_EQ(load_safetensors(path("state.safetensors")).tensors.size(), 2u);  // the same format
  EXPECT_EMBER_ERROR(load(path("missing.safetensors")), "missing.safetensors");
}

}  // namespace
}  // namespace ember
