// Reading IDX files, the format of MNIST and Fashion-MNIST:
//
//   Tensor images = load_idx("train-images-idx3-ubyte.gz");   // [60000, 28, 28] uint8
//   auto train = std::make_shared<IdxDataset>(mnist_files(kFashionMnistDir, /*train=*/true));
//
// Note [IDX format]
//   bytes 0..2   zero
//   byte 2       element type: 0x08 uint8, 0x0C int32, 0x0D float32,
//                0x0E float64 (0x09 int8 and 0x0B int16 exist but ember has
//                no such dtype, so they are rejected)
//   byte 3       number of dims, D
//   next 4*D     each dim's size, unsigned 32-bit big-endian
//   then         the elements, row-major, big-endian
// A file whose bytes start with the gzip magic (1f 8b) is inflated first,
// whatever its name. The file is untrusted: the magic, the dims and the data
// length are checked against each other before anything is allocated beyond
// what the file can hold, and any problem (bad magic, truncation, trailing
// bytes, a broken gzip stream) is an ember::Error naming the file.
#pragma once

#include <string>

#include "ember/data/dataset.h"
#include "ember/serialize.h"

namespace ember::data {

// Where Debian's dataset-fashion-mnist package puts the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// The whole file as a tensor of its element type, shaped by its dims.
Tensor load_idx(const std::string& path);

struct IdxFiles {
  std::string images;
  std::string labels;
};

// The MNIST file names in `dir` for the train or the test (t10k) split; each
// is the .gz file if present, else the uncompressed one. Does not check that
// the files exist (the reader names a missing one).
IdxFiles mnist_files(const std::string& dir, bool train);

// Images [N, H, W] uint8 and their labels; sample i is (images[i], label i
// as an int64 scalar). With `cache_path`, the decoded tensors are kept in a
// dataset cache (<ember/data/cache.h>) there, so later runs map them instead
// of inflating and parsing again.
class IdxDataset : public TensorDataset {
 public:
  explicit IdxDataset(const IdxFiles& files, const std::string& cache_path = "");
  IdxDataset(const std::string& images_path, const std::string& labels_path, const std::string& cache_path = "")
      : IdxDataset(IdxFiles{images_path, labels_path}, cache_path) {}

 private:
  explicit IdxDataset(const TensorDict& decoded);  // {"images", "labels"}
};

}  // namespace ember::data
