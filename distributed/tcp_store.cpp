// TCPStore's client side (every rank), and the store that owns the server.
#include <algorithm>
#include <mutex>
#include <sstream>

#include "distributed/socket.h"
#include "distributed/store_ops.h"
#include "distributed/store_wire.h"
#include "distributed/tcp_store_server.h"
#include "ember/distributed/store.h"
#include "ember/error.h"

namespace ember::distributed {

namespace {

Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

std::string join_keys(const std::vector<std::string>& keys) {
  std::ostringstream os;
  for (size_t i = 0; i < keys.size() && i < 8; ++i) os << (i ? ", " : "") << "'" << keys[i] << "'";
  if (keys.size() > 8) os << " and " << keys.size() - 8 << " more";
  return os.str();
}

}  // namespace

class TCPStore::Client {
 public:
  Client(std::string host, int port) : host_(std::move(host)), port_(port) {}

  // Sends one request and returns its reply. A request that is safe to repeat
  // is sent again once over a fresh connection when the old one dropped.
  Bytes call(wire::Command command, const std::vector<Bytes>& args, std::chrono::milliseconds timeout,
             const std::string& what, bool repeatable) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto deadline = net::Clock::now() + timeout;
    const Bytes request = wire::encode_request(command, args);
    for (int attempt = 0;; ++attempt) {
      if (!socket_.valid()) {
        // The server was up once: a refused reconnect means it is gone, so
        // give up after a second instead of the whole timeout.
        const auto connect_by = connected_once_ ? std::min(deadline, net::Clock::now() + std::chrono::seconds(1))
                                                : deadline;
        socket_ = net::connect_tcp(host_, port_, connect_by, "TCPStore");
        connected_once_ = true;
      }
      net::IoStatus s = net::send_all(socket_.fd(), request.data(), request.size(), deadline);
      uint8_t head[5];
      if (s == net::IoStatus::kOk) s = net::recv_exact(socket_.fd(), head, sizeof head, deadline);
      Bytes reply;
      if (s == net::IoStatus::kOk) {
        const uint32_t len = static_cast<uint32_t>(head[1]) | static_cast<uint32_t>(head[2]) << 8 |
                             static_cast<uint32_t>(head[3]) << 16 | static_cast<uint32_t>(head[4]) << 24;
        if (len > kMaxStoreValueBytes || head[0] > 1) {
          socket_.close();
          EMBER_FAIL(what, ": malformed reply from the store server at ", host_, ":", port_);
        }
        reply.resize(len);
        s = net::recv_exact(socket_.fd(), reply.data(), len, deadline);
        if (s == net::IoStatus::kOk && head[0] == 1) EMBER_FAIL(std::string(reply.begin(), reply.end()));
      }
      if (s == net::IoStatus::kOk) return reply;
      // The reply may still come later: this connection cannot be reused.
      socket_.close();
      EMBER_CHECK(s != net::IoStatus::kTimeout, what, ": timed out after ", timeout.count(),
                  " ms (store server at ", host_, ":", port_, ")");
      EMBER_CHECK(repeatable && attempt == 0, what, ": lost the connection to the store server at ", host_, ":",
                  port_);
    }
  }

  void disconnect() {
    std::lock_guard<std::mutex> lock(mu_);
    socket_.close();
  }

 private:
  std::mutex mu_;
  std::string host_;
  int port_;
  net::Socket socket_;
  bool connected_once_ = false;
};

TCPStore::TCPStore(std::string host, TCPStoreOptions options)
    : Store(options.timeout), host_(std::move(host)), port_(options.port) {
  if (options.is_server) {
    server_ = std::make_unique<Server>(options.port);
    port_ = server_->port();
  }
  EMBER_CHECK(port_ > 0 && port_ <= 65535, "TCPStore: a client needs a port in [1, 65535], got ", port_);
  client_ = std::make_unique<Client>(host_, port_);
  // Connect now, so a missing server shows up here rather than at first use.
  check({"ember/connect"});
}

TCPStore::~TCPStore() = default;

void TCPStore::disconnect() { client_->disconnect(); }

void TCPStore::set(const std::string& key, const Bytes& value) {
  check_key(key, "TCPStore::set");
  check_value(value, "TCPStore::set");
  client_->call(wire::Command::kSet, {to_bytes(key), value}, timeout(), "TCPStore::set('" + key + "')", true);
}

Bytes TCPStore::get(const std::string& key) {
  check_key(key, "TCPStore::get");
  return client_->call(wire::Command::kGet, {to_bytes(key)}, timeout(),
                       "TCPStore::get: key '" + key + "' did not appear", true);
}

int64_t TCPStore::add(const std::string& key, int64_t amount) {
  check_key(key, "TCPStore::add");
  const Bytes r = client_->call(wire::Command::kAdd, {to_bytes(key), wire::encode_i64(amount)}, timeout(),
                                "TCPStore::add('" + key + "')", false);
  return wire::decode_i64(r, "TCPStore::add");
}

Bytes TCPStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  check_key(key, "TCPStore::compare_set");
  check_value(expected, "TCPStore::compare_set");
  check_value(desired, "TCPStore::compare_set");
  return client_->call(wire::Command::kCompareSet, {to_bytes(key), expected, desired}, timeout(),
                       "TCPStore::compare_set('" + key + "')", false);
}

void TCPStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  EMBER_CHECK(!keys.empty() && keys.size() <= kMaxStoreWaitKeys, "TCPStore::wait: takes 1 to ", kMaxStoreWaitKeys,
              " keys, got ", keys.size());
  std::vector<Bytes> args;
  for (const std::string& k : keys) {
    check_key(k, "TCPStore::wait");
    args.push_back(to_bytes(k));
  }
  client_->call(wire::Command::kWait, args, timeout, "TCPStore::wait for " + join_keys(keys), true);
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  EMBER_CHECK(!keys.empty() && keys.size() <= kMaxStoreWaitKeys, "TCPStore::check: takes 1 to ", kMaxStoreWaitKeys,
              " keys, got ", keys.size());
  std::vector<Bytes> args;
  for (const std::string& k : keys) {
    check_key(k, "TCPStore::check");
    args.push_back(to_bytes(k));
  }
  const Bytes r = client_->call(wire::Command::kCheck, args, timeout(), "TCPStore::check", true);
  return r.size() == 1 && r[0] == 1;
}

bool TCPStore::delete_key(const std::string& key) {
  check_key(key, "TCPStore::delete_key");
  const Bytes r = client_->call(wire::Command::kDelete, {to_bytes(key)}, timeout(), "TCPStore::delete_key", true);
  return r.size() == 1 && r[0] == 1;
}

}  // namespace ember::distributed
