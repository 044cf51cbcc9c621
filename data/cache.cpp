// The dataset cache (<ember/data/cache.h>; Note [dataset cache format]).
#include "ember/data/cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>

#include "ember/error.h"
#include "ember/ops.h"
#include "serialize/safetensors_format.h"

namespace ember::data {
namespace {

static_assert(std::endian::native == std::endian::little, "the cache format is little-endian, as the host must be");

constexpr char kMagic[8] = {'E', 'M', 'B', 'E', 'R', 'D', 'S', 'C'};
constexpr uint32_t kVersion = 1;
constexpr uint64_t kDataAlignment = 64;
constexpr size_t kMaxDims = 64;

uint64_t fnv1a64(const uint8_t* data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) h = (h ^ data[i]) * 0x100000001b3ULL;
  return h;
}

uint64_t align_up(uint64_t n) { return (n + kDataAlignment - 1) / kDataAlignment * kDataAlignment; }

void put_bytes(std::vector<uint8_t>& out, const void* data, size_t n) {
  const size_t at = out.size();
  out.resize(at + n);
  if (n > 0) std::memcpy(out.data() + at, data, n);
}

template <class T>
void put(std::vector<uint8_t>& out, T value) {
  put_bytes(out, &value, sizeof value);
}

void put_string(std::vector<uint8_t>& out, const std::string& s) {
  put(out, static_cast<uint32_t>(s.size()));
  put_bytes(out, s.data(), s.size());
}

// Reads header fields in order; any read past the header's end is an error naming the file.
class HeaderReader {
 public:
  HeaderReader(const uint8_t* data, size_t size, const std::string& path) : data_(data), size_(size), path_(path) {}
  template <class T>
  T get(const char* what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, data_ + pos_, sizeof value);
    pos_ += sizeof value;
    return value;
  }
  std::string get_string(const char* what) {
    const uint32_t n = get<uint32_t>(what);
    need(n, what);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  size_t pos() const { return pos_; }

 private:
  void need(size_t n, const char* what) {
    EMBER_CHECK(n <= size_ - pos_, "dataset cache ", path_, ": corrupt header: ", what, " runs past the header's ",
                size_, " bytes");
  }
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& path_;
};

// A private, copy-on-write mapping of a whole file; unmapped when the last tensor over it dies.
struct Mapping {
  void* addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr) ::munmap(addr, size);
  }
};

std::shared_ptr<Mapping> map_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EMBER_CHECK(fd >= 0, "dataset cache ", path, ": cannot open: ", std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    EMBER_FAIL("dataset cache ", path, ": cannot stat: ", std::strerror(err));
  }
  auto mapping = std::make_shared<Mapping>();
  mapping->size = static_cast<size_t>(st.st_size);
  if (mapping->size > 0) {
    void* addr = ::mmap(nullptr, mapping->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    EMBER_CHECK(addr != MAP_FAILED, "dataset cache ", path, ": mmap failed: ", std::strerror(err));
    mapping->addr = addr;
  } else {
    ::close(fd);
  }
  return mapping;
}

}  // namespace

void write_dataset_cache(const std::string& path, const TensorDict& tensors, const std::string& source_id) {
  std::vector<Tensor> contiguous;
  contiguous.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    EMBER_CHECK(t.defined(), "write_dataset_cache(", path, "): tensor '", name, "' is undefined");
    EMBER_CHECK(static_cast<size_t>(t.dim()) <= kMaxDims, "write_dataset_cache(", path, "): tensor '", name,
                "' has ", t.dim(), " dims, more than the format's ", kMaxDims);
    contiguous.push_back(t.to(Device::cpu()).contiguous());
  }

  // The header's length does not depend on the offsets' values, so lay it out once to learn it.
  auto header_bytes = [&](const std::vector<uint64_t>& offsets) {
    std::vector<uint8_t> h(kMagic, kMagic + sizeof kMagic);
    put(h, kVersion);
    put(h, uint32_t{0});  // the header length, patched below
    put_string(h, source_id);
    put(h, static_cast<uint32_t>(tensors.size()));
    size_t i = 0;
    for (const auto& [name, t] : tensors) {
      const Tensor& c = contiguous[i];
      put_string(h, name);
      put(h, static_cast<uint8_t>(c.dtype()));
      put(h, static_cast<uint8_t>(c.dim()));
      for (int64_t d : c.sizes()) put(h, d);
      put(h, offsets[i]);
      put(h, static_cast<uint64_t>(c.nbytes()));
      ++i;
    }
    const auto length = static_cast<uint32_t>(h.size() + sizeof(uint64_t));
    std::memcpy(h.data() + 12, &length, sizeof length);
    put(h, fnv1a64(h.data(), h.size()));
    return h;
  };
  std::vector<uint64_t> offsets(contiguous.size(), 0);
  uint64_t end = header_bytes(offsets).size();
  for (size_t i = 0; i < contiguous.size(); ++i) {
    offsets[i] = align_up(end);
    end = offsets[i] + contiguous[i].nbytes();
  }
  // No padding after the last tensor: a file cut short always loses data the header points to.
  std::vector<uint8_t> file = header_bytes(offsets);
  file.resize(end, 0);
  for (size_t i = 0; i < contiguous.size(); ++i) {
    const Tensor& c = contiguous[i];
    if (c.nbytes() > 0) std::memcpy(file.data() + offsets[i], c.data_ptr(), c.nbytes());
  }
  serialize::write_file_atomic(path, file.data(), file.size());
}

