#include "run_report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/svg_heatmap.hpp"
#include "common/svg_plot.hpp"
#include "csv_table.hpp"
#include "html_page.hpp"

namespace gpusc::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Per-SM line charts up to this many SMs; heatmaps (one row per SM) beyond.
constexpr size_t kMaxSmLines = 16;
// Time bins of the CTA timeline heatmap.
constexpr size_t kTimelineBins = 240;

std::string readText(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json readStats(const fs::path& folder) {
  const fs::path p = folder / "stats.json";
  std::error_code ec;
  std::ifstream in(p);
  if (!in || !fs::is_regular_file(p, ec))
    throw InputError(
        fmt::format("{}: not a gpusc results folder (no readable stats.json)", folder.string()));
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON ({})", p.string(), e.what()));
  }
}

double num(const json& j, const char* key, double fallback = 0) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

// ---- power over time ----------------------------------------------------------------------------

void powerSection(HtmlPage& page, const fs::path& folder, const json& stats) {
  const auto csv = readCsv(folder / "power.csv");
  if (!csv || csv->rows.empty()) return;
  page.section("Power over time");
  const size_t start = csv->requireColumn("start_cycle"), len = csv->requireColumn("cycles");
  std::vector<size_t> smCols;
  std::vector<std::pair<std::string, size_t>> blocks;
  for (size_t c = 0; c < csv->header.size(); ++c) {
    const std::string& h = csv->header[c];
    if (h.size() < 3 || h.compare(h.size() - 2, 2, "_w") != 0) continue;
    if (h.rfind("sm", 0) == 0 && std::isdigit(static_cast<unsigned char>(h[2])))
      smCols.push_back(c);
    else
      blocks.push_back({h.substr(0, h.size() - 2), c});
  }
  // One point per sample at the middle of its window.
  std::vector<double> x;
  for (size_t r = 0; r < csv->rows.size(); ++r)
    x.push_back(csv->number(r, start) + csv->number(r, len) / 2);
  plot::Figure f;
  f.title = "Power by block";
  f.x.label = "Core cycle";
  plot::Panel p;
  p.y.label = "Power (W)";
  const auto series = [&](const std::string& label, const std::vector<size_t>& cols) {
    plot::Series s;
    s.label = label;
    s.x = x;
    for (size_t r = 0; r < csv->rows.size(); ++r) {
      double w = 0;
      for (size_t c : cols) w += csv->number(r, c);
      s.y.push_back(w);
    }
    return s;
  };
  for (const auto& [name, c] : blocks)
    p.series.push_back(series(name == "total" ? "total" : name, {c}));
  if (!smCols.empty()) p.series.push_back(series(fmt::format("SMs ({})", smCols.size()), smCols));
  f.panels.push_back(p);
  page.figure(plot::toSvg(f),
              fmt::format("power.csv: average power over windows of {:g} cycles; the SMs' line is "
                          "the sum of all SMs.",
                          csv->number(0, len)));

  // Energy by block, largest first.
  const json& e = stats.at("run").at("energy");
  const double seconds = num(stats.at("run"), "simulated_seconds");
  const double total = num(e, "total_j");
  if (total > 0 && seconds > 0 && e.contains("by_block_j")) {
    std::vector<std::pair<double, std::string>> parts;
    for (const auto& [name, j] : e["by_block_j"].items()) parts.push_back({j.get<double>(), name});
    std::sort(parts.rbegin(), parts.rend());
    std::vector<std::vector<std::string>> rows;
    for (const auto& [j, name] : parts)
      rows.push_back({name, fmt::format("{:.4g}", j * 1e3), fmt::format("{:.2f}", j / seconds),
                      fmt::format("{:.1f}%", 100 * j / total)});
    page.subsection("Energy by block");
    page.table({"block", "energy (mJ)", "average power (W)", "share"}, rows);
  }
}

// ---- supply voltage -----------------------------------------------------------------------------

