// Writes the seeds only ember can make (see write_seed_files):
//   fuzz_seed_writer tests/fuzz/corpus
#include <cstdio>

#include "ember/error.h"
#include "tests/fuzz/fuzz_readers.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  try {
    ember::fuzz::write_seed_files(argv[1]);
  } catch (const ember::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
