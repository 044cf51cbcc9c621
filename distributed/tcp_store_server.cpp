#include "distributed/tcp_store_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "ember/error.h"

namespace ember::distributed {

namespace {
std::string as_string(const Bytes& b) { return std::string(b.begin(), b.end()); }
}  // namespace

TCPStore::Server::Server(int port) : listener_(net::listen_tcp(port, port_)) {
  EMBER_CHECK(::pipe2(wake_, O_CLOEXEC) == 0, "TCPStore: pipe() failed: ", std::strerror(errno));
  net::set_nonblocking(listener_.fd());
  thread_ = std::thread([this] { run(); });
}

TCPStore::Server::~Server() {
  const char stop = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_[1], &stop, 1);
  thread_.join();
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void TCPStore::Server::run() {
  std::vector<pollfd> fds;
  while (true) {
    fds.clear();
    fds.push_back({wake_[0], POLLIN, 0});
    fds.push_back({listener_.fd(), POLLIN, 0});
    for (auto& [fd, c] : connections_) {
      const bool pending_out = c.out_sent < c.out.size();
      fds.push_back({fd, static_cast<short>(POLLIN | (pending_out ? POLLOUT : 0)), 0});
    }
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents != 0) return;
    if (fds[1].revents & POLLIN) accept_client();
    for (size_t i = 2; i < fds.size(); ++i) {
      auto it = connections_.find(fds[i].fd);
      if (it == connections_.end() || fds[i].revents == 0) continue;
      Connection& c = it->second;
      bool keep = true;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) keep = read_from(c) && serve(c);
      if (keep && (fds[i].revents & POLLOUT)) keep = write_to(c);
      if (!keep) connections_.erase(it);
    }
  }
}

void TCPStore::Server::accept_client() {
  while (true) {
    const int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    connections_[fd].socket = net::Socket(fd);
  }
}

bool TCPStore::Server::read_from(Connection& c) {
  uint8_t buf[65536];
  while (true) {
    const ssize_t k = ::recv(c.socket.fd(), buf, sizeof buf, MSG_DONTWAIT);
    if (k > 0) {
      c.in.insert(c.in.end(), buf, buf + k);
      if (c.in.size() > wire::kMaxRequestBytes) return false;
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    return k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

bool TCPStore::Server::write_to(Connection& c) {
  while (c.out_sent < c.out.size()) {
    const ssize_t k = ::send(c.socket.fd(), c.out.data() + c.out_sent, c.out.size() - c.out_sent,
                             MSG_DONTWAIT | MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (k <= 0) return false;
    c.out_sent += static_cast<size_t>(k);
  }
  c.out.clear();
  c.out_sent = 0;
  return true;
}

bool TCPStore::Server::serve(Connection& c) {
  bool mutated = false;
  while (!c.parked) {
    size_t consumed = 0;
    std::string error;
    const wire::ParseStatus s = wire::parse_request(c.in.data(), c.in.size(), c.request, consumed, error);
    if (s == wire::ParseStatus::kInvalid) return false;
    if (s == wire::ParseStatus::kNeedMore) break;
    c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(consumed));
    Bytes reply;
    if (answer(c.request, reply)) {
      c.out.insert(c.out.end(), reply.begin(), reply.end());
      mutated = mutated || c.request.command != wire::Command::kGet;
    } else {
      c.parked = true;
    }
  }
  if (mutated) unpark_ready();
  return write_to(c);
}

bool TCPStore::Server::answer(const wire::Request& r, Bytes& reply) {
  const std::string key = as_string(r.args[0]);
  switch (r.command) {
    case wire::Command::kSet:
      data_[key] = r.args[1];
      reply = wire::encode_reply({});
      return true;
    case wire::Command::kGet: {
      auto it = data_.find(key);
      if (it == data_.end()) return false;
      reply = wire::encode_reply(it->second);
      return true;
    }
    case wire::Command::kAdd:
      try {
        reply = wire::encode_reply(wire::encode_i64(apply_add(data_, key, wire::decode_i64(r.args[1], "add"))));
      } catch (const Error& e) {
        const std::string msg = e.what();
        reply = wire::encode_reply(Bytes(msg.begin(), msg.end()), true);
      }
      return true;
    case wire::Command::kCompareSet:
      reply = wire::encode_reply(apply_compare_set(data_, key, r.args[1], r.args[2]));
      return true;
    case wire::Command::kWait:
    case wire::Command::kCheck: {
      bool all = true;
      for (const Bytes& k : r.args) all = all && data_.count(as_string(k)) != 0;
      if (r.command == wire::Command::kWait && !all) return false;
      reply = wire::encode_reply(Bytes{static_cast<uint8_t>(all)});
      return true;
    }
    case wire::Command::kDelete:
      reply = wire::encode_reply(Bytes{static_cast<uint8_t>(data_.erase(key))});
      return true;
  }
  return false;
}

void TCPStore::Server::unpark_ready() {
  for (auto& [fd, c] : connections_) {
    if (!c.parked) continue;
    Bytes reply;
    if (!answer(c.request, reply)) continue;
    c.parked = false;
    c.out.insert(c.out.end(), reply.begin(), reply.end());
    // Its next requests are served when they arrive (or on the next poll).
    write_to(c);
  }
}

}  // namespace ember::distributed
