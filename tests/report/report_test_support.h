// Helpers of the report tests: write a report, read it back, and look inside its sections.
#pragma once

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace tp::test {

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::filesystem::path temp_html(const std::string& name) {
  return std::filesystem::path(::testing::TempDir()) / ("trainplan-report-" + name + ".html");
}

inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

// The HTML of <section id="id"> ... </section> ("" when absent).
inline std::string section(const std::string& html, const std::string& id) {
  const std::string open = "<section id=\"" + id + "\">";
  const size_t a = html.find(open);
  if (a == std::string::npos) return "";
  const size_t b = html.find("</section>", a);
  return html.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

// Every <svg class="chart" ...>...</svg> of `html`.
inline std::vector<std::string> charts(const std::string& html) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = html.find("<svg class=\"chart\"", pos)) != std::string::npos) {
    const size_t end = html.find("</svg>", pos);
    out.push_back(html.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

// Axis titles of a chart (class="axis-title").
inline std::vector<std::string> axis_titles(const std::string& svg) {
  std::vector<std::string> out;
  const std::regex re("class=\"axis-title\"[^>]*>([^<]*)<");
  for (std::sregex_iterator it(svg.begin(), svg.end(), re), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

// data-json="path" data-value="v" pairs of the page.
inline std::vector<std::pair<std::string, double>> json_numbers(const std::string& html) {
  std::vector<std::pair<std::string, double>> out;
  const std::regex re("data-json=\"([^\"]+)\" data-value=\"([^\"]+)\"");
  for (std::sregex_iterator it(html.begin(), html.end(), re), end; it != end; ++it) {
    out.emplace_back((*it)[1], std::stod((*it)[2]));
  }
  return out;
}

// Anything that would make the browser fetch from elsewhere: http(s) in src/href/url(), scripts
// with src, style sheets, @import. Returns the first offending text ("" when none).
inline std::string external_reference(const std::string& html) {
  const std::regex re(
      "((src|href)\\s*=\\s*[\"']?\\s*(https?:)?//)|(url\\(\\s*[\"']?\\s*(https?:)?//)|(<script[^>]*\\bsrc\\s*=)|(@import)|"
      "(<link\\b)|(<iframe\\b)|(<img\\b[^>]*src\\s*=\\s*[\"']?[a-z]+:)",
      std::regex::icase);
  std::smatch m;
  return std::regex_search(html, m, re) ? m.str() : "";
}

}  // namespace tp::test
