// `ember bench --svg`: the roofline plot, written by hand. Log-log axes
// (x: arithmetic intensity in flop/byte, y: GFLOP/s), the memory roof
// (intensity x STREAM triad bandwidth) rising to the ridge point and the
// compute roof (FMA peak) after it, and one labelled <circle> per result.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tools/ember/bench.h"

namespace ember::cli::bench {
namespace {

constexpr double kWidth = 900, kHeight = 560;
constexpr double kLeft = 80, kRight = 30, kTop = 50, kBottom = 60;

std::string escape_xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// "0.01", "1", "1000": a power of ten as a tick label.
std::string tick_label(int exponent) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", exponent < 0 ? -exponent : 0, std::pow(10.0, exponent));
  return buf;
}

// A log10 axis over whole decades that holds [lo, hi].
struct LogAxis {
  int first, last;  // decades
  LogAxis(double lo, double hi)
      : first(static_cast<int>(std::floor(std::log10(lo)))), last(static_cast<int>(std::ceil(std::log10(hi)))) {
    if (last <= first) last = first + 1;
  }
  double fraction(double v) const { return (std::log10(v) - first) / (last - first); }
};

// A colour per kernel family (the legend lists the families present).
const char* family_colour(const std::string& family) {
  static const std::pair<const char*, const char*> kColours[] = {
      {"gemm", "#1f77b4"},    {"conv", "#ff7f0e"},      {"pooling", "#2ca02c"},   {"norm", "#d62728"},
      {"softmax", "#9467bd"}, {"attention", "#8c564b"}, {"reduction", "#e377c2"}, {"elementwise", "#17becf"}};
  for (const auto& [name, colour] : kColours)
    if (family == name) return colour;
  return "#7f7f7f";
}

}  // namespace