void voltageSection(HtmlPage& page, const fs::path& folder, const json& stats) {
  const auto csv = readCsv(folder / "voltage.csv");
  if (!csv || csv->rows.empty()) return;
  page.section("Supply voltage");
  const size_t start = csv->requireColumn("start_cycle"), len = csv->requireColumn("cycles"),
               minCol = csv->requireColumn("min_v");
  std::vector<std::pair<std::string, size_t>> sms;
  for (size_t c = 0; c < csv->header.size(); ++c) {
    const std::string& h = csv->header[c];
    if (h.rfind("sm", 0) == 0 && h.size() > 4 && h.compare(h.size() - 2, 2, "_v") == 0)
      sms.push_back({h.substr(0, h.size() - 2), c});
  }
  std::vector<double> x;
  for (size_t r = 0; r < csv->rows.size(); ++r)
    x.push_back(csv->number(r, start) + csv->number(r, len) / 2);
  const auto column = [&](size_t c) {
    std::vector<double> v;
    for (size_t r = 0; r < csv->rows.size(); ++r) v.push_back(csv->number(r, c));
    return v;
  };

  double supply = 0;
  for (const auto& l : stats.at("launches"))
    if (l.contains("timing") && l["timing"].contains("voltage"))
      supply = num(l["timing"]["voltage"], "supply_v", supply);

  plot::Figure f;
  f.title = "Supply voltage and droop events";
  f.x.label = "Core cycle";
  plot::Panel v;
  v.title = sms.size() <= kMaxSmLines ? "Lowest voltage per SM in each window"
                                      : "Lowest voltage over all SMs in each window";
  v.y.label = "Voltage (V)";
  if (sms.size() <= kMaxSmLines)
    for (const auto& [name, c] : sms) {
      plot::Series s;
      s.label = name;
      s.x = x;
      s.y = column(c);
      s.width = 1.0;
      s.opacity = 0.8;
      v.series.push_back(s);
    }
  plot::Series all;
  all.label = "all SMs";
  all.x = x;
  all.y = column(minCol);
  all.color = "#111";
  all.width = 1.8;
  v.series.push_back(all);
  f.panels.push_back(v);

  // Droop events by class, at their worst cycle.
  const auto droops = readCsv(folder / "droops.csv");
  size_t eventCount = 0;
  if (droops && !droops->rows.empty()) {
    plot::Panel d;
    d.title = "Droop events (worst point of each)";
    d.y.label = "Droop (% of supply)";
    const size_t at = droops->requireColumn("worst_cycle"),
                 pct = droops->requireColumn("droop_pct");
    const auto cls = droops->column("class");
    std::map<std::string, plot::Series> byClass;
    for (size_t r = 0; r < droops->rows.size(); ++r) {
      const std::string name = cls ? droops->rows[r][*cls] : "event";
      plot::Series& s = byClass[name];
      s.label = name;
      s.markers = true;
      s.width = 1.6;
      s.opacity = 0.75;
      s.x.push_back(droops->number(r, at));
      s.y.push_back(droops->number(r, pct));
    }
    for (auto& [name, s] : byClass) d.series.push_back(std::move(s));
    eventCount = droops->rows.size();
    f.panels.push_back(d);
  }
  page.figure(plot::toSvg(f),
              fmt::format("voltage.csv and droops.csv: {} droop events{}.", eventCount,
                          supply > 0 ? fmt::format(", supply {:g} V", supply) : ""));

  // Many SMs: one heatmap row per SM instead of a line each.
  if (sms.size() > kMaxSmLines) {
    plot::Heatmap h;
    h.title = "Lowest voltage per SM in each window";
    h.xLabel = "Core cycle";
    h.valueLabel = "V";
    for (size_t r = 0; r < csv->rows.size(); ++r) h.xEdges.push_back(csv->number(r, start));
    h.xEdges.push_back(csv->number(csv->rows.size() - 1, start) +
                       csv->number(csv->rows.size() - 1, len));
    for (const auto& [name, c] : sms) {
      h.rowLabels.push_back(name);
      h.values.push_back(column(c));
    }
    // Windows are contiguous by construction; a gap (between launches) would break the edges.
    bool increasing = true;
    for (size_t i = 1; i < h.xEdges.size(); ++i) increasing &= h.xEdges[i] > h.xEdges[i - 1];
    if (increasing) page.figure(plot::toSvg(h), "voltage.csv, one row per SM.");
  }

  const auto hist = readCsv(folder / "droop_histogram.csv");
  if (hist && !hist->rows.empty()) {
    const size_t lo = hist->requireColumn("lo_pct"), hi = hist->requireColumn("hi_pct"),
                 count = hist->requireColumn("count");
    std::map<double, double> bins;  // bin centre -> events over all launches
    for (size_t r = 0; r < hist->rows.size(); ++r)
      bins[(hist->number(r, lo) + hist->number(r, hi)) / 2] += hist->number(r, count);
    plot::Figure hf;
    hf.title = "Droop histogram";
    hf.x.label = "Droop (% of supply)";
    plot::Panel hp;
    hp.kind = plot::Panel::Kind::Bars;
    hp.y.label = "Events";
    hp.legend = false;
    plot::Series s;
    s.label = "events";
    for (const auto& [c, n] : bins) s.x.push_back(c), s.y.push_back(n);
    hp.series.push_back(s);
    hf.panels.push_back(hp);
    hf.panelHeight = 240;
    page.figure(plot::toSvg(hf), "droop_histogram.csv");
  }
}

