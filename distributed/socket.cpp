#include "distributed/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "ember/error.h"

namespace ember::distributed::net {

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.release();
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

Socket listen_tcp(int port, int& bound_port) {
  EMBER_CHECK(port >= 0 && port <= 65535, "TCPStore: port ", port, " is outside [0, 65535]");
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EMBER_CHECK(s.valid(), "TCPStore: socket() failed: ", std::strerror(errno));
  const int one = 1;
  ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EMBER_CHECK(::bind(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0, "TCPStore: cannot listen on port ",
              port, ": ", std::strerror(errno));
  EMBER_CHECK(::listen(s.fd(), 512) == 0, "TCPStore: listen() failed: ", std::strerror(errno));
  socklen_t len = sizeof addr;
  ::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
  bound_port = ntohs(addr.sin_port);
  return s;
}

namespace {

// One non-blocking connect attempt, bounded by the deadline; errno on failure.
int try_connect(const addrinfo& ai, Clock::time_point deadline, Socket& out) {
  Socket s(::socket(ai.ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s.valid()) return errno;
  if (::connect(s.fd(), ai.ai_addr, ai.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return errno;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{s.fd(), POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 0))) <= 0) return ETIMEDOUT;
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return err;
  }
  const int flags = ::fcntl(s.fd(), F_GETFL, 0);
  ::fcntl(s.fd(), F_SETFL, flags & ~O_NONBLOCK);
  const int one = 1;
  ::setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  out = std::move(s);
  return 0;
}

}  // namespace

Socket connect_tcp(const std::string& host, int port, Clock::time_point deadline, const char* what) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  EMBER_CHECK(rc == 0 && res != nullptr, what, ": cannot resolve host '", host, "': ", ::gai_strerror(rc));
  int last_error = 0;
  Socket s;
  while (true) {
    for (addrinfo* ai = res; ai != nullptr && !s.valid(); ai = ai->ai_next) last_error = try_connect(*ai, deadline, s);
    if (s.valid() || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::freeaddrinfo(res);
  EMBER_CHECK(s.valid(), what, ": cannot connect to ", host, ":", port, " (", std::strerror(last_error),
              ") before the timeout");
  return s;
}

namespace {
// Waits until fd is ready for `events`; kTimeout when the deadline passes.
IoStatus wait_ready(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return IoStatus::kTimeout;
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (rc > 0) return IoStatus::kOk;
    if (rc < 0 && errno != EINTR) return IoStatus::kClosed;
  }
}
}  // namespace

IoStatus send_all(int fd, const void* data, size_t n, Clock::time_point deadline) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    if (IoStatus s = wait_ready(fd, POLLOUT, deadline); s != IoStatus::kOk) return s;
    const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (k <= 0) return IoStatus::kClosed;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return IoStatus::kOk;
}

IoStatus recv_exact(int fd, void* data, size_t n, Clock::time_point deadline) {
  auto* p = static_cast<uint8_t*>(data);
  while (n > 0) {
    if (IoStatus s = wait_ready(fd, POLLIN, deadline); s != IoStatus::kOk) return s;
    const ssize_t k = ::recv(fd, p, n, MSG_DONTWAIT);
    if (k < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (k <= 0) return IoStatus::kClosed;
    p += k;
    n -= static_cast<size_t>(k);
  }
  return IoStatus::kOk;
}

}  // namespace ember::distributed::net
