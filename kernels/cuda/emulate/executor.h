// The emulated devices' work queues. One executor thread runs the queued
// tasks (kernels, copies, memsets, event records) of every stream, each stream
// in order, with CUDA's ordering rules between streams:
//  - the legacy default stream (cudaStream_t nullptr) of a device waits for
//    all work queued before on the device's blocking streams, and they wait
//    for it (streams created with cudaStreamNonBlocking do not);
//  - cudaStreamWaitEvent makes a stream wait for the event's recorded point.
// Work starts when a host thread waits for it, or after Config::lag_ms: a
// program that reads a result without synchronising reads stale data here
// too. Of the tasks whose prerequisites are done, the oldest runs first, or
// the newest under Config::newest_first, which reorders work of different
// streams wherever nothing orders it (so that a missing event wait fails). A task that throws records a fault on its device, reported once by the
// next synchronising call (or cudaGetLastError).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace ember::cuda::emulate {

struct Stream {
  int device = 0;
  bool legacy = false;
  bool blocking = true;  // synchronises with the legacy default stream
  bool destroyed = false;
  uint64_t submitted = 0;  // tasks queued so far; task k (1-based) is done when completed >= k
  uint64_t completed = 0;
};

struct Event {
  int device = 0;
  bool timing = true;
  Stream* stream = nullptr;  // where it was last recorded (nullptr: never)
  uint64_t point = 0;        // the stream's task that marks it
  std::chrono::steady_clock::time_point when{};
};

struct DeviceFault {
  std::string message;
};

// The legacy default stream of `device`.
Stream* legacy_stream(int device);
Stream* create_stream(int device, bool blocking);
// Waits for the stream's queued work, then retires it.
void destroy_stream(Stream* s);
bool is_live(const Stream* s);

// Queues `task` on `s`; returns its number on the stream.
uint64_t enqueue(Stream* s, std::function<void()> task);
// Queues a marker that stamps `e` when the stream reaches it.
void record_event(Event* e, Stream* s);
// Makes later work on `s` wait until `e`'s recorded point has run.
void stream_wait_event(Stream* s, const Event* e);

bool stream_done(const Stream* s);
bool event_done(const Event* e);
void wait_stream(const Stream* s);
void wait_event(const Event* e);
void wait_device(int device);

// The fault recorded on `device` since it was last taken, if any (and clears it).
std::optional<DeviceFault> take_fault(int device);

}  // namespace ember::cuda::emulate
