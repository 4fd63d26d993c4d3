// What the SVG writers (svg_plot.cpp, svg_bars.cpp, svg_heatmap.cpp) share: the type faces and
// sizes, the text colour, the number format of coordinates and a writer that formats into a
// string. Internal to those sources.
#pragma once

#include <iterator>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "common/svg_plot.hpp"

namespace gpusc::plot::style {

inline constexpr const char* kFontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif";
inline constexpr const char* kTextColor = "#222";
inline constexpr double kTickFont = 11, kLabelFont = 12, kTitleFont = 15, kLegendFont = 11;

inline std::string num(double v) { return svgNumber(v); }

struct Writer {
  std::string out;
  template <class... A>
  void operator()(fmt::format_string<A...> f, A&&... a) {
    fmt::format_to(std::back_inserter(out), f, std::forward<A>(a)...);
  }
};

}  // namespace gpusc::plot::style
