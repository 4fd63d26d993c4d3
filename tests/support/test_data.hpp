// A file of tests/data as bytes (the suites define GPUSC_SOURCE_DIR); empty, with a test failure,
// when it cannot be read.
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

inline std::vector<uint8_t> readTestData(const std::string& relative) {
  std::ifstream in(std::string(GPUSC_SOURCE_DIR) + "/tests/data/" + relative, std::ios::binary);
  EXPECT_TRUE(in) << relative;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
