// libFuzzer entry point for the train_config reader (see fuzz_readers.h).
#include "ember/error.h"
#include "tests/fuzz/fuzz_readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ember::fuzz::read_train_config({data, size});
  } catch (const ember::Error&) {
    // A clear rejection is a correct answer to a malformed input.
  }
  return 0;
}
