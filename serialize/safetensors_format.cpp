// The safetensors format: header parsing and validation, serialisation, and
// the file helpers. See the notes in safetensors_format.h.
#include "serialize/safetensors_format.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ember/error.h"

namespace ember::serialize {
namespace {

using nlohmann::json;

// The dtypes ember stores, in the order the reference writer lays them out
// (widest first; the reverse of the Rust crate's Dtype enum order).
struct DTypeEntry {
  std::string_view name;
  DType dtype;
  size_t size;
};
constexpr DTypeEntry kDTypes[] = {
    {"I64", DType::Int64, 8},   {"F64", DType::Float64, 8}, {"F32", DType::Float32, 4},
    {"I32", DType::Int32, 4},   {"BF16", DType::BFloat16, 2}, {"F16", DType::Float16, 2},
    {"U8", DType::UInt8, 1},    {"BOOL", DType::Bool, 1},
};
// Valid safetensors dtypes that ember has no DType for.
constexpr std::string_view kUnsupportedDTypes[] = {"I8",      "I16",     "U16",     "U32",
                                                   "U64",     "F8_E5M2", "F8_E4M3", "F8_E8M0",
                                                   "F4",      "F6_E2M3", "F6_E3M2", "C64"};
constexpr std::string_view kSupportedList = "F32, F64, F16, BF16, I32, I64, U8, BOOL";

const DTypeEntry* find_dtype(DType d) {
  for (const auto& e : kDTypes)
    if (e.dtype == d) return &e;
  return nullptr;
}

// Names come from untrusted files: keep messages short.
std::string quote_name(std::string_view s) {
  constexpr size_t kMax = 80;
  std::string out(1, '\'');
  out.append(s.substr(0, kMax));
  if (s.size() <= kMax) return out.append(1, '\'');
  return out.append("...' (").append(std::to_string(s.size())).append(" bytes)");
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const char* json_type(const json& j) { return j.type_name(); }

// Product of the dims; nullopt-like false when it does not fit int64. Zero
// dims are skipped for the overflow check (strides are products of trailing
// dims, so they must fit even when numel is 0).
bool checked_numel(const std::vector<int64_t>& shape, int64_t* numel) {
  int64_t nonzero = 1;
  bool has_zero = false;
  for (int64_t d : shape) {
    if (d == 0) {
      has_zero = true;
      continue;
    }
    if (__builtin_mul_overflow(nonzero, d, &nonzero)) return false;
  }
  *numel = has_zero ? 0 : nonzero;
  return true;
}

// Builds the header's JSON tree through nlohmann's SAX interface, rejecting
// duplicate keys in any object (nlohmann would keep the last one silently)
// and nesting deeper than the format has (object > entry > shape). Linear in
// the header size: nlohmann's callback parser, the other way to see keys,
// rescans the parent object at every object end, quadratic in the number of
// tensors (100,000 entries took minutes).
class HeaderSax {
 public:
  HeaderSax(json& result, std::string_view what) : dom_(result), what_(what) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return dom_.number_float(v, s); }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) {
    enter();
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool key(json::string_t& k) {
    EMBER_CHECK(keys_.back().insert(k).second, "load_safetensors(", what_, "): duplicate key ", quote_name(k),
                " in header", keys_.size() == 1 ? " (tensor names must be unique)" : "");
    return dom_.key(k);
  }
  bool end_object() {
    keys_.pop_back();
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    enter();
    return dom_.start_array(n);
  }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) {
    return dom_.parse_error(position, token, e);  // throws json::parse_error
  }

