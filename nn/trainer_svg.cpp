// training_curves_svg (<ember/trainer.h>): loss and accuracy per epoch as a
// small hand-written SVG, two panels side by side, train and test lines.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>

#include "ember/trainer.h"

namespace ember {

namespace {

constexpr double kPanelWidth = 380, kPanelHeight = 260;
constexpr double kLeft = 56, kRight = 16, kTop = 40, kBottom = 40;  // margins inside a panel
constexpr double kLegendEntryWidth = 60;  // the legend sits above the frame, right-aligned, off the data
constexpr const char* kTrainColour = "#1f77b4";
constexpr const char* kTestColour = "#ff7f0e";

struct Series {
  const char* name;
  const char* colour;
  std::vector<std::pair<double, double>> points;  // (epoch, value)
};

// Tick marks at round values: multiples of 1, 2 or 5 times a power of ten,
// about `target` of them across [lo, hi] (lo < hi).
struct Ticks {
  double first, step;
  int decimals;  // enough to tell neighbouring ticks apart, no more
};
Ticks round_ticks(double lo, double hi, int target) {
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  const double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
  return {std::ceil(lo / step) * step, step, std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)))};
}

std::string number(double v, int decimals) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, v == 0 ? 0.0 : v);  // no "-0.0"
  return text;
}

// One panel at horizontal offset x0: frame, ticks, each series as a polyline with dots.
void draw_panel(std::ostringstream& svg, double x0, const std::string& title, const std::vector<Series>& series) {
  double x_min = std::numeric_limits<double>::max(), x_max = std::numeric_limits<double>::lowest();
  double y_min = x_min, y_max = x_max;
  for (const Series& s : series) {
    for (auto [x, y] : s.points) {
      x_min = std::min(x_min, x), x_max = std::max(x_max, x);
      y_min = std::min(y_min, y), y_max = std::max(y_max, y);
    }
  }
  if (x_min > x_max) x_min = 1, x_max = 1, y_min = 0, y_max = 1;  // no points yet
  if (x_max == x_min) x_min -= 1, x_max += 1;
  const double pad = y_max > y_min ? (y_max - y_min) * 0.08 : 0.5;
  y_min -= pad, y_max += pad;

  const double w = kPanelWidth - kLeft - kRight, h = kPanelHeight - kTop - kBottom;
  auto px = [&](double x) { return x0 + kLeft + (x - x_min) / (x_max - x_min) * w; };
  auto py = [&](double y) { return kTop + (y_max - y) / (y_max - y_min) * h; };

  svg << "<text x='" << x0 + kPanelWidth / 2 << "' y='18' text-anchor='middle' font-weight='bold'>" << title
      << "</text>\n";
  svg << "<rect x='" << x0 + kLeft << "' y='" << kTop << "' width='" << w << "' height='" << h
      << "' fill='none' stroke='#888'/>\n";
  const Ticks ticks = round_ticks(y_min, y_max, 5);
  for (double y = ticks.first; y <= y_max + ticks.step * 1e-9; y += ticks.step) {  // y ticks
    svg << "<text x='" << x0 + kLeft - 4 << "' y='" << py(y) + 4 << "' text-anchor='end' font-size='11'>"
        << number(y, ticks.decimals) << "</text>\n";
    svg << "<line x1='" << x0 + kLeft << "' x2='" << x0 + kLeft + w << "' y1='" << py(y) << "' y2='" << py(y)
        << "' stroke='#eee'/>\n";
  }
  const int64_t first = static_cast<int64_t>(std::ceil(x_min)), last = static_cast<int64_t>(std::floor(x_max));
  const int64_t stride = std::max<int64_t>(1, (last - first) / 8 + 1);
  for (int64_t e = first; e <= last; e += stride) {  // x ticks: epochs
    svg << "<text x='" << px(static_cast<double>(e)) << "' y='" << kTop + h + 16
        << "' text-anchor='middle' font-size='11'>" << e << "</text>\n";
  }
  svg << "<text x='" << x0 + kLeft + w / 2 << "' y='" << kPanelHeight - 6
      << "' text-anchor='middle' font-size='12'>epoch</text>\n";

  int shown = 0;
  for (const Series& s : series) shown += !s.points.empty();
  double legend_x = x0 + kLeft + w - kLegendEntryWidth * (shown - 1);
  for (const Series& s : series) {
    if (s.points.empty()) continue;
    svg << "<polyline fill='none' stroke='" << s.colour << "' stroke-width='2' points='";
    for (auto [x, y] : s.points) svg << px(x) << ',' << py(y) << ' ';
    svg << "'/>\n";
    for (auto [x, y] : s.points) {
      svg << "<circle cx='" << px(x) << "' cy='" << py(y) << "' r='3' fill='" << s.colour << "'/>\n";
    }
    svg << "<line x1='" << legend_x - 52 << "' x2='" << legend_x - 38 << "' y1='" << kTop - 10 << "' y2='"
        << kTop - 10 << "' stroke='" << s.colour << "' stroke-width='2'/>\n";
    svg << "<text x='" << legend_x << "' y='" << kTop - 6 << "' text-anchor='end' font-size='12' fill='" << s.colour
        << "'>" << s.name << "</text>\n";
    legend_x += kLegendEntryWidth;
  }
}

}  // namespace

std::string training_curves_svg(const std::vector<EpochMetrics>& history) {
  Series train_loss{"train", kTrainColour, {}}, test_loss{"test", kTestColour, {}};
  Series train_acc{"train", kTrainColour, {}}, test_acc{"test", kTestColour, {}};
  for (const EpochMetrics& m : history) {
    const auto x = static_cast<double>(m.epoch);
    train_loss.points.emplace_back(x, m.train.loss);
    train_acc.points.emplace_back(x, m.train.accuracy);
    if (m.test) {
      test_loss.points.emplace_back(x, m.test->loss);
      test_acc.points.emplace_back(x, m.test->accuracy);
    }
  }
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << 2 * kPanelWidth << "' height='" << kPanelHeight
      << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n";
  draw_panel(svg, 0, "loss", {train_loss, test_loss});
  draw_panel(svg, kPanelWidth, "accuracy", {train_acc, test_acc});
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace ember
