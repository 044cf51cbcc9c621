// One rank of a distributed test (tests/distributed_*.cpp start it): runs the
// scenario named by argv[1] and exits 0 when every check held. Scenarios that
// expect a failure exit 0 when the error they get contains EMBER_TEST_EXPECT.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "ember/distributed/process_group.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember::distributed;

namespace {

int g_failures = 0;

void expect(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "CHECK FAILED: %s\n", what.c_str());
  ++g_failures;
}

std::chrono::milliseconds test_timeout() {
  const char* v = std::getenv("EMBER_TEST_TIMEOUT_MS");
  return std::chrono::milliseconds(v ? std::atoi(v) : 5000);
}

std::shared_ptr<ProcessGroup> init() {
  InitOptions o;
  o.timeout = test_timeout();
  if (const char* m = std::getenv("EMBER_TEST_INIT_METHOD")) o.init_method = m;
  if (const char* b = std::getenv("EMBER_TEST_BACKEND")) o.backend = b;
  return init_process_group(o);
}

bool all_equal(const Tensor& t, double v) { return t.to(kFloat64).eq(v).all().item<bool>(); }

void check_all_reduce(ProcessGroup& pg, DType dtype) {
  const int r = pg.rank(), n = pg.size();
  const std::string name = std::string("all_reduce ") + std::string(dtype_name(dtype));
  Tensor t = full({5}, r + 1, dtype);
  pg.all_reduce(t)->wait();
  expect(all_equal(t, n * (n + 1) / 2), name + " sum");
  t = full({5}, r + 1, dtype);
  pg.all_reduce(t, ReduceOp::MAX)->wait();
  expect(all_equal(t, n), name + " max");
  t = full({5}, r + 1, dtype);
  pg.all_reduce(t, ReduceOp::MIN)->wait();
  expect(all_equal(t, 1), name + " min");
  t = full({5}, r + 1, dtype);
  pg.all_reduce(t, ReduceOp::PRODUCT)->wait();
  double fact = 1;
  for (int i = 1; i <= n; ++i) fact *= i;
  expect(all_equal(t, fact), name + " product");
  if (is_floating_point(dtype)) {
    t = full({5}, 2 * (r + 1), dtype);
    pg.all_reduce(t, ReduceOp::AVG)->wait();
    expect(all_equal(t, n + 1), name + " avg");
  }
}

int collectives() {
  auto pg = init();
  const int r = pg->rank(), n = pg->size();
  for (DType d : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64}) {
    check_all_reduce(*pg, d);
    Tensor b = full({3, 2}, r == n - 1 ? 7 : 0, d);
    pg->broadcast(b, n - 1)->wait();
    expect(all_equal(b, 7), "broadcast");
    std::vector<Tensor> outs;
    for (int i = 0; i < n; ++i) outs.push_back(zeros({2}, d));
    pg->all_gather(outs, full({2}, r * 10, d))->wait();
    for (int i = 0; i < n; ++i) expect(all_equal(outs[static_cast<size_t>(i)], i * 10), "all_gather");
    std::vector<Tensor> ins;
    for (int i = 0; i < n; ++i) ins.push_back(full({4}, i + r, d));
    Tensor out = zeros({4}, d);
    pg->reduce_scatter(out, ins)->wait();
    expect(all_equal(out, n * r + n * (n - 1) / 2), "reduce_scatter");
    // A ring: every rank posts its send before its recv.
    Tensor to_next = full({3}, r, d), from_prev = zeros({3}, d);
    auto s = pg->send(to_next, (r + 1) % n, 3);
    auto q = pg->recv(from_prev, (r + n - 1) % n, 3);
    s->wait();
    q->wait();
    expect(all_equal(from_prev, (r + n - 1) % n), "send/recv");
  }
  // Several collectives in flight at once complete in order.
  std::vector<Tensor> ts;
  std::vector<std::shared_ptr<Work>> works;
  for (int i = 0; i < 4; ++i) ts.push_back(full({1000}, i, kFloat32));
  for (Tensor& t : ts) works.push_back(pg->all_reduce(t));
  works.push_back(pg->barrier());
  for (auto& w : works) w->wait();
  for (size_t i = 0; i < ts.size(); ++i) expect(all_equal(ts[i], static_cast<double>(i) * n), "async all_reduce");
  expect(works.back()->is_completed() && works.back()->is_success(), "is_completed");
  return g_failures == 0 ? 0 : 1;
}

