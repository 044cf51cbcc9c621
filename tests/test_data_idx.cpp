// The IDX reader (raw and gzip), its errors on damaged files, IdxDataset, and
// the real Fashion-MNIST test split when Debian's package is installed.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "ember/data.h"
#include "tests/test_data_util.h"
#include "tests/test_util.h"

namespace ember::data {
namespace {

using ember::testing::read_bytes;
using ember::testing::same_bits;
using ember::testing::ScratchDir;
using ember::testing::values;
using ember::testing::write_bytes;

std::vector<uint8_t> idx_bytes(uint8_t type, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(d >> shift));
  }
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

uint32_t crc32(const std::vector<uint8_t>& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// A gzip file holding `bytes` in "stored" (uncompressed) deflate blocks:
// written by hand, so the test needs no compressor, but read by zlib as any gzip file.
std::vector<uint8_t> gzip_stored(const std::vector<uint8_t>& bytes) {
  std::vector<uint8_t> out = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
  size_t pos = 0;
  do {
    const size_t n = std::min<size_t>(bytes.size() - pos, 65535);
    const bool last = pos + n == bytes.size();
    out.push_back(last ? 1 : 0);
    out.push_back(static_cast<uint8_t>(n));
    out.push_back(static_cast<uint8_t>(n >> 8));
    out.push_back(static_cast<uint8_t>(~n));
    out.push_back(static_cast<uint8_t>(~n >> 8));
    out.insert(out.end(), bytes.begin() + static_cast<std::ptrdiff_t>(pos),
               bytes.begin() + static_cast<std::ptrdiff_t>(pos + n));
    pos += n;
  } while (pos < bytes.size());
  const uint32_t crc = crc32(bytes), size = static_cast<uint32_t>(bytes.size());
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<uint8_t>(crc >> shift));
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<uint8_t>(size >> shift));
  return out;
}

std::vector<uint8_t> counting_payload(size_t n) {
  std::vector<uint8_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i * 7);
  return p;
}

TEST(DataIdx, ReadsRawUint8Images) {
  ScratchDir dir;
  write_bytes(dir.path("images"), idx_bytes(0x08, {3, 2, 4}, counting_payload(24)));
  Tensor t = load_idx(dir.path("images"));
  EXPECT_EQ(t.dtype(), kUInt8);
  EXPECT_EQ(t.sizes(), IntArrayRef({3, 2, 4}));
  const std::vector<double> v = values(t);
  for (size_t i = 0; i < 24; ++i) EXPECT_EQ(v[i], static_cast<uint8_t>(i * 7)) << i;
}

TEST(DataIdx, ReadsGzipFilesWhateverTheirName) {
  ScratchDir dir;
  // Large enough for several stored blocks.
  const std::vector<uint8_t> raw = idx_bytes(0x08, {200, 20, 20}, counting_payload(80000));
  write_bytes(dir.path("raw"), raw);
  write_bytes(dir.path("packed.gz"), gzip_stored(raw));
  write_bytes(dir.path("packed_without_suffix"), gzip_stored(raw));
  const Tensor expected = load_idx(dir.path("raw"));
  EXPECT_TRUE(same_bits(load_idx(dir.path("packed.gz")), expected));
  EXPECT_TRUE(same_bits(load_idx(dir.path("packed_without_suffix")), expected));
}

TEST(DataIdx, ReadsBigEndianWideTypes) {
  ScratchDir dir;
  // int32 {1, -2} and float32 {1.5, -0.25}, big-endian.
  write_bytes(dir.path("i32"), idx_bytes(0x0C, {2}, {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe}));
  write_bytes(dir.path("f32"), idx_bytes(0x0D, {2}, {0x3f, 0xc0, 0, 0, 0xbe, 0x80, 0, 0}));
  Tensor i = load_idx(dir.path("i32")), f = load_idx(dir.path("f32"));
  EXPECT_EQ(i.dtype(), kInt32);
  EXPECT_EQ(values(i), (std::vector<double>{1, -2}));
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(values(f), (std::vector<double>{1.5, -0.25}));
}

TEST(DataIdx, RejectsDamagedFilesNamingThem) {
  ScratchDir dir;
  const std::vector<uint8_t> good = idx_bytes(0x08, {4, 3}, counting_payload(12));
  auto expect_error = [&](const std::string& name, const std::vector<uint8_t>& bytes, const char* what) {
    write_bytes(dir.path(name), bytes);
    EXPECT_EMBER_ERROR(load_idx(dir.path(name)), "load_idx", name.c_str(), what);
  };
  std::vector<uint8_t> bad_magic = good;
  bad_magic[0] = 0x42;
  expect_error("bad_magic", bad_magic, "bad magic");
  std::vector<uint8_t> bad_type = good;
  bad_type[2] = 0x07;
  expect_error("bad_type", bad_type, "unknown element type");
  std::vector<uint8_t> int16 = good;
  int16[2] = 0x0B;
  expect_error("int16", int16, "no ember dtype");
  expect_error("truncated", std::vector<uint8_t>(good.begin(), good.end() - 1), "truncated");
  expect_error("truncated_dims", std::vector<uint8_t>(good.begin(), good.begin() + 6), "truncated");
  std::vector<uint8_t> trailing = good;
  trailing.push_back(0);
  expect_error("trailing", trailing, "unexpected bytes");
  // Dims that claim far more data than the file has: rejected before allocating.
  expect_error("huge", idx_bytes(0x08, {0xFFFFFFFF, 0xFFFFFFFF}, {1, 2, 3}), "truncated");
  expect_error("empty", {}, "shorter than the 4-byte IDX magic");
  EXPECT_EMBER_ERROR(load_idx(dir.path("missing")), "load_idx", "missing", "cannot open");
}

