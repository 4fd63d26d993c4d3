// SVG chart writer: 1-2-5 and decade ticks, data-to-pixel mapping, thinning that keeps spikes,
// well-formed and escaped XML, and errors for data a plot cannot show.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/svg_plot.hpp"

using namespace gpusc;
using namespace gpusc::plot;

namespace {

// True when `step` is 1, 2 or 5 times a power of ten.
bool isNice(double step) {
  double mag = std::pow(10.0, std::floor(std::log10(step) + 1e-12));
  double m = step / mag;
  for (double n : {1.0, 2.0, 5.0, 10.0})
    if (std::abs(m - n) < 1e-9 * n) return true;
  return false;
}

std::vector<Tick> majors(const std::vector<Tick>& ticks) {
  std::vector<Tick> out;
  for (const Tick& t : ticks)
    if (t.major) out.push_back(t);
  return out;
}

struct Rect {
  double x, y, w, h;
};

std::vector<Rect> plotAreas(const std::string& svg) {
  std::vector<Rect> out;
  std::regex re(
      "class=\"plot-area\" x=\"([-0-9.]+)\" y=\"([-0-9.]+)\" width=\"([-0-9.]+)\" "
      "height=\"([-0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it)
    out.push_back(
        {std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]), std::stod((*it)[4])});
  return out;
}

// The points of every polyline, in document order (parsed by hand: std::regex recurses per
// character and overflows the stack on a long points attribute).
std::vector<std::vector<std::pair<double, double>>> polylines(const std::string& svg) {
  std::vector<std::vector<std::pair<double, double>>> out;
  for (size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1)) {
    size_t b = svg.find(" points=\"", at) + 9, e = svg.find('"', b);
    out.emplace_back();
    const char* p = svg.c_str() + b;
    const char* end = svg.c_str() + e;
    while (p < end) {
      char* next = nullptr;
      double x = std::strtod(p, &next);
      double y = std::strtod(next + 1, &next);  // skips the comma
      out.back().push_back({x, y});
      p = next;
    }
  }
  return out;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

