// The launchers' environment contract (ember/distributed/environment.h) and
// init_process_group's argument errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <functional>
#include <map>

#include "ember/distributed/environment.h"
#include "ember/distributed/process_group.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::distributed {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& n) -> std::optional<std::string> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(DistributedEnvironment, TorchrunContract) {
  const WorldInfo w = resolve_world(-1, -1,
                                    env_of({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"},
                                            {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "node0"},
                                            {"MASTER_PORT", "29500"}}));
  EXPECT_EQ(w.rank, 3);
  EXPECT_EQ(w.world_size, 4);
  EXPECT_EQ(w.local_rank, 1);
  EXPECT_EQ(w.local_world_size, 2);
  EXPECT_EQ(w.master_addr, "node0");
  EXPECT_EQ(w.master_port, 29500);
}

TEST(DistributedEnvironment, OpenMpiAndSlurmContracts) {
  const WorldInfo m = resolve_world(-1, -1,
                                    env_of({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "3"},
                                            {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}}));
  EXPECT_EQ(m.rank, 2);
  EXPECT_EQ(m.world_size, 3);
  EXPECT_EQ(m.local_world_size, 1);
  EXPECT_EQ(m.master_port, -1);
  const WorldInfo s = resolve_world(-1, -1, env_of({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "1"}}));
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.world_size, 2);
  EXPECT_EQ(s.local_rank, 1);
  // Sources that agree are fine; explicit values alone are enough.
  EXPECT_EQ(resolve_world(1, 2, env_of({{"RANK", "1"}, {"SLURM_PROCID", "1"}})).rank, 1);
  EXPECT_EQ(resolve_world(0, 1, env_of({})).world_size, 1);
}

TEST(DistributedEnvironment, MissingAndContradictoryValuesAreNamed) {
  EXPECT_NE(error_of([] { resolve_world(-1, 2, env_of({})); }).find("no rank given"), std::string::npos);
  EXPECT_NE(error_of([] { resolve_world(0, -1, env_of({})); }).find("no world size given"), std::string::npos);
  EXPECT_NE(error_of([] { resolve_world(-1, -1, env_of({{"RANK", "1"}, {"OMPI_COMM_WORLD_RANK", "0"}, {"WORLD_SIZE", "2"}})); })
                .find("the rank is contradictory: RANK=1 but OMPI_COMM_WORLD_RANK=0"),
            std::string::npos);
  EXPECT_NE(error_of([] { resolve_world(2, -1, env_of({{"RANK", "1"}, {"WORLD_SIZE", "4"}})); })
                .find("the explicit rank=2 but RANK=1"),
            std::string::npos);
  EXPECT_NE(error_of([] { resolve_world(-1, -1, env_of({{"RANK", "x1"}, {"WORLD_SIZE", "2"}})); })
                .find("RANK='x1' is not an integer"),
            std::string::npos);
  EXPECT_NE(error_of([] { resolve_world(2, 2, env_of({})); }).find("rank 2 is outside [0, 2)"), std::string::npos);
  EXPECT_NE(error_of([] { resolve_world(0, 1, env_of({{"MASTER_PORT", "70000"}})); })
                .find("MASTER_PORT=70000 is outside [1, 65535]"),
            std::string::npos);
  EXPECT_NE(error_of([] { resolve_world(0, 2, env_of({{"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}})); })
                .find("local rank 2 is outside [0, 2)"),
            std::string::npos);
}

#ifndef EMBER_WITH_CUDA
TEST(DistributedInit, NcclInACpuBuildSaysSo) {
  InitOptions o;
  o.rank = 0;
  o.world_size = 1;
  o.backend = "nccl";
  EXPECT_NE(error_of([&] { init_process_group(o); }).find("this ember was built without CUDA/NCCL"), std::string::npos);
  EXPECT_FALSE(is_initialized());
}
#endif

TEST(DistributedInit, BadOptionsAreNamed) {
  InitOptions o;
  o.rank = 0;
  o.world_size = 1;
  o.backend = "carrier-pigeon";
  EXPECT_NE(error_of([&] { init_process_group(o); }).find("unknown backend 'carrier-pigeon' (expected gloo, mpi or nccl)"),
            std::string::npos);
  o.backend = "gloo";
  o.init_method = "smoke://signals";
  EXPECT_NE(error_of([&] { init_process_group(o); }).find("is not env://, tcp://host:port or file://path"),
            std::string::npos);
  o.init_method = "tcp://127.0.0.1:notaport";
  EXPECT_NE(error_of([&] { init_process_group(o); }).find("must be an integer in [1, 65535]"), std::string::npos);
  EXPECT_FALSE(is_initialized());
  EXPECT_NE(error_of([] { get_default_group(); }).find("no default process group"), std::string::npos);
}

TEST(DistributedInit, SingleRankGroupOverFileStore) {
  std::string path = ::testing::TempDir() + "ember_init_XXXXXX";
  ::close(::mkstemp(path.data()));
  ::unlink(path.c_str());
  InitOptions o;
  o.rank = 0;
  o.world_size = 1;
  o.init_method = std::string("file://") + path;
  o.timeout = std::chrono::seconds(5);
  auto pg = init_process_group(o);
  Tensor t = full({3}, 2.0);
  pg->all_reduce(t, ReduceOp::AVG)->wait();
  EXPECT_TRUE(t.eq(2.0).all().item<bool>());
  EXPECT_EQ(get_world_size(), 1);
  destroy_process_group();
  EXPECT_FALSE(is_initialized());
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace ember::distributed
