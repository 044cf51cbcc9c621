// Key-value stores for rendezvous: the ranks of a job meet here before they
// open their process groups (ember/distributed/process_group.h).
//
// Note [Stores]
// A Store maps string keys to byte values, shared by every rank of a job.
// get() and wait() block until the keys exist, up to the store's timeout,
// then raise an ember::Error naming the missing keys; add() is an atomic
// counter; compare_set() an atomic swap. Two kinds:
//  - TCPStore: rank 0 runs the server (a thread in its process); every rank,
//    rank 0 included, is a client. A client whose connection dropped
//    reconnects on its next call. The server treats what it reads from the
//    network as untrusted: keys, values and counts have hard limits, and a
//    client that breaks the protocol is disconnected.
//  - FileStore: records appended to one file under an advisory lock, for
//    ranks that share a file system. Use a fresh path per job.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember::distributed {

using Bytes = std::vector<uint8_t>;

// Limits on what a store accepts (also what the TCP server reads).
inline constexpr size_t kMaxStoreKeyBytes = 4096;
inline constexpr size_t kMaxStoreValueBytes = size_t{64} << 20;
inline constexpr size_t kMaxStoreWaitKeys = 4096;

class Store {
 public:
  explicit Store(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Waits up to timeout() for the key.
  virtual Bytes get(const std::string& key) = 0;
  // Adds `amount` to the integer at `key` (0 when missing); returns the sum.
  virtual int64_t add(const std::string& key, int64_t amount) = 0;
  // Sets `desired` when the value is `expected` (an empty `expected` also
  // matches a missing key); returns the value after the call.
  virtual Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) = 0;
  // Waits until every key exists, up to `timeout`.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  // True when every key exists (no waiting).
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // Removes the key; false when it did not exist.
  virtual bool delete_key(const std::string& key) = 0;

  void set(const std::string& key, const std::string& value) { set(key, Bytes(value.begin(), value.end())); }
  std::string get_string(const std::string& key) {
    const Bytes b = get(key);
    return std::string(b.begin(), b.end());
  }
  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

 private:
  std::chrono::milliseconds timeout_;
};

struct TCPStoreOptions {
  // The server listens on `port` (0: a free port, see TCPStore::port()).
  int port = 0;
  bool is_server = false;
  std::chrono::milliseconds timeout = std::chrono::seconds(300);
};

class TCPStore final : public Store {
 public:
  // The server side starts listening before the constructor returns; a client
  // retries connecting until the timeout.
  TCPStore(std::string host, TCPStoreOptions options);
  ~TCPStore() override;

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t amount) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  using Store::set;
  using Store::wait;

  // The port the server listens on (the chosen one when options.port was 0).
  int port() const { return port_; }
  const std::string& host() const { return host_; }
  // Closes this client's connection; the next call reconnects.
  void disconnect();

 private:
  class Server;
  class Client;
  std::string host_;
  int port_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<Client> client_;
};

class FileStore final : public Store {
 public:
  explicit FileStore(std::string path, std::chrono::milliseconds timeout = std::chrono::seconds(300));

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t amount) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  using Store::set;
  using Store::wait;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A view of another store with every key prefixed (one namespace per group).
class PrefixStore final : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> base);

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t amount) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  using Store::set;
  using Store::wait;

 private:
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const;
  std::string prefix_;
  std::shared_ptr<Store> base_;
};

}  // namespace ember::distributed