// A small XML well-formedness check: one root, balanced and properly nested elements, quoted
// attributes, no '<' or unescaped '&' in text or attribute values. Returns "" or the problem.
std::string xmlProblem(const std::string& doc) {
  std::vector<std::string> stack;
  size_t roots = 0, i = 0;
  auto entityOk = [&](size_t at) {
    static const std::regex ent("&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);");
    std::string rest = doc.substr(at, 12);
    return std::regex_search(rest, ent, std::regex_constants::match_continuous);
  };
  while (i < doc.size()) {
    char c = doc[i];
    if (c == '&') {
      if (!entityOk(i)) return "bare & at " + std::to_string(i);
      ++i;
      continue;
    }
    if (c == '>') return "bare > at " + std::to_string(i);
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r')
      return "control character at " + std::to_string(i);
    if (c != '<') {
      ++i;
      continue;
    }
    if (doc.compare(i, 2, "<?") == 0) {
      size_t e = doc.find("?>", i);
      if (e == std::string::npos) return "unterminated <?";
      i = e + 2;
      continue;
    }
    bool closing = doc[i + 1] == '/';
    size_t j = i + (closing ? 2 : 1), nameStart = j;
    while (j < doc.size() && (std::isalnum(static_cast<unsigned char>(doc[j])) || doc[j] == '-' ||
                              doc[j] == ':' || doc[j] == '_'))
      ++j;
    std::string name = doc.substr(nameStart, j - nameStart);
    if (name.empty()) return "empty tag name at " + std::to_string(i);
    // Attributes: name="value" pairs until > or />.
    bool selfClosing = false;
    while (true) {
      while (j < doc.size() && std::isspace(static_cast<unsigned char>(doc[j]))) ++j;
      if (j >= doc.size()) return "unterminated tag " + name;
      if (doc[j] == '>') {
        ++j;
        break;
      }
      if (doc.compare(j, 2, "/>") == 0) {
        selfClosing = true;
        j += 2;
        break;
      }
      if (closing) return "attributes in closing tag " + name;
      size_t a = j;
      while (j < doc.size() && doc[j] != '=' && !std::isspace(static_cast<unsigned char>(doc[j])))
        ++j;
      if (j == a || doc[j] != '=' || doc[j + 1] != '"') return "bad attribute in " + name;
      size_t end = doc.find('"', j + 2);
      if (end == std::string::npos) return "unterminated attribute in " + name;
      for (size_t k = j + 2; k < end; ++k) {
        if (doc[k] == '<') return "< in attribute of " + name;
        if (doc[k] == '&' && !entityOk(k)) return "bare & in attribute of " + name;
      }
      j = end + 1;
    }
    if (closing) {
      if (stack.empty() || stack.back() != name) return "mismatched </" + name + ">";
      stack.pop_back();
    } else if (!selfClosing) {
      if (stack.empty()) ++roots;
      stack.push_back(name);
    } else if (stack.empty()) {
      ++roots;
    }
    i = j;
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  if (roots != 1) return std::to_string(roots) + " root elements";
  return "";
}

Figure oneSeries(std::vector<double> x, std::vector<double> y, Scale xs = Scale::Linear,
                 Scale ys = Scale::Linear) {
  Figure f;
  f.title = "t";
  f.x.scale = xs;
  Panel p;
  p.y.scale = ys;
  p.series.push_back({"s", std::move(x), std::move(y)});
  f.panels.push_back(p);
  return f;
}

std::string errorOf(const Figure& f) {
  try {
    toSvg(f);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// ---- ticks --------------------------------------------------------------------------------------

TEST(SvgPlotTicks, NiceStepIsTheSmallest125StepWithinTheCount) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> exp(-12, 12), cnt(1, 20);
  for (int i = 0; i < 2000; ++i) {
    double span = std::pow(10.0, exp(rng)), maxCount = std::floor(cnt(rng));
    double step = niceStep(span, maxCount);
    ASSERT_TRUE(isNice(step)) << step;
    EXPECT_LE(span / step, maxCount * (1 + 1e-9)) << span << " " << maxCount;
    // The next smaller 1-2-5 step would give too many intervals.
    double m = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
    double smaller = step * (std::abs(m - 5) < 1e-6 ? 0.4 : 0.5);
    EXPECT_GT(span / smaller, maxCount * (1 - 1e-9)) << span << " " << maxCount;
  }
}

TEST(SvgPlotTicks, LinearTicksAreEvenNiceAndCoverTheRange) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1), e(-6, 6), len(100, 1200);
  for (int i = 0; i < 2000; ++i) {
    double scale = std::pow(10.0, e(rng));
    double a = u(rng) * scale, b = u(rng) * scale;
    if (a == b) continue;
    double lo = std::min(a, b), hi = std::max(a, b), px = len(rng);
    std::vector<Tick> t = makeTicks(lo, hi, Scale::Linear, px, 50);
    ASSERT_GE(t.size(), 2u) << lo << " " << hi << " " << px;
    double step = t[1].value - t[0].value;
    EXPECT_TRUE(isNice(step)) << step;
    for (size_t k = 0; k < t.size(); ++k) {
      EXPECT_TRUE(t[k].major);
      EXPECT_FALSE(t[k].label.empty());
      EXPECT_GE(t[k].value, lo - 1e-9 * step);
      EXPECT_LE(t[k].value, hi + 1e-9 * step);
      if (k) {
        EXPECT_NEAR(t[k].value - t[k - 1].value, step, 1e-6 * step);
      }
      // Tick values are whole multiples of the step, so they print exactly.
      EXPECT_NEAR(t[k].value / step, std::round(t[k].value / step), 1e-6);
    }
    // Covered: no gap of a whole step at either end, and labels at least 50 px apart.
    EXPECT_LT(t.front().value - lo, step * (1 + 1e-9));
    EXPECT_LT(hi - t.back().value, step * (1 + 1e-9));
    // Axes with room for 5 labels keep them 50 px apart; shorter ones may take up to two smaller
    // 1-2-5 steps (at most 5x smaller) to have two labels at all.
    if (px >= 250) {
      EXPECT_GE(step / (hi - lo) * px, 50 * (1 - 1e-9));
    } else {
      EXPECT_GE(step / (hi - lo) * px, 50 / 5.0 * (1 - 1e-9));
    }
  }
}

