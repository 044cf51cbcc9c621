// Fused programs on a GPU: NVRTC and the driver API (Note [Fused groups on
// CUDA] in cuda_fused_ops.cpp). Real CUDA builds only.
#include <cuda.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/fused_cuda_source.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "kernels/cuda/cuda_fused.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember::cuda {
namespace {

constexpr const char* kKernel = "ember_fused";

// NVRTC's and the driver's entry points, loaded on first use and never
// unloaded (unloading NVRTC strands the memory its runtime allocated at load).
struct Libraries {
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&nvrtcGetPTX) ptx = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  decltype(&cuModuleLoadData) load = nullptr;
  decltype(&cuModuleGetFunction) function = nullptr;
  decltype(&cuLaunchKernel) launch = nullptr;
  decltype(&cuGetErrorName) error_name = nullptr;
  std::string missing;  // why the libraries are not usable, or ""
};

void* open_first(const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (void* lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
  return nullptr;
}

template <class F>
void bind(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (fn == nullptr && missing.empty()) missing = std::string("the symbol ") + name + " is missing";
}

const Libraries& libraries() {
  static const Libraries libs = [] {
    Libraries l;
    std::vector<std::string> nvrtc_names = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
    if (const char* home = std::getenv("CUDA_HOME")) nvrtc_names.push_back(std::string(home) + "/lib64/libnvrtc.so");
    nvrtc_names.push_back("/usr/local/cuda/lib64/libnvrtc.so");
    void* nvrtc = open_first(nvrtc_names);
    void* driver = open_first({"libcuda.so.1", "libcuda.so"});
    if (nvrtc == nullptr)
      l.missing = "NVRTC (libnvrtc.so) is not installed (searched the library path, $CUDA_HOME/lib64 and "
                  "/usr/local/cuda/lib64)";
    else if (driver == nullptr)
      l.missing = "the CUDA driver library (libcuda.so.1) cannot be loaded";
    if (!l.missing.empty()) return l;
    bind(nvrtc, "nvrtcCreateProgram", l.create, l.missing);
    bind(nvrtc, "nvrtcCompileProgram", l.compile, l.missing);
    bind(nvrtc, "nvrtcGetProgramLogSize", l.log_size, l.missing);
    bind(nvrtc, "nvrtcGetProgramLog", l.log, l.missing);
    bind(nvrtc, "nvrtcGetPTXSize", l.ptx_size, l.missing);
    bind(nvrtc, "nvrtcGetPTX", l.ptx, l.missing);
    bind(nvrtc, "nvrtcDestroyProgram", l.destroy, l.missing);
    bind(driver, "cuModuleLoadData", l.load, l.missing);
    bind(driver, "cuModuleGetFunction", l.function, l.missing);
    bind(driver, "cuLaunchKernel", l.launch, l.missing);
    bind(driver, "cuGetErrorName", l.error_name, l.missing);
    return l;
  }();
  EMBER_CHECK(libs.missing.empty(), "_fused_elementwise: a fused group on CUDA is compiled at run time, but ",
              libs.missing);
  return libs;
}

void check_driver(const Libraries& l, CUresult rc, const char* call) {
  if (rc == CUDA_SUCCESS) return;
  const char* name = nullptr;
  l.error_name(rc, &name);
  EMBER_FAIL("_fused_elementwise: CUDA driver call ", call, " failed: ", name ? name : "unknown error", " (",
             static_cast<int>(rc), ")");
}

// PTX of `source` for compute capability `arch` (e.g. 90); NVRTC's log in the error.
std::string compile_ptx(const Libraries& l, const std::string& source, int arch, const std::string& expr) {
  nvrtcProgram prog = nullptr;
  EMBER_CHECK(l.create(&prog, source.c_str(), "ember_fused.cu", 0, nullptr, nullptr) == NVRTC_SUCCESS,
              "_fused_elementwise: nvrtcCreateProgram failed for '", expr, "'");
  const std::string arch_option = "--gpu-architecture=compute_" + std::to_string(arch);
  const char* options[] = {arch_option.c_str()};
  const nvrtcResult rc = l.compile(prog, 1, options);
  std::string ptx;
  if (rc == NVRTC_SUCCESS) {
    size_t size = 0;
    l.ptx_size(prog, &size);
    ptx.assign(size, '\0');
    l.ptx(prog, ptx.data());
  }
  size_t log_size = 0;
  l.log_size(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) l.log(prog, log.data());
  l.destroy(&prog);
  EMBER_CHECK(rc == NVRTC_SUCCESS, "_fused_elementwise: NVRTC could not compile the program '", expr, "' for compute_",
              arch, " (error ", static_cast<int>(rc), "):\n", log);
  return ptx;
}

// The kernel of (program, dtype, device), compiled and loaded on first use.
CUfunction kernel_for(const fused::FusedProgram& p, DType dtype, int device) {
  static std::mutex mu;
  static std::map<std::tuple<std::string, DType, int>, CUfunction> cache;
  const std::string expr = p.str();
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_tuple(expr, dtype, device);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const Libraries& l = libraries();
  int major = 0, minor = 0;
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "_fused_elementwise");
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), "_fused_elementwise");
  EMBER_CUDA_CHECK(cudaFree(nullptr), "_fused_elementwise");  // the runtime's context is current on this device
  const std::string ptx = compile_ptx(l, fused::cuda_source(p, dtype, kKernel), major * 10 + minor, expr);
  CUmodule module = nullptr;
  check_driver(l, l.load(&module, ptx.c_str()), "cuModuleLoadData");
  CUfunction fn = nullptr;
  check_driver(l, l.function(&fn, module, kKernel), "cuModuleGetFunction");
  cache.emplace(key, fn);  // the module stays loaded for the process, as the cache entry does
  return fn;
}

}  // namespace

