// The report in a real browser: headless Chromium (Debian's `chromium`, installed by
// scripts/setup.sh) opens the page from disk, renders it, and takes a screenshot. The screenshot
// must have the size asked for and not be blank, and the browser must log nothing (no console
// error, no failed load: the page has no script and loads nothing).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "report_test_support.h"

namespace tp {
namespace {

namespace fs = std::filesystem;

bool have_chromium() { return std::system("command -v chromium >/dev/null 2>&1") == 0; }

struct Shot {
  int exit_code = 0;
  std::string log;  // the browser's stderr and stdout
  fs::path png;
};

Shot screenshot(const fs::path& html, const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("trainplan-chromium-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  Shot s;
  s.png = dir / "shot.png";
  const fs::path log = dir / "log.txt";
  const std::string cmd = "cd " + test::quoted(dir.string()) + " && HOME=" + test::quoted(dir.string()) +
                          " timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
                          "--no-first-run --disable-extensions --user-data-dir=" + test::quoted((dir / "profile").string()) +
                          " --enable-logging=stderr --v=0 --window-size=1400,4000 --screenshot=" +
                          test::quoted(s.png.string()) + " " + test::quoted("file://" + fs::absolute(html).string()) +
                          " > " + test::quoted(log.string()) + " 2>&1";
  const int status = std::system(cmd.c_str());
  s.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  s.log = test::read_text(log);
  return s;
}

// PNG (ISO/IEC 15948): 8-byte signature, then the IHDR chunk with big-endian width and height.
std::pair<std::uint32_t, std::uint32_t> png_size(const std::string& png) {
  const std::string signature = "\x89PNG\r\n\x1a\n";
  if (png.size() < 24 || png.compare(0, 8, signature) != 0 || png.compare(12, 4, "IHDR") != 0) return {0, 0};
  auto be32 = [&](size_t at) {
    std::uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(png[at + i]);
    return v;
  };
  return {be32(16), be32(20)};
}

// Lines where the page itself spoke or failed: console messages, failed loads, blocked requests.
std::vector<std::string> page_errors(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("CONSOLE") != std::string::npos || line.find("Failed to load") != std::string::npos ||
        line.find("ERR_") != std::string::npos || line.find("Uncaught") != std::string::npos) {
      out.push_back(line);
    }
  }
  return out;
}

// The page of the default scenario, and of the default scenario with the example sweep.
class ReportBrowser : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportBrowser, ChromiumRendersTheReportWithoutErrors) {
  if (!have_chromium()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it): browser test skipped";
  const std::string name = GetParam().empty() ? "plain" : "sweep";
  const fs::path report = test::temp_html("browser-" + name);
  const test::RunResult r = test::run_trainplan("report " + test::quoted(test::source_path("scenarios/examples/default.yaml")) +
                                                GetParam() + " -o " + test::quoted(report.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The oracle for "not blank": the same browser's screenshot of an empty page of the same size.
  const fs::path blank = test::temp_html("blank-" + name);
  std::ofstream(blank) << "<!DOCTYPE html><html><body></body></html>\n";

  const Shot page = screenshot(report, "report-" + name);
  const Shot empty = screenshot(blank, "blank-" + name);
  ASSERT_EQ(page.exit_code, 0) << page.log;
  ASSERT_EQ(empty.exit_code, 0) << empty.log;
  const std::string png = test::read_text(page.png), blank_png = test::read_text(empty.png);
  const auto [w, h] = png_size(png);
  EXPECT_EQ(w, 1400u);
  EXPECT_EQ(h, 4000u);
  EXPECT_EQ(png_size(blank_png), std::make_pair(w, h));
  // A single-colour page compresses to a few kB; the charts, text and hatching do not.
  EXPECT_GT(png.size(), 20 * blank_png.size()) << "report " << png.size() << " B, blank page " << blank_png.size() << " B";
  EXPECT_THAT(page_errors(page.log), ::testing::IsEmpty()) << page.log;
  std::cout << "screenshot: " << page.png << "\n";
}

INSTANTIATE_TEST_SUITE_P(Pages, ReportBrowser,
                         ::testing::Values(std::string(), " --sweep " + test::quoted(test::source_path(
                                                              "scenarios/examples/sweep-llama3.1-70b.yaml"))),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return std::string(info.param.empty() ? "Scenario" : "ScenarioAndSweep");
                         });

}  // namespace
}  // namespace tp