TEST(SvgPlotTicks, LogAxisHasDecadesWithMinorTicks2To9) {
  std::vector<Tick> t = makeTicks(1e5, 1e9, Scale::Log10, 800, 60);
  std::vector<Tick> m = majors(t);
  ASSERT_EQ(m.size(), 5u);
  const char* labels[] = {"100k", "1M", "10M", "100M", "1G"};
  for (size_t i = 0; i < m.size(); ++i) {
    EXPECT_NEAR(m[i].value, std::pow(10.0, 5 + static_cast<int>(i)), 1e-6 * m[i].value);
    EXPECT_EQ(m[i].label, labels[i]);
  }
  // Each of the 4 decades has minor ticks at 2..9 times its start, unlabelled.
  EXPECT_EQ(t.size() - m.size(), 4u * 8u);
  for (const Tick& k : t) {
    if (k.major) continue;
    EXPECT_TRUE(k.label.empty());
    double d = std::pow(10.0, std::floor(std::log10(k.value)));
    double mant = k.value / d;
    EXPECT_NEAR(mant, std::round(mant), 1e-9);
    EXPECT_GE(std::round(mant), 2);
    EXPECT_LE(std::round(mant), 9);
  }
}

TEST(SvgPlotTicks, LogAxisWithManyDecadesLabelsEveryFewAndStaysApart) {
  std::vector<Tick> t = makeTicks(1e-12, 1e12, Scale::Log10, 300, 40);
  std::vector<Tick> m = majors(t);
  ASSERT_GE(m.size(), 2u);
  double pxPerDecade = 300.0 / 24;
  for (size_t i = 1; i < m.size(); ++i) {
    double decades = std::log10(m[i].value / m[i - 1].value);
    EXPECT_NEAR(decades, std::round(decades), 1e-9);
    EXPECT_GE(decades * pxPerDecade, 40 - 1e-9);
  }
}

TEST(SvgPlotTicks, NarrowLogRangeStillGetsLabelsInRange) {
  for (auto [lo, hi] : {std::pair{2.0, 9.0}, {0.3, 0.8}, {1.02e6, 1.08e6}, {45.0, 55.0}}) {
    std::vector<Tick> t = makeTicks(lo, hi, Scale::Log10, 400, 40);
    std::vector<Tick> m = majors(t);
    EXPECT_GE(m.size(), 2u) << lo << " " << hi;
    for (const Tick& k : t) {
      EXPECT_GE(k.value, lo * (1 - 1e-9));
      EXPECT_LE(k.value, hi * (1 + 1e-9));
    }
    for (size_t i = 1; i < m.size(); ++i)
      EXPECT_GE(std::log10(m[i].value / m[i - 1].value) / std::log10(hi / lo) * 400, 40 - 1e-6)
          << lo << " " << hi;
  }
}

TEST(SvgPlotTicks, LabelsAreCompactWithEngineeringPrefixes) {
  // Linear axes share the precision of their step.
  EXPECT_EQ(formatTick(0.95, 1.1, 0.05), "0.95");
  EXPECT_EQ(formatTick(1.0, 1.1, 0.05), "1.00");
  EXPECT_EQ(formatTick(0.0, 1.1, 0.05), "0");
  EXPECT_EQ(formatTick(1500, 2000, 500), "1500");
  EXPECT_EQ(formatTick(15000, 20000, 5000), "15k");
  EXPECT_EQ(formatTick(0.002, 0.005, 0.001), "2m");
  EXPECT_EQ(formatTick(-0.5, 1, 0.5), "\u22120.5");  // a real minus sign
  // Log axes: each label on its own.
  EXPECT_EQ(formatTick(1e5, 1e9, 0), "100k");
  EXPECT_EQ(formatTick(1e9, 1e9, 0), "1G");
  EXPECT_EQ(formatTick(2e-6, 1e-3, 0), "2µ");
  EXPECT_EQ(formatTick(0.1, 10, 0), "0.1");
  // A log axis reaching below 10^-2 labels in SI all through.
  std::vector<Tick> z = majors(makeTicks(1e-3, 0.3, Scale::Log10, 300, 40));
  ASSERT_EQ(z.size(), 3u);
  EXPECT_EQ(z[0].label, "1m");
  EXPECT_EQ(z[1].label, "10m");
  EXPECT_EQ(z[2].label, "100m");
}

