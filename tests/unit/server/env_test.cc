// The one bounded reader, on the inputs that once grew without end: devices, FIFOs, directories.
#include "rdma_webhook/server/env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace rw::server {
namespace {

namespace fs = std::filesystem;

class ReadBoundedTest : public ::testing::Test {
 protected:
  ReadBoundedTest() {
    dir_ = fs::temp_directory_path() / ("rw-env-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  ~ReadBoundedTest() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }
  ReadError::Kind KindOf(const std::string& path, FileKinds kinds, std::size_t limit) {
    try {
      ReadBounded(path, kinds, limit);
    } catch (const ReadError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
      return e.kind();
    }
    ADD_FAILURE() << path << " was read";
    return ReadError::Kind::kUnreadable;
  }
  fs::path dir_;
};

TEST_F(ReadBoundedTest, ReadsAFileUpToTheLimit) {
  const std::string path = Write("p.yaml", "abc");
  EXPECT_EQ(ReadBounded(path, FileKinds::kRegularOnly, 3), "abc");
  EXPECT_EQ(KindOf(path, FileKinds::kRegularOnly, 2), ReadError::Kind::kTooLarge);
}

TEST_F(ReadBoundedTest, AnEndlessDeviceStopsAtTheLimit) {
  // /dev/zero has size 0 to stat: only counting what was read stops it.
  EXPECT_EQ(KindOf("/dev/zero", FileKinds::kAny, 1 << 20), ReadError::Kind::kTooLarge);
}

TEST_F(ReadBoundedTest, TheServerReadsRegularFilesOnly) {
  EXPECT_EQ(KindOf("/dev/zero", FileKinds::kRegularOnly, 1 << 20), ReadError::Kind::kNotAFile);
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Refused without blocking, though no writer ever opens it.
  EXPECT_EQ(KindOf(fifo, FileKinds::kRegularOnly, 1 << 20), ReadError::Kind::kNotAFile);
  EXPECT_EQ(KindOf(dir_.string(), FileKinds::kAny, 1 << 20), ReadError::Kind::kNotAFile);
  // A symlink to a regular file, as in a mounted Secret, is read.
  const std::string target = Write("t.yaml", "x");
  fs::create_symlink(target, dir_ / "link.yaml");
  EXPECT_EQ(ReadBounded((dir_ / "link.yaml").string(), FileKinds::kRegularOnly), "x");
  EXPECT_EQ(KindOf((dir_ / "missing").string(), FileKinds::kAny, 1), ReadError::Kind::kUnreadable);
}

}  // namespace
}  // namespace rw::server