 private:
  void enter() {
    EMBER_CHECK(++depth_ <= 3, "load_safetensors(", what_,
                "): header JSON is nested too deeply (a safetensors header is an object of "
                "objects holding arrays of integers)");
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::string_view what_;
  int depth_ = 0;
  std::vector<std::set<std::string>> keys_;
};

std::map<std::string, std::string> parse_metadata(const json& j, std::string_view what) {
  EMBER_CHECK(j.is_object(), "load_safetensors(", what,
              "): __metadata__ must be an object mapping strings to strings, got ", json_type(j));
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : j.items()) {
    EMBER_CHECK(v.is_string(), "load_safetensors(", what, "): __metadata__ value of key ",
                quote_name(k), " must be a string, got ", json_type(v));
    out.emplace(k, v.get<std::string>());
  }
  return out;
}

TensorRecord parse_entry(const std::string& name, const json& j, size_t data_size,
                         std::string_view what) {
  const std::string tensor = "tensor " + quote_name(name);
  EMBER_CHECK(j.is_object(), "load_safetensors(", what, "): ", tensor,
              ": entry must be an object with dtype, shape and data_offsets, got ", json_type(j));
  for (const auto& [k, v] : j.items()) {
    (void)v;
    EMBER_CHECK(k == "dtype" || k == "shape" || k == "data_offsets", "load_safetensors(", what,
                "): ", tensor, ": unexpected key ", quote_name(k),
                " (expected only dtype, shape and data_offsets)");
  }

  // dtype
  auto it = j.find("dtype");
  EMBER_CHECK(it != j.end(), "load_safetensors(", what, "): ", tensor, ": missing dtype");
  EMBER_CHECK(it->is_string(), "load_safetensors(", what, "): ", tensor,
              ": dtype must be a string, got ", json_type(*it));
  const auto& dtype_str = it->get_ref<const std::string&>();
  const DTypeEntry* entry = nullptr;
  for (const auto& e : kDTypes)
    if (e.name == dtype_str) entry = &e;
  if (entry == nullptr) {
    bool known = std::find(std::begin(kUnsupportedDTypes), std::end(kUnsupportedDTypes),
                           dtype_str) != std::end(kUnsupportedDTypes);
    EMBER_FAIL("load_safetensors(", what, "): ", tensor, ": unsupported dtype ", quote_name(dtype_str),
               known ? "" : " (not a safetensors dtype)", "; ember supports ", kSupportedList);
  }

  // shape
  it = j.find("shape");
  EMBER_CHECK(it != j.end(), "load_safetensors(", what, "): ", tensor, ": missing shape");
  EMBER_CHECK(it->is_array(), "load_safetensors(", what, "): ", tensor,
              ": shape must be an array of integers, got ", json_type(*it));
  std::vector<int64_t> shape;
  shape.reserve(it->size());
  for (const auto& d : *it) {
    EMBER_CHECK(d.is_number_integer(), "load_safetensors(", what, "): ", tensor,
                ": shape must be an array of integers, found ", json_type(d), " ", d.dump());
    if (d.is_number_unsigned()) {
      auto u = d.get<uint64_t>();
      EMBER_CHECK(u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                  "load_safetensors(", what, "): ", tensor, ": dimension ", u,
                  " of shape is too large (overflows int64)");
      shape.push_back(static_cast<int64_t>(u));
    } else {
      auto s = d.get<int64_t>();
      EMBER_CHECK(s >= 0, "load_safetensors(", what, "): ", tensor, ": negative dimension ", s,
                  " in shape");
      shape.push_back(s);
    }
  }
  int64_t numel = 0;
  EMBER_CHECK(checked_numel(shape, &numel), "load_safetensors(", what, "): ", tensor, ": shape ",
              shape_str(shape), " overflows: its element count does not fit in int64");
  size_t nbytes = 0;
  EMBER_CHECK(!__builtin_mul_overflow(static_cast<size_t>(numel), entry->size, &nbytes),
              "load_safetensors(", what, "): ", tensor, ": shape ", shape_str(shape),
              " overflows: its byte count does not fit in size_t");

  // data_offsets
  it = j.find("data_offsets");
  EMBER_CHECK(it != j.end(), "load_safetensors(", what, "): ", tensor, ": missing data_offsets");
  EMBER_CHECK(it->is_array() && it->size() == 2 && (*it)[0].is_number_unsigned() &&
                  (*it)[1].is_number_unsigned(),
              "load_safetensors(", what, "): ", tensor,
              ": data_offsets must be an array of two non-negative integers [begin, end], got ",
              it->dump().substr(0, 80));
  const uint64_t begin = (*it)[0].get<uint64_t>();
  const uint64_t end = (*it)[1].get<uint64_t>();
  EMBER_CHECK(begin <= end, "load_safetensors(", what, "): ", tensor, ": data_offsets [", begin,
              ", ", end, "] are reversed (begin must be <= end)");
  EMBER_CHECK(end <= data_size, "load_safetensors(", what, "): ", tensor, ": data_offsets [",
              begin, ", ", end, "] go past the end of the data section (", data_size,
              " bytes): file truncated?");
  EMBER_CHECK(end - begin == nbytes, "load_safetensors(", what, "): ", tensor, ": data_offsets [",
              begin, ", ", end, "] hold ", end - begin, " bytes but shape ", shape_str(shape),
              " of ", entry->name, " needs ", numel, " x ", entry->size, " = ", nbytes, " bytes");
  return TensorRecord{name, entry->dtype, std::move(shape), static_cast<size_t>(begin),
                      static_cast<size_t>(end)};
}

// The records must tile the data section: no overlap, no hole, nothing left.
// Sorts the records by offset.
void check_coverage(std::vector<TensorRecord>& records, size_t data_size, std::string_view what) {
  std::sort(records.begin(), records.end(), [](const TensorRecord& a, const TensorRecord& b) {
    if (a.offset_begin != b.offset_begin) return a.offset_begin < b.offset_begin;
    if (a.offset_end != b.offset_end) return a.offset_end < b.offset_end;
    return a.name < b.name;
  });
  size_t covered = 0;
  const TensorRecord* prev = nullptr;
  for (const auto& r : records) {
    EMBER_CHECK(r.offset_begin >= covered, "load_safetensors(", what, "): tensors ",
                quote_name(prev ? prev->name : ""), " [", prev ? prev->offset_begin : 0, ", ",
                prev ? prev->offset_end : 0, ") and ", quote_name(r.name), " [", r.offset_begin, ", ",
                r.offset_end, ") overlap in the data section");
    EMBER_CHECK(r.offset_begin == covered, "load_safetensors(", what, "): hole in the data section: bytes [",
                covered, ", ", r.offset_begin, ") before tensor ", quote_name(r.name),
                " belong to no tensor (the data section must be fully covered)");
    covered = r.offset_end;
    prev = &r;
  }
  EMBER_CHECK(covered == data_size, "load_safetensors(", what, "): the data section has ",
              data_size, " bytes but the tensors cover only ", covered,
              " (trailing bytes; the data section must be fully covered)");
}

std::string json_quote(const std::string& s, std::string_view role) {
  try {
    return json(s).dump();
  } catch (const json::exception&) {
    EMBER_FAIL("save_safetensors: ", role, " ", quote_name(s), " is not valid UTF-8");
  }
}

}  // namespace