// ---- CTA timeline -------------------------------------------------------------------------------

void timelineSection(HtmlPage& page, const fs::path& folder, const json& stats) {
  const auto csv = readCsv(folder / "cta_timeline.csv");
  if (!csv || csv->rows.empty()) return;
  page.section("Resident warps per SM");
  const size_t launchCol = csv->requireColumn("launch"), smCol = csv->requireColumn("sm"),
               s0 = csv->requireColumn("start_cycle"), s1 = csv->requireColumn("end_cycle");
  const json& launches = stats.at("launches");
  const size_t numSms = stats.at("config").at("gpu").at("num_sms").get<size_t>();
  double end = 0;
  for (size_t r = 0; r < csv->rows.size(); ++r) end = std::max(end, csv->number(r, s1));
  if (end <= 0) return;
  const size_t bins = std::min<size_t>(kTimelineBins, static_cast<size_t>(end));
  const double width = end / double(bins);
  plot::Heatmap h;
  h.title = "Resident warps per SM (CTA timeline)";
  h.xLabel = "Core cycle";
  h.valueLabel = "warps (average over the bin)";
  for (size_t b = 0; b <= bins; ++b) h.xEdges.push_back(width * double(b));
  h.values.assign(numSms, std::vector<double>(bins, 0.0));
  for (size_t s = 0; s < numSms; ++s) h.rowLabels.push_back(fmt::format("sm{}", s));
  for (size_t r = 0; r < csv->rows.size(); ++r) {
    const size_t launch = static_cast<size_t>(csv->number(r, launchCol));
    const size_t sm = static_cast<size_t>(csv->number(r, smCol));
    if (launch >= launches.size() || sm >= numSms)
      throw InputError(fmt::format("{}:{}: launch {} or SM {} is not in stats.json", csv->path,
                                   r + 2, launch, sm));
    const json& block = launches[launch].at("block");
    double threads = 1;
    for (const auto& d : block) threads *= d.get<double>();
    const double warps = std::ceil(threads / 32.0);
    const double a = csv->number(r, s0), z = csv->number(r, s1);
    for (size_t b = static_cast<size_t>(a / width); b < bins && double(b) * width < z; ++b) {
      const double overlap = std::min(z, double(b + 1) * width) - std::max(a, double(b) * width);
      if (overlap > 0) h.values[sm][b] += warps * overlap / width;
    }
  }
  page.figure(plot::toSvg(h), fmt::format("cta_timeline.csv: {} CTAs; each bin is {:.0f} cycles.",
                                          csv->rows.size(), width));
}

// ---- interconnect -------------------------------------------------------------------------------

struct Link {
  std::string from, to;
  double flits = 0, cycles = 0;
  double utilisation() const { return cycles > 0 ? flits / cycles : 0.0; }
};

// Every directed link over all launches: flits summed, utilisation = flits / cycles.
std::vector<Link> interconnectLinks(const json& stats, std::string& topology) {
  std::map<std::pair<std::string, std::string>, Link> links;
  for (const auto& l : stats.at("launches")) {
    if (!l.contains("timing") || !l["timing"].contains("memory")) continue;
    const json& m = l["timing"]["memory"];
    if (!m.contains("interconnect")) continue;
    const json& n = m["interconnect"];
    topology = n.value("topology", topology);
    const double cycles = num(n, "cycles");
    for (const auto& k : n.value("links", json::array())) {
      Link& link = links[{k.at("from").get<std::string>(), k.at("to").get<std::string>()}];
      link.from = k["from"];
      link.to = k["to"];
      link.flits += num(k, "flits");
      link.cycles += cycles;
    }
  }
  std::vector<Link> out;
  for (auto& [key, l] : links) out.push_back(std::move(l));
  return out;
}

// router(x,y) -> (x, y).
std::optional<std::pair<int, int>> routerAt(const std::string& name) {
  static const std::regex re(R"(router\((\d+),(\d+)\))");
  std::smatch m;
  if (!std::regex_match(name, m, re)) return std::nullopt;
  return std::pair<int, int>{std::stoi(m[1]), std::stoi(m[2])};
}

