#include "common/svg_heatmap.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/svg_plot.hpp"
#include "common/svg_style.hpp"

namespace gpusc::plot {

namespace {

using namespace style;

constexpr double kBarWidth = 14;  // the colour bar

// The viridis colour map's anchors (from dark blue to yellow), evenly spaced over [0, 1].
constexpr unsigned kAnchors[] = {0x440154, 0x482878, 0x3e4989, 0x31688e, 0x26828e,
                                 0x1f9e89, 0x35b779, 0x6ece58, 0xb5de2b, 0xfde725};

std::string text(double x, double y, double font, const char* anchor, const std::string& s,
                 const char* extra = "") {
  return fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{}\" fill=\"{}\"{}>{}"
      "</text>\n",
      num(x), num(y), num(font), anchor, kTextColor, extra, xmlEscape(s));
}

void validate(const Heatmap& h, const std::string& where) {
  if (h.values.empty()) throw InputError(where + ": no rows");
  if (h.rowLabels.size() != h.values.size())
    throw InputError(
        fmt::format("{}: {} row labels for {} rows", where, h.rowLabels.size(), h.values.size()));
  const bool numeric = !h.xEdges.empty(), categories = !h.columnLabels.empty();
  if (numeric == categories)
    throw InputError(where + ": set exactly one of the column edges and the column labels");
  const size_t cols = numeric ? h.xEdges.size() - 1 : h.columnLabels.size();
  if (cols == 0) throw InputError(where + ": no columns");
  for (size_t i = 1; i < h.xEdges.size(); ++i)
    if (!std::isfinite(h.xEdges[i]) || !(h.xEdges[i] > h.xEdges[i - 1]))
      throw InputError(fmt::format("{}: column edges must increase (edge {})", where, i));
  for (size_t r = 0; r < h.values.size(); ++r) {
    if (h.values[r].size() != cols)
      throw InputError(fmt::format("{}: row {} has {} values for {} columns", where, r,
                                   h.values[r].size(), cols));
    for (double v : h.values[r])
      if (std::isinf(v))
        throw InputError(fmt::format("{}: row {} has an infinite value", where, r));
  }
  if (h.min && h.max && !(*h.min < *h.max))
    throw InputError(fmt::format("{}: colour range min {} >= max {}", where, *h.min, *h.max));
}

}  // namespace

