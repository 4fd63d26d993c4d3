// Small SVG chart writer for gpusc's human-readable plots: line charts and histograms (bars),
// one or more panels stacked on a shared x axis, linear or log10 axes.
//
//   plot::Figure f;
//   f.title = "PDN impedance";
//   f.x = {"Frequency (Hz)", plot::Scale::Log10};
//   plot::Panel p;
//   p.y = {"|Z| (Ω)", plot::Scale::Log10};
//   p.series.push_back({"|Z(f)|", freqs, mags});
//   p.hlines = {targetImpedance};
//   f.panels.push_back(p);
//   plot::writeSvg(f, "impedance.svg");
//
// Layout: the figure title on top, the panels below one another, each `panelHeight` pixels tall
// (its title, plot area and the gap to the next panel), all with the same plot-area left and
// right edges so their x axes line up; only the bottom panel labels the x axis. The x range is
// shared by all panels and covers every series and vertical line unless Figure::x sets it; each
// panel's y range covers its series and horizontal lines (a bar panel also includes 0) with a
// 5% margin, unless Panel::y sets it. Data outside the ranges is clipped.
//
// Ticks: 1-2-5 steps on linear axes; decades with minor ticks at 2..9 on log axes (ranges under
// about a decade also label 2 and 5, or fall back to 1-2-5 steps). Labels are compact numbers,
// with SI prefixes (100k, 1M, 10M, 1G; 1m, 10µ) when the axis reaches 10^4 or stays below 10^-2
// (a log axis: goes below 10^-2), shared precision on linear axes (0.90 0.95 1.00).
//
// Legend: series with an empty label are left out. Up to 8 entries go in a box inside the plot,
// in the corner covering the least data; more go in columns to the right of the plot area.
//
// Polylines are thinned before writing: consecutive points falling into the same half-pixel
// column are reduced to that column's first, minimum, maximum and last point, so the drawn line
// is the same and one-sample spikes stay visible while a million-point series stays small.
//
// Bars (Panel::Kind::Bars, for histograms): x holds the bin centres, each bar is as wide as the
// series' smallest spacing between distinct x values and rises from 0 (from the bottom of the
// plot area on a log axis). Several series in a bar panel are overlaid, translucent.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpusc::plot {

struct Series {
  std::string label;  // "" leaves the series out of the legend
  std::vector<double> x, y;
  std::string color = "";  // any SVG colour; "" takes paletteColor(index in its panel), so
                           // series i has the same colour in every panel
  double width = 1.5;      // stroke width in pixels (lines)
  bool dashed = false;
  double opacity = 1.0;  // stroke (or bar fill) opacity, 0..1
  bool markers = false;  // a dot at each point instead of a line (lines panels), e.g. events
  bool points = false;   // the line and a dot at each measured point (lines panels), e.g. sweeps
};

enum class Scale { Linear, Log10 };

struct Axis {
  std::string label;
  Scale scale = Scale::Linear;
  std::optional<double> min, max;  // fixed limits; unset ones follow the data
};

struct Panel {
  std::string title;
  Axis y;
  std::vector<Series> series;
  std::vector<double> hlines;  // horizontal reference lines (e.g. thresholds), y values
  std::vector<double> vlines;  // vertical reference lines, x values
  bool legend = true;
  enum class Kind { Lines, Bars } kind = Kind::Lines;
};

struct Figure {
  std::string title;
  Axis x;
  std::vector<Panel> panels;
  int width = 900, panelHeight = 320;
};

// The figure as a standalone SVG document. Throws InputError on empty or invalid data: no
// panels, a panel without series, a series without points or with x and y of different lengths,
// NaN or infinite values, values <= 0 on a log axis, limits with min >= max.
std::string toSvg(const Figure& figure);

// toSvg() written to `path`; InputError naming the path if it cannot be written.
void writeSvg(const Figure& figure, const std::string& path);

// ---- building blocks (used by toSvg, exposed for tests and custom layouts) ----------------------

// The palette colour of the i-th series without its own colour (cycles after the last one).
std::string paletteColor(size_t i);

struct Tick {
  double value;
  bool major;         // major ticks carry a label and a grid line
  std::string label;  // "" on minor ticks
};

// Ticks for the axis range [lo, hi] (lo < hi; both > 0 on a log axis) drawn `lengthPx` pixels
// long, with major ticks at least `minSpacingPx` apart.
std::vector<Tick> makeTicks(double lo, double hi, Scale scale, double lengthPx,
                            double minSpacingPx);

// The 1-2-5 step (1, 2 or 5 times a power of ten) closest above `span / maxCount`, i.e. the
// smallest such step giving at most `maxCount` intervals over `span`.
double niceStep(double span, double maxCount);

// Compact tick label of `v` on an axis whose labels reach `maxAbs` at most, with major steps of
// `step`: SI prefixes when maxAbs >= 10^4 or < 10^-2, one for the whole axis, and the decimals
// the step needs. Step 0 gives each label its own prefix and the fewest digits (log axes).
std::string formatTick(double v, double maxAbs, double step);

// Data value to pixel on one axis: `lo` maps to `p0`, `hi` to `p1` (p1 < p0 for a y axis).
struct AxisMap {
  double lo, hi;
  Scale scale;
  double p0, p1;
  double operator()(double v) const;
};

// Pixel polyline thinning: consecutive points whose x falls into the same `bucketPx`-wide
// column are replaced by that run's first, lowest, highest and last point (in their order).
std::vector<std::pair<double, double>> thin(const std::vector<std::pair<double, double>>& points,
                                            double bucketPx = 0.5);

// Width of `text` in pixels at `fontPx`, estimated (the average glyph of common sans-serif fonts).
double textWidth(const std::string& text, double fontPx);

// A coordinate or length for SVG: at most two decimals, no trailing zeros.
std::string svgNumber(double v);

// Text escaped for XML character data and attribute values; control characters XML 1.0 cannot
// hold are dropped.
std::string xmlEscape(const std::string& text);

}  // namespace gpusc::plot