TEST(DataIdx, RejectsDamagedGzipStreams) {
  ScratchDir dir;
  const std::vector<uint8_t> packed = gzip_stored(idx_bytes(0x08, {10, 10}, counting_payload(100)));
  write_bytes(dir.path("cut.gz"), std::vector<uint8_t>(packed.begin(), packed.end() - 20));
  EXPECT_EMBER_ERROR(load_idx(dir.path("cut.gz")), "load_idx", "cut.gz", "truncated");
  std::vector<uint8_t> bad_crc = packed;
  bad_crc[bad_crc.size() - 5] ^= 0xff;
  write_bytes(dir.path("crc.gz"), bad_crc);
  EXPECT_EMBER_ERROR(load_idx(dir.path("crc.gz")), "load_idx", "crc.gz", "corrupt gzip data");
}

TEST(DataIdx, IdxDatasetPairsImagesWithInt64Labels) {
  ScratchDir dir;
  write_bytes(dir.path("img"), idx_bytes(0x08, {3, 2, 2}, counting_payload(12)));
  write_bytes(dir.path("lbl"), idx_bytes(0x08, {3}, {7, 0, 9}));
  IdxDataset ds(dir.path("img"), dir.path("lbl"));
  EXPECT_EQ(ds.size(), 3u);
  Example e = ds.get(2);
  EXPECT_EQ(e.data.sizes(), IntArrayRef({2, 2}));
  EXPECT_EQ(e.target.dtype(), kInt64);
  EXPECT_EQ(e.target.item<int64_t>(), 9);
  EXPECT_TRUE(same_bits(e.data, load_idx(dir.path("img"))[2]));

  write_bytes(dir.path("lbl4"), idx_bytes(0x08, {4}, {1, 2, 3, 4}));
  EXPECT_EMBER_ERROR(IdxDataset(dir.path("img"), dir.path("lbl4")), "IdxDataset", "one label per image");
}

TEST(DataIdx, IdxDatasetThroughACacheServesTheSameSamples) {
  ScratchDir dir;
  write_bytes(dir.path("img.gz"), gzip_stored(idx_bytes(0x08, {5, 3, 3}, counting_payload(45))));
  write_bytes(dir.path("lbl"), idx_bytes(0x08, {5}, {1, 2, 3, 4, 5}));
  IdxDataset direct(dir.path("img.gz"), dir.path("lbl"));
  IdxDataset first(dir.path("img.gz"), dir.path("lbl"), dir.path("cache"));
  IdxDataset second(dir.path("img.gz"), dir.path("lbl"), dir.path("cache"));
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(same_bits(first.get(i).data, direct.get(i).data));
    EXPECT_TRUE(same_bits(second.get(i).data, direct.get(i).data));
    EXPECT_TRUE(same_bits(second.get(i).target, direct.get(i).target));
  }
}

TEST(DataIdx, MnistFilesPrefersGzip) {
  ScratchDir dir;
  write_bytes(dir.path("train-images-idx3-ubyte.gz"), {});
  write_bytes(dir.path("train-labels-idx1-ubyte"), {});
  IdxFiles f = mnist_files(dir.path(""), /*train=*/true);
  EXPECT_NE(f.images.find("train-images-idx3-ubyte.gz"), std::string::npos);
  EXPECT_NE(f.labels.find("train-labels-idx1-ubyte"), std::string::npos);
  EXPECT_EQ(f.labels.find(".gz"), std::string::npos);
  EXPECT_NE(mnist_files("/x", false).images.find("/x/t10k-images-idx3-ubyte"), std::string::npos);
}

TEST(DataIdx, FashionMnistTestSplit) {
  const IdxFiles files = mnist_files(kFashionMnistDir, /*train=*/false);
  struct stat st;
  if (::stat(files.images.c_str(), &st) != 0) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  IdxDataset test(files);
  ASSERT_EQ(test.size(), 10000u);
  EXPECT_EQ(test.data().sizes(), IntArrayRef({10000, 28, 28}));
  EXPECT_EQ(test.data().dtype(), kUInt8);
  EXPECT_EQ(test.targets().min().item<int64_t>(), 0);
  EXPECT_EQ(test.targets().max().item<int64_t>(), 9);
  // The classes are balanced: 1000 images each.
  EXPECT_EQ(test.targets().eq(3).sum().item<int64_t>(), 1000);
}

}  // namespace
}  // namespace ember::data
