// SVG heatmaps, grouped bar charts and event markers: the colour map's anchors and
// interpolation, cells placed on their columns, equal neighbours merged, empty cells left out,
// values written where they fit; bars grouped by category with heights on the axis' scale;
// markers one per pixel; and errors for input a chart cannot show.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/svg_bars.hpp"
#include "common/svg_heatmap.hpp"
#include "common/svg_plot.hpp"

using namespace gpusc;
using namespace gpusc::plot;

namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The cells group of a heatmap's SVG.
std::string cells(const std::string& svg) {
  const size_t a = svg.find("<g class=\"cells\"");
  return svg.substr(a, svg.find("</g>", a) - a);
}

struct Rect {
  double x, width;
  std::string fill;
};

std::vector<Rect> rects(const std::string& group) {
  static const std::regex re(
      R"re(<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)" height="[0-9.]+" fill="(#[0-9a-f]{6})")re");
  std::vector<Rect> out;
  for (std::sregex_iterator it(group.begin(), group.end(), re), end; it != end; ++it)
    out.push_back({std::stod((*it)[1]), std::stod((*it)[2]), (*it)[3]});
  return out;
}

Heatmap numericMap() {
  Heatmap h;
  h.title = "t";
  h.rowLabels = {"a", "b"};
  h.xEdges = {0, 10, 20, 30, 40};
  h.values = {{0, 1, 2, 3}, {5, 5, 5, 5}};
  return h;
}

}  // namespace

TEST(SvgHeatmap, ColourMapEndsAndInterpolation) {
  EXPECT_EQ(heatColor(0), "#440154");  // viridis' first anchor
  EXPECT_EQ(heatColor(1), "#fde725");  // and its last
  EXPECT_EQ(heatColor(-3), heatColor(0));
  EXPECT_EQ(heatColor(7), heatColor(1));
  EXPECT_EQ(heatColor(std::nan("")), heatColor(0));
  // Anchors sit at k/9; halfway between anchors 4 (#26828e) and 5 (#1f9e89) each channel is
  // the rounded mean: (0x26+0x1f)/2 = 34.5 -> 35 (0x23), (0x82+0x9e)/2 = 144 (0x90),
  // (0x8e+0x89)/2 = 139.5 -> 140 (0x8c).
  EXPECT_EQ(heatColor(4.5 / 9), "#23908c");
  EXPECT_EQ(heatColor(4.0 / 9), "#26828e");
}

TEST(SvgHeatmap, CellsSpanTheirColumnsAndEqualNeighboursMerge) {
  const Heatmap h = numericMap();
  const std::string svg = toSvg(h);
  const std::vector<Rect> r = rects(cells(svg));
  // Row a: four different values, four cells; row b: one value, one merged cell.
  ASSERT_EQ(r.size(), 5u);
  const double w = r[0].width;
  for (int i = 1; i < 4; ++i) {
    EXPECT_NEAR(r[i].width, w, 0.02);
    EXPECT_NEAR(r[i].x, r[0].x + i * w, 0.02);
  }
  EXPECT_NEAR(r[4].x, r[0].x, 0.01);
  EXPECT_NEAR(r[4].width, 4 * w, 0.05);
  // Colour range from the data: 0 is the first colour, 5 the last, 1 a fifth of the way.
  EXPECT_EQ(r[0].fill, heatColor(0));
  EXPECT_EQ(r[1].fill, heatColor(0.2));
  EXPECT_EQ(r[4].fill, heatColor(1));
}

TEST(SvgHeatmap, FixedRangeAndEmptyCells) {
  Heatmap h = numericMap();
  h.min = 0;
  h.max = 10;
  h.values[0][1] = std::nan("");
  const std::vector<Rect> r = rects(cells(toSvg(h)));
  ASSERT_EQ(r.size(), 4u);  // the NaN cell is not drawn; row b still one cell
  EXPECT_EQ(r[0].fill, heatColor(0));
  EXPECT_EQ(r[1].fill, heatColor(0.2));  // value 2 of [0, 10]
  EXPECT_EQ(r[3].fill, heatColor(0.5));  // row b: 5 of [0, 10]
}

TEST(SvgHeatmap, CategoriesAndAnnotations) {
  Heatmap h;
  h.rowLabels = {"sm0", "sm1"};
  h.columnLabels = {"in", "out & back"};
  h.values = {{0.25, 0.5}, {0.125, 1}};
  h.annotate = true;
  h.valueDigits = 3;
  h.width = 500;
  const std::string svg = toSvg(h);
  for (const char* v : {">0.250<", ">0.500<", ">0.125<", ">1.000<"})
    EXPECT_NE(svg.find(v), std::string::npos) << v;
  EXPECT_NE(svg.find(">out &amp; back<"), std::string::npos);  // escaped
  EXPECT_NE(svg.find(">sm1<"), std::string::npos);
  // Cells too narrow for their text get none.
  h.width = 200;
  h.valueDigits = 6;
  EXPECT_EQ(toSvg(h).find(">0.250000<"), std::string::npos);
}

