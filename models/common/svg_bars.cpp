#include "common/svg_bars.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/svg_plot.hpp"
#include "common/svg_style.hpp"

namespace gpusc::plot {

namespace {

using namespace style;

void validate(const BarChart& c, const std::string& where) {
  if (c.categories.empty()) throw InputError(where + ": no categories");
  if (c.series.empty()) throw InputError(where + ": no series");
  for (const BarSeries& s : c.series) {
    if (s.values.size() != c.categories.size())
      throw InputError(fmt::format("{}: series '{}' has {} values for {} categories", where,
                                   s.label, s.values.size(), c.categories.size()));
    bool any = false;
    for (double v : s.values) {
      if (std::isinf(v))
        throw InputError(fmt::format("{}: series '{}' has an infinite value", where, s.label));
      any |= !std::isnan(v);
    }
    if (!any) throw InputError(fmt::format("{}: series '{}' has no value", where, s.label));
  }
  for (double h : c.hlines)
    if (!std::isfinite(h)) throw InputError(where + ": reference line not finite");
}

}  // namespace

std::string toSvg(const BarChart& c) {
  const std::string where = c.title.empty() ? "bar chart" : "bar chart '" + c.title + "'";
  validate(c, where);
  const size_t nCat = c.categories.size(), nSer = c.series.size();

  // y range: from zero (or the lowest value, if negative) to the highest, with a 5% margin.
  double lo = 0, hi = 0;
  for (const BarSeries& s : c.series)
    for (double v : s.values)
      if (!std::isnan(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  for (double h : c.hlines) lo = std::min(lo, h), hi = std::max(hi, h);
  if (hi <= lo) hi = lo + 1;
  const double span = hi - lo;
  hi += 0.05 * span;
  if (lo < 0) lo -= 0.05 * span;

  const double W = c.width;
  const double top = (c.title.empty() ? 12 : 40) + kLegendFont + 12;  // title, legend row
  double catLabelW = 0;
  for (const auto& l : c.categories) catLabelW = std::max(catLabelW, textWidth(l, kTickFont));
  const std::vector<Tick> yTicks = makeTicks(lo, hi, Scale::Linear, c.height - top - 80, 32);
  double yLabelW = 0;
  for (const Tick& t : yTicks)
    if (t.major) yLabelW = std::max(yLabelW, textWidth(t.label, kTickFont));
  double left = std::ceil(10 + (c.yLabel.empty() ? 0 : kLabelFont + 10) + yLabelW + 9);
  const double right = 16;
  // Labels turned by 35 degrees when they would overlap: the chart grows by their height, and
  // the first one's end must stay on the page.
  const bool turned = catLabelW + 6 > (W - left - right) / double(nCat);
  if (turned) {
    const double firstW = textWidth(c.categories.front(), kTickFont) * 0.82;  // cos 35
    left = std::max(left, std::ceil(firstW - (W - left - right) / double(nCat) / 2 + 8));
  }
  const double x0 = left, x1 = W - right, plotW = x1 - x0;
  const double groupW = plotW / double(nCat);
  const double labelH = turned ? catLabelW * 0.574 + kTickFont : kTickFont;  // sin 35
  const double H = c.height + (turned ? labelH : 0);
  const double y1 = H - 12 - labelH - 8, y0 = top;
  if (y1 - y0 < 40 || plotW < 40)
    throw InputError(fmt::format("{}: {}x{} pixels leave no room for the plot", where, W, H));
  const AxisMap ym{lo, hi, Scale::Linear, y1, y0};

  std::string out;
  auto w = std::back_inserter(out);
  fmt::format_to(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fmt::format_to(w,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                 "viewBox=\"0 0 {0} {1}\" font-family=\"{2}\">\n<rect width=\"{0}\" "
                 "height=\"{1}\" fill=\"#ffffff\"/>\n",
                 num(W), num(H), kFontFamily);
  if (!c.title.empty())
    fmt::format_to(w,
                   "<title>{0}</title>\n<text x=\"{1}\" y=\"26\" font-size=\"{2}\" "
                   "font-weight=\"600\" text-anchor=\"middle\" fill=\"{3}\">{0}</text>\n",
                   xmlEscape(c.title), num(W / 2), num(kTitleFont), kTextColor);

  // Legend row.
  double lx = x0;
  const double ly = top - kLegendFont - 2;
  for (size_t s = 0; s < nSer; ++s) {
    const std::string color = c.series[s].color.empty() ? paletteColor(s) : c.series[s].color;
    fmt::format_to(w,
                   "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>\n<text "
                   "x=\"{}\" y=\"{}\" dy=\"0.35em\" font-size=\"{}\" fill=\"{}\">{}</text>\n",
                   num(lx), num(ly - 5), xmlEscape(color), num(lx + 18), num(ly), num(kLegendFont),
                   kTextColor, xmlEscape(c.series[s].label));
    lx += 18 + textWidth(c.series[s].label, kLegendFont) + 16;
  }

  // Grid and y axis.
  for (const Tick& t : yTicks) {
    if (!t.major) continue;
    fmt::format_to(w,
                   "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#e3e3e3\" "
                   "shape-rendering=\"crispEdges\"/>\n<text x=\"{3}\" y=\"{1}\" dy=\"0.35em\" "
                   "font-size=\"{4}\" text-anchor=\"end\" fill=\"{5}\">{6}</text>\n",
                   num(x0), num(ym(t.value)), num(x1), num(x0 - 7), num(kTickFont), kTextColor,
                   xmlEscape(t.label));
  }
  if (!c.yLabel.empty())
    fmt::format_to(w,
                   "<text transform=\"translate({},{}) rotate(-90)\" font-size=\"{}\" "
                   "text-anchor=\"middle\" fill=\"{}\">{}</text>\n",
                   num(10 + kLabelFont), num((y0 + y1) / 2), num(kLabelFont), kTextColor,
                   xmlEscape(c.yLabel));

  // Bars: 80% of each group, split among the series.
  const double barW = groupW * 0.8 / double(nSer);
  const double base = ym(std::clamp(0.0, lo, hi));
  fmt::format_to(w, "<g class=\"bars\">\n");
  for (size_t s = 0; s < nSer; ++s) {
    const std::string color =
        xmlEscape(c.series[s].color.empty() ? paletteColor(s) : c.series[s].color);
    for (size_t k = 0; k < nCat; ++k) {
      const double v = c.series[s].values[k];
      if (std::isnan(v)) continue;
      const double bx = x0 + groupW * (double(k) + 0.1) + barW * double(s);
      const double by = ym(v);
      fmt::format_to(w,
                     "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{} "
                     "{}: {}</title></rect>\n",
                     num(bx), num(std::min(by, base)), num(std::max(barW - 1, 0.5)),
                     num(std::abs(base - by)), color, xmlEscape(c.categories[k]),
                     xmlEscape(c.series[s].label), fmt::format("{:.{}f}", v, c.valueDigits));
      const std::string label = fmt::format("{:.{}f}", v, c.valueDigits);
      if (c.annotate && textWidth(label, kTickFont - 1) <= barW + 2)
        fmt::format_to(w,
                       "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"middle\" "
                       "fill=\"{}\">{}</text>\n",
                       num(bx + barW / 2), num(std::min(by, base) - 3), num(kTickFont - 1),
                       kTextColor, label);
    }
  }
  fmt::format_to(w, "</g>\n");

  for (double h : c.hlines)
    fmt::format_to(w,
                   "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#3a3a3a\" "
                   "stroke-width=\"1.2\" stroke-dasharray=\"6 4\"/>\n",
                   num(x0), num(ym(h)), num(x1));
  fmt::format_to(w,
                 "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\"/>\n<line "
                 "x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" stroke=\"#333\"/>\n",
                 num(x0), num(base), num(x1), num(y0));

  // Category labels.
  for (size_t k = 0; k < nCat; ++k) {
    const double cx = x0 + groupW * (double(k) + 0.5);
    if (turned)
      fmt::format_to(w,
                     "<text transform=\"translate({},{}) rotate(-35)\" font-size=\"{}\" "
                     "text-anchor=\"end\" fill=\"{}\">{}</text>\n",
                     num(cx), num(y1 + 14), num(kTickFont), kTextColor, xmlEscape(c.categories[k]));
    else
      fmt::format_to(w,
                     "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"middle\" "
                     "fill=\"{}\">{}</text>\n",
                     num(cx), num(y1 + 8 + kTickFont), num(kTickFont), kTextColor,
                     xmlEscape(c.categories[k]));
  }
  out += "</svg>\n";
  return out;
}

}  // namespace gpusc::plot
