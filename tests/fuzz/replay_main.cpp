// The fuzz targets without libFuzzer: runs each input file (or every file of each folder,
// in name order) through the target once, so the seed corpora and the reproducers of past
// findings are ordinary tests of every build. An escaping exception names the input and fails.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path p = argv[i];
    if (fs::is_directory(p)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else {
      inputs.push_back(p);
    }
  }
  for (const auto& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read\n", p.c_str());
      return 2;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string data = ss.str();
    try {
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: finding: uncaught exception: %s\n", p.c_str(), e.what());
      return 1;
    }
  }
  std::printf("replayed %zu inputs without a finding\n", inputs.size());
  return 0;
}