std::string roofline_svg(const BenchReport& r) {
  // The ranges: every point, and the roofs' ridge point with a decade either side.
  double x_lo = 1e300, x_hi = 0, y_lo = 1e300, y_hi = 0;
  for (const BenchResult& b : r.results) {
    if (b.cost.flops <= 0 || b.cost.bytes <= 0) continue;
    x_lo = std::min(x_lo, b.cost.intensity());
    x_hi = std::max(x_hi, b.cost.intensity());
    y_lo = std::min(y_lo, b.gflops());
    y_hi = std::max(y_hi, b.gflops());
  }
  std::optional<double> peak, bandwidth;
  if (r.machine && r.machine->fma_peak_gflops.count(r.threads) && r.machine->triad_gbs.count(r.threads)) {
    peak = r.machine->fma_peak_gflops.at(r.threads);
    bandwidth = r.machine->triad_gbs.at(r.threads);
    const double ridge = *peak / *bandwidth;
    x_lo = std::min(x_lo, ridge / 10);
    x_hi = std::max(x_hi, ridge * 10);
    y_hi = std::max(y_hi, *peak);
    y_lo = std::min(y_lo, x_lo * *bandwidth);
  }
  if (x_hi <= 0) x_lo = 0.1, x_hi = 10, y_lo = 0.1, y_hi = 10;  // nothing to plot: empty axes
  const LogAxis xa(x_lo, x_hi), ya(y_lo, y_hi);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + xa.fraction(x) * plot_w; };
  auto py = [&](double y) { return kTop + (1 - ya.fraction(y)) * plot_h; };

  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  num(kWidth) + "\" height=\"" + num(kHeight) + "\" viewBox=\"0 0 " + num(kWidth) + " " +
                  num(kHeight) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  std::string title = "ember bench roofline, " + std::to_string(r.threads) + " thread" + (r.threads == 1 ? "" : "s");
  if (r.machine) title += ", " + r.machine->cpu;
  s += "<text x=\"" + num(kLeft) + "\" y=\"24\" font-size=\"14\">" + escape_xml(title) + "</text>\n";
  // Grid and tick labels at each decade.
  for (int e = xa.first; e <= xa.last; ++e) {
    const double x = px(std::pow(10.0, e));
    s += "<line x1=\"" + num(x) + "\" y1=\"" + num(kTop) + "\" x2=\"" + num(x) + "\" y2=\"" + num(kTop + plot_h) +
         "\" stroke=\"#ddd\"/>\n<text x=\"" + num(x) + "\" y=\"" + num(kTop + plot_h + 16) +
         "\" text-anchor=\"middle\">" + tick_label(e) + "</text>\n";
  }
  for (int e = ya.first; e <= ya.last; ++e) {
    const double y = py(std::pow(10.0, e));
    s += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(y) + "\" x2=\"" + num(kLeft + plot_w) + "\" y2=\"" + num(y) +
         "\" stroke=\"#ddd\"/>\n<text x=\"" + num(kLeft - 6) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\">" +
         tick_label(e) + "</text>\n";
  }
  s += "<rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" + num(plot_w) + "\" height=\"" + num(plot_h) +
       "\" fill=\"none\" stroke=\"black\"/>\n";
  s += "<text x=\"" + num(kLeft + plot_w / 2) + "\" y=\"" + num(kHeight - 16) +
       "\" text-anchor=\"middle\">arithmetic intensity (flop/byte)</text>\n";
  s += "<text transform=\"translate(20," + num(kTop + plot_h / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">GFLOP/s</text>\n";
  // The roofs, clipped to the axes.
  if (peak) {
    const double x0 = std::pow(10.0, xa.first), x1 = std::pow(10.0, xa.last), ridge = *peak / *bandwidth;
    const double y0 = std::max(x0 * *bandwidth, std::pow(10.0, ya.first));
    const double xs = y0 / *bandwidth;
    s += "<polyline fill=\"none\" stroke=\"#c33\" stroke-width=\"2\" points=\"" + num(px(xs)) + "," + num(py(y0)) +
         " " + num(px(ridge)) + "," + num(py(*peak)) + " " + num(px(x1)) + "," + num(py(*peak)) + "\"/>\n";
    char label[160];
    std::snprintf(label, sizeof label, "FMA peak %.1f GFLOP/s", *peak);
    s += "<text x=\"" + num(px(x1) - 4) + "\" y=\"" + num(py(*peak) - 6) + "\" text-anchor=\"end\" fill=\"#c33\">" +
         label + "</text>\n";
    std::snprintf(label, sizeof label, "STREAM triad %.1f GB/s", *bandwidth);
    s += "<text x=\"" + num(px(ridge) - 6) + "\" y=\"" + num(py(*peak) + 16) + "\" text-anchor=\"end\" fill=\"#c33\">" +
         label + "</text>\n";
  }
  // One point per result, its label beside it, details in its tooltip.
  for (const BenchResult& b : r.results) {
    if (b.cost.flops <= 0 || b.cost.bytes <= 0) continue;
    const std::string name = b.op + " " + shape_string(b.dims);
    char tip[200];
    std::snprintf(tip, sizeof tip, "%s %s: %.3g GFLOP/s, %.3g GB/s, %.3g flop/B", name.c_str(), b.dtype.c_str(),
                  b.gflops(), b.gbs(), b.cost.intensity());
    const double x = px(b.cost.intensity()), y = py(b.gflops());
    s += "<circle cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"4\" fill=\"" + family_colour(b.family) +
         "\"><title>" + escape_xml(tip) +
         "</title></circle>\n";
    s += "<text x=\"" + num(x + 6) + "\" y=\"" + num(y - 4) + "\" font-size=\"9\">" + escape_xml(name) + "</text>\n";
  }
  // The legend, top left inside the plot: a swatch per family, in first-seen order.
  std::vector<std::string> families;
  for (const BenchResult& b : r.results)
    if (std::find(families.begin(), families.end(), b.family) == families.end()) families.push_back(b.family);
  for (size_t i = 0; i < families.size(); ++i) {
    const double y = kTop + 10 + 14 * static_cast<double>(i);
    s += "<rect x=\"" + num(kLeft + 10) + "\" y=\"" + num(y) + "\" width=\"9\" height=\"9\" fill=\"" +
         family_colour(families[i]) + "\"/>\n<text x=\"" + num(kLeft + 24) + "\" y=\"" + num(y + 8) + "\">" +
         escape_xml(families[i]) + "</text>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace ember::cli::bench
