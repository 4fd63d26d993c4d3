// Grouped bar charts for gpusc's reports: categories along x (e.g. kernels, then "geomean"),
// one bar per series in each category (e.g. a sweep's variants), a linear y axis from zero, and
// optional reference lines (e.g. 1.0 for results normalised to a baseline).
//
//   plot::BarChart c;
//   c.title = "IPC relative to base";
//   c.categories = {"sgemm", "bfs", "geomean"};
//   c.series = {{"packed", {1.10, 0.97, 1.03}}, {"issue", {1.02, 1.01, 1.015}}};
//   c.hlines = {1.0};
//   std::string svg = plot::toSvg(c);
//
// Series take the palette colours of svg_plot in order (unless they set their own); a NaN value
// leaves its bar out. Category labels are written under their group, turned when they would
// overlap; the legend is a row above the plot.
#pragma once

#include <string>
#include <vector>

namespace gpusc::plot {

struct BarSeries {
  std::string label;
  std::vector<double> values;  // one per category
  std::string color;           // "" takes paletteColor(index)
};

struct BarChart {
  std::string title;
  std::string yLabel;
  std::vector<std::string> categories;
  std::vector<BarSeries> series;
  std::vector<double> hlines;
  bool annotate = false;  // each bar's value above it, where it fits
  int valueDigits = 2;
  int width = 900, height = 340;
};

// The chart as a standalone SVG document. InputError on no categories or series, a series with
// a different number of values than categories, infinite values or a series with no finite one.
std::string toSvg(const BarChart& chart);

}  // namespace gpusc::plot
