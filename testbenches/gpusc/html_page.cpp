#include "html_page.hpp"

#include <cctype>
#include <cstdlib>
#include <iterator>

#include <fmt/format.h>

#include "common/svg_plot.hpp"

namespace gpusc::cli {

namespace {

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; color: #222; margin: 24px auto;
       max-width: 1000px; padding: 0 16px; line-height: 1.4; }
h1 { font-size: 22px; margin-bottom: 2px; }
h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin-top: 20px; }
.subtitle { color: #555; margin-top: 0; }
.warning { background: #fff4d6; border-left: 4px solid #e8a10a; padding: 8px 12px; }
pre { background: #f6f6f6; padding: 10px; overflow-x: auto; font-size: 12.5px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 8px 12px; min-width: 120px; }
.card .label { font-size: 12px; color: #666; }
.card .value { font-size: 18px; font-weight: 600; }
figure { margin: 16px 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 13px; color: #555; }
table { border-collapse: collapse; font-size: 13px; margin: 10px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; }
th { background: #f3f3f3; cursor: pointer; user-select: none; }
th.sorted-asc::after { content: " \25B2"; } th.sorted-desc::after { content: " \25BC"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
nav ul { columns: 2; font-size: 14px; }
)";

// Click a header to sort its table by that column (numerically when the column is numeric).
constexpr const char* kScript = R"(
document.querySelectorAll("table.sortable th").forEach(function (th, col) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0];
    var asc = !th.classList.contains("sorted-asc");
    table.querySelectorAll("th").forEach(function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
    th.classList.add(asc ? "sorted-asc" : "sorted-desc");
    var numeric = th.dataset.numeric === "1";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[th.cellIndex].textContent, y = b.cells[th.cellIndex].textContent;
      var c = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
)";

bool readsAsNumber(const std::string& s) {
  if (s.empty() || s == "-") return true;  // a blank cell does not make a column textual
  std::string t = s;
  if (t.back() == '%') t.pop_back();
  char* end = nullptr;
  std::strtod(t.c_str(), &end);
  return end && *end == '\0' && end != t.c_str();
}

std::string slug(const std::string& title, size_t n) {
  std::string s;
  for (char c : title) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!s.empty() && s.back() != '-')
      s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return fmt::format("s{}-{}", n, s);
}

}  // namespace

// HTML5 reads XML's escapes (and control characters have no place in a page either).
std::string htmlEscape(const std::string& text) { return plot::xmlEscape(text); }

HtmlPage::HtmlPage(std::string title, std::string subtitle)
    : title_(std::move(title)), subtitle_(std::move(subtitle)) {}

void HtmlPage::section(const std::string& title) {
  const std::string id = slug(title, toc_.size() + 1);
  toc_.push_back({id, title});
  body_ += fmt::format("<h2 id=\"{}\">{}</h2>\n", id, htmlEscape(title));
}

void HtmlPage::subsection(const std::string& title) {
  body_ += fmt::format("<h3>{}</h3>\n", htmlEscape(title));
}

void HtmlPage::paragraph(const std::string& text) {
  body_ += fmt::format("<p>{}</p>\n", htmlEscape(text));
}

void HtmlPage::warning(const std::string& text) {
  body_ += fmt::format("<p class=\"warning\">{}</p>\n", htmlEscape(text));
}

void HtmlPage::preformatted(const std::string& text) {
  body_ += fmt::format("<pre>{}</pre>\n", htmlEscape(text));
}

void HtmlPage::cards(const std::vector<std::pair<std::string, std::string>>& labelValue) {
  body_ += "<div class=\"cards\">\n";
  for (const auto& [label, value] : labelValue)
    body_ += fmt::format(
        "<div class=\"card\"><div class=\"label\">{}</div><div class=\"value\">{}</div></div>\n",
        htmlEscape(label), htmlEscape(value));
  body_ += "</div>\n";
}

void HtmlPage::figure(const std::string& svg, const std::string& caption) {
  // An inline <svg> element must not carry the XML declaration of a standalone document.
  std::string s = svg;
  if (s.rfind("<?xml", 0) == 0) s.erase(0, s.find('\n') + 1);
  body_ += "<figure>\n" + s;
  if (!caption.empty()) body_ += fmt::format("<figcaption>{}</figcaption>\n", htmlEscape(caption));
  body_ += "</figure>\n";
}

void HtmlPage::table(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& rows,
                     const std::vector<std::vector<std::string>>& links) {
  std::vector<bool> numeric(header.size(), true);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size() && c < header.size(); ++c)
      numeric[c] = numeric[c] && readsAsNumber(row[c]);
  auto out = std::back_inserter(body_);
  fmt::format_to(out, "<table class=\"sortable\">\n<thead><tr>");
  for (size_t c = 0; c < header.size(); ++c)
    fmt::format_to(out, "<th data-numeric=\"{}\">{}</th>", numeric[c] ? 1 : 0,
                   htmlEscape(header[c]));
  fmt::format_to(out, "</tr></thead>\n<tbody>\n");
  for (size_t r = 0; r < rows.size(); ++r) {
    fmt::format_to(out, "<tr>");
    for (size_t c = 0; c < rows[r].size(); ++c) {
      const bool num = c < numeric.size() && numeric[c];
      const std::string href = r < links.size() && c < links[r].size() ? links[r][c] : "";
      const std::string cell = href.empty() ? htmlEscape(rows[r][c])
                                            : fmt::format("<a href=\"{}\">{}</a>", htmlEscape(href),
                                                          htmlEscape(rows[r][c]));
      fmt::format_to(out, "<td{}>{}</td>", num ? " class=\"num\"" : "", cell);
    }
    fmt::format_to(out, "</tr>\n");
  }
  fmt::format_to(out, "</tbody>\n</table>\n");
}

void HtmlPage::links(const std::vector<std::pair<std::string, std::string>>& hrefText) {
  body_ += "<ul>\n";
  for (const auto& [href, text] : hrefText)
    body_ += fmt::format("<li><a href=\"{}\">{}</a></li>\n", htmlEscape(href), htmlEscape(text));
  body_ += "</ul>\n";
}

std::string HtmlPage::html() const {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
      htmlEscape(title_), kStyle, htmlEscape(title_));
  if (!subtitle_.empty())
    out += fmt::format("<p class=\"subtitle\">{}</p>\n", htmlEscape(subtitle_));
  if (toc_.size() > 1) {
    out += "<nav><ul>\n";
    for (const auto& [id, title] : toc_)
      out += fmt::format("<li><a href=\"#{}\">{}</a></li>\n", id, htmlEscape(title));
    out += "</ul></nav>\n";
  }
  out += body_;
  out += fmt::format("<script>{}</script>\n</body>\n</html>\n", kScript);
  return out;
}

}  // namespace gpusc::cli
