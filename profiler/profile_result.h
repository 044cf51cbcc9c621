// What Profile::stop() collected: read by the table and trace writers.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ember/profiler.h"

namespace ember::profiler {

struct Profile::Result {
  std::vector<Event> events;                  // per thread, in start order
  std::map<uint64_t, std::string> thread_names;  // by OS thread id
  MemoryProfile memory;
};

}  // namespace ember::profiler
