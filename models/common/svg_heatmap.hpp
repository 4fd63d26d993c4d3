// SVG heatmaps for gpusc's reports: a grid of coloured cells, rows labelled on the left, the
// columns either a numeric axis (cells between consecutive edges, e.g. time bins of a run) or
// categories (e.g. the values of a sweep axis), with a colour bar on the right.
//
//   plot::Heatmap h;
//   h.title = "Resident warps per SM";
//   h.rowLabels = {"sm0", "sm1"};
//   h.xEdges = {0, 1000, 2000};          // two columns: cycles 0-1000 and 1000-2000
//   h.xLabel = "Cycle";
//   h.values = {{12, 48}, {NAN, 24}};    // [row][column]; NaN leaves the cell empty
//   h.valueLabel = "warps";
//   std::string svg = plot::toSvg(h);
//
// Colours follow a perceptually uniform dark-blue -> green -> yellow map (the viridis anchor
// colours, interpolated linearly in sRGB) over [min, max], which default to the range of the
// finite values. Consecutive cells of a row with the same colour are drawn as one rectangle, so
// a 100-row x 500-column map of a mostly idle run stays small. With `annotate`, each cell wide
// and tall enough shows its value (formatted with `valueDigits` decimals) in a colour readable
// on its fill.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpusc::plot {

struct Heatmap {
  std::string title;
  std::vector<std::string> rowLabels;  // top to bottom, one per row of `values`
  // Columns: either numeric edges (size columns + 1, strictly increasing) with an x axis, or
  // category labels (one per column). Exactly one of the two is set.
  std::vector<double> xEdges;
  std::vector<std::string> columnLabels;
  std::string xLabel, yLabel;
  std::vector<std::vector<double>> values;  // [row][column]
  std::string valueLabel;                   // the colour bar's label
  std::optional<double> min, max;           // colour range; unset ends follow the data
  bool annotate = false;
  int valueDigits = 2;
  int width = 900;
  int rowHeight = 0;  // pixels per row; 0 chooses 6..24 so the map is about 360 pixels tall
};

// The heatmap as a standalone SVG document. Throws InputError on invalid input: no rows, rows
// of different lengths or not matching the labels, both or neither of xEdges and columnLabels,
// edges not increasing, infinite values, min >= max.
std::string toSvg(const Heatmap& heatmap);

// The map's colour for t in [0, 1] (clamped) as "#rrggbb".
std::string heatColor(double t);

}  // namespace gpusc::plot