// The mesh drawn as it is laid out: routers as boxes naming their attached SMs and L2 slices,
// each direction of a link as a coloured bar (utilisation), with a colour scale.
std::string meshSvg(const std::vector<Link>& links) {
  int cols = 0, rows = 0;
  double maxU = 0;
  std::map<std::pair<int, int>, std::vector<std::string>> attached;
  for (const Link& l : links) {
    maxU = std::max(maxU, l.utilisation());
    for (const auto& [me, other] : {std::pair{l.from, l.to}, std::pair{l.to, l.from}}) {
      const auto r = routerAt(me);
      if (!r) continue;
      cols = std::max(cols, r->first + 1);
      rows = std::max(rows, r->second + 1);
      if (!routerAt(other) && l.from == other) attached[*r].push_back(other);
    }
  }
  if (cols == 0 || maxU <= 0) return "";
  const double legendW = 90, margin = 30;
  const double cell = std::min(140.0, (900 - legendW - 2 * margin) / cols);
  const double W = 2 * margin + cols * cell + legendW;
  const double box = cell * 0.46, H = rows * cell + 2 * margin + 20;
  const auto centre = [&](int x, int y) {
    return std::pair<double, double>{margin + (x + 0.5) * cell, margin + 20 + (y + 0.5) * cell};
  };
  using plot::svgNumber;
  std::string out;
  auto w = std::back_inserter(out);
  fmt::format_to(w,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                 "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Helvetica, Arial, "
                 "sans-serif\">\n<rect width=\"{0}\" height=\"{1}\" fill=\"#fff\"/>\n"
                 "<text x=\"{2}\" y=\"22\" font-size=\"15\" font-weight=\"600\" "
                 "text-anchor=\"middle\" fill=\"#222\">Mesh link utilisation (flits per "
                 "cycle)</text>\n",
                 svgNumber(W), svgNumber(H), svgNumber(W / 2));
  // Links between routers: the two directions side by side, offset across the link.
  for (const Link& l : links) {
    const auto a = routerAt(l.from), b = routerAt(l.to);
    if (!a || !b) continue;
    auto [x0, y0] = centre(a->first, a->second);
    auto [x1, y1] = centre(b->first, b->second);
    const double dx = x1 - x0, dy = y1 - y0, len = std::hypot(dx, dy);
    if (len <= 0) continue;
    const double ox = -dy / len * 5, oy = dx / len * 5, trim = box / 2 / len;
    fmt::format_to(w,
                   "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
                   "stroke-width=\"7\"><title>{} to {}: {:.3f} flits/cycle</title></line>\n",
                   svgNumber(x0 + dx * trim + ox), svgNumber(y0 + dy * trim + oy),
                   svgNumber(x1 - dx * trim + ox), svgNumber(y1 - dy * trim + oy),
                   plot::heatColor(l.utilisation() / maxU), plot::xmlEscape(l.from),
                   plot::xmlEscape(l.to), l.utilisation());
  }
  // Routers, coloured by their busiest injection or ejection link.
  std::map<std::pair<int, int>, double> local;
  for (const Link& l : links) {
    const auto a = routerAt(l.from), b = routerAt(l.to);
    if (a && !b) local[*a] = std::max(local[*a], l.utilisation());
    if (b && !a) local[*b] = std::max(local[*b], l.utilisation());
  }
  const double font = std::clamp(box / 4.5, 7.0, 11.0);
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      const auto [cx, cy] = centre(x, y);
      const double u = local[{x, y}];
      const bool dark = u / maxU < 0.6;
      std::vector<std::string> names = attached[{x, y}];
      fmt::format_to(
          w,
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\" fill=\"{}\" "
          "stroke=\"#333\"><title>router({},{}){}: busiest local link {:.3f} "
          "flits/cycle</title></rect>\n",
          svgNumber(cx - box / 2), svgNumber(cy - box / 2), svgNumber(box), svgNumber(box),
          plot::heatColor(u / maxU), x, y,
          names.empty() ? "" : " " + plot::xmlEscape(fmt::format("{}", fmt::join(names, " "))), u);
      const double top = cy - font * 0.6 * (double(names.size()) - 1);
      for (size_t i = 0; i < names.size() && i < 3; ++i)
        fmt::format_to(w,
                       "<text x=\"{}\" y=\"{}\" dy=\"0.35em\" font-size=\"{}\" "
                       "text-anchor=\"middle\" fill=\"{}\">{}</text>\n",
                       svgNumber(cx), svgNumber(top + double(i) * font * 1.2), svgNumber(font),
                       dark ? "#fff" : "#111", plot::xmlEscape(names[i]));
    }
  // Colour scale.
  const double bx = W - legendW + 20, by0 = margin + 20, by1 = H - margin;
  constexpr int kBands = 40;
  for (int b = 0; b < kBands; ++b) {
    const double t0 = double(b) / kBands, t1 = double(b + 1) / kBands;
    fmt::format_to(w, "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"{}\" fill=\"{}\"/>\n",
                   svgNumber(bx), svgNumber(by1 - t1 * (by1 - by0)),
                   svgNumber((t1 - t0) * (by1 - by0) + 0.5), plot::heatColor((t0 + t1) / 2));
  }
  for (double t : {0.0, 0.5, 1.0})
    fmt::format_to(w,
                   "<text x=\"{}\" y=\"{}\" dy=\"0.35em\" font-size=\"11\" fill=\"#222\">{:.3f}"
                   "</text>\n",
                   svgNumber(bx + 18), svgNumber(by1 - t * (by1 - by0)), t * maxU);
  out += "</svg>\n";
  return out;
}