// ---- mapping ------------------------------------------------------------------------------------

TEST(SvgPlotMapping, AxisMapIsLinearInValueOrInLogValue) {
  AxisMap lin{0, 10, Scale::Linear, 100, 600};
  EXPECT_DOUBLE_EQ(lin(0), 100);
  EXPECT_DOUBLE_EQ(lin(10), 600);
  EXPECT_DOUBLE_EQ(lin(2.5), 225);
  AxisMap y{-1, 1, Scale::Linear, 400, 100};  // a y axis: up is smaller pixels
  EXPECT_DOUBLE_EQ(y(0), 250);
  EXPECT_DOUBLE_EQ(y(1), 100);
  AxisMap lg{1e5, 1e9, Scale::Log10, 0, 800};
  EXPECT_NEAR(lg(1e7), 400, 1e-9);
  EXPECT_NEAR(lg(1e6), 200, 1e-9);
  EXPECT_NEAR(lg(std::sqrt(10) * 1e5), 100, 1e-9);
}

TEST(SvgPlotMapping, KnownPointsLandAtTheExpectedPixels) {
  Figure f = oneSeries({0, 5, 10}, {0, 50, 100});
  f.x.min = 0;
  f.x.max = 10;
  f.panels[0].y.min = 0;
  f.panels[0].y.max = 100;
  std::string svg = toSvg(f);
  std::vector<Rect> area = plotAreas(svg);
  ASSERT_EQ(area.size(), 1u);
  auto lines = polylines(svg);
  ASSERT_EQ(lines.size(), 1u);
  ASSERT_EQ(lines[0].size(), 3u);
  const Rect& r = area[0];
  EXPECT_NEAR(lines[0][0].first, r.x, 0.01);
  EXPECT_NEAR(lines[0][0].second, r.y + r.h, 0.01);
  EXPECT_NEAR(lines[0][1].first, r.x + r.w / 2, 0.01);
  EXPECT_NEAR(lines[0][1].second, r.y + r.h / 2, 0.01);
  EXPECT_NEAR(lines[0][2].first, r.x + r.w, 0.01);
  EXPECT_NEAR(lines[0][2].second, r.y, 0.01);
}

TEST(SvgPlotMapping, LogAxesPutEachDecadeTheSameDistanceApart) {
  Figure f = oneSeries({1e5, 1e6, 1e7, 1e9}, {1e-3, 1e-2, 1, 10}, Scale::Log10, Scale::Log10);
  f.x.min = 1e5;
  f.x.max = 1e9;
  f.panels[0].y.min = 1e-3;
  f.panels[0].y.max = 10;
  std::string svg = toSvg(f);
  Rect r = plotAreas(svg).at(0);
  auto pts = polylines(svg).at(0);
  ASSERT_EQ(pts.size(), 4u);
  EXPECT_NEAR(pts[0].first, r.x, 0.01);
  EXPECT_NEAR(pts[1].first, r.x + r.w / 4, 0.01);
  EXPECT_NEAR(pts[2].first, r.x + r.w / 2, 0.01);
  EXPECT_NEAR(pts[3].first, r.x + r.w, 0.01);
  EXPECT_NEAR(pts[1].second, r.y + r.h * 3 / 4, 0.01);
  EXPECT_NEAR(pts[2].second, r.y + r.h / 4, 0.01);
}

TEST(SvgPlotMapping, StackedPanelsShareTheXAxis) {
  Figure f = oneSeries({0, 1000}, {0.9, 1.0});
  Panel p2;
  p2.y.label = "current";
  p2.series.push_back({"i", {0, 500, 1000}, {10, 40, 20}});
  f.panels.push_back(p2);
  std::string svg = toSvg(f);
  std::vector<Rect> a = plotAreas(svg);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_DOUBLE_EQ(a[0].x, a[1].x);
  EXPECT_DOUBLE_EQ(a[0].w, a[1].w);
  EXPECT_GT(a[1].y, a[0].y + a[0].h);
  // Both series span the same x range, so both start and end at the same pixels.
  auto l = polylines(svg);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_NEAR(l[0].front().first, l[1].front().first, 0.01);
  EXPECT_NEAR(l[0].back().first, l[1].back().first, 0.01);
}

