#include "voltage_cli.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <limits>

#include <fmt/format.h>

#include "cli_options.hpp"
#include "common/error.hpp"
#include "common/platform_config.hpp"
#include "common/svg_plot.hpp"
#include "experiment_util.hpp"
#include "gpu/report.hpp"
#include "pdn/pdn_network.hpp"

namespace fs = std::filesystem;

namespace gpusc::cli {

namespace {

// The CSV tables of every launch in one: a "launch" column first, one header.
std::string joinCsv(const std::vector<LaunchRecord>& launches,
                    std::string pdn::VoltageReport::*table) {
  std::string out;
  bool header = false;
  for (size_t i = 0; i < launches.size(); ++i) {
    if (!launches[i].timing || !launches[i].timing->voltage) continue;
    std::istringstream in((*launches[i].timing->voltage).*table);
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (first) {
        first = false;
        if (!header) out += "launch," + line + "\n";
        header = true;
        continue;
      }
      out += fmt::format("{},{}\n", i, line);
    }
  }
  return out;
}

}  // namespace

void appendVoltageSummary(std::string& out, const std::vector<LaunchRecord>& launches) {
  size_t at = 0;
  const pdn::VoltageReport* worst = worstVoltageLaunch(launches, &at);
  if (!worst) return;
  std::vector<uint64_t> above(worst->eventsAbove.size(), 0);
  uint64_t emergencies = 0, large = 0, local = 0;
  std::map<std::string, uint64_t> classes;
  for (const auto& l : launches) {
    if (!l.timing || !l.timing->voltage) continue;
    const pdn::VoltageReport& v = *l.timing->voltage;
    for (size_t i = 0; i < above.size() && i < v.eventsAbove.size(); ++i)
      above[i] += v.eventsAbove[i];
    emergencies += v.emergencies;
    const nlohmann::json& lg = v.summary.at("large");
    large += lg.at("events").get<uint64_t>();
    local += lg.at("local").get<uint64_t>();
    for (const auto& [name, c] : lg.at("classes").items())
      classes[name] += c.at("count").get<uint64_t>();
  }
  const nlohmann::json& th = worst->summary.at("thresholds");
  std::string counts;
  for (size_t i = 0; i < above.size() && i < th.size(); ++i)
    counts += fmt::format("{}{} > {:g}%", i ? ", " : "", above[i],
                          th[i].at("threshold_pct").get<double>());
  fmt::format_to(std::back_inserter(out),
                 "  voltage            worst droop {:.2f}% (min {:.4f} V at sm{}, cycle {}{}), {} "
                 "emergencies\n",
                 worst->worstDroopPct, worst->minVoltage, worst->worstSm, worst->worstCycle,
                 launches.size() > 1 ? fmt::format(", launch {}", at) : "", emergencies);
  if (worst->beyondModel())
    fmt::format_to(std::back_inserter(out),
                   "  warning            a droop of more than {:g}% is beyond the linear PDN model "
                   "(docs/pdn.md): the power parameters give currents no chip draws\n",
                   pdn::kLinearModelDroopLimitPct);
  fmt::format_to(std::back_inserter(out), "  droop events       {}\n", counts);
  if (large > 0) {
    std::string kinds;
    for (const auto& [name, c] : classes) kinds += fmt::format("{} {}, ", c, name);
    fmt::format_to(std::back_inserter(out),
                   "  large droops       {} (>= {:g}%): {}{} local, {} global\n", large,
                   worst->summary.at("large").at("threshold_pct").get<double>(), kinds, local,
                   large - local);
  }
}