std::string_view safetensors_dtype_name(DType dtype) {
  const DTypeEntry* e = find_dtype(dtype);
  EMBER_CHECK(e != nullptr, "safetensors: unknown dtype value ", static_cast<int>(dtype));
  return e->name;
}

SafetensorsHeader parse_safetensors(const uint8_t* bytes, size_t size, std::string_view what) {
  EMBER_CHECK(bytes != nullptr || size == 0, "load_safetensors(", what, "): null buffer");
  EMBER_CHECK(size >= 8, "load_safetensors(", what, "): file is ", size,
              " bytes, shorter than the 8-byte header length that starts a safetensors file");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
  EMBER_CHECK(n <= kMaxSafetensorsHeader, "load_safetensors(", what, "): header length ", n,
              " is larger than the ", kMaxSafetensorsHeader,
              "-byte limit (corrupt file, or not a safetensors file?)");
  EMBER_CHECK(n <= size - 8, "load_safetensors(", what, "): header length ", n,
              " is larger than the file: only ", size - 8,
              " bytes follow the length field (truncated file?)");
  EMBER_CHECK(n > 0 && bytes[8] == '{', "load_safetensors(", what,
              "): header must be a JSON object starting with '{'",
              n == 0 ? " but the header is empty" : "");

  const char* hbegin = reinterpret_cast<const char*>(bytes + 8);
  // nlohmann's lexer takes a NUL byte for the end of input; JSON has none.
  const void* nul = std::memchr(hbegin, 0, n);
  EMBER_CHECK(nul == nullptr, "load_safetensors(", what,
              "): header is not valid JSON: NUL byte at header offset ",
              static_cast<const char*>(nul) - hbegin);
  json header;
  try {
    HeaderSax sax(header, what);
    json::sax_parse(hbegin, hbegin + n, &sax);
  } catch (const json::exception& e) {
    EMBER_FAIL("load_safetensors(", what, "): header is not valid JSON: ", e.what());
  }
  EMBER_CHECK(header.is_object(), "load_safetensors(", what, "): header must be a JSON object, got ",
              json_type(header));

  SafetensorsHeader out;
  out.data_start = static_cast<size_t>(8 + n);
  const size_t data_size = size - out.data_start;
  out.tensors.reserve(header.size());
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      out.metadata = parse_metadata(value, what);
    } else {
      out.tensors.push_back(parse_entry(key, value, data_size, what));
    }
  }
  check_coverage(out.tensors, data_size, what);
  return out;
}