void interconnectSection(HtmlPage& page, const json& stats) {
  std::string topology;
  std::vector<Link> links = interconnectLinks(stats, topology);
  if (links.empty()) {
    // The summary form of stats.json (a run of many launches) keeps no link figures.
    if (stats.value("stats_form", "full") == "summary") {
      page.section("Interconnect");
      page.paragraph(
          "stats.json holds each launch's summary, without the figures per link: run with "
          "--stats full for the interconnect's link utilisation.");
    }
    return;
  }
  page.section("Interconnect");
  if (topology == "mesh") {
    const std::string svg = meshSvg(links);
    if (!svg.empty())
      page.figure(svg,
                  "Each router-to-router link is drawn once per direction (hover for its value); a "
                  "router's colour is its busiest link to or from an attached SM or L2 slice.");
  } else {
    // A crossbar: one row per endpoint, its link into and out of the switch.
    std::map<std::string, std::pair<double, double>> ports;  // endpoint -> (in, out)
    for (const Link& l : links) {
      if (l.to == "switch") ports[l.from].first = l.utilisation();
      if (l.from == "switch") ports[l.to].second = l.utilisation();
    }
    plot::Heatmap h;
    h.title = "Crossbar port utilisation (flits per cycle)";
    h.columnLabels = {"into the switch", "out of the switch"};
    h.valueLabel = "flits per cycle";
    h.annotate = true;
    h.valueDigits = 3;
    h.width = 560;
    h.min = 0;
    // Natural order: sm2 before sm10.
    std::vector<std::string> names;
    for (const auto& [n, v] : ports) names.push_back(n);
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      const auto key = [](const std::string& s) {  // "l2_10" -> ("l2_", 10)
        size_t d = s.size();
        while (d > 0 && std::isdigit(static_cast<unsigned char>(s[d - 1]))) --d;
        return std::pair{s.substr(0, d), d == s.size() ? -1 : std::stoi(s.substr(d))};
      };
      return key(a) < key(b);
    });
    for (const auto& n : names) {
      h.rowLabels.push_back(n);
      h.values.push_back({ports[n].first, ports[n].second});
    }
    if (!names.empty()) page.figure(plot::toSvg(h));
  }
  std::sort(links.begin(), links.end(),
            [](const Link& a, const Link& b) { return a.utilisation() > b.utilisation(); });
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < links.size() && i < 10; ++i)
    rows.push_back({links[i].from, links[i].to, fmt::format("{:.0f}", links[i].flits),
                    fmt::format("{:.4f}", links[i].utilisation())});
  page.subsection("Busiest links");
  page.table({"from", "to", "flits", "flits per cycle"}, rows);
}

// ---- launches and files -------------------------------------------------------------------------

