// FileStore: Note [Stores] in ember/distributed/store.h.
//
// Note [FileStore format]
// The file is a log of records: u32 key length, key, u32 value length (or
// 0xFFFFFFFF for a deleted key, with no value), value; integers
// little-endian. Every operation takes an exclusive flock, replays the log
// into a map (the last record of a key wins), and appends what it changes.
// The file is untrusted: lengths are checked against the store limits and a
// truncated record is an error naming the offset.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "distributed/store_ops.h"
#include "ember/distributed/store.h"
#include "ember/error.h"

namespace ember::distributed {

namespace {

constexpr uint32_t kTombstone = 0xFFFFFFFFu;

// The log file, opened and exclusively locked for one operation.
class LockedLog {
 public:
  explicit LockedLog(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    EMBER_CHECK(fd_ >= 0, "FileStore: cannot open '", path, "': ", std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd_);
        EMBER_FAIL("FileStore: cannot lock '", path, "': ", std::strerror(errno));
      }
    }
  }
  ~LockedLog() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  LockedLog(const LockedLog&) = delete;
  LockedLog& operator=(const LockedLog&) = delete;

  KeyValueMap read() const {
    Bytes log;
    uint8_t buf[65536];
    ::lseek(fd_, 0, SEEK_SET);
    while (true) {
      const ssize_t k = ::read(fd_, buf, sizeof buf);
      if (k < 0 && errno == EINTR) continue;
      EMBER_CHECK(k >= 0, "FileStore: cannot read '", path_, "': ", std::strerror(errno));
      if (k == 0) break;
      log.insert(log.end(), buf, buf + k);
    }
    KeyValueMap map;
    size_t pos = 0;
    const auto u32_at = [&](size_t at) {
      EMBER_CHECK(log.size() - at >= 4, "FileStore: '", path_, "' is truncated at byte ", at);
      uint32_t v = 0;
      for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(log[at + static_cast<size_t>(i)]) << (8 * i);
      return v;
    };
    while (pos < log.size()) {
      const uint32_t klen = u32_at(pos);
      EMBER_CHECK(klen >= 1 && klen <= kMaxStoreKeyBytes && log.size() - pos - 4 >= klen, "FileStore: '", path_,
                  "' is corrupt at byte ", pos, " (key length ", klen, ")");
      std::string key(log.begin() + static_cast<std::ptrdiff_t>(pos + 4),
                      log.begin() + static_cast<std::ptrdiff_t>(pos + 4 + klen));
      pos += 4 + klen;
      const uint32_t vlen = u32_at(pos);
      pos += 4;
      if (vlen == kTombstone) {
        map.erase(key);
        continue;
      }
      EMBER_CHECK(vlen <= kMaxStoreValueBytes && log.size() - pos >= vlen, "FileStore: '", path_,
                  "' is corrupt at byte ", pos - 4, " (value length ", vlen, ")");
      map[key].assign(log.begin() + static_cast<std::ptrdiff_t>(pos),
                      log.begin() + static_cast<std::ptrdiff_t>(pos + vlen));
      pos += vlen;
    }
    return map;
  }

  void append(const std::string& key, const Bytes* value) const {
    const uint32_t vlen = value ? static_cast<uint32_t>(value->size()) : kTombstone;
    Bytes rec(8 + key.size() + (value ? value->size() : 0));
    for (size_t i = 0; i < 4; ++i) {
      rec[i] = static_cast<uint8_t>(key.size() >> (8 * i));
      rec[4 + key.size() + i] = static_cast<uint8_t>(vlen >> (8 * i));
    }
    std::memcpy(rec.data() + 4, key.data(), key.size());
    if (value && !value->empty()) std::memcpy(rec.data() + 8 + key.size(), value->data(), value->size());
    ::lseek(fd_, 0, SEEK_END);
    size_t done = 0;
    while (done < rec.size()) {
      const ssize_t k = ::write(fd_, rec.data() + done, rec.size() - done);
      if (k < 0 && errno == EINTR) continue;
      EMBER_CHECK(k > 0, "FileStore: cannot write '", path_, "': ", std::strerror(errno));
      done += static_cast<size_t>(k);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

FileStore::FileStore(std::string path, std::chrono::milliseconds timeout) : Store(timeout), path_(std::move(path)) {
  EMBER_CHECK(!path_.empty(), "FileStore: the path is empty");
  LockedLog log(path_);  // creates the file, and reads it once: a corrupt file fails here
  log.read();
}

void FileStore::set(const std::string& key, const Bytes& value) {
  check_key(key, "FileStore::set");
  check_value(value, "FileStore::set");
  LockedLog(path_).append(key, &value);
}

Bytes FileStore::get(const std::string& key) {
  check_key(key, "FileStore::get");
  wait({key}, timeout());
  LockedLog log(path_);
  KeyValueMap map = log.read();
  auto it = map.find(key);
  EMBER_CHECK(it != map.end(), "FileStore::get: key '", key, "' was deleted while waiting");
  return it->second;
}

int64_t FileStore::add(const std::string& key, int64_t amount) {
  check_key(key, "FileStore::add");
  LockedLog log(path_);
  KeyValueMap map = log.read();
  const int64_t sum = apply_add(map, key, amount);
  log.append(key, &map[key]);
  return sum;
}

Bytes FileStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  check_key(key, "FileStore::compare_set");
  check_value(desired, "FileStore::compare_set");
  LockedLog log(path_);
  KeyValueMap map = log.read();
  const auto before = map.find(key);
  const bool existed = before != map.end();
  const Bytes old = existed ? before->second : Bytes{};
  Bytes now = apply_compare_set(map, key, expected, desired);
  if (map.count(key) && (!existed || old != map[key])) log.append(key, &map[key]);
  return now;
}

void FileStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!check(keys)) {
    EMBER_CHECK(std::chrono::steady_clock::now() < deadline, "FileStore::wait: key '", keys.front(),
                "' (of ", keys.size(), ") did not appear in '", path_, "' within ", timeout.count(), " ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool FileStore::check(const std::vector<std::string>& keys) {
  for (const std::string& k : keys) check_key(k, "FileStore::check");
  const KeyValueMap map = LockedLog(path_).read();
  for (const std::string& k : keys)
    if (!map.count(k)) return false;
  return true;
}

bool FileStore::delete_key(const std::string& key) {
  check_key(key, "FileStore::delete_key");
  LockedLog log(path_);
  if (!log.read().count(key)) return false;
  log.append(key, nullptr);
  return true;
}

}  // namespace ember::distributed
