// See byte_stream.h.
#include "data/byte_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ember/error.h"

namespace ember::data::detail {
namespace {

// deflate never compresses better than about 1032:1 (RFC 1951 block limits).
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr size_t kInflateChunk = size_t{1} << 18;

class FileStream : public ByteStream {
 public:
  FileStream(const std::string& path, const char* owner) : path_(path), owner_(owner) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EMBER_CHECK(fd_ >= 0, owner_, "(", path_, "): cannot open the file: ", std::strerror(errno));
    struct stat st;
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      EMBER_FAIL(owner_, "(", path_, "): not a regular file");
    }
    remaining_ = static_cast<uint64_t>(st.st_size);
  }
  ~FileStream() override { ::close(fd_); }

  size_t read(void* dst, size_t n) override {
    size_t done = 0;
    while (done < n) {
      const ssize_t got = ::read(fd_, static_cast<char*>(dst) + done, n - done);
      if (got < 0 && errno == EINTR) continue;
      EMBER_CHECK(got >= 0, owner_, "(", path_, "): read failed: ", std::strerror(errno));
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    remaining_ -= std::min<uint64_t>(remaining_, done);
    return done;
  }
  uint64_t max_remaining() const override { return remaining_; }
  // Looks at the first bytes without consuming them.
  size_t peek(void* dst, size_t n) {
    const ssize_t got = ::pread(fd_, dst, n, 0);
    EMBER_CHECK(got >= 0, owner_, "(", path_, "): read failed: ", std::strerror(errno));
    return static_cast<size_t>(got);
  }

 private:
  std::string path_;
  const char* owner_;
  int fd_ = -1;
  uint64_t remaining_ = 0;
};

// Inflates a gzip file (one member or several back to back, as gzip allows).
class GzipStream : public ByteStream {
 public:
  GzipStream(std::unique_ptr<FileStream> file, const std::string& path, const char* owner)
      : file_(std::move(file)), path_(path), owner_(owner), in_(kInflateChunk) {
    std::memset(&zs_, 0, sizeof zs_);
    EMBER_CHECK(inflateInit2(&zs_, 15 + 16) == Z_OK, owner_, "(", path_, "): zlib could not start inflating");
  }
  ~GzipStream() override { inflateEnd(&zs_); }

  size_t read(void* dst, size_t n) override {
    zs_.next_out = static_cast<Bytef*>(dst);
    size_t done = 0;
    while (done < n && !finished_) {
      if (zs_.avail_in == 0) {
        zs_.avail_in = static_cast<uInt>(file_->read(in_.data(), in_.size()));
        zs_.next_in = in_.data();
        if (zs_.avail_in == 0) {
          // A member ended exactly at the end of the file: the stream is complete.
          EMBER_CHECK(member_done_, owner_, "(", path_, "): the gzip stream is truncated (the file ends inside "
                      "compressed data)");
          finished_ = true;
          break;
        }
      }
      if (member_done_) {  // more bytes after a finished member: the next member
        inflateReset(&zs_);
        member_done_ = false;
      }
      const size_t want = std::min<size_t>(n - done, size_t{1} << 30);
      zs_.avail_out = static_cast<uInt>(want);
      const uInt in_before = zs_.avail_in;
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      done += want - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        member_done_ = true;
      } else {
        const bool stuck = rc == Z_BUF_ERROR && zs_.avail_in == in_before && zs_.avail_out == want;
        EMBER_CHECK((rc == Z_OK || rc == Z_BUF_ERROR) && !stuck, owner_, "(", path_, "): corrupt gzip data (zlib: ",
                    zs_.msg ? std::string(zs_.msg) : "error " + std::to_string(rc), ")");
      }
    }
    return done;
  }
  uint64_t max_remaining() const override {
    // Plus what inflate may hold back between calls (at most its 32 KiB window).
    return (file_->max_remaining() + zs_.avail_in + 1) * kMaxDeflateRatio + (uint64_t{1} << 15);
  }

 private:
  std::unique_ptr<FileStream> file_;
  std::string path_;
  const char* owner_;
  std::vector<Bytef> in_;
  z_stream zs_;
  bool member_done_ = false;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<ByteStream> open_byte_stream(const std::string& path, const char* owner) {
  auto file = std::make_unique<FileStream>(path, owner);
  uint8_t magic[2] = {0, 0};
  if (file->peek(magic, 2) == 2 && magic[0] == 0x1f && magic[1] == 0x8b)
    return std::make_unique<GzipStream>(std::move(file), path, owner);
  return file;
}

}  // namespace ember::data::detail
