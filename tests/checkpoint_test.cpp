// Checkpoint files: round trip, retention, and every way a file can be damaged refused with a clear error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "real/train/checkpoint.hpp"

namespace cclab::real::train {
namespace {

namespace fs = std::filesystem;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("cclab-ckpt-{}", ::testing::UnitTest::GetInstance()->random_seed());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Checkpoint sample(int step) const {
    Checkpoint c;
    c.metadata = {{"step", step}, {"model", "mlp"}};
    c.payload = std::string(1000 + step, '\0');
    for (std::size_t i = 0; i < c.payload.size(); ++i)
      c.payload[i] = static_cast<char>(i * 31 + step);
    return c;
  }

  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  static void write(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }
  static std::string error_of(const std::string& path) {
    try {
      read_checkpoint(path);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(CheckpointTest, RoundTripsAndResolvesTheNewestInADirectory) {
  write_checkpoint(dir_.string(), 10, sample(10), 3);
  const std::string path = write_checkpoint(dir_.string(), 20, sample(20), 3);
  std::string resolved;
  const Checkpoint c = read_checkpoint(dir_.string(), &resolved);
  EXPECT_EQ(resolved, path);
  EXPECT_EQ(c.metadata.at("step"), 20);
  EXPECT_EQ(c.payload, sample(20).payload);
  EXPECT_FALSE(fs::exists(path + ".tmp"));  // the temporary file was renamed, not left behind
}

TEST_F(CheckpointTest, KeepsOnlyTheNewest) {
  for (int step = 1; step <= 5; ++step)
    write_checkpoint(dir_.string(), step, sample(step), 2);
  const auto files = list_checkpoints(dir_.string());
  ASSERT_EQ(files.size(), 2u);
  EXPECT_NE(files[0].find("ckpt-000000004"), std::string::npos);
  EXPECT_NE(files[1].find("ckpt-000000005"), std::string::npos);
}

TEST_F(CheckpointTest, RefusesAFlippedByteAnywhere) {
  const std::string path = write_checkpoint(dir_.string(), 7, sample(7), 1);
  const std::string good = read(path);
  for (const std::size_t at : {std::size_t{30}, good.size() / 2, good.size() - 2}) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    write(path, bad);
    EXPECT_NE(error_of(path), "") << "byte " << at;
  }
}

TEST_F(CheckpointTest, RefusesTruncationWithItsSize) {
  const std::string path = write_checkpoint(dir_.string(), 7, sample(7), 1);
  const std::string good = read(path);
  write(path, good.substr(0, good.size() - 100));
  const std::string error = error_of(path);
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_NE(error.find(path), std::string::npos) << error;
  write(path, good.substr(0, 10));
  EXPECT_NE(error_of(path).find("truncated"), std::string::npos);
}

TEST_F(CheckpointTest, RefusesOtherFilesAndEmptyDirectories) {
  fs::create_directories(dir_);
  EXPECT_NE(error_of(dir_.string()).find("no checkpoint"), std::string::npos);
  const std::string other = (dir_ / "ckpt-000000001.cclab").string();
  write(other, "{\"not\": \"a checkpoint\"}");
  EXPECT_NE(error_of(other).find("bad magic"), std::string::npos);
  EXPECT_NE(error_of((dir_ / "missing.cclab").string()).find("cannot open"), std::string::npos);
}

TEST_F(CheckpointTest, ChecksumMismatchIsNamed) {
  const std::string path = write_checkpoint(dir_.string(), 3, sample(3), 1);
  std::string bad = read(path);
  bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 1);
  write(path, bad);
  EXPECT_NE(error_of(path).find("checksum mismatch"), std::string::npos);
}

}  // namespace
}  // namespace cclab::real::train
