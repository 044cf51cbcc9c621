#include "distributed/store_wire.h"

#include <cstring>

#include "ember/error.h"

namespace ember::distributed::wire {

namespace {

void put_u32(Bytes& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

// How many arguments a command takes: [lo, hi].
bool argument_count_ok(Command c, uint32_t argc) {
  switch (c) {
    case Command::kSet: return argc == 2;
    case Command::kGet: return argc == 1;
    case Command::kAdd: return argc == 2;
    case Command::kCompareSet: return argc == 3;
    case Command::kWait:
    case Command::kCheck: return argc >= 1 && argc <= kMaxStoreWaitKeys;
    case Command::kDelete: return argc == 1;
  }
  return false;
}

// The largest length argument `i` of command `c` may have.
size_t argument_limit(Command c, uint32_t i) {
  const bool is_key = i == 0 || c == Command::kWait || c == Command::kCheck;
  if (is_key) return kMaxStoreKeyBytes;
  return c == Command::kAdd ? 8 : kMaxStoreValueBytes;
}

}  // namespace

Bytes encode_request(Command command, const std::vector<Bytes>& args) {
  Bytes out;
  out.push_back(static_cast<uint8_t>(command));
  put_u32(out, static_cast<uint32_t>(args.size()));
  for (const Bytes& a : args) {
    put_u32(out, static_cast<uint32_t>(a.size()));
    out.insert(out.end(), a.begin(), a.end());
  }
  return out;
}

Bytes encode_reply(const Bytes& value, bool is_error) {
  Bytes out;
  out.reserve(5 + value.size());
  out.push_back(is_error ? 1 : 0);
  put_u32(out, static_cast<uint32_t>(value.size()));
  out.insert(out.end(), value.begin(), value.end());
  return out;
}

ParseStatus parse_request(const uint8_t* data, size_t n, Request& out, size_t& consumed, std::string& error) {
  if (n < 5) return ParseStatus::kNeedMore;
  const uint8_t raw = data[0];
  if (raw < static_cast<uint8_t>(Command::kSet) || raw > static_cast<uint8_t>(Command::kDelete)) {
    error = "unknown command " + std::to_string(raw);
    return ParseStatus::kInvalid;
  }
  const auto command = static_cast<Command>(raw);
  const uint32_t argc = get_u32(data + 1);
  if (!argument_count_ok(command, argc)) {
    error = "command " + std::to_string(raw) + " with " + std::to_string(argc) + " arguments";
    return ParseStatus::kInvalid;
  }
  // First pass: check every length against its limit; only then copy.
  size_t pos = 5;
  for (uint32_t i = 0; i < argc; ++i) {
    if (n - pos < 4) return ParseStatus::kNeedMore;
    const uint32_t len = get_u32(data + pos);
    if (len > argument_limit(command, i)) {
      error = "argument " + std::to_string(i) + " of " + std::to_string(len) + " bytes exceeds the limit of " +
              std::to_string(argument_limit(command, i));
      return ParseStatus::kInvalid;
    }
    pos += 4;
    if (n - pos < len) return ParseStatus::kNeedMore;
    pos += len;
  }
  out.command = command;
  out.args.assign(argc, {});
  pos = 5;
  for (uint32_t i = 0; i < argc; ++i) {
    const uint32_t len = get_u32(data + pos);
    pos += 4;
    out.args[i].assign(data + pos, data + pos + len);
    pos += len;
  }
  consumed = pos;
  return ParseStatus::kComplete;
}

Bytes encode_i64(int64_t v) {
  Bytes b(8);
  for (int i = 0; i < 8; ++i) b[static_cast<size_t>(i)] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
  return b;
}

int64_t decode_i64(const Bytes& b, const char* what) {
  EMBER_CHECK(b.size() == 8, what, ": expected an 8-byte integer, got ", b.size(), " bytes");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(b[static_cast<size_t>(i)]) << (8 * i);
  return static_cast<int64_t>(v);
}

}  // namespace ember::distributed::wire