Tensor launch_fused_program(const fused::FusedProgram& p, const TensorList& inputs, DType dtype, Device device) {
  DimVector shape;
  for (const Tensor& t : inputs) shape = broadcast_shapes(shape, t.sizes(), "_fused_elementwise");
  const bool reduces = p.reduces(), keepdim = reduces && p.code.back().keepdim;
  DimVector out_shape = !reduces ? shape : keepdim ? DimVector(shape.size(), 1) : DimVector();
  int64_t row = 1;
  if (p.reduces_rows()) {
    EMBER_CHECK(!shape.empty(), "_fused_elementwise: '", p.str(), "' reduces the last dim, but the inputs are 0-d");
    row = shape.back();
    out_shape = shape;
    if (keepdim) out_shape.back() = 1;
    else out_shape.pop_back();
  }
  Tensor out = make_empty(out_shape, dtype, device);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const bool mean = reduces && p.code.back().op == fused::FusedOp::Mean;
  if (n == 0) {  // the sum of nothing is 0, its mean NaN, as in eager (no rows: nothing to fill)
    if (reduces && out.numel() > 0) op::fill_.call(out, Scalar(mean ? std::numeric_limits<double>::quiet_NaN() : 0.0));
    return out;
  }
  if (reduces && !p.reduces_rows()) op::fill_.call(out, Scalar(0.0));  // the kernel adds into out[0]

  // Shape (innermost dim first) and each input's broadcast strides, in elements, on the device.
  const int nd = static_cast<int>(shape.size());
  std::vector<int64_t> meta;
  for (int d = nd - 1; d >= 0; --d) meta.push_back(shape[static_cast<size_t>(d)]);
  for (const Tensor& t : inputs)
    for (int d = nd - 1; d >= 0; --d) {
      const int64_t td = d - (nd - t.dim());
      meta.push_back(td < 0 || t.size(td) == 1 ? 0 : t.stride(td));
    }
  meta.push_back(0);  // never empty
  Tensor host = make_empty({static_cast<int64_t>(meta.size())}, DType::Int64, Device::cpu());
  std::copy(meta.begin(), meta.end(), reinterpret_cast<int64_t*>(host.impl()->data()));
  const Tensor dev = host.to(device);
  const auto* shape_ptr = reinterpret_cast<const long long*>(dev.impl()->data());
  const long long* strides_ptr = shape_ptr + nd;

  const CUfunction fn = kernel_for(p, dtype, device.index);
  long long numel = n, row_len = row;
  int ndim = nd;
  void* out_ptr = out.impl()->data();
  std::vector<const void*> in_ptrs;
  for (const Tensor& t : inputs) in_ptrs.push_back(t.impl()->data());
  std::vector<void*> params = {&numel, &ndim, &shape_ptr, &strides_ptr, &out_ptr, &row_len};
  for (const void*& ptr : in_ptrs) params.push_back(&ptr);
  // A last-dim reduction: one block of kRowThreads per row; else a thread per element.
  const unsigned threads = p.reduces_rows() ? fused::kRowThreads : 256;
  const int64_t wanted = p.reduces_rows() ? n / row : (n + threads - 1) / threads;
  const auto blocks =
      static_cast<unsigned>(std::clamp<int64_t>(wanted, 1, int64_t{32} * multiprocessor_count(device.index)));
  const cudaStream_t stream = current_cuda_stream();
  const Libraries& l = libraries();
  check_driver(l, l.launch(fn, blocks, 1, 1, threads, 1, 1, 0, stream, params.data(), nullptr),
               "cuLaunchKernel");
  check_launch("_fused_elementwise", kKernel, stream);
  return out;
}

}  // namespace ember::cuda
