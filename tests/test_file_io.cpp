// The untrusted-file primitives every reader and writer uses
// (serialize/safetensors_format.h): read_file_bytes (regular files only, clear
// errors) and write_file_atomic (a temporary beside the target, fsync,
// rename: no half-written file and no leftover temporary).
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "ember/error.h"
#include "serialize/safetensors_format.h"
#include "test_util.h"

namespace ember::serialize {
namespace {

class FileIo : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "ember_st_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const auto& name : list_dir()) ::unlink((dir_ + "/" + name).c_str());
    ::rmdir(dir_.c_str());
  }
  std::vector<std::string> list_dir() const {
    std::vector<std::string> names;
    if (DIR* d = ::opendir(dir_.c_str())) {
      while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") names.push_back(n);
      }
      ::closedir(d);
    }
    return names;
  }
  std::string dir_;
};

TEST_F(FileIo, AtomicWriteThenReadRoundTrips) {
  const std::vector<uint8_t> file = write_safetensors({}, {{"format", "one"}});
  std::string path = dir_ + "/model.safetensors";
  write_file_atomic(path, file.data(), file.size());
  EXPECT_EQ(read_file_bytes(path), file);
  // Overwrite with different content; no temporary file is left behind.
  const std::vector<uint8_t> other = write_safetensors({}, {});
  write_file_atomic(path, other.data(), other.size());
  EXPECT_EQ(read_file_bytes(path), other);
  EXPECT_EQ(list_dir(), std::vector<std::string>{"model.safetensors"});
  auto h = parse_safetensors(other.data(), other.size(), path);
  EXPECT_TRUE(h.tensors.empty());
}

TEST_F(FileIo, EmptyFileRoundTrips) {
  std::string path = dir_ + "/empty.bin";
  write_file_atomic(path, nullptr, 0);
  EXPECT_TRUE(read_file_bytes(path).empty());
}

TEST_F(FileIo, MissingFileOrDirectoryIsAClearError) {
  std::string path = dir_ + "/missing.safetensors";
  try {
    read_file_bytes(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;
  }
  try {
    read_file_bytes(dir_);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  EXPECT_EMBER_ERROR(read_file_bytes("/dev/zero"), "/dev/zero", "not a regular file");  // would never end
  uint8_t b = 1;
  try {
    write_file_atomic(dir_ + "/no/such/dir/x.bin", &b, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create temporary file"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(list_dir().empty());
}

}  // namespace
}  // namespace ember::serialize
