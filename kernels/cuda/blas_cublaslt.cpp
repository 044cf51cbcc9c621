// blas::gemm through cuBLASLt (real build only; Note [GEMM on CUDA] in
// blas.h). One handle per device, made on first use; a matmul descriptor
// and four matrix layouts per call (cheap host objects); the first algorithm
// of the library's heuristic, with a workspace from ember's caching
// allocator on the current stream.
#include <cublasLt.h>

#include <array>
#include <cstdint>
#include <mutex>

#include "ember/device.h"
#include "ember/error.h"
#include "kernels/cuda/blas_backends.h"
#include "kernels/cuda/cuda_allocator.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember::cuda::blas {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // what cuBLASLt's Hopper kernels may use

void check_status(cublasStatus_t status, const char* call, const char* op) {
  EMBER_CHECK(status == CUBLAS_STATUS_SUCCESS, op, ": cuBLASLt call ", call, " failed: ",
              cublasLtGetStatusString(status));
}
#define EMBER_CUBLASLT_CHECK(call, op) check_status((call), #call, op)

cublasLtHandle_t handle_for(int device, const char* op) {
  static std::mutex mutex;
  static std::array<cublasLtHandle_t, kMaxDeviceIndex + 1> handles{};
  const std::lock_guard<std::mutex> lock(mutex);
  cublasLtHandle_t& h = handles.at(static_cast<size_t>(device));
  if (h == nullptr) EMBER_CUBLASLT_CHECK(cublasLtCreate(&h), op);  // kept for the process's lifetime
  return h;
}

cudaDataType_t data_type(DType t) {
  switch (t) {
    case DType::Float64: return CUDA_R_64F;
    case DType::Float16: return CUDA_R_16F;
    case DType::BFloat16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

cublasLtEpilogue_t epilogue_of(Epilogue e) {
  switch (e) {
    case Epilogue::Bias: return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::Relu: return CUBLASLT_EPILOGUE_RELU;
    case Epilogue::BiasRelu: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilogue::GeluTanh: return CUBLASLT_EPILOGUE_GELU;
    case Epilogue::BiasGeluTanh: return CUBLASLT_EPILOGUE_GELU_BIAS;
    default: return CUBLASLT_EPILOGUE_DEFAULT;
  }
}

cublasOperation_t operation(Transpose t) { return t == Transpose::No ? CUBLAS_OP_N : CUBLAS_OP_T; }

// RAII owners of the per-call descriptors.
struct MatmulDesc {
  cublasLtMatmulDesc_t desc = nullptr;
  ~MatmulDesc() { if (desc) cublasLtMatmulDescDestroy(desc); }
};
struct Layout {
  cublasLtMatrixLayout_t layout = nullptr;
  ~Layout() { if (layout) cublasLtMatrixLayoutDestroy(layout); }
};
struct Preference {
  cublasLtMatmulPreference_t pref = nullptr;
  ~Preference() { if (pref) cublasLtMatmulPreferenceDestroy(pref); }
};

template <class V>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const V& value, const char* op) {
  EMBER_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)), op);
}

void make_layout(Layout& l, DType dtype, int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride,
                 const char* op) {
  EMBER_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&l.layout, data_type(dtype), static_cast<uint64_t>(rows),
                                                  static_cast<uint64_t>(cols), ld), op);
  if (batch > 1) {
    const auto count = static_cast<int32_t>(batch);
    EMBER_CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(l.layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                          sizeof(count)), op);
    EMBER_CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(l.layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                          &stride, sizeof(stride)), op);
  }
}

// The alignment every matrix of a batch has (the library assumes 256 bytes
// unless told less, and a view may start anywhere).
uint32_t alignment(const void* p, int64_t batch, int64_t stride, DType dtype) {
  uint64_t bits = reinterpret_cast<uintptr_t>(p) | 256;
  if (batch > 1) bits |= static_cast<uint64_t>(stride) * element_size(dtype);
  return static_cast<uint32_t>(bits & (~bits + 1));  // the lowest set bit
}

void set_pref(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, uint32_t value,
              const char* op) {
  EMBER_CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)), op);
}

}  // namespace

bool cublaslt_gemm(const char* op, const Gemm& g, int device) {
  const bool f64 = g.dtype == DType::Float64;
  MatmulDesc desc;
  EMBER_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&desc.desc, f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
                                                f64 ? CUDA_R_64F : CUDA_R_32F), op);
  set_desc(desc.desc, CUBLASLT_MATMUL_DESC_TRANSA, operation(g.trans_a), op);
  set_desc(desc.desc, CUBLASLT_MATMUL_DESC_TRANSB, operation(g.trans_b), op);
  set_desc(desc.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue_of(g.epilogue), op);
  if (has_bias(g.epilogue)) set_desc(desc.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, g.bias, op);

  Layout la, lb, lc;
  const bool ta = g.trans_a == Transpose::Yes, tb = g.trans_b == Transpose::Yes;
  make_layout(la, g.dtype, ta ? g.k : g.m, ta ? g.m : g.k, g.lda, g.batch, g.stride_a, op);
  make_layout(lb, g.dtype, tb ? g.n : g.k, tb ? g.k : g.n, g.ldb, g.batch, g.stride_b, op);
  make_layout(lc, g.dtype, g.m, g.n, g.ldc, g.batch, g.stride_c, op);

  Preference pref;
  EMBER_CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&pref.pref), op);
  const uint64_t workspace_bytes = kWorkspaceBytes;
  EMBER_CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                            &workspace_bytes, sizeof(workspace_bytes)), op);
  set_pref(pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment(g.a, g.batch, g.stride_a, g.dtype), op);
  set_pref(pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment(g.b, g.batch, g.stride_b, g.dtype), op);
  if (g.dtype == DType::Float16 || g.dtype == DType::BFloat16) {
    // Split-k partial sums in float, never stored in the 16-bit output type: C is rounded once (Note [GEMM on CUDA]).
    set_pref(pref.pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
             CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE, op);
  }
  const uint32_t align_c = alignment(g.c, g.batch, g.stride_c, g.dtype);
  set_pref(pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_c, op);
  set_pref(pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_c, op);
  const cublasLtHandle_t handle = handle_for(device, op);
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  EMBER_CUBLASLT_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, desc.desc, la.layout, lb.layout, lc.layout, lc.layout,
                                                      pref.pref, 1, &best, &found), op);
  if (found == 0) return false;

  // The workspace goes back to the cache when this returns; stream order keeps its reuse safe.
  const DataPtr workspace = allocate_on_device(best.workspaceSize, device);
  const float alpha32 = static_cast<float>(g.alpha), beta32 = static_cast<float>(g.beta);
  const void* alpha = f64 ? static_cast<const void*>(&g.alpha) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&g.beta) : &beta32;
  EMBER_CUBLASLT_CHECK(cublasLtMatmul(handle, desc.desc, alpha, g.a, la.layout, g.b, lb.layout, beta, g.c,
                                      lc.layout, g.c, lc.layout, &best.algo, workspace.get(), best.workspaceSize,
                                      current_cuda_stream()), op);
  return true;
}

}  // namespace ember::cuda::blas
