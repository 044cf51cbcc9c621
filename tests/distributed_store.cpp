// TCPStore and FileStore: the operations, timeouts, reconnects, and bad
// input on the wire and in the file.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include "distributed/store_wire.h"
#include "ember/distributed/store.h"
#include "ember/error.h"

namespace ember::distributed {
namespace {

using namespace std::chrono_literals;

Bytes b(const std::string& s) { return Bytes(s.begin(), s.end()); }

std::unique_ptr<TCPStore> server(std::chrono::milliseconds timeout = 2000ms) {
  TCPStoreOptions o;
  o.is_server = true;
  o.timeout = timeout;
  return std::make_unique<TCPStore>("127.0.0.1", o);
}

std::unique_ptr<TCPStore> client(int port, std::chrono::milliseconds timeout = 2000ms) {
  TCPStoreOptions o;
  o.port = port;
  o.timeout = timeout;
  return std::make_unique<TCPStore>("127.0.0.1", o);
}

// The same checks for both kinds of store.
void exercise(Store& a, Store& c) {
  a.set("k", b("v1"));
  EXPECT_EQ(c.get("k"), b("v1"));
  EXPECT_EQ(c.add("n", 5), 5);
  EXPECT_EQ(a.add("n", -2), 3);
  EXPECT_EQ(c.get_string("n"), "3");
  EXPECT_EQ(a.compare_set("cas", b("x"), b("y")), b("x"));  // missing key, expected not empty: unchanged
  EXPECT_FALSE(a.check({"cas"}));
  EXPECT_EQ(a.compare_set("cas", {}, b("first")), b("first"));
  EXPECT_EQ(c.compare_set("cas", b("wrong"), b("second")), b("first"));
  EXPECT_EQ(c.compare_set("cas", b("first"), b("second")), b("second"));
  EXPECT_TRUE(c.check({"k", "n", "cas"}));
  EXPECT_TRUE(a.delete_key("k"));
  EXPECT_FALSE(a.delete_key("k"));
  EXPECT_FALSE(c.check({"k"}));
  a.set("text", "not a number");
  EXPECT_THROW(c.add("text", 1), Error);
  // get() blocks until another client sets the key.
  std::thread setter([&] {
    std::this_thread::sleep_for(50ms);
    a.set("late", b("here"));
  });
  EXPECT_EQ(c.get("late"), b("here"));
  setter.join();
  try {
    c.wait({"never"}, 100ms);
    ADD_FAILURE() << "wait did not time out";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("never"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a.set(std::string(kMaxStoreKeyBytes + 1, 'k'), b("v")), Error);
  EXPECT_THROW(a.set("", b("v")), Error);
}

TEST(TCPStore, OperationsBetweenServerAndClient) {
  auto s = server();
  auto c = client(s->port());
  exercise(*s, *c);
}

TEST(TCPStore, ClientReconnectsAfterDisconnecting) {
  auto s = server();
  auto c = client(s->port());
  c->set("a", b("1"));
  c->disconnect();
  EXPECT_EQ(c->get("a"), b("1"));
  // A timed-out get leaves its connection unusable; the next call reconnects.
  c->set_timeout(200ms);
  EXPECT_THROW(c->get("missing"), Error);
  c->set_timeout(2000ms);
  s->set("missing", b("now"));
  EXPECT_EQ(c->get("missing"), b("now"));
}

TEST(TCPStore, ClientWithoutServerTimesOut) {
  auto s = server();
  const int port = s->port();
  s.reset();
  EXPECT_THROW(client(port, 200ms), Error);
}

// Raw bytes to the server: a request that breaks the limits closes that
// connection; the server keeps serving the others.
TEST(TCPStore, ServerDropsMalformedRequests) {
  auto s = server();
  const std::vector<Bytes> bad = {
      {0x63, 1, 0, 0, 0},                       // unknown command
      {1, 9, 0, 0, 0},                          // set with 9 arguments
      {2, 1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x7F},  // a 2 GiB key
  };
  for (const Bytes& request : bad) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(s->port()));
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
    char c;
    EXPECT_EQ(::recv(fd, &c, 1, 0), 0);  // closed, no reply
    ::close(fd);
  }
  s->set("still", b("serving"));
  EXPECT_EQ(client(s->port())->get("still"), b("serving"));
}

TEST(TCPStoreWire, ParserChecksLengthsBeforeCopying) {
  wire::Request r;
  size_t consumed = 0;
  std::string error;
  const Bytes ok = wire::encode_request(wire::Command::kSet, {b("key"), b("value")});
  for (size_t n = 0; n < ok.size(); ++n)
    EXPECT_EQ(wire::parse_request(ok.data(), n, r, consumed, error), wire::ParseStatus::kNeedMore) << n;
  ASSERT_EQ(wire::parse_request(ok.data(), ok.size(), r, consumed, error), wire::ParseStatus::kComplete);
  EXPECT_EQ(consumed, ok.size());
  EXPECT_EQ(r.args.at(1), b("value"));
  const Bytes big_value = {1, 2, 0, 0, 0, 1, 0, 0, 0, 'k', 0, 0, 0, 0x10};  // 256 MiB value
  EXPECT_EQ(wire::parse_request(big_value.data(), big_value.size(), r, consumed, error), wire::ParseStatus::kInvalid);
  EXPECT_NE(error.find("exceeds the limit"), std::string::npos) << error;
  const Bytes add_too_long = wire::encode_request(wire::Command::kAdd, {b("k"), b("123456789")});
  EXPECT_EQ(wire::parse_request(add_too_long.data(), add_too_long.size(), r, consumed, error),
            wire::ParseStatus::kInvalid);
}

std::string temp_path() {
  std::string path = ::testing::TempDir() + "ember_store_XXXXXX";
  ::close(::mkstemp(path.data()));
  ::unlink(path.c_str());
  return path;
}

TEST(FileStore, OperationsBetweenTwoStoresOnOneFile) {
  const std::string path = temp_path();
  {
    FileStore a(path, 2000ms), c(path, 2000ms);
    exercise(a, c);
  }
  ::unlink(path.c_str());
}

TEST(FileStore, CorruptFileIsAnErrorNamingTheOffset) {
  const std::string path = temp_path();
  {
    std::ofstream f(path, std::ios::binary);
    const char record[] = {3, 0, 0, 0, 'k', 'e', 'y', 1, 0, 0, 0, 'v', (char)0xFF, (char)0xFF, 0, 0};
    f.write(record, sizeof record);
  }
  try {
    FileStore s(path, 100ms);
    ADD_FAILURE() << "a corrupt file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt at byte 12"), std::string::npos) << e.what();
  }
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace ember::distributed
