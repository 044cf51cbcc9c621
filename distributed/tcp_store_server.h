// The TCPStore server: one thread that polls the listening socket and every
// client connection, answers requests, and parks get/wait requests until
// their keys exist (the client enforces the timeout and hangs up).
#pragma once

#include <map>
#include <thread>

#include "distributed/socket.h"
#include "distributed/store_ops.h"
#include "distributed/store_wire.h"
#include "ember/distributed/store.h"

namespace ember::distributed {

class TCPStore::Server {
 public:
  explicit Server(int port);
  ~Server();
  int port() const { return port_; }

 private:
  struct Connection {
    net::Socket socket;
    Bytes in;
    Bytes out;
    size_t out_sent = 0;
    bool parked = false;  // a get or wait waiting for its keys
    wire::Request request;
  };
  void run();
  void accept_client();
  // Reads what arrived; false when the connection is to be closed.
  bool read_from(Connection& c);
  bool write_to(Connection& c);
  // Answers the buffered requests of c until one parks; false on a protocol error.
  bool serve(Connection& c);
  // The reply, or false when the request must wait for keys.
  bool answer(const wire::Request& r, Bytes& reply);
  void unpark_ready();

  int port_ = 0;  // before listener_: listen_tcp sets it
  net::Socket listener_;
  int wake_[2] = {-1, -1};
  std::map<int, Connection> connections_;
  KeyValueMap data_;
  std::thread thread_;
};

}  // namespace ember::distributed
