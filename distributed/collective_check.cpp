#include <algorithm>
#include <sstream>
#include <thread>

#include "distributed/process_group_impl.h"
#include "ember/error.h"

namespace ember::distributed {

namespace {

std::string seq_key(const char* what, uint64_t seq, int rank) {
  return std::string("ember/") + what + "/" + std::to_string(seq) + "/" + std::to_string(rank);
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::ostringstream os;
  for (size_t i = 0; i < ranks.size(); ++i) os << (i ? ", " : "") << ranks[i];
  return os.str();
}

// The ranks whose `what` key for `seq` does not appear within `timeout`.
// Polls each missing key (1 ms, doubling to 20 ms), so what was seen stays
// known even if the store goes away meanwhile (rank 0 leaving on its error).
std::vector<int> absent_ranks(const char* what, uint64_t seq, Store& store, int size,
                              std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<char> seen(static_cast<size_t>(size), 0);
  int missing = size;
  auto pause = std::chrono::milliseconds(1);
  try {
    while (true) {
      for (int r = 0; r < size; ++r) {
        if (seen[static_cast<size_t>(r)] || !store.check({seq_key(what, seq, r)})) continue;
        seen[static_cast<size_t>(r)] = 1;
        --missing;
      }
      if (missing == 0 || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(20));
    }
  } catch (const Error&) {
    // The store is gone: report what was not seen before.
  }
  std::vector<int> absent;
  for (int r = 0; r < size; ++r)
    if (!seen[static_cast<size_t>(r)]) absent.push_back(r);
  return absent;
}

}  // namespace

std::string Collective::fingerprint() const {
  std::ostringstream os;
  os << op;
  if (has_reduce) os << "(" << reduce_op_name(reduce) << ")";
  if (root >= 0) os << "(root " << root << ")";
  os << " " << dtype << " [";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

std::string Collective::describe() const {
  std::ostringstream os;
  os << op << " #" << seq << " (" << fingerprint() << ")";
  return os.str();
}

std::optional<std::string> check_sizes(const Collective& c, const std::function<void(int64_t*, size_t)>& all_reduce_max) {
  // Each field and its negation: one max gives every field's max and min.
  const int64_t fields[4] = {c.op_code,
                             static_cast<int64_t>(c.dtype), c.numel, c.root};
  int64_t h[8];
  for (int i = 0; i < 4; ++i) {
    h[i] = fields[i];
    h[4 + i] = -fields[i];
  }
  all_reduce_max(h, 8);
  bool same = true;
  for (int i = 0; i < 4; ++i) same = same && h[i] == -h[4 + i];
  if (same) return std::nullopt;
  std::ostringstream os;
  os << c.op << ": the ranks disagree on collective #" << c.seq << ": this rank runs " << c.fingerprint();
  if (h[2] != -h[6]) os << "; element counts across ranks range over [" << -h[6] << ", " << h[2] << "]";
  if (h[0] != -h[4] || h[1] != -h[5] || h[3] != -h[7]) os << "; the op, dtype or root also differs";
  os << " (EMBER_DISTRIBUTED_DEBUG=DETAIL prints every rank's fingerprint)";
  return os.str();
}

std::optional<std::string> check_fingerprints(const Collective& c, Store& store, int rank, int size,
                                              std::chrono::milliseconds timeout) {
  const std::string mine = c.fingerprint();
  store.set(seq_key("fingerprint", c.seq, rank), mine);
  const std::vector<int> absent = absent_ranks("fingerprint", c.seq, store, size, timeout);
  EMBER_CHECK(absent.empty(), c.op, ": rank(s) ", join_ranks(absent), " did not reach collective #", c.seq,
              " within ", timeout.count(), " ms (this rank, ", rank, ", runs ", mine, ")");
  const std::string first = store.get_string(seq_key("fingerprint", c.seq, 0));
  for (int r = 1; r < size; ++r) {
    const std::string theirs = store.get_string(seq_key("fingerprint", c.seq, r));
    if (theirs != first)
      return std::string(c.op) + ": collective #" + std::to_string(c.seq) + " differs across ranks: rank 0 runs " +
             first + ", rank " + std::to_string(r) + " runs " + theirs;
  }
  return std::nullopt;
}

void join_rendezvous(Store& store, int rank, int size, std::chrono::milliseconds timeout, const std::string& what) {
  store.set(seq_key("joined", 0, rank), "1");
  const std::vector<int> absent =
      absent_ranks("joined", 0, store, size, timeout);
  EMBER_CHECK(absent.empty(), what, ": rank(s) ", join_ranks(absent), " of ", size, " did not join within ",
              timeout.count(), " ms (this is rank ", rank, ")");
}

std::string diagnose_missing_ranks(uint64_t seq, Store& store, int rank, int size, std::chrono::milliseconds grace) {
  try {
    store.set(seq_key("arrived", seq, rank), "1");
  } catch (const Error&) {
    return "the store is unreachable too (its server runs in rank 0)";
  }
  const std::vector<int> absent =
      absent_ranks("arrived", seq, store, size, grace);
  if (absent.empty()) return "every rank reached it";
  return "rank(s) " + join_ranks(absent) + " did not reach it";
}

}  // namespace ember::distributed
