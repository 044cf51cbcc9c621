// Every file of the fuzz corpus (tests/fuzz/corpus/<reader>/) and every
// fuzzing finding (tests/fuzz/regressions/<reader>/) through its reader, in
// the ordinary build: ok_* files read cleanly, bad_* files are rejected with
// an ember::Error, and nothing else (any_*, findings) crashes or throws any
// other exception. See tests/fuzz/make_seed_corpus.py and docs/testing.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ember/error.h"
#include "tests/fuzz/fuzz_readers.h"

namespace fs = std::filesystem;

namespace {

const fs::path kFuzzDir = fs::path(EMBER_TEST_DATA_DIR).parent_path() / "fuzz";

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<uint8_t> bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool starts_with(const fs::path& path, const char* prefix) { return path.filename().string().rfind(prefix, 0) == 0; }

class FuzzCorpus : public testing::TestWithParam<ember::fuzz::NamedReader> {};

TEST_P(FuzzCorpus, HasValidSeedsAndFiftyMalformedOnes) {
  const auto files = files_in(kFuzzDir / "corpus" / GetParam().name);
  const auto ok = std::count_if(files.begin(), files.end(), [](const fs::path& p) { return starts_with(p, "ok_"); });
  EXPECT_GE(ok, 1) << GetParam().name;
  EXPECT_GE(static_cast<long>(files.size()) - ok, 50) << GetParam().name;
}

TEST_P(FuzzCorpus, EachFileGetsItsAnswer) {
  std::vector<fs::path> files = files_in(kFuzzDir / "corpus" / GetParam().name);
  const auto findings = files_in(kFuzzDir / "regressions" / GetParam().name);
  files.insert(files.end(), findings.begin(), findings.end());
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    const std::vector<uint8_t> bytes = bytes_of(path);
    bool rejected = false;
    try {
      GetParam().read(bytes);
    } catch (const ember::Error& e) {
      rejected = true;
      if (starts_with(path, "ok_")) {
        ADD_FAILURE() << "a valid seed was rejected: " << e.what();
      }
    }
    if (starts_with(path, "bad_")) {
      EXPECT_TRUE(rejected) << "a malformed file was accepted";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Readers, FuzzCorpus, testing::ValuesIn(ember::fuzz::all_readers().begin(),
                                                                ember::fuzz::all_readers().end()),
                         [](const testing::TestParamInfo<ember::fuzz::NamedReader>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