TensorDict read_dataset_cache(const std::string& path, const std::string& source_id) {
  std::shared_ptr<Mapping> mapping = map_file(path);
  const auto* base = static_cast<const uint8_t*>(mapping->addr);
  const size_t size = mapping->size;
  EMBER_CHECK(size >= 16 && std::memcmp(base, kMagic, sizeof kMagic) == 0, "dataset cache ", path,
              ": bad magic: not an ember dataset cache");
  uint32_t version, length;
  std::memcpy(&version, base + 8, 4);
  std::memcpy(&length, base + 12, 4);
  EMBER_CHECK(version == kVersion, "dataset cache ", path, ": format version ", version, ", this ember reads ",
              kVersion);
  EMBER_CHECK(length >= 32 && length <= size, "dataset cache ", path, ": corrupt header: length ", length,
              " for a file of ", size, " bytes (truncated?)");
  uint64_t stored_sum;
  std::memcpy(&stored_sum, base + length - 8, 8);
  EMBER_CHECK(fnv1a64(base, length - 8) == stored_sum, "dataset cache ", path,
              ": header checksum mismatch (the file is corrupt)");

  HeaderReader in(base, length - 8, path);
  in.get<uint64_t>("magic");
  in.get<uint64_t>("version and length");
  const std::string made_from = in.get_string("source id");
  EMBER_CHECK(source_id.empty() || made_from == source_id, "dataset cache ", path,
              ": stale: made from '", made_from, "', expected '", source_id, "'");
  const uint32_t count = in.get<uint32_t>("tensor count");
  TensorDict out;
  for (uint32_t i = 0; i < count; ++i) {
    const std::string name = in.get_string("a tensor name");
    const uint8_t dtype_code = in.get<uint8_t>("a dtype");
    EMBER_CHECK(dtype_code < kNumDTypes, "dataset cache ", path, ": corrupt header: tensor '", name,
                "' has dtype code ", int{dtype_code});
    const auto dtype = static_cast<DType>(dtype_code);
    const uint8_t dims = in.get<uint8_t>("a dim count");
    EMBER_CHECK(dims <= kMaxDims, "dataset cache ", path, ": corrupt header: tensor '", name, "' has ", int{dims},
                " dims");
    std::vector<int64_t> shape(dims);
    uint64_t numel = 1;
    for (int64_t& d : shape) {
      d = in.get<int64_t>("a dim size");
      EMBER_CHECK(d >= 0 && (d == 0 || numel <= std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)),
                  "dataset cache ", path, ": corrupt header: tensor '", name, "' has a bad dim size ", d);
      numel *= static_cast<uint64_t>(d);
    }
    const uint64_t offset = in.get<uint64_t>("a data offset");
    const uint64_t nbytes = in.get<uint64_t>("a byte count");
    EMBER_CHECK(numel <= std::numeric_limits<uint64_t>::max() / element_size(dtype) &&
                    nbytes == numel * element_size(dtype),
                "dataset cache ", path, ": corrupt header: tensor '", name, "' of shape ", IntArrayRef(shape),
                " claims ", nbytes, " bytes");
    EMBER_CHECK(offset % kDataAlignment == 0 && offset >= length && offset <= size && nbytes <= size - offset,
                "dataset cache ", path, ": tensor '", name, "' lies at bytes [", offset, ", ", offset + nbytes,
                ") outside the data section of a ", size, "-byte file (truncated?)");
    auto* data = static_cast<uint8_t*>(mapping->addr) + offset;
    Tensor t = from_blob(data, shape, dtype, [mapping](void*) {});
    EMBER_CHECK(out.emplace(name, std::move(t)).second, "dataset cache ", path, ": tensor '", name,
                "' appears twice");
  }
  EMBER_CHECK(in.pos() == length - 8, "dataset cache ", path, ": corrupt header: ", length - 8 - in.pos(),
              " unexpected bytes after the last tensor entry");
  return out;
}

CachedTensors open_dataset_cache(const std::string& path, const std::string& source_id,
                                 const std::function<TensorDict()>& decode) {
  CachedTensors result;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    try {
      result.tensors = read_dataset_cache(path, source_id);
      return result;
    } catch (const Error& e) {
      result.rebuild_reason = e.what();
    }
  } else {
    result.rebuild_reason = "no cache file at " + path;
  }
  result.rebuilt = true;
  write_dataset_cache(path, decode(), source_id);
  result.tensors = read_dataset_cache(path, source_id);
  return result;
}

std::string file_fingerprint(const std::vector<std::string>& paths) {
  std::string id;
  for (const std::string& path : paths) {
    struct stat st;
    EMBER_CHECK(::stat(path.c_str(), &st) == 0, "file_fingerprint: cannot stat ", path, ": ", std::strerror(errno));
    if (!id.empty()) id += ';';
    id += path + ':' + std::to_string(st.st_size) + ':' + std::to_string(st.st_mtim.tv_sec) + '.' +
          std::to_string(st.st_mtim.tv_nsec);
  }
  return id;
}

}  // namespace ember::data