TEST(SvgHeatmap, RejectsWhatItCannotShow) {
  const auto fails = [](Heatmap h, const std::string& what) {
    try {
      toSvg(h);
      ADD_FAILURE() << "no error for " << what;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  Heatmap h = numericMap();
  h.values.clear();
  h.rowLabels.clear();
  fails(h, "no rows");
  h = numericMap();
  h.rowLabels.pop_back();
  fails(h, "1 row labels for 2 rows");
  h = numericMap();
  h.columnLabels = {"x", "y", "z", "w"};
  fails(h, "exactly one");
  h = numericMap();
  h.xEdges = {0, 10, 10, 30, 40};
  fails(h, "must increase");
  h = numericMap();
  h.values[1].pop_back();
  fails(h, "row 1 has 3 values for 4 columns");
  h = numericMap();
  h.values[0][0] = INFINITY;
  fails(h, "infinite");
  h = numericMap();
  h.min = 3;
  h.max = 3;
  fails(h, "min 3 >= max 3");
}

TEST(SvgPlotMarkers, OneDotPerPixelAndNoLine) {
  Figure f;
  f.width = 400;
  Panel p;
  Series s;
  s.label = "events";
  s.markers = true;
  // 100 points at the same place, then 3 apart: 4 dots.
  for (int i = 0; i < 100; ++i) s.x.push_back(1), s.y.push_back(1);
  s.x.insert(s.x.end(), {0, 2, 3});
  s.y.insert(s.y.end(), {0, 4, 2});
  p.series.push_back(s);
  f.panels.push_back(p);
  const std::string svg = toSvg(f);
  const size_t data = svg.find("<g class=\"data\"");
  const std::string group = svg.substr(data, svg.find("</g>\n</g>", data) - data);
  EXPECT_EQ(count(group, "<circle"), 4u);
  EXPECT_EQ(count(group, "<polyline"), 0u);
  // The legend shows a dot, not a line.
  const size_t legend = svg.find("<g class=\"legend\"");
  ASSERT_NE(legend, std::string::npos);
  EXPECT_NE(svg.find("<circle", legend), std::string::npos);
}

namespace {

struct Bar {
  double x, y, width, height;
  std::string fill, title;
};

std::vector<Bar> bars(const std::string& svg) {
  static const std::regex re(
      R"re(<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" fill="([^"]+)"><title>([^<]*)</title>)re");
  std::vector<Bar> out;
  for (std::sregex_iterator it(svg.begin(), svg.end(), re), end; it != end; ++it)
    out.push_back({std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]),
                   std::stod((*it)[4]), (*it)[5], (*it)[6]});
  return out;
}

}  // namespace

TEST(SvgBars, GroupsAndHeightsFollowTheValues) {
  BarChart c;
  c.title = "ratio";
  c.categories = {"sgemm", "bfs", "geomean"};
  c.series = {{"packed", {2.0, 1.0, NAN}, ""}, {"issue", {0.5, 4.0, 1.0}, "#123456"}};
  c.hlines = {1.0};
  const std::vector<Bar> b = bars(toSvg(c));
  ASSERT_EQ(b.size(), 5u);  // the NaN bar is left out
  // Series order within a category, categories left to right, equal widths.
  EXPECT_EQ(b[0].title, "sgemm packed: 2.00");
  EXPECT_EQ(b[1].title, "bfs packed: 1.00");
  EXPECT_EQ(b[2].title, "sgemm issue: 0.50");
  EXPECT_EQ(b[4].title, "geomean issue: 1.00");
  EXPECT_EQ(b[0].fill, paletteColor(0));
  EXPECT_EQ(b[2].fill, "#123456");
  EXPECT_LT(b[0].x, b[2].x);  // packed before issue in a group
  EXPECT_LT(b[2].x, b[1].x);  // sgemm's group before bfs'
  EXPECT_NEAR(b[0].width, b[2].width, 0.01);
  // Heights are proportional to the values (all bars rise from 0, at the same baseline).
  EXPECT_NEAR(b[1].height / b[0].height, 0.5, 0.01);
  EXPECT_NEAR(b[3].height / b[0].height, 2.0, 0.01);
  EXPECT_NEAR(b[0].y + b[0].height, b[3].y + b[3].height, 0.02);
}

TEST(SvgBars, RejectsWhatItCannotShow) {
  const auto fails = [](const BarChart& c, const std::string& what) {
    try {
      toSvg(c);
      ADD_FAILURE() << "no error for " << what;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  BarChart c;
  c.series = {{"a", {1.0}, ""}};
  fails(c, "no categories");
  c.categories = {"k"};
  c.series.clear();
  fails(c, "no series");
  c.series = {{"a", {1.0, 2.0}, ""}};
  fails(c, "series 'a' has 2 values for 1 categories");
  c.series = {{"a", {INFINITY}, ""}};
  fails(c, "infinite");
  c.series = {{"a", {NAN}, ""}};
  fails(c, "series 'a' has no value");
}