// ---- thinning -----------------------------------------------------------------------------------

TEST(SvgPlotThinning, KeepsEveryColumnsExtremesAndOrder) {
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 1);
  const size_t n = 200000;
  std::vector<std::pair<double, double>> pts(n);
  for (size_t i = 0; i < n; ++i) pts[i] = {800.0 * i / n, 200 + noise(rng)};
  pts[123457].second = 5;    // a one-sample spike up (smaller y is up)
  pts[123460].second = 390;  // and one down, three samples later in the same column
  std::vector<std::pair<double, double>> t = thin(pts, 0.5);
  EXPECT_LE(t.size(), 4u * 1600u + 4u);
  EXPECT_GE(t.size(), 1600u);
  // The same first and last point; x never goes back.
  EXPECT_EQ(t.front(), pts.front());
  EXPECT_EQ(t.back(), pts.back());
  for (size_t i = 1; i < t.size(); ++i) EXPECT_GE(t[i].first, t[i - 1].first);
  // Every half-pixel column keeps its lowest and highest value.
  std::map<long, std::pair<double, double>> inCol, outCol;
  auto acc = [](std::map<long, std::pair<double, double>>& m, std::pair<double, double> p) {
    long c = static_cast<long>(std::floor(p.first / 0.5));
    auto [it, fresh] = m.try_emplace(c, p.second, p.second);
    if (!fresh) {
      it->second.first = std::min(it->second.first, p.second);
      it->second.second = std::max(it->second.second, p.second);
    }
  };
  for (auto& p : pts) acc(inCol, p);
  for (auto& p : t) acc(outCol, p);
  EXPECT_EQ(inCol, outCol);
  EXPECT_NE(std::find(t.begin(), t.end(), pts[123457]), t.end());
  EXPECT_NE(std::find(t.begin(), t.end(), pts[123460]), t.end());
}

TEST(SvgPlotThinning, ASingleSampleSpikeSurvivesInTheSvg) {
  const size_t n = 100000;
  std::vector<double> x(n), y(n, 1.0);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i);
  y[76543] = 0.5;  // one-cycle droop
  Figure f = oneSeries(x, y);
  std::string svg = toSvg(f);
  Rect r = plotAreas(svg).at(0);
  auto pts = polylines(svg).at(0);
  EXPECT_LT(pts.size(), 4000u);  // thinned: the plot is under 1000 px wide
  double lowest = 0;
  for (auto& p : pts) lowest = std::max(lowest, p.second);
  // The droop is the lowest value, 5% above the bottom of the y range.
  EXPECT_NEAR(lowest, r.y + r.h - r.h * 0.05 / 1.1, 0.02);
  EXPECT_LT(svg.size(), 200000u);
}

TEST(SvgPlotThinning, AFixedXRangeDropsPointsOutsideButKeepsTheLineIntoIt) {
  std::vector<double> x(1000), y(1000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<double>(i);
    y[i] = static_cast<double>(i % 7);
  }
  Figure f = oneSeries(x, y);
  f.x.min = 400.5;
  f.x.max = 600.5;
  std::string svg = toSvg(f);
  Rect r = plotAreas(svg).at(0);
  auto pts = polylines(svg).at(0);
  // Points 400..600 are inside; 399 and 601 start and end the line just outside the area.
  ASSERT_EQ(pts.size(), 202u);
  EXPECT_LT(pts.front().first, r.x);
  EXPECT_GT(pts[1].first, r.x);
  EXPECT_GT(pts.back().first, r.x + r.w);
  EXPECT_LT(pts[pts.size() - 2].first, r.x + r.w);
  // A line jumping across the whole range keeps both ends.
  Figure jump = oneSeries({0, 1000}, {0, 1});
  jump.x.min = 400;
  jump.x.max = 600;
  EXPECT_EQ(polylines(toSvg(jump)).at(0).size(), 2u);
}

// ---- XML ----------------------------------------------------------------------------------------

