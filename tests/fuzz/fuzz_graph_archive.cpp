// libFuzzer entry point for the graph archive reader (see fuzz_readers.h).
#include "ember/error.h"
#include "tests/fuzz/fuzz_readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ember::fuzz::read_graph_archive({data, size});
  } catch (const ember::Error&) {
    // A clear rejection is a correct answer to a malformed input.
  }
  return 0;
}
