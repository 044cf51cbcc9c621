// The link-cut scenario of the distributed worker (tests/distributed_netns.cpp
// runs its ranks in two network namespaces): one all-reduce across the link,
// then DDP training until the link is cut, which must end in an ember::Error.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "ember/distributed/process_group.h"
#include "ember/ember.h"
#include "ember/nn/parallel/distributed.h"

using namespace ember;
using namespace ember::distributed;

// Exits 0 when training ended in an ember::Error (printed as "ERROR: ..."),
// 3 on another exception, 4 when no error came within 3000 steps.
int link_cut() {
  InitOptions o;
  o.timeout = std::chrono::milliseconds(std::atoi(std::getenv("EMBER_TEST_TIMEOUT_MS")));
  try {
    auto pg = init_process_group(o);
    Tensor t = ones({1000});
    pg->all_reduce(t)->wait();
    if (!t.eq(pg->size()).all().item<bool>()) return 1;
    nn::Linear net(32, 8);
    nn::parallel::DistributedDataParallel ddp(net);
    // Tell the test that the collective succeeded and training runs.
    std::ofstream(std::string(std::getenv("EMBER_TEST_DIR")) + "/ready" + std::to_string(pg->rank())) << "1";
    std::fprintf(stderr, "rank %d: all_reduce across the link ok\n", pg->rank());
    for (int step = 0; step < 3000; ++step) {
      const Tensor x = randn({4, 32});
      ddp.forward([&] {
        const Tensor y = net(x);
        return (y * y).mean();
      }).backward();
      ::usleep(10 * 1000);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "ERROR: %s\n", e.what());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "OTHER EXCEPTION: %s\n", e.what());
    return 3;
  }
  return 4;
}
