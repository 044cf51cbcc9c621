// How DistributedDataParallel buckets parameters, and its printed plan.
#include <gtest/gtest.h>
#include <unistd.h>

#include "distributed/ddp_buckets.h"
#include "ember/distributed/process_group.h"
#include "ember/ember.h"
#include "ember/nn/parallel/distributed.h"

namespace ember::distributed {
namespace {

using Buckets = std::vector<std::vector<size_t>>;

TEST(DistributedBuckets, FirstBucketSmallThenCapAndDtypeSplits) {
  // Reverse registration order of five parameters; 400-byte first cap, 1000 after.
  const std::vector<size_t> order = {4, 3, 2, 1, 0};
  const std::vector<size_t> bytes = {600, 600, 300, 300, 500};
  const std::vector<DType> f32(5, kFloat32);
  EXPECT_EQ(assign_buckets(order, bytes, f32, 400, 1000), (Buckets{{4}, {3, 2, 1}, {0}}));
  std::vector<DType> mixed = f32;
  mixed[2] = kFloat64;
  EXPECT_EQ(assign_buckets(order, bytes, mixed, 400, 1000), (Buckets{{4}, {3}, {2}, {1, 0}}));
  EXPECT_EQ(assign_buckets({}, {}, {}, 400, 1000), Buckets{});
}

struct TwoLayersImpl : nn::Module {
  nn::Linear a{nullptr}, b{nullptr};
  TwoLayersImpl() {
    a = register_module("a", nn::Linear(256, 256));  // 256 KiB + 1 KiB
    b = register_module("b", nn::Linear(256, 4));
  }
  Tensor forward(const Tensor& x) { return b(a(x).relu()); }
};
EMBER_MODULE(TwoLayers);

TEST(DistributedBuckets, PlanIsPrintableAndRebuiltAfterTheFirstBackward) {
  std::string path = ::testing::TempDir() + "ember_plan_XXXXXX";
  ::close(::mkstemp(path.data()));
  ::unlink(path.c_str());
  InitOptions o;
  o.rank = 0;
  o.world_size = 1;
  o.init_method = std::string("file://") + path;
  init_process_group(o);
  {
    TwoLayers net;
    nn::parallel::DistributedDataParallelOptions options;
    options.first_bucket_cap_mb = 0.001;
    options.bucket_cap_mb = 0.2;
    nn::parallel::DistributedDataParallel ddp(net, options);
    EXPECT_EQ(ddp.bucket_plan(),
              "DistributedDataParallel: 2 bucket(s), 4 parameters, in reverse registration order\n"
              "  bucket 0: 0.004 MiB float32, 2 parameter(s): b.bias b.weight\n"
              "  bucket 1: 0.251 MiB float32, 2 parameter(s): a.bias a.weight\n");
    ddp.forward([&] { return net(ones({2, 256})).sum(); }).backward();
    const std::string plan = ddp.bucket_plan();
    EXPECT_NE(plan.find("in the order gradients became ready"), std::string::npos) << plan;
    EXPECT_GE(ddp.overlap_fraction(), 0.0);
    EXPECT_LE(ddp.overlap_fraction(), 1.0);
  }
  destroy_process_group();
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace ember::distributed
