// A fresh directory per test: <tmp>/<prefix>-<pid>-<test name>, emptied if a crashed earlier run
// left it behind. The pid keeps parallel ctest processes of one test binary apart, the test name
// the tests of one process.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace nnd::test {

inline std::filesystem::path fresh_test_dir(const std::string& prefix) {
  std::string leaf = prefix;
  leaf += '-';
  leaf += std::to_string(::getpid());
  leaf += '-';
  leaf += ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / leaf;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace nnd::test
