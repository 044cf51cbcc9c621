// The emulated machine, read once from the environment:
//   EMBER_CUDA_EMULATE_DEVICES  number of devices (default 2)
//   EMBER_CUDA_EMULATE_SMS      multiprocessors per device (default 1, so
//                               grid-stride loops take several passes)
//   EMBER_CUDA_EMULATE_MEMORY_MB  memory per device (default 8192)
//   EMBER_CUDA_EMULATE_LAG_MS   how long queued work waits before it starts
//                               when no host thread is waiting (default 2), so a
//                               missing synchronisation reads stale data
//   EMBER_CUDA_EMULATE_SCHEDULE  which ready task of all streams runs first:
//                               "oldest" (default, the order the host queued
//                               them) or "newest", which runs work of different
//                               streams out of queueing order wherever no event
//                               or stream rule orders it, so a missing
//                               cudaStreamWaitEvent or record_stream shows up
#pragma once

#include <cstddef>

namespace ember::cuda::emulate {

struct Config {
  int devices;
  int multiprocessors;
  size_t memory_bytes;
  int lag_ms;
  bool newest_first;  // EMBER_CUDA_EMULATE_SCHEDULE=newest
};

const Config& config();

}  // namespace ember::cuda::emulate