std::vector<uint8_t> write_safetensors(const std::vector<TensorView>& tensors,
                                       const std::map<std::string, std::string>& metadata) {
  struct Item {
    const TensorView* view;
    const DTypeEntry* entry;
    int rank;
  };
  std::vector<Item> items;
  items.reserve(tensors.size());
  std::set<std::string_view> names;
  for (const auto& t : tensors) {
    const DTypeEntry* e = find_dtype(t.dtype);
    EMBER_CHECK(e != nullptr, "save_safetensors: tensor ", quote_name(t.name), ": unknown dtype value ",
                static_cast<int>(t.dtype));
    EMBER_CHECK(t.name != "__metadata__", "save_safetensors: a tensor cannot be named __metadata__");
    EMBER_CHECK(names.insert(t.name).second, "save_safetensors: duplicate tensor name ",
                quote_name(t.name));
    for (int64_t d : t.shape)
      EMBER_CHECK(d >= 0, "save_safetensors: tensor ", quote_name(t.name), ": negative dimension in shape ",
                  shape_str(t.shape));
    int64_t numel = 0;
    size_t nbytes = 0;
    EMBER_CHECK(checked_numel(t.shape, &numel) &&
                    !__builtin_mul_overflow(static_cast<size_t>(numel), e->size, &nbytes),
                "save_safetensors: tensor ", quote_name(t.name), ": shape ", shape_str(t.shape),
                " overflows");
    EMBER_CHECK(t.nbytes == nbytes, "save_safetensors: tensor ", quote_name(t.name), ": shape ",
                shape_str(t.shape), " of ", e->name, " needs ", nbytes, " bytes, got ", t.nbytes);
    EMBER_CHECK(t.data != nullptr || nbytes == 0, "save_safetensors: tensor ", quote_name(t.name),
                ": null data for ", nbytes, " bytes");
    items.push_back({&t, e, static_cast<int>(e - kDTypes)});
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.view->name < b.view->name;
  });

  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) header += ',';
      first = false;
      header += json_quote(k, "metadata key");
      header += ':';
      header += json_quote(v, "metadata value");
    }
    header += '}';
  }
  size_t offset = 0;
  for (const auto& item : items) {
    const TensorView& t = *item.view;
    if (header.size() > 1) header += ',';
    header += json_quote(t.name, "tensor name");
    header += ":{\"dtype\":\"";
    header += item.entry->name;
    header += "\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (i) header += ',';
      header += std::to_string(t.shape[i]);
    }
    header += "],\"data_offsets\":[";
    header += std::to_string(offset) + "," + std::to_string(offset + t.nbytes) + "]}";
    offset += t.nbytes;
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');

  std::vector<uint8_t> out;
  out.reserve(8 + header.size() + offset);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(n >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  for (const auto& item : items) {
    const auto* p = static_cast<const uint8_t*>(item.view->data);
    if (item.view->nbytes > 0) out.insert(out.end(), p, p + item.view->nbytes);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Files

namespace {

std::string errno_str(int err) { return std::strerror(err); }

// Closes a file descriptor on every path out of a scope.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EMBER_CHECK(fd >= 0, "read_file(", path, "): cannot open: ", errno_str(errno));
  FdCloser closer{fd};
  struct stat st {};
  EMBER_CHECK(::fstat(fd, &st) == 0, "read_file(", path, "): cannot stat: ", errno_str(errno));
  EMBER_CHECK(!S_ISDIR(st.st_mode), "read_file(", path, "): is a directory, not a file");
  // A device, FIFO or socket has no size to bound the read (/dev/zero never ends).
  EMBER_CHECK(S_ISREG(st.st_mode), "read_file(", path,
              "): not a regular file (a device, pipe or socket); ember reads only regular files");

  std::vector<uint8_t> out;
  if (st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  constexpr size_t kChunk = size_t{1} << 20;
  for (;;) {
    size_t old = out.size();
    size_t want = out.capacity() > old ? out.capacity() - old : kChunk;
    out.resize(old + want);
    ssize_t got = ::read(fd, out.data() + old, want);
    if (got < 0 && errno == EINTR) {
      out.resize(old);
      continue;
    }
    if (got < 0) {
      int err = errno;
      EMBER_FAIL("read_file(", path, "): read failed: ", errno_str(err));
    }
    out.resize(old + static_cast<size_t>(got));
    if (got == 0) break;
  }
  return out;
}

void write_file_atomic(const std::string& path, const uint8_t* data, size_t size) {
  EMBER_CHECK(!path.empty(), "write_file_atomic: empty path");
  EMBER_CHECK(data != nullptr || size == 0, "write_file_atomic(", path, "): null data");
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  EMBER_CHECK(slash == std::string::npos || slash + 1 < path.size(), "write_file_atomic(", path,
              "): path names a directory");

  // A unique name beside the target (same file system, so rename is atomic).
  // Created with 0666 so the umask applies as for any new file.
  static std::atomic<uint64_t> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  EMBER_CHECK(fd >= 0, "write_file_atomic(", path, "): cannot create temporary file ", tmp, ": ",
              errno_str(errno));

  auto fail = [&](const char* step, int err) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    EMBER_FAIL("write_file_atomic(", path, "): ", step, " failed: ", errno_str(err));
  };
  size_t done = 0;
  while (done < size) {
    ssize_t w = ::write(fd, data + done, size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) fail("write", errno);
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0) fail("fsync", errno);
  int rc = ::close(fd);
  fd = -1;
  if (rc != 0) fail("close", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename", errno);

  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  EMBER_CHECK(dfd >= 0, "write_file_atomic(", path, "): cannot open directory ", dir,
              " to fsync it: ", errno_str(errno));
  FdCloser dir_closer{dfd};
  // Some file systems cannot fsync a directory (EINVAL); the rename stands.
  EMBER_CHECK(::fsync(dfd) == 0 || errno == EINVAL, "write_file_atomic(", path,
              "): fsync of directory ", dir, " failed: ", errno_str(errno));
}

}  // namespace ember::serialize
