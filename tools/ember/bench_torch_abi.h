// The C interface between `ember bench --vs-torch` and its libtorch plugin,
// libember_bench_torch.so (bench/torch_plugin.cpp). The ember binary never
// links libtorch: it dlopen()s the plugin, which is built only where CMake
// finds Torch. Plain C types only, so either side can be rebuilt alone; the
// version below changes whenever a signature or a meaning does.
//
// An op and its `dims` mean what they mean in `ember bench`'s op table
// (tools/ember/bench_ops.cpp): "mm" with {M, K, N}, "conv2d" with
// {N, C, H, W, K, R}, ...; dtype is ember's name ("float32").
#pragma once

#include <cstddef>
#include <cstdint>

#define EMBER_BENCH_TORCH_ABI_VERSION 1

extern "C" {
// EMBER_BENCH_TORCH_ABI_VERSION of the plugin.
int ember_bench_torch_abi_version(void);
// The libtorch version it was built against, e.g. "1.13.1".
const char* ember_bench_torch_version(void);
// at::set_num_threads(n).
void ember_bench_torch_set_threads(int n);
// Makes the inputs of one case; returns a handle, or null with a message in
// `error` (an op, dtype or device libtorch cannot run, or any exception).
void* ember_bench_torch_prepare(const char* op, const int64_t* dims, int num_dims, const char* dtype,
                                const char* device, char* error, size_t error_size);
// Runs the case once (and waits for the device).
void ember_bench_torch_run(void* handle);
void ember_bench_torch_release(void* handle);
}