TEST(SvgPlotXml, DocumentIsWellFormedAndTextIsEscaped) {
  Figure f;
  f.title = "R&D <test> \"quoted\" 'single'";
  f.x.label = "x < y & z";
  Panel p;
  p.title = "panel <1>";
  p.y.label = "a&b";
  p.hlines = {0.5};
  p.vlines = {2};
  for (int i = 0; i < 12; ++i)
    p.series.push_back(
        {"SM <" + std::to_string(i) + "> & co\x01", {0, 1, 2, 3}, {0, 1.0 * i, 0.5, 1}});
  f.panels.push_back(p);
  Panel bars;
  bars.kind = Panel::Kind::Bars;
  bars.series.push_back({"h\"ist\"", {0.5, 1.5, 2.5}, {3, 0, 7}});
  f.panels.push_back(bars);
  std::string svg = toSvg(f);
  EXPECT_EQ(xmlProblem(svg), "");
  EXPECT_NE(svg.find("R&amp;D &lt;test&gt; &quot;quoted&quot; &apos;single&apos;"),
            std::string::npos);
  EXPECT_NE(svg.find("x &lt; y &amp; z"), std::string::npos);
  EXPECT_NE(svg.find("SM &lt;11&gt; &amp; co<"), std::string::npos);  // control character dropped
  EXPECT_NE(svg.find("h&quot;ist&quot;"), std::string::npos);
  EXPECT_EQ(xmlEscape("a\x02<b>\t&\"'"), "a&lt;b&gt;\t&amp;&quot;&apos;");
  // The checker itself rejects what it should.
  EXPECT_NE(xmlProblem("<svg><g></svg>"), "");
  EXPECT_NE(xmlProblem("<svg><text>a & b</text></svg>"), "");
  EXPECT_NE(xmlProblem("<svg x=\"<\"/>"), "");
}

TEST(SvgPlotXml, LegendListsLabelledSeriesOnly) {
  Figure f = oneSeries({0, 1}, {0, 1});
  f.panels[0].series.push_back({"", {0, 1}, {1, 0}});
  f.panels[0].series.push_back({"second", {0, 1}, {0.5, 0.5}});
  std::string svg = toSvg(f);
  EXPECT_EQ(count(svg, "class=\"legend\""), 1u);
  EXPECT_EQ(count(svg, ">second</text>"), 1u);
  EXPECT_EQ(count(svg, ">s</text>"), 1u);
  f.panels[0].legend = false;
  svg = toSvg(f);
  EXPECT_EQ(count(svg, "class=\"legend\""), 0u);
  EXPECT_EQ(count(svg, ">second</text>"), 0u);
}

TEST(SvgPlotXml, ManySeriesGetDistinctColoursAndALegendBesideThePlot) {
  Figure f;
  f.width = 900;
  Panel p;
  for (int i = 0; i < 15; ++i)
    p.series.push_back({"SM " + std::to_string(i), {0, 1}, {0.0 + i, 1.0 + i}});
  f.panels.push_back(p);
  std::string svg = toSvg(f);
  Rect r = plotAreas(svg).at(0);
  std::regex re("<text x=\"([0-9.]+)\"[^>]*>SM [0-9]+</text>");
  size_t n = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it, ++n)
    EXPECT_GT(std::stod((*it)[1]), r.x + r.w);  // outside, right of the plot area
  EXPECT_EQ(n, 15u);
  std::set<std::string> colours;
  for (size_t i = 0; i < 15; ++i) colours.insert(paletteColor(i));
  EXPECT_EQ(colours.size(), 15u);
  for (const std::string& c : colours)
    EXPECT_NE(svg.find("stroke=\"" + c + "\""), std::string::npos);
}

TEST(SvgPlotXml, HistogramBarsRiseFromZero) {
  Figure f;
  Panel p;
  p.kind = Panel::Kind::Bars;
  p.series.push_back({"count", {1, 2, 3, 4}, {5, 0, 10, 2}});
  f.panels.push_back(p);
  std::string svg = toSvg(f);
  Rect r = plotAreas(svg).at(0);
  std::regex bar("M([-0-9.]+) ([-0-9.]+)H([-0-9.]+)V([-0-9.]+)H");
  std::vector<std::array<double, 4>> bars;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar); it != std::sregex_iterator();
       ++it)
    bars.push_back(
        {std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]), std::stod((*it)[4])});
  ASSERT_EQ(bars.size(), 3u);  // the empty bin draws nothing
  // The bins fill the x range edge to edge: 4 bins, each a quarter wide.
  EXPECT_NEAR(bars[0][0], r.x, 0.01);
  EXPECT_NEAR(bars[2][2], r.x + r.w, 0.01);
  EXPECT_NEAR(bars[0][2] - bars[0][0], r.w / 4, 0.02);
  for (auto& b : bars) EXPECT_NEAR(b[1], r.y + r.h, 0.01);  // baseline at y = 0, the bottom
  // Heights are proportional to the counts (5 and 10).
  EXPECT_NEAR((r.y + r.h - bars[1][3]) / (r.y + r.h - bars[0][3]), 2.0, 1e-3);
}

// ---- errors -------------------------------------------------------------------------------------

TEST(SvgPlotErrors, InvalidDataIsRejectedNamingWhere) {
  Figure nan = oneSeries({0, 1, 2}, {0, NAN, 1});
  EXPECT_EQ(errorOf(nan), "plot 't': panel 1, series 1 's': y[1] is NaN");
  Figure inf = oneSeries({0, INFINITY}, {0, 1});
  EXPECT_EQ(errorOf(inf), "plot 't': panel 1, series 1 's': x[1] is infinite");
  Figure logY = oneSeries({1, 2}, {1, 0}, Scale::Linear, Scale::Log10);
  EXPECT_NE(errorOf(logY).find("series 1 's': y[1] = 0 cannot be shown on a log axis"),
            std::string::npos);
  Figure logX = oneSeries({-1, 2}, {1, 1}, Scale::Log10);
  EXPECT_NE(errorOf(logX).find("x[0] = -1 cannot be shown on a log axis"), std::string::npos);
  Figure logH = oneSeries({1, 2}, {1, 1}, Scale::Linear, Scale::Log10);
  logH.panels[0].hlines = {-3};
  EXPECT_NE(errorOf(logH).find("hlines[0] = -3 cannot be shown on a log axis"), std::string::npos);
  Figure sizes = oneSeries({0, 1, 2}, {0, 1});
  EXPECT_EQ(errorOf(sizes), "plot 't': panel 1, series 1 's': 3 x values but 2 y values");
  Figure empty = oneSeries({}, {});
  EXPECT_EQ(errorOf(empty), "plot 't': panel 1, series 1 's': no points");
  Figure noPanels;
  EXPECT_EQ(errorOf(noPanels), "plot: no panels");
  Figure noSeries = oneSeries({0}, {0});
  noSeries.panels[0].series.clear();
  EXPECT_EQ(errorOf(noSeries), "plot 't': panel 1: no series");
  Figure limits = oneSeries({0, 1}, {0, 1});
  limits.x.min = 2;
  limits.x.max = 1;
  EXPECT_NE(errorOf(limits).find("x axis: min 2 is not below max 1"), std::string::npos);
  Figure half = oneSeries({0, 1}, {0, 1});
  half.panels[0].y.min = 5;  // above all data
  EXPECT_NE(errorOf(half).find("y axis: min 5 is not below max"), std::string::npos);
}

TEST(SvgPlotErrors, ConstantAndSinglePointDataStillPlot) {
  EXPECT_EQ(xmlProblem(toSvg(oneSeries({3}, {7}))), "");
  EXPECT_EQ(xmlProblem(toSvg(oneSeries({0, 1, 2}, {0, 0, 0}))), "");
  EXPECT_EQ(xmlProblem(toSvg(oneSeries({5, 5}, {1, 2}, Scale::Log10, Scale::Log10))), "");
}

TEST(SvgPlotErrors, UnwritablePathIsNamed) {
  Figure f = oneSeries({0, 1}, {0, 1});
  std::string path = "/nonexistent-gpusc-dir/plot.svg";
  try {
    writeSvg(f, path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  // And a writable one holds exactly toSvg's text.
  std::string ok = ::testing::TempDir() + "gpusc_svg_plot_test.svg";
  writeSvg(f, ok);
  std::ifstream in(ok, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, toSvg(f));
  std::remove(ok.c_str());
}
