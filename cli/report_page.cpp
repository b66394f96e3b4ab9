// The HTML shell of `trainplan report`: one self-contained file (inline style sheet, inline SVG,
// system fonts, no script), readable on screen and printed in black and white.
#include "report_sections.h"
#include "svg.h"

namespace tp {
namespace {

constexpr const char* kStyle = R"css(
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1b1b1b;
       background: #fff; margin: 0; line-height: 1.4; }
main { max-width: 1220px; margin: 0 auto; padding: 24px 20px 60px; }
header.page { border-bottom: 3px solid #0072B2; padding-bottom: 12px; margin-bottom: 8px; }
header.page h1 { margin: 0 0 4px; font-size: 26px; }
.meta { color: #444; font-size: 14px; }
.facts { display: flex; flex-wrap: wrap; gap: 6px 18px; margin: 10px 0 0; font-size: 14px; }
.facts span b { font-weight: 600; }
nav.toc { font-size: 14px; margin: 10px 0 18px; }
nav.toc a { margin-right: 14px; color: #0072B2; }
section { margin: 30px 0; break-inside: avoid-page; }
h2 { font-size: 20px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
figure { margin: 12px 0; }
figcaption { font-size: 13px; color: #444; margin-top: 2px; max-width: 1180px; }
svg.chart { max-width: 100%; height: auto; font-size: 12px; }
svg .tick { font-size: 11px; fill: #333; }
svg .axis-title { font-size: 13px; font-weight: 600; fill: #222; }
svg .label { font-size: 12px; fill: #222; }
svg .value { font-size: 11px; fill: #222; }
svg .muted { fill: #888; }
svg .strong { font-weight: 700; }
svg .bad { fill: #D55E00; font-weight: 700; }
svg .legend-label { font-size: 12px; fill: #222; }
svg .mb { font-size: 10px; fill: #000; stroke: #fff; stroke-width: 2.5px; paint-order: stroke; }
svg .cell { font-size: 12px; fill: #111; font-weight: 600; }
svg .cell.light { fill: #fff; }
svg .cell.small { font-size: 11px; font-weight: 400; }
.tiles { display: flex; flex-wrap: wrap; gap: 12px; margin: 8px 0 4px; }
.tile { border: 1px solid #bbb; border-left: 5px solid #0072B2; padding: 8px 14px; flex: 1 1 150px; }
.tile-label { font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; color: #555; }
.tile-value { font-size: 22px; font-weight: 700; white-space: nowrap; }
.tile-note { font-size: 12px; color: #555; }
table { border-collapse: collapse; font-size: 13px; margin: 10px 0; }
caption { text-align: left; font-weight: 600; padding-bottom: 4px; }
th, td { border: 1px solid #ccc; padding: 4px 9px; text-align: right; }
th { background: #f2f2f2; }
table.totals th { text-align: left; }
table.totals td.note, td.layout { text-align: left; color: #333; }
td.layout { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.verdict { padding: 8px 12px; border: 1px solid; margin: 8px 0; }
.verdict.ok { border-color: #009E73; background: #eef8f4; }
.verdict.bad { border-color: #D55E00; background: #fdf1ea; }
.row { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
.row > figure { flex: 0 0 auto; max-width: 100%; }
.row figcaption { max-width: 460px; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px; }
footer { font-size: 12px; color: #555; border-top: 1px solid #ccc; margin-top: 40px; padding-top: 8px; }
@media print { main { max-width: none; padding: 0; } nav.toc { display: none; } figure { break-inside: avoid; } }
)css";

}  // namespace

std::string report_page(const PageHeader& header, const std::vector<std::pair<std::string, std::string>>& toc,
                        const std::string& sections_html) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                  "<meta name=\"generator\" content=\"trainplan " + svg::escape(header.version) + "\">"
                  "<title>trainplan report: " + svg::escape(header.title) + "</title><style>" + kStyle +
                  "</style></head><body>" + svg::pattern_defs() + "<main><header class=\"page\"><h1>" +
                  svg::escape(header.title) + "</h1><div class=\"meta\">Scenario <code>" + svg::escape(header.source) +
                  "</code> &middot; hardware profile <code>" + svg::escape(header.profile) +
                  "</code> &middot; trainplan " + svg::escape(header.version) + "</div><div class=\"facts\">" +
                  header.facts_html + "</div></header><nav class=\"toc\">";
  for (const auto& [id, name] : toc) h += "<a href=\"#" + id + "\">" + svg::escape(name) + "</a>";
  h += "</nav>" + sections_html;
  h += "<footer>Written by <code>trainplan report</code> " + svg::escape(header.version) +
       ". Every number comes from the same estimate as <code>trainplan evaluate --format json</code>; quantities "
       "carry their units (GiB = 2<sup>30</sup> bytes, TB/s = 10<sup>12</sup> bytes/s). The page is self-contained: "
       "no script, no font and no image is loaded from anywhere.</footer></main></body></html>\n";
  return h;
}

}  // namespace tp
