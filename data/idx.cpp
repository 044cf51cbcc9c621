// The IDX reader and IdxDataset (<ember/data/idx.h>; Note [IDX format]).
#include "ember/data/idx.h"

#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "ember/data/cache.h"
#include "ember/error.h"
#include "ember/ops.h"
#include "data/byte_stream.h"

namespace ember::data {
namespace {

uint32_t big_endian_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 |
         p[3];
}

DType idx_dtype(uint8_t code, const std::string& path) {
  switch (code) {
    case 0x08: return kUInt8;
    case 0x0C: return kInt32;
    case 0x0D: return kFloat32;
    case 0x0E: return kFloat64;
    case 0x09:
    case 0x0B:
      EMBER_FAIL("load_idx(", path, "): element type 0x0", std::hex, int{code},
                 " (int8/int16) has no ember dtype; supported: 0x08 uint8, 0x0C int32, 0x0D float32, 0x0E float64");
    default:
      EMBER_FAIL("load_idx(", path, "): unknown element type 0x", std::hex, int{code},
                 " in the magic (expected 0x08, 0x0C, 0x0D or 0x0E): not an IDX file?");
  }
}

// Big-endian elements to the machine's (little-endian) order, in place.
void swap_bytes(uint8_t* data, size_t count, size_t width) {
  for (size_t i = 0; i < count; ++i) std::reverse(data + i * width, data + (i + 1) * width);
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

Tensor load_idx(const std::string& path) {
  std::unique_ptr<detail::ByteStream> in = detail::open_byte_stream(path, "load_idx");
  uint8_t magic[4];
  EMBER_CHECK(in->read(magic, 4) == 4, "load_idx(", path, "): the file is shorter than the 4-byte IDX magic");
  EMBER_CHECK(magic[0] == 0 && magic[1] == 0, "load_idx(", path, "): bad magic (first two bytes must be 0, got ",
              int{magic[0]}, " ", int{magic[1]}, "): not an IDX file");
  const DType dtype = idx_dtype(magic[2], path);
  const int dims = magic[3];
  EMBER_CHECK(dims >= 1, "load_idx(", path, "): the magic says 0 dims");

  std::vector<uint8_t> dim_bytes(static_cast<size_t>(dims) * 4);
  EMBER_CHECK(in->read(dim_bytes.data(), dim_bytes.size()) == dim_bytes.size(), "load_idx(", path,
              "): truncated: the file ends inside the ", dims, " dim sizes");
  std::vector<int64_t> shape(static_cast<size_t>(dims));
  const size_t width = element_size(dtype);
  uint64_t payload = width;
  for (int d = 0; d < dims; ++d) {
    shape[static_cast<size_t>(d)] = big_endian_u32(dim_bytes.data() + 4 * d);
    const auto size = static_cast<uint64_t>(shape[static_cast<size_t>(d)]);
    EMBER_CHECK(size == 0 || payload <= std::numeric_limits<uint64_t>::max() / size, "load_idx(", path,
                "): the dims ", IntArrayRef(shape.data(), static_cast<size_t>(d + 1)), " overflow 64 bits");
    payload *= size;
  }
  EMBER_CHECK(payload <= in->max_remaining(), "load_idx(", path, "): truncated: the dims ", IntArrayRef(shape),
              " of ", dtype, " need ", payload, " bytes of data but the file can hold at most ",
              in->max_remaining());

  Tensor out = empty(shape, dtype);
  auto* data = static_cast<uint8_t*>(out.data_ptr());
  const size_t got = in->read(data, payload);
  EMBER_CHECK(got == payload, "load_idx(", path, "): truncated: the dims ", IntArrayRef(shape), " of ", dtype,
              " need ", payload, " bytes of data, the file holds ", got);
  uint8_t extra;
  EMBER_CHECK(in->read(&extra, 1) == 0, "load_idx(", path, "): unexpected bytes after the ", payload,
              " bytes of data that the dims ", IntArrayRef(shape), " call for");
  if (width > 1) swap_bytes(data, payload / width, width);
  return out;
}

IdxFiles mnist_files(const std::string& dir, bool train) {
  const std::string prefix = dir + "/" + (train ? "train" : "t10k");
  auto pick = [](const std::string& raw) { return file_exists(raw + ".gz") ? raw + ".gz" : raw; };
  return IdxFiles{pick(prefix + "-images-idx3-ubyte"), pick(prefix + "-labels-idx1-ubyte")};
}

namespace {

TensorDict decode_idx_pair(const IdxFiles& files) {
  Tensor images = load_idx(files.images);
  Tensor labels = load_idx(files.labels);
  EMBER_CHECK(images.dim() == 3, "IdxDataset: ", files.images, " holds ", images.sizes(),
              "; expected images [N, H, W]");
  EMBER_CHECK(labels.dim() == 1 && labels.size(0) == images.size(0), "IdxDataset: ", files.labels, " holds ",
              labels.sizes(), "; expected one label per image of ", files.images, " (", images.size(0), ")");
  EMBER_CHECK(is_integral(labels.dtype()), "IdxDataset: ", files.labels, " holds ", labels.dtype(),
              " labels; expected integers");
  return {{"images", images}, {"labels", labels.to(kInt64)}};
}

}  // namespace

IdxDataset::IdxDataset(const IdxFiles& files, const std::string& cache_path)
    : IdxDataset(cache_path.empty() ? decode_idx_pair(files)
                                    : open_dataset_cache(cache_path, file_fingerprint({files.images, files.labels}),
                                                         [&] { return decode_idx_pair(files); })
                                          .tensors) {}

namespace {
const Tensor& entry(const TensorDict& decoded, const char* key) {
  auto it = decoded.find(key);
  EMBER_CHECK(it != decoded.end(), "IdxDataset: the dataset cache has no '", key, "' tensor");
  return it->second;
}
}  // namespace

IdxDataset::IdxDataset(const TensorDict& decoded)
    : TensorDataset(entry(decoded, "images"), entry(decoded, "labels")) {}

}  // namespace ember::data
