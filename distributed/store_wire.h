// The TCPStore wire format, shared by client and server.
//
// Note [TCPStore wire format]
// A request is: u8 command, u32 argument count, then per argument a u32
// length and that many bytes (integers little-endian). A reply is one
// status byte (0: ok, 1: an error whose message is the argument) and one
// argument (u32 length, bytes). Keys are at most kMaxStoreKeyBytes, values
// kMaxStoreValueBytes, a wait or check names at most kMaxStoreWaitKeys keys;
// the server parses untrusted bytes with these bounds and closes a
// connection whose request breaks them, before allocating anything for it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/distributed/store.h"

namespace ember::distributed::wire {

enum class Command : uint8_t { kSet = 1, kGet, kAdd, kCompareSet, kWait, kCheck, kDelete };

struct Request {
  Command command = Command::kSet;
  std::vector<Bytes> args;
};

Bytes encode_request(Command command, const std::vector<Bytes>& args);
Bytes encode_reply(const Bytes& value, bool is_error = false);
// Largest request the server buffers (a compare_set of two largest values).
inline constexpr size_t kMaxRequestBytes = 2 * kMaxStoreValueBytes + kMaxStoreKeyBytes + 64;

enum class ParseStatus { kNeedMore, kComplete, kInvalid };
// Parses one request from the front of data[0, n). On kComplete fills `out`
// and `consumed`; on kInvalid says why in `error`.
ParseStatus parse_request(const uint8_t* data, size_t n, Request& out, size_t& consumed, std::string& error);

Bytes encode_i64(int64_t v);
// Raises an ember::Error unless `b` holds exactly 8 bytes.
int64_t decode_i64(const Bytes& b, const char* what);

}  // namespace ember::distributed::wire