int subgroup() {
  auto pg = init();
  auto g = pg->new_group({0, 2});
  if (pg->rank() == 1) {
    expect(g == nullptr, "a rank outside the group gets nullptr");
  } else {
    expect(g && g->size() == 2 && g->rank() == pg->rank() / 2, "group rank");
    Tensor t = full({4}, pg->rank(), kFloat64);
    g->all_reduce(t)->wait();
    expect(all_equal(t, 2), "subgroup all_reduce");
  }
  Tensor t = ones({2});
  pg->all_reduce(t)->wait();
  expect(all_equal(t, pg->size()), "default group after new_group");
  return g_failures == 0 ? 0 : 1;
}

// Scenarios that must end in an ember::Error containing EMBER_TEST_EXPECT.
int expect_error(const std::function<void()>& body) {
  const char* expected = std::getenv("EMBER_TEST_EXPECT");
  try {
    body();
  } catch (const Error& e) {
    std::fprintf(stderr, "ERROR: %s\n", e.what());
    return expected && std::strstr(e.what(), expected) ? 0 : 3;
  }
  std::fprintf(stderr, "no error\n");
  return 4;
}

void mismatch() {
  auto pg = init();
  Tensor t = ones({4 + pg->rank()});
  pg->all_reduce(t)->wait();
}

// Rank 1 dies (kill -9) or stops (SIGSTOP) before the collective the others run.
void lost_peer(int sig) {
  auto pg = init();
  Tensor t = ones({1000});
  pg->all_reduce(t)->wait();
  if (pg->rank() == 1) ::raise(sig);
  pg->all_reduce(t)->wait();
}

// Rank 0 (which hosts the store) leaves at once after the first collective.
void store_dies() {
  auto pg = init();
  Tensor t = ones({10});
  pg->all_reduce(t)->wait();
  if (pg->rank() == 0) ::_exit(0);
  ::usleep(200 * 1000);
  pg->all_reduce(t)->wait();
}

// For the launcher tests: rank 1 fails at once (exit 7) when asked to; the
// others report their pid and sleep until they are stopped.
int launched(bool rank1_fails) {
  const int rank = std::atoi(std::getenv("RANK"));
  if (rank1_fails && rank == 1) return 7;
  std::printf("pid %d\n", static_cast<int>(::getpid()));
  std::fflush(stdout);
  ::sleep(60);
  return 0;
}

}  // namespace

// ddp_worker.cpp
int ddp_gradients();
int ddp_unused();
int ddp_killed_in_backward();
// trainer_worker.cpp
int trainer_resume();
int trainer_needs_sampler();
int trainer_elastic();
// link_worker.cpp
int link_cut();

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string scenario = argv[1];
  try {
    if (scenario == "collectives") return collectives();
    if (scenario == "subgroup") return subgroup();
    if (scenario == "mismatch") return expect_error(mismatch);
    if (scenario == "killed_peer") return expect_error([] { lost_peer(SIGKILL); });
    if (scenario == "stopped_peer") return expect_error([] { lost_peer(SIGSTOP); });
    if (scenario == "store_dies") return expect_error(store_dies);
    if (scenario == "join") return expect_error([] { init(); });
    if (scenario == "launch_fail") return launched(true);
    if (scenario == "launch_sleep") return launched(false);
    if (scenario == "ddp_gradients") return ddp_gradients();
    if (scenario == "ddp_unused") return ddp_unused();
    if (scenario == "ddp_killed") return ddp_killed_in_backward();
    if (scenario == "trainer_resume") return trainer_resume();
    if (scenario == "trainer_needs_sampler") return trainer_needs_sampler();
    if (scenario == "trainer_elastic") return trainer_elastic();
    if (scenario == "link_cut") return link_cut();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ERROR: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
  return 2;
}
