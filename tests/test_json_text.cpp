// appendJson (common/json_text.hpp) writes what nlohmann::json::dump writes, byte for byte:
// stats.json is written with it, and its text must not depend on which writer made it.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "catalog.hpp"
#include "common/error.hpp"
#include "common/json_text.hpp"
#include "gpu/device.hpp"
#include "gpu/report.hpp"

namespace gpusc {
namespace {

std::string text(const nlohmann::json& j, int step, unsigned indent = 0) {
  std::string s;
  appendJson(s, j, step, indent);
  return s;
}

// What dump(step) gives with every line after the first indented by `indent` more spaces.
std::string nested(const nlohmann::json& j, int step, unsigned indent) {
  std::string out;
  for (char c : j.dump(step)) {
    out += c;
    if (c == '\n') out.append(indent, ' ');
  }
  return out;
}

nlohmann::json edgeCases() {
  using L = std::numeric_limits<double>;
  nlohmann::json j;
  j["empty_object"] = nlohmann::json::object();
  j["empty_array"] = nlohmann::json::array();
  j["null"] = nullptr;
  j["bools"] = {true, false};
  j["ints"] = {0, -1, 1, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  j["unsigned"] = {0u, std::numeric_limits<uint64_t>::max()};
  j["floats"] = {0.0,          -0.0,      1.0,     -1.5,       0.1,      1e-5,     1.5e-4,
                 1e15,         1e16,      1.25e17, 123456.789, L::min(), L::max(), L::denorm_min(),
                 L::epsilon(), 2.0 / 3.0, 1e300,   -2.5e-300};
  j["non_finite"] = {L::quiet_NaN(), L::infinity(), -L::infinity()};
  j["strings"] = {"",
                  "plain",
                  "quote \" and \\ backslash",
                  "tab\tnew\nline\r\b\f",
                  std::string("nul\0byte", 8),
                  "\x01\x1f\x7f",
                  "caf\xc3\xa9 \xe2\x82\xac"};
  j["key \"quoted\"\n"] = "escaped key";
  j["nested"] = {{"a", {{"b", {1, {{"c", nlohmann::json::array({nlohmann::json::object()})}}}}}},
                 {"z", {{}, {nullptr}}}};
  return j;
}

TEST(JsonText, MatchesDumpOnEdgeCases) {
  const nlohmann::json j = edgeCases();
  for (int step : {-1, 0, 1, 2, 4}) EXPECT_EQ(text(j, step), j.dump(step)) << "indent " << step;
  for (const auto& [key, v] : j.items()) EXPECT_EQ(text(v, 2), v.dump(2)) << key;
  EXPECT_EQ(text(nlohmann::json(3), 2), "3");
  EXPECT_EQ(text(nlohmann::json("x"), 2), "\"x\"");
}

TEST(JsonText, IndentsNestedElements) {
  const nlohmann::json j = edgeCases();
  for (unsigned indent : {0u, 2u, 4u, 7u}) EXPECT_EQ(text(j, 2, indent), nested(j, 2, indent));
}

TEST(JsonText, AppendsToWhatIsThere) {
  std::string s = "prefix ";
  appendJson(s, nlohmann::json{{"a", 1}}, 2);
  EXPECT_EQ(s, "prefix {\n  \"a\": 1\n}");
}

TEST(JsonText, RejectsInvalidUtf8AsDumpDoes) {
  const nlohmann::json bad = std::string("bad \xff byte");
  EXPECT_THROW(bad.dump(2), nlohmann::json::type_error);
  EXPECT_THROW(text(bad, 2), nlohmann::json::type_error);
  nlohmann::json key;
  key[std::string("k\xc3")] = 1;
  EXPECT_THROW(text(key, 2), nlohmann::json::type_error);
}

TEST(JsonText, BinaryValuesAreAnError) {
  EXPECT_THROW(text(nlohmann::json::binary({1, 2, 3}), 2), InternalError);
}

TEST(JsonText, MatchesDumpOnALaunchRecord) {
  // A timing-mode launch's stats.json entry: memory, power, PDN and per-SM figures.
  Device dev(loadPlatform("gtx480", {"gpu.num_sms=4"}), ExecMode::Timing);
  auto w = catalog::find("histogram").make(catalog::Size::Tiny);
  w->setup(dev);
  w->run(dev);
  ASSERT_FALSE(dev.launches().empty());
  const nlohmann::json j = toJson(dev.launches().back());
  ASSERT_TRUE(j.contains("timing"));
  EXPECT_EQ(text(j, 2), j.dump(2));
  EXPECT_EQ(text(j, 2, 4), nested(j, 2, 4));
  EXPECT_EQ(text(j, -1), j.dump());
}

}  // namespace
}  // namespace gpusc
