// Loading the libtorch plugin of `ember bench --vs-torch` (bench_torch_abi.h).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "ember/error.h"
#include "tools/ember/bench.h"
#include "tools/ember/bench_torch_abi.h"

namespace ember::cli::bench {

struct TorchPlugin::Api {
  void* library = nullptr;
  int (*abi_version)() = nullptr;
  const char* (*version)() = nullptr;
  void (*set_threads)(int) = nullptr;
  void* (*prepare)(const char*, const int64_t*, int, const char*, const char*, char*, size_t) = nullptr;
  void (*run)(void*) = nullptr;
  void (*release)(void*) = nullptr;
};

namespace {

// Debian's libtorch calls whatever libblas.so.3 resolves to, by default the
// netlib reference BLAS, 30x slower than OpenBLAS. Loading OpenBLAS's
// libblas.so.3 first makes the plugin's libtorch bind to it (the dynamic
// loader reuses a loaded library of the same soname), as running with
// LD_LIBRARY_PATH at that folder does.
constexpr const char* kOpenBlas = "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3";

std::string default_plugin_path() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("libember_bench_torch.so") : (exe.parent_path() / "libember_bench_torch.so").string();
}

template <class F>
void resolve(void* library, const char* name, F& fn, const std::string& path) {
  fn = reinterpret_cast<F>(dlsym(library, name));
  EMBER_CHECK(fn != nullptr, "bench --vs-torch: ", path, " has no symbol ", name,
              " (not an ember_bench_torch plugin, or one from another ember version)");
}

}  // namespace

TorchPlugin TorchPlugin::load(const std::string& path) {
  TorchPlugin p;
  const char* env = std::getenv("EMBER_BENCH_TORCH");
  p.path_ = !path.empty() ? path : env != nullptr && *env != '\0' ? std::string(env) : default_plugin_path();
  EMBER_CHECK(std::filesystem::exists(p.path_), "bench --vs-torch: no libtorch plugin at ", p.path_,
              " (it is built when CMake finds libtorch: configure with -DEMBER_BENCH_LIBTORCH=ON after "
              "tools/bootstrap.sh bench, or give its path with --torch-plugin or EMBER_BENCH_TORCH)");
  // OpenBLAS reads these when it loads: no AVX2 cap, its own cache sizes.
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("OPENBLAS_L2_SIZE");
  if (std::filesystem::exists(kOpenBlas)) dlopen(kOpenBlas, RTLD_NOW | RTLD_GLOBAL);
  auto api = std::make_shared<Api>();
  api->library = dlopen(p.path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  EMBER_CHECK(api->library != nullptr, "bench --vs-torch: cannot load ", p.path_, ": ", dlerror());
  resolve(api->library, "ember_bench_torch_abi_version", api->abi_version, p.path_);
  EMBER_CHECK(api->abi_version() == EMBER_BENCH_TORCH_ABI_VERSION, "bench --vs-torch: ", p.path_,
              " speaks plugin interface ", api->abi_version(), ", this ember speaks ", EMBER_BENCH_TORCH_ABI_VERSION,
              " (rebuild the plugin)");
  resolve(api->library, "ember_bench_torch_version", api->version, p.path_);
  resolve(api->library, "ember_bench_torch_set_threads", api->set_threads, p.path_);
  resolve(api->library, "ember_bench_torch_prepare", api->prepare, p.path_);
  resolve(api->library, "ember_bench_torch_run", api->run, p.path_);
  resolve(api->library, "ember_bench_torch_release", api->release, p.path_);
  p.version_ = api->version();
  // The library stays loaded until exit: libtorch does not support unloading.
  p.api_ = std::move(api);
  return p;
}

void TorchPlugin::set_threads(int n) const { api_->set_threads(n); }

std::function<void()> TorchPlugin::prepare(const std::string& op, const std::vector<int64_t>& dims,
                                           const std::string& dtype, const std::string& device) const {
  char error[512] = "";
  void* handle = api_->prepare(op.c_str(), dims.data(), static_cast<int>(dims.size()), dtype.c_str(), device.c_str(),
                               error, sizeof error);
  EMBER_CHECK(handle != nullptr, "bench --vs-torch: libtorch cannot run ", op, " ", shape_string(dims), " ",
              dtype, " on ", device, ": ", error);
  std::shared_ptr<void> owned(handle, api_->release);
  return [api = api_, owned] { api->run(owned.get()); };
}

}  // namespace ember::cli::bench