std::string heatColor(double t) {
  if (!(t >= 0)) t = 0;  // also NaN
  t = std::min(t, 1.0);
  constexpr size_t n = std::size(kAnchors);
  const double pos = t * double(n - 1);
  const size_t i = std::min(n - 2, static_cast<size_t>(pos));
  const double f = pos - double(i);
  const auto channel = [&](int shift) {
    const double a = (kAnchors[i] >> shift) & 0xff, b = (kAnchors[i + 1] >> shift) & 0xff;
    return static_cast<unsigned>(std::lround(a + (b - a) * f));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", channel(16), channel(8), channel(0));
}

std::string toSvg(const Heatmap& h) {
  const std::string where = h.title.empty() ? "heatmap" : "heatmap '" + h.title + "'";
  validate(h, where);
  const bool numeric = !h.xEdges.empty();
  const size_t rows = h.values.size(), cols = numeric ? h.xEdges.size() - 1 : h.columnLabels.size();

  // Colour range over the finite values (a constant map gets a unit-wide range).
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& row : h.values)
    for (double v : row)
      if (!std::isnan(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(lo <= hi)) lo = 0, hi = 1;  // no finite value at all
  if (h.min) lo = *h.min;
  if (h.max) hi = *h.max;
  if (!(hi > lo)) hi = lo + 1;

  // Layout.
  const double W = h.width;
  const double rowH =
      h.rowHeight > 0 ? h.rowHeight : std::clamp(std::floor(360.0 / double(rows)), 6.0, 24.0);
  double labelW = 0;
  for (const auto& l : h.rowLabels) labelW = std::max(labelW, textWidth(l, kTickFont));
  const double left = std::ceil(10 + (h.yLabel.empty() ? 0 : kLabelFont + 10) + labelW + 6);
  const std::vector<Tick> barTicks = makeTicks(lo, hi, Scale::Linear, rows * rowH, 28);
  double barLabelW = 0;
  for (const Tick& t : barTicks)
    if (t.major) barLabelW = std::max(barLabelW, textWidth(t.label, kTickFont));
  const double right = std::ceil(16 + kBarWidth + 6 + barLabelW + (h.valueLabel.empty() ? 0 : 22));
  const double top = h.title.empty() ? 12 : 40;
  const double x0 = left, x1 = W - right, plotW = x1 - x0;
  if (plotW < 60 || (!numeric && plotW / double(cols) < 0.5))
    throw InputError(fmt::format("{}: width {} leaves no room for {} columns", where, W, cols));
  const double y0 = top, y1 = top + rows * rowH;

  // Column geometry and x-axis labels.
  std::vector<double> colX(cols + 1);
  std::vector<Tick> xTicks;
  double xLabelRows = 1;
  if (numeric) {
    const AxisMap xm{h.xEdges.front(), h.xEdges.back(), Scale::Linear, x0, x1};
    for (size_t c = 0; c <= cols; ++c) colX[c] = xm(h.xEdges[c]);
    xTicks = makeTicks(h.xEdges.front(), h.xEdges.back(), Scale::Linear, plotW, 80);
  } else {
    for (size_t c = 0; c <= cols; ++c) colX[c] = x0 + plotW * double(c) / double(cols);
    double widest = 0;
    for (const auto& l : h.columnLabels) widest = std::max(widest, textWidth(l, kTickFont));
    if (widest + 4 > plotW / double(cols)) xLabelRows = 2;  // alternate rows when crowded
  }
  const double bottom =
      8 + xLabelRows * (kTickFont + 4) + (h.xLabel.empty() ? 0 : kLabelFont + 10) + 10;
  const double H = y1 + bottom;

  Writer w;
  w("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  w("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
    "viewBox=\"0 0 {0} {1}\" font-family=\"{2}\">\n",
    num(W), num(H), kFontFamily);
  if (!h.title.empty()) w("<title>{}</title>\n", xmlEscape(h.title));
  w("<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", num(W), num(H));
  if (!h.title.empty())
    w("{}", text(W / 2, 26, kTitleFont, "middle", h.title, " font-weight=\"600\""));
  // Empty cells show the plot area's light grey.
  w("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f1f1f1\"/>\n", num(x0), num(y0),
    num(plotW), num(y1 - y0));

  // Cells: runs of equal colour merged into one rectangle per row.
  const auto colorOf = [&](double v) { return heatColor((v - lo) / (hi - lo)); };
  w("<g class=\"cells\" shape-rendering=\"crispEdges\">\n");
  for (size_t r = 0; r < rows; ++r) {
    const double ry = y0 + r * rowH;
    size_t c = 0;
    while (c < cols) {
      const double v = h.values[r][c];
      if (std::isnan(v)) {
        ++c;
        continue;
      }
      const std::string color = colorOf(v);
      size_t e = c + 1;
      while (e < cols && !std::isnan(h.values[r][e]) && colorOf(h.values[r][e]) == color) ++e;
      w("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", num(colX[c]), num(ry),
        num(std::max(colX[e] - colX[c], 0.5)), num(rowH), color);
      c = e;
    }
  }
  w("</g>\n");

  // Values in the cells, where they fit.
  if (h.annotate) {
    w("<g class=\"values\">\n");
    for (size_t r = 0; r < rows; ++r)
      for (size_t c = 0; c < cols; ++c) {
        const double v = h.values[r][c];
        if (std::isnan(v)) continue;
        const std::string label = fmt::format("{:.{}f}", v, h.valueDigits);
        const double cw = colX[c + 1] - colX[c];
        if (textWidth(label, kTickFont) + 4 > cw || rowH < kTickFont + 2) continue;
        const double t = (v - lo) / (hi - lo);
        w("<text x=\"{}\" y=\"{}\" dy=\"0.35em\" font-size=\"{}\" text-anchor=\"middle\" "
          "fill=\"{}\">{}</text>\n",
          num((colX[c] + colX[c + 1]) / 2), num(y0 + (r + 0.5) * rowH), num(kTickFont),
          t > 0.6 ? "#111" : "#fff", xmlEscape(label));
      }
    w("</g>\n");
  }

  // Row labels (every row that has room), the frame, the x axis.
  const size_t rowStep = static_cast<size_t>(std::ceil((kTickFont + 2) / rowH));
  for (size_t r = 0; r < rows; r += rowStep)
    w("<text x=\"{}\" y=\"{}\" dy=\"0.35em\" font-size=\"{}\" text-anchor=\"end\" "
      "fill=\"{}\">{}</text>\n",
      num(x0 - 6), num(y0 + (r + 0.5) * rowH), num(kTickFont), kTextColor,
      xmlEscape(h.rowLabels[r]));
  w("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\" "
    "stroke-width=\"1\" shape-rendering=\"crispEdges\"/>\n",
    num(x0), num(y0), num(plotW), num(y1 - y0));
  if (numeric) {
    const AxisMap xm{h.xEdges.front(), h.xEdges.back(), Scale::Linear, x0, x1};
    for (const Tick& t : xTicks) {
      if (!t.major) continue;
      const double x = xm(t.value);
      w("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333\"/>\n", num(x), num(y1),
        num(y1 + 5));
      w("{}", text(x, y1 + 8 + kTickFont, kTickFont, "middle", t.label));
    }
  } else {
    for (size_t c = 0; c < cols; ++c) {
      const double row = xLabelRows > 1 ? double(c % 2) : 0;
      w("{}", text((colX[c] + colX[c + 1]) / 2, y1 + 8 + kTickFont + row * (kTickFont + 4),
                   kTickFont, "middle", h.columnLabels[c]));
    }
  }
  if (!h.xLabel.empty())
    w("{}", text((x0 + x1) / 2, y1 + 8 + xLabelRows * (kTickFont + 4) + kLabelFont + 6, kLabelFont,
                 "middle", h.xLabel));
  if (!h.yLabel.empty())
    w("<text transform=\"translate({},{}) rotate(-90)\" font-size=\"{}\" text-anchor=\"middle\" "
      "fill=\"{}\">{}</text>\n",
      num(10 + kLabelFont), num((y0 + y1) / 2), num(kLabelFont), kTextColor, xmlEscape(h.yLabel));

  // Colour bar: stacked bands (a gradient element would need an id unique across the page).
  const double bx = x1 + 16;
  const AxisMap bm{lo, hi, Scale::Linear, y1, y0};
  constexpr int kBands = 48;
  for (int b = 0; b < kBands; ++b) {
    const double t0 = double(b) / kBands, t1 = double(b + 1) / kBands;
    w("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", num(bx),
      num(y1 - t1 * (y1 - y0)), num(kBarWidth), num((t1 - t0) * (y1 - y0) + 0.5),
      heatColor((t0 + t1) / 2));
  }
  w("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", num(bx),
    num(y0), num(kBarWidth), num(y1 - y0));
  for (const Tick& t : barTicks) {
    if (!t.major) continue;
    w("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\"/>\n", num(bx + kBarWidth),
      num(bm(t.value)), num(bx + kBarWidth + 4));
    w("<text x=\"{}\" y=\"{}\" dy=\"0.35em\" font-size=\"{}\" fill=\"{}\">{}</text>\n",
      num(bx + kBarWidth + 6), num(bm(t.value)), num(kTickFont), kTextColor, xmlEscape(t.label));
  }
  if (!h.valueLabel.empty())
    w("<text transform=\"translate({},{}) rotate(90)\" font-size=\"{}\" text-anchor=\"middle\" "
      "fill=\"{}\">{}</text>\n",
      num(W - 10 - kLabelFont / 2), num((y0 + y1) / 2), num(kLabelFont), kTextColor,
      xmlEscape(h.valueLabel));
  w("</svg>\n");
  return std::move(w.out);
}

}  // namespace gpusc::plot