std::vector<std::string> writeVoltageResults(const std::vector<LaunchRecord>& launches,
                                             pdn::VoltageFiles& files, const fs::path& outDir) {
  size_t at = 0;
  const pdn::VoltageReport* worst = files.worst(&at);
  if (!worst || !worstVoltageLaunch(launches)) return {};
  files.commit();
  std::vector<std::string> written{"voltage.csv", "droops.csv"};
  const auto put = [&](const char* name, const std::string& text) {
    if (text.empty()) return;
    writeText(outDir / name, text);
    written.push_back(name);
  };
  put("droop_histogram.csv", joinCsv(launches, &pdn::VoltageReport::histogramCsv));
  put("worst_droop.csv", pdn::worstWindowCsv(*worst));
  if (!worst->windowCycles.empty()) {
    plot::Figure f;
    f.title = fmt::format("Worst droop: {:.2f}% at sm{}, cycle {}{}", worst->worstDroopPct,
                          worst->worstSm, worst->worstCycle,
                          launches.size() > 1 ? fmt::format(" (launch {})", at) : "");
    f.x.label = "core cycle";
    plot::Panel v, a;
    v.title = "supply voltage at each SM";
    v.y.label = "V";
    a.title = "current of each SM";
    a.y.label = "A";
    a.legend = false;
    const std::vector<double> xs(worst->windowCycles.begin(), worst->windowCycles.end());
    // Up to kEachSm SMs each get a line; more are drawn as the band of the other SMs (their
    // minimum and maximum in each cycle). The worst SM is drawn last, on top, in red.
    constexpr size_t kEachSm = 8;
    const size_t n = worst->windowVolts.size();
    const auto draw = [&](plot::Panel& p, const std::vector<std::vector<double>>& ys) {
      if (n <= kEachSm) {
        for (size_t s = 0; s < n; ++s) {
          if (s == worst->worstSm) continue;
          plot::Series o;
          o.label = fmt::format("sm{}", s);
          o.x = xs;
          o.y = ys[s];
          o.width = 1.0;
          o.color = plot::paletteColor(s + 1);
          p.series.push_back(std::move(o));
        }
      } else {
        plot::Series lo, hi;
        lo.label = fmt::format("other {} SMs: min", n - 1);
        hi.label = fmt::format("other {} SMs: max", n - 1);
        for (plot::Series* b : {&lo, &hi}) {
          b->x = xs;
          b->y.assign(xs.size(), 0.0);
          b->color = "#8c8c8c";
          b->width = 1.0;
        }
        for (size_t t = 0; t < xs.size(); ++t) {
          double mn = std::numeric_limits<double>::infinity(), mx = -mn;
          for (size_t s = 0; s < n; ++s) {
            if (s == worst->worstSm) continue;
            mn = std::min(mn, ys[s][t]);
            mx = std::max(mx, ys[s][t]);
          }
          lo.y[t] = mn;
          hi.y[t] = mx;
        }
        hi.dashed = true;
        p.series.push_back(std::move(lo));
        p.series.push_back(std::move(hi));
      }
      plot::Series w;
      w.label = fmt::format("sm{} (worst)", worst->worstSm);
      w.x = xs;
      w.y = ys[worst->worstSm];
      w.width = 2.5;
      w.color = "#d62728";
      p.series.push_back(std::move(w));
    };
    draw(v, worst->windowVolts);
    draw(a, worst->windowAmps);
    v.vlines.push_back(double(worst->worstCycle));
    a.vlines.push_back(double(worst->worstCycle));
    f.panels = {v, a};
    plot::writeSvg(f, (outDir / "worst_droop.svg").string());
    written.push_back("worst_droop.svg");
  }
  return written;
}

