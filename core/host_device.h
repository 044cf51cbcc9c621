// EMBER_HOST_DEVICE marks a function that CUDA device code calls too (the
// Philox generator, the float -> integer rule): __host__ __device__ under
// nvcc, nothing for the host compiler (the CUDA emulation build included).
#pragma once

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif
