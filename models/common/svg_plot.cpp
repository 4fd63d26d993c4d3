#include "common/svg_plot.hpp"
#include "common/svg_style.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/file_io.hpp"

namespace gpusc::plot {

namespace {

using namespace style;

// ---- style --------------------------------------------------------------------------------------

constexpr double kPanelTitleFont = 12.5;
constexpr double kMajorTick = 5, kMinorTick = 3;
constexpr double kPanelGap = 16;      // between one panel's plot area and the next panel
constexpr double kLegendRow = 16;     // legend line height
constexpr double kLegendSwatch = 22;  // legend line sample length
constexpr size_t kInsideLegendMax = 8;
constexpr const char* kAxisColor = "#333";
constexpr const char* kGridMajor = "#e3e3e3";
constexpr const char* kGridMinor = "#f1f1f1";
constexpr const char* kRefLineColor = "#3a3a3a";

// 16 colours, neighbours differing in hue and lightness so that even 15 overlaid series stay apart.
constexpr const char* kPalette[] = {
    "#1f63c6", "#e8710a", "#1e9e4a", "#d1323a", "#7b4fc9", "#8a5a3b", "#d45fb0", "#5f6b7a",
    "#a8a11a", "#14a5b8", "#0b2f6b", "#f2b21b", "#5fbf3a", "#8c1c3c", "#4bb5f0", "#b08ee8"};

double toT(double v, Scale s) { return s == Scale::Log10 ? std::log10(v) : v; }

// ---- validation ---------------------------------------------------------------------------------

std::string quoted(const std::string& s) { return s.empty() ? "" : " '" + s + "'"; }

struct Where {
  std::string figure;  // "plot 'Title'"
  std::string panel(size_t i, const Panel& p) const {
    return fmt::format("{}: panel {}{}", figure, i + 1, quoted(p.title));
  }
  std::string series(size_t pi, const Panel& p, size_t si, const Series& s) const {
    return fmt::format("{}, series {}{}", panel(pi, p), si + 1, quoted(s.label));
  }
};

void checkValue(double v, Scale scale, const std::string& where, const std::string& what) {
  if (std::isnan(v)) throw InputError(fmt::format("{}: {} is NaN", where, what));
  if (!std::isfinite(v)) throw InputError(fmt::format("{}: {} is infinite", where, what));
  if (scale == Scale::Log10 && v <= 0)
    throw InputError(fmt::format("{}: {} = {} cannot be shown on a log axis (values must be > 0)",
                                 where, what, v));
}

void checkAxis(const Axis& a, const std::string& where) {
  if (a.min) checkValue(*a.min, a.scale, where, "min");
  if (a.max) checkValue(*a.max, a.scale, where, "max");
  if (a.min && a.max && !(*a.min < *a.max))
    throw InputError(fmt::format("{}: min {} is not below max {}", where, *a.min, *a.max));
}

void validate(const Figure& f, const Where& w) {
  if (f.width < 200 || f.width > 20000)
    throw InputError(fmt::format("{}: width {} is outside [200, 20000] pixels", w.figure, f.width));
  if (f.panelHeight < 100 || f.panelHeight > 20000)
    throw InputError(
        fmt::format("{}: panelHeight {} is outside [100, 20000] pixels", w.figure, f.panelHeight));
  if (f.panels.empty()) throw InputError(fmt::format("{}: no panels", w.figure));
  checkAxis(f.x, w.figure + ": x axis");
  for (size_t pi = 0; pi < f.panels.size(); ++pi) {
    const Panel& p = f.panels[pi];
    std::string pw = w.panel(pi, p);
    if (p.series.empty()) throw InputError(pw + ": no series");
    checkAxis(p.y, pw + ": y axis");
    for (size_t i = 0; i < p.hlines.size(); ++i)
      checkValue(p.hlines[i], p.y.scale, pw, fmt::format("hlines[{}]", i));
    for (size_t i = 0; i < p.vlines.size(); ++i)
      checkValue(p.vlines[i], f.x.scale, pw, fmt::format("vlines[{}]", i));
    for (size_t si = 0; si < p.series.size(); ++si) {
      const Series& s = p.series[si];
      std::string sw = w.series(pi, p, si, s);
      if (s.x.size() != s.y.size())
        throw InputError(
            fmt::format("{}: {} x values but {} y values", sw, s.x.size(), s.y.size()));
      if (s.x.empty()) throw InputError(sw + ": no points");
      if (!(s.width > 0) || !std::isfinite(s.width))
        throw InputError(fmt::format("{}: line width {} is not positive", sw, s.width));
      if (!(s.opacity >= 0 && s.opacity <= 1))
        throw InputError(fmt::format("{}: opacity {} is outside [0, 1]", sw, s.opacity));
      for (size_t i = 0; i < s.x.size(); ++i) {
        checkValue(s.x[i], f.x.scale, sw, fmt::format("x[{}]", i));
        checkValue(s.y[i], p.y.scale, sw, fmt::format("y[{}]", i));
      }
    }
  }
}

// ---- ranges -------------------------------------------------------------------------------------

struct Range {
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
};

// Width of a series' bars in axis units (the transformed ones on a log axis).
double barWidthT(const Series& s, Scale scale) {
  std::vector<double> t;
  t.reserve(s.x.size());
  for (double x : s.x) t.push_back(toT(x, scale));
  std::sort(t.begin(), t.end());
  double w = HUGE_VAL;
  for (size_t i = 1; i < t.size(); ++i)
    if (t[i] > t[i - 1]) w = std::min(w, t[i] - t[i - 1]);
  return std::isfinite(w) ? w : 1.0;
}

// Widens an empty range [v, v] around v.
void widen(Range& r, Scale scale) {
  if (r.lo < r.hi) return;
  if (scale == Scale::Log10) {
    r.lo /= 2;
    r.hi *= 2;
  } else {
    double d = r.lo == 0 ? 1 : std::abs(r.lo) * 0.1;
    r.lo -= d;
    r.hi += d;
  }
}

Range applyLimits(Range r, const Axis& a, const std::string& where) {
  if (a.min) r.lo = *a.min;
  if (a.max) r.hi = *a.max;
  if (!(r.lo < r.hi))
    throw InputError(
        fmt::format("{}: min {} is not below max {} (one of them fixed, the other from "
                    "the data)",
                    where, r.lo, r.hi));
  return r;
}

Range xRange(const Figure& f, const std::string& where) {
  Range r;
  for (const Panel& p : f.panels) {
    for (const Series& s : p.series) {
      double half = p.kind == Panel::Kind::Bars ? barWidthT(s, f.x.scale) / 2 : 0;
      for (double x : s.x) {
        double t = toT(x, f.x.scale);
        r.add(t - half);
        r.add(t + half);
      }
    }
    for (double v : p.vlines) r.add(toT(v, f.x.scale));
  }
  if (f.x.scale == Scale::Log10) r = {std::pow(10.0, r.lo), std::pow(10.0, r.hi)};
  widen(r, f.x.scale);
  return applyLimits(r, f.x, where);
}

Range yRange(const Panel& p, const std::string& where) {
  Range r;
  for (const Series& s : p.series)
    for (double y : s.y) r.add(y);
  for (double v : p.hlines) r.add(v);
  bool bars = p.kind == Panel::Kind::Bars && p.y.scale == Scale::Linear;
  if (bars) r.add(0);
  widen(r, p.y.scale);
  // 5% margins, except below a bar panel's zero baseline.
  double lo = toT(r.lo, p.y.scale), hi = toT(r.hi, p.y.scale), m = 0.05 * (hi - lo);
  if (!(bars && r.lo == 0)) lo -= m;
  if (!(bars && r.hi == 0)) hi += m;
  if (p.y.scale == Scale::Log10)
    r = {std::pow(10.0, lo), std::pow(10.0, hi)};
  else
    r = {lo, hi};
  return applyLimits(r, p.y, where);
}

// ---- legend placement ---------------------------------------------------------------------------

// Which 4x4-pixel cells of the plot area something is drawn in.
class Coverage {
 public:
  Coverage(double x0, double y0, double w, double h)
      : x0_(x0),
        y0_(y0),
        cols_(static_cast<int>(w / kCell) + 1),
        rows_(static_cast<int>(h / kCell) + 1),
        hit_(static_cast<size_t>(cols_) * rows_, 0) {}

  void point(double x, double y) {
    int c = static_cast<int>(std::floor((x - x0_) / kCell));
    int r = static_cast<int>(std::floor((y - y0_) / kCell));
    if (c >= 0 && r >= 0 && c < cols_ && r < rows_) hit_[static_cast<size_t>(r) * cols_ + c] = 1;
  }
  void segment(double xa, double ya, double xb, double yb) {
    double len = std::hypot(xb - xa, yb - ya);
    int n = static_cast<int>(std::min(len / (kCell / 2), 4000.0)) + 1;
    for (int i = 0; i <= n; ++i) {
      double f = static_cast<double>(i) / n;
      point(xa + f * (xb - xa), ya + f * (yb - ya));
    }
  }
  void rect(double xa, double ya, double xb, double yb) {
    for (double y = std::min(ya, yb); y <= std::max(ya, yb); y += kCell / 2) segment(xa, y, xb, y);
  }
  int count(double x, double y, double w, double h) const {
    int c0 = std::max(0, static_cast<int>((x - x0_) / kCell));
    int c1 = std::min(cols_ - 1, static_cast<int>((x + w - x0_) / kCell));
    int r0 = std::max(0, static_cast<int>((y - y0_) / kCell));
    int r1 = std::min(rows_ - 1, static_cast<int>((y + h - y0_) / kCell));
    int n = 0;
    for (int r = r0; r <= r1; ++r)
      for (int c = c0; c <= c1; ++c) n += hit_[static_cast<size_t>(r) * cols_ + c];
    return n;
  }

 private:
  static constexpr double kCell = 4;
  double x0_, y0_;
  int cols_, rows_;
  std::vector<uint8_t> hit_;
};

// ---- per-panel layout ---------------------------------------------------------------------------

enum class LegendMode { None, Inside, Outside };

struct PanelLayout {
  Range y;
  std::vector<Tick> yTicks;
  double top = 0, height = 0;  // plot area
  double titleH = 0;
  std::vector<size_t> legendEntries;  // indices of labelled series
  LegendMode legend = LegendMode::None;
  double legendTextW = 0;
  int legendCols = 1, legendRows = 0;
};

double maxLabelWidth(const std::vector<Tick>& ticks, double fontPx) {
  double w = 0;
  for (const Tick& t : ticks) w = std::max(w, textWidth(t.label, fontPx));
  return w;
}

std::string seriesColor(const Series& s, size_t i) {
  return s.color.empty() ? paletteColor(i) : s.color;
}

std::string dashArray(double width) {
  double d = std::max(3.0, 3 * width);
  return fmt::format(" stroke-dasharray=\"{} {}\"", num(d), num(d * 0.6));
}

std::string textAttrs(double fontPx, const char* anchor, const char* extra = "") {
  return fmt::format("font-size=\"{}\" text-anchor=\"{}\" fill=\"{}\"{}", num(fontPx), anchor,
                     kTextColor, extra);
}

}  // namespace

// ---- building blocks ----------------------------------------------------------------------------

double textWidth(const std::string& text, double fontPx) {
  size_t glyphs = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++glyphs;
  return static_cast<double>(glyphs) * fontPx * 0.6;
}

std::string svgNumber(double v) {
  if (std::abs(v) < 0.005) return "0";
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string paletteColor(size_t i) { return kPalette[i % std::size(kPalette)]; }

double niceStep(double span, double maxCount) {
  if (!(span > 0) || !(maxCount >= 1)) return span > 0 ? span : 1;
  double raw = span / std::floor(maxCount);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw * (1 - 1e-9)) return m * mag;
  return 10 * mag;
}

std::string formatTick(double v, double maxAbs, double step) {
  if (v == 0 || (step > 0 && std::abs(v) < step * 1e-6)) return "0";
  static constexpr const char* kPrefix[] = {"f", "p", "n", "µ", "m", "", "k", "M", "G", "T", "P"};
  bool si = maxAbs >= 1e4 || maxAbs < 1e-2;
  // A shared exponent for linear axes (stepped labels), each label's own on log axes.
  double ref = step > 0 ? maxAbs : std::abs(v);
  int e3 = si ? static_cast<int>(std::floor(std::log10(ref) / 3 + 1e-9)) * 3 : 0;
  std::string s;
  if (e3 < -15 || e3 > 15) {
    s = fmt::format("{:.3g}", v);
  } else {
    double scaled = v / std::pow(10.0, e3);
    if (step > 0) {
      int decimals =
          std::max(0, static_cast<int>(-std::floor(std::log10(step / std::pow(10.0, e3)) + 1e-9)));
      s = fmt::format("{:.{}f}", scaled, decimals);
    } else {
      s = fmt::format("{:.4g}", scaled);
    }
    s += kPrefix[(e3 + 15) / 3];
  }
  if (s[0] == '-') s = "\u2212" + s.substr(1);  // a real minus sign
  return s;
}

std::vector<Tick> makeTicks(double lo, double hi, Scale scale, double lengthPx,
                            double minSpacingPx) {
  std::vector<Tick> ticks;
  if (!(lo < hi) || !(lengthPx > 0)) return ticks;
  double maxCount = std::max(1.0, std::floor(lengthPx / std::max(1.0, minSpacingPx)));
  auto linear = [&](double step) {
    std::vector<Tick> t;
    double first = std::ceil(lo / step - 1e-9), last = std::floor(hi / step + 1e-9);
    for (double k = first; k <= last; ++k) t.push_back({k * step, true, ""});
    double maxAbs = 0;
    for (const Tick& x : t) maxAbs = std::max(maxAbs, std::abs(x.value));
    for (Tick& x : t) x.label = formatTick(x.value, maxAbs, step);
    return t;
  };
  if (scale == Scale::Linear) {
    // A short axis can fit a step with only one multiple in range; then take smaller steps,
    // closer than asked, so that the axis has at least two labels.
    double step = niceStep(hi - lo, maxCount);
    std::vector<Tick> t = linear(step);
    for (int guard = 0; t.size() < 2 && guard < 3; ++guard) {
      double m = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
      step *= m > 4.5 ? 0.4 : 0.5;  // 5 -> 2, 2 -> 1, 1 -> 0.5
      t = linear(step);
    }
    return t;
  }

  double L = std::log10(lo), H = std::log10(hi), pxPerDecade = lengthPx / (H - L);
  auto inRange = [&](double v) { return v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9); };
  // Log labels use SI prefixes when the axis reaches 10^4 or goes below 10^-2 (1m 10m 100m 1,
  // not 0.001 0.01 0.1 1): formatTick decides by the magnitude it is given.
  auto finish = [&](std::vector<Tick>& t) {
    double maxAbs = 0, minAbs = HUGE_VAL;
    for (const Tick& x : t)
      if (x.major) {
        maxAbs = std::max(maxAbs, x.value);
        minAbs = std::min(minAbs, x.value);
      }
    double decisive = minAbs < 1e-2 ? minAbs : maxAbs;
    for (Tick& x : t)
      if (x.major) x.label = formatTick(x.value, decisive, 0);
  };
  int dLo = static_cast<int>(std::ceil(L - 1e-9)), dHi = static_cast<int>(std::floor(H + 1e-9));
  if (dHi - dLo + 1 >= 2) {
    // Decades; every stride-th is labelled when they are too close for all.
    int stride = std::max(1, static_cast<int>(std::ceil(minSpacingPx / pxPerDecade - 1e-9)));
    bool minors = stride == 1 && pxPerDecade >= 30;
    for (int d = static_cast<int>(std::floor(L)); d <= static_cast<int>(std::ceil(H)); ++d) {
      for (int m = 1; m <= 9; ++m) {
        double v = m * std::pow(10.0, d);
        if (!inRange(v)) continue;
        if (m == 1)
          ticks.push_back({v, ((d - dLo) % stride + stride) % stride == 0, ""});
        else if (minors)
          ticks.push_back({v, false, ""});
      }
    }
    finish(ticks);
    return ticks;
  }
  // Under about a decade: label 1, 2 and 5 if they are far enough apart, with minors at the rest.
  {
    std::vector<Tick> t;
    for (int d = static_cast<int>(std::floor(L)); d <= static_cast<int>(std::ceil(H)); ++d)
      for (int m = 1; m <= 9; ++m) {
        double v = m * std::pow(10.0, d);
        if (inRange(v)) t.push_back({v, m == 1 || m == 2 || m == 5, ""});
      }
    double prev = -HUGE_VAL, minGap = HUGE_VAL;
    int majors = 0;
    for (const Tick& x : t)
      if (x.major) {
        double p = std::log10(x.value) * pxPerDecade;
        minGap = std::min(minGap, p - prev);
        prev = p;
        ++majors;
      }
    if (majors >= 2 && minGap >= minSpacingPx) {
      finish(t);
      return t;
    }
  }
  // Narrower still: 1-2-5 steps, the largest gap in pixels (at the top end) wide enough.
  double step = niceStep(hi - lo, maxCount);
  for (int guard = 0; guard < 60; ++guard) {
    double first = std::ceil(lo / step - 1e-9), last = std::floor(hi / step + 1e-9);
    double gapPx = last > first ? std::log10(last / (last - 1)) * pxPerDecade : HUGE_VAL;
    if (gapPx >= minSpacingPx || last - first < 2) break;
    step = niceStep(hi - lo, std::max(1.0, (hi - lo) / step - 1));
  }
  return linear(step);
}

double AxisMap::operator()(double v) const {
  double tlo = toT(lo, scale), thi = toT(hi, scale);
  return p0 + (toT(v, scale) - tlo) / (thi - tlo) * (p1 - p0);
}

std::vector<std::pair<double, double>> thin(const std::vector<std::pair<double, double>>& points,
                                            double bucketPx) {
  std::vector<std::pair<double, double>> out;
  if (!(bucketPx > 0)) return points;
  size_t n = points.size();
  out.reserve(std::min(n, size_t{4096}));
  size_t i = 0;
  while (i < n) {
    double bucket = std::floor(points[i].first / bucketPx);
    size_t j = i, lo = i, hi = i;
    while (j + 1 < n && std::floor(points[j + 1].first / bucketPx) == bucket) {
      ++j;
      if (points[j].second < points[lo].second) lo = j;
      if (points[j].second > points[hi].second) hi = j;
    }
    size_t keep[4] = {i, lo, hi, j};
    std::sort(std::begin(keep), std::end(keep));
    for (size_t k = 0; k < 4; ++k)
      if (k == 0 || keep[k] != keep[k - 1]) out.push_back(points[keep[k]]);
    i = j + 1;
  }
  return out;
}

std::string xmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (c >= 0x20 || ch == '\t' || ch == '\n' || ch == '\r') out += ch;
    }
  }
  return out;
}

// ---- the figure ---------------------------------------------------------------------------------

std::string toSvg(const Figure& f) {
  Where where{f.title.empty() ? "plot" : "plot" + quoted(f.title)};
  validate(f, where);
  const size_t nPanels = f.panels.size();
  const double W = f.width, PH = f.panelHeight;

  // Vertical layout: title, panels (each PH tall including its title row and the gap below),
  // then the x tick labels and x axis label under the last one.
  const double top = f.title.empty() ? 12 : 40;
  const double bottom = kMajorTick + 4 + kTickFont + (f.x.label.empty() ? 0 : 10 + kLabelFont) + 14;
  const double H = top + nPanels * PH - kPanelGap + bottom;

  Range xr = xRange(f, where.figure + ": x axis");
  std::vector<PanelLayout> L(nPanels);
  double maxYLabelW = 0;
  bool anyYLabel = false;
  for (size_t i = 0; i < nPanels; ++i) {
    const Panel& p = f.panels[i];
    PanelLayout& pl = L[i];
    pl.titleH = p.title.empty() ? 8 : 24;
    pl.top = top + i * PH + pl.titleH;
    pl.height = PH - pl.titleH - kPanelGap;
    pl.y = yRange(p, where.panel(i, p) + ": y axis");
    pl.yTicks = makeTicks(pl.y.lo, pl.y.hi, p.y.scale, pl.height, 38);
    maxYLabelW = std::max(maxYLabelW, maxLabelWidth(pl.yTicks, kTickFont));
    anyYLabel |= !p.y.label.empty();
    if (p.legend)
      for (size_t s = 0; s < p.series.size(); ++s)
        if (!p.series[s].label.empty()) pl.legendEntries.push_back(s);
    for (size_t s : pl.legendEntries)
      pl.legendTextW = std::max(pl.legendTextW, textWidth(p.series[s].label, kLegendFont));
  }
  const double left =
      std::ceil(10 + (anyYLabel ? kLabelFont + 10 : 0) + maxYLabelW + kMajorTick + 5);

  // Legends: inside the plot for a few entries, in columns right of it for more (or when the
  // inside box would be wider than 40% of the plot).
  auto outsideWidth = [&](PanelLayout& pl) {
    int rowsFit = std::max(1, static_cast<int>((pl.height - 4) / kLegendRow));
    int n = static_cast<int>(pl.legendEntries.size());
    pl.legendCols = (n + rowsFit - 1) / rowsFit;
    pl.legendRows = (n + pl.legendCols - 1) / pl.legendCols;
    return pl.legendCols * (kLegendSwatch + 6 + pl.legendTextW + 14);
  };
  double right = 24;
  for (PanelLayout& pl : L)
    if (pl.legendEntries.size() > kInsideLegendMax) {
      pl.legend = LegendMode::Outside;
      right = std::max(right, std::ceil(14 + outsideWidth(pl)));
    }
  for (PanelLayout& pl : L)
    if (!pl.legendEntries.empty() && pl.legend == LegendMode::None) {
      double boxW = 8 + kLegendSwatch + 6 + pl.legendTextW + 10;
      double boxH = 6 + pl.legendEntries.size() * kLegendRow + 2;
      if (boxW <= 0.4 * (W - left - right) && boxH <= 0.8 * pl.height) {
        pl.legend = LegendMode::Inside;
        pl.legendRows = static_cast<int>(pl.legendEntries.size());
      } else {
        pl.legend = LegendMode::Outside;
        right = std::max(right, std::ceil(14 + outsideWidth(pl)));
      }
    }
  if (W - left - right < 60)
    throw InputError(fmt::format(
        "{}: width {} leaves no room for the plot area beside the legend (widen it, or set legend "
        "= false and label fewer series)",
        where.figure, W));

  // X ticks, spaced for their widest label; the last label may need more right margin.
  std::vector<Tick> xTicks;
  for (int pass = 0; pass < 3; ++pass) {
    double plotW = W - left - right, spacing = 70;
    for (int k = 0; k < 3; ++k) {
      xTicks = makeTicks(xr.lo, xr.hi, f.x.scale, plotW, spacing);
      double need = maxLabelWidth(xTicks, kTickFont) + 14;
      if (need <= spacing) break;
      spacing = need;
    }
    AxisMap xm{xr.lo, xr.hi, f.x.scale, left, W - right};
    double overflow = 0;
    for (const Tick& t : xTicks)
      if (t.major)
        overflow = std::max(overflow, xm(t.value) + textWidth(t.label, kTickFont) / 2 - (W - 4));
    if (overflow <= 0) break;
    right += std::ceil(overflow);
  }
  const double x0 = left, x1 = W - right, plotW = x1 - x0;
  const AxisMap xm{xr.lo, xr.hi, f.x.scale, x0, x1};

  // Clip-path ids differ between figures (by a hash of what sets their geometry), so that
  // several figures can be inlined into one HTML page.
  std::string key = fmt::format("{}|{}|{}|{}|{}|{}", f.title, W, H, left, right, nPanels);
  for (const PanelLayout& pl : L) key += fmt::format("|{}|{}", pl.top, pl.height);
  uint32_t hash = 2166136261u;  // FNV-1a
  for (unsigned char c : key) hash = (hash ^ c) * 16777619u;
  const std::string clipId = fmt::format("gpusc-clip-{:08x}", hash);

  Writer w;
  w("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  w("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
    "viewBox=\"0 0 {0} {1}\" font-family=\"{2}\">\n",
    num(W), num(H), kFontFamily);
  if (!f.title.empty()) w("<title>{}</title>\n", xmlEscape(f.title));
  w("<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", num(W), num(H));
  if (!f.title.empty())
    w("<text x=\"{}\" y=\"26\" {}>{}</text>\n", num(W / 2),
      textAttrs(kTitleFont, "middle", " font-weight=\"600\""), xmlEscape(f.title));

  for (size_t pi = 0; pi < nPanels; ++pi) {
    const Panel& p = f.panels[pi];
    const PanelLayout& pl = L[pi];
    const double y0 = pl.top, y1 = pl.top + pl.height;
    const AxisMap ym{pl.y.lo, pl.y.hi, p.y.scale, y1, y0};
    const bool last = pi + 1 == nPanels;
    w("<g class=\"panel\">\n");
    w("<defs><clipPath id=\"{}-{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" "
      "height=\"{}\"/></clipPath></defs>\n",
      clipId, pi, num(x0), num(y0), num(plotW), num(pl.height));
    w("<rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
      num(x0), num(y0), num(plotW), num(pl.height));
    if (!p.title.empty())
      w("<text x=\"{}\" y=\"{}\" {}>{}</text>\n", num(x0), num(y0 - 8),
        textAttrs(kPanelTitleFont, "start", " font-weight=\"600\""), xmlEscape(p.title));

    // Grid: minor lines first, major over them.
    w("<g class=\"grid\" stroke-width=\"1\" shape-rendering=\"crispEdges\">\n");
    for (bool major : {false, true}) {
      for (const Tick& t : xTicks)
        if (t.major == major)
          w("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\"/>\n",
            num(xm(t.value)), num(y0), num(y1), major ? kGridMajor : kGridMinor);
      for (const Tick& t : pl.yTicks)
        if (t.major == major)
          w("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\"/>\n", num(x0),
            num(ym(t.value)), num(x1), major ? kGridMajor : kGridMinor);
    }
    w("</g>\n");

    // Data, clipped to the plot area.
    Coverage cover(x0, y0, plotW, pl.height);
    w("<g class=\"data\" clip-path=\"url(#{}-{})\">\n", clipId, pi);
    const bool overlaidBars = p.kind == Panel::Kind::Bars && p.series.size() > 1;
    for (size_t si = 0; si < p.series.size(); ++si) {
      const Series& s = p.series[si];
      std::string color = xmlEscape(seriesColor(s, si));
      if (p.kind == Panel::Kind::Bars) {
        double halfT = barWidthT(s, f.x.scale) / 2;
        double base = p.y.scale == Scale::Log10 ? y1 : std::clamp(ym(0), y0 - 1, y1 + 1);
        AxisMap tm{toT(xr.lo, f.x.scale), toT(xr.hi, f.x.scale), Scale::Linear, x0, x1};
        double barPx = tm(halfT * 2) - tm(0);
        double fillOpacity = s.opacity * (overlaidBars ? 0.55 : 0.85);
        w("<path fill=\"{}\" fill-opacity=\"{}\"", color, num(fillOpacity));
        if (barPx >= 4)
          w(" stroke=\"{}\" stroke-opacity=\"{}\" stroke-width=\"1\"", color, num(s.opacity));
        w(" d=\"");
        for (size_t i = 0; i < s.x.size(); ++i) {
          double t = toT(s.x[i], f.x.scale);
          double bx0 = tm(t - halfT), bx1 = tm(t + halfT);
          double by = std::clamp(ym(s.y[i]), y0 - 1, y1 + 1);
          if (std::abs(by - base) < 0.01) continue;
          w("M{} {}H{}V{}H{}Z", num(bx0), num(base), num(bx1), num(by), num(bx0));
          cover.rect(bx0, base, bx1, by);
        }
        w("\"/>\n");
        continue;
      }
      // Points left or right of a fixed x range are dropped, except where the line crosses
      // into (or across) the plot area.
      const size_t n = s.x.size();
      auto side = [&](size_t i) {
        double x = xm(s.x[i]);
        return x < x0 - 1 ? -1 : x > x1 + 1 ? 1 : 0;
      };
      std::vector<std::pair<double, double>> px;
      px.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        int here = side(i);
        if (here == 0 || (i > 0 && side(i - 1) != here) || (i + 1 < n && side(i + 1) != here))
          px.push_back({xm(s.x[i]), ym(s.y[i])});
      }
      if (px.empty()) px.push_back({xm(s.x[0]), ym(s.y[0])});
      if (s.markers) {
        // One dot per occupied pixel: thousands of events stay a few kilobytes.
        std::set<std::pair<long, long>> seen;
        const double r = std::max(2.0, s.width * 1.5);
        w("<g fill=\"{}\" fill-opacity=\"{}\">", color, num(s.opacity));
        for (const auto& [x, y] : px) {
          const std::pair<long, long> cell{std::lround(x), std::lround(y)};
          if (!seen.insert(cell).second) continue;
          w("<circle cx=\"{}\" cy=\"{}\" r=\"{}\"/>", num(x), num(y), num(r));
          cover.point(x, y);
        }
        w("</g>\n");
        continue;
      }
      if (s.points) {
        // Every measured point (a sweep's few points; thinning keeps them all anyway).
        const double r = std::max(2.5, s.width * 1.6);
        w("<g fill=\"{}\" fill-opacity=\"{}\">", color, num(s.opacity));
        for (const auto& [x, y] : px) {
          w("<circle cx=\"{}\" cy=\"{}\" r=\"{}\"/>", num(x), num(y), num(r));
          cover.point(x, y);
        }
        w("</g>\n");
      }
      px = thin(px);
      if (px.size() == 1) {
        w("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" fill-opacity=\"{}\"/>\n",
          num(px[0].first), num(px[0].second), num(std::max(2.0, s.width * 1.5)), color,
          num(s.opacity));
        cover.point(px[0].first, px[0].second);
        continue;
      }
      w("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"", color, num(s.width));
      if (s.opacity < 1) w(" stroke-opacity=\"{}\"", num(s.opacity));
      if (s.dashed) w("{}", dashArray(s.width));
      w(" stroke-linejoin=\"round\" stroke-linecap=\"{}\" points=\"", s.dashed ? "butt" : "round");
      for (size_t i = 0; i < px.size(); ++i) {
        w("{}{},{}", i ? " " : "", num(px[i].first), num(px[i].second));
        if (i) cover.segment(px[i - 1].first, px[i - 1].second, px[i].first, px[i].second);
      }
      w("\"/>\n");
    }
    w("</g>\n");

    // Reference lines over the data, so that 15 overlaid series cannot hide a threshold.
    if (!p.hlines.empty() || !p.vlines.empty()) {
      w("<g class=\"reference\" stroke=\"{}\" stroke-width=\"1.2\" stroke-dasharray=\"6 4\" "
        "clip-path=\"url(#{}-{})\">\n",
        kRefLineColor, clipId, pi);
      for (double v : p.hlines) {
        w("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n", num(x0), num(ym(v)), num(x1));
        cover.segment(x0, ym(v), x1, ym(v));
      }
      for (double v : p.vlines) {
        w("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", num(xm(v)), num(y0), num(y1));
        cover.segment(xm(v), y0, xm(v), y1);
      }
      w("</g>\n");
    }

    // Frame and ticks.
    w("<g class=\"axes\" stroke=\"{}\" stroke-width=\"1\" shape-rendering=\"crispEdges\">\n",
      kAxisColor);
    w("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\"/>\n", num(x0), num(y0),
      num(plotW), num(pl.height));
    for (const Tick& t : pl.yTicks) {
      double y = ym(t.value);
      w("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n",
        num(x0 - (t.major ? kMajorTick : kMinorTick)), num(y), num(x0));
    }
    for (const Tick& t : xTicks) {
      double x = xm(t.value);
      w("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", num(x), num(y1),
        num(y1 + (t.major ? kMajorTick : kMinorTick)));
    }
    w("</g>\n");
    w("<g class=\"tick-labels\" {}>\n", textAttrs(kTickFont, "end"));
    for (const Tick& t : pl.yTicks)
      if (t.major)
        w("<text x=\"{}\" y=\"{}\" dy=\"0.35em\">{}</text>\n", num(x0 - kMajorTick - 3),
          num(ym(t.value)), xmlEscape(t.label));
    w("</g>\n");
    if (last) {
      w("<g class=\"tick-labels\" {}>\n", textAttrs(kTickFont, "middle"));
      for (const Tick& t : xTicks)
        if (t.major)
          w("<text x=\"{}\" y=\"{}\">{}</text>\n", num(xm(t.value)),
            num(y1 + kMajorTick + 3 + kTickFont), xmlEscape(t.label));
      w("</g>\n");
      if (!f.x.label.empty())
        w("<text x=\"{}\" y=\"{}\" {}>{}</text>\n", num(x0 + plotW / 2),
          num(y1 + kMajorTick + 3 + kTickFont + 10 + kLabelFont), textAttrs(kLabelFont, "middle"),
          xmlEscape(f.x.label));
    }
    if (!p.y.label.empty())
      w("<text transform=\"translate({},{}) rotate(-90)\" {}>{}</text>\n",
        num(10 + kLabelFont * 0.8), num(y0 + pl.height / 2), textAttrs(kLabelFont, "middle"),
        xmlEscape(p.y.label));

    // Legend.
    if (pl.legend != LegendMode::None) {
      double colW = kLegendSwatch + 6 + pl.legendTextW + 14;
      double lx = 0, ly = 0;
      if (pl.legend == LegendMode::Outside) {
        lx = x1 + 14;
        ly = y0 + 2;
        w("<g class=\"legend\">\n");
      } else {
        double bw = 8 + kLegendSwatch + 6 + pl.legendTextW + 10;
        double bh = 6 + pl.legendRows * kLegendRow + 2;
        // The corner covering the least drawn data (ties: top right, top left, bottom right, ...).
        const double inset = 8;
        std::pair<double, double> corners[] = {{x1 - inset - bw, y0 + inset},
                                               {x0 + inset, y0 + inset},
                                               {x1 - inset - bw, y1 - inset - bh},
                                               {x0 + inset, y1 - inset - bh}};
        int best = -1;
        for (const auto& c : corners) {
          int n = cover.count(c.first, c.second, bw, bh);
          if (best < 0 || n < best) {
            best = n;
            lx = c.first;
            ly = c.second;
          }
        }
        w("<g class=\"legend\">\n");
        w("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\" fill=\"#ffffff\" "
          "fill-opacity=\"0.9\" stroke=\"#c8c8c8\" stroke-width=\"1\"/>\n",
          num(lx), num(ly), num(bw), num(bh));
        lx += 8;
        ly += 6;
      }
      for (size_t k = 0; k < pl.legendEntries.size(); ++k) {
        const Series& s = p.series[pl.legendEntries[k]];
        std::string color = xmlEscape(seriesColor(s, pl.legendEntries[k]));
        size_t col = k / static_cast<size_t>(pl.legendRows), row = k % pl.legendRows;
        double ex = lx + col * colW, ey = ly + row * kLegendRow + kLegendRow / 2;
        if (p.kind == Panel::Kind::Bars) {
          w("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" fill=\"{}\" "
            "fill-opacity=\"{}\"/>\n",
            num(ex + 4), num(ey - 5), num(kLegendSwatch - 8), color,
            num(s.opacity * (overlaidBars ? 0.55 : 0.85)));
        } else if (s.markers) {
          w("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"/>\n", num(ex + kLegendSwatch / 2),
            num(ey), num(std::max(2.0, s.width * 1.5)), color);
        } else {
          w("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"{4}\"",
            num(ex), num(ex + kLegendSwatch), num(ey), color, num(std::clamp(s.width, 1.5, 3.0)));
          if (s.opacity < 1) w(" stroke-opacity=\"{}\"", num(std::max(s.opacity, 0.4)));
          if (s.dashed) w("{}", dashArray(std::clamp(s.width, 1.0, 2.0)));
          w("/>\n");
        }
        w("<text x=\"{}\" y=\"{}\" dy=\"0.35em\" {}>{}</text>\n", num(ex + kLegendSwatch + 6),
          num(ey), textAttrs(kLegendFont, "start"), xmlEscape(s.label));
      }
      w("</g>\n");
    }
    w("</g>\n");
  }
  w("</svg>\n");
  return std::move(w.out);
}

void writeSvg(const Figure& figure, const std::string& path) {
  writeFileAtomically(path, toSvg(figure));
}

}  // namespace gpusc::plot
