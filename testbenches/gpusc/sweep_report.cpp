#include "sweep_report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "common/svg_bars.hpp"
#include "common/svg_heatmap.hpp"
#include "common/svg_plot.hpp"
#include "html_page.hpp"

namespace gpusc::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Metric {
  const char* column;
  const char* title;
  double scale;  // column value x scale = the value shown
  int digits;
};

// The headline metrics, in the order the plots show them.
constexpr Metric kMetrics[] = {
    {"cycles", "Cycles", 1, 0},
    {"ipc", "IPC (warp instructions per cycle)", 1, 2},
    {"energy_j", "Energy (mJ)", 1e3, 4},
    {"average_power_w", "Average power (W)", 1, 1},
    {"worst_droop_pct", "Worst droop (% of supply)", 1, 2},
    {"l2_hit_rate", "L2 hit rate", 1, 3},
    {"dram_bandwidth_gbs", "DRAM bandwidth (GB/s)", 1, 1},
};
// Line plots and normalised bars show at most these many metrics.
constexpr size_t kPlottedMetrics = 5;
constexpr size_t kMaxHeatmaps = 12;

bool ok(const json& row) { return row.value("status", "") == "ok"; }

std::optional<double> metric(const json& row, const char* column) {
  const auto it = row.find(column);
  if (it == row.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string valueText(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string workOf(const json& row, bool withSize) {
  std::string k = row.value("kernel", "");
  const std::string size = row.value("size", "");
  if (withSize && !size.empty()) k += "@" + size;
  return k;
}

// The axes whose values are numbers in every ok row.
std::vector<std::string> numericAxes(const SweepReportInput& in) {
  std::vector<std::string> out;
  for (const auto& key : in.axisKeys) {
    bool numeric = true, any = false;
    for (const auto& r : in.rows) {
      if (!ok(r)) continue;
      const json& axes = r.value("axes", json::object());
      const auto it = axes.find(key);
      if (it == axes.end()) continue;
      any = true;
      numeric &= it->is_number();
    }
    if (numeric && any) out.push_back(key);
  }
  return out;
}

// A series' name: the kernel (with its size when the sweep has several), the variant (when
// several), and the values of every axis except `skip`.
struct Grouping {
  bool sizes = false, variants = false;
  std::vector<std::string> axes;
  std::string name(const json& row, const std::set<std::string>& skip) const {
    std::string n = workOf(row, sizes);
    if (variants) n += " " + row.value("variant", "");
    const json& values = row.value("axes", json::object());
    for (const auto& k : axes)
      if (!skip.count(k) && values.contains(k)) n += fmt::format(" {}={}", k, valueText(values[k]));
    return n;
  }
};

std::vector<const Metric*> presentMetrics(const SweepReportInput& in) {
  std::vector<const Metric*> out;
  for (const Metric& m : kMetrics)
    for (const auto& r : in.rows)
      if (ok(r) && metric(r, m.column)) {
        out.push_back(&m);
        break;
      }
  return out;
}

// Whether an axis's values form a geometric progression (sizes, set counts, SM counts): at least
// three, all positive, each at least 1.4 times the one before, the ratios within 1.5x of each
// other. Such an axis is drawn on a log scale, where its points are evenly spaced.
bool geometric(const std::set<double>& values) {
  if (values.size() < 3 || *values.begin() <= 0) return false;
  double lo = INFINITY, hi = 0, prev = 0;
  for (double v : values) {
    if (prev > 0) {
      lo = std::min(lo, v / prev);
      hi = std::max(hi, v / prev);
    }
    prev = v;
  }
  return lo >= 1.4 && hi <= lo * 1.5;
}

// A metric's lines are drawn relative to the baseline variant when the sweep has variants and
// the values of the panel lie within this share of each other: absolute lines would be flat and
// overlaid, their differences a few pixels.
constexpr double kRelativeSpread = 0.1;

void linePlots(HtmlPage& page, const SweepReportInput& in, const Grouping& g,
               const std::vector<std::string>& numeric, const std::vector<const Metric*>& metrics) {
  const std::string& baseline = in.variants.empty() ? std::string() : in.variants.front();
  Grouping work = g;  // a series' name without its variant: finds the baseline's run
  work.variants = false;
  for (const std::string& axis : numeric) {
    std::set<double> xs;
    for (const auto& r : in.rows)
      if (ok(r) && r.value("axes", json::object()).contains(axis))
        xs.insert(r["axes"][axis].get<double>());
    plot::Figure f;
    f.title = "Metrics against " + axis;
    f.x.label = axis;
    const bool log = geometric(xs);
    if (log) f.x.scale = plot::Scale::Log10;
    f.panelHeight = 260;
    bool anyRelative = false;
    for (size_t mi = 0; mi < metrics.size() && mi < kPlottedMetrics; ++mi) {
      const Metric& m = *metrics[mi];
      std::map<std::string, std::map<double, double>> series;  // name -> x -> y
      std::map<std::pair<std::string, double>, double> base;   // (work, x) -> baseline's value
      double lo = INFINITY, hi = -INFINITY;
      for (const auto& r : in.rows) {
        const auto v = metric(r, m.column);
        const json& axes = r.value("axes", json::object());
        if (!ok(r) || !v || !axes.contains(axis)) continue;
        const double x = axes[axis].get<double>(), y = *v * m.scale;
        series[g.name(r, {axis})][x] = y;
        if (g.variants && r.value("variant", "") == baseline) base[{work.name(r, {axis}), x}] = y;
        lo = std::min(lo, y);
        hi = std::max(hi, y);
      }
      plot::Panel p;
      p.title = m.title;
      p.legend = mi == 0;  // the same series in every panel: one legend
      const bool relative =
          g.variants && !base.empty() && lo > 0 && (hi - lo) <= kRelativeSpread * hi;
      if (relative) {
        p.title = fmt::format("{} relative to {}", m.title, baseline);
        p.hlines = {1.0};
        anyRelative = true;
      }
      for (const auto& r : in.rows) {  // rows name their series; keep the rows' order of names
        if (!ok(r) || !r.value("axes", json::object()).contains(axis)) continue;
        const std::string name = g.name(r, {axis});
        const auto it = series.find(name);
        if (it == series.end()) continue;
        plot::Series s;
        s.label = name;
        s.points = true;  // every measured point marked
        for (const auto& [x, y] : it->second) {
          if (relative) {
            const auto b = base.find({work.name(r, {axis}), x});
            if (b == base.end() || !(b->second > 0)) continue;
            s.x.push_back(x), s.y.push_back(y / b->second);
          } else {
            s.x.push_back(x), s.y.push_back(y);
          }
        }
        series.erase(it);
        if (!s.x.empty()) p.series.push_back(s);
      }
      if (!p.series.empty()) f.panels.push_back(p);
    }
    if (f.panels.empty()) continue;
    page.subsection("Against " + axis);
    std::string caption = fmt::format("One line per {}; a dot for each run.",
                                      g.variants ? "kernel and variant" : "kernel");
    if (log) caption += fmt::format(" {} is on a log scale (its values grow geometrically).", axis);
    if (anyRelative)
      caption += fmt::format(
          " Panels titled \"relative to {}\" divide each run's value by {}'s for the same "
          "kernel and axis values: their absolute values differ by less than {:.0f} %.",
          baseline, baseline, kRelativeSpread * 100);
    page.figure(plot::toSvg(f), caption);
  }
}

void variantBars(HtmlPage& page, const SweepReportInput& in, const Grouping& g,
                 const std::vector<const Metric*>& metrics) {
  const std::string& baseline = in.variants.front();
  // The work of a row without its variant: kernel, size and axis values.
  Grouping work = g;
  work.variants = false;
  std::vector<std::string> categories;
  std::map<std::string, std::map<std::string, const json*>> cell;  // category -> variant -> row
  for (const auto& r : in.rows) {
    if (!ok(r)) continue;
    const std::string c = work.name(r, {});
    if (!cell.count(c)) categories.push_back(c);
    cell[c][r.value("variant", "")] = &r;
  }
  for (size_t mi = 0; mi < metrics.size() && mi < kPlottedMetrics; ++mi) {
    const Metric& m = *metrics[mi];
    plot::BarChart chart;
    chart.title = fmt::format("{} relative to {}", m.title, baseline);
    chart.yLabel = "ratio to " + baseline;
    chart.hlines = {1.0};
    chart.categories = categories;
    chart.categories.push_back("geomean");
    chart.annotate = categories.size() * (in.variants.size() - 1) <= 24;
    for (size_t vi = 1; vi < in.variants.size(); ++vi) {
      plot::BarSeries s;
      s.label = in.variants[vi];
      double logSum = 0;
      size_t n = 0;
      for (const auto& c : categories) {
        const auto& byVariant = cell[c];
        // NaN where the variant or the baseline has no value for this work.
        const auto value = [&](const std::string& variant) {
          const auto it = byVariant.find(variant);
          return it == byVariant.end() ? NAN : metric(*it->second, m.column).value_or(NAN);
        };
        const double base = value(baseline), mine = value(s.label);
        double ratio = NAN;
        if (base > 0 && mine > 0) {
          ratio = mine / base;
          logSum += std::log(ratio);
          ++n;
        }
        s.values.push_back(ratio);
      }
      s.values.push_back(n ? std::exp(logSum / double(n)) : NAN);
      if (n) chart.series.push_back(s);
    }
    if (chart.series.empty()) continue;
    page.figure(plot::toSvg(chart),
                fmt::format("{} of each variant divided by {}'s for the same kernel and axis "
                            "values; geomean over the kernels with both.",
                            m.title, baseline));
  }
}

void heatmaps(HtmlPage& page, const SweepReportInput& in, const Grouping& g,
              const std::vector<std::string>& numeric) {
  const std::string ax = numeric[0], ay = numeric[1];
  const bool timing = std::any_of(in.rows.begin(), in.rows.end(),
                                  [](const json& r) { return ok(r) && metric(r, "ipc"); });
  const char* column = timing ? "ipc" : "warp_instructions";
  // group -> (y, x) -> value
  std::map<std::string, std::map<std::pair<double, double>, double>> groups;
  std::set<double> xs, ys;
  for (const auto& r : in.rows) {
    const auto v = metric(r, column);
    const json& axes = r.value("axes", json::object());
    if (!ok(r) || !v || !axes.contains(ax) || !axes.contains(ay)) continue;
    const double x = axes[ax].get<double>(), y = axes[ay].get<double>();
    groups[g.name(r, {ax, ay})][{y, x}] = *v;
    xs.insert(x);
    ys.insert(y);
  }
  size_t shown = 0;
  for (const auto& [name, cells] : groups) {
    if (shown++ == kMaxHeatmaps) {
      page.paragraph(fmt::format("{} more heatmaps left out; the table has every point.",
                                 groups.size() - kMaxHeatmaps));
      break;
    }
    plot::Heatmap h;
    h.title = fmt::format("{}: {}", name, timing ? "IPC" : "warp instructions");
    h.xLabel = ax;
    h.yLabel = ay;
    h.valueLabel = timing ? "IPC" : "warp instructions";
    h.annotate = true;
    h.valueDigits = timing ? 2 : 0;
    h.width = 700;
    for (double x : xs) h.columnLabels.push_back(fmt::format("{:g}", x));
    for (double y : ys) {
      h.rowLabels.push_back(fmt::format("{:g}", y));
      std::vector<double> row;
      for (double x : xs) {
        const auto it = cells.find({y, x});
        row.push_back(it == cells.end() ? NAN : it->second);
      }
      h.values.push_back(row);
    }
    page.figure(plot::toSvg(h));
  }
}

void pointTable(HtmlPage& page, const SweepReportInput& in) {
  std::vector<std::string> header{"point", "kernel", "size", "variant"};
  for (const auto& k : in.axisKeys) header.push_back(k);
  header.insert(header.end(), {"status", "cycles", "IPC", "energy (mJ)", "power (W)",
                               "worst droop (%)", "host s", "stats"});
  const auto cell = [](const std::optional<double>& v, int digits, double scale = 1) {
    return v ? fmt::format("{:.{}f}", *v * scale, digits) : std::string("-");
  };
  std::vector<std::vector<std::string>> rows, links;
  for (const auto& r : in.rows) {
    std::vector<std::string> row{r.value("label", ""), r.value("kernel", ""), r.value("size", ""),
                                 r.value("variant", "")};
    const json& axes = r.value("axes", json::object());
    for (const auto& k : in.axisKeys) row.push_back(axes.contains(k) ? valueText(axes[k]) : "");
    std::string status = r.value("status", "");
    if (status == "failed" && r.contains("exit_code") && r["exit_code"].is_number())
      status += fmt::format(" ({})", r["exit_code"].get<int>());
    row.push_back(status);
    row.push_back(cell(metric(r, "cycles"), 0));
    row.push_back(cell(metric(r, "ipc"), 2));
    row.push_back(cell(metric(r, "energy_j"), 4, 1e3));
    row.push_back(cell(metric(r, "average_power_w"), 1));
    row.push_back(cell(metric(r, "worst_droop_pct"), 2));
    row.push_back(cell(metric(r, "host_seconds"), 1));
    std::vector<std::string> link(row.size() + 1);
    const std::string stats = r.value("stats_path", json()).is_string()
                                  ? r["stats_path"].get<std::string>()
                                  : std::string();
    if (!stats.empty()) {
      std::error_code ec;
      const fs::path rel = fs::relative(fs::absolute(fs::path(in.statsBase) / stats),
                                        fs::absolute(in.reportDir), ec);
      link.back() = ec ? stats : rel.generic_string();
    }
    row.push_back(stats.empty() ? "" : "stats.json");
    rows.push_back(row);
    links.push_back(link);
  }
  page.table(header, rows, links);
}

}  // namespace

std::string sweepReportHtml(const SweepReportInput& in) {
  std::map<std::string, size_t> byStatus;
  double hostSeconds = 0;
  std::set<std::string> sizes;
  for (const auto& r : in.rows) {
    ++byStatus[r.value("status", "?")];
    hostSeconds += metric(r, "host_seconds").value_or(0);
    sizes.insert(r.value("size", ""));
  }
  std::vector<std::string> counts;
  for (const auto& [status, n] : byStatus) counts.push_back(fmt::format("{} {}", n, status));
  HtmlPage page(fmt::format("gpusc sweep: {}", in.name),
                fmt::format("{}: {} points ({}), {:.0f} s of runs", in.specFile, in.rows.size(),
                            fmt::join(counts, ", "), hostSeconds));
  const size_t notOk = in.rows.size() - (byStatus.count("ok") ? byStatus.at("ok") : 0);
  if (notOk)
    page.warning(fmt::format(
        "{} of {} points did not finish with status ok; the plots leave them out (see the "
        "table; `gpusc sweep {} --retry-failed` runs failed points again).",
        notOk, in.rows.size(), in.specFile));

  Grouping g;
  g.sizes = sizes.size() > 1;
  g.variants = in.variants.size() > 1;
  g.axes = in.axisKeys;
  const std::vector<const Metric*> metrics = presentMetrics(in);
  const std::vector<std::string> numeric = numericAxes(in);
  if (!metrics.empty() && !numeric.empty()) {
    page.section("Metrics against the axes");
    linePlots(page, in, g, numeric, metrics);
  }
  if (!metrics.empty() && in.variants.size() > 1) {
    page.section("Variants against " + in.variants.front());
    variantBars(page, in, g, metrics);
  }
  if (numeric.size() >= 2) {
    page.section(fmt::format("{} and {}", numeric[0], numeric[1]));
    heatmaps(page, in, g, numeric);
  }
  page.section("Points");
  pointTable(page, in);
  return page.html();
}

}  // namespace gpusc::cli
