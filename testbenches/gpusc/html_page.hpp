// A self-contained HTML page for gpusc's reports (`gpusc run --report`, `gpusc report`): inline
// CSS, figures as inline SVG, tables whose columns sort on a click (a few lines of inline
// script), a table of contents from the section headings. Nothing is loaded from the network, so
// a page can be mailed or archived with the results and opened anywhere.
#pragma once

#include <string>
#include <vector>

namespace gpusc::cli {

// Text escaped for HTML character data and attribute values.
std::string htmlEscape(const std::string& text);

class HtmlPage {
 public:
  explicit HtmlPage(std::string title, std::string subtitle = "");

  // A section heading (h2), listed in the table of contents.
  void section(const std::string& title);
  void subsection(const std::string& title);  // h3, not listed
  void paragraph(const std::string& text);    // escaped
  void warning(const std::string& text);      // a highlighted paragraph, escaped
  void preformatted(const std::string& text);
  // Headline figures as cards: label above, value below.
  void cards(const std::vector<std::pair<std::string, std::string>>& labelValue);
  // An SVG document (as plot::toSvg writes it) inlined, with a caption under it.
  void figure(const std::string& svg, const std::string& caption = "");
  // A table; cells are escaped text. Columns whose cells all read as numbers align right and
  // sort numerically. `links` (optional, same shape as rows) makes a cell a link when non-empty.
  void table(const std::vector<std::string>& header,
             const std::vector<std::vector<std::string>>& rows,
             const std::vector<std::vector<std::string>>& links = {});
  // A list of links (href, text), e.g. the results folder's files.
  void links(const std::vector<std::pair<std::string, std::string>>& hrefText);

  std::string html() const;

 private:
  std::string title_, subtitle_, body_;
  std::vector<std::pair<std::string, std::string>> toc_;  // id, title
};

}  // namespace gpusc::cli
