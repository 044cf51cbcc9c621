// init_process_group: the store an init_method names, the world from the
// launcher's environment, and the default group.
#include <unistd.h>

#include <charconv>
#include <mutex>

#include "distributed/gloo_process_group.h"
#include "distributed/mpi_process_group.h"
#ifdef EMBER_WITH_NCCL
#include "distributed/nccl_process_group.h"
#include "ember/cuda.h"
#endif
#include "ember/distributed/environment.h"
#include "ember/distributed/process_group.h"
#include "ember/error.h"

namespace ember::distributed {

namespace {

std::mutex g_mu;
std::shared_ptr<ProcessGroup> g_default;

struct Address {
  std::string host;
  int port = -1;
};

Address parse_tcp(const std::string& rest, const std::string& method) {
  const size_t colon = rest.rfind(':');
  EMBER_CHECK(colon != std::string::npos && colon > 0, "init_process_group: init_method '", method,
              "' must be tcp://host:port");
  Address a;
  a.host = rest.substr(0, colon);
  if (a.host.size() > 2 && a.host.front() == '[' && a.host.back() == ']') a.host = a.host.substr(1, a.host.size() - 2);
  const std::string port = rest.substr(colon + 1);
  const auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
  EMBER_CHECK(ec == std::errc() && p == port.data() + port.size() && a.port >= 1 && a.port <= 65535,
              "init_process_group: the port in '", method, "' must be an integer in [1, 65535]");
  return a;
}

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// The address this rank's Gloo device listens on: EMBER_GLOO_HOSTNAME, or
// loopback when the master is local, or the machine's host name.
std::string gloo_hostname(const std::string& master_host) {
  if (const char* h = std::getenv("EMBER_GLOO_HOSTNAME")) return h;
  if (master_host.empty() || is_loopback(master_host)) return "127.0.0.1";
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// The store `method` names, for rank `rank`; sets `master_host` for TCP.
std::shared_ptr<Store> make_store(const std::string& method, const WorldInfo& world,
                                  std::chrono::milliseconds timeout, std::string& master_host) {
  if (method.rfind("file://", 0) == 0) return std::make_shared<FileStore>(method.substr(7), timeout);
  Address a;
  if (method == "env://") {
    EMBER_CHECK(!world.master_addr.empty() && world.master_port > 0,
                "init_process_group: init_method env:// needs MASTER_ADDR and MASTER_PORT (ember launch and "
                "torchrun set them; with mpirun or srun, export them)");
    a = {world.master_addr, world.master_port};
  } else {
    EMBER_CHECK(method.rfind("tcp://", 0) == 0, "init_process_group: init_method '", method,
                "' is not env://, tcp://host:port or file://path");
    a = parse_tcp(method.substr(6), method);
  }
  master_host = a.host;
  TCPStoreOptions o;
  o.port = a.port;
  o.is_server = world.rank == 0;
  o.timeout = timeout;
  return std::make_shared<TCPStore>(a.host, o);
}

}  // namespace

std::shared_ptr<ProcessGroup> init_process_group(const InitOptions& options) {
  std::lock_guard<std::mutex> lock(g_mu);
  EMBER_CHECK(!g_default, "init_process_group: the default process group is already initialised "
              "(destroy_process_group() first)");
  EMBER_CHECK(options.timeout.count() > 0, "init_process_group: the timeout must be positive, got ",
              options.timeout.count(), " ms");
  EMBER_CHECK(options.backend == "gloo" || options.backend == "mpi" || options.backend == "nccl",
              "init_process_group: unknown backend '", options.backend, "' (expected gloo, mpi or nccl)");
#ifndef EMBER_WITH_NCCL
  EMBER_CHECK(options.backend != "nccl", "init_process_group: backend 'nccl' (CUDA tensors) needs ember built with "
              "CUDA and NCCL, and this ember was built without CUDA/NCCL; use gloo or mpi for CPU tensors");
#endif
  std::string master_host;
  if (options.backend == "mpi") {
    // MPI knows the world; a store (for DETAIL checks and naming missing
    // ranks) only when the init method can make one.
    const auto [rank, size] = mpi_world();
    WorldInfo world = resolve_world(rank, size);
    std::shared_ptr<Store> store;
    if (options.init_method != "env://" || (!world.master_addr.empty() && world.master_port > 0))
      store = std::make_shared<PrefixStore>("default",
                                            make_store(options.init_method, world, options.timeout, master_host));
    g_default = make_mpi_process_group(options.timeout, std::move(store));
    return g_default;
  }
  const WorldInfo world = resolve_world(options.rank, options.world_size);
  std::shared_ptr<Store> store = make_store(options.init_method, world, options.timeout, master_host);
#ifdef EMBER_WITH_NCCL
  if (options.backend == "nccl") {
    const int devices = cuda_device_count();
    EMBER_CHECK(devices > 0, "init_process_group: backend 'nccl' needs a CUDA device, and none is usable");
    // One device per rank of this node: LOCAL_RANK's (mod the devices here), else the current one.
    const int device = world.local_rank >= 0 ? world.local_rank % devices : cuda_current_device();
    g_default = std::make_shared<NcclProcessGroup>(std::make_shared<PrefixStore>("default", store), world.rank,
                                                   world.world_size, options.timeout, device);
    return g_default;
  }
#endif
  g_default = std::make_shared<GlooProcessGroup>(std::make_shared<PrefixStore>("default", store), world.rank,
                                                 world.world_size, options.timeout, gloo_hostname(master_host));
  return g_default;
}

bool is_initialized() {
  std::lock_guard<std::mutex> lock(g_mu);
  return static_cast<bool>(g_default);
}

std::shared_ptr<ProcessGroup> get_default_group() {
  std::lock_guard<std::mutex> lock(g_mu);
  EMBER_CHECK(g_default, "distributed: no default process group (call init_process_group first)");
  return g_default;
}

int get_rank() { return get_default_group()->rank(); }
int get_world_size() { return get_default_group()->size(); }
std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks) { return get_default_group()->new_group(ranks); }

void destroy_process_group() {
  std::shared_ptr<ProcessGroup> pg;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    pg = std::move(g_default);
  }
}

}  // namespace ember::distributed
