// TCP sockets for the store: an owning fd, connect/listen, and reads and
// writes bounded by a deadline (poll), so no call blocks past its timeout.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ember::distributed::net {

using Clock = std::chrono::steady_clock;

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { close(); }
  Socket(Socket&& o) noexcept : fd_(o.release()) {}
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void close();

 private:
  int fd_ = -1;
};

// Listens on all IPv4 interfaces at `port` (0: any free port); returns the
// socket and sets `bound_port`.
Socket listen_tcp(int port, int& bound_port);
// Connects to host:port, retrying refused connections until `deadline`.
// Raises an ember::Error naming `what`, the address and the last errno.
Socket connect_tcp(const std::string& host, int port, Clock::time_point deadline, const char* what);

// Outcome of a bounded read or write.
enum class IoStatus { kOk, kTimeout, kClosed };
IoStatus send_all(int fd, const void* data, size_t n, Clock::time_point deadline);
IoStatus recv_exact(int fd, void* data, size_t n, Clock::time_point deadline);
void set_nonblocking(int fd);

}  // namespace ember::distributed::net