int cmdPdn(const PdnOptions& o) {
  if (o.what != "impedance")
    throw InputError(fmt::format("gpusc pdn {}: expected 'impedance'", o.what));
  // A power-delivery network's impedance matters from its regulator's kilohertz to a few times the
  // core clock; the bounds keep the sweep's points and the plot's logarithms finite.
  constexpr double kLowestHz = 1.0, kHighestHz = 1e12;
  if (!(o.minHz >= kLowestHz) || !(o.maxHz > o.minHz) || !(o.maxHz <= kHighestHz))
    throw InputError(fmt::format("--min-hz {:g} --max-hz {:g}: need {:g} <= min < max <= {:g} Hz",
                                 o.minHz, o.maxHz, kLowestHz, kHighestHz));
  refuseRepeatedSets(o.sets);
  const PlatformConfig cfg = loadPlatform(o.platform, o.sets);
  const double clockHz = cfg.gpu.clocks.core_mhz * 1e6;
  const pdn::PdnNetwork net(cfg.pdn, clockHz, cfg.gpu.num_sms);
  // The other way of giving the network, for comparison: our impedance targets beside seed 001's
  // scaled Pentium 4 elements (pdn.network), with the same grid, package variant and SMs.
  PdnConfig otherCfg = cfg.pdn;
  otherCfg.network = cfg.pdn.network == "elements" ? "impedance" : "elements";
  const pdn::PdnNetwork other(otherCfg, clockHz, cfg.gpu.num_sms);
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec)
    throw InputError(fmt::format("--out {}: cannot create the folder: {}", o.out, ec.message()));
  const double decades = std::log10(o.maxHz / o.minHz);
  const size_t n = size_t(std::ceil(decades * o.pointsPerDecade)) + 1;
  std::string csv = "frequency_hz,die_ohm";
  for (uint32_t s = 0; s < net.numSms(); ++s) csv += fmt::format(",sm{}_ohm", s);
  csv += fmt::format(",die_ohm_{}\n", otherCfg.network);
  plot::Series die, sm0, dieOther;
  die.label = fmt::format("die (all SMs together), pdn.network {}", cfg.pdn.network);
  sm0.label = "one SM's node (sm0)";
  sm0.dashed = true;
  dieOther.label = fmt::format("die, pdn.network {}", otherCfg.network);
  dieOther.color = "#7f7f7f";
  for (size_t i = 0; i < n; ++i) {
    const double f = o.minHz * std::pow(10.0, decades * double(i) / double(n - 1));
    const double z = std::abs(net.dieImpedance(f));
    const double zo = std::abs(other.dieImpedance(f));
    csv += fmt::format("{:.6g},{:.6g}", f, z);
    for (uint32_t s = 0; s < net.numSms(); ++s)
      csv += fmt::format(",{:.6g}", std::abs(net.smImpedance(s, f)));
    csv += fmt::format(",{:.6g}\n", zo);
    die.x.push_back(f);
    die.y.push_back(z * 1e3);
    sm0.x.push_back(f);
    sm0.y.push_back(std::abs(net.smImpedance(0, f)) * 1e3);
    dieOther.x.push_back(f);
    dieOther.y.push_back(zo * 1e3);
  }
  writeText(fs::path(o.out) / "impedance.csv", csv);
  plot::Figure fig;
  fig.title = fmt::format("PDN impedance, {} (package {})", cfg.name, cfg.pdn.package);
  fig.x.label = "frequency (Hz)";
  fig.x.scale = plot::Scale::Log10;
  plot::Panel p;
  p.y.label = "|Z| (mOhm)";
  p.series = {die, sm0, dieOther};
  fig.panels = {p};
  plot::writeSvg(fig, (fs::path(o.out) / "impedance.svg").string());

  fmt::print("PDN impedance of {} (package {}), {:g} Hz .. {:g} Hz\n", cfg.name, cfg.pdn.package,
             o.minHz, o.maxHz);
  const auto peaks = [&](const pdn::PdnNetwork& nw, const std::string& kind) {
    fmt::print("  pdn.network {}{}:\n", kind, kind == cfg.pdn.network ? " (this platform's)" : "");
    fmt::print("  {:>12}  {:>12}\n", "frequency", "|Z| die");
    for (const auto& [f, z] : nw.impedancePeaks(o.minHz, o.maxHz))
      fmt::print("  {:>9.4g} MHz  {:>9.4g} mOhm  (peak)\n", f / 1e6, z * 1e3);
    fmt::print("  {:>9} DC   {:>9.4g} mOhm\n", "", std::abs(nw.dieImpedance(1.0)) * 1e3);
  };
  peaks(net, cfg.pdn.network);
  peaks(other, otherCfg.network);
  const std::string dir = o.out;
  fmt::print("results: {}/ (impedance.csv, impedance.svg)\n", dir);
  return 0;
}

}  // namespace gpusc::cli
