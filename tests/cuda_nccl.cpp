// The nccl backend on one rank (Note [NCCL groups]): every collective of a
// group of one, on CUDA tensors of each reducible dtype; CPU tensors are
// refused. Label cuda; skips without a device. The emulation build
// (cuda-emu) has no NCCL: there the backend must say so.
#include <gtest/gtest.h>

#include "ember/cuda.h"
#include "ember/distributed/process_group.h"
#include "ember/error.h"
#include "ember/ops.h"
#include "tests/distributed_processes.h"

namespace ember {
namespace {

distributed::InitOptions one_rank() {
  distributed::InitOptions o;
  o.backend = "nccl";
  o.rank = 0;
  o.world_size = 1;
  o.init_method = "tcp://127.0.0.1:" + std::to_string(test::free_port());
  o.timeout = std::chrono::seconds(30);
  return o;
}

#ifdef EMBER_CUDA_EMULATE
TEST(CudaNccl, EmulationBuildHasNoNccl) {
  try {
    distributed::init_process_group(one_rank());
    ADD_FAILURE() << "the nccl backend started without NCCL";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built without CUDA/NCCL"), std::string::npos) << e.what();
  }
}
#else
bool all_equal(const Tensor& t, double v) { return t.cpu().to(kFloat64).eq(v).all().item<bool>(); }

TEST(CudaNccl, CollectivesOfAGroupOfOne) {
  if (!cuda_is_available()) GTEST_SKIP() << "no CUDA device";
  auto pg = distributed::init_process_group(one_rank());
  EXPECT_EQ(pg->backend_name(), "nccl");
  for (DType d : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64}) {
    Tensor t = full({5}, 3, d).cuda();
    pg->all_reduce(t)->wait();
    EXPECT_TRUE(all_equal(t, 3)) << d;
    pg->all_reduce(t, distributed::ReduceOp::MAX)->wait();
    EXPECT_TRUE(all_equal(t, 3)) << d;
    if (is_floating_point(d)) {
      auto work = pg->all_reduce(t, distributed::ReduceOp::AVG);
      work->wait();
      EXPECT_TRUE(work->is_completed() && work->is_success());
      EXPECT_TRUE(all_equal(t, 3)) << d;
    }
    Tensor b = full({2, 3}, 7, d).cuda();
    pg->broadcast(b, 0)->wait();
    EXPECT_TRUE(all_equal(b, 7)) << d;
    std::vector<Tensor> outs = {zeros({4}, d).cuda()};
    pg->all_gather(outs, full({4}, 2, d).cuda())->wait();
    EXPECT_TRUE(all_equal(outs[0], 2)) << d;
    Tensor out = zeros({4}, d).cuda();
    pg->reduce_scatter(out, {full({4}, 5, d).cuda()})->wait();
    EXPECT_TRUE(all_equal(out, 5)) << d;
  }
  pg->barrier()->wait();
  Tensor host = ones({3});
  try {
    pg->all_reduce(host);
    ADD_FAILURE() << "a CPU tensor was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the nccl backend takes CUDA tensors on cuda:"), std::string::npos) << e.what();
  }
  distributed::destroy_process_group();
}
#endif

}  // namespace
}  // namespace ember