void launchesSection(HtmlPage& page, const json& stats) {
  const json& launches = stats.at("launches");
  if (launches.empty()) return;
  page.section("Launches");
  std::vector<std::vector<std::string>> rows;
  const auto dim = [](const json& d) {
    std::vector<std::string> parts;
    for (const auto& v : d) parts.push_back(v.dump());
    return fmt::format("{}", fmt::join(parts, "x"));
  };
  for (size_t i = 0; i < launches.size(); ++i) {
    const json& l = launches[i];
    std::vector<std::string> row{std::to_string(i), l.value("kernel", ""), dim(l.at("grid")),
                                 dim(l.at("block"))};
    if (l.contains("timing")) {
      const json& t = l["timing"];
      row.push_back(fmt::format("{}", t.value("cycles", uint64_t(0))));
      row.push_back(fmt::format("{:.2f}", num(t, "ipc")));
      const double e = t.contains("power") ? num(t["power"], "energy_j", -1) : -1;
      row.push_back(e >= 0 ? fmt::format("{:.4g}", e * 1e3) : "-");
      row.push_back(t.contains("voltage") && t["voltage"].contains("worst")
                        ? fmt::format("{:.2f}", num(t["voltage"]["worst"], "droop_pct"))
                        : "-");
    } else {
      row.insert(row.end(), {"-", "-", "-", "-"});
    }
    row.push_back(l.value("complete", true) ? "yes" : "no");
    rows.push_back(row);
  }
  page.table({"launch", "kernel", "grid", "block", "cycles", "IPC", "energy (mJ)",
              "worst droop (%)", "complete"},
             rows);
}

void filesSection(HtmlPage& page, const fs::path& folder) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& e : fs::directory_iterator(folder)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name == "report.html" || name.rfind('.', 0) == 0) continue;
    files.push_back({name, fmt::format("{} ({:.1f} kB)", name, double(e.file_size()) / 1e3)});
  }
  std::sort(files.begin(), files.end());
  page.section("Files");
  page.paragraph("The results folder's files, beside this page:");
  page.links(files);
}

}  // namespace

std::string runReportHtml(const fs::path& folder) {
  const json stats = readStats(folder);
  try {
    const json& work = stats.at("workload");
    const std::string what = work.contains("kernel") ? work["kernel"].get<std::string>()
                                                     : work.value("launch_spec", "launch spec");
    const std::string platform = stats.value("platform", "?"), mode = stats.value("mode", "?");
    HtmlPage page(
        fmt::format("gpusc run: {} on {}", what, platform),
        fmt::format("gpusc {}, {} mode{}{}", stats.value("gpusc_version", "?"), mode,
                    work.contains("problem") ? ", " + work["problem"].get<std::string>() : "",
                    work.contains("size") ? ", size " + work["size"].get<std::string>() : ""));
    if (!stats.value("complete", true))
      page.warning(
          fmt::format("This run stopped early ({}: {}). Its figures cover the part that ran.",
                      stats.value("stopped_by", "?"), stats.value("stop_message", "")));

    const json& run = stats.at("run");
    std::vector<std::pair<std::string, std::string>> cards;
    if (run.value("cycles", uint64_t(0)) > 0) {
      cards.push_back({"cycles", fmt::format("{}", run["cycles"].get<uint64_t>())});
      cards.push_back({"IPC", fmt::format("{:.2f}", num(run, "ipc"))});
    }
    cards.push_back(
        {"warp instructions", fmt::format("{}", run.value("warp_instructions", uint64_t(0)))});
    if (run.contains("energy") && num(run["energy"], "total_j") > 0) {
      cards.push_back({"energy", fmt::format("{:.4g} mJ", num(run["energy"], "total_j") * 1e3)});
      cards.push_back({"average power", fmt::format("{:.1f} W", num(run, "average_power_w"))});
    }
    if (run.contains("voltage"))
      cards.push_back(
          {"worst droop", fmt::format("{:.2f}%", num(run["voltage"], "worst_droop_pct"))});
    if (work.contains("check") && work["check"].value("pass", json()).is_boolean())
      cards.push_back({"check", work["check"]["pass"].get<bool>() ? "PASS" : "FAIL"});
    page.cards(cards);

    const fs::path summary = folder / "summary.txt";
    if (fs::exists(summary)) {
      page.section("Summary");
      page.preformatted(readText(summary));
    }
    if (mode == "timing") {
      powerSection(page, folder, stats);
      voltageSection(page, folder, stats);
      timelineSection(page, folder, stats);
      interconnectSection(page, stats);
    } else {
      page.paragraph(
          "A functional-mode run has no cycles, power, voltage or interconnect results; run with "
          "--mode timing for them.");
    }
    launchesSection(page, stats);
    filesSection(page, folder);
    return page.html();
  } catch (const json::exception& e) {
    throw InputError(
        fmt::format("{}: unexpected content ({})", (folder / "stats.json").string(), e.what()));
  }
}

}  // namespace gpusc::cli
